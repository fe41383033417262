"""Inputs of ``fit``, ``predict`` and ``evaluate``: files to a re-iterable stream of chunks.

svmlight and Vowpal Wabbit files give CSR rows; CSV files give categorical
attributes and their crosses (:class:`~sklearn_sketch.feature_extraction.FeatureCrosser`)
as named CSR rows; FASTA/FASTQ files give reads,
optionally sampled from long records, mixed across files at the read level
(cheap) and then counted into k-mers. Several training files are mixed by a
shuffle buffer, so a model never learns one file after another.
"""
import argparse
import math
import os
import re
import sys
from functools import lru_cache
from importlib.util import find_spec
from itertools import islice, repeat

import numpy as np

from ._csv import is_label_and_text, read_csv
from ._errors import CommandError
from ._report import note

#: Amino-acid letters that no nucleotide code (IUPAC) uses: reads in which they are at
#: least PROTEIN_SHARE of the letters are protein sequences (about a third of a
#: protein's residues are E, F, I, L, P or Q).
PROTEIN_LETTERS = b"EFILPQefilpq"
PROTEIN_SHARE = 0.1
#: Rows held by the shuffle buffer that mixes several training inputs.
DEFAULT_SHUFFLE_BUFFER = 100_000
#: Training input sorted by label, up to this many rows and bytes of text (compressed
#: files counted COMPRESSED_TEXT_RATIO times their size), is shuffled whole, in memory.
FULL_SHUFFLE_ROWS, FULL_SHUFFLE_BYTES, COMPRESSED_TEXT_RATIO = 400_000, 2**30, 4
#: Bases of a read of the embedded sample (``--sample``).
SAMPLE_READ_LENGTH = 200
#: The first rows of each svmlight training file that tell a table from keys.
TABLE_ROWS = 10_000
#: The value of an attribute that a CSV row leaves empty (or "NA", "null", as pandas reads
#: them): a category of its own, as scikit-learn's ``OneHotEncoder`` reads NaN, since
#: what is missing often says something (a flight without a tail number was
#: cancelled). Models of before it read a missing value as no feature.
MISSING = "NA"
#: Whole-number labels are a quantity (``--task auto`` trains a regressor) when more than
#: MANY_NUMERIC_CLASSES are distinct, or more than FEW_NUMERIC_CLASSES that are not the
#: codes of classes: from 0 or 1 up, CODE_FILL of the numbers in between present. A
#: penguin's body mass in grams (81 values from 2,700 in 238 rows) or a count of doctor's
#: visits (55 values from 0 to 77) trained a model per value and scored as always
#: predicting the most frequent one; a group's number (1 to 20) or a letter's (1 to 26)
#: stays a class.
MANY_NUMERIC_CLASSES, FEW_NUMERIC_CLASSES, CODE_FILL = 100, 20, 0.9
#: A numeric label column may hold a few words (a "?" for unknown, a line of two rows run
#: together): at most STRAY_LABELS distinct ones in at most STRAY_SHARE of the rows. When
#: the numbers are a quantity, a regression skips those rows and counts them; a price
#: column with one stray word made a classifier of 386 classes, one a price.
STRAY_LABELS, STRAY_SHARE = 3, 0.01
#: A classification of at least IDENTIFIER_ROWS labelled rows, more than
#: IDENTIFIER_SHARE of which carry a label no other row has, is refused unless
#: --task classification asks for it: its label column is an identifier (R's
#: gap::mhtdata by SNP name: 111,518 rows, each label once), a class seen once is
#: never predicted right for a new row, and a model per label had taken 16 GB in its
#: first minutes when it was stopped.
IDENTIFIER_ROWS, IDENTIFIER_SHARE = 50, 0.5


def _argument_type(convert, accept, expected):
    """An argparse type: ``convert(text)`` that ``accept`` s, else an error naming ``expected``."""
    def check(text):
        try:
            value = convert(text)
        except ValueError:
            value = None
        if value is None or not accept(value):
            raise argparse.ArgumentTypeError(f"expected {expected}, got {text!r}")
        return value
    return check


positive_int = _argument_type(int, lambda v: v >= 1, "a positive integer")
non_negative_int = _argument_type(int, lambda v: v >= 0, "an integer >= 0")
positive_float = _argument_type(float, lambda v: 0 < v < float("inf"), "a number > 0")
epochs_option = _argument_type(lambda text: "auto" if text == "auto" else int(text),
                               lambda v: v == "auto" or v >= 1, "a positive integer or auto")


def add_input_arguments(parser, *, training):
    """Add the options that name and shape the input of a command."""
    source = parser.add_argument_group(
        "input (files of one kind, named alone (their kind read from their first lines) "
        "or after the option of their kind)")
    source.add_argument("input_files", metavar="FILE", nargs="*",
                        help="input file (plain or compressed), its kind read from its "
                             "first lines: a CSV table (as --csv), svmlight, Vowpal Wabbit "
                             "text, FASTA or FASTQ (FILE:LABEL, as --fasta); or a folder "
                             "per class (FOLDER/LABEL/FILE) of documents or of reads")
    kinds = source.add_mutually_exclusive_group()
    kinds.add_argument("--svmlight", metavar="PATH", action="extend", nargs="+",
                       help="svmlight / libsvm file (plain or compressed: gzip, bzip2, "
                            "xz, a zip of one file)")
    kinds.add_argument("--vw", metavar="PATH", action="extend", nargs="+",
                       help="Vowpal Wabbit text file; importance weights are used")
    kinds.add_argument("--fasta", metavar="PATH[:LABEL]", action="extend", nargs="+",
                       help="FASTA (or GenBank/EMBL) file whose reads all have LABEL "
                            "(else --label-pattern; predict needs no label)")
    kinds.add_argument("--fastq", metavar="PATH[:LABEL]", action="extend", nargs="+",
                       help="FASTQ file whose reads all have LABEL (else --label-pattern; "
                            "predict needs no label)")
    kinds.add_argument("--sample", action="store_true",
                       help="the embedded DNA sample (train strains for fit, held-out "
                            "strains otherwise)")
    kinds.add_argument("--csv", metavar="PATH", action="extend", nargs="+",
                       help="CSV file with a header (plain or compressed; columns "
                            "separated by commas, tabs, semicolons or bars, as its header "
                            "line shows, or by spaces; decimal commas read; UTF-8, "
                            "Windows-1252 or UTF-16): categorical attributes, crossed with "
                            "--max-order or --cross, and a --label column; also JSON "
                            "lines, Parquet (with pyarrow), ARFF, fastText's '__label__X text' "
                            "lines and a folder of documents, a folder per class (columns "
                            "label and text)")
    source.add_argument("--zero-based", choices=["auto", "0", "1"], default="auto",
                        help="svmlight index base: 0, 1, or auto (fit: decided once on the "
                             "first 10,000 rows of each training file, index 0 seen means "
                             "0; predict/evaluate: the model's)")
    if training:
        source.add_argument("--interactions", metavar="LETTERS", action="append",
                            help="--vw: cross the features of namespaces by their first "
                                 "letters, as Vowpal Wabbit's -q ab and --cubic abc (repeat; "
                                 "a space for the default namespace); names join the parts "
                                 "with '*' (predict and evaluate use the model's)")
    table = parser.add_argument_group("CSV attributes (--csv)")
    table.add_argument("--label", metavar="COLUMN",
                       help="the column of the labels (fit, evaluate; predict and evaluate "
                            "default to the model's)")
    if training:
        table.add_argument("--no-header", action="store_true",
                           help="the CSV file has no line of column names (UCI's and "
                                "Criteo's files): columns are named by position, 1 to n "
                                "(--label 15, --columns 1,3); predict and evaluate read "
                                "theirs alike, with or without the label column")
        table.add_argument("--columns", metavar="A,B,...",
                           help="attribute columns (default every column but the label)")
        table.add_argument("--max-order", type=int, choices=[1, 2, 3], default=None,
                           help="cross every 2 (or 2 and 3) attribute columns (default 1: "
                                "no crosses)")
        table.add_argument("--cross", metavar="A,B[,C]", action="append",
                           help="one cross of 2 or 3 columns, instead of --max-order "
                                "(repeat)")
        table.add_argument("--bins", type=non_negative_int, default=None, metavar="N",
                           help="cut each numeric column (every value a number, at least "
                                "64 distinct in the first 10,000 rows) into N intervals at "
                                "those rows' quantiles, beside its exact value and its "
                                "value as a number; a column of fewer distinct numbers, "
                                "but at least a tenth of those rows' (a small table's "
                                "measurements), is read as a number too (default 16, "
                                "but none in a regression whose labels drift with the "
                                "rows, a series in time order: numbers only; 0: every "
                                "value a category only)")
    reads = parser.add_argument_group("reads (FASTA, FASTQ, --sample)")
    reads.add_argument("--read-length", type=positive_int, metavar="L",
                       help="cut reads of L bases (both strands) from records longer than "
                            "L, e.g. genomes; shorter records are reads as they are (fit "
                            "cuts 200 from genomes without it)")
    amount = reads.add_mutually_exclusive_group()
    amount.add_argument("--n-reads", type=positive_int, metavar="N",
                        help="with --read-length: reads per file (default: fit 4x coverage "
                             "of the class with the most bases, as many bases of each other "
                             "class; evaluate and predict 1000); with --sample: reads per "
                             "species (default 1000)")
    amount.add_argument("--coverage", type=positive_float, metavar="C",
                        help="with --read-length: reads per record = C * length / L")
    reads.add_argument("--label-pattern", metavar="REGEX",
                       help="label of a read of a file given without :LABEL: the first "
                            "group (or the match) of REGEX searched in the record header")
    parser.add_argument("--chunk-rows", type=positive_int, default=10_000,
                        help="rows or reads per chunk")
    parser.add_argument("--random-state", type=int, default=0,
                        help="seed of read sampling, of the shuffle buffer and (fit) of "
                             "the estimator: the same command gives the same model")
    if training:
        parser.add_argument("--shuffle-buffer", type=non_negative_int, metavar="ROWS",
                            help=f"rows mixed at a time; default {DEFAULT_SHUFFLE_BUFFER:,} "
                                 "when training on several files or on labels from record "
                                 "names, every row (up to "
                                 f"{FULL_SHUFFLE_ROWS:,} and {FULL_SHUFFLE_BYTES // 2**30} GiB of "
                                 "text) when the labels come sorted or neighbouring rows "
                                 "have alike labels (a file in time order), else no "
                                 "shuffle (0: never)")
        parser.add_argument("--classes", metavar="A,B,...",
                            help="every class, comma-separated; default: read from the "
                                 "input (svmlight/VW: a fast pass over the labels)")
        parser.add_argument("--task", choices=["auto", "classification", "regression"],
                            default="auto",
                            help="auto: a regression (squared error) when the labels are "
                                 "numbers not all whole, more than "
                                 f"{MANY_NUMERIC_CLASSES} distinct whole numbers, or "
                                 f"more than {FEW_NUMERIC_CLASSES} that are not class "
                                 "codes (0 or 1 up, most of those in between present): "
                                 "a quantity; else a classification")


