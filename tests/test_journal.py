"""Undo journal of the Count-Sketch, training without copying the model, and the lock.

``partial_fit`` and warm-start ``fit`` write a fitted model's sketches through
their undo journals and train copies of the small parts (heaps, intercepts,
counters, BEAR's pairs): a call that diverges leaves every attribute exactly
as it was, and nothing of the sketches' size is copied. Concurrent training
calls on one estimator are serialized by a per-estimator lock.
"""
import copy
import gc
import pickle
import sys
import threading
import tracemalloc
from pathlib import Path

import numpy as np
import pytest
from sklearn.base import clone

import sklearn_sketch as sk
from sklearn_sketch import CountSketch, ModelFileError, TopKHeap
from sklearn_sketch._base import _LOCKS, _BaseSketchSGD, _estimator_lock
from sklearn_sketch._core import bucket_and_sign_arrays, track_heavy_hitters

sys.path.insert(0, str(Path(__file__).parent))
from _reference import CASES, data, make  # noqa: E402

DTYPES = [np.float32, np.float64]

SKETCHED = [case for case in CASES if not case.startswith(
    ("IHT", "Truncation", "SpaceSaving", "SparsePerceptron"))]


def kwargs_of(est, y):
    return {"classes": np.unique(y)} if "Regressor" not in type(est).__name__ else {}


def sketch_state(sketch):
    return (sketch.width, sketch.depth, sketch.dtype.str, sketch.seeds.tobytes(),
            sketch.table.tobytes(), np.float64(sketch.scale_factor).tobytes())


def heap_state(heap, layout=True):
    """The heap's entries and scales as bytes; with ``layout``, its arrays (key map included).

    A copy has the same layout; a pickled or loaded heap the same entries.
    """
    capacity, keys, weights, scale, aux, aux_scale, _ = heap.__reduce__()[1]
    out = (capacity, keys.tobytes(), weights.tobytes(), scale,
           None if aux is None else aux.tobytes(), aux_scale)
    if layout:
        out += tuple(None if a is None else a.tobytes() for a in heap._arrays)
    return out


def snapshot(est, layout=True):
    """Every attribute of an estimator, the model state as bytes (see :func:`heap_state`)."""
    out = {}
    for key, value in est.__dict__.items():
        if key == "_state":
            state = value
            history = None
            if state.history is not None:
                size, n_models, pairs, n_pairs, head, n_batches = state.history.__reduce__()[1]
                history = (size, n_models, {k: v.tobytes() for k, v in pairs.items()},
                           n_pairs, head, n_batches)
            out[key] = (
                [sketch_state(s) for s in state.sketches],
                [heap_state(h, layout) for h in state.heaps],
                history, state.intercept.tobytes(), np.float64(state.t).tobytes(),
                state.n_passes, state.shuffle_seed, state.mistakes, state.last_pass_samples,
                state.read_errors.tobytes())
        elif key in ("sketches_", "heaps_", "history_"):
            out[key] = [id(v) for v in value] if isinstance(value, list) else id(value)
        elif isinstance(value, np.ndarray):
            out[key] = (value.dtype.str, value.tobytes())
        else:
            out[key] = copy.deepcopy(value)
    return out


def to_float64(est):
    """Give a fitted estimator float64 sketches holding the same values."""
    sketches = est._state.sketches
    for i, sketch in enumerate(sketches):
        wide = CountSketch(sketch.width, sketch.depth, dtype=np.float64, seeds=sketch.seeds)
        wide.set_table(sketch.table.astype(np.float64), sketch.scale_factor)
        sketches[i] = wide
    return est


def flat_cells(sketch, keys):
    buckets, _ = bucket_and_sign_arrays(np.asarray(keys, dtype=np.int64), sketch.seeds,
                                        sketch.width)
    return np.unique(buckets + (np.arange(sketch.depth) * sketch.width)[:, None])


