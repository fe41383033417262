"""Raw dense columns of different ranges: default accuracy, read as given and standardized.

With ``learning_rate='normalized'`` (the default) every estimator here standardizes
dense input column by column (the first data's mean and standard deviation), as
Vowpal Wabbit's default updates normalize each feature by its range. This script
measures what that does for a user who changes nothing, on raw numeric tables:

- scikit-learn's bundled breast cancer, wine, iris and digits (5-fold stratified CV);
- the New York flights of 2013 joined with the hourly weather at their origin
  (``../shared/data/flights``): is a departure delayed by more than 15 minutes,
  from its schedule, distance and weather (14 columns; little of it is linear in
  them: the majority class scores 0.785), and is an arrival, given also the
  departure delay and air time (16 columns; 80/20 splits);
- the weather alone: does an hour have precipitation, from temperature, dew point,
  humidity, wind, pressure and visibility (80/20 split).

Each estimator of this package runs with default parameters on the same matrix
twice: read as given (a sparse matrix with the column scaling of
``sklearn_sketch._columns`` switched off, as every input was read before it) and
dense (standardized by the estimator).
Beside them: ``SGDClassifier()`` on the raw columns and after ``StandardScaler``,
``LogisticRegression`` after ``StandardScaler`` (an unconstrained reference), and
Vowpal Wabbit with its default (adaptive, normalized) updates for 5 passes on the
binary tasks, when installed.

Sparse tables (at most 1,000 columns, mostly zeros: an svmlight file of raw
measurements and one-hot fields) are scaled by the root mean square of each
column's entries, keeping the zeros. A second table measures that
on the flights and on the weather with their fields one-hot (carrier, origin,
destination, month, hour) beside their raw numeric columns: read as given, scaled,
and beside ``SGDClassifier()`` raw and after ``MaxAbsScaler``,
``LogisticRegression`` after ``MaxAbsScaler`` and Vowpal Wabbit.

Run::

    python benchmarks/bench_dense_columns.py [--json out.json] [--data ../shared/data]
"""
import argparse
import contextlib
import json
import math
import subprocess
import sys
import tempfile
import time
import warnings
from importlib.util import find_spec
from pathlib import Path

import numpy as np
import pandas as pd
import scipy.sparse as sp
from sklearn.base import clone
from sklearn.datasets import load_breast_cancer, load_digits, load_iris, load_wine
from sklearn.exceptions import ConvergenceWarning
from sklearn.linear_model import LogisticRegression, SGDClassifier
from sklearn.model_selection import StratifiedKFold, train_test_split
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import MaxAbsScaler, OneHotEncoder, StandardScaler

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _provenance import provenance  # noqa: E402
from dna_task import resolve_data_dir  # noqa: E402

from sklearn_sketch import _columns  # noqa: E402
from sklearn_sketch import (  # noqa: E402
    AWMSketchClassifier,
    BearClassifier,
    FeatureHashingClassifier,
    MissionClassifier,
    WMSketchClassifier,
)

ESTIMATORS = {
    "FeatureHashing": FeatureHashingClassifier,
    "WM-Sketch": WMSketchClassifier,
    "AWM-Sketch": AWMSketchClassifier,
    "MISSION": MissionClassifier,
    "BEAR": BearClassifier,
}
FLIGHT_COLUMNS = ["month", "day", "sched_dep_time", "sched_arr_time", "distance", "hour"]
WEATHER_COLUMNS = ["temp", "dewp", "humid", "wind_dir", "wind_speed", "precip", "pressure",
                   "visib"]


def toy_tasks():
    """scikit-learn's bundled tables, raw."""
    for name, loader in (("breast cancer", load_breast_cancer), ("wine", load_wine),
                         ("iris", load_iris), ("digits", load_digits)):
        X, y = loader(return_X_y=True)
        yield name, X.astype(np.float64), y


def _filled(frame, columns):
    """The columns as float64, a missing value replaced by its column's median."""
    values = frame[columns].astype(np.float64)
    return values.fillna(values.median()).to_numpy()