def resolve_input(args):
    """Give the files named without an option of their kind to the option their first
    lines call for (:func:`._detect.input_kind`): ``args.csv``, ``args.vw``, ...

    Files named alone must be of one kind; with an option of a kind, they are more
    files of it, and reads given as lines (or lines as reads) are refused. Without
    any input, the error says how to name one.
    """
    from ._detect import NAMES, OPTIONS, input_kind

    # Each file's first MiB is read once, though a folder's files are told twice.
    file_kind = lru_cache(maxsize=None)(input_kind)
    options = [kind for kind in OPTIONS if getattr(args, kind, None)]
    paths = args.input_files
    if args.sample and (paths or options):
        raise CommandError(f"--sample is the input: {' '.join(paths)} is one more")
    if options:
        option = options[0]
        getattr(args, option).extend(paths)
        if option in READ_KINDS:
            setattr(args, option, read_folder_specs(getattr(args, option), file_kind))
        # Reads read as a table (or lines as reads) gave errors about columns or
        # classes that did not say the file was of another kind.
        for spec in getattr(args, option):
            path = split_file_label(spec)[0]
            kind = _kind_or_none(file_kind, path)
            if kind is not None and kind != option and READ_KINDS & {kind, option}:
                given = (spec if path != spec else f"{path}:LABEL") \
                    if kind in READ_KINDS else path
                raise CommandError(f"{path} reads as {NAMES[kind]}, not as {OPTIONS[option]} "
                                   f"input: give {OPTIONS[kind]} {given} (or the file alone)")
        return
    if not paths:
        if not args.sample:
            raise CommandError("no input: name a file (a CSV table, svmlight, Vowpal Wabbit, "
                               "FASTA or FASTQ, told from its first lines), or give "
                               "--csv, --svmlight, --vw, --fasta, --fastq or --sample")
        return
    kinds = {}
    for spec in paths:
        path = split_file_label(spec)[0]
        if not os.path.exists(path):
            raise CommandError(f"no such file: {spec}")
        try:
            kind = file_kind(path)
        except ValueError as exc:
            raise CommandError(str(exc)) from None
        if path != spec and kind not in READ_KINDS:
            raise CommandError(f"no such file: {spec}")
        if kind in READ_KINDS and os.path.isdir(path):
            for inner in read_folder_specs([spec], file_kind):  # each of its own kind
                inner_kind = file_kind(split_file_label(inner)[0])
                kinds.setdefault(inner_kind, []).append(inner)
            continue
        kinds.setdefault(kind, []).append(spec)
    if len(kinds) > 1:
        found = "; ".join(f"{', '.join(files)}: {NAMES[kind]}" for kind, files in kinds.items())
        raise CommandError(f"the input files are of different kinds ({found}): train on "
                           "files of one kind")
    (kind, files), = kinds.items()
    setattr(args, kind, files)
    if not getattr(args, "quiet", False):
        folders = [path for path in paths if os.path.isdir(split_file_label(path)[0])]
        if kind in READ_KINDS and folders:
            what = (f"{NAMES[kind]} in a folder per class, {len(files)} file"
                    f"{'s' * (len(files) > 1)}")
        else:
            what = "documents, a folder per class" if folders else NAMES[kind]
        print(f"sklearn-sketch: {', '.join(paths)}: {what}, read as {OPTIONS[kind]} "
              "reads it", file=sys.stderr)


def folder_files(paths):
    """``paths`` with each folder given as the files under it, at any depth, in sorted
    order (hidden files and folders left out): ``compare --a strains/ --b other/``,
    ``pmi 20news-bydate-train/``.

    Examples
    --------
    >>> import os, tempfile
    >>> folder = tempfile.mkdtemp()
    >>> for name in ("b/2.txt", "a/x/1.txt", ".hidden", "c.txt"):
    ...     os.makedirs(os.path.dirname(os.path.join(folder, name)), exist_ok=True)
    ...     _ = open(os.path.join(folder, name), "w").write("text")
    >>> [os.path.relpath(p, folder) for p in folder_files([folder])]
    ['a/x/1.txt', 'b/2.txt', 'c.txt']
    """
    files = []
    for path in paths:
        if not os.path.isdir(path):
            files.append(path)
            continue
        inner = []
        for root, folders, names in os.walk(path):
            folders[:] = [name for name in folders if not name.startswith(".")]
            inner += [os.path.join(root, name) for name in names if not name.startswith(".")]
        if not inner:
            raise CommandError(f"{path} is a folder that holds no file")
        files += sorted(inner)
    return files


