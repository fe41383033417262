"""learning_rate='adaptive': the 'normalized' step with each feature's share scaled by
1 / sqrt(its squared gradients so far), summed over the classes in a small hashed
float32 table (AdaGrad's per-coordinate step inside the normalized update).
"""
import pickle
import sys
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp

from sklearn_sketch import (
    AWMSketchClassifier,
    FeatureHashingClassifier,
    IHTClassifier,
    MissionClassifier,
    ModelFileError,
    WMSketchClassifier,
    average_estimators,
    load,
)
from sklearn_sketch._base import FEATURE_COUNT_CELLS, MIN_FEATURE_COUNT_CELLS

sys.path.insert(0, str(Path(__file__).parent))
from _reference import dense_sgd, encode  # noqa: E402
from test_frequency_schedule import zipf_rows  # noqa: E402
from test_model_files import write_members  # noqa: E402


@pytest.mark.usefixtures("sparse_as_given")
@pytest.mark.parametrize("n_classes, loss", [(2, "log_loss"), (3, "hinge"), (3, "log_loss")])
@pytest.mark.parametrize("batch_size", [1, 4])
@pytest.mark.parametrize("cls", [MissionClassifier, FeatureHashingClassifier, IHTClassifier])
def test_adaptive_steps_equal_the_dense_reference_without_collisions(cls, n_classes, loss,
                                                                     batch_size):
    X, y = zipf_rows()
    if n_classes == 2:
        y = (y == 0).astype(int)
    extra = ({"n_features_to_select": X.shape[1]} if cls is not FeatureHashingClassifier
             else {})
    if cls is not IHTClassifier:
        extra["sketch_width"] = 2**20
    est = cls(learning_rate="adaptive", eta0=0.5, loss=loss, batch_size=batch_size,
              max_iter=2, shuffle=False, random_state=0, **extra)
    est.fit(sp.csr_matrix(X), y)
    for sketch in est.sketches_:  # the reference has no collisions: neither may the sketch
        assert np.unique(sketch.buckets(np.arange(X.shape[1]))[0][0]).size == X.shape[1]
    n_models = 1 if n_classes == 2 else n_classes
    ref_loss = "softmax" if loss == "log_loss" and n_classes > 2 else loss
    squares = np.zeros(FEATURE_COUNT_CELLS, dtype=np.float32)
    W, b, t, mistakes = dense_sgd(X, encode(y, np.unique(y)), n_models=n_models,
                                  loss=ref_loss, learning_rate="adaptive", eta0=0.5,
                                  batch_size=batch_size, max_iter=2, standardize=False,
                                  counts=squares)
    coef = est.coef_.toarray() if cls is not FeatureHashingClassifier else None
    if coef is None:  # feature hashing: each column's weight is its cell's
        cells, signs = est.sketches_[0].buckets(np.arange(X.shape[1]))
        coef = np.array([s.to_array()[0, cells[0]] * signs[0] for s in est.sketches_])
    assert np.abs(W).max() > 1e-2  # something was learned
    np.testing.assert_allclose(coef, W, rtol=1e-4, atol=1e-5 * max(1.0, np.abs(W).max()))
    np.testing.assert_allclose(est.intercept_, b, rtol=1e-4, atol=1e-6)
    assert est.t_ == t and est.online_error_rate_ == mistakes / len(y)
    table = est._state.feature_counts
    assert table.dtype == np.float32 and squares.max() > 0
    np.testing.assert_allclose(table, squares, rtol=1e-5, atol=1e-6 * squares.max())


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


def test_adaptive_squares_are_saved_copied_averaged_and_left_alone_by_a_failed_call(tmp_path):
    X, y = zipf_rows(seed=3)
    Xs = sp.csr_matrix(X)
    est = AWMSketchClassifier(learning_rate="adaptive", random_state=0).fit(Xs, y)
    squares = est._state.feature_counts.copy()
    assert squares.dtype == np.float32 and squares.size == FEATURE_COUNT_CELLS
    est.save(tmp_path / "m.skm")
    for other in (load(tmp_path / "m.skm"), pickle.loads(pickle.dumps(est))):
        np.testing.assert_array_equal(other._state.feature_counts, squares)
        other.partial_fit(Xs, y)
    est.partial_fit(Xs, y)
    np.testing.assert_array_equal(other._state.feature_counts, est._state.feature_counts)
    np.testing.assert_array_equal(other.decision_function(Xs), est.decision_function(Xs))
    before = est._state.feature_counts.copy()
    est.set_params(eta0=1e300)
    with pytest.raises(ValueError):
        est.partial_fit(Xs * 1e300, y)
    np.testing.assert_array_equal(est._state.feature_counts, before)
    halves = [AWMSketchClassifier(learning_rate="adaptive", random_state=0)
              .partial_fit(Xs[i::2], y[i::2], classes=np.unique(y)) for i in range(2)]
    merged = average_estimators(halves, weights=[1, 3])
    expected = (0.25 * halves[0]._state.feature_counts.astype(float)
                + 0.75 * halves[1]._state.feature_counts).astype(np.float32)
    assert merged._state.feature_counts.dtype == np.float32
    np.testing.assert_allclose(merged._state.feature_counts, expected, rtol=1e-6)


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
        est.fit(Xs, y)
        before = est.decision_function(Xs)
        est.set_params(learning_rate=switched)
        for train in (est.partial_fit, est.fit):
            with pytest.raises(ValueError, match=r"fit it anew \(warm_start=False\)"):
                train(Xs, y)
        np.testing.assert_array_equal(est.decision_function(Xs), before)


@pytest.mark.parametrize("budget", ["16KB", "1MB"])
def test_adaptive_squares_fit_in_the_budget_and_are_counted(budget):
    from sklearn_sketch._base import parse_memory_budget

    X, y = zipf_rows(seed=5)
    est = MissionClassifier(learning_rate="adaptive", memory_budget=budget,
                            random_state=0).fit(X, y)
    cells = est._state.feature_counts.size
    limit = parse_memory_budget(budget)
    assert cells == min(FEATURE_COUNT_CELLS, max(MIN_FEATURE_COUNT_CELLS, limit // 64))
    assert est.memory_bytes_ <= limit
