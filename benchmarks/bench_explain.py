"""Explaining delayed flights: the sketched explainer beside heavy hitters, exact counts and LR.

The WM-Sketch paper's section 8.1 on every flight out of New York in 2013
(``../shared/data/flights``: 336,776 rows, joined with ``planes.csv`` on the
tail number and ``weather.csv`` on origin and hour). Outliers: the top 20% by
``dep_delay`` (``dep_delay > q0.8``; rows without a delay are skipped).
Attributes: carrier, origin, dest, tailnum, flight, month, weekday, hour,
plane manufacturer, model and decade, and bucketed wind, visibility and
precipitation (order 3: the eight flight columns only). In one run, at ``--budget`` (128 KB) real bytes each:

* ``OutlierExplainer`` (AWM-Sketch, 1-sparse updates, names and counts inside
  the budget) at orders 1 and 2;
* ``HeavyHittersExplainer``, heavy hitters the MacroBase way: Apache
  DataSketches' frequent-items sketch (Space-Saving family) over the outlier
  rows and over all rows, in the same bytes with its names, ranked by the
  relative risk of its two counts;
* ``ExactExplainer``: every combination counted (its bytes reported);
* scikit-learn's ``LogisticRegression`` on the same 1-sparse examples, one-hot
  (order 1: the paper's unconstrained classifier).

It prints: the Pearson correlation between the weights of the retrieved
attributes and their exact log relative risk (order 1, Haldane-smoothed
risks); the recall of the combinations with exact relative risk >= 2 and
support >= 50 among the retrieved ones (order 2), and the mean exact
|log relative risk| of what each method retrieves; memory; and the command
line's ``explain`` at order 2 over the whole file (with its second pass, and
``--one-pass``) beside an exact pandas group-by over all pairs of the same
columns, in this process and as a script (all reading the file; the best of
three runs each).

    python benchmarks/bench_explain.py [--budget 128KB] [--json out.json]
"""
import argparse
import json
import math
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _provenance import provenance  # noqa: E402
from dna_task import resolve_data_dir  # noqa: E402

from sklearn_sketch.explain import (  # noqa: E402
    ExactExplainer,
    HeavyHittersExplainer,
    OutlierExplainer,
)
from sklearn_sketch.weight_median import parse_memory_budget  # noqa: E402

RULE = "dep_delay > q0.8"
FLIGHT_COLUMNS = ["carrier", "origin", "dest", "tailnum", "flight", "month", "weekday", "hour"]
PLANE_COLUMNS = ["manufacturer", "model", "decade"]
WEATHER_COLUMNS = ["wind", "visibility", "precipitation"]
ATTRIBUTES = FLIGHT_COLUMNS + PLANE_COLUMNS + WEATHER_COLUMNS
#: The combinations a good explanation finds: exact relative risk and support at least these.
RISK, SUPPORT = 2.0, 50


