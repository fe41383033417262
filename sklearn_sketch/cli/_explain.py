"""The ``explain`` command: which attribute combinations make rows outliers, from a CSV file."""
import json
import sys
import time
from importlib.util import find_spec

import numpy as np

from .._intervals import is_quantity, quantile_edges
from ._bins import _numbers, binned
from ._csv import read_csv
from ._errors import CommandError
from ._inputs import STRAY_LABELS, _stray_words, unknown_columns
from ._report import Progress, add_report_arguments, note, write_report

ESTIMATOR_CHOICES = ("awm", "wm", "mission", "bear")
#: Intervals an attribute column of quantities is read by (``--bins``).
DEFAULT_BINS = 10
#: Rows of the file's start that tell which attribute columns are read by intervals,
#: and which are identifiers.
BINS_HEAD_ROWS = 10_000
#: Values, all different, that make a column an identifier (left out by default).
IDENTIFIER_ROWS = 100


def add_explain_arguments(parser, positive_int):
    """The options of ``sklearn-sketch explain``."""
    parser.add_argument("path", metavar="FILE.csv",
                        help="CSV file with a header (plain, .gz, .zip, .bz2 or .xz)")
    parser.add_argument("--outlier", required=True, metavar="RULE",
                        help="which rows are outliers: METRIC OP VALUE, e.g. "
                             "'dep_delay > q0.8' (above the 0.8 quantile, from a first pass "
                             "over the metric column: exact up to 2**20 values, past them "
                             "estimated by a KLL sketch) or "
                             "'dep_delay > 30'; rows without a metric are skipped and "
                             "counted, and so are those of a few words among its numbers "
                             "('?': at most 3 distinct in 1%% of the rows)")
    parser.add_argument("--columns", metavar="A,B,...",
                        help="attribute columns (default every column but the metric and "
                             "identifiers, columns whose first 10,000 values all differ)")
    parser.add_argument("--max-order", type=int, choices=[1, 2, 3], default=2,
                        help="cross up to this many attributes")
    parser.add_argument("--estimator", choices=ESTIMATOR_CHOICES, default="awm",
                        help="the sketched classifier of outliers against inliers")
    parser.add_argument("--min-support", type=float, default=0.001,
                        help="leave out combinations in fewer than this share of the rows")
    parser.add_argument("--chunk-rows", type=positive_int, default=25_000,
                        help="rows read and crossed at a time (memory grows with it: on the "
                             "flights at order 2, 310 MB at 25,000, 590 MB at 100,000)")
    parser.add_argument("--bins", type=int, default=DEFAULT_BINS, metavar="N",
                        help="read an attribute column of quantities (numbers, more than "
                             "2N distinct in the first 10,000 rows, with fractions or at "
                             "least 3 negative: temperatures, prices, delays in minutes) as "
                             "N intervals between its quantiles, estimated in the first "
                             "pass, not as one category a value (0: every value a category; "
                             "whole numbers that are never negative, such as flight numbers "
                             "or hours, always are)")
    parser.add_argument("--one-pass", action="store_true",
                        help="keep the one pass's counts: a combination that entered the "
                             "heap late is counted over the rows since (its 'rows'); by "
                             "default a second pass counts the heap's combinations over "
                             "every row")
    add_report_arguments(parser, positive_int, budget="128KB", top=20, listed="combinations")


def _estimator(name, random_state):
    from .. import BearClassifier, MissionClassifier, WMSketchClassifier
    if name == "awm":
        return None  # OutlierExplainer's default, sized by the budget
    if name == "wm":
        return WMSketchClassifier(random_state=random_state)
    cls = MissionClassifier if name == "mission" else BearClassifier
    return cls(random_state=random_state)


