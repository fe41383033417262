"""MISSION, IHT and feature hashing estimators: integration, equivalences, exact
agreement with a dense NumPy reference of the SGD update, input handling, memory
and the selection API."""
import itertools
import pickle
import sys
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.special import expit
from sklearn.base import clone
from sklearn.exceptions import NotFittedError
from sklearn.feature_selection import SelectFromModel
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import GridSearchCV
from sklearn.pipeline import Pipeline
from sklearn.utils.validation import check_is_fitted

from sklearn_sketch import (
    FeatureHashingClassifier,
    IHTClassifier,
    IHTRegressor,
    MissionClassifier,
    MissionRegressor,
)

sys.path.insert(0, str(Path(__file__).parent))
from _reference import (  # noqa: E402
    assert_refuses_class_errors,
    assert_refuses_non_finite_X,
    assert_refuses_wrong_n_features,
    assert_same_snapshot,
    assert_same_state,
    dense_sgd,
    encode,
    model_coordinates,
    snapshot,
)

ALL = [MissionClassifier, MissionRegressor, IHTClassifier, IHTRegressor,
       FeatureHashingClassifier]
CLASSIFIERS = [MissionClassifier, IHTClassifier, FeatureHashingClassifier]
REGRESSORS = [MissionRegressor, IHTRegressor]
SELECTORS = [MissionClassifier, MissionRegressor, IHTClassifier, IHTRegressor]
SKETCHED = (MissionClassifier, MissionRegressor, FeatureHashingClassifier)


def _name(cls):
    return cls.__name__


def is_classifier(est_or_cls):
    cls = est_or_cls if isinstance(est_or_cls, type) else type(est_or_cls)
    return cls in CLASSIFIERS


# ------------------------------------------------------------------ helpers
def make_estimator(cls, **params):
    """Small models; a narrow sketch so that buckets collide (equivalence tests)."""
    kw = {"random_state": 0}
    if cls in SELECTORS:
        kw["n_features_to_select"] = 6
    if cls in SKETCHED:
        kw["sketch_width"] = 32
    kw.update(params)
    return cls(**kw)


def make_data(cls_or_kind, n_samples=45, n_features=15, n_classes=2, seed=0, density=0.5):
    """Sparse-ish Gaussian X and labels (classes 3, 5, 7, ...) or a real target."""
    rng = np.random.RandomState(seed)
    X = rng.normal(size=(n_samples, n_features))
    X[rng.rand(n_samples, n_features) > density] = 0.0
    regression = cls_or_kind == "regression" or cls_or_kind in REGRESSORS
    if regression:
        return X, X @ rng.normal(size=n_features) + 0.1 * rng.normal(size=n_samples)
    scores = X @ rng.normal(size=(n_features, n_classes))
    index = scores.argmax(axis=1)
    index[:n_classes] = np.arange(n_classes)  # every class present
    return X, 3 + 2 * index


def fit_kwargs(est, y):
    return {"classes": np.unique(y)} if is_classifier(est) else {}


def planted_data(n_samples=400, n_features=200, seed=0):
    rng = np.random.RandomState(seed)
    X = rng.normal(size=(n_samples, n_features))
    planted = np.array([5, 50, 120, 177])
    y = (X[:, planted] @ np.array([2.0, -2.0, 1.5, -1.5]) > 0).astype(int)
    return X, y, planted


# ============================================================ 1. integration
def test_pipeline_selects_planted_features_and_predicts_well():
    X, y, planted = planted_data(n_samples=600)
    pipe = Pipeline([
        ("select", MissionClassifier(n_features_to_select=8, sketch_width=512,
                                     random_state=0)),
        ("clf", LogisticRegression()),
    ])
    pipe.fit(X[:400], y[:400])
    support = pipe.named_steps["select"].get_support(indices=True)
    assert set(planted) <= set(support)
    assert len(support) <= 8
    assert pipe.named_steps["clf"].coef_.shape == (1, len(support))
    pred = pipe.predict(X[400:])
    assert set(np.unique(pred)) <= {0, 1}
    assert pipe.score(X[400:], y[400:]) > 0.9


def test_grid_search_over_sketch_parameters():
    X, y, _ = planted_data(n_samples=240)
    grid = {"n_features_to_select": [4, 8], "sketch_width": [128, 1024], "eta0": [0.1, 0.5]}
    search = GridSearchCV(MissionClassifier(random_state=0, max_iter=2), grid, cv=3)
    search.fit(X, y)
    combos = {tuple(sorted(p.items())) for p in search.cv_results_["params"]}
    expected = {tuple(sorted(zip(grid, values))) for values in itertools.product(*grid.values())}
    assert combos == expected
    assert len(search.cv_results_["mean_test_score"]) == 8
    assert tuple(sorted(search.best_params_.items())) in expected
    best = search.best_estimator_
    check_is_fitted(best)
    for key, value in search.best_params_.items():
        assert best.get_params()[key] == value
    assert len(best.get_support(indices=True)) <= best.n_features_to_select
    assert best.score(X, y) == pytest.approx(
        np.mean(best.predict(X) == y))