def read_folder_specs(specs, file_kind=None):
    """``specs`` (``FILE[:LABEL]`` of reads) with each folder given as its files, as
    a folder of documents holds them (:func:`._formats.document_files`): the files of
    its class folders labelled by the folder's name (``genomes/E.Coli/K12.fa`` is
    ``genomes/E.Coli/K12.fa:E.Coli``), then its own files, unlabelled; a label
    given to the folder (``strains/:ecoli``) labels every file of it. Files that
    hold no reads (a README, checksums) are left out, and a note names them;
    ``file_kind`` tells them (default :func:`._detect.input_kind`).

    Examples
    --------
    >>> import os, tempfile
    >>> folder = tempfile.mkdtemp()
    >>> for name in ("ecoli/k12.fa", "ecoli/dh1.fa", "saureus/col.fa"):
    ...     os.makedirs(os.path.dirname(os.path.join(folder, name)), exist_ok=True)
    ...     _ = open(os.path.join(folder, name), "w").write(">r\\nACGT\\n")
    >>> [os.path.relpath(spec, folder) for spec in read_folder_specs([folder])]
    ['ecoli/dh1.fa:ecoli', 'ecoli/k12.fa:ecoli', 'saureus/col.fa:saureus']
    >>> [spec.rpartition(":")[2] for spec in read_folder_specs([f"{folder}/ecoli:E"])]
    ['E', 'E']
    """
    from ._detect import input_kind
    from ._formats import document_files

    file_kind = file_kind or input_kind
    expanded, left_out = [], []
    for spec in specs:
        path, label = split_file_label(spec)
        if not os.path.isdir(path):
            expanded.append(spec)
            continue
        try:
            files = document_files(path)
        except ValueError as exc:
            raise CommandError(str(exc)) from None
        reads = [(inner, file) for inner, file in files
                 if _kind_or_none(file_kind, file) in READ_KINDS]
        if not reads:
            raise CommandError(f"{path} holds no FASTA or FASTQ file")
        left_out += [file for _, file in files if (_, file) not in reads]
        expanded += [file if (label or inner) is None else f"{file}:{label or inner}"
                     for inner, file in reads]
    if left_out:
        names = ", ".join(left_out[:3]) + (f" and {len(left_out) - 3:,} more"
                                           if len(left_out) > 3 else "")
        note(f"left out of the folders, as they hold no reads: {names}")
    return expanded


#: The inputs of reads, whose files are named ``FILE:LABEL``.
READ_KINDS = {"fasta", "fastq"}


def split_file_label(spec):
    """``(FILE, LABEL)`` of ``FILE:LABEL``, ``(FILE, None)`` of a file alone: a name
    with a colon that exists is a file (``reads:v2.fa``), else the label follows
    the last colon.

    Examples
    --------
    >>> split_file_label("k12.fa:ecoli")
    ('k12.fa', 'ecoli')
    >>> split_file_label("k12.fa")
    ('k12.fa', None)
    """
    if os.path.exists(spec) or ":" not in spec:
        return spec, None
    path, _, label = spec.rpartition(":")
    return path, label


def _kind_or_none(file_kind, path):
    """The kind of an existing file, or None (missing or unreadable: its reader says
    why)."""
    if not os.path.exists(path):
        return None
    try:
        return file_kind(path)
    except (OSError, ValueError):
        return None


def input_kind(args):
    """``"svmlight"``, ``"vw"``, ``"csv"``, ``"reads"`` or ``"sample"``."""
    if args.svmlight:
        return "svmlight"
    if args.vw:
        return "vw"
    if getattr(args, "csv", None):
        return "csv"
    return "sample" if args.sample else "reads"


def csv_options(args, model_csv=None):
    """``{"label", "columns", "crosses", "bins"}`` of a CSV input: the options', or the
    model's (``bins``: the numeric columns' interval edges, :mod:`._bins`)."""
    if model_csv is not None:
        label = args.label or model_csv["label"]
        if "names" in model_csv and label != model_csv["label"]:
            raise CommandError(f"--label: the model's file has no header, its label is "
                               f"column {model_csv['label']}")
        return {"label": label, "columns": model_csv["columns"],
                **({"names": model_csv["names"]} if "names" in model_csv else {}),
                "crosses": model_csv["crosses"], "bins": model_csv.get("bins", {}),
                "numbers_only": model_csv.get("numbers_only", []),
                "scales": model_csv.get("scales", {}), "means": model_csv.get("means", {}),
                "distinct": model_csv.get("distinct", []), "text": model_csv.get("text", []),
                **({"idf": model_csv["idf"]} if "idf" in model_csv else {}),
                **({"missing": model_csv["missing"]} if "missing" in model_csv else {})}
    fasttext = is_label_and_text(args.csv[0])
    if not args.label and fasttext:
        args.label = "label"
    import pandas as pd

    no_header = True if getattr(args, "no_header", False) else None
    names = [str(c) for c in read_csv(args.csv[0], no_header, nrows=0).columns]
    if not args.label:
        shown = ", ".join(names[:20]) + (f", ... ({len(names)} columns)" if len(names) > 20
                                         else "")
        raise CommandError(f"--csv needs --label, the column of the labels: {args.csv[0]} "
                           f"has {shown}")
    if no_header and args.label not in names:
        raise CommandError(f"--label {args.label!r}: with --no-header, columns are named by "
                           f"position, 1 to {len(names)}")
    if not no_header and np.isfinite(_finite_numbers(np.array(names, dtype=str))).all():
        # A file without a header (statsmodels' E6_jmulti.csv): its first row names
        # the columns, and is not trained on.
        shown = ", ".join(names[:4]) + (", ..." if len(names) > 4 else "")
        print(f"sklearn-sketch: warning: the first line of {args.csv[0]}, read as the "
              f"names of its columns, is all numbers ({shown}): a file without a header? "
              "Its first row is then not trained on; --no-header reads it as a row",
              file=sys.stderr)
    columns = ([c.strip() for c in args.columns.split(",")] if args.columns
               else [c for c in names if c != args.label])
    for path in args.csv:
        have = [str(c) for c in read_csv(path, no_header, nrows=0).columns]
        unknown = [c for c in [*columns, args.label] if c not in have]
        if unknown:
            raise unknown_columns(unknown, path, have)
    if args.label in columns:
        raise CommandError(f"the label column {args.label!r} cannot be an attribute too")
    if args.cross and args.max_order:
        raise CommandError("give --cross or --max-order, not both")
    from ..feature_extraction import FeatureCrosser
    from ._bins import (BIN_ROWS, DEFAULT_BINS, DISTINCT_SHARE, distinct_columns, numeric_bins,
                        numeric_means, numeric_scales, row_numbers)
    from ._text import document_frequencies, text_columns

    if not columns:
        raise CommandError(f"no column to learn from: {args.csv[0]} has only the label "
                           f"{args.label!r}")
    first = read_csv(args.csv[0], no_header, usecols=[*columns, args.label], dtype=str,
                     nrows=BIN_ROWS)
    first_labels = first.pop(args.label)
    numbered = [] if args.columns else row_numbers(first)
    if numbered and numbered == columns:
        raise CommandError(f"no column to learn from: besides the label {args.label!r}, "
                           f"{args.csv[0]} has only {numbered[0]!r}, whole numbers without "
                           "a name, each once: the row numbers of an export (R's write.csv, "
                           f"pandas' to_csv), not read (--columns {numbered[0]!r} reads it)")
    if numbered:
        note(f"column {names.index(numbered[0]) + 1} has no name and "
             "holds whole numbers, each once: the row numbers of an export (R's write.csv, "
             f"pandas' to_csv), not read (--columns with {numbered[0]!r} reads it)")
        columns = [c for c in columns if c not in numbered]
        first = first[columns]
    text = text_columns(first, columns)
    if fasttext and "text" in columns and "text" not in text:
        text.append("text")  # short texts (queries, titles) are text all the same
    crosses = [[f.strip() for f in c.split(",")] for c in args.cross] if args.cross else None
    crossed = [c for c in columns if c not in text]
    for cross in crosses or ():
        if set(cross) & set(text):
            raise CommandError(f"--cross {','.join(cross)}: {sorted(set(cross) & set(text))} "
                               "holds free text, read as its words, which are not crossed")
    try:
        crosser = FeatureCrosser(crosses=crosses, max_order=args.max_order or 1,
                                 fields=crossed).fit(pd.DataFrame(columns=crossed))
    except ValueError as exc:
        raise CommandError(str(exc)) from None
    n_bins = DEFAULT_BINS if args.bins is None else args.bins
    bins = numeric_bins(first, columns, n_bins)
    scales = numeric_scales(first, columns) if n_bins > 1 else {}
    # A classification reads no category per value of a mostly distinct column.
    task = "classification" if getattr(args, "classes", None) else getattr(args, "task", "auto")
    labels = first_labels.dropna().to_numpy(dtype=str)
    regression = likely_regression(labels, task)
    numbers_only = []
    if regression and args.bins is None and scales and labels_drift(labels):
        crossed = {f for cross in crosser.crosses_ for f in cross}
        numbers_only = [c for c in scales if c not in crossed]
        bins = {c: edges for c, edges in bins.items() if c not in numbers_only}
        if numbers_only:
            shown = ", ".join(numbers_only[:5]) + (", ..." if len(numbers_only) > 5 else "")
            note("neighbouring labels are alike, as in a series in "
                 "time order, whose new rows lie past the range of the old: the numeric "
                 f"columns ({shown}) are read as numbers only, not by interval or exact "
                 "value, so that the model follows a trend past its training rows "
                 "(--bins 16 reads them by interval too)")
    return {"label": args.label, "columns": columns,
            "crosses": [list(c) for c in crosser.crosses_],
            "bins": bins, "scales": scales, "means": numeric_means(first, scales),
            **({"numbers_only": numbers_only} if numbers_only else {}),
            "distinct": distinct_columns(first, bins, 1.0 if regression else DISTINCT_SHARE),
            "text": text,
            "idf": {column: document_frequencies(first[column]) for column in text},
            "missing": MISSING,
            **({"names": names} if no_header else {})}


