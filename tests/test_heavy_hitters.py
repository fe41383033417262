import numpy as np
import pytest

from sklearn_sketch import CountSketch, TopKHeap
from sklearn_sketch._core import track_heavy_hitters
from sklearn_sketch.cli import main, run_heavy_hitters_demo


def exact_top(keys, deltas, k):
    """Top k of the exact totals by (|total|, key), descending."""
    totals = {}
    for key, delta in zip(keys.tolist(), deltas.tolist()):
        totals[key] = totals.get(key, 0.0) + delta
    ranked = sorted(totals.items(), key=lambda kv: (abs(kv[1]), kv[0]), reverse=True)
    return ranked[:k]


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_heavy_hitters_exact_without_collisions(seed):
    # With counts only growing and exact estimates, the heap ends with the exact top k.
    rng = np.random.default_rng(seed)
    universe = rng.integers(-(2**63), 2**63 - 1, size=300, dtype=np.int64)
    keys = universe[rng.zipf(1.5, size=20_000).clip(max=300) - 1]
    deltas = rng.integers(1, 4, size=keys.size).astype(np.float64)
    sketch, heap = CountSketch(2**22, 1, dtype=np.float64, random_state=seed), TopKHeap(25)
    track_heavy_hitters(sketch, heap, keys, deltas)
    heap.check_invariants()
    expected = exact_top(keys, deltas, 25)
    assert heap.keys().tolist() == [k for k, _ in expected]
    np.testing.assert_array_equal(heap.weights(), [w for _, w in expected])


def test_heavy_hitters_equals_item_by_item_replay():
    # The nogil loop equals update + query + push_or_update called per item,
    # on a small sketch where collisions make the estimates inexact.
    rng = np.random.default_rng(3)
    keys = rng.integers(0, 1000, size=3000)
    deltas = rng.normal(size=keys.size)
    fast_sketch, fast_heap = CountSketch(64, 3, random_state=0), TopKHeap(10)
    track_heavy_hitters(fast_sketch, fast_heap, keys, deltas)

    sketch, heap = CountSketch(64, 3, random_state=0), TopKHeap(10)
    for key, delta in zip(keys.tolist(), deltas.tolist()):
        sketch.update([key], [delta])
        heap.push_or_update(key, float(sketch.query([key])[0]))
    np.testing.assert_array_equal(fast_sketch.table, sketch.table)
    np.testing.assert_array_equal(fast_heap.keys(), heap.keys())
    np.testing.assert_array_equal(fast_heap.weights(), heap.weights())


def test_heavy_hitters_bad_input_leaves_state():
    sketch, heap = CountSketch(32, 2, random_state=0), TopKHeap(4)
    track_heavy_hitters(sketch, heap, [1, 2, 3])
    table, items = sketch.to_array(), heap.items()
    with pytest.raises(ValueError, match="finite"):
        track_heavy_hitters(sketch, heap, [1, 2], [1.0, np.nan])
    with pytest.raises(ValueError, match="equal length"):
        track_heavy_hitters(sketch, heap, [1, 2], [1.0])
    with pytest.raises(TypeError, match="integers"):
        track_heavy_hitters(sketch, heap, [1.5, 2.0])
    np.testing.assert_array_equal(sketch.to_array(), table)
    np.testing.assert_array_equal(heap.keys(), items[0])


def test_demo_recovers_the_top_keys(capsys):
    recall = run_heavy_hitters_demo(n_items=200_000, n_distinct=20_000, top=10,
                                    width=2**11, depth=5)
    out = capsys.readouterr().out
    assert recall == 1.0
    assert "Recall of the exact top 10: 100%" in out


def test_cli_demo_runs(capsys):
    assert main(["demo", "--heavy-hitters", "--items", "50000", "--top", "5"]) == 0
    assert "Recall of the exact top 5" in capsys.readouterr().out