def test_select_from_model_support_is_planted():
    X, y, planted = planted_data()
    sfm = SelectFromModel(MissionClassifier(n_features_to_select=10, sketch_width=512,
                                            random_state=0),
                          max_features=4, threshold=-np.inf)
    sfm.fit(X, y)
    np.testing.assert_array_equal(sfm.get_support(indices=True), planted)
    np.testing.assert_array_equal(sfm.transform(X), X[:, planted])


@pytest.mark.parametrize("cls", ALL, ids=_name)
def test_clone_gives_unfitted_estimator_with_equal_params(cls):
    X, y = make_data(cls)
    est = make_estimator(cls, eta0=0.05, batch_size=3, max_iter=2).fit(X, y)
    cloned = clone(est)
    assert cloned.get_params() == est.get_params()
    with pytest.raises(NotFittedError):
        check_is_fitted(cloned)
    for attr in ("intercept_", "sketches_", "heaps_", "t_", "memory_bytes_"):
        assert not hasattr(cloned, attr)


@pytest.mark.parametrize("cls", ALL, ids=_name)
@pytest.mark.parametrize("n_classes", [2, 3])
def test_pickle_round_trip_and_continued_training(cls, n_classes):
    if cls in REGRESSORS and n_classes == 3:
        pytest.skip("regressors have no classes")
    X, y = make_data(cls, n_classes=n_classes)
    est = make_estimator(cls, batch_size=2, max_iter=2, alpha=1e-3).fit(X, y)
    copy = pickle.loads(pickle.dumps(est))
    assert_same_state(est, copy)
    np.testing.assert_array_equal(est.predict(X), copy.predict(X))
    if is_classifier(est):
        np.testing.assert_array_equal(est.decision_function(X), copy.decision_function(X))
    # Continue training both: identical models, and the copy is independent.
    X2, y2 = make_data(cls, n_classes=n_classes, seed=1)
    before = snapshot(est)
    copy.partial_fit(X2, y2)
    assert snapshot(est)["t_"] == before["t_"]
    np.testing.assert_array_equal(snapshot(est)["intercept_"], before["intercept_"])
    est.partial_fit(X2, y2)
    assert_same_state(est, copy)
    assert est.t_ == before["t_"] + len(y2)
    np.testing.assert_array_equal(est.predict(X), copy.predict(X))


# ================================================ 2. partial_fit / fit / warm_start
_EQUIV_CASES = ([(cls, k) for cls in CLASSIFIERS for k in (2, 4)]
                + [(cls, None) for cls in REGRESSORS])


def _equiv_id(case):
    cls, k = case
    return _name(cls) + ("" if k is None else f"-{k}cls")


@pytest.mark.parametrize("case", _EQUIV_CASES, ids=_equiv_id)
@pytest.mark.parametrize("batch_size", [1, 7])
@pytest.mark.parametrize("shuffle", [False, True])
def test_partial_fit_passes_equal_fit(case, batch_size, shuffle):
    cls, n_classes = case
    X, y = make_data(cls, n_classes=n_classes or 2)
    n_passes = 3
    fitted = make_estimator(cls, shuffle=shuffle, batch_size=batch_size, alpha=1e-3,
                            max_iter=n_passes).fit(X, y)
    partial = make_estimator(cls, shuffle=shuffle, batch_size=batch_size, alpha=1e-3)
    for _ in range(n_passes):
        partial.partial_fit(X, y, **fit_kwargs(partial, y))
    assert_same_state(fitted, partial)
    assert fitted.t_ == 1 + n_passes * len(y)
    assert fitted.n_iter_ == n_passes and partial.n_iter_ == 1
    # The passes do something: one pass less is a different model.
    shorter = make_estimator(cls, shuffle=shuffle, batch_size=batch_size, alpha=1e-3,
                             max_iter=n_passes - 1).fit(X, y)
    assert not np.array_equal(shorter.intercept_, fitted.intercept_)
    if shuffle:  # and the shuffling really reorders the samples
        in_order = make_estimator(cls, shuffle=False, batch_size=batch_size, alpha=1e-3,
                                  max_iter=n_passes).fit(X, y)
        assert not np.array_equal(in_order.intercept_, fitted.intercept_)