def flight_tasks(folder):
    """Departure delayed > 15 minutes, and arrival delayed > 15 minutes given the
    departure delay and air time (flights joined with the weather at their origin);
    precipitation in an hour (weather alone)."""
    weather = pd.read_csv(folder / "weather.csv")
    flights = pd.read_csv(folder / "flights.csv.zip", usecols=[
        *FLIGHT_COLUMNS, "dep_delay", "arr_delay", "air_time", "origin", "time_hour"])
    flights = flights.merge(weather[["origin", "time_hour", *WEATHER_COLUMNS]],
                            on=["origin", "time_hour"], how="left")
    departed = flights[flights.dep_delay.notna()]
    X = _filled(departed, FLIGHT_COLUMNS + WEATHER_COLUMNS)
    yield "flights: departure > 15 min late", X, (departed.dep_delay > 15).to_numpy().astype(int)
    arrived = flights[flights.arr_delay.notna()]
    X = _filled(arrived, FLIGHT_COLUMNS + ["dep_delay", "air_time"] + WEATHER_COLUMNS)
    yield "flights: arrival > 15 min late", X, (arrived.arr_delay > 15).to_numpy().astype(int)
    columns = [c for c in WEATHER_COLUMNS if c != "precip"] + ["month", "hour"]
    rain = weather[weather.precip.notna()]
    yield "weather: precipitation", _filled(rain, columns), (rain.precip > 0).to_numpy().astype(int)


def sparse_flight_tasks(folder):
    """The arrival and precipitation tasks as sparse tables: fields one-hot beside the
    raw numeric columns (mostly zeros: an svmlight file of such rows)."""
    weather = pd.read_csv(folder / "weather.csv")
    flights = pd.read_csv(folder / "flights.csv.zip", usecols=[
        *FLIGHT_COLUMNS, "dep_delay", "arr_delay", "air_time", "origin", "dest", "carrier",
        "time_hour"])
    flights = flights.merge(weather[["origin", "time_hour", *WEATHER_COLUMNS]],
                            on=["origin", "time_hour"], how="left")
    arrived = flights[flights.arr_delay.notna()]
    numbers = ["distance", "sched_dep_time", "sched_arr_time", "dep_delay", "air_time",
               *WEATHER_COLUMNS]
    fields = ["carrier", "origin", "dest", "month", "hour"]
    yield ("flights (sparse, fields one-hot): arrival > 15 min late",
           _one_hot_and_numbers(arrived, fields, numbers),
           (arrived.arr_delay > 15).to_numpy().astype(int))
    rain = weather[weather.precip.notna()]
    numbers = [c for c in WEATHER_COLUMNS if c != "precip"]
    yield ("weather (sparse, fields one-hot): precipitation",
           _one_hot_and_numbers(rain, ["origin", "month", "hour"], numbers),
           (rain.precip > 0).to_numpy().astype(int))


def _one_hot_and_numbers(frame, fields, numbers):
    """CSR of ``fields`` one-hot and ``numbers`` raw (missing: the median)."""
    one_hot = OneHotEncoder(handle_unknown="ignore").fit_transform(frame[fields].astype(str))
    return sp.hstack([one_hot, sp.csr_matrix(_filled(frame, numbers))], format="csr")


@contextlib.contextmanager
def _read_as_given():
    """The estimators reading sparse input as given, as they read every input before
    tables and measured features were scaled (``sklearn_sketch._columns``' limits 0)."""
    saved = _columns.SPARSE_TABLE_MAX_WIDTH, _columns.MAX_SCALED_KEYS
    _columns.SPARSE_TABLE_MAX_WIDTH = _columns.MAX_SCALED_KEYS = 0
    try:
        yield
    finally:
        _columns.SPARSE_TABLE_MAX_WIDTH, _columns.MAX_SCALED_KEYS = saved


def _splits(X, y, small):
    """5-fold stratified CV for a small table, else one 80/20 split."""
    if small:
        return list(StratifiedKFold(5, shuffle=True, random_state=0).split(X, y))
    train, test = train_test_split(np.arange(len(y)), test_size=0.2, random_state=0,
                                   stratify=y)
    return [(train, test)]