def filled_sketch(dtype, width=256, depth=3, seed=0):
    rng = np.random.default_rng(seed)
    sketch = CountSketch(width, depth, dtype=dtype, random_state=seed)
    sketch.update(rng.integers(0, 10**6, 500), rng.normal(size=500))
    sketch.scale(0.75)
    return sketch


# ============================================================ CountSketch journal
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("seed", range(6))
def test_rollback_restores_every_cell_and_the_scale_bit_for_bit(dtype, seed):
    """Random writes of every kind, rolled back: the table and scale of a NumPy copy."""
    rng = np.random.default_rng(seed)
    sketch = filled_sketch(dtype, seed=seed)
    table, scale = sketch.table.copy(), sketch.scale_factor
    other = CountSketch(sketch.width, sketch.depth, dtype=dtype, seeds=sketch.seeds)
    other.update(rng.integers(0, 50, 20), rng.normal(size=20))
    sketch.journal_begin()
    ops = ["update"] * 6 + ["scale", "tiny_scale", "merge", "set_table", "clear"]
    for op in rng.choice(ops, size=12):
        if op == "update":
            n = int(rng.integers(1, 200))
            sketch.update(rng.integers(-10**6, 10**6, n), rng.normal(size=n) * 10)
        elif op == "scale":
            sketch.scale(float(rng.uniform(0.1, 2.0)))
        elif op == "tiny_scale":
            sketch.scale(1e-12)  # folds the scale into the table: every cell rewritten
        elif op == "merge":
            sketch.merge(other)
        elif op == "set_table":
            sketch.set_table(rng.normal(size=table.shape).astype(dtype), 2.0)
        else:
            sketch.clear()
    assert sketch.journaling
    sketch.journal_rollback()
    assert not sketch.journaling and sketch.journal_cells == 0
    assert sketch.table.tobytes() == table.tobytes()
    assert sketch.scale_factor == scale


@pytest.mark.parametrize("dtype", DTYPES)
def test_commit_keeps_the_writes_exactly_as_without_a_journal(dtype):
    rng = np.random.default_rng(1)
    journaled, plain = filled_sketch(dtype), filled_sketch(dtype)
    keys, deltas = rng.integers(0, 10**5, 3000), rng.normal(size=3000)
    journaled.journal_begin()
    journaled.update(keys, deltas)
    journaled.scale(0.5)
    journaled.journal_commit()
    plain.update(keys, deltas)
    plain.scale(0.5)
    assert sketch_state(journaled) == sketch_state(plain)
    # A second journal starts empty: the first one's bits were cleared.
    journaled.journal_begin()
    journaled.update(keys[:10], deltas[:10])
    assert journaled.journal_cells == flat_cells(journaled, keys[:10]).size
    journaled.journal_rollback()
    assert sketch_state(journaled) == sketch_state(plain)


@pytest.mark.parametrize("dtype", DTYPES)
def test_each_touched_cell_is_logged_once_and_the_journal_is_small(dtype):
    sketch = CountSketch(2**18, 3, dtype=dtype, random_state=0)
    keys = np.arange(100)
    sketch.journal_begin()
    for _ in range(5):  # the same cells written again are not logged again
        sketch.update(keys, np.ones(100))
    assert sketch.journal_cells == flat_cells(sketch, keys).size
    # The bitmap (1 bit a cell) and a log of the touched cells: not the table.
    assert sketch.journal_bytes < sketch.table.nbytes / 16
    sketch.journal_rollback()
    assert not sketch.table.any()


@pytest.mark.parametrize("dtype", DTYPES)
def test_a_log_past_an_eighth_of_the_table_becomes_one_copy(dtype):
    sketch = filled_sketch(dtype, width=1024)
    table, scale = sketch.table.copy(), sketch.scale_factor
    sketch.journal_begin()
    sketch.update(np.arange(50), np.ones(50))
    assert 0 < sketch.journal_cells < sketch.depth * sketch.width
    sketch.update(np.arange(50, 5000), np.ones(4950))
    assert sketch.journal_cells == sketch.depth * sketch.width  # a copy of the table now
    assert sketch.journal_bytes <= sketch.table.nbytes + 2**14 + sketch.table.nbytes / 32
    sketch.update(np.arange(10), np.full(10, 3.0))
    sketch.journal_rollback()
    assert sketch.table.tobytes() == table.tobytes() and sketch.scale_factor == scale