def cmd_explain(args):
    if find_spec("pandas") is None:
        raise CommandError("explain reads CSV files with pandas: "
                           "pip install 'sklearn-sketch[explain]'")
    from ..explain import OutlierExplainer, parse_rule

    metric, _, _, is_quantile = parse_rule(args.outlier)
    columns = [c.strip() for c in args.columns.split(",")] if args.columns else None
    if columns is not None and (not all(columns) or len(set(columns)) != len(columns)):
        raise CommandError(f"--columns must name distinct columns, got {args.columns!r}")
    header = read_csv(args.path, nrows=0)
    names = [str(c) for c in header.columns]
    if metric not in names:
        raise CommandError(f"the rule's metric {metric!r} is not a column of {args.path}; "
                           f"it has {names}")
    unknown = [c for c in columns or [] if c not in names]
    if unknown:
        raise unknown_columns(unknown, args.path, names)
    if args.bins < 0 or args.bins == 1:
        raise CommandError(f"--bins must be 0 (every value a category) or at least 2, "
                           f"got {args.bins}")
    listed = columns is not None
    columns = columns or [c for c in names if c != metric]
    head = read_csv(args.path, usecols=columns, nrows=BINS_HEAD_ROWS,
                    dtype={c: str for c in columns})
    quantities = _quantity_columns(head, columns, args.bins) if args.bins else []
    if not listed:
        identifiers = _identifier_columns(head, [c for c in columns if c not in quantities])
        if identifiers and len(identifiers) == len(columns):
            raise CommandError(f"no attribute to explain by: besides {metric!r}, "
                               f"{args.path} holds only identifiers ({', '.join(identifiers)}: "
                               "a different value in each row); --columns names them")
        if identifiers:
            note(f"{', '.join(identifiers)}: a different value in each of the first "
                 f"{len(head):,} rows (identifiers: no combination of them explains more "
                 "than a row), left out (--columns names the columns to read)")
            columns = [c for c in columns if c not in identifiers]
    rule, edges = _first_pass(args, metric, quantities)
    if edges:
        shown = ", ".join(edges)
        note(f"{shown}: quantities (numbers with fractions or signs), read as {args.bins} "
             "intervals between their quantiles (--bins 0 reads each value as a category)")
    # Attributes are categories: read them as text, so a column is one type in every chunk.
    explainer = OutlierExplainer(rule, columns=columns, max_order=args.max_order,
                                 estimator=_estimator(args.estimator, args.random_state),
                                 memory_budget=args.memory_budget, min_support=args.min_support,
                                 top=args.top, chunk_rows=args.chunk_rows,
                                 random_state=args.random_state)
    start = time.perf_counter()
    read = dict(usecols=[*columns, metric], chunksize=args.chunk_rows,
                dtype={c: str for c in columns}, low_memory=False)
    progress = Progress(args.quiet)
    words = MetricWords(metric, args.path)
    for chunk in _read_binned(args.path, read, edges, words):
        explainer.partial_fit(chunk)
        seen = explainer.n_rows_ + explainer.n_skipped_
        progress.show(f"{seen:,} rows, {seen / (time.perf_counter() - start):,.0f} rows/s")
    if not is_quantile:  # else the first pass read the metric's words
        words.check()
    if "crosser_" not in explainer.__dict__:
        raise CommandError(f"{args.path} holds no row: nothing to explain")
    progress.end()
    if explainer.constant_fields_:
        shown = ", ".join(f"{field}={value}"
                          for field, value in explainer.constant_fields_.items())
        note(f"{shown}: one value in every row, left out of the explanations with its "
             "crosses (it tells no row from another)")
    late = int((explainer.explanations_["rows"] < explainer.n_rows_).sum())
    if late and not args.one_pass:
        if not args.quiet:
            print(f"{late:,} combination{'s' if late > 1 else ''} entered the heap late: "
                  "counting the heap over every row, a second pass (--one-pass skips it)",
                  file=sys.stderr)
        explainer.recount(_read_binned(args.path, read, edges, MetricWords(metric, args.path)))
    seconds = time.perf_counter() - start
    write_report(_report(explainer, args, metric, seconds, edges), args.output)


def _identifier_columns(head, columns):
    """The ``columns`` of ``head`` (the file's first ``BINS_HEAD_ROWS`` rows, as text)
    whose values are all different, over at least ``IDENTIFIER_ROWS`` of them: a
    plane's tail number in the table of planes, a row's id. Each value, and each
    cross with it, is one row: never an explanation, only work and noise in
    the sketch (and in a file of fewer than 1,000 rows, whose minimum support is
    below one row, a list of single outlier rows)."""
    return [column for column in columns
            if len(values := head[column].dropna()) >= IDENTIFIER_ROWS
            and values.nunique() == len(values)]