def load_flights(folder):
    """Flights joined with their planes and hour's weather; attributes as text."""
    flights = pd.read_csv(folder / "flights.csv.zip")
    flights["weekday"] = pd.to_datetime(flights[["year", "month", "day"]]).dt.day_of_week
    planes = pd.read_csv(folder / "planes.csv")[["tailnum", "year", "manufacturer", "model"]]
    planes["decade"] = (planes.pop("year") // 10 * 10).astype("Int64")
    weather = pd.read_csv(folder / "weather.csv")
    weather["wind"] = pd.cut(weather.wind_speed, [-1, 5, 10, 15, 20, 1e9],
                             labels=["0-5", "5-10", "10-15", "15-20", "20+"])
    weather["visibility"] = pd.cut(weather.visib, [-1, 1, 5, 9.99, 1e9],
                                   labels=["<1", "1-5", "5-10", "10"])
    weather["precipitation"] = np.where(weather.precip > 0, "yes", "no")
    weather = weather.drop_duplicates(["origin", "time_hour"])
    frame = flights.merge(planes, on="tailnum", how="left").merge(
        weather[["origin", "time_hour", *WEATHER_COLUMNS]], on=["origin", "time_hour"],
        how="left")
    for column in ATTRIBUTES:
        frame[column] = frame[column].astype("string")
    return frame[[*ATTRIBUTES, "dep_delay"]]


def smoothed_log_risk(outliers, support, n_outliers, n_rows):
    """Log relative risk with half a count added (finite when a cell is empty)."""
    inside = (outliers + 0.5) / (support + 1.0)
    outside = (n_outliers - outliers + 0.5) / (n_rows - support + 1.0)
    return np.log(inside / outside)


def exact_table(frame, order, columns):
    started = time.perf_counter()
    exact = ExactExplainer(RULE, columns=columns, max_order=order, min_support=0.0)
    exact.fit(frame)
    table = exact.explanations_.set_index("feature")
    table["log_risk"] = smoothed_log_risk(table.outliers, table.support, exact.n_outliers_,
                                          exact.n_rows_)
    return exact, table, time.perf_counter() - started


def sketched(frame, order, budget, columns):
    started = time.perf_counter()
    explainer = OutlierExplainer(RULE, columns=columns, max_order=order,
                                 memory_budget=budget, min_support=0.0, random_state=0)
    explainer.fit(frame)
    seconds = time.perf_counter() - started
    selected = explainer.estimator_.selected_features_
    names = np.array(["" if n is None else n for n in selected.names.tolist()], dtype=object)
    return explainer, names, selected.weights[:, 0], seconds


def heavy_hitters(frame, order, budget, columns):
    """``HeavyHittersExplainer``: frequent items of the outliers and of all rows."""
    started = time.perf_counter()
    baseline = HeavyHittersExplainer(RULE, columns=columns, max_order=order,
                                     memory_budget=budget, min_support=0.0).fit(frame)
    table = baseline.explanations_
    return (baseline, table.feature.to_numpy(), table.weight.to_numpy(),
            time.perf_counter() - started)


def names_for(keys, frame, crosser):
    """Names of keys, looked up over the whole frame (for the heavy hitters' keys)."""
    names = {}
    for start in range(0, len(frame), 100_000):
        names.update(crosser.transform(frame.iloc[start:start + 100_000]).names.lookup(keys))
    return np.array([names.get(k, "") for k in keys.tolist()], dtype=object)


def logistic_regression_correlation(frame, exact, table):
    """Pearson r of LogisticRegression's weights (1-sparse one-hot, order 1) with log risk."""
    import scipy.sparse as sp
    from sklearn.linear_model import LogisticRegression

    rows = exact.crosser_.transform(frame[frame.dep_delay.notna()])
    labels = (frame.dep_delay[frame.dep_delay.notna()] > exact.threshold_).to_numpy()
    keys, columns = np.unique(rows.X.indices, return_inverse=True)
    n = rows.X.nnz
    X = sp.csr_matrix((np.ones(n), columns, np.arange(n + 1)), shape=(n, keys.size))
    y = np.repeat(labels, np.diff(rows.X.indptr))
    started = time.perf_counter()
    model = LogisticRegression(C=1e4, max_iter=500).fit(X, y)
    seconds = time.perf_counter() - started
    names = names_for(keys, frame, exact.crosser_)
    weights = model.coef_[0]
    top = np.argsort(-np.abs(weights))[:2048]
    known = np.isin(names[top], table.index)
    r = np.corrcoef(weights[top][known], table.loc[names[top][known], "log_risk"])[0, 1]
    return float(r), seconds, model.coef_.nbytes


def correlation(names, weights, table):
    known = np.isin(names, table.index)
    return float(np.corrcoef(weights[known], table.loc[names[known], "log_risk"])[0, 1])


def retrieval(names, table):
    """Recall of the risky combinations, and the mean exact |log risk| of what was retrieved."""
    risky = table.index[(table.relative_risk >= RISK) & (table.support >= SUPPORT)
                        & (table.order >= 2)]
    retrieved = set(names.tolist()) - {""}
    known = [n for n in retrieved if n in table.index]
    return (len(retrieved & set(risky)) / max(len(risky), 1),
            float(np.mean(np.abs(table.loc[known, "log_risk"]))) if known else 0.0, len(risky))


#: The exact peer: pandas group-by over every attribute and pair, run in this process
#: (pandas imported) and as a script (imports included, as the command line is timed).
PANDAS_GROUP_BY = """
import sys
from itertools import combinations

import pandas as pd


def group_by_every_pair(path, columns):
    frame = pd.read_csv(path, usecols=[*columns, "dep_delay"])
    frame = frame[frame.dep_delay.notna()]
    outlier = frame.dep_delay > frame.dep_delay.quantile(0.8)
    groups = 0
    for order in (1, 2):
        for combo in combinations(columns, order):
            groups += len(outlier.groupby([frame[c] for c in combo]).agg(["sum", "count"]))
    return groups


if __name__ == "__main__":
    print(group_by_every_pair(sys.argv[1], sys.argv[2].split(",")))
"""


#: What each side imports before it reads a row: the command line's modules (scikit-learn
#: among them, which imports SciPy's statistics) and the script's pandas.
IMPORTS = {"imports": "import pandas, sklearn_sketch.cli, sklearn_sketch.explain",
           "pandas import": "import pandas"}


def time_command_line(folder, budget_text, repeats=3):
    """Seconds of the command line (two passes by default, and ``--one-pass``), of
    the pandas group-by in this process and as a script, on the same file, and of
    each side's imports alone (``IMPORTS``): the best of ``repeats`` runs each (one
    run varied by 0.5 s on an idle machine)."""
    columns = [c for c in FLIGHT_COLUMNS if c != "weekday"] + ["day"]
    path = str(folder / "flights.csv.zip")
    command = [sys.executable, "-m", "sklearn_sketch", "explain", path, "--outlier", RULE,
               "--columns", ",".join(columns), "--max-order", "2", "--memory-budget",
               budget_text, "--quiet", "--format", "json"]
    namespace = {"__name__": "pandas_group_by"}
    exec(PANDAS_GROUP_BY, namespace)
    seconds, reports = {}, {}
    for _ in range(repeats):
        for run, option in (("two passes", []), ("one pass", ["--one-pass"])):
            started = time.perf_counter()
            out = subprocess.run(command + option, check=True, capture_output=True, text=True)
            seconds[run] = min(seconds.get(run, math.inf), time.perf_counter() - started)
            reports[run] = json.loads(out.stdout)
        started = time.perf_counter()
        groups = namespace["group_by_every_pair"](path, columns)
        seconds["pandas"] = min(seconds.get("pandas", math.inf), time.perf_counter() - started)
        started = time.perf_counter()
        subprocess.run([sys.executable, "-c", PANDAS_GROUP_BY, path, ",".join(columns)],
                       check=True, capture_output=True)
        seconds["pandas script"] = min(seconds.get("pandas script", math.inf),
                                       time.perf_counter() - started)
        for run, code in IMPORTS.items():
            started = time.perf_counter()
            subprocess.run([sys.executable, "-c", code], check=True)
            seconds[run] = min(seconds.get(run, math.inf), time.perf_counter() - started)
    return reports, seconds, groups, len(columns)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--budget", default="128KB")
    parser.add_argument("--data", help="the flights folder (default: found beside the genomes)")
    parser.add_argument("--json", help="write every number to this file")
    args = parser.parse_args(argv)
    budget = parse_memory_budget(args.budget)
    folder = Path(args.data) if args.data else resolve_data_dir().parent / "flights"
    frame = load_flights(folder)
    print(f"{len(frame):,} flights, {frame.dep_delay.isna().sum():,} without a delay; "
          f"{len(ATTRIBUTES)} attributes; rule {RULE}; budget {args.budget} "
          f"({budget:,} bytes) each\n")
    rows, numbers = [], {}
    # Order 3 over the flights' own columns: over all 14, tens of millions of triples.
    for order, columns in ((1, ATTRIBUTES), (2, ATTRIBUTES), (3, FLIGHT_COLUMNS)):
        exact, table, exact_seconds = exact_table(frame, order, columns)
        explainer, names, weights, seconds = sketched(frame, order, args.budget, columns)
        hh, hh_names, hh_log_risk, hh_seconds = heavy_hitters(frame, order, budget, columns)
        hh_bytes = hh.memory_bytes_
        r_ours = correlation(names, weights, table)
        r_hh = correlation(hh_names, hh_log_risk, table)
        # Retrieved: what each method ranks as raising the risk.
        recall, mean_risk, n_risky = retrieval(names[weights > 0], table)
        hh_recall, hh_mean_risk, _ = retrieval(hh_names[hh_log_risk > 0], table)
        numbers[order] = {"exact_bytes": exact.memory_bytes_, "exact_keys": len(table),
                          "n_risky": n_risky}
        rows.append([order, "OutlierExplainer (AWM)", explainer.memory_bytes_,
                     names.size, round(r_ours, 3), round(recall, 3), round(mean_risk, 3),
                     round(seconds, 1)])
        rows.append([order, "heavy hitters (DataSketches)", hh_bytes, hh_names.size,
                     round(r_hh, 3), round(hh_recall, 3), round(hh_mean_risk, 3),
                     round(hh_seconds, 1)])
        rows.append([order, "exact counts", exact.memory_bytes_, len(table), None, 1.0,
                     None, round(exact_seconds, 1)])
        if order == 1:
            r_lr, lr_seconds, lr_bytes = logistic_regression_correlation(frame, exact, table)
            rows.append([order, "LogisticRegression, 1-sparse one-hot", lr_bytes,
                         min(2048, len(table)), round(r_lr, 3), None, None, round(lr_seconds, 1)])
            numbers["r_lr"] = r_lr
        numbers[order].update(r_ours=r_ours, recall=recall, hh_recall=hh_recall,
                              mean_risk=mean_risk, hh_mean_risk=hh_mean_risk)
    columns = ["order", "method", "bytes", "retrieved", "Pearson r (weight, log RR)",
               f"recall RR>={RISK:g}, support>={SUPPORT}", "mean |log RR| retrieved", "seconds"]
    print("  ".join(columns))
    for row in rows:
        print("  ".join("-" if v is None else f"{v:,}" if isinstance(v, int) else str(v)
                        for v in row))
    reports, seconds, groups, n_columns = time_command_line(folder, args.budget)
    n_features = n_columns + n_columns * (n_columns - 1) // 2
    n_rows = reports["two passes"]["rows"]
    speed = [[f"sklearn-sketch explain (order 2, {run})", round(seconds[run], 2),
              round(n_rows / seconds[run]), round(n_rows * n_features / seconds[run]),
              reports[run]["memory_bytes"]] for run in ("two passes", "one pass")]
    speed += [["pandas group-by, every pair (exact), in-process", round(seconds["pandas"], 2),
               round(n_rows / seconds["pandas"]), None, None],
              ["the same pandas group-by as a script (imports included)",
               round(seconds["pandas script"], 2), round(n_rows / seconds["pandas script"]),
               None, None],
              ["the command line's imports alone (pandas, scikit-learn, the explainer)",
               round(seconds["imports"], 2), None, None, None],
              ["the script's import alone (pandas)", round(seconds["pandas import"], 2), None,
               None, None]]
    print(f"\ncommand line vs pandas over {n_columns} columns ({groups:,} exact groups):")
    for row in speed:
        print("  ".join("-" if v is None else str(v) for v in row))
    summary = [
        f"order 1: Pearson r {numbers[1]['r_ours']:.3f} (target >= 0.88, and within 0.03 of "
        f"LogisticRegression's {numbers['r_lr']:.3f})",
        f"order 2: recall {numbers[2]['recall']:.3f} against heavy hitters' "
        f"{numbers[2]['hh_recall']:.3f} (target 2x) of {numbers[2]['n_risky']} combinations; "
        f"mean |log RR| {numbers[2]['mean_risk']:.3f} against {numbers[2]['hh_mean_risk']:.3f}",
        f"exact counting table: {numbers[1]['exact_bytes']:,} bytes at order 1, "
        f"{numbers[2]['exact_bytes']:,} at order 2 ({numbers[2]['exact_keys']:,} keys), "
        f"{numbers[3]['exact_bytes']:,} at order 3 over the 8 flight columns "
        f"({numbers[3]['exact_keys']:,} keys)",
        f"order 3 (8 flight columns): r {numbers[3]['r_ours']:.3f}, recall of pairs and "
        f"triples {numbers[3]['recall']:.3f} against heavy hitters' "
        f"{numbers[3]['hh_recall']:.3f}",
        f"command line {seconds['two passes']:.1f} s ({seconds['one pass']:.1f} s in one "
        f"pass) against pandas {seconds['pandas']:.1f} s in-process, "
        f"{seconds['pandas script']:.1f} s as a script; importing the command line's "
        f"modules alone takes {seconds['imports']:.1f} s, pandas alone "
        f"{seconds['pandas import']:.1f} s",
    ]
    print("\n" + "\n".join(summary))
    if args.json:
        Path(args.json).write_text(json.dumps({
            "provenance": provenance(),
            "summary": summary,
            "tables": [
                {"title": f"Explaining flights delayed past their 0.8 quantile, "
                          f"{args.budget} each", "columns": columns, "rows": rows},
                {"title": "The command line against an exact pandas group-by, order 2 (best of "
                          "3 runs each)",
                 "columns": ["run", "seconds", "rows/s", "attribute updates/s", "bytes"],
                 "rows": speed},
            ],
        }, indent=1))


if __name__ == "__main__":
    main()
