"""BEAR beside MISSION as the sketch shrinks: the BEAR paper's Fig. 2 axis on the DNA task.

E. coli vs S. aureus reads (see ``dna_task.py``; train and test from different
strains), one pass, the same sketch depth (3), heap size (2^14), hashes and
batch order for both. For each sketch width it prints the compression factor
(``4^12 / (depth * width)``), fit time, model memory, test accuracy reading
the heap only (the selected features: the paper's model) and reading the
sketch for the other features, and the online error rate. MISSION runs with
the batch of the throughput benchmark (1) and with BEAR's (64).

    python benchmarks/bench_bear.py [--n-train 200000] [--widths 12,14,16] [--json out.json]
"""
import argparse
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from dna_task import load_dna_task  # noqa: E402

from sklearn_sketch import BearClassifier, MissionClassifier  # noqa: E402

DEPTH, K, P = 3, 2**14, 4**12


def contenders(width):
    common = dict(sketch_width=width, sketch_depth=DEPTH, max_iter=1, random_state=0,
                  learning_rate="constant")
    return [
        ("MISSION, batch 1", MissionClassifier(K, eta0=0.01, **common)),
        ("MISSION, batch 64", MissionClassifier(K, eta0=0.1, batch_size=64, **common)),
        ("BEAR, batch 64, history 5",
         BearClassifier(K, batch_size=64, history_size=5, **common)),
    ]


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n-train", type=int, default=200_000)
    parser.add_argument("--n-test", type=int, default=20_000)
    parser.add_argument("--widths", default="12,14,16", help="log2 of the sketch widths")
    parser.add_argument("--json", help="also write the results to this file")
    args = parser.parse_args(argv)

    X_train, y_train, X_test, y_test = load_dna_task(n_train=args.n_train, n_test=args.n_test)
    print(f"DNA 12-mers: {X_train.shape[0]:,} train reads, {X_train.nnz:,} non-zeros, "
          f"{X_test.shape[0]:,} test reads from held-out strains; depth {DEPTH}, k = {K}\n")
    print(f"{'width':>7} {'CF':>6} {'estimator':26} {'fit s':>6} {'memory':>9} "
          f"{'acc heap':>9} {'acc sketch':>10} {'online err':>10}")
    rows = []
    for log_width in (int(w) for w in args.widths.split(",")):
        width = 2**log_width
        for name, estimator in contenders(width):
            start = time.perf_counter()
            estimator.fit(X_train, y_train)
            seconds = time.perf_counter() - start
            heap_accuracy = estimator.score(X_test, y_test)
            sketch_accuracy = estimator.set_params(predict_with="sketch").score(X_test, y_test)
            row = {"width": width, "compression_factor": P / (DEPTH * width), "name": name,
                   "seconds": seconds, "memory_bytes": estimator.memory_bytes_,
                   "accuracy_heap": heap_accuracy, "accuracy_sketch": sketch_accuracy,
                   "online_error_rate": estimator.online_error_rate_}
            rows.append(row)
            print(f"2^{log_width:<5} {row['compression_factor']:6.0f} {name:26} {seconds:6.2f} "
                  f"{row['memory_bytes'] / 2**20:7.2f}MB {heap_accuracy:9.4f} "
                  f"{sketch_accuracy:10.4f} {row['online_error_rate']:10.4f}", flush=True)
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"n_train": X_train.shape[0], "nnz": X_train.nnz, "results": rows}, f,
                      indent=2)


if __name__ == "__main__":
    main()