def _score(model, X, y, splits, as_given=False):
    """Mean test accuracy and total fit seconds over the splits."""
    scores, seconds = [], 0.0
    for train, test in splits:
        est = clone(model)
        X_train, X_test = X[train], X[test]
        if as_given:
            X_train, X_test = sp.csr_matrix(X_train), sp.csr_matrix(X_test)
        started = time.perf_counter()
        with warnings.catch_warnings(), (_read_as_given() if as_given
                                         else contextlib.nullcontext()):
            warnings.simplefilter("ignore", ConvergenceWarning)
            est.fit(X_train, y[train])
        seconds += time.perf_counter() - started
        scores.append(float(np.mean(est.predict(X_test) == y[test])))
    return float(np.mean(scores)), seconds


def _vw_lines(X, y):
    """Vowpal Wabbit text of the rows, labels -1/+1 (columns named by their index; the
    zeros of a sparse matrix left out)."""
    heads = np.where(y == 1, "1 |f", "-1 |f")
    if sp.issparse(X):
        X = sp.csr_matrix(X)
        cells = np.char.add(np.char.add(" ", X.indices.astype(str)),
                            np.char.add(":", X.data.astype(str)))
        rows = ["".join(cells[a:b]) for a, b in zip(X.indptr[:-1], X.indptr[1:])]
        return "\n".join(np.char.add(heads, np.array(rows, dtype=str)).tolist()) + "\n"
    columns = [np.char.add(f" {j}:", X[:, j].astype(str)) for j in range(X.shape[1])]
    features = columns[0]
    for column in columns[1:]:
        features = np.char.add(features, column)
    return "\n".join(np.char.add(heads, features).tolist()) + "\n"


def _vw_score(X, y, splits, passes=5):
    """Vowpal Wabbit, logistic loss, its default updates, ``passes`` passes: mean test
    accuracy and seconds (None when the package is missing)."""
    if find_spec("vowpalwabbit") is None:
        return None, None
    scores, seconds = [], 0.0
    with tempfile.TemporaryDirectory() as folder:
        folder = Path(folder)
        for train, test in splits:
            (folder / "train.vw").write_text(_vw_lines(X[train], y[train]))
            (folder / "test.vw").write_text(_vw_lines(X[test], y[test]))
            base = [sys.executable, "-m", "vowpalwabbit", "--quiet"]
            started = time.perf_counter()
            subprocess.run(base + [str(folder / "train.vw"), "--loss_function", "logistic",
                                   "--passes", str(passes), "--holdout_off", "-k", "-c",
                                   "--cache_file", str(folder / "cache"), "-f",
                                   str(folder / "model")], check=True)
            seconds += time.perf_counter() - started
            subprocess.run(base + ["-t", "-d", str(folder / "test.vw"), "-i", str(folder / "model"),
                                   "-p", str(folder / "pred")], check=True)
            predicted = np.loadtxt(folder / "pred", ndmin=1) > 0
            scores.append(float(np.mean(predicted == (y[test] == 1))))
    return float(np.mean(scores)), seconds


def run(tasks, done="standardized", scaler=StandardScaler):
    """Each estimator read as given and as it reads the table (``done``: standardized,
    or scaled for sparse tables), beside ``SGDClassifier()`` raw and after ``scaler``,
    ``LogisticRegression`` after ``scaler`` and Vowpal Wabbit (binary tasks)."""
    rows, results = [], []
    scaled = scaler.__name__
    for name, X, y in tasks:
        splits = _splits(X, y, small=len(y) < 5000)
        if sp.issparse(X):
            print(f"{name}: {X.shape[0]:,} rows, {X.shape[1]} columns, "
                  f"{X.nnz / X.shape[0]:.1f} non-zeros a row", flush=True)
        else:
            print(f"{name}: {X.shape[0]:,} rows, {X.shape[1]} columns, "
                  f"{len(np.unique(y))} classes, column ranges {np.ptp(X, axis=0).min():.3g} "
                  f"to {np.ptp(X, axis=0).max():.3g}", flush=True)
        result = {"data": name, "rows": int(X.shape[0]), "columns": int(X.shape[1])}
        for label, model in ESTIMATORS.items():
            given, given_s = _score(model(random_state=0), X, y, splits, as_given=True)
            own, own_s = _score(model(random_state=0), X, y, splits)
            result[label] = {"as given": given, done: own,
                             "seconds as given": given_s, f"seconds {done}": own_s}
            rows.append([name, label, round(given, 3), round(own, 3),
                         round(own - given, 3), round(own_s, 2)])
        peers = {
            "SGDClassifier() raw": SGDClassifier(random_state=0),
            f"{scaled} + SGDClassifier()": make_pipeline(scaler(),
                                                         SGDClassifier(random_state=0)),
            f"{scaled} + LogisticRegression": make_pipeline(
                scaler(), LogisticRegression(max_iter=1000)),
        }
        for label, model in peers.items():
            score, seconds = _score(model, X, y, splits)
            result[label] = {"accuracy": score, "seconds": seconds}
            rows.append([name, label, None, round(score, 3), None, round(seconds, 2)])
        if len(np.unique(y)) == 2:
            score, seconds = _vw_score(X, y, splits)
            if score is not None:
                result["Vowpal Wabbit (5 passes)"] = {"accuracy": score, "seconds": seconds}
                rows.append([name, "Vowpal Wabbit, defaults, 5 passes", None, round(score, 3),
                             None, round(seconds, 2)])
        results.append(result)
    return rows, results


