"""Steps by row norm ('normalized') against steps by row norm and feature frequency
('frequency') or squared gradients ('adaptive'), and the choice on the probe ('auto',
the default), everything else at its default.

1. The accuracy benchmark's data sets (20 Newsgroups word uni+bigrams as tokens and as
   ``HashingVectorizer`` rows, DNA 12-mers of four species, held-out strains), sized by
   ``memory_budget`` as ``bench_accuracy_memory.py`` sizes them, ``max_iter`` at its
   default (5): test accuracy of each schedule.
2. One pass over 20 Newsgroups words written as Vowpal Wabbit text (a post a line, raw
   counts, shuffled once), through the command line as a user runs it
   (``sklearn-sketch fit --vw`` then ``evaluate``), beside Vowpal Wabbit's own command
   line with its defaults (``--oaa 20``, 18 bits) and with 24 bits.

    python benchmarks/bench_schedules.py [--datasets ng-tokens,ng-hashing,dna]
        [--budgets 64KB,...] [--estimators mission,wm,awm,hashing] [--no-vw-text]
        [--json out.json] [--rest-from EARLIER.json]

``--rest-from`` joins the rows (and raw cells) of an earlier ``--json`` run that this
run does not measure, so that one estimator re-run is one command.
"""
import argparse
import json
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
from joblib import Parallel, delayed

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bench_accuracy_memory as bam  # noqa: E402
from _provenance import join_earlier_run, provenance  # noqa: E402
from dna_task import resolve_data_dir  # noqa: E402
from peers import _vw_command  # noqa: E402

SCHEDULES = ("auto", "normalized", "frequency", "adaptive")
ESTIMATORS = ("mission", "wm", "awm", "hashing")
#: CountVectorizer's default tokens: lower case, words of 2+ characters.
WORD = re.compile(r"(?u)\b\w\w+\b")


def budget_table(name, data, estimators, budgets, n_jobs):
    """Accuracy of each (estimator, budget, schedule) on one data set."""
    tasks = [(e, b, lr) for e in estimators for b in budgets for lr in SCHEDULES]
    results = Parallel(n_jobs=n_jobs)(
        delayed(bam.run_ours)(e, bam.parse_memory_budget(b), data, None, 2**31,
                              learning_rate=lr) for e, b, lr in tasks)
    cells = dict(zip(tasks, results))
    rows = []
    for e in estimators:
        for lr in SCHEDULES:
            rows.append([bam.ESTIMATORS[e][0], lr,
                         *[cells[e, b, lr].get("accuracy") for b in budgets]])
        rows.append([bam.ESTIMATORS[e][0], "difference (points)",
                     *[_points(cells[e, b, "frequency"], cells[e, b, "normalized"])
                       for b in budgets]])
        rows.append([bam.ESTIMATORS[e][0], "'adaptive' - 'frequency' (points)",
                     *[_points(cells[e, b, "adaptive"], cells[e, b, "frequency"])
                       for b in budgets]])
        rows.append([bam.ESTIMATORS[e][0], "'auto' chose",
                     *[cells[e, b, "auto"].get("learning_rate_") for b in budgets]])
    table = {"title": f"{name}: test accuracy, 'auto' (the default), 'normalized', "
                      "'frequency' and 'adaptive' steps (defaults otherwise, 5 passes)",
             "columns": ["estimator", "learning_rate", *budgets], "rows": rows}
    return table, {f"{e}|{b}|{lr}": r for (e, b, lr), r in cells.items()}


def _points(a, b):
    if "accuracy" not in a or "accuracy" not in b:
        return None
    return round(100 * (a["accuracy"] - b["accuracy"]), 1)


def write_vw_text(root, folder):
    """The posts of both splits as VW text (``label |w word word ...``), train shuffled."""
    paths = {}
    for split in ("train", "test"):
        docs, labels = bam._read_posts(root, split)
        order = (np.random.default_rng(0).permutation(len(docs)) if split == "train"
                 else np.arange(len(docs)))
        path = folder / f"20ng_{split}.vw"
        with open(path, "w") as f:
            for i in order:
                words = WORD.findall(docs[i].lower()) or ["<empty>"]
                f.write(f"{labels[i] + 1} |w {' '.join(words)}\n")
        paths[split] = path
    return paths