@pytest.mark.parametrize("case", _EQUIV_CASES, ids=_equiv_id)
@pytest.mark.parametrize("batch_size", [1, 7])
@pytest.mark.parametrize("shuffle", [False, True])
def test_warm_start_fits_equal_one_long_fit(case, batch_size, shuffle):
    cls, n_classes = case
    X, y = make_data(cls, n_classes=n_classes or 2)
    long = make_estimator(cls, shuffle=shuffle, batch_size=batch_size, max_iter=5).fit(X, y)
    warm = make_estimator(cls, shuffle=shuffle, batch_size=batch_size, warm_start=True,
                          max_iter=2).fit(X, y)
    warm.set_params(max_iter=3).fit(X, y)
    assert_same_state(long, warm)
    assert warm.n_iter_ == 3
    # Without warm_start the second fit starts over.
    cold = make_estimator(cls, shuffle=shuffle, batch_size=batch_size, max_iter=2).fit(X, y)
    cold.set_params(max_iter=3).fit(X, y)
    assert cold.t_ == 1 + 3 * len(y)


# ===================================================== 3. dense reference
# (loss, n_classes or None for regression, learning_rate)
_REF_PROBLEMS = [
    ("log_loss", 2, "invscaling"),
    ("hinge", 2, "constant"),
    ("modified_huber", 2, "invscaling"),
    ("log_loss", 3, "invscaling"),      # softmax
    ("hinge", 3, "constant"),           # one-vs-rest
    ("squared_error", None, "invscaling"),
]
_REF_SETTINGS = [  # (alpha, batch_size, weighted, schedule override)
    (0.0, 1, False, None),
    (0.0, 5, True, None),
    (0.02, 1, True, "optimal"),
    (0.02, 5, False, None),
    (0.0, 1, True, "normalized"),
    (0.02, 5, True, "normalized"),
]


def _ref_problem(loss, n_classes, n_samples=40, n_features=20, seed=3):
    rng = np.random.RandomState(seed)
    X = 0.5 * rng.normal(size=(n_samples, n_features))
    X[rng.rand(n_samples, n_features) > 0.6] = 0.0
    X[:, 7] = 0.0  # a column never touched
    sw = rng.uniform(0.5, 1.5, size=n_samples)
    if n_classes is None:
        return X, X @ rng.normal(size=n_features), sw
    idx = (X @ rng.normal(size=(n_features, n_classes))).argmax(axis=1)
    idx[:n_classes] = np.arange(n_classes)
    return X, np.array([10, 20, 30])[idx], sw


def _ref_run(est, X, y, sw, loss, n_classes, k=None):
    p = est.get_params()
    if n_classes is None:
        y_enc, n_models, ref_loss = y, 1, loss
    else:
        classes = np.unique(y)
        y_enc = encode(y, classes)
        n_models = 1 if n_classes == 2 else n_classes
        ref_loss = "softmax" if (loss == "log_loss" and n_classes > 2) else loss
    return dense_sgd(X, y_enc, loss=ref_loss, n_models=n_models,
                     learning_rate=p["learning_rate"], eta0=p["eta0"], power_t=p["power_t"],
                     alpha=p["alpha"], batch_size=p["batch_size"], max_iter=p["max_iter"],
                     sample_weight=sw, k=k)[:3]


def _ref_estimator(cls, loss, n_classes, schedule, alpha, batch_size, **extra):
    kw = dict(learning_rate=schedule, eta0=0.2, alpha=alpha, batch_size=batch_size,
              max_iter=2, shuffle=False, random_state=0, **extra)
    if n_classes is None:
        kw["eta0"] = 0.05
    else:
        kw["loss"] = loss
    return cls(**kw)


def _assert_no_collisions(est, n_features):
    for sketch in est.sketches_:
        buckets, _ = sketch.buckets(np.arange(n_features))
        for row in buckets:
            assert len(np.unique(row)) == n_features, "test precondition: no collisions"


def _ids_settings(s):
    return f"alpha{s[0]}-bs{s[1]}{'-w' if s[2] else ''}{'-' + s[3] if s[3] else ''}"