@pytest.mark.parametrize("dtype", DTYPES)
def test_a_held_copy_backs_the_next_journal_which_rolls_back_to_its_own_start(dtype):
    """hold_journal_memory keeps a closed journal's copy of the table for the next
    one: that journal still undoes to where it began, not to where the copy was made."""
    rng = np.random.default_rng(2)
    sketch = filled_sketch(dtype, width=1024)
    sketch.hold_journal_memory(True)
    for round_ in range(4):
        table, scale = sketch.table.copy(), sketch.scale_factor
        sketch.journal_begin(expected_writes=10**6)  # enough to copy the table at once
        assert sketch.journal_cells == sketch.depth * sketch.width
        sketch.update(rng.integers(0, 10**6, 3000), rng.normal(size=3000))
        sketch.scale(0.5)
        if round_ % 2:
            sketch.journal_rollback()
            assert sketch.table.tobytes() == table.tobytes() and sketch.scale_factor == scale
        else:
            sketch.journal_commit()
            assert sketch.table.tobytes() != table.tobytes()
        assert not sketch.journaling
        assert sketch.journal_bytes == sketch.table.nbytes  # the copy, kept
    sketch.hold_journal_memory(False)
    assert sketch.journal_bytes == 0
    sketch.journal_begin(expected_writes=10**6)
    sketch.journal_commit()
    assert sketch.journal_bytes == 0  # no longer kept


def test_a_stream_of_partial_fits_lets_go_of_the_held_copies():
    """partial_fit_stream lets the sketches keep their journal's copy between calls
    and frees it at the end, also when a call fails."""
    from sklearn_sketch.io import partial_fit_stream
    from sklearn_sketch.io._readers import Chunk

    rng = np.random.default_rng(0)
    X = rng.normal(size=(400, 30))
    y = (X[:, 0] > 0).astype(int)
    chunks = [Chunk(X[i:i + 100], y[i:i + 100], None, i + 1, None, None)
              for i in range(0, 400, 100)]
    est = sk.FeatureHashingClassifier(sketch_width=64, random_state=0, eta0=1.0)
    partial_fit_stream(est, chunks, classes=[0, 1])
    plain = sk.FeatureHashingClassifier(sketch_width=64, random_state=0, eta0=1.0)
    for chunk in chunks:
        plain.partial_fit(chunk.X, chunk.y, classes=[0, 1])
    np.testing.assert_array_equal(est.decision_function(X), plain.decision_function(X))
    assert [s.journal_bytes for s in est._state.sketches] == [0]
    bad = chunks + [Chunk(X[:100], np.full(100, 7), None, 401, None, None)]
    with pytest.raises(ValueError):
        partial_fit_stream(est, bad)
    assert [s.journal_bytes for s in est._state.sketches] == [0]


