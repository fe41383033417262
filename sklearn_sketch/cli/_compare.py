"""The ``compare`` command: the items much more frequent in one set of files than in another."""
import json
import sys
import time
from itertools import zip_longest

from ._errors import CommandError
from ._report import Progress, add_report_arguments, read_lines, write_report

def add_compare_arguments(parser, positive_int):
    """The options of ``sklearn-sketch compare``."""
    parser.add_argument("--a", nargs="+", required=True, metavar="FILE",
                        help="the files of stream A")
    parser.add_argument("--b", nargs="+", required=True, metavar="FILE",
                        help="the files of stream B")
    kind = parser.add_mutually_exclusive_group()
    kind.add_argument("--text", action="store_true",
                      help="text files (the default): lower-cased words of 2+ characters, "
                           "as CountVectorizer finds them")
    kind.add_argument("--fasta", action="store_true",
                      help="FASTA files (plain or compressed): the canonical k-mers of each record")
    kind.add_argument("--vw", action="store_true",
                      help="Vowpal Wabbit text files (plain or compressed): each feature of a line "
                           "(namespace^name) is one occurrence, whatever its value; labels "
                           "are ignored")
    parser.add_argument("--k", type=positive_int, default=12, help="k-mer length (--fasta)")
    parser.add_argument("--min-count", type=int, default=5,
                        help="leave out items seen fewer times in both streams together")
    parser.add_argument("--chunk-lines", type=positive_int, default=20_000,
                        help="lines (--text, --vw) or records (--fasta) read at a time per "
                             "stream")
    parser.add_argument("--one-pass", action="store_true",
                        help="keep the one pass's counts, and list by weight: an item that "
                             "entered the heap late is counted since; by default a second "
                             "pass counts the heap's items over both streams, and the lists "
                             "follow their exact log ratios")
    # 1MB rather than the estimator's (and the paper's) 128KB: two strains of one
    # species differ by k-mers seen a few times each, and 128KB held few of them (the
    # 20 listed each way that differ 4x or more: 0.03-0.57 of them against 0.95-1.00).
    add_report_arguments(parser, positive_int, budget="1MB", top=50,
                         listed="items of each direction")


def _text_chunks(paths, lines):
    """Chunks of tokens (as CountVectorizer finds them), ``lines`` lines at a time."""
    import numpy as np

    from ..feature_extraction._words_fast import word_codes
    for batch in read_lines(paths, lines):
        _, codes, words = word_codes(["".join(batch)])
        yield np.array(words, dtype=object)[codes].tolist()


def _vw_chunks(paths, lines):
    """Chunks of named feature occurrences (one per feature of a line) of VW files."""
    from .._raw_features import NamedRows
    from ..io import VowpalWabbitReader
    for path in paths:
        for chunk in VowpalWabbitReader(path, lines, keep_names=True):
            present = chunk.X.copy()
            present.data[:] = 1.0
            yield NamedRows(present, chunk.feature_names)


def _fasta_chunks(paths, records, vectorizer):
    from ..io import FastaReader
    from ._inputs import refuse_protein

    for chunk in FastaReader(list(paths), records):
        X = vectorizer.transform(chunk.sequences)
        refuse_protein(chunk, X, None)  # protein had "stream A holds no item"
        yield X


def cmd_compare(args):
    from ..deltoids import RelativeDeltoids

    if args.min_count < 0:
        raise CommandError(f"--min-count must be >= 0, got {args.min_count}")
    vectorizer = None
    if args.fasta:
        from ..feature_extraction import KmerVectorizer
        vectorizer = KmerVectorizer(k=args.k)

    def chunks(paths):
        if args.fasta:
            return _fasta_chunks(paths, args.chunk_lines, vectorizer)
        if args.vw:
            return _vw_chunks(paths, args.chunk_lines)
        return _text_chunks(paths, args.chunk_lines)

    chunks_a, chunks_b = chunks(args.a), chunks(args.b)
    model = RelativeDeltoids(args.memory_budget, min_count=args.min_count,
                             random_state=args.random_state)
    start, seen, progress = time.perf_counter(), False, Progress(args.quiet)
    # The two streams alternate chunk by chunk; the longer one finishes alone.
    for part_a, part_b in zip_longest(chunks_a, chunks_b):
        empty_a = part_a is None or _size(part_a) == 0
        empty_b = part_b is None or _size(part_b) == 0
        if empty_a and empty_b:
            continue
        model.partial_fit(a=None if empty_a else part_a, b=None if empty_b else part_b)
        seen = True
        progress.show(f"{model.n_a_:,} and {model.n_b_:,} items, "
                      f"{(model.n_a_ + model.n_b_) / (time.perf_counter() - start):,.0f} "
                      "items/s")
    progress.end()
    if not seen or model.n_a_ == 0 or model.n_b_ == 0:
        which = "A" if not seen or model.n_a_ == 0 else "B"
        raise CommandError(f"stream {which} holds no item: there is nothing to compare")
    if not model.exact_counts_ and not args.one_pass:
        if not args.quiet:
            print("items entered the heap after the first chunk: counting the heap over both "
                  "streams, a second pass (--one-pass skips it)", file=sys.stderr)
        model.recount(chunks(args.a), chunks(args.b))
    write_report(_report(model, args, vectorizer, time.perf_counter() - start), args.output)


def _size(part):
    if hasattr(part, "X"):  # NamedRows
        part = part.X
    return part.nnz if hasattr(part, "nnz") else len(part)


def _report(model, args, vectorizer, seconds):
    table = model.deltoids_
    items = table["item"].tolist()
    if vectorizer is not None:
        import numpy as np
        items = vectorizer.decode(np.array([int(i) for i in items], dtype=np.int64)).tolist()
    rows = list(zip(items, table["weight"].tolist(), table["log_ratio"].tolist(),
                    table["count_a"].tolist(), table["count_b"].tolist()))
    # Exact counts order the table by log ratio, and tell the direction; else the weights.
    side = 2 if model.exact_counts_ else 1
    more_a = [r for r in rows if r[side] > 0][:args.top]
    more_b = [r for r in rows if r[side] < 0][::-1][:args.top]
    summary = {"items_a": model.n_a_, "items_b": model.n_b_,
               "memory_bytes": model.memory_bytes_, "seconds": round(seconds, 3)}
    if args.format == "json":
        def entries(selected):
            return [{"item": i, "weight": w, "log_ratio": r, "count_a": a, "count_b": b}
                    for i, w, r, a, b in selected]
        summary.update(more_in_a=entries(more_a), more_in_b=entries(more_b))
        return json.dumps(summary, indent=1) + "\n"
    lines = [f"{model.n_a_:,} items in A, {model.n_b_:,} in B; {model.memory_bytes_:,} bytes; "
             f"{seconds:.1f} s", "stream\tlog_ratio\tcount_a\tcount_b\tweight\titem"]
    for name, selected in (("A", more_a), ("B", more_b)):
        lines += [f"{name}\t{r:.3f}\t{a:.0f}\t{b:.0f}\t{w:.4f}\t{i}" for i, w, r, a, b in selected]
    return "\n".join(lines) + "\n"


