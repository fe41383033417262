"""The ``compare`` command: the items much more frequent in one set of files than in another."""
import json
import os
import sys
import time
from itertools import zip_longest

from ._errors import CommandError
from ._report import Progress, add_report_arguments, note, read_lines, write_report

#: Bases whose k-mers are counted at a time (--fasta): a chromosome is read in
#: windows of this many.
WINDOW_BASES = 2**20
#: Occurrences (of both streams, --fasta) mixed before a training call: the calls
#: take a random half of them (``_OccurrencePool``). Two bacterial genomes (7.4M
#: k-mers) fit whole, so their occurrences are shuffled together as one chunk.
POOL_OCCURRENCES = 2**23


def add_compare_arguments(parser, positive_int):
    """The options of ``sklearn-sketch compare``."""
    parser.add_argument("--a", nargs="+", required=True, metavar="FILE",
                        help="the files of stream A")
    parser.add_argument("--b", nargs="+", required=True, metavar="FILE",
                        help="the files of stream B")
    kind = parser.add_mutually_exclusive_group()
    kind.add_argument("--text", action="store_true",
                      help="text files: lower-cased words of 2+ characters, as "
                           "CountVectorizer finds them (without a kind, what the first "
                           "file of each stream holds decides: reads, Vowpal Wabbit text, "
                           "else text)")
    kind.add_argument("--fasta", action="store_true",
                      help="FASTA files (plain or compressed): the canonical k-mers of each "
                           "record (FASTQ files among them are read as FASTQ)")
    kind.add_argument("--fastq", action="store_true",
                      help="FASTQ files (plain or compressed): the canonical k-mers of each "
                           "read (FASTA files among them are read as FASTA)")
    kind.add_argument("--vw", action="store_true",
                      help="Vowpal Wabbit text files (plain or compressed): each feature of a line "
                           "(namespace^name) is one occurrence, whatever its value; labels "
                           "are ignored")
    parser.add_argument("--k", type=positive_int, default=12,
                        help="k-mer length (--fasta, --fastq)")
    parser.add_argument("--min-count", type=int, default=5,
                        help="leave out items seen fewer times in both streams together")
    parser.add_argument("--chunk-lines", type=positive_int, default=20_000,
                        help="lines (--text, --vw) or records (--fasta, --fastq) read at a "
                             "time per stream")
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


def _windows(sequences, k, bases):
    """The ``sequences``, each longer than ``bases + k - 1`` cut into windows of
    ``bases`` k-mers (``bases + k - 1`` letters, overlapping by ``k - 1``): each
    k-mer in exactly one window.

    >>> list(_windows([b"ACGTAC", b"GG"], 3, 2))
    [b'ACGT', b'GTAC', b'GG']
    """
    for sequence in sequences:
        if len(sequence) <= bases + k - 1:
            yield sequence
            continue
        for start in range(0, len(sequence) - k + 1, bases):
            yield sequence[start:start + bases + k - 1]


def _read_chunks(paths, records, vectorizer):
    """The k-mer occurrences (keys) of the records of ``paths`` (FASTA or FASTQ, each
    file read as what it holds), at most ``WINDOW_BASES`` bases at a time: a
    chromosome in windows (``_windows``)."""
    from ..deltoids import item_occurrences
    from ..io import FastaReader, FastqReader
    from ._detect import input_kind
    from ._inputs import refuse_protein

    def keys(chunk, windows):
        X = vectorizer.transform(windows)
        refuse_protein(chunk._replace(sequences=windows), X, None)  # else "holds no item"
        return item_occurrences(X)[0]

    chunks = (chunk for path in paths
              for chunk in (FastqReader if input_kind(path) == "fastq" else FastaReader)(
                  path, records))
    for chunk in chunks:
        windows, bases = [], 0
        for window in _windows(chunk.sequences, vectorizer.k, WINDOW_BASES):
            if windows and bases + len(window) > WINDOW_BASES:
                yield keys(chunk, windows)
                windows, bases = [], 0
            windows.append(window)
            bases += len(window)
        if windows:
            yield keys(chunk, windows)