def _quantity_columns(head, columns, n_bins):
    """The attribute columns of ``head`` (the file's first ``BINS_HEAD_ROWS`` rows, as
    text) read by intervals: every value a number, and those a quantity
    (``_intervals.is_quantity``: more than ``2 * n_bins`` distinct ones, some not
    whole or at least three distinct ones negative).

    A value of a temperature or a price is a category of a few rows, and its
    crosses of fewer: an explanation names ``temp=33.8`` (72 rows of 26,115
    hours) where ``temp=[32, 35.1)`` says what the analyst asks. So is a delay
    in whole minutes: explaining the flights' departure delays by every other
    column, 70 of the 87 explanations named a single arrival delay
    (``arr_delay=81``, ``year=2013^arr_delay=76``, ...). Whole numbers never negative
    stay categories: flight numbers, hours and codes are labels (a code's -1
    for none is one negative value, not a sign).
    """
    chosen = []
    for column in columns:
        text = head[column].dropna()
        values = _numbers(text)
        if text.empty or not np.isfinite(values).all():
            continue
        if is_quantity(values, n_bins):
            chosen.append(column)
    return chosen


def _first_pass(args, metric, quantities):
    """The rule with a number for its threshold, and the interval edges of the
    ``quantities`` columns, from one pass over those columns alone (no pass when the
    rule's threshold is a number and no column is read by intervals).

    A quantile is read off a :class:`~sklearn_sketch.explain.QuantileStream` of the
    metric column (exact up to its 2**20 values, the same on every run; a KLL sketch
    past them); each of the ``quantities`` columns' edges are its ``1/bins``, ...,
    ``(bins - 1)/bins`` quantiles, from a stream of its values (a later value that is
    not a number is missing)."""
    from ..explain import QuantileStream, parse_rule

    _, op, value, is_quantile = parse_rule(args.outlier)
    if not is_quantile and not quantities:
        return args.outlier, {}
    read = [metric] if is_quantile else []
    read += [c for c in quantities if c not in read]
    sketches = {column: QuantileStream() for column in read}
    words = MetricWords(metric, args.path)
    for chunk in read_csv(args.path, usecols=read, chunksize=10 * args.chunk_rows,
                          dtype={c: str for c in quantities}):
        for column, sketch in sketches.items():
            values = (words.numbers(chunk[column]) if column == metric and is_quantile
                      else _numbers(chunk[column]))
            sketch.update(values[np.isfinite(values)])
    if is_quantile:
        words.check()
    rule = args.outlier
    if is_quantile:
        if sketches[metric].is_empty():
            raise CommandError(f"{args.path} has no value of {metric!r} to set the quantile "
                               "from")
        rule = f"{metric} {op} {float(sketches[metric].quantiles([value])[0])!r}"
    edges = {column: quantile_edges(sketches[column].quantiles, args.bins)
             for column in quantities if not sketches[column].is_empty()}
    return rule, edges


def _read_binned(path, read, edges, words):
    """The chunks of ``read_csv(path, **read)``, each column of ``edges`` given as the
    name of the interval of its number, as ``fit`` names them (:func:`._bins.binned`;
    missing where it has none), and the metric as numbers, its words missing
    (``words``, a :class:`MetricWords`, tallies them)."""
    for chunk in read_csv(path, **read):
        for column, cuts in edges.items():
            chunk[column] = binned(chunk[column], cuts)
        chunk[words.metric] = words.numbers(chunk[words.metric])
        yield chunk