@pytest.mark.parametrize("problem", _REF_PROBLEMS, ids=lambda p: f"{p[0]}-{p[1]}")
@pytest.mark.parametrize("setting", _REF_SETTINGS, ids=_ids_settings)
@pytest.mark.parametrize("depth", [1, 3])
def test_mission_equals_dense_reference_without_collisions(problem, setting, depth):
    loss, n_classes, schedule = problem
    alpha, batch_size, weighted, override = setting
    schedule = override or schedule
    X, y, sw = _ref_problem(loss, n_classes)
    cls = MissionRegressor if n_classes is None else MissionClassifier
    est = _ref_estimator(cls, loss, n_classes, schedule, alpha, batch_size,
                         n_features_to_select=X.shape[1], sketch_width=2**20,
                         sketch_depth=depth)
    est.fit(X, y, sample_weight=sw if weighted else None)
    _assert_no_collisions(est, X.shape[1])
    W, b, t = _ref_run(est, X, y, sw if weighted else None, loss, n_classes)
    scale = max(1.0, np.abs(W).max())
    assert np.abs(W).max() > 1e-3  # something was learned
    np.testing.assert_allclose(est.coef_.toarray(), W, rtol=1e-4, atol=1e-5 * scale)
    np.testing.assert_allclose(est.intercept_, b, rtol=1e-4, atol=1e-5 * max(1, np.abs(b).max()))
    assert est.t_ == t
    # The never-touched column has no weight and is not selected.
    assert not est.get_support()[7]
    # Predictions read the heap weights.
    scores = model_coordinates(X, X, schedule) @ W.T + b
    if n_classes is None:
        np.testing.assert_allclose(est.predict(X), scores.ravel(), rtol=1e-4, atol=1e-4 * scale)
    else:
        np.testing.assert_allclose(est.decision_function(X),
                                   scores.ravel() if n_classes == 2 else scores,
                                   rtol=1e-4, atol=1e-4 * scale)


@pytest.mark.parametrize("problem", [p for p in _REF_PROBLEMS if p[1] is not None],
                         ids=lambda p: f"{p[0]}-{p[1]}")
@pytest.mark.parametrize("setting", _REF_SETTINGS, ids=_ids_settings)
@pytest.mark.parametrize("depth", [1, 3])
def test_feature_hashing_equals_dense_reference_without_collisions(problem, setting, depth):
    loss, n_classes, schedule = problem
    alpha, batch_size, weighted, override = setting
    schedule = override or schedule
    X, y, sw = _ref_problem(loss, n_classes)
    est = _ref_estimator(FeatureHashingClassifier, loss, n_classes, schedule, alpha,
                         batch_size, sketch_width=2**20, sketch_depth=depth)
    est.fit(X, y, sample_weight=sw if weighted else None)
    _assert_no_collisions(est, X.shape[1])
    W, b, t = _ref_run(est, X, y, sw if weighted else None, loss, n_classes)
    scale = max(1.0, np.abs(W).max())
    X_test = np.random.RandomState(9).normal(size=(30, X.shape[1]))
    expected = model_coordinates(X_test, X, schedule) @ W.T + b
    np.testing.assert_allclose(est.decision_function(X_test),
                               expected.ravel() if n_classes == 2 else expected,
                               rtol=1e-4, atol=1e-4 * scale)
    np.testing.assert_allclose(est.intercept_, b, rtol=1e-4, atol=1e-5 * max(1, np.abs(b).max()))
    assert est.t_ == t
    # The sketch itself holds the weights.
    for c, sketch in enumerate(est.sketches_):
        np.testing.assert_allclose(sketch.query(np.arange(X.shape[1])), W[c],
                                   rtol=1e-4, atol=1e-5 * scale)