def header_spec(csv):
    """``read_csv``'s ``no_header`` for a CSV input of options ``csv``: None for a file
    with a header, else its training file's names and label."""
    return (csv["names"], csv["label"]) if "names" in csv else None


def unknown_columns(unknown, path, have):
    """The error of column names not in a file's header ``have``, with the names
    they come close to (``'vote'`` for ``vote`` where a header quotes its names)."""
    import difflib

    close = {name: difflib.get_close_matches(name, have, n=1) for name in unknown}
    guesses = [f"{match[0]!r} for {name!r}" for name, match in close.items() if match]
    return CommandError(f"unknown column(s) {unknown} in {path}; it has {have}"
                        + (f" (did you mean {', '.join(guesses)}?)" if guesses else ""))


def labelled_files(args):
    """``[(path, label or None)]`` of the FASTA/FASTQ options, checked: a file needs
    a label (or ``--label-pattern``) except to ``predict``, which reads none."""
    specs = args.fasta or args.fastq
    files, labels_of = [], {}
    for spec in specs:
        path, label = split_file_label(spec)
        if label is not None and not path:
            raise CommandError(f"expected PATH:LABEL, got {spec!r}")
        if label == "":
            raise CommandError(f"empty label in {spec!r}: expected PATH:LABEL")
        if (label is None and args.label_pattern is None
                and getattr(args, "command", None) != "predict"):
            raise CommandError(f"no label for {spec!r}: give PATH:LABEL, a folder per class "
                               "(FOLDER/LABEL/FILE, the folder named), or --label-pattern to "
                               "take labels from the record headers")
        if path in labels_of and labels_of[path] != label:
            raise CommandError(f"{path} is given twice with different labels "
                               f"({labels_of[path]!r} and {label!r})")
        labels_of[path] = label
        files.append((path, label))
    return files


def _label_function(pattern):
    try:
        regex = re.compile(pattern)
    except re.error as exc:
        raise CommandError(f"bad --label-pattern {pattern!r}: {exc}") from None

    def label(header):
        match = regex.search(header)
        if match is None:
            raise CommandError(f"--label-pattern {pattern!r} does not match the record "
                               f"header {header[:80]!r}")
        return match.group(1) if regex.groups else match.group(0)

    return label


def _file_seed(random_state, index):
    """A seed of its own for the reads of each file."""
    return int(np.random.SeedSequence([random_state, index]).generate_state(1)[0])


def check_read_options(args):
    """Refuse read and CSV options that do not apply to the input."""
    kind = input_kind(args)
    if kind != "csv":
        for option in ("label", "columns", "max_order", "cross", "bins"):
            if getattr(args, option, None) is not None:
                raise CommandError(f"--{option.replace('_', '-')} applies to --csv input only")
    else:
        if find_spec("pandas") is None:
            raise CommandError("--csv files are read with pandas, which is not installed: "
                               "pip install pandas (or 'sklearn-sketch[explain]')")
    if kind != "vw" and getattr(args, "interactions", None):
        raise CommandError("--interactions applies to --vw input only")
    if getattr(args, "interactions", None):
        from ..io._readers import check_interactions
        try:
            check_interactions(args.interactions)
        except ValueError as exc:
            raise CommandError(f"bad --interactions: {exc}") from None
    if kind in ("svmlight", "vw", "csv"):
        for option, value in (("--read-length", args.read_length), ("--n-reads", args.n_reads),
                              ("--coverage", args.coverage),
                              ("--label-pattern", args.label_pattern)):
            if value is not None:
                raise CommandError(f"{option} applies to reads (--fasta, --fastq), not to "
                                   f"--{kind} input")
    elif kind == "reads":
        if args.read_length is None and (args.n_reads or args.coverage):
            raise CommandError("--n-reads and --coverage need --read-length (the reads are "
                               "cut from the records)")
        labelled_files(args)
    elif args.read_length or args.coverage or args.label_pattern:
        raise CommandError("--sample has its own reads: --read-length, --coverage and "
                           "--label-pattern do not apply")
    if kind != "svmlight" and args.zero_based != "auto":
        raise CommandError("--zero-based applies to --svmlight input only")


