"""TopKHeap: agreement with a pure-Python model of the documented semantics."""
import copy
import pickle
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sklearn_sketch._core import TopKHeap

sys.path.insert(0, str(Path(__file__).parent))
from _reference import fmix64  # noqa: E402

INT64_MIN = -(2**63)
INT64_MAX = 2**63 - 1


# --------------------------------------------------------------------------- reference model
class RefHeap:
    """Dict model: order by (|w|, key); a new key enters a full heap only above the min."""

    def __init__(self, capacity):
        self.capacity = capacity
        self.d = {}

    def _order(self, key):
        return (abs(self.d[key]), key)

    def min(self):
        if not self.d:
            raise IndexError("empty")
        k = min(self.d, key=self._order)
        return (k, self.d[k])

    def push_or_update(self, key, weight):
        weight = float(weight)
        if key in self.d:
            self.d[key] = weight
            return None
        if len(self.d) < self.capacity:
            self.d[key] = weight
            return None
        mk, mw = self.min()
        if (abs(weight), key) > (abs(mw), mk):
            del self.d[mk]
            self.d[key] = weight
            return (mk, mw)
        return (key, weight)

    def remove(self, key):
        return self.d.pop(key)

    def pop_min(self):
        k, w = self.min()
        del self.d[k]
        return (k, w)

    def scale(self, factor):
        for k in self.d:
            self.d[k] *= factor

    def clear(self):
        self.d.clear()

    def items(self):
        keys = sorted(self.d, key=self._order, reverse=True)
        return keys, [self.d[k] for k in keys]


def same_result(a, b):
    """Equal results, treating (key, weight) tuples with exact float equality."""
    if a is None or b is None:
        return a is None and b is None
    return tuple(a) == tuple(b)


def apply(obj, op):
    """Apply ``op`` to a heap or the model; return ('ok', value) or ('err', exception type)."""
    name, *args = op
    try:
        return ("ok", getattr(obj, name)(*args))
    except (KeyError, IndexError) as exc:
        return ("err", type(exc))


def assert_matches(heap, ref, probe_keys=()):
    heap.check_invariants()
    assert len(heap) == len(ref.d)
    keys, weights = heap.items()
    assert keys.dtype == np.int64 and weights.dtype == np.float64
    rkeys, rweights = ref.items()
    assert keys.tolist() == rkeys
    assert weights.tolist() == rweights
    assert heap.keys().tolist() == rkeys
    assert heap.weights().tolist() == rweights
    if ref.d:
        assert heap.min() == ref.min()
    else:
        with pytest.raises(IndexError):
            heap.min()
    for k in probe_keys:
        assert heap.contains(k) == (k in ref.d)
        assert (k in heap) == (k in ref.d)
        assert heap.get(k) == ref.d.get(k)
        assert heap.get(k, "absent") == ref.d.get(k, "absent")


def run_ops(heap, ref, ops, probe_keys=(), check_every=1):
    for i, op in enumerate(ops):
        got, want = apply(heap, op), apply(ref, op)
        assert got[0] == want[0], (op, got, want)
        if got[0] == "err":
            assert got[1] is want[1]
        elif op[0] in ("push_or_update", "pop_min"):
            assert same_result(got[1], want[1]), (op, got, want)
        elif op[0] == "remove":
            assert got[1] == want[1]
        if check_every and (i + 1) % check_every == 0:
            assert_matches(heap, ref, probe_keys)
    assert_matches(heap, ref, probe_keys)


# --------------------------------------------------------------------------- stateful
KEY_POOL = [-3, -1, 0, 1, 2, 3, 4, 5, 6, 7, 8, INT64_MIN, INT64_MAX]
WEIGHTS = [0.0, -0.0, 1.0, -1.0, 2.0, -2.0, 0.5, -0.5, 3.0, 1.5]
# powers of two (and 0) keep every product exact, so the model can be compared exactly
FACTORS = [2.0, 0.5, -1.0, 0.25, -4.0, 2.0**-12, 0.0]

# op kinds drawn with weights: mostly pushes, so the heap is usually full and evicts / rejects
OP_KINDS = ["push_or_update"] * 12 + ["remove"] * 3 + ["pop_min", "scale", "scale", "clear"]