@pytest.mark.parametrize("problem", _REF_PROBLEMS, ids=lambda p: f"{p[0]}-{p[1]}")
@pytest.mark.parametrize("setting", _REF_SETTINGS, ids=_ids_settings)
def test_iht_with_room_for_every_feature_equals_dense_reference(problem, setting):
    loss, n_classes, schedule = problem
    alpha, batch_size, weighted, override = setting
    schedule = override or schedule
    X, y, sw = _ref_problem(loss, n_classes)
    cls = IHTRegressor if n_classes is None else IHTClassifier
    est = _ref_estimator(cls, loss, n_classes, schedule, alpha, batch_size,
                         n_features_to_select=X.shape[1])
    est.fit(X, y, sample_weight=sw if weighted else None)
    W, b, t = _ref_run(est, X, y, sw if weighted else None, loss, n_classes)
    assert np.abs(W).max() > 1e-3
    np.testing.assert_allclose(est.coef_.toarray(), W, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(est.intercept_, b, rtol=1e-9, atol=1e-12)
    assert est.t_ == t


@pytest.mark.parametrize("problem", [("log_loss", 2, "invscaling"), ("hinge", 2, "constant"),
                                     ("log_loss", 3, "invscaling"),
                                     ("squared_error", None, "invscaling")],
                         ids=lambda p: f"{p[0]}-{p[1]}")
@pytest.mark.parametrize("setting", _REF_SETTINGS, ids=_ids_settings)
@pytest.mark.parametrize("k", [1, 3])
def test_iht_small_k_equals_hard_thresholding_reference(problem, setting, k):
    loss, n_classes, schedule = problem
    alpha, batch_size, weighted, override = setting
    schedule = override or schedule
    X, y, sw = _ref_problem(loss, n_classes)
    cls = IHTRegressor if n_classes is None else IHTClassifier
    est = _ref_estimator(cls, loss, n_classes, schedule, alpha, batch_size,
                         n_features_to_select=k)
    est.fit(X, y, sample_weight=sw if weighted else None)
    W, b, t = _ref_run(est, X, y, sw if weighted else None, loss, n_classes, k=k)
    assert ((W != 0).sum(axis=1) <= k).all()
    np.testing.assert_allclose(est.coef_.toarray(), W, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(est.intercept_, b, rtol=1e-9, atol=1e-12)
    # Hard thresholding differs from plain SGD here.
    W_full, _, _ = _ref_run(est, X, y, sw if weighted else None, loss, n_classes)
    assert not np.allclose(W, W_full)


@pytest.mark.parametrize("cls", [IHTClassifier, MissionClassifier], ids=_name)
def test_log_loss_saturated_branches_match_reference(cls):
    """Large margins take the z > 18 and z < -18 branches of the log-loss derivative."""
    X, y, _ = _ref_problem("log_loss", 2, seed=5)
    X = 8.0 * X
    y = y.copy()
    y[::7] = np.where(y[::7] == 10, 20, 10)  # label noise: confidently wrong samples
    kw = dict(n_features_to_select=X.shape[1], loss="log_loss", learning_rate="constant",
              eta0=3.0, max_iter=3, shuffle=False, random_state=0)
    if cls is MissionClassifier:
        kw.update(sketch_width=2**20, sketch_depth=1)
    est = cls(**kw).fit(X, y)
    stats = {}
    classes = np.unique(y)
    W, b, t, _ = dense_sgd(X, encode(y, classes), loss="log_loss", n_models=1,
                           learning_rate="constant", eta0=3.0, max_iter=3, stats=stats)
    assert stats.get("z>18", 0) > 0 and stats.get("z<-18", 0) > 0, stats
    rtol = 1e-9 if cls is IHTClassifier else 1e-4
    scale = np.abs(W).max()
    np.testing.assert_allclose(est.coef_.toarray(), W, rtol=rtol, atol=rtol * scale)
    np.testing.assert_allclose(est.intercept_, b, rtol=rtol, atol=rtol * max(1, abs(b).max()))


# ====================================================== 4. dense vs CSR
def _csr_variants(X):
    csr = sp.csr_matrix(X)
    yield "csr", csr
    big = csr.copy()
    big.indices = big.indices.astype(np.int64)
    big.indptr = big.indptr.astype(np.int64)
    assert big.indices.dtype == np.int64
    yield "csr-int64", big
    # Unsorted rows with every entry split into two halves (exact in float).
    rng = np.random.RandomState(0)
    indptr, indices, data = [0], [], []
    for i in range(csr.shape[0]):
        cols = csr.indices[csr.indptr[i]:csr.indptr[i + 1]]
        vals = csr.data[csr.indptr[i]:csr.indptr[i + 1]]
        cols2, vals2 = np.concatenate([cols, cols]), np.concatenate([vals / 2, vals / 2])
        perm = rng.permutation(len(cols2))
        indices.extend(cols2[perm])
        data.extend(vals2[perm])
        indptr.append(len(indices))
    dup = sp.csr_matrix((np.array(data), np.array(indices, dtype=np.int32), np.array(indptr)),
                        shape=csr.shape)
    assert not dup.has_canonical_format
    yield "csr-unsorted-duplicates", dup
    yield "csr_array", sp.csr_array(X)


@pytest.mark.parametrize("cls", ALL, ids=_name)
@pytest.mark.parametrize("batch_size", [1, 4])
@pytest.mark.usefixtures("sparse_as_given")
def test_dense_and_csr_give_the_same_model(cls, batch_size):
    X, y = make_data(cls, n_classes=3)
    dense = make_estimator(cls, batch_size=batch_size, alpha=1e-3).fit(X, y)
    # Dense columns train standardized under 'normalized' steps; sparse input as given.
    S = model_coordinates(X, X, dense.learning_rate)
    for (name, Xs), (_, Ss) in zip(_csr_variants(X), _csr_variants(S)):
        sparse = make_estimator(cls, batch_size=batch_size, alpha=1e-3).fit(Ss, y)
        assert_same_state(dense, sparse, standardization=False)
        np.testing.assert_array_equal(dense.predict(X), sparse.predict(Ss), err_msg=name)
        if is_classifier(dense):
            np.testing.assert_array_equal(dense.predict(X), dense.predict(Xs), err_msg=name)
        else:  # duplicates are summed in another order: rounding only
            np.testing.assert_allclose(dense.predict(X), dense.predict(Xs), rtol=1e-12,
                                       atol=1e-12, err_msg=name)
        if is_classifier(dense):
            np.testing.assert_allclose(dense.decision_function(X),
                                       dense.decision_function(Xs), rtol=1e-12, atol=1e-12)
        # partial_fit on sparse continues like on dense.
        dense_copy = pickle.loads(pickle.dumps(dense))
        dense_copy.partial_fit(X, y)
        sparse.partial_fit(Ss, y)
        assert_same_state(dense_copy, sparse, standardization=False)


@pytest.mark.parametrize("cls", SELECTORS, ids=_name)
@pytest.mark.usefixtures("sparse_as_given")
def test_csr_explicit_zeros_select_the_same_features_as_dense(cls):
    """A stored zero is no data: it must not offer an untouched feature to the heap."""
    X, y = make_data(cls, n_features=10, density=1.0)
    X[:, 9] = 0.0
    dense = make_estimator(cls, n_features_to_select=20).fit(X, y)
    S = model_coordinates(X, X, dense.learning_rate)  # what the dense model trains on
    assert (S[:, :9] != 0).all() and (S[:, 9] == 0).all()
    with_zeros = sp.csr_matrix(np.where(S == 0, 1.0, S))  # every entry stored ...
    assert with_zeros.nnz == S.size
    with_zeros.data[with_zeros.indices == 9] = 0.0         # ... column 9 as stored zeros
    assert with_zeros.nnz == S.size
    np.testing.assert_array_equal(with_zeros.toarray(), S)
    sparse = make_estimator(cls, n_features_to_select=20).fit(with_zeros, y)
    np.testing.assert_array_equal(dense.coef_.toarray(), sparse.coef_.toarray())
    np.testing.assert_array_equal(dense.predict(X), sparse.predict(with_zeros))
    assert not dense.get_support()[9]
    np.testing.assert_array_equal(dense.get_support(), sparse.get_support())


# ====================================================== 5. bad input
def _fitted(cls, **params):
    X, y = make_data(cls, n_classes=3)
    return make_estimator(cls, alpha=1e-3, batch_size=2, **params).fit(X, y), X, y


def _assert_unchanged(est, before):
    assert_same_snapshot(snapshot(est), before)


@pytest.mark.parametrize("cls", ALL, ids=_name)
@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
@pytest.mark.parametrize("sparse", [False, True])
def test_non_finite_X_raises_and_keeps_the_model(cls, bad, sparse):
    est, X, y = _fitted(cls)
    assert_refuses_non_finite_X(est, X, y, bad, sparse)


@pytest.mark.parametrize("cls", ALL, ids=_name)
def test_wrong_n_features_raises_and_keeps_the_model(cls):
    est, X, y = _fitted(cls)
    assert_refuses_wrong_n_features(est, X, y)


@pytest.mark.parametrize("cls", CLASSIFIERS, ids=_name)
def test_class_errors_keep_the_model(cls):
    est, X, y = _fitted(cls)
    assert_refuses_class_errors(est, X, y)


@pytest.mark.parametrize("cls", CLASSIFIERS, ids=_name)
def test_class_errors_on_unfitted_estimator(cls):
    X, y = make_data(cls)
    est = make_estimator(cls)
    with pytest.raises(ValueError, match="class"):
        est.fit(X, np.zeros(len(y)))
    with pytest.raises(ValueError, match="classes"):
        est.partial_fit(X, y)
    with pytest.raises(ValueError, match="classes"):
        est.partial_fit(X, y, classes=[3])
    with pytest.raises(ValueError, match="classes"):
        est.partial_fit(X, y, classes=[3, 4])  # y holds 5
    for attr in ("classes_", "intercept_", "n_features_in_", "t_"):
        assert not hasattr(est, attr)
    with pytest.raises(NotFittedError):
        est.predict(X)
    est.partial_fit(X, y, classes=[3, 5])
    assert est.t_ == 1 + len(y)


@pytest.mark.parametrize("cls", ALL, ids=_name)
def test_negative_sample_weight_raises_and_keeps_the_model(cls):
    est, X, y = _fitted(cls)
    before = snapshot(est)
    sw = np.ones(len(y))
    sw[4] = -0.5
    with pytest.raises(ValueError, match="(?i)negative"):
        est.fit(X, y, sample_weight=sw)
    _assert_unchanged(est, before)
    with pytest.raises(ValueError, match="(?i)negative"):
        est.partial_fit(X, y, sample_weight=sw)
    _assert_unchanged(est, before)
    with pytest.raises(ValueError):
        est.partial_fit(X, y, sample_weight=np.ones(len(y) - 1))
    _assert_unchanged(est, before)


def _exploding_data(cls, n_samples=30):
    X, y = make_data(cls, n_samples=n_samples, n_features=5, density=1.0)
    return X * 1e10, y


def _explode(est):
    return est.set_params(eta0=1e300, learning_rate="constant")


@pytest.mark.parametrize("cls", ALL, ids=_name)
@pytest.mark.parametrize("batch_size", [1, 4])
def test_divergence_raises_and_keeps_the_model(cls, batch_size):
    X_big, y_big = _exploding_data(cls)
    # From scratch: an error, and nothing fitted.
    fresh = _explode(make_estimator(cls, batch_size=batch_size))
    with pytest.raises(ValueError, match="diverged"):
        fresh.fit(X_big, y_big)
    with pytest.raises(NotFittedError):
        check_is_fitted(fresh)
    # On a fitted model: fit, warm-start fit and partial_fit leave it as it was.
    X, y = make_data(cls, n_features=5)
    est = make_estimator(cls, batch_size=batch_size).fit(X, y)
    before = snapshot(est)
    _explode(est)
    with pytest.raises(ValueError, match="diverged"):
        est.fit(X_big, y_big)
    _assert_unchanged(est, before)
    with pytest.raises(ValueError, match="diverged"):
        est.partial_fit(X_big, y_big)
    _assert_unchanged(est, before)
    est.set_params(warm_start=True)
    with pytest.raises(ValueError, match="diverged"):
        est.fit(X_big, y_big)
    _assert_unchanged(est, before)
    assert np.isfinite(est.predict(X)).all()


@pytest.mark.parametrize("cls", ALL, ids=_name)
def test_divergence_in_the_last_batch_is_detected(cls):
    """Weights that overflow in the final mini-batch of a pass must also be caught.

    With one batch holding every sample there is no later score to notice the
    overflow, so the update itself must be checked.
    """
    X_big, y_big = _exploding_data(cls)
    est = _explode(make_estimator(cls, batch_size=len(y_big), max_iter=1))
    try:
        est.fit(X_big, y_big)
    except ValueError as exc:
        assert "diverged" in str(exc)
        return
    # No error: then the model must at least be finite.
    state = snapshot(est)
    assert all(np.isfinite(t).all() for t in state["tables"]), "sketch holds inf/nan"
    assert all(np.isfinite(w).all() for _, w in state["heaps"]), "heap holds inf/nan"
    if is_classifier(est):
        assert np.isfinite(est.decision_function(X_big)).all()
    else:
        assert np.isfinite(est.predict(X_big)).all()


def test_feature_hashing_has_no_get_support():
    X, y = make_data(FeatureHashingClassifier)
    est = make_estimator(FeatureHashingClassifier).fit(X, y)
    with pytest.raises(AttributeError, match="does not select features"):
        est.get_support()
    with pytest.raises(AttributeError, match="does not select features"):
        est.get_support(indices=True)
    assert not hasattr(est, "coef_")
    assert not hasattr(est, "transform")
    assert est.heaps_ == []


# ====================================================== 6. memory
def _memory_case(cls, n_samples, n_features, seed=0):
    rng = np.random.RandomState(seed)
    per_row = 8
    rows = np.repeat(np.arange(n_samples), per_row)
    cols = rng.randint(0, n_features, size=n_samples * per_row)
    cols[::per_row] = 0  # column 0 everywhere, the last column somewhere
    cols[1] = n_features - 1
    X = sp.csr_matrix((rng.standard_normal(rows.size), (rows, cols)),
                      shape=(n_samples, n_features))
    if is_classifier(cls):
        y = np.arange(n_samples) % 3
    else:
        y = rng.normal(size=n_samples)
    return X.tocsr(), y


@pytest.mark.parametrize("cls", ALL, ids=_name)
@pytest.mark.usefixtures("sparse_as_given")
def test_memory_does_not_depend_on_data_size(cls):
    params = dict(max_iter=1, n_features_to_select=16) if cls in SELECTORS else dict(max_iter=1)
    if cls in SKETCHED:
        params["sketch_width"] = 128
    sizes = [(50, 100), (50, 100_000), (5000, 100), (5000, 100_000)]
    memories = []
    for n_samples, n_features in sizes:
        X, y = _memory_case(cls, n_samples, n_features)
        est = make_estimator(cls, **params).fit(X, y)
        expected = (sum(s.table.nbytes + s.seeds.nbytes for s in est.sketches_)
                    + sum(h.memory_bytes for h in est.heaps_) + 2 * est.intercept_.nbytes)
        assert est.memory_bytes_ == expected
        n_models = 1 if not is_classifier(est) else 3
        assert len(est.intercept_) == n_models
        assert len(est.sketches_) == (n_models if cls in SKETCHED else 0)
        assert len(est.heaps_) == (n_models if cls in SELECTORS else 0)
        if cls in SKETCHED:
            depth = est.sketch_depth
            assert all(s.table.shape == (depth, 128) for s in est.sketches_)
        memories.append(est.memory_bytes_)
    assert len(set(memories)) == 1, memories


# ====================================================== 7. selection API
@pytest.mark.parametrize("cls", SELECTORS, ids=_name)
@pytest.mark.parametrize("n_classes", [2, 4])
def test_support_transform_and_feature_names(cls, n_classes):
    if cls in REGRESSORS and n_classes == 4:
        pytest.skip("regressors have no classes")
    X, y = make_data(cls, n_samples=80, n_features=30, n_classes=n_classes)
    k = 5
    est = make_estimator(cls, n_features_to_select=k).fit(X, y)
    mask = est.get_support()
    assert mask.dtype == bool and mask.shape == (30,)
    idx = est.get_support(indices=True)
    np.testing.assert_array_equal(idx, np.flatnonzero(mask))
    assert 0 < len(idx) <= k
    np.testing.assert_array_equal(np.sort(est.selected_features_.keys), idx)
    np.testing.assert_array_equal(est.transform(X), X[:, mask])
    Xt = est.transform(sp.csr_matrix(X))
    assert sp.issparse(Xt)
    np.testing.assert_array_equal(Xt.toarray(), X[:, mask])
    np.testing.assert_array_equal(est.get_feature_names_out(),
                                  np.array([f"x{i}" for i in idx], dtype=object))
    names = np.array([f"col_{i}" for i in range(30)], dtype=object)
    np.testing.assert_array_equal(est.get_feature_names_out(names), names[idx])
    with pytest.raises(ValueError):
        est.get_feature_names_out(names[:-1])


@pytest.mark.parametrize("cls", SELECTORS, ids=_name)
@pytest.mark.parametrize("n_classes", [2, 4])
def test_selection_is_top_k_by_max_abs_weight_over_models(cls, n_classes):
    if cls in REGRESSORS and n_classes == 4:
        pytest.skip("regressors have no classes")
    X, y = make_data(cls, n_samples=80, n_features=30, n_classes=n_classes)
    k = 4
    est = make_estimator(cls, n_features_to_select=k).fit(X, y)
    # Reference from the heaps: importance = max over models of |weight|.
    weight = {}
    for c, heap in enumerate(est.heaps_):
        assert len(heap) <= k
        for key, w in zip(*heap.items()):
            weight.setdefault(int(key), np.zeros(len(est.heaps_)))[c] = w
    ranked = sorted(weight, key=lambda key: (np.abs(weight[key]).max(), key), reverse=True)[:k]
    sel = est.selected_features_
    assert sel.keys.tolist() == ranked
    np.testing.assert_array_equal(sel.weights, np.array([weight[key] for key in ranked]))
    np.testing.assert_array_equal(est.get_support(indices=True), np.sort(ranked))
    if n_classes > 2:
        assert len(weight) > k  # the union of the heaps really is cut down
    # coef_ holds exactly the heap weights.
    coef = est.coef_.toarray()
    assert coef.shape == (len(est.heaps_), 30)
    expected = np.zeros_like(coef)
    for c, heap in enumerate(est.heaps_):
        keys, w = heap.items()
        expected[c, keys] = w
    np.testing.assert_array_equal(coef, expected)


# ====================================================== 8. probabilities
@pytest.mark.parametrize("cls", CLASSIFIERS, ids=_name)
@pytest.mark.parametrize("n_classes", [2, 3])
def test_predict_proba(cls, n_classes):
    X, y = make_data(cls, n_classes=n_classes)
    est = make_estimator(cls, loss="log_loss").fit(X, y)
    proba = est.predict_proba(X)
    assert proba.shape == (len(y), n_classes)
    assert (proba >= 0).all() and (proba <= 1).all()
    np.testing.assert_allclose(proba.sum(axis=1), 1.0, rtol=1e-12)
    np.testing.assert_array_equal(est.classes_[proba.argmax(axis=1)], est.predict(X))
    np.testing.assert_allclose(est.predict_log_proba(X), np.log(proba), rtol=1e-12)
    scores = est.decision_function(X)
    if n_classes == 2:
        np.testing.assert_allclose(proba[:, 1], expit(scores), rtol=1e-12)
    else:
        e = np.exp(scores - scores.max(axis=1, keepdims=True))
        np.testing.assert_allclose(proba, e / e.sum(axis=1, keepdims=True), rtol=1e-12)


@pytest.mark.parametrize("cls", CLASSIFIERS, ids=_name)
@pytest.mark.parametrize("loss", ["hinge", "modified_huber"])
def test_no_predict_proba_without_log_loss(cls, loss):
    X, y = make_data(cls)
    est = make_estimator(cls, loss=loss).fit(X, y)
    assert not hasattr(est, "predict_proba")
    assert not hasattr(est, "predict_log_proba")
    with pytest.raises(AttributeError, match="predict_proba") as exc:
        est.predict_proba(X)
    assert "log_loss" in str(exc.value) + str(exc.value.__cause__)
    assert hasattr(est.set_params(loss="log_loss"), "predict_proba")
