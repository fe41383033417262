"""The ``pmi`` command: the word pairs of text files that go together more than chance."""
import json
import time

from ._errors import CommandError
from ._report import Progress, add_report_arguments, note, read_lines, write_report


def add_pmi_arguments(parser, positive_int):
    """The options of ``sklearn-sketch pmi``."""
    parser.add_argument("paths", nargs="+", metavar="FILE",
                        help="text files (plain or .gz), one document a line")
    parser.add_argument("--window", type=positive_int, default=5,
                        help="largest distance between the words of a pair")
    parser.add_argument("--min-count", type=int, default=5,
                        help="leave out pairs estimated fewer times")
    parser.add_argument("--chunk-lines", type=positive_int, default=500,
                        help="lines trained at a time, as StreamingPMI's chunk_documents, "
                             "and more short lines up to 256 KiB of text (memory grows with "
                             "their words: 20 Newsgroups' posts, a post a line, peaked at "
                             "0.6 GB at 500, 1.3 GB at 2000)")
    add_report_arguments(parser, positive_int, budget="1536KB", top=50, listed="pairs")


#: Characters of text a chunk holds at least: each chunk costs a fixed time on top of
#: its words (the heap's counts, the reservoir's names), and 500 lines of a folder of
#: 20 Newsgroups' posts (a line of a post at a time: 6,700 chunks) ran at 110,000
#: words/s where 256 KiB chunks (about 5,000 lines) ran at 226,000.
CHUNK_CHARS = 2**18


def cmd_pmi(args):
    from ..pmi import StreamingPMI, window_pairs

    if args.min_count < 0:
        raise CommandError(f"--min-count must be >= 0, got {args.min_count}")
    from ._inputs import folder_files

    args.paths = folder_files(args.paths)
    model = StreamingPMI(args.window, memory_budget=args.memory_budget,
                         min_count=args.min_count, random_state=args.random_state)
    start, progress = time.perf_counter(), Progress(args.quiet)
    for lines in read_lines(args.paths, args.chunk_lines, min_chars=CHUNK_CHARS):
        if window_pairs(lines, 1)[0].size == 0:
            continue  # a chunk of blank lines
        model.partial_fit(lines)
        progress.show(f"{model.n_words_:,} words, "
                      f"{model.n_words_ / (time.perf_counter() - start):,.0f} words/s")
    if "estimator_" not in model.__dict__:
        raise CommandError("the files hold no word (words are 2+ letters or digits)")
    seconds = time.perf_counter() - start
    progress.end()
    table = model.pairs_
    rows = list(zip(table["pair"].tolist(), table["pmi"].tolist(), table["count"].tolist(),
                    table["weight"].tolist()))[:args.top]
    summary = {"words": model.n_words_, "pairs": model.n_pairs_,
               "memory_bytes": model.memory_bytes_, "seconds": round(seconds, 3),
               "words_per_second": round(model.n_words_ / max(seconds, 1e-9))}
    if args.format == "json":
        summary["top"] = [{"pair": p, "pmi": m, "count": c, "weight": w} for p, m, c, w in rows]
        text = json.dumps(summary, indent=1) + "\n"
    else:
        text = "\n".join([f"{model.n_words_:,} words, {model.n_pairs_:,} pairs; "
                          f"{model.memory_bytes_:,} bytes; {seconds:.1f} s",
                          "pmi\tcount\tweight\tpair",
                          *(f"{m:.3f}\t{c:.0f}\t{w:.4f}\t{p}" for p, m, c, w in rows)]) + "\n"
    write_report(text, args.output)
    if not rows and args.min_count > 0:
        note(f"no pair was estimated at least --min-count="
             f"{args.min_count} times ({model.n_pairs_:,} pairs of {model.n_words_:,} words); "
             "more text, or a lower --min-count, lists some")
