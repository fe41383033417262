"""Training on more than one core: ``n_jobs`` threads and the cost of averaging models.

Three parts, in one run:

1. Epoch wall time and test accuracy with ``n_jobs=1`` and ``n_jobs=2`` (and more
   with ``--jobs``): each pass splits its shuffled rows into ``n_jobs`` parts, trains a
   copy of the model on each in its own thread (the compiled pass releases the GIL) and
   averages the copies (parameter mixing, :func:`sklearn_sketch.average_estimators`).
   Data: the DNA task of ``bench_throughput.py`` (E. coli vs S. aureus, 200 bp reads,
   12-mers, held-out strains) and 20 Newsgroups word uni+bi-grams as raw tokens hashed
   to 64-bit keys (the ``ng-tokens`` set of ``bench_accuracy_memory.py``, read from its
   cache). Estimators with default parameters.
2. The cost of ``average_estimators`` for two models, against the model's bytes (WM-Sketch
   at 1 MB to 64 MB) and the rows each copy trained on (the same model trained on 2,000
   and on 20,000 rows): it must grow with the model, not with the data.
3. With ``--dask``, the time to accuracy: Dask fits of 1, 2, ... epochs on the most
   workers until the test accuracy comes within a point of one process's after
   ``--epochs`` epochs (parameter mixing gives each copy 1/w of a sequential epoch's
   steps, so a task that one pass does not converge needs more epochs; the time to
   get there is what a user gains), against the single-process time.

From the measured merge cost the table extrapolates the epoch time at 8, 32 and 128
workers on one machine per worker: ``T(w) = T(1) / w + c * (w - 1) * model bytes`` when
one process averages the models one after the other, and ``T(1) / w + c * log2(w) *
model bytes`` for a tree of pairwise averages (what a Dask ``tree_reduce`` or a Spark
``treeAggregate`` does); the network time to move the models is not included.

    python benchmarks/bench_parallel.py [--epochs 2] [--jobs 1,2] [--dask] [--json out.json]
"""
import argparse
import json
import math
import os
import platform
import sys
import time
from contextlib import contextmanager
from pathlib import Path

import numpy as np
import scipy.sparse as sp

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _provenance import provenance  # noqa: E402
from dna_task import load_dna_task  # noqa: E402

import sklearn_sketch as sk  # noqa: E402

#: "Within 1 point of the single-process model" (issue 15), and how many times the
#: single-process epochs the time-to-accuracy fits may run.
ACCURACY_TOLERANCE = 0.01
MAX_EPOCHS_FACTOR = 3

ESTIMATORS = {
    "MISSION": lambda **k: sk.MissionClassifier(random_state=0, **k),
    "WM-Sketch": lambda **k: sk.WMSketchClassifier(random_state=0, **k),
    "AWM-Sketch": lambda **k: sk.AWMSketchClassifier(random_state=0, **k),
    "FeatureHashing": lambda **k: sk.FeatureHashingClassifier(random_state=0, **k),
}


def load_ng_tokens(cache):
    paths = [Path(cache) / f"ng-tokens_{split}_{part}" for split in ("train", "test")
             for part in ("X.npz", "y.npy")]
    if not all(p.exists() for p in paths):
        return None
    X_tr, y_tr, X_te, y_te = (sp.load_npz(p) if p.suffix == ".npz" else np.load(p)
                              for p in paths)
    return X_tr, y_tr, X_te, y_te


def time_epochs(make, n_jobs, epochs, data, repeats=1):
    """Seconds per epoch of a fit (the best of ``repeats`` fits: on this 2-core VM one
    run's time varied by a quarter), its test accuracy and its bytes."""
    X_tr, y_tr, X_te, y_te = data
    best = math.inf
    for _ in range(repeats):
        est = make(n_jobs=n_jobs, max_iter=epochs)
        start = time.perf_counter()
        est.fit(X_tr, y_tr)
        best = min(best, (time.perf_counter() - start) / epochs)
    return best, float(est.score(X_te, y_te)), int(est.memory_bytes_)