def test_a_disposable_copy_trains_without_a_journal_to_the_same_model():
    """sklearn_sketch.dask's partitions train copies that they drop on failure
    (``_disposable``): no journal (for a loaded sketch it copies the table), the
    same model, and the mark does not stay on the estimator."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(800, 30))
    y = (X[:, 0] > 0).astype(int)
    est = sk.FeatureHashingClassifier(sketch_width=64, random_state=0).fit(X[:400], y[:400])
    journaled, disposable = copy.deepcopy(est), copy.deepcopy(est)
    for model in (journaled, disposable):
        model._state.sketches[0].hold_journal_memory(True)  # a journal's copy stays
    disposable._disposable = True
    journaled.partial_fit(X[400:], y[400:])
    disposable.partial_fit(X[400:], y[400:])
    table_bytes = est._state.sketches[0].table.nbytes
    assert journaled._state.sketches[0].journal_bytes == table_bytes
    assert disposable._state.sketches[0].journal_bytes == 0
    np.testing.assert_array_equal(disposable.decision_function(X), journaled.decision_function(X))
    assert "_disposable" not in disposable.__dict__
    new = sk.FeatureHashingClassifier(sketch_width=64, random_state=0)
    new._disposable = True
    new.partial_fit(X, y, classes=[0, 1])
    assert "_disposable" not in new.__dict__


@pytest.mark.parametrize("dtype", DTYPES)
def test_renormalising_while_journaling_logs_every_cell_then_rolls_back(dtype):
    sketch = filled_sketch(dtype)
    table, scale = sketch.table.copy(), sketch.scale_factor
    sketch.journal_begin()
    sketch.update([1, 2, 3], [1.0, 2.0, 3.0])
    sketch.scale(1e-10)  # below 1e-9: the scale is folded into every cell
    assert sketch.scale_factor == 1.0
    assert sketch.journal_cells == sketch.depth * sketch.width
    sketch.update([1, 2, 3], [1.0, 2.0, 3.0])
    sketch.journal_rollback()
    assert sketch.table.tobytes() == table.tobytes() and sketch.scale_factor == scale


@pytest.mark.parametrize("dtype", DTYPES)
def test_an_overflowing_update_inside_a_journal_undoes_only_itself(dtype):
    """The update's own undo is a savepoint of the open journal, which stays exact."""
    huge = 1e39 if dtype == np.float32 else 1e308
    sketch = filled_sketch(dtype)
    table = sketch.table.copy()
    sketch.journal_begin()
    sketch.update([1, 2], [5.0, 6.0])
    middle = sketch.table.copy()
    # Cells of keys 1 and 2 (logged already) and of new keys, then an overflow.
    with pytest.raises(ValueError, match="overflows"):
        sketch.update([1, 2, 70, 71, 70, 9, 9], [1.0, 1.0, 2.0, 3.0, 4.0, huge, huge])
    assert sketch.table.tobytes() == middle.tobytes() and sketch.journaling
    # Cells the failed update touched first must be logged by later writes.
    sketch.update([70, 71, 9], [1.0, 1.0, 1.0])
    sketch.journal_rollback()
    assert sketch.table.tobytes() == table.tobytes()


def test_journal_misuse_raises():
    sketch = CountSketch(16, 2, random_state=0)
    for method in (sketch.journal_rollback, sketch.journal_commit, sketch.journal_finite):
        with pytest.raises(RuntimeError, match="no journal"):
            method()
    sketch.journal_begin()
    with pytest.raises(RuntimeError, match="already open"):
        sketch.journal_begin()
    sketch.journal_commit()
    with pytest.raises(RuntimeError, match="not initialised"):
        CountSketch.__new__(CountSketch).journal_begin()


@pytest.mark.parametrize("dtype", DTYPES)
def test_journal_finite_checks_only_the_written_cells(dtype):
    sketch = filled_sketch(dtype)
    assert sketch.all_finite()
    sketch.journal_begin()
    sketch.update([5], [1.0])
    assert sketch.journal_finite()
    written = flat_cells(sketch, [5])
    untouched = np.setdiff1d(np.arange(sketch.depth * sketch.width), written)[0]
    cells = sketch.table.reshape(-1)
    cells.flags.writeable = True  # test only: plant values no write path would store
    cells[untouched] = np.inf  # not written since journal_begin: not looked at
    assert sketch.journal_finite() and not sketch.all_finite()
    cells[untouched] = 0.0
    cells[written[1]] = np.nan
    assert not sketch.journal_finite() and not sketch.all_finite()
    sketch.journal_rollback()
    assert sketch.all_finite()


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("value", [np.inf, -np.inf, np.nan])
def test_all_finite_finds_any_non_finite_cell(dtype, value):
    sketch = filled_sketch(dtype)
    cells = sketch.table.reshape(-1)
    cells.flags.writeable = True  # test only
    for position in (0, 7, cells.size - 1):
        old = cells[position]
        cells[position] = value
        assert not sketch.all_finite()
        cells[position] = old
        assert sketch.all_finite()


