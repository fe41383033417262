"""The command line end to end against Vowpal Wabbit's, on the same VW text file.

The DNA task of ``dna_task.py`` (E. coli vs S. aureus, 200 bp reads, 12-mers,
test on held-out strains) is written once as Vowpal Wabbit text (namespace
``k``, one feature per k-mer with its count). Each tool then runs as a user
runs it, in a new process, one pass, timed wall-clock from process start to the
model file on disk:

- ``python -m vowpalwabbit -d train.vw -f model --loss_function logistic -b 24``
  (the ``vw`` binary instead if on PATH);
- ``sklearn-sketch fit --vw train.vw --estimator E --quiet`` for the default
  MISSION and for feature hashing with 2**24 cells (VW's ``-b 24``), with
  default parameters otherwise.

Each model is then scored on the test file by the same tool (``vw -t``,
``sklearn-sketch evaluate``). The table gives seconds, the ratio to VW's time
in the same run and test accuracy.

    python benchmarks/bench_cli.py [--n-train 200000] [--repeats 3] [--json out.json]
"""
import argparse
import json
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _provenance import provenance  # noqa: E402
from dna_task import load_dna_task  # noqa: E402
from peers import write_vw_text  # noqa: E402

SKETCH = [sys.executable, "-m", "sklearn_sketch"]
RUNS = [
    ("sklearn-sketch fit (mission, defaults)", ["--estimator", "mission"]),
    ("sklearn-sketch fit (hashing, 2^24 cells)",
     ["--estimator", "hashing", "--param", "sketch_width=16777216"]),
    ("sklearn-sketch fit (awm, defaults)", ["--estimator", "awm"]),
]


def vw_command():
    binary = shutil.which("vw")
    return [binary] if binary else [sys.executable, "-m", "vowpalwabbit"]


def timed(command):
    start = time.perf_counter()
    subprocess.run(command, check=True, stdout=subprocess.DEVNULL)
    return time.perf_counter() - start


def vw_accuracy(model, test_path, folder):
    predictions = Path(folder) / "vw.pred"
    subprocess.run([*vw_command(), "-t", "-i", str(model), "-d", str(test_path), "-p",
                    str(predictions), "--quiet"], check=True)
    scores = np.loadtxt(predictions, ndmin=1)
    labels = np.array([float(line.split(b" ", 1)[0]) for line in
                       Path(test_path).read_bytes().splitlines()])
    return float(np.mean((scores > 0) == (labels > 0)))


def sketch_accuracy(model, test_path):
    out = subprocess.run([*SKETCH, "evaluate", "--model", str(model), "--vw", str(test_path),
                          "--format", "json"], check=True, capture_output=True, text=True)
    return json.loads(out.stdout)["accuracy"]


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n-train", type=int, default=200_000)
    parser.add_argument("--n-test", type=int, default=20_000)
    parser.add_argument("--repeats", type=int, default=3, help="best of this many runs")
    parser.add_argument("--json", help="also write the results to this file")
    args = parser.parse_args(argv)

    X_train, y_train, X_test, y_test = load_dna_task(n_train=args.n_train, n_test=args.n_test)
    with tempfile.TemporaryDirectory() as folder:
        train, test = Path(folder) / "train.vw", Path(folder) / "test.vw"
        size = write_vw_text(X_train, y_train, train)
        write_vw_text(X_test, y_test, test)
        print(f"DNA task as VW text: {X_train.shape[0]:,} reads, {X_train.nnz:,} features, "
              f"{size / 2**20:,.0f} MiB; best of {args.repeats} runs, wall clock\n")
        vw_model = Path(folder) / "vw.model"
        vw = [*vw_command(), "-d", str(train), "-f", str(vw_model), "--loss_function",
              "logistic", "-b", "24", "--quiet"]
        rows = [{"name": "Vowpal Wabbit -b 24", "command": " ".join(vw[:3]) + " ...",
                 "seconds": min(timed(vw) for _ in range(args.repeats))}]
        rows[0]["accuracy"] = vw_accuracy(vw_model, test, folder)
        for name, options in RUNS:
            model = Path(folder) / "model.skm"
            command = [*SKETCH, "fit", "--vw", str(train), *options, "--quiet",
                       "--output", str(model)]
            seconds = min(timed(command) for _ in range(args.repeats))
            rows.append({"name": name, "command": " ".join(["sklearn-sketch", *command[3:]]),
                         "seconds": seconds, "accuracy": sketch_accuracy(model, test)})
    print(f"{'run':42} {'seconds':>8} {'x VW':>6} {'accuracy':>9}")
    for row in rows:
        row["ratio_to_vw"] = row["seconds"] / rows[0]["seconds"]
        print(f"{row['name']:42} {row['seconds']:8.2f} {row['ratio_to_vw']:5.2f}x "
              f"{row['accuracy']:9.4f}")
    if args.json:
        table = {
            "title": f"The command line against Vowpal Wabbit's on the same VW text file "
                     f"(DNA, {X_train.shape[0]:,} reads), one pass, wall clock from process "
                     "start to the model file",
            "columns": ["run", "seconds", "x VW", "accuracy"],
            "rows": [[row["name"], round(row["seconds"], 2), round(row["ratio_to_vw"], 2),
                      round(row["accuracy"], 3)] for row in rows],
            "note": f"Best of {args.repeats} runs each; accuracy on held-out strains, scored "
                    "by each tool.",
            "headline": True,
        }
        with open(args.json, "w") as f:
            json.dump({"provenance": provenance(), "n_train": X_train.shape[0],
                       "nnz": int(X_train.nnz), "results": rows, "tables": [table]},
                      f, indent=2)


if __name__ == "__main__":
    main()
