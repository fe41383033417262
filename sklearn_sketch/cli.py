"""Command line of sklearn-sketch: ``sklearn-sketch demo``."""
import argparse
import sys
import time

import numpy as np

from ._core import CountSketch, TopKHeap, track_heavy_hitters


def _zipf_stream(n_items, n_distinct, exponent, rng):
    """A stream of 64-bit keys whose frequencies follow a Zipf law."""
    universe = rng.integers(-(2**62), 2**62, size=n_distinct, dtype=np.int64)
    ranks = np.arange(1, n_distinct + 1, dtype=np.float64)
    probabilities = ranks**-exponent
    probabilities /= probabilities.sum()
    return universe[rng.choice(n_distinct, size=n_items, p=probabilities)]


def run_heavy_hitters_demo(n_items=2_000_000, n_distinct=200_000, top=20, width=2**12,
                           depth=5, random_state=0, out=None):
    """Recover the heaviest keys of a Zipf stream with a Count-Sketch and a heap.

    Prints the true and estimated counts of the top keys, the recall of the
    exact top ``top`` and the memory of the sketch against an exact counter.

    Returns
    -------
    recall : float
        Fraction of the exact top ``top`` keys found in the heap.
    """
    out = sys.stdout if out is None else out
    rng = np.random.default_rng(random_state)
    stream = _zipf_stream(n_items, n_distinct, 1.1, rng)
    sketch = CountSketch(width, depth, random_state=random_state)
    heap = TopKHeap(top)
    start = time.perf_counter()
    track_heavy_hitters(sketch, heap, stream)
    seconds = time.perf_counter() - start

    distinct, counts = np.unique(stream, return_counts=True)
    order = np.argsort(-counts, kind="stable")[:top]
    true_top = dict(zip(distinct[order].tolist(), counts[order].tolist()))
    keys, estimates = heap.items()
    recall = len(set(keys.tolist()) & set(true_top)) / top

    print(f"Stream: {n_items:,} items, {len(distinct):,} distinct 64-bit keys (Zipf 1.1)", file=out)
    print(f"Sketch: depth {depth} x width {width:,} + heap of {top}: "
          f"{(sketch.memory_bytes + heap.memory_bytes) / 1024:,.0f} KiB "
          f"(an exact counter needs >= {len(distinct) * 16 / 1024:,.0f} KiB); "
          f"{n_items / seconds / 1e6:,.1f} M items/s", file=out)
    print(f"\n{'key':>22} {'true count':>11} {'estimate':>10}", file=out)
    for key, estimate in zip(keys[:10].tolist(), estimates[:10].tolist()):
        true = int(counts[np.searchsorted(distinct, key)])
        print(f"{key:>22} {true:>11,} {estimate:>10,.0f}", file=out)
    print(f"\nRecall of the exact top {top}: {recall:.0%}", file=out)
    return recall


def main(argv=None):
    """Entry point of the ``sklearn-sketch`` command."""
    parser = argparse.ArgumentParser(prog="sklearn-sketch", description=__doc__)
    commands = parser.add_subparsers(dest="command", required=True)
    demo = commands.add_parser("demo", help="recover heavy hitters of a stream with a sketch")
    demo.add_argument("--items", type=int, default=2_000_000)
    demo.add_argument("--top", type=int, default=20)
    demo.add_argument("--width", type=int, default=2**12)
    demo.add_argument("--depth", type=int, default=5)
    demo.add_argument("--random-state", type=int, default=0)
    args = parser.parse_args(argv)
    if args.command == "demo":
        run_heavy_hitters_demo(n_items=args.items, top=args.top, width=args.width,
                               depth=args.depth, random_state=args.random_state)
    return 0


if __name__ == "__main__":
    sys.exit(main())
