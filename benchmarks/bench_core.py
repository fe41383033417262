"""Throughput of the compiled core: Count-Sketch updates and queries, heap offers.

Prints key-updates/s and queries/s for depth 1, 3, 5 at widths 2^14, 2^18, 2^22
beside a NumPy reference (``np.add.at`` on the same precomputed cells, so the
reference does not even pay for hashing), and heap offers/s at several capacities.

    python benchmarks/bench_core.py [--n-keys N] [--repeats R] [--json out.json]
"""

import argparse
import json
import platform
import time

import numpy as np

from sklearn_sketch import CountSketch, TopKHeap


def best_time(function, repeats):
    """Smallest wall time of ``repeats`` calls."""
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        function()
        times.append(time.perf_counter() - start)
    return min(times)


def bench_sketch(keys, deltas, depth, width, repeats):
    sketch = CountSketch(width, depth, random_state=0)
    update = best_time(lambda: sketch.update(keys, deltas), repeats)
    query = best_time(lambda: sketch.query(keys), repeats)

    buckets, signs = sketch.buckets(keys)
    cells = (buckets + np.arange(depth)[:, None] * width).ravel()
    signed = (signs * deltas[None, :]).ravel().astype(np.float32)
    table = np.zeros(depth * width, dtype=np.float32)
    numpy_update = best_time(lambda: np.add.at(table, cells, signed), repeats)
    n = len(keys)
    return {
        "depth": depth,
        "width": width,
        "update_keys_per_s": n / update,
        "query_keys_per_s": n / query,
        "numpy_add_at_keys_per_s": n / numpy_update,
        "speedup_vs_numpy": numpy_update / update,
    }


def bench_heap(keys, weights, capacity, repeats):
    def run():
        TopKHeap(capacity).push_many(keys, weights)

    return {"capacity": capacity, "offers_per_s": len(keys) / best_time(run, repeats)}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n-keys", type=int, default=2_000_000)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--json", help="also write the results to this file")
    args = parser.parse_args(argv)

    rng = np.random.default_rng(0)
    keys = rng.integers(0, 4**12, size=args.n_keys, dtype=np.int64)
    deltas = rng.normal(size=args.n_keys)

    print(
        f"Count-Sketch, float32 table, {args.n_keys:,} random 12-mer keys, best of {args.repeats}"
    )
    print(
        f"{'depth':>5} {'width':>9} {'update M/s':>11} {'query M/s':>10} "
        f"{'np.add.at M/s':>14} {'update/numpy':>13}"
    )
    sketch_rows = []
    for depth in (1, 3, 5):
        for log_width in (14, 18, 22):
            row = bench_sketch(keys, deltas, depth, 2**log_width, args.repeats)
            sketch_rows.append(row)
            print(
                f"{depth:>5} {'2^%d' % log_width:>9} {row['update_keys_per_s'] / 1e6:>11.1f} "
                f"{row['query_keys_per_s'] / 1e6:>10.1f} "
                f"{row['numpy_add_at_keys_per_s'] / 1e6:>14.1f} "
                f"{row['speedup_vs_numpy']:>12.1f}x"
            )

    print(f"\nTopKHeap push_or_update, {args.n_keys:,} offers of random keys and weights")
    print(f"{'capacity':>9} {'offers M/s':>11}")
    heap_rows = []
    weights = rng.normal(size=args.n_keys)
    for capacity in (2**10, 2**14, 2**18):
        row = bench_heap(keys, weights, capacity, args.repeats)
        heap_rows.append(row)
        print(f"{capacity:>9} {row['offers_per_s'] / 1e6:>11.1f}")

    if args.json:
        with open(args.json, "w") as f:
            json.dump(
                {
                    "machine": platform.processor() or platform.machine(),
                    "n_keys": args.n_keys,
                    "sketch": sketch_rows,
                    "heap": heap_rows,
                },
                f,
                indent=2,
            )


if __name__ == "__main__":
    main()
