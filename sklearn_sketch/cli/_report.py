"""What the commands share: notes, options, progress, input and output of the streaming
analytics commands (explain, compare, pmi)."""
import io
import sys

#: Whether notes are kept back: ``--quiet``, set by ``main`` for each command it runs.
_quiet = False


def set_quiet(quiet):
    """Keep notes back (``--quiet``) or print them, for the command about to run."""
    global _quiet
    _quiet = bool(quiet)


def note(text):
    """Print ``sklearn-sketch: note: TEXT`` on stderr, unless ``--quiet``.

    A note says what the command chose for the user (a shuffle, a number of
    passes, a reading of a column); a warning, printed whatever ``--quiet``
    says, that the result may be wrong.

    Examples
    --------
    >>> from sklearn_sketch.cli._report import note, set_quiet
    >>> set_quiet(True)
    >>> note("not printed")
    >>> set_quiet(False)
    """
    if not _quiet:
        print(f"sklearn-sketch: note: {text}", file=sys.stderr)


def add_report_arguments(parser, positive_int, *, budget, top, listed):
    """``--memory-budget``, ``--top``, ``--random-state``, ``--format``, ``--output``, ``--quiet``."""
    parser.add_argument("--memory-budget", default=budget,
                        help="real bytes of the whole model (classifier, names, counts)")
    parser.add_argument("--top", type=positive_int, default=top, help=f"{listed} listed")
    parser.add_argument("--random-state", type=int, default=0)
    parser.add_argument("--format", choices=["text", "json"], default="text")
    parser.add_argument("--output", help="file to write (default stdout)")
    add_quiet_argument(parser)


def add_quiet_argument(parser, help="no progress and no notes (warnings still show)"):
    """``-q``/``--quiet``, the same in every command."""
    parser.add_argument("-q", "--quiet", action="store_true", help=help)


class Progress:
    """A progress line on stderr: rewritten in place on a terminal; in a log file or a
    pipe, written once, in its last state, when the pass ends (rewrites there would
    pile up on one line). Nothing with ``quiet``.

    Examples
    --------
    >>> from sklearn_sketch.cli._report import Progress
    >>> progress = Progress(quiet=True)
    >>> progress.show("10 rows")
    >>> progress.end()
    """

    def __init__(self, quiet):
        self.quiet = quiet
        self.terminal = sys.stderr.isatty()
        self.text = None

    def show(self, text):
        """Make ``text`` the progress line."""
        if self.quiet:
            return
        self.text = text
        if self.terminal:
            print(f"\r{text}", end="", file=sys.stderr, flush=True)

    def end(self):
        """End the line (a terminal's) or write its last state (elsewhere)."""
        if self.quiet or self.text is None:
            return
        print("" if self.terminal else self.text, file=sys.stderr, flush=True)
        self.text = None


def read_lines(paths, size, min_chars=0):
    """Lists of ``size`` lines of text files (plain or compressed: gzip, bzip2, xz, a zip of one file),
    file after file, each decoded as its first MiB says (UTF-8, Windows-1252 or
    UTF-16: :func:`._csv.text_encoding`; 20 Newsgroups' posts are Latin-1, and read
    as UTF-8 their accented words were cut at the accent). With ``min_chars``, a list
    of short lines goes on until it holds that many characters."""
    from ._csv import file_head, head_encoding, open_decompressed

    batch, chars = [], 0
    for path in paths:
        encoding = head_encoding(file_head(path))
        with open_decompressed(path) as raw, io.TextIOWrapper(
                raw, encoding=encoding, errors="replace") as handle:
            for line in handle:
                batch.append(line)
                chars += len(line)
                if len(batch) >= size and chars >= min_chars:
                    yield batch
                    batch, chars = [], 0
    if batch:
        yield batch


def write_report(text, path):
    """The report on stdout, or in ``path`` (written only once the report is whole)."""
    if path is None:
        sys.stdout.write(text)
        return
    with open(path, "w") as f:
        f.write(text)
