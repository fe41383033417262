"""The ``sklearn-sketch demo``: DNA reads by species at equal memory; heavy hitters."""
import sys
import time

import numpy as np

from .._core import CountSketch, TopKHeap, track_heavy_hitters
from ..bear import BearClassifier
from ..datasets import load_dna_sample
from ..feature_extraction import KmerVectorizer
from ..mission import FeatureHashingClassifier, MissionClassifier
from ..weight_median import AWMSketchClassifier


def _sketch_and_heap_bytes(estimator):
    """Bytes of the sketches and heaps only (BEAR's L-BFGS history excluded)."""
    return (sum(s.memory_bytes for s in estimator.sketches_)
            + sum(h.memory_bytes for h in estimator.heaps_))


def demo_estimators(n_features_to_select=8192, sketch_width=8192, sketch_depth=3,
                    max_iter=2, random_state=0):
    """The four estimators of the demo, sized to the same sketch + heap memory.

    MISSION and BEAR hold a depth-``sketch_depth`` sketch and a heap per class;
    the Active-Set WM-Sketch the same heap and a depth-1 sketch with as many
    cells; feature hashing spends the whole amount on hashed weights. Each
    keeps its default steps, as a user who changes nothing would.

    Returns
    -------
    estimators : dict of str to estimator
    """
    cell_bytes = CountSketch(2, 1).memory_bytes - CountSketch(1, 1).memory_bytes
    per_model = (CountSketch(sketch_width, sketch_depth).memory_bytes
                 + TopKHeap(n_features_to_select).memory_bytes)
    shared = dict(max_iter=max_iter, random_state=random_state)
    return {
        "MissionClassifier": MissionClassifier(
            n_features_to_select, sketch_width=sketch_width, sketch_depth=sketch_depth,
            **shared),
        "BearClassifier": BearClassifier(
            n_features_to_select, sketch_width=sketch_width, sketch_depth=sketch_depth,
            **shared),
        "AWMSketchClassifier": AWMSketchClassifier(
            None, n_features_to_select=n_features_to_select,
            sketch_width=sketch_width * sketch_depth, sketch_depth=1, **shared),
        "FeatureHashingClassifier": FeatureHashingClassifier(
            sketch_width=per_model // cell_bytes, **shared),
    }


def run_dna_demo(n_reads_per_class=4000, k=12, n_top=5, random_state=0, out=None):
    """Train four sketched classifiers on embedded DNA reads and compare them.

    Reads of four bacterial species are sampled from the train strains
    (:func:`~sklearn_sketch.datasets.load_dna_sample`), counted into ``4**k``
    k-mer columns, and each estimator is scored on reads of the held-out
    strains. Prints a table (accuracy, memory, fit time) and the heaviest
    k-mers of each species for MISSION and BEAR.

    Parameters
    ----------
    n_reads_per_class : int, default=4000
        Training reads per species (a quarter as many test reads).
    k : int, default=12
        k-mer length.
    n_top : int, default=5
        k-mers shown per species.
    random_state : int, default=0
        Seed of the sampling and of the estimators.
    out : file-like, default=None
        Where to print; default ``sys.stdout``.

    Returns
    -------
    accuracies : dict of str to float
        Held-out accuracy of each estimator.
    """
    out = sys.stdout if out is None else out
    train = load_dna_sample(n_reads_per_class, k=k, random_state=random_state)
    test = load_dna_sample(max(1, n_reads_per_class // 4), k=k, split="test",
                           random_state=random_state + 1)
    species = train.target_names
    print(f"Reads of 200 bp from {', '.join(species)}: {len(train.reads):,} from the train "
          f"strains, {len(test.reads):,} from held-out strains; {k}-mers give "
          f"{4**k:,} features.\n", file=out)
    print(f"{'estimator':<26}{'accuracy':>9}{'sketch+heap':>13}{'memory_bytes_':>15}"
          f"{'fit time':>10}", file=out)
    accuracies, fitted = {}, {}
    for name, estimator in demo_estimators(random_state=random_state).items():
        start = time.perf_counter()
        estimator.fit(train.X, train.target)
        seconds = time.perf_counter() - start
        accuracies[name] = float(estimator.score(test.X, test.target))
        fitted[name] = estimator
        print(f"{name:<26}{accuracies[name]:>9.3f}"
              f"{_sketch_and_heap_bytes(estimator) / 2**20:>9.2f} MiB"
              f"{estimator.memory_bytes_ / 2**20:>11.2f} MiB{seconds:>8.2f} s", file=out)
    print("(memory_bytes_ of BEAR adds its L-BFGS history; chance accuracy is "
          f"{1 / len(species):.2f})", file=out)

    vectorizer = KmerVectorizer(k=k)
    for name in ("MissionClassifier", "BearClassifier"):
        selected = fitted[name].selected_features_
        print(f"\nHeaviest {k}-mers per species ({name}):", file=out)
        for c, label in enumerate(species):
            top = np.argsort(-selected.weights[:, c], kind="stable")[:n_top]
            kmers = vectorizer.decode(selected.keys[top])
            listed = "  ".join(f"{kmer} {w:+.3f}"
                               for kmer, w in zip(kmers, selected.weights[top, c]))
            print(f"  {label:<11} {listed}", file=out)
    return accuracies


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