def test_all_finite_checks_cells_times_a_scale_above_one():
    sketch = CountSketch(8, 2, dtype=np.float64, random_state=0)
    sketch.update([1], [1.0])
    sketch.scale(2.0)
    assert sketch.all_finite()
    cells = sketch.table.reshape(-1)
    cells.flags.writeable = True  # test only: a cell whose value (cell * 2) overflows
    cells[3] = -1e308
    assert not sketch.all_finite()


def test_heap_all_finite_reads_every_entry():
    heap = TopKHeap(8, aux=True)
    heap.push_many(np.arange(5), np.arange(1.0, 6.0))
    assert heap.all_finite()
    heap._arrays[3][2] = np.inf  # test only: plant an auxiliary value
    assert not heap.all_finite()
    heap._arrays[3][2] = 0.0
    heap._arrays[1][4] = np.nan
    assert not heap.all_finite()


# ============================================================ heavy hitters
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("inside_a_journal", [False, True])
def test_track_heavy_hitters_refuses_an_overflow_and_undoes_sketch_and_heap(dtype,
                                                                           inside_a_journal):
    huge = 3e38 if dtype == np.float32 else 1e308
    sketch, heap = filled_sketch(dtype), TopKHeap(4)
    track_heavy_hitters(sketch, heap, np.arange(10), np.arange(10.0))
    table, scale, layout = sketch.table.copy(), sketch.scale_factor, heap_state(heap)
    if inside_a_journal:
        sketch.journal_begin()
    # Items that change the heap first, then one that overflows a cell.
    with pytest.raises(ValueError, match="overflows"):
        track_heavy_hitters(sketch, heap, [20, 21, 22, 22], [50.0, 60.0, huge, huge])
    assert sketch.table.tobytes() == table.tobytes() and sketch.scale_factor == scale
    assert heap_state(heap) == layout
    assert np.isfinite(sketch.table).all() and np.isfinite(heap.weights()).all()
    heap.check_invariants()
    assert sketch.journaling == inside_a_journal
    if inside_a_journal:
        sketch.journal_rollback()
        assert sketch.table.tobytes() == table.tobytes()


def test_track_heavy_hitters_refuses_an_estimate_the_heap_cannot_store():
    sketch, heap = CountSketch(64, 3, dtype=np.float64, random_state=0), TopKHeap(2)
    heap.push_or_update(1, 1.0)
    heap.scale(1e-9)  # the heap stores weight / 1e-9: 1e300 would overflow it
    layout = heap_state(heap)
    with pytest.raises(ValueError, match="overflows"):
        track_heavy_hitters(sketch, heap, [5, 6], [1.0, 1e300])
    assert not sketch.table.any() and heap_state(heap) == layout


# ============================================================ estimators
def _chunk(case, n_good=120, n_bad=40):
    """Rows that train normally, then rows whose weight and size make many models overflow."""
    X, y = data(case, n=n_good + n_bad, seed=3)
    weight = np.ones(len(y))
    weight[n_good:] = 1e300
    X[n_good:] *= 1e150
    return X, y, weight, n_good


# Sketches large enough that the journal of a call on _chunk's good rows logs the cells
# (fewer writes than a log of an eighth of the table holds); CASES' small ones take a copy.
LARGE = {"MissionClassifier": dict(sketch_width=2**17),
         "MissionRegressor": dict(sketch_width=2**17),
         "BearClassifier": dict(sketch_width=2**17), "BearRegressor": dict(sketch_width=2**17),
         "FeatureHashingClassifier": dict(sketch_width=2**17),
         "WMSketchClassifier": dict(memory_budget="8MB"),
         "AWMSketchClassifier": dict(memory_budget="8MB")}