def _make_op(kind, key, weight, factor):
    if kind == "push_or_update":
        return (kind, key, weight)
    if kind == "remove":
        return (kind, key)
    if kind == "scale":
        return (kind, factor)
    return (kind,)


op_st = st.builds(_make_op, st.sampled_from(OP_KINDS), st.sampled_from(KEY_POOL),
                  st.sampled_from(WEIGHTS), st.sampled_from(FACTORS))


@settings(max_examples=400, deadline=None)
@given(capacity=st.integers(1, 8), ops=st.lists(op_st, max_size=60))
def test_matches_reference_model(capacity, ops):
    heap, ref = TopKHeap(capacity), RefHeap(capacity)
    assert heap.capacity == capacity
    run_ops(heap, ref, ops, probe_keys=KEY_POOL)


def test_docstring_example():
    heap = TopKHeap(2)
    assert heap.push_or_update(10, 0.5) is None
    assert heap.push_or_update(11, -2.0) is None
    assert heap.push_or_update(12, 1.0) == (10, 0.5)
    assert heap.keys().tolist() == [11, 12]
    assert heap.weights().tolist() == [-2.0, 1.0]
    assert heap.get(11) == -2.0 and 10 not in heap


def test_ties_are_broken_by_key():
    heap = TopKHeap(3)
    for k in (5, 1, 9):
        assert heap.push_or_update(k, -1.0 if k == 9 else 1.0) is None
    assert heap.min() == (1, 1.0)
    # same |weight|, smaller key than the min: rejected, returned as given
    assert heap.push_or_update(0, -1.0) == (0, -1.0)
    # same |weight|, larger key than the min: enters and evicts the min
    assert heap.push_or_update(7, 1.0) == (1, 1.0)
    assert heap.keys().tolist() == [9, 7, 5]
    # an existing key is updated in place whatever its weight, even to 0
    assert heap.push_or_update(9, 0.0) is None
    assert heap.min() == (9, 0.0)
    assert heap.keys().tolist() == [7, 5, 9]
    heap.check_invariants()
    # returned keys and weights are plain python numbers
    k, w = heap.pop_min()
    assert type(k) is int and type(w) is float


# --------------------------------------------------------------------------- long runs
def random_ops(rng, n, key_pool, weight_fn, p_remove=0.15, p_pop=0.03, p_scale=0.01):
    ops = []
    for _ in range(n):
        r = rng.random()
        key = int(key_pool[rng.integers(len(key_pool))])
        if r < p_remove:
            ops.append(("remove", key))
        elif r < p_remove + p_pop:
            ops.append(("pop_min",))
        elif r < p_remove + p_pop + p_scale:
            ops.append(("scale", float(rng.choice([2.0, 0.5, -1.0, 0.25, 4.0]))))
        else:
            ops.append(("push_or_update", key, weight_fn(rng)))
    return ops


def test_long_random_run_small_keys():
    rng = np.random.default_rng(0)
    key_pool = np.arange(0, 501)
    weights = np.array([0.0, 0.25, 0.5, 1.0, 2.0, 3.0, 1e3]) * np.array([[1.0], [-1.0]])
    weights = weights.ravel()

    def weight_fn(r):
        if r.random() < 0.5:
            return float(weights[r.integers(len(weights))])
        return float(r.integers(-64, 64)) / 8.0

    heap, ref = TopKHeap(64), RefHeap(64)
    ops = random_ops(rng, 20000, key_pool, weight_fn)
    run_ops(heap, ref, ops, probe_keys=range(-2, 503, 7), check_every=1000)
    assert len(heap) == 64


def test_long_random_run_int64_keys_many_removes():
    rng = np.random.default_rng(1)
    key_pool = rng.integers(INT64_MIN, INT64_MAX, size=400, dtype=np.int64, endpoint=True)
    key_pool[:6] = [INT64_MIN, INT64_MAX, 0, -1, 2**32, -(2**32)]

    def weight_fn(r):
        return float(r.integers(-20, 21)) / 4.0

    heap, ref = TopKHeap(64), RefHeap(64)
    ops = random_ops(rng, 20000, key_pool, weight_fn, p_remove=0.4, p_pop=0.05)
    probe = [int(k) for k in key_pool[::5]]
    run_ops(heap, ref, ops, probe_keys=probe, check_every=1000)


