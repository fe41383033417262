"""BEAR with its defaults in every cross-validation fold of the accuracy benchmark's data.

Issue 13 asks that BEAR's default never diverge on the data of
``bench_accuracy_memory.py`` in any cross-validation fold (its first default step
diverged on one fold of 20 Newsgroups). This script fits ``BearClassifier`` with
default parameters (but ``random_state``) on each of ``--folds`` stratified folds of
the training set of each data set (20 Newsgroups word uni+bi-grams as raw tokens and
as ``HashingVectorizer`` output, 20 classes; DNA 12-mers of four species), scores the
held-out fold, and counts the fits that raised "diverged" and those that learned
nothing (accuracy within 0.05 of always predicting the majority class).

    python benchmarks/bench_bear_folds.py [--datasets ng-tokens,ng-hashing,dna]
        [--folds 5] [--cache DIR] [--json out.json]
"""
import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np
from sklearn.model_selection import StratifiedKFold

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _provenance import provenance  # noqa: E402
from bench_accuracy_memory import load_dataset  # noqa: E402
from dna_task import resolve_data_dir  # noqa: E402

from sklearn_sketch import BearClassifier  # noqa: E402


#: A fold whose accuracy is within this of always predicting the majority class learned
#: nothing: a silent failure, as bad as a divergence.
CHANCE_MARGIN = 0.05


def fold_rows(name, X, y, n_folds):
    """One row per fold: accuracy on the held-out fold beside the majority class's, and
    whether the fit diverged, learned nothing (chance) or worked (ok)."""
    rows = []
    folds = StratifiedKFold(n_folds, shuffle=True, random_state=0)
    for fold, (train, test) in enumerate(folds.split(np.zeros(len(y)), y)):
        majority = float(np.max(np.unique(y[test], return_counts=True)[1]) / len(test))
        started = time.perf_counter()
        try:
            model = BearClassifier(random_state=0).fit(X[train], y[train])
            accuracy = float(model.score(X[test], y[test]))
            outcome = "chance" if accuracy <= majority + CHANCE_MARGIN else "ok"
        except ValueError as error:
            if "diverged" not in str(error):
                raise
            outcome, accuracy = "diverged", None
        seconds = round(time.perf_counter() - started, 1)
        accuracy = None if accuracy is None else round(accuracy, 3)
        rows.append([name, fold, outcome, accuracy, round(majority, 3), seconds])
        print(f"  {name} fold {fold}: {outcome} {accuracy} (majority {majority:.3f}; "
              f"{seconds} s)", flush=True)
    return rows


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--datasets", default="ng-tokens,ng-hashing,dna")
    parser.add_argument("--folds", type=int, default=5)
    parser.add_argument("--dna-reads", type=int, default=20_000,
                        help="reads per training strain, as bench_accuracy_memory.py")
    parser.add_argument("--data", default=None)
    parser.add_argument("--cache", default=None,
                        help="bench_accuracy_memory.py's cache (built there when missing)")
    parser.add_argument("--json", help="write every number to this file")
    args = parser.parse_args(argv)
    data_dir = Path(args.data) if args.data else resolve_data_dir().parent
    cache = Path(args.cache) if args.cache else Path("/tmp/sklearn_sketch_bench_cache")
    cache.mkdir(parents=True, exist_ok=True)
    rows = []
    for name in args.datasets.split(","):
        X, y, _, _ = load_dataset(name, data_dir, cache, args.dna_reads)
        print(f"{name}: {X.shape[0]:,} training rows, {len(np.unique(y))} classes", flush=True)
        rows += fold_rows(name, X, y, args.folds)
    failed = [row for row in rows if row[2] != "ok"]
    summary = [f"{'PASS' if not failed else 'FAIL'} BearClassifier() diverged in "
               f"{sum(row[2] == 'diverged' for row in rows)} and learned nothing (within "
               f"{CHANCE_MARGIN} of the majority class) in "
               f"{sum(row[2] == 'chance' for row in rows)} of {len(rows)} cross-validation "
               "folds" + "".join(f"; {row[0]} fold {row[1]}: {row[2]} {row[3]}"
                                 for row in failed)]
    print("\n" + "\n".join(summary))
    if args.json:
        Path(args.json).write_text(json.dumps({
            "provenance": provenance(), "summary": summary,
            "tables": [{"title": f"BearClassifier() (defaults, random_state=0) in each of "
                                 f"{args.folds} stratified folds of the training sets",
                        "columns": ["data", "fold", "outcome", "held-out accuracy",
                                    "majority class", "fit s"],
                        "rows": rows}]}, indent=1))


if __name__ == "__main__":
    main()