class MetricWords:
    """The words among the numbers of a rule's metric column, tallied chunk by chunk.

    A few (at most ``STRAY_LABELS`` distinct ones, in at most ``STRAY_SHARE``
    of the rows with a value: ``?`` or ``n/a`` for unknown; the rule by which
    ``fit`` reads a label column of numbers, ``_inputs._stray_words``) are
    missing values: their rows are skipped and
    counted, with a note. More make the metric text: a one-line error. A
    delay column with a ``?`` in one row of 200 stopped ``explain`` with "must
    be numeric".
    """

    def __init__(self, metric, path):
        self.metric, self.path = metric, path
        self.counts = {}  # word: rows; at most STRAY_LABELS + 1 words are kept
        self.n_words = self.n_values = 0

    def numbers(self, column):
        """``column``'s values as float64, a word NaN (and tallied)."""
        values = _numbers(column)
        present = column.notna().to_numpy()
        words = present & np.isnan(values)
        self.n_values += int(present.sum())
        if words.any():
            self.n_words += int(words.sum())
            for word, count in column[words].astype(str).value_counts().items():
                if word in self.counts or len(self.counts) <= STRAY_LABELS:
                    self.counts[word] = self.counts.get(word, 0) + int(count)
            if len(self.counts) > STRAY_LABELS:
                raise self._error()
        return values

    def check(self):
        """After a pass over the column: the error of more than a few words, else
        the note of those read as missing."""
        if not self.n_words:
            return
        # The words, and the numbers as one more distinct value (fit's rule for labels).
        words = np.arange(len(self.counts) + 1) < len(self.counts)
        counts = np.array([*self.counts.values(), self.n_values - self.n_words])
        if not _stray_words(words, counts):
            raise self._error()
        shown = ", ".join(f"{word!r} ({count:,} rows)" for word, count in self.counts.items())
        note(f"{shown}: not numbers among the {self.metric} values, read as missing (their "
             "rows are skipped and counted)")

    def _error(self):
        shown = ", ".join(repr(word) for word in list(self.counts)[:STRAY_LABELS])
        return CommandError(f"the rule's metric {self.metric!r} must be numeric; {self.path} "
                            f"has text in that column: {shown} in {self.n_words:,} of the "
                            f"{self.n_values:,} values read")


def _report(explainer, args, metric, seconds, edges):
    table = explainer.get_explanations(args.top)
    n_features = len(explainer.crosser_.fields_) + len(explainer.crosser_.crosses_)
    summary = {
        "file": args.path, "rule": args.outlier, "threshold": explainer.threshold_,
        "rows": explainer.n_rows_, "outliers": explainer.n_outliers_,
        "skipped_missing_metric": explainer.n_skipped_, "max_order": args.max_order,
        "memory_bytes": explainer.memory_bytes_, "seconds": round(seconds, 3),
        "binned_columns": {column: cuts.tolist() for column, cuts in edges.items()},
        "constant_columns": dict(explainer.constant_fields_ or {}),
        "rows_per_second": round(explainer.n_rows_ / max(seconds, 1e-9)),
        "attribute_updates_per_second": round(explainer.n_rows_ * n_features
                                              / max(seconds, 1e-9)),
    }
    if args.format == "json":
        summary["explanations"] = [
            {"feature": f, "order": int(o), "weight": float(w), "relative_risk": float(r),
             "support": float(s), "outliers": float(n), "rows": float(c)}
            for f, o, w, r, s, n, c in zip(table["feature"], table["order"], table["weight"],
                                           table["relative_risk"], table["support"],
                                           table["outliers"], table["rows"])]
        return json.dumps(summary, indent=1) + "\n"
    lines = [f"{summary['rows']:,} rows ({summary['skipped_missing_metric']:,} skipped: no "
             f"{metric}), {summary['outliers']:,} outliers "
             f"({args.outlier}: threshold {summary['threshold']:g}); "
             f"{summary['memory_bytes']:,} bytes; {seconds:.1f} s",
             "relative_risk\tsupport\toutliers\trows\tweight\tfeature"]
    lines += [f"{r:.3f}\t{s:.0f}\t{n:.0f}\t{c:.0f}\t{w:.4f}\t{f}"
              for f, w, r, s, n, c in zip(table["feature"], table["weight"],
                                          table["relative_risk"], table["support"],
                                          table["outliers"], table["rows"])]
    return "\n".join(lines) + "\n"


