"""learning_rate='adaptive': the 'normalized' step with each feature's share scaled by
1 / sqrt(its squared gradients so far), summed over the classes in a small hashed
float32 table (AdaGrad's per-coordinate step inside the normalized update).

What it shares with 'frequency' (the dense reference, model files, copies, averages,
budgets, threads) is tested for both in test_table_schedules.py.
"""
import sys
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp

from sklearn_sketch import FeatureHashingClassifier, ModelFileError, WMSketchClassifier, load

sys.path.insert(0, str(Path(__file__).parent))
from test_table_schedules import zipf_rows  # noqa: E402
from test_model_files import write_members  # noqa: E402
from _reference import assert_refuses_schedule_switch  # noqa: E402


def test_adaptive_is_not_frequency_where_the_gradients_are_not_the_counts():
    # Where the loss derivatives vary (always, once a model learns), the squared
    # gradients are not a multiple of the counts, and the steps differ.
    X, y = zipf_rows(seed=2)
    Xs = sp.csr_matrix(X)
    models = {lr: FeatureHashingClassifier(learning_rate=lr, eta0=1.0, random_state=0)
              .fit(Xs, y) for lr in ("frequency", "adaptive")}
    counts = models["frequency"]._state.feature_counts.astype(float)
    squares = models["adaptive"]._state.feature_counts.astype(float)
    used = counts > 0
    np.testing.assert_array_equal(squares > 0, used)
    ratio = squares[used] / counts[used]
    assert ratio.max() > 1.5 * ratio.min()
    assert not np.allclose(models["frequency"].decision_function(Xs),
                           models["adaptive"].decision_function(Xs))


def test_a_model_file_of_bad_squares_is_refused(tmp_path):
    X, y = zipf_rows(seed=3)
    est = FeatureHashingClassifier(learning_rate="adaptive", random_state=0).fit(X, y)
    est.save(tmp_path / "m.skm")
    with np.load(tmp_path / "m.skm", allow_pickle=False) as npz:
        members = {name: npz[name] for name in npz.files}
    assert "feature_squares" in members and "feature_counts" not in members
    bad = {
        "feature_squares must be non-negative": {
            **members, "feature_squares": -members["feature_squares"] - 1.0},
        "holds NaN or infinity": {
            **members, "feature_squares": np.full_like(members["feature_squares"], np.inf)},
        "must be float32": {
            **members, "feature_squares": members["feature_squares"].astype(np.float64)},
        "not both": {**members, "feature_counts": np.ones(8, dtype=np.uint32)},
        "needs the feature_squares array": {
            k: v for k, v in members.items() if k != "feature_squares"},
    }
    for message, edited in bad.items():
        write_members(tmp_path / "bad.skm", edited)
        with pytest.raises(ModelFileError, match=message):
            load(tmp_path / "bad.skm")


def test_a_model_switched_between_frequency_and_adaptive_is_refused():
    X, y = zipf_rows(seed=6)
    Xs = sp.csr_matrix(X)
    for trained, switched in (("frequency", "adaptive"), ("adaptive", "frequency"),
                              ("normalized", "adaptive")):
        est = WMSketchClassifier(learning_rate=trained, random_state=0, warm_start=True)
        assert_refuses_schedule_switch(est.fit(Xs, y), Xs, y, switched)
