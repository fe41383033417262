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

