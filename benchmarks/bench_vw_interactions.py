"""Namespace crosses of Vowpal Wabbit files: sklearn-sketch against VW's ``-q``, named.

The flights out of New York in 2013 (``../shared/data/flights``) as a VW file,
one namespace per attribute (``|carrier EV |origin EWR |dest ORD |hour 17
|month 7``), label: departure delayed more than 15 minutes. Every fifth flight
is held out. Both tools run as a user runs them, from the command line in a
new process, on the same files, one pass:

* Vowpal Wabbit (PyPI ``vowpalwabbit``) with logistic loss, ``-b 18``, with
  and without ``-q`` for the pairs below;
* ``sklearn-sketch fit --vw`` with ``--interactions`` for the same pairs, the
  AWM-Sketch and feature hashing at ``--param memory_budget=1MB`` (VW's
  2**18 float weights are 1 MiB, before its per-weight state) and
  ``random_state=0``, then ``sklearn-sketch evaluate``.

It prints the seconds of training (process start to model file), the test
accuracy and ROC AUC, and the heaviest features each tool names: VW keeps
hashes only; the sketch names its crosses (``carrier^EV*dest^ORD``).

    python benchmarks/bench_vw_interactions.py [--data FOLDER] [--json out.json]
"""
import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd
from sklearn.metrics import roc_auc_score

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _provenance import provenance  # noqa: E402
from dna_task import resolve_data_dir  # noqa: E402
from peers import _vw_command  # noqa: E402

#: Attributes, each its own namespace (its first letter names it in ``-q``).
COLUMNS = ["carrier", "origin", "dest", "hour", "month"]
#: The crosses: carrier x destination, origin x destination, destination x hour,
#: carrier x hour.
PAIRS = ["cd", "od", "dh", "ch"]
BITS, BUDGET = 18, "1MB"


def write_files(folder, out):
    """Train and test VW files of the flights; the test labels (0/1)."""
    flights = pd.read_csv(folder / "flights.csv.zip", usecols=[*COLUMNS, "dep_delay"])
    flights = flights[flights.dep_delay.notna()].reset_index(drop=True)
    label = np.where(flights.dep_delay > 15, "1", "-1")
    lines = pd.Series(label, dtype=object)
    for column in COLUMNS:
        lines = lines + f" |{column} " + flights[column].astype(str)
    test = np.arange(len(flights)) % 5 == 0
    paths = out / "train.vw", out / "test.vw"
    for path, rows in zip(paths, (~test, test)):
        path.write_text("\n".join(lines[rows]) + "\n")
    return paths, (label[test] == "1").astype(int)


def run_vw(train, test, pairs, out):
    model, predictions = out / "vw.model", out / "vw.pred"
    options = ["--loss_function", "logistic", "-b", str(BITS), "--quiet"]
    options += [arg for pair in pairs for arg in ("-q", pair)]
    started = time.perf_counter()
    subprocess.run([*_vw_command(), "-d", str(train), "-f", str(model), *options], check=True)
    seconds = time.perf_counter() - started
    subprocess.run([*_vw_command(), "-t", "-i", str(model), "-d", str(test), "-p",
                    str(predictions), "--quiet"], check=True)
    return seconds, np.loadtxt(predictions, ndmin=1)


def run_sketch(train, test, estimator, pairs, out):
    model = out / f"{estimator}.skm"
    crosses = [arg for pair in pairs for arg in ("--interactions", pair)]
    command = [sys.executable, "-m", "sklearn_sketch"]
    started = time.perf_counter()
    subprocess.run([*command, "fit", "--vw", str(train), "--estimator", estimator,
                    "--param", f"memory_budget={BUDGET!r}", "--param", "random_state=0",
                    *crosses, "--quiet",
                    "--output", str(model)], check=True)
    seconds = time.perf_counter() - started
    out_json = subprocess.run([*command, "evaluate", "--model", str(model), "--vw", str(test),
                               "--format", "json"], check=True, capture_output=True, text=True)
    metrics = json.loads(out_json.stdout.strip().splitlines()[-1])
    names = []
    if estimator != "hashing":
        selected = subprocess.run([*command, "select", "--model", str(model), "--top", "5",
                                   "--format", "json"], check=True, capture_output=True,
                                  text=True)
        names = [f["name"] for f in json.loads(selected.stdout)]
    return seconds, metrics, names


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", help="the flights folder (default: found beside the genomes)")
    parser.add_argument("--json", help="write every number to this file")
    args = parser.parse_args(argv)
    folder = Path(args.data) if args.data else resolve_data_dir().parent / "flights"
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp)
        (train, test), y_test = write_files(folder, out)
        for pairs in ([], PAIRS):
            seconds, scores = run_vw(train, test, pairs, out)
            rows.append(["Vowpal Wabbit -b 18", " ".join(pairs) or "-", round(seconds, 2),
                         round(float(np.mean((scores > 0) == (y_test == 1))), 4),
                         round(float(roc_auc_score(y_test, scores)), 4), "hashes only"])
            for estimator in ("awm", "hashing"):
                seconds, metrics, names = run_sketch(train, test, estimator, pairs, out)
                rows.append([f"sklearn-sketch {estimator} {BUDGET}", " ".join(pairs) or "-",
                             round(seconds, 2), round(metrics["accuracy"], 4),
                             round(metrics["roc_auc"], 4), ", ".join(names) or "hashes only"])
    columns = ["tool", "crosses", "train seconds", "accuracy", "ROC AUC", "top features"]
    print(f"flights out of New York, delayed > 15 min; test every 5th flight "
          f"({len(y_test):,}, {y_test.mean():.3f} delayed)")
    print("\t".join(columns))
    for row in rows:
        print("\t".join(str(v) for v in row))
    if args.json:
        Path(args.json).write_text(json.dumps({
            "provenance": provenance(),
            "tables": [{"title": "Namespace crosses of a VW file: sklearn-sketch against "
                                 "Vowpal Wabbit's -q (flights, delayed > 15 min)",
                        "columns": columns, "rows": rows}],
        }, indent=1))


if __name__ == "__main__":
    main()