def _summary(result, done="standardized", scaled="StandardScaler"):
    """One sentence of a data set's numbers."""
    ours = [result[label] for label in ESTIMATORS]
    given = [r["as given"] for r in ours]
    own = [r[done] for r in ours]
    text = (f"{result['data']}: this package's estimators with defaults "
            f"{min(given):.3f}-{max(given):.3f} read as given, {min(own):.3f}-{max(own):.3f} "
            f"{done}; {scaled} + SGDClassifier() "
            f"{result[f'{scaled} + SGDClassifier()']['accuracy']:.3f}, + LogisticRegression "
            f"{result[f'{scaled} + LogisticRegression']['accuracy']:.3f}; SGDClassifier() "
            f"raw {result['SGDClassifier() raw']['accuracy']:.3f}")
    if "Vowpal Wabbit (5 passes)" in result:
        text += f"; Vowpal Wabbit {result['Vowpal Wabbit (5 passes)']['accuracy']:.3f}"
    return text


def _print_table(rows, done="standardized"):
    header = ["data", "estimator", "as given", done, "gain", "fit s"]
    widths = [max(len(str(r[i])) for r in [header] + rows) for i in range(len(header))]
    for row in [header] + rows:
        print("  ".join(str("" if v is None else v).ljust(w) for v, w in zip(row, widths)))


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", help="the shared data folder (default: found)")
    parser.add_argument("--json", help="write every number to this file")
    args = parser.parse_args(argv)
    folder = (Path(args.data) / "flights" if args.data
              else resolve_data_dir().parent / "flights")
    started = time.perf_counter()
    rows, results = run([*toy_tasks(), *flight_tasks(folder)])
    sparse_rows, sparse_results = run(sparse_flight_tasks(folder), "scaled", MaxAbsScaler)
    print()
    _print_table(rows)
    print()
    _print_table(sparse_rows, "scaled")
    if args.json:
        tables = [{"title": "Default test accuracy on raw dense columns: read as given "
                            "and standardized by the estimator",
                   "columns": ["data", "estimator", "as given", "standardized", "gain",
                               "fit seconds"],
                   "rows": rows},
                  {"title": "Default test accuracy on sparse tables (fields one-hot, raw "
                            "numeric columns): read as given and scaled by the root mean "
                            "square of each column's entries",
                   "columns": ["data", "estimator", "as given", "scaled", "gain",
                               "fit seconds"],
                   "rows": sparse_rows}]
        out = {"provenance": provenance(), "results": results,
               "sparse_results": sparse_results, "tables": tables,
               "summary": ([_summary(result) for result in results]
                           + [_summary(result, "scaled", "MaxAbsScaler")
                              for result in sparse_results]),
               "seconds": round(time.perf_counter() - started, 1)}
        Path(args.json).write_text(json.dumps(out, indent=1, allow_nan=False,
                                              default=lambda v: None if v is None or (
                                                  isinstance(v, float) and math.isnan(v))
                                              else v) + "\n")


if __name__ == "__main__":
    main()
