"""Hostile inputs found by the reproducers of issue 14: each must give a clear error
or the right answer, never a crash, a silent overflow or unbounded memory.

Cases that crashed the process run in a child interpreter, so a regression fails
one test instead of killing the session."""
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from sklearn_sketch import (
    AWMSketchClassifier,
    BearClassifier,
    BearRegressor,
    FeatureHashingClassifier,
    IHTClassifier,
    IHTRegressor,
    MissionClassifier,
    MissionRegressor,
    SpaceSavingClassifier,
    SparsePerceptronClassifier,
    TruncationClassifier,
    WMSketchClassifier,
)

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def run_child(code):
    """Run ``code`` in a fresh interpreter on this checkout; its CompletedProcess."""
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True,
                          text=True, env=env, timeout=300)


# ---------------------------------------------------------------- batch sizes
ESTIMATORS = {
    "MissionClassifier": "MissionClassifier(5, sketch_width=256, random_state=0)",
    "MissionRegressor": "MissionRegressor(5, sketch_width=256, random_state=0)",
    "IHTClassifier": "IHTClassifier(5, random_state=0)",
    "IHTRegressor": "IHTRegressor(5, random_state=0)",
    "FeatureHashingClassifier": "FeatureHashingClassifier(sketch_width=256, random_state=0)",
    "WMSketchClassifier": "WMSketchClassifier('8KB', random_state=0)",
    "AWMSketchClassifier": "AWMSketchClassifier('8KB', random_state=0)",
    "TruncationClassifier": "TruncationClassifier('1KB', random_state=0)",
    "TruncationClassifierP": "TruncationClassifier('1KB', truncation='probabilistic', "
                             "random_state=0)",
    "SpaceSavingClassifier": "SpaceSavingClassifier('1KB', random_state=0)",
    "SparsePerceptronClassifier": "SparsePerceptronClassifier(5, random_state=0)",
    "BearClassifier": "BearClassifier(5, sketch_width=256, random_state=0)",
    "BearRegressor": "BearRegressor(5, sketch_width=256, random_state=0)",
}


@pytest.mark.parametrize("name", sorted(ESTIMATORS))
def test_huge_batch_size_is_one_batch_of_all_rows(name):
    # 2**61 * 8 bytes wrapped to a 0-byte buffer (heap overflow, SIGABRT); 2**40 asked
    # for 8 TiB for 400 rows. A batch larger than the data is one batch of every row.
    result = run_child(f"""
        import numpy as np
        from sklearn_sketch import *
        rng = np.random.RandomState(0)
        X = rng.normal(size=(400, 20)); y = (X[:, 0] > 0).astype(int)
        if "Regressor" in {name!r}:
            y = X[:, 0] - 2 * X[:, 1]
        ref = {ESTIMATORS[name]}.set_params(batch_size=400).fit(X, y).predict(X)
        for bs in (2**40, 2**61, 2**63 - 1, 2**70):
            got = {ESTIMATORS[name]}.set_params(batch_size=bs).fit(X, y).predict(X)
            assert np.array_equal(got, ref), bs
        print("ok")
        """)
    assert result.returncode == 0, result.stderr[-2000:]
    assert result.stdout.strip() == "ok"


def test_sgd_kernel_buffer_size_overflow_raises_memory_error():
    # Sizes whose byte counts overflow must be refused before any allocation.
    result = run_child("""
        import numpy as np
        from sklearn_sketch import CountSketch, TopKHeap
        from sklearn_sketch._sgd_fast import SGDParams, sgd_pass, Loss, Schedule, WeightStore
        params = SGDParams(loss=Loss.LOG_LOSS, schedule=Schedule.CONSTANT,
                           store=WeightStore.SKETCH_AND_HEAP, eta0=0.1, power_t=0.5, alpha=0.0,
                           optimal_init=0.0, batch_size=1, fit_intercept=True)
        sketch = CountSketch(64, 3, random_state=0); heap = TopKHeap(4)
        indptr = np.array([0, 1], dtype=np.int64); indices = np.array([3], dtype=np.int64)
        one = np.ones(1)
        try:
            sgd_pass(params, [sketch], [heap], np.zeros(1), indptr, indices, one, one, one,
                     np.zeros(1, dtype=np.int64), 1.0, 2**62)
        except MemoryError as e:
            print("MemoryError", e)
        """)
    assert result.returncode == 0, result.stderr[-2000:]
    assert result.stdout.startswith("MemoryError cannot allocate"), result.stdout