def make_sized(case, size, **extra):
    """``make`` with CASES' sketch (``size='copy'``) or a LARGE one (``'log'``)."""
    if size == "log" and case not in LARGE:
        pytest.skip("no sketch")
    return make(case, **(LARGE[case] if size == "log" else {}), **extra)


def assert_journal_mode(est, X, n_passes, size):
    """Check that a call on ``X`` makes the journal log (``'log'``) or copy (``'copy'``)."""
    if not est._state.sketches:
        return
    sketch = est._state.sketches[0]
    writes = np.count_nonzero(X) * sketch.depth * n_passes
    limit = max(1024, sketch.table.nbytes // 128)  # 16-byte log entries: an eighth of the table
    assert (writes < limit) == (size == "log"), (writes, limit)


def _fitted_and_probe(case, wide, size):
    """A fitted ``case`` (float64 sketches if ``wide``), _chunk's rows, and a copy of the
    model trained on the good rows, which must differ from it: the failing calls to
    come write before they fail."""
    X, y = data(case)
    est = make_sized(case, size, shuffle=False).fit(X, y)
    if wide:
        to_float64(est)
    X2, y2, weight, n_good = _chunk(case)
    probe = pickle.loads(pickle.dumps(est)).partial_fit(X2[:n_good], y2[:n_good])
    assert snapshot(probe, layout=False)["_state"] != snapshot(est, layout=False)["_state"]
    return est, probe, X2, y2, weight, n_good


def _force_divergence(monkeypatch):
    """Make the check after each pass report divergence: the pass has written everything."""
    monkeypatch.setattr(_BaseSketchSGD, "_state_is_finite", staticmethod(lambda state: False))


def _assert_failed_calls_change_nothing(est, X2, y2, weight=None, size=None):
    if size is not None:
        assert_journal_mode(est, X2, 2, size)
    before = snapshot(est)
    with pytest.raises(ValueError, match="diverged"):
        est.partial_fit(X2, y2, sample_weight=weight)
    assert snapshot(est) == before
    est.set_params(warm_start=True, max_iter=2)
    before = snapshot(est)
    with pytest.raises(ValueError, match="diverged"):
        est.fit(X2, y2, sample_weight=weight)
    assert snapshot(est) == before
    assert not any(s.journaling for s in est._state.sketches)
    est.set_params(warm_start=False, max_iter=5)


@pytest.mark.parametrize("size", ["copy", "log"])
@pytest.mark.parametrize("wide", [False, True], ids=["float32", "float64"])
@pytest.mark.parametrize("case", sorted(CASES))
def test_a_forced_divergence_leaves_every_attribute_bit_for_bit(case, wide, size, monkeypatch):
    """Every estimator family: a whole chunk written, then the divergence check fails."""
    if wide and case not in SKETCHED:
        pytest.skip("no sketch")
    est, probe, X2, y2, _, n_good = _fitted_and_probe(case, wide, size)
    with monkeypatch.context() as patch:
        _force_divergence(patch)
        _assert_failed_calls_change_nothing(est, X2[:n_good], y2[:n_good], size=size)
    # And it trains on exactly as a copy that never saw the failed calls.
    est.partial_fit(X2[:n_good], y2[:n_good])
    assert snapshot(est, layout=False)["_state"] == snapshot(probe, layout=False)["_state"]


# (case, float64 sketches) whose kernel itself reports divergence on _chunk's last
# rows, after the first rows were written.
_DIVERGING = [("BearClassifier", False), ("BearClassifier", True), ("BearRegressor", False),
              ("BearRegressor", True), ("FeatureHashingClassifier", False),
              ("IHTRegressor", False), ("MissionClassifier", False),
              ("MissionRegressor", False), ("MissionRegressor", True),
              ("SparsePerceptronClassifier", False), ("WMSketchClassifier", False)]


@pytest.mark.parametrize("size", ["copy", "log"])
@pytest.mark.parametrize("case, wide", _DIVERGING)
def test_a_diverging_kernel_leaves_every_attribute_bit_for_bit(case, wide, size):
    est, probe, X2, y2, weight, n_good = _fitted_and_probe(case, wide, size)
    _assert_failed_calls_change_nothing(est, X2, y2, weight)
    est.partial_fit(X2[:n_good], y2[:n_good])
    assert snapshot(est, layout=False)["_state"] == snapshot(probe, layout=False)["_state"]


@pytest.mark.parametrize("size", ["copy", "log"])
@pytest.mark.parametrize("wide", [False, True], ids=["float32", "float64"])
def test_a_diverging_call_that_renormalised_the_sketch_is_rolled_back(wide, size, monkeypatch):
    """L2 decay folds the scale into the sketch (every cell) during the failing call.

    With ``size='log'`` the journal logs cells until the renormalisation makes it copy.
    """
    case = "MissionClassifier"
    X, y = data(case)
    est = make_sized(case, size, shuffle=False, batch_size=1, alpha=0.5, eta0=0.5,
                     learning_rate="constant").fit(X, y)
    if wide:
        to_float64(est)
    X2, y2, weight, n_good = _chunk(case)
    decay = 1 - 0.5 * 0.5
    assert est._state.sketches[0].scale_factor * decay**n_good < 1e-9  # must renormalise
    if wide:  # float64 cells do not overflow here: the check after the pass fails
        _force_divergence(monkeypatch)
        X2, y2, weight = X2[:n_good], y2[:n_good], None
    assert_journal_mode(est, X2, 1, size)
    before = snapshot(est)
    with pytest.raises(ValueError, match="diverged"):
        est.partial_fit(X2, y2, sample_weight=weight)
    assert snapshot(est) == before


@pytest.mark.parametrize("case", sorted(CASES))
def test_partial_fit_does_not_deep_copy_the_model(case, monkeypatch):
    X, y = data(case)
    est = make(case).fit(X, y)

    def refuse(*args, **kwargs):
        raise AssertionError("partial_fit deep-copied the model")

    monkeypatch.setattr(copy, "deepcopy", refuse)
    est.partial_fit(X, y)
    est.set_params(warm_start=True)
    est.fit(X, y)


@pytest.mark.parametrize("case", ["MissionClassifier", "BearClassifier", "WMSketchClassifier"])
def test_partial_fit_on_a_large_sketch_allocates_far_less_than_the_model(case):
    width = 2**21  # 3 rows of float32: 24 MiB of sketch per model
    extra = ({"memory_budget": None, "sketch_width": width, "sketch_depth": 3,
              "n_features_to_select": 6} if case.startswith("WM") else {"sketch_width": width})
    X, y = data(case, n_classes=2)
    est = make(case, **extra).fit(X[:50], y[:50])
    model_bytes = sum(s.table.nbytes for s in est._state.sketches)
    assert model_bytes >= 24 * 2**20
    est.partial_fit(X[50:100], y[50:100])  # the journal's bitmap is allocated once
    tracemalloc.start()
    try:
        est.partial_fit(X[100:], y[100:])
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < model_bytes / 16, f"peak {peak / 2**20:.1f} MiB"


@pytest.mark.parametrize("case", sorted(CASES))
def test_partial_fit_passes_still_equal_fit(case):
    X, y = data(case)
    fitted = make(case, max_iter=3).fit(X, y)
    partial = make(case)
    for _ in range(3):
        partial.partial_fit(X, y, **kwargs_of(partial, y))
    a, b = snapshot(fitted, layout=False)["_state"], snapshot(partial, layout=False)["_state"]
    assert a == b


# ============================================================ the lock
class _Recording(sk.MissionClassifier):
    """Records the order in which the training calls ran (under the lock)."""

    order = None

    def _fit(self, X, *args, **kwargs):
        self.order.append(id(X))
        return super()._fit(X, *args, **kwargs)


def test_concurrent_partial_fit_calls_are_serialized():
    rng = np.random.RandomState(0)
    X = rng.normal(size=(18_000, 40))
    X[rng.rand(*X.shape) < 0.7] = 0
    y = (X[:, 3] > 0).astype(int)
    chunks = [(X[i:i + 500], y[i:i + 500]) for i in range(0, len(y), 500)]
    params = dict(n_features_to_select=8, sketch_width=4096, random_state=0, batch_size=1)
    est = _Recording(**params)
    est.order = []
    barrier = threading.Barrier(2)
    errors = []

    def feed(mine):
        try:
            barrier.wait()
            for Xc, yc in mine:
                est.partial_fit(Xc, yc, classes=[0, 1])
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=feed, args=(chunks[i::2],)) for i in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not errors
    assert est.t_ == 1 + len(y)
    # The same model as the serial run of the calls in the order they took the lock.
    by_id = {id(Xc): (Xc, yc) for Xc, yc in chunks}
    assert sorted(est.order) == sorted(by_id)
    serial = sk.MissionClassifier(**params)
    for key in est.order:
        serial.partial_fit(*by_id[key], classes=[0, 1])
    assert snapshot(serial, layout=False)["_state"] == snapshot(est, layout=False)["_state"]


