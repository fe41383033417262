"""Argument parsing and the entry point of the ``sklearn-sketch`` command."""
import argparse
import os
import sys
import warnings

from .. import __version__
from ._errors import CommandError
from ._compare import add_compare_arguments
from ._explain import add_explain_arguments
from ._pmi import add_pmi_arguments
from ._inputs import add_input_arguments, epochs_option, positive_int
from ._report import add_quiet_argument, set_quiet

DESCRIPTION = """Feature selection and linear learning in sketched feature spaces.
Train on CSV tables, svmlight, Vowpal Wabbit, FASTA or FASTQ files (named
alone, their kind read from their first lines; several files are mixed by a
shuffle buffer), list the selected features by name, predict and evaluate."""


class _Parser(argparse.ArgumentParser):
    def error(self, message):
        raise CommandError(message)


class _HelpFormatter(argparse.ArgumentDefaultsHelpFormatter):
    """Show defaults, but not the ``(default: None)`` of options without one."""

    def _get_help_string(self, action):
        if action.default is None or action.default is False:
            return action.help
        return super()._get_help_string(action)


def _command(commands, name, help):
    return commands.add_parser(name, help=help, description=help,
                               formatter_class=_HelpFormatter)


def build_parser():
    """The argument parser of ``sklearn-sketch`` (no heavy import)."""
    from ._commands import ESTIMATORS, SMALL_INPUT_NNZ
    parser = _Parser(prog="sklearn-sketch", description=DESCRIPTION,
                     formatter_class=_HelpFormatter)
    parser.add_argument("--version", action="version", version=f"sklearn-sketch {__version__}")
    commands = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)

    demo = _command(commands, "demo", "classify DNA reads of 4 species with 4 sketched "
                                      "estimators at equal memory")
    demo.add_argument("--n-reads", type=positive_int, default=4000,
                      help="training reads per species")
    demo.add_argument("--k", type=positive_int, default=12, help="k-mer length")
    demo.add_argument("--heavy-hitters", action="store_true",
                      help="instead, recover the heavy hitters of a stream with a sketch")
    demo.add_argument("--items", type=positive_int, default=2_000_000,
                      help="--heavy-hitters: stream length")
    demo.add_argument("--top", type=positive_int, default=20, help="--heavy-hitters: heap size")
    demo.add_argument("--width", type=positive_int, default=2**12,
                      help="--heavy-hitters: sketch width")
    demo.add_argument("--depth", type=positive_int, default=5,
                      help="--heavy-hitters: sketch depth")
    demo.add_argument("--random-state", type=int, default=0)

    fit = _command(commands, "fit", "train an estimator by streaming partial_fit")
    fit.add_argument("--estimator", choices=sorted(ESTIMATORS), default=None,
                     help="default: awm (the Active-Set WM-Sketch) for a classification, "
                          "mission for a regression")
    fit.add_argument("--param", metavar="KEY=VALUE", action="append",
                     help="estimator parameter, value parsed as a Python literal (repeat)")
    add_input_arguments(fit, training=True)
    fit.add_argument("--k", type=positive_int, default=None,
                     help="k-mer length for reads; by default 8 when the training reads "
                          "hold fewer than 5 Mbp (told from --n-reads, else the files' "
                          "sizes), else 12. Few reads tell species apart across strains "
                          "better by shorter k-mers (5,000 reads of 200 bases of each of "
                          "four species: .90 with 8 against .77 with 12); strains of one "
                          "species differ by longer ones (two H. pylori strains, 50,000 "
                          "reads each: .80 with 12 against .65 with 8)")
    fit.add_argument("--forward-strand", action="store_true",
                     help="count k-mers as read, not canonical (a k-mer and its reverse "
                          "complement are one feature by default, since reads come from "
                          "either strand)")
    fit.add_argument("--epochs", type=epochs_option, default="auto",
                     help="passes over the input, or auto: one, or the estimator's max_iter "
                          f"(5) when the input holds at most {SMALL_INPUT_NNZ:,} non-zero "
                          "values, as fit in Python trains, or where passes are cheap "
                          "(a small table) the number of 1 to 50 that 3-fold "
                          "cross-validation finds clearly better")
    add_quiet_argument(fit, help="no progress, no summary and no notes (warnings still show)")
    fit.add_argument("-o", "--output", required=True,
                     help="model file to write (NumPy arrays and a JSON header, say model.skm: loading it runs no code)")

    select = _command(commands, "select", "list the selected features of a model by name")
    select.add_argument("-m", "--model", required=True, help="model file written by fit (any other file, a pickle say, is refused)")
    select.add_argument("--top", type=positive_int, default=20, help="features listed")
    select.add_argument("--format", choices=["text", "tsv", "json"], default="text",
                        help="text: tab-separated columns (tsv is the same)")
    select.add_argument("-o", "--output", help="file to write (default stdout)")

    predict = _command(commands, "predict", "predict a label per example")
    predict.add_argument("-m", "--model", required=True, help="model file written by fit (any other file, a pickle say, is refused)")
    add_input_arguments(predict, training=False)
    predict.add_argument("-o", "--output", help="file to write, one label a line (a folder of "
                                          "documents: each file's name, a tab, its label; "
                                          "default stdout)")
    predict.add_argument("--proba", action="store_true",
                         help="a classifier's probability of each class too: a header line "
                              "'label' and the classes, then a line per example, "
                              "tab-separated (models of loss='log_loss', the default)")
    add_quiet_argument(predict, help="no notes (warnings still show)")

    evaluate = _command(commands, "evaluate", "accuracy, ROC AUC, memory, time")
    evaluate.add_argument("-m", "--model", required=True, help="model file written by fit (any other file, a pickle say, is refused)")
    add_input_arguments(evaluate, training=False)
    evaluate.add_argument("--format", choices=["text", "json"], default="text")
    add_quiet_argument(evaluate, help="no notes (warnings still show)")

    explain = _command(commands, "explain", "name the attribute combinations that make rows "
                                            "of a CSV file outliers, in bounded memory")
    add_explain_arguments(explain, positive_int)

    compare = _command(commands, "compare", "list the items much more frequent in one set of "
                                            "files than in another, in bounded memory")
    add_compare_arguments(compare, positive_int)

    pmi = _command(commands, "pmi", "list the word pairs of text files that go together more "
                                    "than chance (streaming PMI), in bounded memory")
    add_pmi_arguments(pmi, positive_int)
    return parser


