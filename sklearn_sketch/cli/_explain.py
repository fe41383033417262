"""The ``explain`` command: which attribute combinations make rows outliers, from a CSV file."""
import json
import sys
import time

from ._csv import read_csv
from ._errors import CommandError
from ._report import Progress, add_report_arguments, write_report

ESTIMATOR_CHOICES = ("awm", "wm", "mission", "bear")


def add_explain_arguments(parser, positive_int):
    """The options of ``sklearn-sketch explain``."""
    parser.add_argument("path", metavar="FILE.csv",
                        help="CSV file with a header (plain, .gz, .zip, .bz2 or .xz)")
    parser.add_argument("--outlier", required=True, metavar="RULE",
                        help="which rows are outliers: METRIC OP VALUE, e.g. "
                             "'dep_delay > q0.8' (above the 0.8 quantile, estimated by a KLL "
                             "sketch in a first pass over the metric column) or "
                             "'dep_delay > 30'")
    parser.add_argument("--columns", metavar="A,B,...",
                        help="attribute columns (default every column but the metric)")
    parser.add_argument("--max-order", type=int, choices=[1, 2, 3], default=2,
                        help="cross up to this many attributes")
    parser.add_argument("--estimator", choices=ESTIMATOR_CHOICES, default="awm",
                        help="the sketched classifier of outliers against inliers")
    parser.add_argument("--min-support", type=float, default=0.001,
                        help="leave out combinations in fewer than this share of the rows")
    parser.add_argument("--chunk-rows", type=positive_int, default=25_000,
                        help="rows read and crossed at a time (memory grows with it: on the "
                             "flights at order 2, 310 MB at 25,000, 590 MB at 100,000)")
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
    try:
        import pandas as pd
    except ImportError:
        raise CommandError("explain reads CSV files with pandas: "
                           "pip install 'sklearn-sketch[explain]'") from None
    from ..explain import OutlierExplainer, parse_rule

    metric = parse_rule(args.outlier)[0]
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
        from ._inputs import unknown_columns
        raise unknown_columns(unknown, args.path, names)
    columns = columns or [c for c in names if c != metric]
    rule = _fixed_rule(pd, args, metric)
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
    for chunk in read_csv(args.path, **read):
        explainer.partial_fit(chunk)
        seen = explainer.n_rows_ + explainer.n_skipped_
        progress.show(f"{seen:,} rows, {seen / (time.perf_counter() - start):,.0f} rows/s")
    if "crosser_" not in explainer.__dict__:
        raise CommandError(f"{args.path} holds no row: nothing to explain")
    progress.end()
    late = int((explainer.explanations_["rows"] < explainer.n_rows_).sum())
    if late and not args.one_pass:
        if not args.quiet:
            print(f"{late:,} combination{'s' if late > 1 else ''} entered the heap late: "
                  "counting the heap over every row, a second pass (--one-pass skips it)",
                  file=sys.stderr)
        explainer.recount(read_csv(args.path, **read))
    seconds = time.perf_counter() - start
    write_report(_report(explainer, args, metric, seconds), args.output)


def _fixed_rule(pd, args, metric):
    """The rule with a number for its threshold: a quantile is read off a KLL sketch
    of the metric column (as :func:`~sklearn_sketch.explain.quantile_of`), filled in
    a first pass that reads that column only."""
    from datasketches import kll_doubles_sketch
    from ..explain import KLL_K, parse_rule

    _, op, value, is_quantile = parse_rule(args.outlier)
    if not is_quantile:
        return args.outlier
    sketch = kll_doubles_sketch(KLL_K)
    for chunk in read_csv(args.path, usecols=[metric], chunksize=10 * args.chunk_rows):
        values = pd.to_numeric(chunk[metric], errors="coerce").to_numpy(dtype=float)
        if chunk[metric].notna().sum() != (~pd.isna(values)).sum():
            raise CommandError(f"the rule's metric {metric!r} must be numeric; "
                               f"{args.path} has text in that column")
        sketch.update(values[~pd.isna(values)])
    if sketch.is_empty():
        raise CommandError(f"{args.path} has no value of {metric!r} to set the quantile from")
    return f"{metric} {op} {float(sketch.get_quantile(value))!r}"


def _report(explainer, args, metric, seconds):
    table = explainer.get_explanations(args.top)
    n_features = len(explainer.crosser_.fields_) + len(explainer.crosser_.crosses_)
    summary = {
        "file": args.path, "rule": args.outlier, "threshold": explainer.threshold_,
        "rows": explainer.n_rows_, "outliers": explainer.n_outliers_,
        "skipped_missing_metric": explainer.n_skipped_, "max_order": args.max_order,
        "memory_bytes": explainer.memory_bytes_, "seconds": round(seconds, 3),
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