def test_the_lock_is_not_part_of_the_estimator():
    X, y = data("MissionClassifier")
    est = make("MissionClassifier").fit(X, y)
    lock = _estimator_lock(est)
    assert lock is _estimator_lock(est)
    assert all(not isinstance(v, type(lock)) for v in est.__dict__.values())
    again = pickle.loads(pickle.dumps(est))
    assert snapshot(again, layout=False)["_state"] == snapshot(est, layout=False)["_state"]
    assert _estimator_lock(again) is not lock
    assert clone(est).get_params() == est.get_params()
    with lock:  # reentrant: the owner may still train
        est.partial_fit(X, y)
    n_locks = len(_LOCKS)
    del est, again
    gc.collect()
    assert len(_LOCKS) <= n_locks - 2


# ============================================================ save / load methods
@pytest.mark.parametrize("case", ["MissionClassifier", "BearRegressor", "SpaceSavingClassifier"])
def test_save_and_load_methods(case, tmp_path):
    X, y = data(case)
    est = make(case).fit(X, y)
    path = tmp_path / "model.skm"
    assert est.save(path) is None
    loaded = type(est).load(path)
    assert type(loaded) is type(est)
    assert snapshot(loaded, layout=False)["_state"] == snapshot(est, layout=False)["_state"]
    assert type(_BaseSketchSGD.load(path)) is type(est)  # a base class accepts it
    assert type(sk.load(path)) is type(est)


