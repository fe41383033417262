"""The floor of the 'normalized' step: ``eta0 / max(||x||**2, norm_floor_)``."""
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.datasets import load_iris, load_wine
from sklearn.exceptions import ConvergenceWarning
from sklearn.model_selection import StratifiedKFold, cross_val_score
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

import sklearn_sketch as sk
from sklearn_sketch import _columns

sys.path.insert(0, str(Path(__file__).parent))
from _reference import median_row_norm2, standardized  # noqa: E402

FLOORED = {
    "hashing": lambda **k: sk.FeatureHashingClassifier(sketch_width=4096, **k),
    "mission": lambda **k: sk.MissionClassifier(**k),
    "wm": lambda **k: sk.WMSketchClassifier(**k),
    "awm": lambda **k: sk.AWMSketchClassifier(**k),
    "iht": lambda **k: sk.IHTClassifier(**k),
}


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
@pytest.mark.usefixtures("sparse_as_given")
def test_the_floor_is_the_median_squared_norm_of_the_first_10000_rows():
    rng = np.random.default_rng(0)
    X = sp.random(10_400, 50, density=0.1, format="csr", random_state=1)
    X.data = rng.uniform(0.1, 1.0, X.data.size)
    X = X.toarray()
    X[10_000:] *= 100.0  # rows past the first 10,000 do not count
    X[[3, 7, 11]] = 0.0  # nor do empty rows
    y = (X[:, 0] > 0).astype(int)
    make = lambda: sk.FeatureHashingClassifier(sketch_width=64, max_iter=1, random_state=0)  # noqa: E731
    est = make().fit(sp.csr_matrix(X), y)
    assert est.norm_floor_ == pytest.approx(median_row_norm2(X), rel=1e-12)
    assert median_row_norm2(X, n_rows=len(X)) > 1.02 * est.norm_floor_
    # Dense input: the floor of the rows the model reads, its standardized columns.
    dense = make().fit(X, y)
    assert dense.norm_floor_ == pytest.approx(median_row_norm2(standardized(X)), rel=1e-12)


@pytest.mark.parametrize("name", sorted(FLOORED))
@pytest.mark.usefixtures("sparse_as_given")
def test_a_row_near_the_origin_moves_the_weights_no_more_than_a_median_row(name):
    rng = np.random.default_rng(1)
    X = rng.normal(size=(400, 5))
    y = (X[:, 0] + X[:, 1] > 0).astype(int)
    # Sparse: the origin of the columns is the origin of what the model reads.
    est = FLOORED[name](eta0=1.0, random_state=0).fit(sp.csr_matrix(X), y)
    weights, intercept = est.decision_function(np.eye(5)) - est.intercept_, est.intercept_
    # A misclassified row of norm 1e-6: dividing by its own ||x||**2 would move
    # feature 0's weight by about 1e6 times its gradient; the floor bounds the
    # move by eta0 ||x|| / norm_floor_ (every estimator here has no L2 decay by default).
    tiny = sp.csr_matrix([[1e-6, 0, 0, 0, 0]])
    est.partial_fit(tiny, 1 - est.predict(tiny))
    moved = est.decision_function(np.eye(5)) - est.intercept_ - weights
    assert est.alpha == 0.0
    assert np.abs(moved).max() <= 1e-6 / est.norm_floor_
    assert 0 < np.abs(est.intercept_ - intercept).max() <= 0.5  # eta0 / (nnz + 1)


def test_standardised_iris_with_defaults_scores_as_scikit_learn_does():
    # Without the floor, feature hashing scored 0.69 here, the WM-Sketch 0.62.
    X, y = load_iris(return_X_y=True)
    cv = StratifiedKFold(5, shuffle=True, random_state=0)
    for name, make in FLOORED.items():
        if name == "iht":
            continue
        score = cross_val_score(make_pipeline(StandardScaler(), make(random_state=0)), X, y,
                                cv=cv).mean()
        assert score >= 0.9, (name, score)