def _home(key, n_slots):
    """Home slot of ``key`` in a key map of ``n_slots`` slots (multiply-shift)."""
    return ((fmix64(key) >> 32) * n_slots) >> 32


@pytest.mark.parametrize("capacity", [1, 3, 8, 16])
def test_colliding_keys_backward_shift_deletion(capacity):
    """Keys crafted to share home slots (wrapping at the end of the map) in the key map."""
    n_slots = TopKHeap(capacity).n_slots
    last = n_slots - 1
    homes = {last: [], 0: [], 1: [], last // 2: []}
    k = -5000
    while min(len(v) for v in homes.values()) < capacity + 2:
        h = _home(k, n_slots)
        if h in homes:
            homes[h].append(k)
        k += 1
    keys = [k for v in homes.values() for k in v]
    rng = np.random.default_rng(capacity)
    heap, ref = TopKHeap(capacity), RefHeap(capacity)
    for rep in range(12):
        ops = []
        for _ in range(200):
            key = int(rng.choice(keys))
            r = rng.random()
            if r < 0.45:
                ops.append(("remove", key))
            elif r < 0.5:
                ops.append(("pop_min",))
            else:
                ops.append(("push_or_update", key, float(rng.integers(-8, 9))))
        run_ops(heap, ref, ops, probe_keys=keys, check_every=1)


@settings(max_examples=100, deadline=None)
@given(capacity=st.integers(1, 8),
       pairs=st.lists(st.tuples(st.sampled_from(KEY_POOL), st.sampled_from(WEIGHTS)),
                      max_size=40),
       factor=st.sampled_from(FACTORS[:-1]))
def test_push_many_equals_sequential_pushes(capacity, pairs, factor):
    one, two = TopKHeap(capacity), TopKHeap(capacity)
    ref = RefHeap(capacity)
    for heap in (one, two):
        heap.push_or_update(1, 1.0)
        heap.scale(factor)
    ref.push_or_update(1, 1.0)
    ref.scale(factor)
    one.push_many(np.array([k for k, _ in pairs], dtype=np.int64), [w for _, w in pairs])
    for k, w in pairs:
        two.push_or_update(k, w)
        ref.push_or_update(k, w)
    assert_matches(one, ref, probe_keys=KEY_POOL)
    assert_matches(two, ref, probe_keys=KEY_POOL)


def test_push_many_bad_input_leaves_heap_unchanged():
    heap = TopKHeap(4)
    heap.push_many([1, 2, 3], [1.0, -2.0, 3.0])
    assert heap.keys().tolist() == [3, 2, 1]
    before = snapshot(heap)
    cases = [
        (ValueError, [4, 5], [1.0, np.nan]),
        (ValueError, [4, 5], [np.inf, 1.0]),
        (ValueError, [4, 5, 6], [1.0, 2.0]),
        (ValueError, [[4, 5]], [[1.0, 2.0]]),
        (TypeError, [4.0, 5.0], [1.0, 2.0]),
        (TypeError, [4, 5], ["a", "b"]),
        (ValueError, np.array([2**63], dtype=np.uint64), [1.0]),
    ]
    for exc, keys, weights in cases:
        with pytest.raises(exc):
            heap.push_many(keys, weights)
        assert snapshot(heap) == before
    heap.push_many([], [])
    assert snapshot(heap) == before
    heap.push_many(np.int64(9), 10.0)  # scalars are accepted as length-1 arrays
    assert heap.get(9) == 10.0


# --------------------------------------------------------------------------- scaling
def test_scale_down_past_renormalization_exact():
    rng = np.random.default_rng(2)
    heap, ref = TopKHeap(32), RefHeap(32)
    for key in range(60):
        w = float(rng.integers(-6, 7)) * 0.5  # many ties
        assert same_result(heap.push_or_update(key, w), ref.push_or_update(key, w))
    order = heap.keys().tolist()
    for _ in range(12):  # 2**-84 overall: renormalizes several times
        heap.scale(2.0**-7)
        ref.scale(2.0**-7)
        assert_matches(heap, ref, probe_keys=range(60))
        assert heap.keys().tolist() == order
    # and the heap still works at the small scale
    run_ops(heap, ref, [("push_or_update", 100, 2.0**-80), ("push_or_update", 101, 2.0**-90),
                        ("pop_min",), ("remove", order[0]), ("scale", 2.0**40)],
            probe_keys=range(105))


def test_scale_down_past_renormalization_inexact():
    rng = np.random.default_rng(3)
    heap = TopKHeap(20)
    weights = rng.normal(size=20) * 10.0 ** rng.integers(-3, 4, size=20)
    for key, w in enumerate(weights):
        heap.push_or_update(key, float(w))
    keys0, w0 = heap.items()
    expected = w0.copy()
    for _ in range(25):
        heap.scale(0.1)
        expected = expected * 0.1
        heap.check_invariants()
        keys, w = heap.items()
        assert keys.tolist() == keys0.tolist()
        np.testing.assert_allclose(w, expected, rtol=1e-12)
        assert heap.min()[0] == keys0[-1]
        np.testing.assert_allclose(heap.get(int(keys0[0])), expected[0], rtol=1e-12)
    assert abs(expected[0]) < 1e-20


def test_scale_zero_then_ties_broken_by_key():
    heap = TopKHeap(5)
    for key, w in [(3, 5.0), (1, -4.0), (4, 3.0), (0, 2.0), (2, -1.0)]:
        heap.push_or_update(key, w)
    heap.scale(0.0)
    heap.check_invariants()
    assert heap.keys().tolist() == [4, 3, 2, 1, 0]
    assert heap.min() == (0, 0.0)
    assert heap.push_or_update(-1, 0.0) == (-1, 0.0)
    assert heap.push_or_update(9, 0.0) == (0, 0.0)
    assert heap.push_or_update(1, 7.0) is None
    assert heap.keys().tolist() == [1, 9, 4, 3, 2]


def test_negative_scale_flips_signs():
    heap = TopKHeap(3)
    for key, w in [(1, 1.0), (2, -2.0), (3, 3.0)]:
        heap.push_or_update(key, w)
    heap.scale(-2.0)
    assert heap.weights().tolist() == [-6.0, 4.0, -2.0]
    assert heap.get(2) == 4.0
    # pushing into a scaled heap stores on the visible scale
    assert heap.push_or_update(4, 5.0) == (1, -2.0)
    assert heap.get(4) == 5.0
    assert heap.remove(3) == -6.0
    heap.check_invariants()


def test_min_consistent_with_items_after_inexact_scale():
    """``min()`` / ``pop_min()`` must agree with the order ``items()`` reports after a scale.

    Two weights one ulp apart become equal after ``scale(s)`` (rounding of the lazy
    factor). ``items()`` sorts the reported weights by ``(|weight|, key)``, so it breaks the
    tie by key; the heap still orders the stored (pre-scale) weights, so ``min()`` returns
    the other entry. Known core bug (see the test-suite report): whichever order the fix
    chooses, ``min()`` must be the last entry of ``items()``.
    """
    x = 1.8631789223498867
    y = float(np.nextafter(x, 3.0))
    s = 5.4604660804660075
    assert x != y and x * s == y * s  # the tie created by rounding
    heap = TopKHeap(2)
    heap.push_or_update(5, x)
    heap.push_or_update(3, y)
    heap.scale(s)
    heap.check_invariants()
    keys, weights = heap.items()
    assert heap.min() == (int(keys[-1]), float(weights[-1]))
    popped = [heap.pop_min() for _ in range(2)]
    assert popped == list(zip(keys.tolist()[::-1], weights.tolist()[::-1]))


# --------------------------------------------------------------------------- pickle
@pytest.mark.parametrize("how", ["pickle", "deepcopy", "copy"])
def test_pickle_round_trip_and_continuation(how):
    rng = np.random.default_rng(4)
    key_pool = np.concatenate([np.arange(-20, 40), [INT64_MIN, INT64_MAX]])

    def weight_fn(r):
        return float(r.integers(-12, 13)) / 4.0

    ops = random_ops(rng, 3000, key_pool, weight_fn, p_scale=0.02)
    heap, ref = TopKHeap(16), RefHeap(16)
    run_ops(heap, ref, ops[:1500], check_every=0)
    heap.scale(0.5)
    ref.scale(0.5)
    if how == "pickle":
        other = pickle.loads(pickle.dumps(heap))
    elif how == "deepcopy":
        other = copy.deepcopy(heap)
    else:
        other = copy.copy(heap)
    assert type(other) is TopKHeap and other.capacity == heap.capacity
    other.check_invariants()
    assert len(other) == len(heap)
    assert other.min() == heap.min()
    for a, b in zip(other.items(), heap.items()):
        np.testing.assert_array_equal(a, b)
    assert other.memory_bytes == heap.memory_bytes
    # continuing the same sequence gives identical results on both, and matches the model
    for op in ops[1500:]:
        r1, r2 = apply(heap, op), apply(other, op)
        assert r1 == r2, op
        apply(ref, op)
    assert_matches(heap, ref, probe_keys=key_pool.tolist())
    assert_matches(other, ref, probe_keys=key_pool.tolist())


def test_pickle_copy_is_independent():
    heap = TopKHeap(4)
    for k in range(4):
        heap.push_or_update(k, float(k + 1))
    other = pickle.loads(pickle.dumps(heap))
    other.push_or_update(10, 100.0)
    other.remove(3)
    other.scale(2.0)
    assert heap.keys().tolist() == [3, 2, 1, 0]
    assert heap.weights().tolist() == [4.0, 3.0, 2.0, 1.0]
    assert 10 not in heap
    empty = pickle.loads(pickle.dumps(TopKHeap(3)))
    assert len(empty) == 0 and empty.capacity == 3
    empty.check_invariants()
    assert empty.push_or_update(1, 1.0) is None


# --------------------------------------------------------------------------- errors
def snapshot(heap):
    keys, weights = heap.items()
    return keys.tolist(), weights.tolist(), len(heap), (heap.min() if len(heap) else None)


def test_constructor_errors():
    for bad in (0, -1):
        with pytest.raises(ValueError):
            TopKHeap(bad)
    for bad in (2.5, "3", None, True, 3.0):
        with pytest.raises(TypeError):
            TopKHeap(bad)
    assert TopKHeap(np.int64(5)).capacity == 5


def test_bad_weights_leave_heap_unchanged():
    heap = TopKHeap(3)
    for k, w in [(1, 1.0), (2, -2.0), (3, 3.0)]:
        heap.push_or_update(k, w)
    before = snapshot(heap)
    for key in (1, 4):  # existing key (update) and new key (insert / evict)
        for bad in (np.nan, np.inf, -np.inf, float("nan")):
            with pytest.raises(ValueError):
                heap.push_or_update(key, bad)
            assert snapshot(heap) == before
            heap.check_invariants()
        for bad in ("1.0", None, True, [1.0], 1 + 1j):
            with pytest.raises(TypeError):
                heap.push_or_update(key, bad)
            assert snapshot(heap) == before
    for bad in (np.nan, np.inf):
        with pytest.raises(ValueError):
            heap.scale(bad)
    with pytest.raises(TypeError):
        heap.scale("2")
    assert snapshot(heap) == before
    # numpy numbers are accepted
    assert heap.push_or_update(np.int32(2), np.float32(-0.5)) is None
    assert heap.get(np.int64(2)) == -0.5


def test_key_errors():
    heap = TopKHeap(3)
    heap.push_or_update(1, 1.0)
    before = snapshot(heap)
    with pytest.raises(KeyError):
        heap.remove(2)
    assert snapshot(heap) == before
    assert heap.remove(1) == 1.0
    with pytest.raises(KeyError):
        heap.remove(1)
    for bad in (1.5, 1.0, "1", None, True, np.float64(1.0)):
        with pytest.raises(TypeError):
            heap.push_or_update(bad, 1.0)
        with pytest.raises(TypeError):
            heap.get(bad)
        with pytest.raises(TypeError):
            heap.contains(bad)
        with pytest.raises(TypeError):
            heap.remove(bad)
    for bad in (2**63, -(2**63) - 1):
        with pytest.raises(ValueError):
            heap.push_or_update(bad, 1.0)
    assert len(heap) == 0


def test_empty_heap_errors_and_clear():
    heap = TopKHeap(2)
    with pytest.raises(IndexError):
        heap.min()
    with pytest.raises(IndexError):
        heap.pop_min()
    assert heap.keys().shape == (0,) and heap.weights().shape == (0,)
    heap.push_or_update(1, 1.0)
    heap.push_or_update(2, 2.0)
    heap.scale(0.5)
    heap.clear()
    assert len(heap) == 0 and 1 not in heap
    heap.check_invariants()
    with pytest.raises(IndexError):
        heap.pop_min()
    # the scale was reset by clear
    heap.push_or_update(3, 3.0)
    assert heap.get(3) == 3.0 and heap.min() == (3, 3.0)
    assert heap.pop_min() == (3, 3.0)
    assert len(heap) == 0
    assert repr(heap) == "TopKHeap(capacity=2, size=0)"


@pytest.mark.parametrize("capacity", [1, 2, 7, 1000, 12345, 2**16])
def test_memory_bytes_per_entry_at_most_24(capacity):
    # The budget the estimators size themselves by: key + weight + share of the map.
    heap = TopKHeap(capacity)
    rng = np.random.default_rng(capacity)
    keys = rng.choice(2**40, size=capacity, replace=False).astype(np.int64)
    heap.push_many(keys, rng.normal(size=capacity))
    assert len(heap) == capacity
    heap.check_invariants()
    assert heap.memory_bytes <= 24 * capacity
    assert heap.memory_bytes == 16 * capacity + 4 * heap.n_slots + heap.filter_bits // 8
    assert heap.n_slots == -(-10 * capacity // 7)
    # One filter byte an entry (rounded up to 8 bytes) from 64 entries on.
    assert heap.filter_bits == (0 if capacity < 64 else -(-capacity // 8) * 64)
    arrays = [a for a in heap._arrays if a is not None]
    assert heap.memory_bytes == sum(a.nbytes for a in arrays)
    assert len(arrays) == (3 if capacity < 64 else 4)
    with_aux = TopKHeap(capacity, aux=True)
    assert with_aux.memory_bytes == heap.memory_bytes + 8 * capacity
    assert with_aux.memory_bytes == sum(
        a.nbytes for a in with_aux._arrays if a is not None)


def test_memory_bytes_is_what_the_process_allocates():
    # tracemalloc sees NumPy's data buffers: a heap must not hold more than it says.
    # Only allocations made from this file count: threads left by earlier tests (a
    # Dask cluster's event loop) allocate too.
    import tracemalloc
    tracemalloc.start()
    before = tracemalloc.take_snapshot()
    heap = TopKHeap(100_000)
    after = tracemalloc.take_snapshot()
    tracemalloc.stop()
    here = [tracemalloc.Filter(True, __file__)]
    allocated = sum(stat.size_diff for stat in after.filter_traces(here).compare_to(
        before.filter_traces(here), "filename"))
    assert heap.memory_bytes <= allocated <= heap.memory_bytes + 4096


def test_heap_without_aux_refuses_aux_calls():
    heap = TopKHeap(3)
    heap.push_or_update(1, 1.0)
    assert not heap.has_aux and TopKHeap(3, aux=True).has_aux
    for call in (lambda: heap.get_aux(1), lambda: heap.set_aux(1, 2.0),
                 lambda: heap.scale_aux(2.0), heap.aux_items):
        with pytest.raises(ValueError, match="aux=True"):
            call()
    assert not pickle.loads(pickle.dumps(heap)).has_aux


def test_aux_values_travel_with_their_entries():
    # Each entry's auxiliary value must follow it through sifts, evictions,
    # removals, scaling and pickling; a reference dict holds (weight, aux).
    rng = np.random.default_rng(7)
    heap, weights, aux = TopKHeap(16, aux=True), {}, {}
    for step in range(4000):
        key = int(rng.integers(0, 60))
        op = rng.random()
        if op < 0.6:
            weight = float(rng.normal())
            left = heap.push_or_update(key, weight)
            if key in heap:
                if key not in aux:
                    aux[key] = 0.0
                weights[key] = weight
                value = float(rng.integers(-8, 8))
                heap.set_aux(key, value)
                aux[key] = value
            if left is not None and left[0] != key:
                weights.pop(left[0])
                aux.pop(left[0])
        elif op < 0.75 and key in heap:
            heap.remove(key)
            weights.pop(key)
            aux.pop(key)
        elif op < 0.8:
            heap.scale_aux(0.5)
            aux = {k: v * 0.5 for k, v in aux.items()}
        elif op < 0.82:
            heap = pickle.loads(pickle.dumps(heap))
        if step % 200 == 0:
            heap.check_invariants()
        assert sorted(heap.keys().tolist()) == sorted(weights)
        for k in weights:
            assert heap.get_aux(k) == aux[k]
    assert heap.get_aux(10**6) is None
    with pytest.raises(KeyError):
        heap.set_aux(10**6, 1.0)


def test_presence_filter_survives_rebuilds_under_churn():
    # Every replacement sets a filter bit; after 2 * capacity of them the filter is
    # rebuilt from the heap. A key in the heap must never be reported absent.
    capacity = 64
    heap = TopKHeap(capacity)
    assert heap.filter_bits == 8 * capacity
    reference = {}
    rng = np.random.default_rng(0)
    for step in range(20 * capacity):
        key, weight = int(rng.integers(0, 10**6)), float(step + 1)  # each offer enters
        evicted = heap.push_or_update(key, weight)
        reference[key] = weight
        if evicted is not None:
            del reference[evicted[0]]
        if step % 37 == 0:
            heap.check_invariants()
    assert sorted(heap.keys().tolist()) == sorted(reference)
    assert all(heap.get(k) == w for k, w in reference.items())
    assert not any(k in heap for k in range(10**6, 10**6 + 1000))


def test_copy_evolves_exactly_like_the_original_filter_included():
    # A copy (what partial_fit trains on) must match the original array for array
    # after the same offers: heap layout, key map and presence filter with its
    # rebuild clock.
    rng = np.random.default_rng(1)
    heap = TopKHeap(64)
    heap.push_many(rng.choice(10**6, 100, replace=False), rng.normal(size=100))
    other = heap.copy()
    keys, weights = rng.integers(0, 10**6, 300), rng.normal(size=300) * 3
    heap.push_many(keys, weights)
    other.push_many(keys, weights)
    for mine, theirs in zip(heap._arrays, other._arrays):
        assert (mine is None) == (theirs is None)
        if mine is not None:
            np.testing.assert_array_equal(mine, theirs)
    other.check_invariants()


def test_a_heap_ordered_by_value_keeps_the_largest_weights():
    rng = np.random.default_rng(0)
    keys = rng.permutation(10_000)[:3000].astype(np.int64)
    weights = rng.normal(size=keys.size)
    heap = TopKHeap(100, order="value")
    for key, weight in zip(keys.tolist(), weights.tolist()):
        heap.push_or_update(key, weight)
    heap.check_invariants()
    expected = np.lexsort((keys, weights))[::-1][:100]  # largest (weight, key) first
    assert heap.keys().tolist() == keys[expected].tolist()
    assert (heap.weights() > 0).all()
    # Updates move entries both ways; the order holds: the 20 largest, set to
    # -5, are now the smallest.
    top = heap.keys()[:20].tolist()
    for key in top:
        heap.push_or_update(key, -5.0)
    heap.check_invariants()
    assert sorted(heap.keys()[-20:].tolist()) == sorted(top)
    assert heap.weights()[-20:].tolist() == [-5.0] * 20


def test_a_heap_ordered_by_value_survives_copy_pickle_and_positive_scaling():
    import pickle

    heap = TopKHeap(4, order="value")
    for key, weight in [(1, -3.0), (2, 0.5), (3, 2.0), (4, -0.1), (5, 1.0)]:
        heap.push_or_update(key, weight)
    assert heap.keys().tolist() == [3, 5, 2, 4]  # -3.0 was the smallest value
    for other in (pickle.loads(pickle.dumps(heap)), heap.copy()):
        assert other.by_value and other.keys().tolist() == heap.keys().tolist()
        other.check_invariants()
    heap.scale(0.5)
    assert heap.weights().tolist() == [1.0, 0.5, 0.25, -0.05]
    with pytest.raises(ValueError, match="positive factors only"):
        heap.scale(-1.0)
    with pytest.raises(ValueError, match="order must be"):
        TopKHeap(4, order="abs")
    assert TopKHeap(4).by_value is False