def test_load_method_refuses_another_class(tmp_path):
    X, y = data("MissionClassifier")
    path = tmp_path / "model.skm"
    make("MissionClassifier").fit(X, y).save(path)
    with pytest.raises(ModelFileError, match="holds MissionClassifier, not BearClassifier"):
        sk.BearClassifier.load(path)
    with pytest.raises(ModelFileError, match="not MissionRegressor"):
        sk.MissionRegressor.load(path)


@pytest.mark.parametrize("dtype", DTYPES)
def test_nothing_of_a_journal_outlives_it(dtype):
    # memory_bytes is the table and the seeds: the bitmap, log and copy of a journal
    # are freed when it closes, committed or rolled back.
    sketch = CountSketch(2**12, 3, dtype=dtype, random_state=0)
    for close in (sketch.journal_commit, sketch.journal_rollback):
        sketch.journal_begin()
        sketch.update(np.arange(50), np.ones(50))
        assert sketch.journal_bytes > 0
        close()
        assert sketch.journal_bytes == 0
    est = sk.MissionClassifier(5, sketch_width=2**12, random_state=0)
    X = np.random.default_rng(0).normal(size=(50, 20))
    y = (X[:, 0] > 0).astype(int)
    est.partial_fit(X, y, classes=[0, 1]).partial_fit(X, y)
    assert all(s.journal_bytes == 0 for s in est.sketches_)
    # The model's arrays and its dense columns' mean and scale.
    assert est.memory_bytes_ == est._model_bytes() + 2 * 20 * 8