def main(argv=None):
    """Entry point of the ``sklearn-sketch`` command.

    Parameters
    ----------
    argv : list of str, default=None
        Arguments; default ``sys.argv[1:]``.

    Returns
    -------
    status : int
        0 on success, 2 on a user error (bad arguments, unreadable or malformed
        input), which is reported on one line of stderr.
    """
    with warnings.catch_warnings():
        warnings.showwarning = _warning_line
        try:
            args = build_parser().parse_args(argv)
            set_quiet(getattr(args, "quiet", False))
            if hasattr(args, "input_files"):
                from ._inputs import resolve_input
                resolve_input(args)
            if args.command == "explain":
                from ._explain import cmd_explain
                cmd_explain(args)
            elif args.command == "compare":
                from ._compare import cmd_compare
                cmd_compare(args)
            elif args.command == "pmi":
                from ._pmi import cmd_pmi
                cmd_pmi(args)
            else:
                from . import _commands
                getattr(_commands, f"cmd_{args.command}")(args)
        except BrokenPipeError:
            # The reader went away (``| head``): what it read was right, nothing to report.
            try:
                sys.stdout = open(os.devnull, "w")
            except OSError:
                pass
            return 0
        except (CommandError, OSError, ValueError, TypeError, MemoryError) as exc:
            message = " ".join(str(exc).split())
            print(f"sklearn-sketch: error: {message}", file=sys.stderr)
            return 2
    return 0


def _warning_line(message, category, filename, lineno, file=None, line=None):
    """A warning raised inside a command (an estimator's, pandas'), on one line of
    stderr as the command's own: not Python's file, line and source."""
    print(f"sklearn-sketch: warning: {' '.join(str(message).split())}", file=sys.stderr)


def run():
    """The console script: :func:`main`, then exit without tearing the interpreter down.

    Once a command has written its output, freeing scikit-learn's, SciPy's and
    pandas' modules one by one only delays the shell: about 0.3 s, a tenth of
    a ``fit`` on a 400 MB file. The output streams are flushed first (model
    files are closed by the commands themselves).
    """
    status = main()
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except (BrokenPipeError, ValueError):  # The reader went away (``| head``).
        pass
    os._exit(status)