def cmd_compare(args):
    from ..deltoids import RelativeDeltoids

    if args.min_count < 0:
        raise CommandError(f"--min-count must be >= 0, got {args.min_count}")
    from ._inputs import folder_files

    args.a, args.b = folder_files(args.a), folder_files(args.b)
    kind = _stream_kind(args)
    vectorizer = None
    if kind == "reads":
        from ..feature_extraction import KmerVectorizer
        vectorizer = KmerVectorizer(k=args.k)

    def chunks(paths):
        if kind == "reads":
            return _read_chunks(paths, args.chunk_lines, vectorizer)
        if kind == "vw":
            return _vw_chunks(paths, args.chunk_lines)
        return _text_chunks(paths, args.chunk_lines)

    model = RelativeDeltoids(args.memory_budget, min_count=args.min_count,
                             random_state=args.random_state)
    start, seen, progress = time.perf_counter(), False, Progress(args.quiet)
    # The two streams alternate chunk by chunk; the longer one finishes alone.
    parts = zip_longest(chunks(args.a), chunks(args.b))
    if kind == "reads":
        parts = _OccurrencePool(POOL_OCCURRENCES, args.random_state).mixed(parts)
    for part_a, part_b in parts:
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


#: What ``compare`` reads for each kind of file ``input_kind`` tells.
_STREAM_KINDS = {"fasta": "reads", "fastq": "reads", "vw": "vw"}
_KIND_NAMES = {"reads": "reads (FASTA or FASTQ)", "vw": "Vowpal Wabbit text", "text": "text"}


def _stream_kind(args):
    """``"reads"`` (k-mers of FASTA or FASTQ records), ``"vw"`` or ``"text"``: the
    option given, else what the first file of each stream holds (a sequencing run's
    FASTQ read as text gave words such as ``iiiiii``, and an empty table)."""
    if args.fasta or args.fastq:
        return "reads"
    if args.vw or args.text:
        return "vw" if args.vw else "text"
    from ._detect import input_kind

    kinds = {}
    for stream, paths in (("A", args.a), ("B", args.b)):
        try:
            # An empty file tells nothing: the other stream's kind, and "holds no item".
            kinds[stream] = (None if os.path.getsize(paths[0]) == 0
                             else _STREAM_KINDS.get(input_kind(paths[0]), "text"))
        except (OSError, ValueError):
            kinds[stream] = "text"  # reading it names the problem
    kinds = {stream: kind or kinds["B" if stream == "A" else "A"] or "text"
             for stream, kind in kinds.items()}
    if kinds["A"] != kinds["B"]:
        raise CommandError(f"stream A holds {_KIND_NAMES[kinds['A']]} ({args.a[0]}) and "
                           f"stream B {_KIND_NAMES[kinds['B']]} ({args.b[0]}): compare two "
                           "streams of one kind, or name it (--text, --fasta, --fastq, --vw)")
    if kinds["A"] == "reads":
        note(f"{args.a[0]} and {args.b[0]} hold reads: comparing their {args.k}-mers "
             "(--k sets the length; --text reads them as words)")
    elif kinds["A"] == "vw":
        note(f"{args.a[0]} and {args.b[0]} are Vowpal Wabbit text: comparing their features "
             "(--text reads them as words)")
    return kinds["A"]


class _OccurrencePool:
    """The item occurrences (keys) of both streams, mixed across chunks in bounded memory.

    A training call shuffles the occurrences it is given, A's and B's together:
    that is the scope of its shuffle. A genome read in windows would give each
    call one stretch of it, whose items arrive together, and the model follows
    the most recent ones: two one-record genomes (E. coli K-12 against
    S. aureus COL) in 1 Mbp windows, one call a window each, lost S. aureus'
    strongest items from its top (log ratio -4.61 against -4.92 read whole).
    The pool gathers the chunks until it holds ``capacity`` occurrences, then
    trains on a random half of them (each occurrence independently) and keeps
    the rest to mix with the next chunks; at the end the rest trains. Streams
    that fit whole train in one call, as when read whole; memory stays at
    about ``capacity`` keys (8 bytes each) and a call's half.
    """

    def __init__(self, capacity, random_state):
        import numpy as np

        self.capacity = capacity
        self._rng = np.random.default_rng(random_state)
        self._parts = ([], [])

    def mixed(self, parts):
        """The training calls' ``(a, b)`` for the chunks' ``(a, b)`` pairs (None for none)."""
        for part_a, part_b in parts:
            for pool, part in zip(self._parts, (part_a, part_b)):
                if part is not None and part.size:
                    pool.append(part)
            if sum(p.size for pool in self._parts for p in pool) >= self.capacity:
                yield self._take(half=True)
        yield self._take(half=False)

    def _take(self, half):
        import numpy as np

        taken = []
        for pool in self._parts:
            keys = np.concatenate(pool) if pool else np.zeros(0, dtype=np.int64)
            pool.clear()
            if half:
                chosen = self._rng.integers(0, 2, keys.size, dtype=np.uint8).view(bool)
                pool.append(keys[~chosen])
                keys = keys[chosen]
            taken.append(keys)
        return tuple(taken)


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