def test_bear_and_other_schedules_have_no_floor():
    X, y = load_iris(return_X_y=True)
    assert not hasattr(sk.BearClassifier(random_state=0).fit(X, y), "norm_floor_")
    model = sk.MissionClassifier(random_state=0).fit(X, y)
    assert model.norm_floor_ > 0
    # Refitted with another schedule, the model keeps no floor of the first fit.
    model.set_params(learning_rate="constant", eta0=0.01).fit(X, y)
    assert not hasattr(model, "norm_floor_")


@pytest.mark.usefixtures("sparse_as_given")
def test_the_first_call_sets_the_floor_and_later_calls_keep_it():
    rng = np.random.default_rng(2)
    X = sp.csr_matrix(rng.normal(size=(600, 4)))
    y = (X[:, [0]].toarray().ravel() > 0).astype(int)
    est = sk.AWMSketchClassifier("8KB", random_state=0)
    est.partial_fit(X[:300], y[:300], classes=[0, 1])
    first = est.norm_floor_
    assert first == pytest.approx(median_row_norm2(X[:300].toarray()), rel=1e-12)
    est.partial_fit(3 * X[300:], y[300:])
    assert est.norm_floor_ == first
    # A new fit sets it anew, and it scales with the data...
    assert est.fit(3 * X, y).norm_floor_ == pytest.approx(
        9 * median_row_norm2(X.toarray()), rel=1e-12)
    # ... unless dense columns are standardized first: then it does not.
    dense = X.toarray()
    assert est.fit(3 * dense, y).norm_floor_ == pytest.approx(est.fit(dense, y).norm_floor_,
                                                              rel=1e-9)


@pytest.mark.usefixtures("sparse_as_given")
def test_a_stream_of_single_rows_takes_the_median_of_its_first_256():
    rng = np.random.default_rng(3)
    dense = rng.normal(size=(400, 6)) * rng.uniform(0.1, 10, size=(400, 1))
    y = (dense[:, 0] > 0).astype(int)
    X = sp.csr_matrix(dense)  # sparse: the rows as given (dense ones would be standardized)
    est = sk.FeatureHashingClassifier(sketch_width=64, random_state=0)
    for i in range(400):
        est.partial_fit(X[i:i + 1], y[i:i + 1], classes=[0, 1])
        seen = min(i + 1, 256)
        assert est.norm_floor_ == pytest.approx(median_row_norm2(dense[:seen]), rel=1e-12)
    # One call of 256 rows or more fixes it at once.
    once = sk.FeatureHashingClassifier(sketch_width=64, random_state=0)
    once.partial_fit(X[:256], y[:256], classes=[0, 1])
    assert once.norm_floor_ == est.norm_floor_


def test_features_of_very_different_ranges_warn_and_standardised_ones_learn(monkeypatch):
    # Raw wine: proline in the hundreds to thousands, hue near 1. A row's norm is
    # proline's, so, read as given, the other features barely move: the fit says so,
    # naming the cure.
    X, y = load_wine(return_X_y=True)
    # Sparse input read as given (as every sparse input was before tables and measured
    # features were scaled: the wide bags of counts that still are, with columns of
    # such ranges, fail alike).
    with monkeypatch.context() as patch:
        patch.setattr(_columns, "SPARSE_TABLE_MAX_WIDTH", 0)
        patch.setattr(_columns, "MAX_SCALED_KEYS", 0)
        with pytest.warns(ConvergenceWarning, match="MaxAbsScaler"):
            sk.FeatureHashingClassifier(random_state=0).fit(sp.csr_matrix(X), y)
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        pipe = make_pipeline(StandardScaler(), sk.FeatureHashingClassifier(random_state=0))
        assert pipe.fit(X, y).score(X, y) > 0.95
        # Dense columns are standardized by the estimator itself: the same model.
        own = sk.FeatureHashingClassifier(random_state=0).fit(X, y)
        np.testing.assert_allclose(own.decision_function(X), pipe.decision_function(X),
                                   rtol=1e-9, atol=1e-9)
        # So is a table stored sparse (no smaller than the array: read as the array).
        narrow = sk.FeatureHashingClassifier(random_state=0).fit(sp.csr_matrix(X), y)
        np.testing.assert_array_equal(narrow.decision_function(X), own.decision_function(X))