# ---------------------------------------------------------------- uninitialised objects
HEAP_CALLS = ["h.push_or_update(1, 1.0)", "1 in h", "h.contains(1)", "h.get(1)",
              "h.push_many([1], [1.0])", "h.remove(1)", "h.min()", "h.scale(2.0)", "h.clear()",
              "h.items()", "h.keys()", "h.weights()", "h.check_invariants()", "h.memory_bytes",
              "h.get_aux(1)", "h.set_aux(1, 1.0)", "h.scale_aux(2.0)", "h.aux_items()",
              "h.pop_min()"]
SKETCH_CALLS = ["c.query([1])", "c.update([1], [1.0])", "c.scale(2.0)", "c.clear()",
                "c.table", "c.seeds", "c.dtype", "c.memory_bytes", "c.to_array()", "c.copy()",
                "c.buckets([1])", "c.merge(CountSketch(8, 1))", "CountSketch(8, 1).merge(c)",
                "c.same_configuration(c)"]


@pytest.mark.parametrize("call", HEAP_CALLS + SKETCH_CALLS)
def test_uninitialised_core_objects_raise(call):
    # TopKHeap.__new__ left NULL pointers (segfault on the first offer); a bare
    # CountSketch answered queries from uninitialised stack memory.
    result = run_child(f"""
        from sklearn_sketch import CountSketch, TopKHeap
        h = TopKHeap.__new__(TopKHeap)
        c = CountSketch.__new__(CountSketch)
        try:
            {call}
        except RuntimeError as e:
            print(e)
        """)
    assert result.returncode == 0, result.stderr[-2000:]
    assert "is not initialised" in result.stdout, result.stdout


def test_uninitialised_objects_are_refused_by_the_kernels():
    result = run_child("""
        import numpy as np
        from sklearn_sketch import CountSketch, TopKHeap
        from sklearn_sketch._bear_fast import LBFGSHistory, bear_pass
        from sklearn_sketch._core import track_heavy_hitters
        from sklearn_sketch._sgd_fast import (SGDParams, decision_function_kernel, sgd_pass,
                                              Loss, Schedule, WeightStore)
        params = SGDParams(loss=Loss.LOG_LOSS, schedule=Schedule.CONSTANT,
                           store=WeightStore.SKETCH_AND_HEAP, eta0=0.1, power_t=0.5, alpha=0.0,
                           optimal_init=0.0, batch_size=1, fit_intercept=True)
        indptr = np.array([0, 1], dtype=np.int64); indices = np.array([3], dtype=np.int64)
        one = np.ones(1); order = np.zeros(1, dtype=np.int64)
        good_c, good_h = CountSketch(64, 3, random_state=0), TopKHeap(4)
        bad_c, bad_h = CountSketch.__new__(CountSketch), TopKHeap.__new__(TopKHeap)
        calls = [
            lambda: sgd_pass(params, [bad_c], [good_h], np.zeros(1), indptr, indices, one, one,
                             one, order, 1.0, 1),
            lambda: sgd_pass(params, [good_c], [bad_h], np.zeros(1), indptr, indices, one, one,
                             one, order, 1.0, 1),
            lambda: decision_function_kernel([bad_c], [], indptr, indices, one, np.zeros((1, 1))),
            lambda: decision_function_kernel([], [bad_h], indptr, indices, one, np.zeros((1, 1))),
            lambda: track_heavy_hitters(bad_c, good_h, [1]),
            lambda: track_heavy_hitters(good_c, bad_h, [1]),
            lambda: bear_pass(params, [good_c], [good_h], np.zeros(1),
                              LBFGSHistory.__new__(LBFGSHistory), indptr, indices, one, one,
                              one, order, 1.0, 1),
            lambda: LBFGSHistory.__new__(LBFGSHistory).push([1], [[1.0]], [[1.0]]),
            lambda: LBFGSHistory.__new__(LBFGSHistory).reserve(4),
        ]
        for call in calls:
            try:
                call()
                print("no error")
            except RuntimeError as e:
                assert "is not initialised" in str(e), e
                print("refused")
        try:
            sgd_pass(params, ["not a sketch"], [good_h], np.zeros(1), indptr, indices, one, one,
                     one, order, 1.0, 1)
        except TypeError as e:
            print("refused", e)
        """)
    assert result.returncode == 0, result.stderr[-2000:]
    lines = result.stdout.splitlines()
    assert lines[:9] == ["refused"] * 9, result.stdout
    assert lines[9].startswith("refused expected CountSketch"), result.stdout