@contextmanager
def dask_partitions(make, n_workers, data):
    """``(client, X, y)`` on a LocalCluster of n_workers processes, one partition each.

    The data is scattered to the workers (as data that lives there) and the workers'
    imports are warmed by a first fit, all before any clock starts.
    """
    import dask.array as da
    from distributed import Client, LocalCluster

    from sklearn_sketch import dask as sk_dask

    X_tr, y_tr = data[:2]
    rows = -(-X_tr.shape[0] // n_workers)
    with LocalCluster(n_workers=n_workers, threads_per_worker=1, processes=True,
                      dashboard_address=None) as cluster, Client(cluster) as client:
        X = da.from_array(X_tr, chunks=(rows, X_tr.shape[1]), asarray=False)
        y = da.from_array(y_tr, chunks=rows)
        X, y = client.persist([X, y])
        client.wait_for_workers(n_workers)
        sk_dask.fit(make(), X, y, client=client, epochs=1)
        yield client, X, y


def time_dask_epochs(make, n_workers, epochs, data, repeats=1):
    """Seconds per epoch of sklearn_sketch.dask.fit on a LocalCluster of n_workers processes
    (the best of ``repeats`` fits), seconds of an added epoch, and the test accuracy.

    A fit's time covers the client sending the model out and receiving the result
    (once a fit, however many epochs: 0.7 s for an 84 MB model on this VM) and, in
    the first epoch, eta0='auto''s probe. An added epoch is what one more epoch
    costs: a fit of the trained model for 3 epochs less one for 1 epoch, over 2
    (each the best of ``repeats``; None when ``epochs`` is 1)."""
    from sklearn_sketch import dask as sk_dask

    seconds, one, three = math.inf, math.inf, math.inf
    with dask_partitions(make, n_workers, data) as (client, X, y):
        for _ in range(repeats):
            start = time.perf_counter()
            model = sk_dask.fit(make(), X, y, client=client, epochs=epochs)
            seconds = min(seconds, time.perf_counter() - start)
            if epochs > 1:
                start = time.perf_counter()
                sk_dask.fit(model, X, y, client=client, epochs=1)
                one = min(one, time.perf_counter() - start)
                start = time.perf_counter()
                sk_dask.fit(model, X, y, client=client, epochs=3)
                three = min(three, time.perf_counter() - start)
    added = (three - one) / 2 if epochs > 1 else None
    return seconds / epochs, added, float(model.score(*data[2:]))


def dask_time_to_accuracy(make, n_workers, target, max_epochs, data):
    """Fits of 1, 2, ... epochs on n_workers until the test accuracy reaches ``target``.

    Parameter mixing makes each copy take 1/n_workers of a sequential epoch's steps,
    so where one pass does not converge more epochs are needed for the same
    accuracy; what counts is the time to get there. Returns one record per fit:
    epochs, seconds (the whole fit) and accuracy; the last reached ``target``
    unless ``max_epochs`` ran out first.
    """
    from sklearn_sketch import dask as sk_dask

    records = []
    with dask_partitions(make, n_workers, data) as (client, X, y):
        for epochs in range(1, max_epochs + 1):
            start = time.perf_counter()
            model = sk_dask.fit(make(), X, y, client=client, epochs=epochs)
            seconds = time.perf_counter() - start
            records.append({"epochs": epochs, "seconds": seconds,
                            "accuracy": float(model.score(*data[2:]))})
            if records[-1]["accuracy"] >= target:
                break
    return records


def merge_cost(X, y, budgets, rows, repeats=3):
    """Seconds of average_estimators of two WM-Sketches, per budget and training size."""
    out = []
    for budget in budgets:
        for n in rows:
            models = [sk.WMSketchClassifier(budget, max_iter=1, random_state=0)
                      .fit(X[i * n:(i + 1) * n], y[i * n:(i + 1) * n]) for i in range(2)]
            best = min(_timed(lambda: sk.average_estimators(models)) for _ in range(repeats))
            out.append({"budget": budget, "rows": n, "model_bytes": models[0].memory_bytes_,
                        "seconds": best})
    return out


def _timed(function):
    start = time.perf_counter()
    function()
    return time.perf_counter() - start


def parallel_tables(results, jobs, per_byte):
    """The JSON's tables: seconds per epoch and accuracy per n_jobs (and Dask workers)."""
    tables = []
    for key, label in (("n_jobs", "n_jobs"), ("dask_workers", "Dask workers")):
        fits = [f for f in results["fits"] if key in f]
        if not fits:
            continue
        rows = []
        for data, estimator in dict.fromkeys((f["data"], f["estimator"]) for f in fits):
            by_jobs = {f[key]: f for f in fits if (f["data"], f["estimator"]) == (data, estimator)}
            first, last = by_jobs[jobs[0]], by_jobs[jobs[-1]]
            rows.append([data, estimator]
                        + [x for j in jobs for x in (round(by_jobs[j]["seconds_per_epoch"], 2),
                                                     round(by_jobs[j]["accuracy"], 3))]
                        + [round(last["seconds_per_epoch"] / first["seconds_per_epoch"], 2)])
        columns = ["data", "estimator"] + [c for j in jobs
                                           for c in (f"{label}={j} s/epoch", "accuracy")]
        columns.append("time ratio")
        added = all(f.get("added_epoch_seconds") for f in fits)
        if added:  # Dask: without the probe and the client's round trip
            for row, (data, estimator) in zip(rows, dict.fromkeys(
                    (f["data"], f["estimator"]) for f in fits)):
                by_jobs = {f[key]: f for f in fits
                           if (f["data"], f["estimator"]) == (data, estimator)}
                seconds = [by_jobs[j]["added_epoch_seconds"] for j in jobs]
                row += [round(s, 2) for s in seconds] + [round(seconds[-1] / seconds[0], 2)]
            columns += [f"{label}={j}: an added epoch, s" for j in jobs] + ["added ratio"]
        tables.append({"title": f"Seconds per epoch and test accuracy after "
                                f"{results['epochs']} epochs, by {label}",
                       "columns": columns, "rows": rows})
    reach = results.get("time_to_accuracy", [])
    if reach:
        workers = reach[0]["dask_workers"]
        tables.append({
            "title": f"Time to the single-process accuracy on {workers} Dask workers: fits of "
                     f"1, 2, ... epochs until the test accuracy comes within "
                     f"{ACCURACY_TOLERANCE * 100:.0f} point of one process's after "
                     f"{results['epochs']} epochs",
            "columns": ["data", "estimator", "one process: accuracy", "seconds",
                        f"{workers} workers: epochs", "accuracy", "seconds",
                        "time ratio to one process", "to 1 Dask worker"],
            "rows": [[r["data"], r["estimator"], round(r["single_accuracy"], 3),
                      round(r["single_seconds"], 2),
                      r["records"][-1]["epochs"] if r["reached"] else
                      f">{r['records'][-1]['epochs']}",
                      round(r["records"][-1]["accuracy"], 3),
                      round(r["records"][-1]["seconds"], 2),
                      round(r["records"][-1]["seconds"] / r["single_seconds"], 2),
                      round(r["records"][-1]["seconds"] / r["one_worker_seconds"], 2)
                      if r.get("one_worker_seconds") else None]
                     for r in reach]})
    tables.append({"title": "average_estimators of two WM-Sketches: seconds by model bytes "
                            "and training rows",
                   "columns": ["budget", "model bytes", "rows each", "ms"],
                   "rows": [[m["budget"], m["model_bytes"], m["rows"],
                             round(m["seconds"] * 1e3, 1)] for m in results["merge"]],
                   "note": f"About {per_byte * 2**20 * 1e3:.1f} ms per MiB of model and pair "
                           "of models, whatever the rows."})
    return tables


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--epochs", type=int, default=2)
    parser.add_argument("--jobs", default="1,2", help="n_jobs values, comma-separated")
    parser.add_argument("--n-train", type=int, default=200_000, help="DNA training reads")
    parser.add_argument("--cache", default=os.path.join(
        os.environ.get("TMPDIR", "/tmp"), "sklearn_sketch_bench_accuracy"),
        help="bench_accuracy_memory.py's cache (20 Newsgroups tokens)")
    parser.add_argument("--dask", action="store_true",
                        help="also time sklearn_sketch.dask.fit on a LocalCluster of as many "
                             "worker processes as each --jobs value")
    parser.add_argument("--repeats", type=int, default=1,
                        help="time the best of this many fits of each setting")
    parser.add_argument("--json", help="write every number to this file")
    args = parser.parse_args(argv)
    jobs = [int(j) for j in args.jobs.split(",")]
    print(f"sklearn_sketch {sk.__version__}; {os.cpu_count()} cores; {platform.processor()}; "
          f"{time.strftime('%Y-%m-%d %H:%M')}; epochs {args.epochs}")
    X_tr, y_tr, X_te, y_te = load_dna_task(n_train=args.n_train)
    datasets = {"DNA": (X_tr, y_tr, X_te, y_te)}
    tokens = load_ng_tokens(args.cache)
    if tokens is None:
        print(f"(20 Newsgroups tokens not in {args.cache}: run bench_accuracy_memory.py "
              "--datasets ng-tokens with that --cache first)")
    else:
        datasets["20NG tokens"] = tokens
    results = {"epochs": args.epochs, "repeats": args.repeats, "jobs": jobs, "fits": [],
               "merge": [], "time_to_accuracy": []}
    for name, data in datasets.items():
        print(f"\n== {name}: {data[0].shape[0]:,} training rows, {data[0].nnz:,} non-zeros ==")
        print(f"{'estimator':16s}" + "".join(f"  n_jobs={j}: s/epoch  acc" for j in jobs)
              + "   time ratio")
        for est_name, make in ESTIMATORS.items():
            row = []
            for n_jobs in jobs:
                seconds, accuracy, n_bytes = time_epochs(make, n_jobs, args.epochs, data,
                                                       args.repeats)
                row.append((seconds, accuracy))
                results["fits"].append({"data": name, "estimator": est_name, "n_jobs": n_jobs,
                                        "seconds_per_epoch": seconds, "accuracy": accuracy,
                                        "memory_bytes": n_bytes})
            ratio = row[-1][0] / row[0][0]
            print(f"{est_name:16s}" + "".join(f"  {s:17.2f}  {a:.3f}" for s, a in row)
                  + f"   {ratio:.2f}x")
    if args.dask:
        print("\n== sklearn_sketch.dask.fit on a LocalCluster (worker processes) ==")
        for name, data in datasets.items():
            for est_name, make in ESTIMATORS.items():
                row = []
                for n_workers in jobs:
                    seconds, added, accuracy = time_dask_epochs(make, n_workers, args.epochs,
                                                                data, args.repeats)
                    row.append((seconds, added, accuracy))
                    results["fits"].append({"data": name, "estimator": est_name,
                                            "dask_workers": n_workers,
                                            "seconds_per_epoch": seconds,
                                            "added_epoch_seconds": added,
                                            "accuracy": accuracy})
                print(f"{name:12s} {est_name:16s}" + "".join(
                    f"  {w} workers: {s:6.2f} s/epoch {a:.3f}" for w, (s, _, a) in zip(jobs, row))
                    + f"   {row[-1][0] / row[0][0]:.2f}x" + (
                        f"; an added epoch {row[-1][1] / row[0][1]:.2f}x"
                        if row[0][1] else ""))
    if args.dask and len(jobs) > 1:
        workers = jobs[-1]
        print(f"\n== time to the single-process accuracy (within {ACCURACY_TOLERANCE:.2f}) "
              f"on {workers} Dask workers ==")
        for name, data in datasets.items():
            for est_name, make in ESTIMATORS.items():
                single = next(f for f in results["fits"] if f.get("n_jobs") == jobs[0]
                              and (f["data"], f["estimator"]) == (name, est_name))
                one_worker = next((f for f in results["fits"] if f.get("dask_workers") == 1
                                   and (f["data"], f["estimator"]) == (name, est_name)), None)
                target = single["accuracy"] - ACCURACY_TOLERANCE
                records = dask_time_to_accuracy(make, workers, target,
                                                MAX_EPOCHS_FACTOR * args.epochs, data)
                row = {"data": name, "estimator": est_name, "dask_workers": workers,
                       "single_accuracy": single["accuracy"],
                       "single_seconds": single["seconds_per_epoch"] * args.epochs,
                       "one_worker_seconds": one_worker and
                       one_worker["seconds_per_epoch"] * args.epochs,
                       "records": records, "reached": records[-1]["accuracy"] >= target}
                results["time_to_accuracy"].append(row)
                last = records[-1]
                print(f"{name:12s} {est_name:16s} one process {single['accuracy']:.3f} in "
                      f"{row['single_seconds']:6.2f} s; {workers} workers "
                      f"{last['accuracy']:.3f} after {last['epochs']} epochs in "
                      f"{last['seconds']:6.2f} s ({last['seconds'] / row['single_seconds']:.2f}x)"
                      + ("" if row["reached"] else ", not reached"))
    print("\n== average_estimators of two WM-Sketches: seconds by model bytes and rows ==")
    merge = merge_cost(X_tr, y_tr, ["1MB", "4MB", "16MB", "64MB"], [2_000, 20_000])
    results["merge"] = merge
    for m in merge:
        print(f"  {m['budget']:>5s} ({m['model_bytes']:>10,} B), {m['rows']:>6,} rows each: "
              f"{m['seconds'] * 1e3:8.1f} ms")
    big = [m for m in merge if m["rows"] == 20_000]
    per_byte = np.mean([m["seconds"] / m["model_bytes"] for m in big])
    print(f"  about {per_byte * 2**20 * 1e3:.1f} ms per MiB of model and pair of models")
    print("\n== extrapolated epoch time at w workers (one per machine, network not counted) ==")
    for fit in (f for f in results["fits"] if f.get("n_jobs") == 1):
        t1, model = fit["seconds_per_epoch"], fit["memory_bytes"]
        line = [f"{fit['data']:12s} {fit['estimator']:15s} T(1)={t1:6.2f}s"]
        for w in (8, 32, 128):
            flat = t1 / w + per_byte * model * (w - 1)
            tree = t1 / w + per_byte * model * np.log2(w)
            line.append(f"w={w}: {flat:6.2f}s / tree {tree:6.2f}s")
        print("  " + "  ".join(line))
    if args.json:
        results["provenance"] = provenance()
        results["tables"] = parallel_tables(results, jobs, per_byte)
        Path(args.json).write_text(json.dumps(results, indent=1))


if __name__ == "__main__":
    main()
