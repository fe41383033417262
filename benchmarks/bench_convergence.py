"""Passes to convergence: the online error and the test accuracy after every pass.

The estimators run ``max_iter=5`` passes of a constant normalized step by default.
Where that does not converge, accuracy is left on the table: on 20 Newsgroups at
64 MB feature hashing and the AWM-Sketch trailed Vowpal Wabbit (adaptive steps, the
same 5 passes) by 1.2-1.3 points with step 1, and a stop on ``tol`` would have
gained 0.9-1.2 points for 2.4-3.8 times the fit time; with step 3 where the sketch
is lightly loaded (eta0='auto' since), 5 passes end within 0.1-0.5 points of that
stop. This script
trains each setting with ``partial_fit`` one pass at a time (pass ``k`` is the
model ``fit`` with ``max_iter=k`` gives), and prints after every pass the online
error rate (samples misclassified just before their update, what a stop can read
for free) and the test accuracy. For each setting it reports where a stop in
scikit-learn's manner would end (the online error has not fallen by ``tol`` below
its best for ``n_iter_no_change`` passes, as ``SGDClassifier`` reads its training
loss), with the accuracy there, against the default 5 passes and the last pass.

Data: the sets of ``bench_accuracy_memory.py`` (its cache), every estimator with
its default parameters under ``memory_budget``.

    python benchmarks/bench_convergence.py [--settings awm:4MB,hashing:64MB] [--passes 20]
        [--datasets ng-tokens,ng-hashing,dna] [--json out.json]
"""
import argparse
import json
import sys
import tempfile
import time
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _provenance import provenance  # noqa: E402
from bench_accuracy_memory import DATASETS, load_dataset  # noqa: E402
from dna_task import resolve_data_dir  # noqa: E402

import sklearn_sketch as sk  # noqa: E402

ESTIMATORS = {"awm": sk.AWMSketchClassifier, "wm": sk.WMSketchClassifier,
              "mission": sk.MissionClassifier, "hashing": sk.FeatureHashingClassifier}
DEFAULT_PASSES = 5  # the estimators' max_iter


def pass_by_pass(estimator, data, passes):
    """``[(online error rate, test accuracy, seconds so far)]``, one per pass."""
    X_train, y_train, X_test, y_test = data
    classes, out, seconds = np.unique(y_train), [], 0.0
    for _ in range(passes):
        start = time.perf_counter()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # a first pass may be near chance
            estimator.partial_fit(X_train, y_train, classes=classes)
        seconds += time.perf_counter() - start
        out.append((float(estimator.online_error_rate_),
                    float(estimator.score(X_test, y_test)), seconds))
    return out


def stop_pass(errors, tol, n_iter_no_change):
    """The pass (1-based) after which the stop ends training, or None (never)."""
    best, stale = np.inf, 0
    for k, error in enumerate(errors, 1):
        if error > best - tol:
            stale += 1
        else:
            stale = 0
        best = min(best, error)
        if stale >= n_iter_no_change:
            return k
    return None


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--settings", default="awm:4MB,hashing:64MB",
                        help=f"estimator:budget pairs, estimators among {sorted(ESTIMATORS)}")
    parser.add_argument("--datasets", default=",".join(DATASETS))
    parser.add_argument("--passes", type=int, default=20)
    parser.add_argument("--tol", type=float, default=1e-3)
    parser.add_argument("--n-iter-no-change", type=int, default=5)
    parser.add_argument("--dna-reads", type=int, default=20_000)
    parser.add_argument("--data", default=None)
    parser.add_argument("--cache", default=str(Path(tempfile.gettempdir())
                                               / "sklearn_sketch_bench_cache"))
    parser.add_argument("--json", help="write every number to this file")
    args = parser.parse_args(argv)
    settings = [tuple(s.split(":")) for s in args.settings.split(",")]
    # As bench_accuracy_memory.py: the shared data folder, and its cache of the sets.
    data_dir = Path(args.data) if args.data else resolve_data_dir().parent
    cache = Path(args.cache)
    cache.mkdir(parents=True, exist_ok=True)
    runs, rows = [], []
    for name in args.datasets.split(","):
        data = load_dataset(name, data_dir, cache, args.dna_reads)
        for est_id, budget in settings:
            estimator = ESTIMATORS[est_id](memory_budget=budget, random_state=0)
            passes = pass_by_pass(estimator, data, args.passes)
            errors = [e for e, _, _ in passes]
            stop = stop_pass(errors, args.tol, args.n_iter_no_change)
            at = passes[(stop or args.passes) - 1]
            default = passes[min(DEFAULT_PASSES, args.passes) - 1]
            runs.append({"dataset": name, "estimator": est_id, "budget": budget,
                         "passes": [{"online_error": e, "accuracy": a, "seconds": s}
                                    for e, a, s in passes], "stop_pass": stop})
            rows.append([name, type(estimator).__name__, budget, round(default[1], 3),
                         round(default[2], 1), stop if stop else f">{args.passes}",
                         round(at[1], 3), round(at[2], 1), round(passes[-1][1], 3)])
            print(f"{name:10s} {est_id:8s} {budget:>5s}  " + "  ".join(
                f"{k}:{e:.4f}/{a:.3f}" for k, (e, a, _) in enumerate(passes, 1)), flush=True)
            print(f"{'':26s}stop after pass {stop or '-'}: accuracy {at[1]:.3f} in "
                  f"{at[2]:.1f} s, against {default[1]:.3f} in {default[2]:.1f} s after "
                  f"{DEFAULT_PASSES} passes and {passes[-1][1]:.3f} after {args.passes}",
                  flush=True)
    if args.json:
        Path(args.json).write_text(json.dumps({
            "provenance": provenance(), "runs": runs,
            "tables": [{
                "title": f"Where a stop on the online error (tol={args.tol:g}, "
                         f"n_iter_no_change={args.n_iter_no_change}) would end, against "
                         f"the default {DEFAULT_PASSES} passes",
                "columns": ["data set", "estimator", "budget",
                            f"{DEFAULT_PASSES} passes: accuracy", "seconds", "stop pass",
                            "accuracy", "seconds", f"{args.passes} passes: accuracy"],
                "rows": rows}]}, indent=1))


if __name__ == "__main__":
    main()