def cli_one_pass(paths, estimator, learning_rate, folder):
    """``sklearn-sketch fit --vw`` (one pass, defaults but the schedule) then ``evaluate``:
    test accuracy and the fit's wall-clock seconds."""
    model = folder / f"{estimator}-{learning_rate}.skm"
    sketch = [sys.executable, "-m", "sklearn_sketch"]
    start = time.perf_counter()
    subprocess.run([*sketch, "fit", "--vw", str(paths["train"]), "--estimator", estimator,
                    "--param", f"learning_rate='{learning_rate}'", "--quiet",
                    "--output", str(model)], check=True)
    seconds = time.perf_counter() - start
    out = subprocess.run([*sketch, "evaluate", "--vw", str(paths["test"]), "--model",
                          str(model), "--format", "json"], check=True, capture_output=True,
                         text=True).stdout
    return json.loads(out.strip().splitlines()[-1])["accuracy"], seconds


def vw_one_pass(paths, bits, folder):
    """Vowpal Wabbit's command line, ``--oaa 20 -b bits``, one pass: accuracy, seconds."""
    model, predictions = folder / f"vw{bits}.model", folder / f"vw{bits}.pred"
    start = time.perf_counter()
    subprocess.run([*_vw_command(), "--oaa", "20", "-b", str(bits), "-d", str(paths["train"]),
                    "-f", str(model), "--quiet"], check=True)
    seconds = time.perf_counter() - start
    subprocess.run([*_vw_command(), "-t", "-i", str(model), "-d", str(paths["test"]), "-p",
                    str(predictions), "--quiet"], check=True)
    predicted = np.loadtxt(predictions, ndmin=1)
    truth = np.array([int(line.split(" ", 1)[0]) for line in open(paths["test"])])
    return float(np.mean(predicted == truth)), seconds


def vw_text_table(data_dir, cache, estimators):
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        paths = write_vw_text(bam._twenty_news_root(data_dir, cache), folder)
        rows = []
        for e in estimators:
            for lr in SCHEDULES:
                accuracy, seconds = cli_one_pass(paths, e, lr, folder)
                rows.append([f"sklearn-sketch fit --estimator {e}", lr, accuracy, seconds])
                print(f"  {e} {lr}: {accuracy:.4f} ({seconds:.1f} s)", flush=True)
        for bits in (18, 24):
            accuracy, seconds = vw_one_pass(paths, bits, folder)
            rows.append([f"vw --oaa 20 -b {bits}", "its defaults", accuracy, seconds])
            print(f"  vw -b {bits}: {accuracy:.4f} ({seconds:.1f} s)", flush=True)
    return {"title": "One pass over 20 Newsgroups words as Vowpal Wabbit text (raw counts), "
                     "the command lines with their defaults",
            "columns": ["run", "learning_rate", "accuracy", "fit seconds"], "rows": rows}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--datasets", default=",".join(bam.DATASETS))
    parser.add_argument("--budgets", default=bam.DEFAULT_BUDGETS)
    parser.add_argument("--estimators", default=",".join(ESTIMATORS))
    parser.add_argument("--dna-reads", type=int, default=20_000)
    parser.add_argument("--data", default=None, help="shared data folder (default: found "
                                                     "next to the project)")
    parser.add_argument("--cache", default=str(Path(tempfile.gettempdir())
                                               / "sklearn_sketch_bench_cache"))
    parser.add_argument("--n-jobs", type=int, default=2)
    parser.add_argument("--no-vw-text", action="store_true",
                        help="skip the one-pass command-line runs on VW text")
    parser.add_argument("--json", help="write every number to this file")
    parser.add_argument("--rest-from", help="an earlier --json file: its rows that this run "
                        "does not measure join the tables (same budgets)")
    args = parser.parse_args(argv)
    data_dir = Path(args.data) if args.data else resolve_data_dir().parent
    cache = Path(args.cache)
    cache.mkdir(parents=True, exist_ok=True)
    estimators = args.estimators.split(",")
    budgets = args.budgets.split(",")
    record = {"provenance": provenance(argv), "tables": [], "results": {}}
    start = time.perf_counter()
    if not args.no_vw_text:
        print("== one pass over VW text, command lines ==", flush=True)
        table = vw_text_table(data_dir, cache, estimators)
        table["headline"] = True
        record["tables"].append(table)
    for name in [n for n in args.datasets.split(",") if n]:  # "": the VW text alone
        print(f"== {name} ==", flush=True)
        data = bam.load_dataset(name, data_dir, cache, args.dna_reads)
        table, cells = budget_table(name, data, estimators, budgets, args.n_jobs)
        record["tables"].append(table)
        record["results"][name] = cells
        for row in table["rows"]:
            print("  " + "  ".join("-" if v is None else f"{v:.3f}" if isinstance(v, float)
                                   else str(v) for v in row), flush=True)
    record["seconds"] = time.perf_counter() - start
    if args.rest_from:
        join_earlier_run(json.loads(Path(args.rest_from).read_text()), record)
    if args.json:
        Path(args.json).write_text(json.dumps(record, indent=1) + "\n")


if __name__ == "__main__":
    main()