class InputStream:
    """The chunks of the command's input, one pass per iteration.

    Parameters
    ----------
    args : argparse.Namespace
        Parsed options.
    vectorizer : KmerVectorizer or None
        Counts reads into k-mers (reads inputs).
    split : {"train", "test"}
        Strains of ``--sample``.
    zero_based : bool or None
        svmlight index base (decided before).
    n_features : int or None
        svmlight columns (:func:`decide_svmlight_layout`); None for the whole
        key space.
    shuffle_buffer : int
        Rows of the shuffle buffer; 0 for none.
    keep_names : bool
        Vowpal Wabbit chunks carry the names of their keys (for a model
        with a heap to name its features).
    csv : dict or None
        The CSV options (:func:`csv_options`).
    interactions : list of str
        Vowpal Wabbit namespace crosses (``--interactions``).
    missing_labels : {"skip", "keep"} or None
        CSV rows without a label: skipped, or kept (``predict``); None (training):
        skipped, and counted by :meth:`classes`.
    targets : bool or None
        Whether CSV labels are a regression's targets (numbers); None (training):
        as the labels decide (:meth:`classes`).
    stray_labels : "unscored" or ()
        A regression's CSV labels that are not numbers: read as NaN, examples not
        to score ("unscored": ``evaluate``), or ``()`` (training): the few that
        :meth:`classes` found among the numbers, whose rows are skipped (more stop
        it with an error).
    record_names : bool
        Reads' chunks carry each read's identifier (its header's first word;
        ``record:start`` and strand for reads cut by ``--read-length``), for
        ``predict`` to write beside its label.
    """

    def __init__(self, args, vectorizer, split, *, zero_based=None, n_features=None,
                 shuffle_buffer=0, keep_names=False, csv=None, interactions=(),
                 missing_labels=None, targets=None, stray_labels=(), record_names=False):
        self.args = args
        self.record_names = record_names
        self.missing_labels, self.targets = missing_labels, targets
        self.csv = csv
        self.interactions = list(interactions)
        self.keep_names = keep_names
        self.kind = input_kind(args)
        self.vectorizer = vectorizer
        self.split = split
        self.zero_based = zero_based
        self.n_features = n_features
        self.shuffle_buffer = shuffle_buffer
        self._shuffled = None
        #: 'classification' or 'regression', once :meth:`classes` has read the labels,
        #: and why a regression when ``--task`` left it to them (said once the
        #: estimator is known to have a regressor).
        self.task = self.task_note = None
        #: A regression's few CSV labels that are not numbers (:meth:`classes`): their
        #: rows are skipped.
        self.stray_labels = stray_labels
        #: Rows the label scan of :meth:`classes` counted (None when it counts none:
        #: reads, given classes, the embedded sample).
        self.scanned_rows = None

    # ----------------------------------------------------------- readers
    def _file_readers(self):
        """One reader per file (rows or reads), in the order given."""
        from ..io import FastaReader, FastqReader, SvmlightReader, VowpalWabbitReader
        args = self.args
        rows = self._rows_per_file_chunk()
        if self.kind == "svmlight":
            return [SvmlightReader(path, rows, zero_based=self.zero_based,
                                   n_features=self.n_features)
                    for path in args.svmlight]
        if self.kind == "vw":
            return [VowpalWabbitReader(path, rows, keep_names=self.keep_names,
                                       interactions=self.interactions)
                    for path in args.vw]
        if self.kind == "csv":
            # Training rows without a label are skipped (counted by classes()); a
            # regression's targets (training's, or evaluate's: skipped there) must be
            # numbers.
            missing = self.missing_labels or "skip"
            targets = self.task == "regression" if self.targets is None else self.targets
            return [_CsvReader(path, rows, self.csv, missing_labels=missing, targets=targets,
                               stray_labels=self.stray_labels)
                    for path in args.csv]
        reader_type = FastaReader if args.fasta else FastqReader
        readers = []
        coverages = file_coverages(args)
        for index, (path, label) in enumerate(labelled_files(args)):
            if label is None:  # labels from the headers, or none (predict)
                reader = reader_type(path, rows, label=None if args.label_pattern is None
                                     else _label_function(args.label_pattern))
            else:
                reader = reader_type({path: label}, rows)
            if args.read_length is not None:
                from ..io import ReadSampler
                amount = ({"coverage": coverages[index]} if coverages is not None
                          else {"n_reads": args.n_reads or 1000})
                reader = ReadSampler(reader, args.read_length, chunk_reads=rows,
                                     random_state=_file_seed(args.random_state, index),
                                     **amount)
            readers.append(reader)
        return readers

    def _file_sizes(self):
        """About how many rows each file holds, in proportion (bytes of text, bases of
        reads), for the shuffle buffer to mix the files to their ends; None where
        each gives as many (``--n-reads`` reads)."""
        args = self.args
        if self.kind in ("svmlight", "vw", "csv"):
            return [max(_text_bytes([path]), 1) for path in getattr(args, self.kind)]
        if args.read_length is not None and args.coverage is None:
            return None
        return [max(file_bases(path, bool(args.fastq)), 1) * coverage
                for (path, _), coverage in zip(labelled_files(args),
                                               file_coverages(args) or repeat(1))]

    def _rows_per_file_chunk(self):
        """Rows a file's reader hands over at a time: ``--chunk-rows``, or fewer when the
        shuffle buffer mixes many files, so that one chunk of each file (what the buffer
        takes in a round) stays within half the buffer, whatever the number of files."""
        rows = self.args.chunk_rows
        n_files = max(len(getattr(self.args, kind, None) or ())
                      for kind in ("svmlight", "vw", "csv", "fasta", "fastq"))
        if self.shuffle_buffer and n_files > 1:
            rows = max(1, min(rows, self.shuffle_buffer // (2 * n_files)))
        return rows

    def _stream(self):
        """Readers mixed by the shuffle buffer when asked, else one after another."""
        readers = self._file_readers()
        if self.shuffle_buffer:
            if self._shuffled is None:
                from ..io import ShuffledReader
                self._shuffled = ShuffledReader(readers, self.shuffle_buffer,
                                                chunk_rows=self.args.chunk_rows,
                                                random_state=self.args.random_state,
                                                sizes=self._file_sizes())
            return self._shuffled
        return (chunk for reader in readers for chunk in reader)

    # ------------------------------------------------------------ chunks
    def __iter__(self):
        """Yield ``Chunk``\\ s of CSR rows, labels and importance weights."""
        from ..io import Chunk
        from ..io._sampling import read_identifiers
        if self.kind == "sample":
            yield from self._sample_chunks()
            return
        if self.kind in ("svmlight", "vw", "csv"):
            yield from self._stream()
            return
        for reads in self._stream():
            labels = (np.full(len(reads.sequences), None, dtype=object) if reads.labels is None
                      else np.asarray(reads.labels))
            X = self.vectorizer.transform(reads.sequences)
            refuse_protein(reads, X, self.args)
            names = (read_identifiers(reads.names).tolist() if self.record_names and reads.names
                     else None)
            yield Chunk(X, labels, None, reads.first_line, row_names=names)

    def _sample_chunks(self):
        from ..datasets import load_dna_sample
        from ..io import Chunk
        args = self.args
        data = load_dna_sample(args.n_reads or 1000, SAMPLE_READ_LENGTH, split=self.split,
                               random_state=args.random_state)
        labels = np.asarray(data.target_names)[data.target]
        for start in range(0, len(data.reads), args.chunk_rows):
            stop = start + args.chunk_rows
            yield Chunk(self.vectorizer.transform(data.reads[start:stop]), labels[start:stop],
                        None, start + 1)

    # ----------------------------------------------------------- classes
    def classes(self):
        """Every class of the input, for the first ``partial_fit``; None for a
        regression (``self.task``, decided from ``--task`` and the labels)."""
        args = self.args
        if getattr(args, "classes", None):
            if getattr(args, "task", "auto") == "regression":
                raise CommandError("--classes names the classes of a classification, "
                                   "not of --task regression")
            return self._given_classes(args.classes)
        if self.kind == "sample":
            from ..datasets import load_dna_sample
            return self._check_classes(np.array(load_dna_sample(1).target_names))
        from ..io._label_order import LabelOrderCounter, combined
        if self.kind == "csv":
            from ..io._label_order import merge_label_counts
            labels, counts, orders, unlabelled = [], [], [], {}
            for path in args.csv:
                counter = LabelOrderCounter()
                for chunk in read_csv(path, header_spec(self.csv), usecols=[self.csv["label"]],
                                      dtype=str, chunksize=1_000_000):
                    column = chunk[self.csv["label"]]
                    missing = column.isna()
                    if missing.any():
                        unlabelled[path] = unlabelled.get(path, 0) + int(missing.sum())
                    counter.add(column[~missing].to_numpy())
                distinct, rows = counter.label_counts()
                labels.append(distinct.astype(str))
                counts.append(rows)
                orders.append(counter.order())
            classes = self._classes_or_targets(*merge_label_counts(labels, counts))
            if unlabelled:
                # A flight cancelled has no delay, a plane not yet registered no tail
                # number: a model learns from the others, as Vowpal Wabbit trains on its
                # labelled lines only.
                what = "target" if self.task == "regression" else "label"
                note(f"{sum(unlabelled.values()):,} rows without a "
                     f"{what} in column {self.csv['label']!r} are skipped")
            order = combined(orders)
            self.scanned_rows = order.n_rows
            self._mix_if_sorted(order)
            return classes
        if self.kind == "reads":
            files = labelled_files(args)
            labels = {label for _, label in files if label is not None}
            if any(label is None for _, label in files):
                labels |= self._header_labels([path for path, label in files if label is None])
            return self._check_classes(np.array(sorted(labels)))
        from ..io import scan_labels
        scans = [scan_labels(path, self.kind, return_order=True)
                 for path in (args.svmlight or args.vw)]
        labels = np.unique(np.concatenate([labels for labels, _ in scans]))
        if labels.size and np.isnan(labels[-1]):
            raise CommandError("the training file has examples without a label")
        order = combined(order for _, order in scans)
        self.scanned_rows = order.n_rows
        self._mix_if_sorted(order)
        return self._check_classes(labels)

    def _mix_if_sorted(self, order):
        """Shuffle training input whose neighbouring rows have alike labels, unless
        ``--shuffle-buffer`` was given: in file order a pass learns the last rows
        best. Labels in runs (a file sorted by label; 20 Newsgroups' TF-IDF rows
        sorted by group, one pass: 0.42 accuracy against 0.84 shuffled) and files in
        time order (the flights of 2013 in date order, January to September to
        train, October to December to test: a regression of the arrival delay, R^2
        0.63 in file order, 0.80 shuffled; late arrivals, ROC AUC 0.851 -> 0.873)
        alike. Up to ``FULL_SHUFFLE_ROWS`` rows and ``FULL_SHUFFLE_BYTES`` of text
        are shuffled whole (held in memory as rows: about as many bytes as their
        text), more rows ``DEFAULT_SHUFFLE_BUFFER`` at a time."""
        if getattr(self.args, "shuffle_buffer", 0) is not None or not order.neighbours_alike:
            return
        changes = f"{order.n_changes:,} change{'' if order.n_changes == 1 else 's'}"
        measured = (f"{changes} of label in {order.n_rows:,} rows, where a random order has "
                    f"about {order.expected_changes:,.0f}")
        if order.sorted_by_label:
            alike = f"the labels of the training input come in runs ({measured})"
        else:
            if not order.changes_alike:  # numbers that drift, each seldom repeated
                measured = (f"a correlation of {order.serial_correlation:.2f} between a "
                            "label and the next, where a random order has about 0")
            alike = (f"neighbouring rows of the training input have alike labels "
                     f"({measured}), as in a file in time order")
        alike += ": trained in that order, a model learns the last rows best"
        text_bytes = _text_bytes(self.args.svmlight or self.args.vw or self.args.csv)
        if order.n_rows <= FULL_SHUFFLE_ROWS and text_bytes <= FULL_SHUFFLE_BYTES:
            self.shuffle_buffer = max(self.shuffle_buffer, order.n_rows)
            note(f"{alike}, so fit shuffles all {order.n_rows:,} rows "
                 "in memory (--shuffle-buffer 0 trains in file order)")
            return
        self.shuffle_buffer = max(self.shuffle_buffer, DEFAULT_SHUFFLE_BUFFER)
        whole = (f"{order.n_rows:,} rows and about {text_bytes / 2**20:,.0f} MiB of text are "
                 f"more than fit shuffles whole ({FULL_SHUFFLE_ROWS:,} rows, "
                 f"{FULL_SHUFFLE_BYTES / 2**30:g} GiB), so it mixes them "
                 f"{self.shuffle_buffer:,} rows at a time")
        if not order.sorted_by_label:
            note(f"{alike}; {whole} (--shuffle-buffer 0 trains in "
                 "file order)")
            return
        print(f"sklearn-sketch: warning: {alike}; {whole}, and longer runs stay together: "
              "shuffle the file first (for example with shuf), or give a --shuffle-buffer as "
              "large as memory allows", file=sys.stderr)

    def _classes_or_targets(self, labels, counts):
        """:meth:`_check_classes` of a CSV label column's distinct ``labels`` (text,
        sorted; ``counts``: the rows of each), where a few words among numbers
        (``STRAY_LABELS``, ``STRAY_SHARE``) are left out of a regression: its reader
        skips their rows (``self.stray_labels``), and a note counts them."""
        numbers = _finite_numbers(labels)
        words = ~np.isfinite(numbers)
        task = getattr(self.args, "task", "auto")
        if (task == "classification" or not _stray_words(words, counts)
                or (task == "auto" and _quantity(numbers[~words]) is None)):
            # (the last: a word beside a few classes is one more)
            classes = self._check_classes(labels)
            if classes is not None and task == "auto":
                self._refuse_identifier(counts)
            return classes
        classes = self._check_classes(labels[~words])  # a regression
        self.stray_labels = labels[words].tolist()
        rows = int(counts[words].sum())
        note(f"{rows:,} of {int(counts.sum()):,} rows, whose label is "
             f"not a number ({', '.join(map(repr, self.stray_labels))}), "
             f"{'is' if rows == 1 else 'are'} skipped: the others are numbers, a "
             "regression's targets")
        return classes

    def _refuse_identifier(self, counts):
        """Refuse a classification whose label column is an identifier: most of its
        labelled rows (``counts``: the rows of each label) carry a label of their own
        (``IDENTIFIER_ROWS``, ``IDENTIFIER_SHARE``). An explicit ``--task
        classification`` trains them as classes."""
        rows, once = int(counts.sum()), int(np.count_nonzero(counts == 1))
        if rows >= IDENTIFIER_ROWS and once > IDENTIFIER_SHARE * rows:
            raise CommandError(
                f"column {self.csv['label']!r} is not classes to learn: {once:,} of its "
                f"{rows:,} labelled rows carry a label no other row has ({counts.size:,} "
                "distinct labels: an identifier, a name, a time), and a class seen once is never "
                "predicted right for a new row; --label names the column to predict "
                "(--task classification trains them as classes all the same)")

    def _header_labels(self, paths):
        from ..io import FastaReader, FastqReader
        reader_type = FastaReader if self.args.fasta else FastqReader
        label = _label_function(self.args.label_pattern)
        return {value for chunk in reader_type(paths, label=label)
                for value in np.unique(chunk.labels).tolist()}

    def _given_classes(self, text):
        classes = [c.strip() for c in text.split(",") if c.strip()]
        if self.kind in ("svmlight", "vw"):
            try:
                classes = [float(c) for c in classes]
            except ValueError:
                raise CommandError(f"--classes of {self.kind} input must be numbers, "
                                   f"got {text!r}") from None
        return self._check_classes(np.unique(classes), given=True)

    def _check_classes(self, classes, given=False):
        """``classes`` for a classification, None for a regression: ``--task``, or
        for 'auto' the labels (numbers not all whole, or more than
        ``MANY_NUMERIC_CLASSES`` whole numbers, are a quantity); sets ``self.task``."""
        task = "classification" if given else getattr(self.args, "task", "auto")
        values = _numeric_labels(classes)
        if task == "regression":
            if values is None:
                words = classes[~np.isfinite(_finite_numbers(classes.astype(str)))]
                raise CommandError(f"--task regression needs numeric labels, got "
                                   f"{', '.join(map(repr, words[:3].tolist()))}"
                                   f"{', ...' if words.size > 3 else ''}")
            self.task = "regression"
            return None
        whole = values is not None and np.array_equal(values, np.round(values))
        quantity = (None if values is None or task != "auto" or classes.size < 2
                    else _quantity(values))
        if quantity is not None:
            kind, why = quantity
            # A model per value would be a classifier per minute of delay (the flights:
            # 445 models, 1.4 GB) or fail on real numbers.
            self.task_note = (f"the labels are {classes.size:,} distinct {kind}, from "
                              f"{values.min():g} to {values.max():g}{why}: a quantity, so fit "
                              "trains a regressor (squared error; --task classification "
                              "trains a model per value)")
            self.task = "regression"
            return None
        self.task = "classification"
        if classes.size == 0:
            raise CommandError("no row of the training input has a label"
                               + (f" in column {self.csv['label']!r}" if self.csv else ""))
        if classes.size < 2:
            raise CommandError(f"need at least 2 classes to train, found {classes.tolist()}")
        if values is not None and not whole:
            # scikit-learn would say "Unknown label type: continuous" from inside fit.
            raise CommandError(
                f"the labels are real numbers ({classes.size:,} distinct, from "
                f"{values.min():g} to {values.max():g}): a classification needs classes; "
                "--task regression (or auto) trains a regressor")
        return classes


def _quantity(values):
    """How distinct numeric labels (``values``, float64) read as a quantity ("real
    numbers" or "whole numbers", and why not classes), or None when they are classes
    (see ``MANY_NUMERIC_CLASSES``)."""
    if not np.array_equal(values, np.round(values)):
        return "real numbers", ""
    if values.size > MANY_NUMERIC_CLASSES:
        return "whole numbers", ""
    if values.size <= FEW_NUMERIC_CLASSES:
        return None
    low, high = values.min(), values.max()
    if low in (0, 1) and values.size >= CODE_FILL * (high - low + 1):
        return None
    return "whole numbers", (", not the codes of classes (those run from 0 or 1 up, most of "
                             "the numbers in between present)")


def labels_drift(labels):
    """Whether the numbers among the first labels of a CSV file (text) follow one
    another as a series in time order does: neighbouring labels alike past chance
    (:attr:`~sklearn_sketch.io._label_order.LabelOrder.neighbours_alike`, by which
    ``fit`` shuffles such a file too).

    A regression on such a file reads its numeric columns as numbers only. Its new
    rows (the next quarters, the next years) lie past the range of the training
    rows, where an interval or an exact value says nothing: intervals held the
    model to its last level while the series went on (R's and statsmodels' series
    split in time order, the first 70% to train: US durable goods employment R^2
    -12.6, US real GDP 0.52, against ``Ridge``'s 0.43 and 0.94; as numbers 0.19 and
    0.96). On rows of such files held out at random, the intervals were worth up to
    0.2-0.5 of R^2 on a few (river's running log, a poll series); read as numbers
    those score about ``Ridge``'s.

    Examples
    --------
    >>> import numpy as np
    >>> series = np.cumsum(np.random.default_rng(0).normal(size=300)).astype(str)
    >>> labels_drift(series), labels_drift(np.random.default_rng(0).permutation(series))
    (True, False)
    """
    from ..io._label_order import label_order

    values = _finite_numbers(labels)
    values = values[np.isfinite(values)]
    return values.size > 2 and label_order([values]).neighbours_alike


def likely_regression(labels, task):
    """Whether the first labels of a CSV file (``labels``: text, none missing) make a
    regression, by the rules ``fit`` applies to every label (``--task``, else numbers
    that are a quantity, :func:`_quantity`, a few words among them left out: see
    ``InputStream._classes_or_targets``).

    Examples
    --------
    >>> import numpy as np
    >>> likely_regression(np.array(["1.5", "2"] * 40 + ["?"] * 5 + ["3.25"] * 900), "auto")
    True
    >>> likely_regression(np.array(["0", "1", "1"]), "auto"), likely_regression(
    ...     np.array(["0", "1"]), "regression")
    (False, True)
    """
    if task != "auto":
        return task == "regression"
    labels, counts = np.unique(labels, return_counts=True)
    numbers = _finite_numbers(labels)
    words = ~np.isfinite(numbers)
    if words.any() and not _stray_words(words, counts):
        return False
    distinct = np.unique(numbers[~words])
    return distinct.size >= 2 and _quantity(distinct) is not None


def _stray_words(words, counts):
    """Whether the distinct labels that ``words`` marks (``counts``: the rows of each
    distinct label) are a few words among numbers, left out of a regression: at
    most ``STRAY_LABELS`` of them, in at most ``STRAY_SHARE`` of the rows."""
    return bool(words.any() and not words.all() and words.sum() <= STRAY_LABELS
                and counts[words].sum() <= STRAY_SHARE * counts.sum())


def _finite_numbers(texts):
    """``texts`` (an array of str) as float64, NaN where one is not a finite number.

    pandas' ``to_numeric`` reads them where pandas is installed (tables need it);
    reads, svmlight and VW files need no pandas, and their labels (the few
    distinct ones) are read by ``float`` alone, which also takes ``1_000``:
    pandas does not, nor this.

    >>> _finite_numbers(np.array(["1.5", "1_000", "inf", "setosa", " 7"])).tolist()
    [1.5, nan, nan, nan, 7.0]
    """
    if find_spec("pandas") is None:
        distinct, inverse = np.unique(np.asarray(texts, dtype=str), return_inverse=True)
        numbers = np.array([_float_or_nan(text) for text in distinct.tolist()],
                           dtype=np.float64)[inverse.ravel()]
    else:
        import pandas as pd

        numbers = np.array(pd.to_numeric(pd.Series(texts, dtype=object), errors="coerce"),
                           dtype=np.float64)
    numbers[~np.isfinite(numbers)] = np.nan
    return numbers


def _float_or_nan(text):
    if "_" in text:
        return math.nan
    try:
        return float(text)
    except ValueError:
        return math.nan


def _text_bytes(paths):
    """Bytes of text in ``paths``: a compressed file counts ``COMPRESSED_TEXT_RATIO``
    times its size, a folder of documents its documents' sizes."""
    from ..io._readers import is_compressed
    from ._formats import document_files

    def size(path):
        if os.path.isdir(path):
            return sum(os.path.getsize(name) for _, name in document_files(path))
        return os.path.getsize(path) * (COMPRESSED_TEXT_RATIO if is_compressed(path) else 1)

    return sum(size(path) for path in paths)


#: Bases a byte of FASTA holds (line ends aside), plain and compressed (bacterial
#: genomes in gzip: 3.35-3.44), and of FASTQ (a read's bases, its quality string and
#: two header lines), plain and compressed.
FASTA_BASES, COMPRESSED_FASTA_BASES = 1.0, 3.4
FASTQ_BASES, COMPRESSED_FASTQ_BASES = 0.45, 1.4


def file_coverages(args):
    """The coverage each file's reads are cut at: ``--coverage``, or None (no reads
    cut at a coverage). With ``args.balanced_coverage`` (``fit``'s default amount),
    the classes train on as many bases each: a class's files are cut at the coverage
    times the most bases a class holds over its own, at most ``BALANCE_DEPTH`` times
    the coverage (12 genomes of four species, one
    of them E. coli's: held-out reads scored 0.904 with every file at 4x, E. coli's
    0.72, and 0.943 balanced, E. coli's 0.92; at 6x for every file, more bases in
    all than balanced, 0.919).
    """
    if args.read_length is None or args.coverage is None:
        return None
    files = labelled_files(args)
    if not getattr(args, "balanced_coverage", False):
        return [args.coverage] * len(files)
    bases = [file_bases(path, bool(args.fastq)) for path, _ in files]
    per_class = {}
    for (_, label), n in zip(files, bases):
        per_class[label] = per_class.get(label, 0.0) + n
    most = max(per_class.values())
    return [args.coverage * min(most / max(per_class[label], 1.0), BALANCE_DEPTH)
            for _, label in files]


#: How many times deeper than ``--coverage`` balancing cuts a small class at most (a
#: plasmid's class beside a hundred genomes would be cut at thousands of times its
#: length: the same reads again, and hours of training).
BALANCE_DEPTH = 4.0


def file_bases(path, fastq):
    """About how many bases a FASTA (or FASTQ) file holds, from its size."""
    from ..io._readers import is_compressed

    packed = is_compressed(path)
    per_byte = ((COMPRESSED_FASTQ_BASES if packed else FASTQ_BASES) if fastq
                else (COMPRESSED_FASTA_BASES if packed else FASTA_BASES))
    return os.path.getsize(path) * per_byte


def _numeric_labels(classes):
    """The labels as float64 when every one is a number (CSV labels are text), else None."""
    if classes.dtype.kind in "iuf":
        return classes.astype(np.float64)
    if classes.dtype.kind not in "US":
        return None
    # As the rows' labels are read (``_finite_numbers``): NumPy alone took "1_000".
    values = _finite_numbers(classes.astype(str))
    return values if np.isfinite(values).all() else None


def decide_svmlight_layout(args, model=None):
    """``(zero_based, n_features)`` of a run's svmlight input, from one read of the
    first ``TABLE_ROWS`` rows of each training file; ``(None, None)`` but for svmlight.

    The index base: the option, the model's (``model`` is a loaded model file:
    later commands read files as its training did), or, while training, auto:
    zero-based if those rows of one of the files hold an index 0, else one-based.

    The columns: the model's, or, while training, a table of
    ``SPARSE_TABLE_MAX_WIDTH`` columns when those rows of every file hold only
    indices below it (raw measurements: the estimators scale such a table's
    columns, as they would the matrix of ``load_svmlight_file``), else None, the
    whole key space (words, k-mers, hashed features: read as given). A later
    index past a table's width is a parse error that names its line (``fit``
    then trains again on the key space).
    """
    if input_kind(args) != "svmlight":
        return None, None
    given = None if args.zero_based == "auto" else args.zero_based == "0"
    if model is not None:
        zero_based = given if given is not None else model["input"].get("zero_based", True)
        return zero_based, int(model["estimator"].n_features_in_)
    from .._columns import SPARSE_TABLE_MAX_WIDTH
    from ..io import ParseError, SvmlightReader
    # Per file: whether it was read zero-based, and the largest index of its first
    # rows as written in the file.
    bases, largest = [], -1
    for path in args.svmlight:
        base = "auto" if given is None else given
        try:
            chunk, reader = _first_chunk(SvmlightReader(path, TABLE_ROWS, zero_based=base))
        except ParseError:
            if base != "auto":
                raise
            # An index 0 after a first block that the reader judged one-based: the
            # file is zero-based; a malformed line raises again.
            chunk, reader = _first_chunk(SvmlightReader(path, TABLE_ROWS, zero_based=True))
        if chunk is not None and chunk.X.nnz:
            largest = max(largest, int(chunk.X.indices.max()) + (not reader.zero_based_))
        bases.append(reader.zero_based_)
    zero_based = given if given is not None else any(bases)
    width = SPARSE_TABLE_MAX_WIDTH
    return zero_based, (width if largest - (not zero_based) < width else None)


def _first_chunk(reader):
    """``(first chunk or None, reader)``: the reader's attributes then describe it."""
    return next(iter(reader), None), reader


def shuffle_rows(args):
    """Rows of the training shuffle buffer (0: train in the files' order)."""
    if args.shuffle_buffer is not None:
        return args.shuffle_buffer
    kind = input_kind(args)
    if kind == "sample":
        return 0  # The sample's reads are shuffled already.
    if kind == "reads":
        files = labelled_files(args)
        several = len(files) > 1 or any(label is None for _, label in files)
    else:
        several = len(args.svmlight or args.vw or args.csv) > 1
    return DEFAULT_SHUFFLE_BUFFER if several else 0


class _CsvReader:
    """Chunks of a CSV file: its attributes and their crosses as named CSR rows, one pass
    per iteration."""

    def __init__(self, path, chunk_rows, csv, missing_labels="skip", targets=False,
                 stray_labels=()):
        from ..feature_extraction import FeatureCrosser

        self.path, self.chunk_rows, self.csv = path, chunk_rows, csv
        self.missing_labels, self.targets = missing_labels, targets
        self.stray_labels = (stray_labels if isinstance(stray_labels, str)
                             else list(stray_labels))
        header = [str(c) for c in read_csv(path, header_spec(csv), nrows=0).columns]
        unknown = [c for c in csv["columns"] if c not in header]
        if unknown:
            raise unknown_columns(unknown, path, header)
        # Without its label column (predict) a row is read for its attributes only.
        self.labelled = csv["label"] in header
        # A numeric column is read twice: its interval, under its own name (crossed as
        # the column), and its exact value, as the attribute "column==value"; and, with
        # a scale (models since the scales), as a number, the feature "column".
        self.bins = csv.get("bins", {})
        self.scales = csv.get("scales", {})
        self.means = csv.get("means", {})
        # Columns of free text are read as their words (._text), not crossed, as TF-IDF
        # values (models of before it: counts).
        self.text = csv.get("text", [])
        from ._text import InverseDocumentFrequency
        self.idf = {column: InverseDocumentFrequency(table, column)
                    for column, table in csv.get("idf", {}).items()}
        # A missing attribute value: the category csv["missing"] (None: no feature).
        self.missing = csv.get("missing")
        # A series' numeric columns are numbers only (labels_drift): no attribute.
        self.attributes = [c for c in csv["columns"] if c not in self.text
                           and c not in csv.get("numbers_only", [])]
        from .._raw_features import name_keys
        self.value_keys = (name_keys(list(self.scales)) if self.scales
                           else np.zeros(0, dtype=np.int64))
        self.values = {f"{column}=": column for column in self.bins
                       if column not in csv.get("distinct", [])}
        fields = [*self.attributes, *self.values]
        self.crosser = FeatureCrosser(crosses=[tuple(c) for c in csv["crosses"]],
                                      fields=fields).fit(_empty_frame(fields))

    def __iter__(self):
        from ..io import Chunk

        columns, label = self.csv["columns"], self.csv["label"]
        use = [*columns, label] if self.labelled else columns
        line = 2
        from .._intervals import intervals
        from ._bins import _numbers
        from ._text import text_rows

        for frame in read_csv(self.path, header_spec(self.csv), usecols=use, dtype=str,
                              chunksize=self.chunk_rows):
            first_line, line = line, line + len(frame)
            missing = (frame[label].isna().to_numpy() if self.labelled
                       else np.ones(len(frame), dtype=bool))
            if self.labelled and missing.any() and self.missing_labels == "skip":
                frame, missing = frame[~missing], missing[~missing]
            if self.labelled and self.targets and self.missing_labels == "skip":
                if self.stray_labels == "unscored":  # evaluate: not a number, not scored
                    frame = frame.assign(**{label: _finite_numbers(
                        frame[label].to_numpy(dtype=str))})
                elif self.stray_labels:  # fit: the few that classes() counted
                    keep = ~frame[label].isin(self.stray_labels).to_numpy()
                    frame, missing = frame[keep], missing[keep]
            if frame.empty:
                continue  # every row of the chunk skipped: no example to yield
            labels = (frame[label].to_numpy(dtype=str) if not missing.any()
                      else np.full(len(frame), np.nan))
            attributes = frame[self.attributes]
            # Each numeric column's text read as numbers once, for its intervals and
            # its value.
            numbers = {column: _numbers(frame[column])
                       for column in {**self.bins, **self.scales}}
            if self.bins:
                attributes = attributes.assign(
                    **{field: attributes[column] for field, column in self.values.items()},
                    **{column: intervals(numbers[column], edges)
                       for column, edges in self.bins.items()})
            if self.missing is not None:
                # Not the value fields: a number missing is one attribute, "column=NA".
                attributes = attributes.fillna({c: self.missing for c in self.attributes})
            X, names = self._attribute_rows(attributes, len(frame))
            if self.scales:
                values = np.column_stack([(numbers[column] - self.means.get(column, 0.0)) / scale
                                          for column, scale in self.scales.items()])
                # A value missing, not a number or 0 is no feature.
                present = np.isfinite(values) & (values != 0.0)
                indptr = np.concatenate([[0], np.cumsum(present.sum(axis=1))])
                keys = np.broadcast_to(self.value_keys, values.shape)[present]
                X, names = _with_features(X, names, indptr, keys, values[present],
                                          dict(zip(self.value_keys.tolist(), self.scales)))
            for column in self.text:
                indptr, keys, counts, words = text_rows(frame[column], column,
                                                        self.idf.get(column))
                X, names = _with_features(X, names, indptr, keys, counts, words)
            yield Chunk(X, labels, None, first_line, feature_names=names)

    def _attribute_rows(self, attributes, n_rows):
        """The crossed attributes of a chunk: ``(X, names)`` (no columns but text: rows
        without a feature yet)."""
        if self.crosser.fields_:
            rows = self.crosser.transform(attributes)
            return rows.X, rows.names
        import scipy.sparse as sp

        from .._raw_features import RAW_N_FEATURES
        return sp.csr_matrix((n_rows, RAW_N_FEATURES)), _ValueNames(None, {})


def _with_features(X, names, indptr, keys, data, named):
    """CSR ``X`` with more features in each row (``indptr``, ``keys``, ``data`` as a
    CSR's), and ``names`` (a lookup of ``X``'s keys) with theirs (``named``:
    ``{key: name}``)."""
    import scipy.sparse as sp

    more = np.diff(indptr)
    # Each row's earlier keys, then its new keys (no sparse sum: it sizes work by the
    # 2**63 - 1 columns).
    rows = np.concatenate([np.repeat(np.arange(X.shape[0]), np.diff(X.indptr)),
                           np.repeat(np.arange(X.shape[0]), more)])
    order = np.argsort(rows, kind="stable")
    merged = sp.csr_matrix((np.concatenate([X.data, data])[order],
                            np.concatenate([X.indices, keys])[order],
                            np.concatenate([[0], np.cumsum(np.diff(X.indptr) + more)])),
                           shape=X.shape)
    return merged, _ValueNames(names, named)


class _ValueNames:
    """The names of a CSV chunk's attribute and cross keys (``names``, None for none)
    and of the keys added to them (``values``: ``{key: name}``: numeric columns'
    values, text columns' words)."""

    def __init__(self, names, values):
        self.names, self.values = names, values

    def lookup(self, keys):
        found = {} if self.names is None else self.names.lookup(keys)
        for key in set(np.asarray(keys, dtype=np.int64).tolist()) & self.values.keys():
            found[key] = self.values[key]
        return found

    def mean_name_bytes(self, sample=4096):
        """The larger of the two kinds' mean name bytes (a budget's room for names is
        sized by it: an all-text chunk's words have no other names)."""
        inner = self.names.mean_name_bytes() if self.names is not None else 0.0
        added = [len(name.encode()) for name in islice(self.values.values(), sample)]
        return max(inner, float(np.mean(added))) if added else inner


def _empty_frame(columns):
    import pandas as pd
    return pd.DataFrame(columns=columns)


def refuse_protein(reads, X, args):
    """Raise when the reads without a k-mer (the empty rows of their k-mer rows
    ``X``) are protein sequences; nothing to read when every read has one.

    k-mers are read from the bases A, C, G and T (U as T): an amino-acid
    sequence has none, and a model of them would learn its intercept alone.
    The input's files (``args``) are named when the reads were mixed from several.
    """
    empty = np.flatnonzero(np.diff(X.indptr) == 0)
    if not empty.size:
        return
    text = b"".join(np.asarray(reads.sequences, dtype=object)[empty].tolist())
    letters = np.bincount(np.frombuffer(text, dtype=np.uint8), minlength=256)
    n_letters = letters[ord("A"):ord("Z") + 1].sum() + letters[ord("a"):ord("z") + 1].sum()
    n_protein = letters[list(PROTEIN_LETTERS)].sum()
    if n_letters and n_protein >= PROTEIN_SHARE * n_letters:
        where = (f"{reads.path} (records from line {reads.first_line} on)" if reads.path
                 else "the reads of " + ", ".join(path for path, _ in labelled_files(args)))
        raise CommandError(
            f"protein sequences, not DNA or RNA: {n_protein / n_letters:.0%} of the letters "
            f"in {where} are amino acids that no base code uses (E, F, I, L, P, Q); k-mers "
            "are read from the bases A, C, G and T (or U)")
