"""BEAR (online L-BFGS steps in a Count-Sketch): exact agreement with the dense
NumPy reference, the slot map of the curvature pairs under churn, memory,
partial_fit / warm_start / pickle equivalences, the curvature guard,
integration with scikit-learn, input handling and the multi-class layout."""
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
from sklearn.utils._param_validation import InvalidParameterError
from sklearn.utils.validation import check_is_fitted

from sklearn_sketch import BearClassifier, BearRegressor
from sklearn_sketch._base import FEATURE_COUNT_CELLS
from sklearn_sketch._bear_fast import LBFGSHistory, bear_pass, history_bytes

sys.path.insert(0, str(Path(__file__).parent))
from _bear_reference import _gradient, _two_loop, _vector, dense_bear  # noqa: E402
from _reference import (  # noqa: E402
    assert_refuses_non_finite_X,
    assert_refuses_schedule_switch,
    assert_refuses_wrong_n_features,
    assert_same_pairs,
    assert_same_snapshot,
    assert_same_state,
    fmix64,
    model_coordinates,
    pair_tuples,
    snapshot,
)

KINDS = ("binary", "multiclass", "regression")
LABELS = np.array([10, 20, 30, 40])
N_HUGE = 2**40


# ------------------------------------------------------------------ helpers
def make_data(kind, n_samples=48, n_features=12, seed=0, density=0.5, n_classes=None):
    """Gaussian X with ~50% zeros and an all-zero last column; labels or a target."""
    rng = np.random.RandomState(seed)
    X = rng.normal(size=(n_samples, n_features))
    X[rng.rand(n_samples, n_features) > density] = 0.0
    X[:, -1] = 0.0  # a column no sample holds
    sw = rng.uniform(0.5, 1.5, size=n_samples)
    if kind == "regression":
        return X, X @ rng.normal(size=n_features) + 0.1 * rng.normal(size=n_samples), sw
    n_classes = n_classes or (2 if kind == "binary" else 3)
    index = (X @ rng.normal(size=(n_features, n_classes))).argmax(axis=1)
    index[:n_classes] = np.arange(n_classes)  # every class present
    return X, LABELS[index], sw


def encode(kind, y):
    """``(y as the kernel sees it, n_models, reference loss)``."""
    if kind == "regression":
        return np.asarray(y, dtype=np.float64), 1, "squared_error"
    classes = np.unique(y)
    if len(classes) == 2:
        return np.where(y == classes[1], 1.0, -1.0), 1, "log_loss"
    return np.searchsorted(classes, y).astype(np.float64), len(classes), "log_loss"


def make_estimator(kind, **params):
    """Small models with a narrow sketch (buckets collide: equivalence tests)."""
    kw = dict(n_features_to_select=6, sketch_width=64, batch_size=4, history_size=3,
              random_state=0)
    kw.update(params)
    return (BearRegressor if kind == "regression" else BearClassifier)(**kw)


def fit_kwargs(est, y):
    return {"classes": np.unique(y)} if isinstance(est, BearClassifier) else {}


def has_collision(est, keys):
    keys = np.asarray(keys, dtype=np.int64)
    buckets, _ = est.sketches_[0].buckets(keys)
    return any(np.unique(row).size != keys.size for row in buckets)


def fit_without_collisions(make, keys, fit):
    """``fit(make(seed))`` for seeds 0, 1, ... until no two ``keys`` share a bucket."""
    for seed in range(50):
        est = fit(make(seed))
        if not has_collision(est, keys):
            # Every model's sketch hashes like the first one.
            for sketch in est.sketches_:
                np.testing.assert_array_equal(sketch.seeds, est.sketches_[0].seeds)
            return est
    raise AssertionError("test precondition: no collision-free random_state found")




def n_batches(n_samples, batch_size):
    return -(-n_samples // batch_size)


def planted_data(n_samples=400, n_features=200, seed=0):
    rng = np.random.RandomState(seed)
    X = rng.normal(size=(n_samples, n_features))
    planted = np.array([5, 50, 120, 177])
    y = (X[:, planted] @ np.array([2.0, -2.0, 1.5, -1.5]) > 0).astype(int)
    return X, y, planted


def batch_keys(X, rows):
    """Distinct keys of the CSR rows ``rows`` in first-appearance order."""
    seen = {}
    for row in rows:
        for key in X.indices[X.indptr[row]:X.indptr[row + 1]]:
            seen.setdefault(int(key), None)
    return list(seen)


def churn_stream(n_samples, n_keys, seed, nnz=(1, 4)):
    """Very sparse CSR rows over ``n_keys`` random keys in [0, 2**40); binary labels."""
    rng = np.random.default_rng(seed)
    keys = np.unique(rng.integers(0, N_HUGE, size=n_keys))
    informative = set(keys[:40].tolist())
    indptr, indices = [0], []
    y = np.zeros(n_samples, dtype=int)
    for i in range(n_samples):
        cols = np.sort(rng.choice(keys, size=rng.integers(nnz[0], nnz[1] + 1), replace=False))
        indices.extend(cols.tolist())
        indptr.append(len(indices))
        y[i] = int(bool(informative.intersection(cols.tolist())) or rng.random() < 0.2)
    data = rng.uniform(0.5, 1.5, size=len(indices))
    X = sp.csr_matrix((data, np.array(indices, dtype=np.int64), np.array(indptr)),
                      shape=(n_samples, N_HUGE))
    assert X.has_canonical_format
    return X, y, keys


# ============================================= 1. exact agreement with the reference
# A pairwise covering array over six on/off settings: every two settings meet
# in all four combinations within the six rows (row 0 has every setting off).
_FLAGS = ("alpha", "fit_intercept", "damping", "weighted", "depth3", "sparse")
_COLUMNS = list(itertools.combinations(range(1, 6), 3))[: len(_FLAGS)]
_SETTINGS = [dict(zip(_FLAGS, (row in column for column in _COLUMNS))) for row in range(6)]
for _a, _b in itertools.combinations(_FLAGS, 2):
    assert {(s[_a], s[_b]) for s in _SETTINGS} == {(0, 0), (0, 1), (1, 0), (1, 1)}

# Softmax with batches of one sample is left out: its per-class secant pairs
# can have tiny or negative curvature, and the iterates then depend chaotically
# on the float32 rounding of the sketch (the dense reference blows up too).
_REF_CASES = [(kind, bs, hs) for kind in KINDS for bs in (1, 5, 16) for hs in (1, 3, 5)
              if not (kind == "multiclass" and bs == 1)]


def _setting_id(s):
    return "-".join(name for name in _FLAGS if s[name]) or "plain"


@pytest.mark.parametrize("case", _REF_CASES, ids=lambda c: f"{c[0]}-bs{c[1]}-hs{c[2]}")
@pytest.mark.parametrize("setting", _SETTINGS, ids=_setting_id)
def test_equals_dense_reference_without_collisions(case, setting):
    kind, batch_size, history_size = case
    X, y, sw = make_data(kind)
    n, p = X.shape
    alpha = 0.01 if setting["alpha"] else 0.0
    damping = 1e-2 if setting["damping"] else 0.0
    fit_intercept = setting["fit_intercept"]
    weights = sw if setting["weighted"] else None
    # One-sample batches give rank-one curvature pairs: over several passes the
    # iterates become so sensitive that the sketch's float32 rounding alone
    # moves them by up to 1e-2 (the dense reference rounded to float32 moves as
    # much), so they get one pass; the larger batches get three.
    n_passes = 1 if batch_size == 1 else 3
    X_fit = sp.csr_matrix(X) if setting["sparse"] else X
    params = dict(n_features_to_select=p, sketch_width=2**16,
                  sketch_depth=3 if setting["depth3"] else 1, history_size=history_size,
                  damping=damping, learning_rate="constant", eta0=0.1, alpha=alpha,
                  fit_intercept=fit_intercept, batch_size=batch_size, max_iter=n_passes,
                  shuffle=False)
    est = fit_without_collisions(
        lambda seed: make_estimator(kind, random_state=seed, **params), np.arange(p),
        lambda e: e.fit(X_fit, y, sample_weight=weights))
    y_enc, K, loss = encode(kind, y)
    W, b, window = dense_bear(X, y_enc, loss=loss, n_models=K, eta0=0.1,
                              batch_size=batch_size, history_size=history_size, alpha=alpha,
                              fit_intercept=fit_intercept, sample_weight=weights,
                              n_passes=n_passes, damping=damping)
    scale = max(1.0, np.abs(W).max())
    assert 0.05 < np.abs(W).max()  # something was learned
    np.testing.assert_allclose(est.coef_.toarray(), W, rtol=1e-5, atol=1e-5 * scale)
    np.testing.assert_allclose(est.intercept_, b, rtol=1e-5, atol=1e-5 * scale)
    if not fit_intercept:
        np.testing.assert_array_equal(est.intercept_, 0.0)
    assert est.t_ == 1 + n_passes * n
    assert est.history_.n_batches == n_passes * n_batches(n, batch_size)
    # The heap holds every feature a sample has (k = p), never the empty column.
    used = np.flatnonzero((X != 0).any(axis=0))
    for heap in est.heaps_:
        assert sorted(heap.keys().tolist()) == used.tolist()
    assert not est.get_support()[-1]
    # The stored window: the same pairs on the same coordinates (the kernel keeps
    # a batch's keys in first-appearance order, the reference sorted; -1 = intercept).
    pairs = est.history_.pairs()
    assert len(pairs) == len(window) == min(history_size, est.history_.n_batches)
    for i, (got, (active, s, r, valid)) in enumerate(zip(pairs, window)):
        expected_keys = np.concatenate([[-1], active]) if fit_intercept else active
        order = np.argsort(got["keys"], kind="stable")
        np.testing.assert_array_equal(got["keys"][order], expected_keys, err_msg=f"pair {i}")
        assert got["s"].shape == got["r"].shape == (K, len(expected_keys))
        for name, value, ref in (("s", got["s"], s), ("r", got["r"], r)):
            np.testing.assert_allclose(value[:, order], ref, rtol=1e-4,
                                       atol=1e-5 * max(1e-3, np.abs(ref).max()),
                                       err_msg=f"pair {i}: {name}")
        np.testing.assert_array_equal(got["valid"], valid, err_msg=f"pair {i}: valid")
    # Predictions read the heap weights.
    scores = X @ W.T + b
    if kind == "regression":
        np.testing.assert_allclose(est.predict(X), scores.ravel(), rtol=1e-4, atol=1e-4 * scale)
    else:
        np.testing.assert_allclose(est.decision_function(X_fit),
                                   scores.ravel() if K == 1 else scores,
                                   rtol=1e-4, atol=1e-4 * scale)


class _CappedBear(BearClassifier):
    """Batches capped at ``_CAP`` non-zeros, as a memory budget caps them."""

    _CAP = 9

    def _train_pass(self, state, params, indptr, indices, data, y, sample_weight, order,
                    max_batch_nnz):
        state.history.reserve(self._CAP + 1)
        return bear_pass(params, state.sketches, state.heaps, state.intercept,
                         state.history, indptr, indices, data, y, sample_weight, order,
                         state.t, self._CAP, batch_nnz_cap=self._CAP,
                         feature_squares=state.feature_counts)


@pytest.mark.parametrize("kind", ["binary", "multiclass"])
def test_batches_capped_in_non_zeros_equal_dense_reference(kind):
    """A batch ends before the row that would take it past the cap (rows of 1 to 6
    non-zeros, cap 9: batches of 2 to 5 rows instead of batch_size=5)."""
    rng = np.random.RandomState(2)
    n, p = 120, 30
    X = np.zeros((n, p))
    for i in range(n):
        X[i, rng.choice(p, size=rng.randint(1, 7), replace=False)] = rng.uniform(0.5, 1.5)
    y = (X @ rng.normal(size=p) > 0).astype(int)
    if kind == "multiclass":
        y = y + (X[:, :5].sum(axis=1) > 1)
    params = dict(n_features_to_select=p, sketch_width=2**16, sketch_depth=1, history_size=3,
                  learning_rate="constant", eta0=0.1, damping=1e-2, batch_size=5,
                  max_iter=2, shuffle=False)
    # Sparse input: rows keep their lengths (dense columns would be standardized,
    # every row as long as the data is wide).
    est = fit_without_collisions(lambda seed: _CappedBear(random_state=seed, **params),
                                 np.arange(p), lambda e: e.fit(sp.csr_matrix(X), y))
    y_enc, K, loss = encode(kind, y)
    W, b, _ = dense_bear(X, y_enc, loss=loss, n_models=K, eta0=0.1, batch_size=5,
                         history_size=3, damping=1e-2, n_passes=2, batch_nnz_cap=9)
    uncapped, _, _ = dense_bear(X, y_enc, loss=loss, n_models=K, eta0=0.1, batch_size=5,
                                history_size=3, damping=1e-2, n_passes=2)
    assert np.abs(W - uncapped).max() > 1e-3  # the cap changed the batches
    scale = max(1.0, np.abs(W).max())
    np.testing.assert_allclose(est.coef_.toarray(), W, rtol=1e-5, atol=1e-5 * scale)
    np.testing.assert_allclose(est.intercept_, b, rtol=1e-5, atol=1e-5 * scale)
    assert est.history_.n_batches > 2 * n_batches(n, 5)
    assert est.history_.capacity == _CappedBear._CAP + 1


def _rows_some_longer_than_the_cap(rng, n, p, n_long):
    """``(X, long_rows)``: rows of 1 to 6 non-zeros, and ``n_long`` rows of 12 to 20
    (longer than ``_CappedBear._CAP``)."""
    X = np.zeros((n, p))
    long_rows = rng.choice(n, size=n_long, replace=False)
    for i in range(n):
        size = rng.randint(12, 21) if i in long_rows else rng.randint(1, 7)
        X[i, rng.choice(p, size=size, replace=False)] = rng.uniform(0.5, 1.5)
    return X, long_rows


@pytest.mark.parametrize("kind", ["binary", "multiclass"])
@pytest.mark.parametrize("schedule", ["constant", "normalized", "adaptive"])
@pytest.mark.usefixtures("sparse_as_given")
def test_rows_longer_than_the_cap_take_first_order_steps_equal_dense_reference(kind,
                                                                               schedule):
    """A row of more non-zeros than the pairs' room is a batch of its own with a
    first-order step and no pair (here rows of 12 to 20 non-zeros, cap 9)."""
    rng = np.random.RandomState(3)
    n, p = 120, 30
    X, long_rows = _rows_some_longer_than_the_cap(rng, n, p, n_long=15)
    y = (X @ rng.normal(size=p) > 0).astype(int)
    if kind == "multiclass":
        y = y + (X[:, :5].sum(axis=1) > 1)
    params = dict(n_features_to_select=p, sketch_width=2**16, sketch_depth=1, history_size=3,
                  learning_rate=schedule, eta0=0.1, damping=1e-2, batch_size=5,
                  max_iter=2, shuffle=False)
    # Sparse input: rows keep their lengths (dense columns would be standardized,
    # every row as long as the data is wide).
    est = fit_without_collisions(lambda seed: _CappedBear(random_state=seed, **params),
                                 np.arange(p), lambda e: e.fit(sp.csr_matrix(X), y))
    y_enc, K, loss = encode(kind, y)
    kwargs = dict(loss=loss, n_models=K, eta0=0.1, batch_size=5, history_size=3,
                  damping=1e-2, n_passes=2, normalized=schedule == "normalized",
                  adaptive=schedule == "adaptive")
    W, b, window = dense_bear(X, y_enc, batch_nnz_cap=9, **kwargs)
    scale = max(1.0, np.abs(W).max())
    np.testing.assert_allclose(est.coef_.toarray(), W, rtol=1e-5, atol=1e-5 * scale)
    np.testing.assert_allclose(est.intercept_, b, rtol=1e-5, atol=1e-5 * scale)
    # The long rows trained (without them the model differs) but stored no pair,
    # and the pairs kept the room they were given.
    short = np.setdiff1d(np.arange(n), long_rows)
    W_short, _, _ = dense_bear(X[short], y_enc[short], batch_nnz_cap=9, **kwargs)
    assert np.abs(W - W_short).max() > 1e-3
    assert all(active.size <= 9 for active, _, _, _ in window)
    assert est.history_.n_batches == 2 * (len(_short_batches(X, 5, 9)) - len(long_rows))
    assert est.history_.capacity == _CappedBear._CAP + 1
    assert est.online_error_rate_ < 0.5


class _CappedBearRegressor(BearRegressor):
    """Batches capped at ``_CappedBear._CAP`` non-zeros, as a memory budget caps them."""

    _train_pass = _CappedBear._train_pass
    _CAP = _CappedBear._CAP


@pytest.mark.parametrize("fit_intercept", [True, False])
@pytest.mark.parametrize("alpha", [0.0, 0.05])
@pytest.mark.usefixtures("sparse_as_given")
def test_long_row_steps_with_l2_and_without_intercept_equal_dense_reference(alpha,
                                                                             fit_intercept):
    """Squared loss, L2 on the heap weights, with and without the intercept: the
    first-order steps of the rows longer than the cap follow the dense reference."""
    rng = np.random.RandomState(5)
    n, p = 80, 30
    X, _ = _rows_some_longer_than_the_cap(rng, n, p, n_long=10)
    y = X @ rng.normal(size=p) + 0.5
    params = dict(n_features_to_select=p, sketch_width=2**16, sketch_depth=1, history_size=3,
                  learning_rate="normalized", eta0=0.3, damping=1e-2, batch_size=5,
                  max_iter=2, shuffle=False, alpha=alpha, fit_intercept=fit_intercept)
    est = fit_without_collisions(
        lambda seed: _CappedBearRegressor(random_state=seed, **params), np.arange(p),
        lambda e: e.fit(sp.csr_matrix(X), y))  # sparse: rows keep their lengths
    W, b, _ = dense_bear(X, y, loss="squared_error", eta0=0.3, batch_size=5, history_size=3,
                         damping=1e-2, n_passes=2, normalized=True, alpha=alpha,
                         fit_intercept=fit_intercept, batch_nnz_cap=9)
    scale = max(1.0, np.abs(W).max())
    np.testing.assert_allclose(est.coef_.toarray(), W, rtol=1e-5, atol=1e-5 * scale)
    np.testing.assert_allclose(est.intercept_, b, rtol=1e-5, atol=1e-5 * scale)
    if not fit_intercept:
        assert np.all(est.intercept_ == 0.0)


def _short_batches(X, batch_size, cap):
    """The batches of one pass in order (long rows alone), as the kernel cuts them."""
    from _bear_reference import _batches

    return list(_batches(X, np.arange(X.shape[0]), batch_size, cap))


def test_a_long_row_step_is_cut_back_at_its_secant_minimum():
    """Squared loss, a long row and a step far past the row's minimum: the cut
    leaves the row's residual smaller than before, where the raw step multiplies it."""
    X = np.zeros((1, 30))
    X[0, :20] = 1.0
    y = np.array([1.0])

    class CappedRegressor(BearRegressor):
        def _train_pass(self, state, params, indptr, indices, data, y, sample_weight,
                        order, max_batch_nnz):
            state.history.reserve(10)
            return bear_pass(params, state.sketches, state.heaps, state.intercept,
                             state.history, indptr, indices, data, y, sample_weight,
                             order, state.t, 9, batch_nnz_cap=9)

    params = dict(n_features_to_select=30, sketch_width=2**12, sketch_depth=1,
                  learning_rate="constant", eta0=10.0, batch_size=1, max_iter=1,
                  shuffle=False, random_state=0)
    est = CappedRegressor(**params).fit(X, y)
    W, b, _ = dense_bear(X, y, loss="squared_error", eta0=10.0, batch_size=1,
                         batch_nnz_cap=9)
    np.testing.assert_allclose(est.coef_.toarray(), W, rtol=1e-5, atol=1e-6)
    assert abs(est.predict(X)[0] - 1.0) < 1.0  # the residual was 1
    # Uncut, the step alone would have moved the prediction by eta0 * 21 = 210.
    assert est.history_.n_batches == 0


def test_churn_and_growing_capacity_equal_dense_reference():
    """Keys far beyond 2**31 that mostly appear once, few slots, and a batch size in
    non-zeros that grows between partial_fit calls (the history re-reserves)."""
    rng = np.random.default_rng(3)
    n, p, bs, tau = 240, 300, 4, 3
    keys = np.unique(rng.integers(0, N_HUGE, size=p))
    assert keys.size == p
    D = np.zeros((n, p))
    for i in range(n):
        m = 1 if i < n // 2 else rng.integers(1, 5)  # denser second half
        D[i, rng.choice(p, size=m, replace=False)] = rng.uniform(-1.5, 1.5, size=m)
    y = (D @ rng.normal(size=p) > 0).astype(int)
    coo = sp.coo_matrix(D)
    X = sp.csr_matrix((coo.data, (coo.row, keys[coo.col])), shape=(n, N_HUGE))
    params = dict(n_features_to_select=p, sketch_width=2**18, sketch_depth=1, batch_size=bs,
                  history_size=tau, learning_rate="constant", eta0=0.2, damping=1e-2,
                  shuffle=False)

    capacities = []

    def stream(est):
        est.partial_fit(X[: n // 2], y[: n // 2], classes=[0, 1])
        capacities.append(est.history_.capacity)
        est.partial_fit(X[n // 2:], y[n // 2:])
        capacities.append(est.history_.capacity)
        est.partial_fit(X, y)  # a second pass over the whole stream
        return est

    est = fit_without_collisions(lambda seed: BearClassifier(random_state=seed, **params),
                                 keys, stream)
    assert capacities[-1] > capacities[-2] == bs + 1
    W, b, window = dense_bear(np.vstack([D, D]), np.where(np.r_[y, y] == 1, 1.0, -1.0),
                              loss="log_loss", eta0=0.2, batch_size=bs, history_size=tau,
                              damping=1e-2)
    heap_keys, heap_weights = est.heaps_[0].items()
    used = np.flatnonzero((D != 0).any(axis=0))
    np.testing.assert_array_equal(np.sort(heap_keys), keys[used])
    # Far more distinct keys went through the history than its pairs can hold.
    assert used.size > 2 * tau * est.history_.capacity
    scale = max(1.0, np.abs(W).max())
    np.testing.assert_allclose(heap_weights, W[0, np.searchsorted(keys, heap_keys)],
                               rtol=1e-5, atol=1e-5 * scale)
    np.testing.assert_allclose(est.intercept_, b, rtol=1e-5, atol=1e-5 * scale)
    pairs = est.history_.pairs()
    assert len(pairs) == len(window) == tau
    for got, (active, s, r, valid) in zip(pairs, window):
        order = np.argsort(got["keys"])
        np.testing.assert_array_equal(got["keys"][order], np.r_[-1, keys[active]])
        np.testing.assert_allclose(got["s"][:, order], s, rtol=1e-4,
                                   atol=1e-5 * np.abs(s).max())
        np.testing.assert_allclose(got["r"][:, order], r, rtol=1e-4,
                                   atol=1e-5 * np.abs(r).max())
        np.testing.assert_array_equal(got["valid"], valid)


def _csr_variants(X):
    csr = sp.csr_matrix(X)
    yield "csr", csr
    big = csr.copy()
    big.indices = big.indices.astype(np.int64)
    big.indptr = big.indptr.astype(np.int64)
    yield "csr-int64", big
    # Unsorted rows with every entry split into two halves (exact in float).
    rng = np.random.RandomState(0)
    indptr, indices, data = [0], [], []
    for i in range(csr.shape[0]):
        cols = csr.indices[csr.indptr[i]:csr.indptr[i + 1]]
        vals = csr.data[csr.indptr[i]:csr.indptr[i + 1]]
        perm = rng.permutation(2 * len(cols))
        indices.extend(np.r_[cols, cols][perm])
        data.extend(np.r_[vals / 2, vals / 2][perm])
        indptr.append(len(indices))
    dup = sp.csr_matrix((np.array(data), np.array(indices, dtype=np.int32), np.array(indptr)),
                        shape=csr.shape)
    assert not dup.has_canonical_format
    yield "csr-unsorted-duplicates", dup
    # Explicitly stored zeros are no data: they must not enter the active sets.
    zeros = sp.csr_matrix(np.where(X == 0, 1.0, X))
    zeros.data[X.ravel() == 0] = 0.0  # every entry stored, in row-major order
    assert zeros.nnz == X.size
    np.testing.assert_array_equal(zeros.toarray(), X)
    yield "csr-stored-zeros", zeros
    yield "csr_array", sp.csr_array(X)


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.usefixtures("sparse_as_given")
def test_dense_and_csr_give_the_same_model(kind):
    X, y, _ = make_data(kind)
    dense = make_estimator(kind, alpha=1e-3, max_iter=2).fit(X, y)
    # Dense columns train standardized under 'normalized' steps; sparse input as given.
    S = model_coordinates(X, X, dense.learning_rate)
    for name, Xs in _csr_variants(S):
        sparse = make_estimator(kind, alpha=1e-3, max_iter=2).fit(Xs, y)
        assert_same_state(dense, sparse, standardization=False)
        np.testing.assert_allclose(dense.predict(X), sparse.predict(Xs), rtol=1e-12,
                                   atol=1e-12, err_msg=name)



# Softmax without damping is left out, as above: its pairs can bend the wrong way.
@pytest.mark.parametrize("kind, damping", [(kind, damping) for kind in KINDS
                                           for damping in (0.0, 1e-2)
                                           if (kind, damping) != ("multiclass", 0.0)])
@pytest.mark.parametrize("feature_scale", [1e-2, 7.0])
@pytest.mark.usefixtures("sparse_as_given")
def test_normalized_steps_equal_dense_reference(kind, damping, feature_scale):
    # 'normalized': a model without a usable pair steps by eta0 over the batch's
    # mean ||x||^2 on the features, whose damping is scaled by the same mean.
    X, y, _ = make_data(kind)
    X = X * feature_scale
    est, (W, b, _) = _fit_and_dense_reference(kind, X, y, damping, "normalized")
    scale = max(1.0 / feature_scale, np.abs(W).max())
    assert 0.01 / feature_scale < np.abs(W).max()  # something was learned
    # Float32 cells and pairs: without damping at feature scale 0.01 the weights
    # reach 1e10 and the two drift apart by up to 3e-5.
    np.testing.assert_allclose(est.coef_.toarray(), W, rtol=1e-4, atol=1e-5 * scale)
    np.testing.assert_allclose(est.intercept_, b, rtol=1e-4, atol=1e-5 * scale)


def _fit_and_dense_reference(kind, X, y, damping, schedule, **given):
    """BEAR under ``schedule`` ('normalized' or 'adaptive'; eta0 0.5, batches of 5,
    3 pairs, 2 passes in order; a heap of every feature unless ``given`` says
    otherwise) fitted where no two features collide, and the dense reference's
    ``(W, b, window)`` of the same run."""
    p = X.shape[1]
    params = dict(n_features_to_select=p, sketch_width=2**16, sketch_depth=1, history_size=3,
                  damping=damping, learning_rate=schedule, eta0=0.5, batch_size=5,
                  max_iter=2, shuffle=False)
    params.update(given)
    est = fit_without_collisions(
        lambda seed: make_estimator(kind, random_state=seed, **params), np.arange(p),
        lambda e: e.fit(sp.csr_matrix(X), y))
    y_enc, K, loss = encode(kind, y)
    return est, dense_bear(X, y_enc, loss=loss, n_models=K, eta0=0.5, batch_size=5,
                           history_size=3, n_passes=2, damping=damping,
                           normalized=schedule == "normalized",
                           adaptive=schedule == "adaptive")


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("schedule", ["normalized", "adaptive"])
@pytest.mark.usefixtures("sparse_as_given")
def test_training_reads_the_sketch_outside_a_small_heap(kind, schedule):
    # predict_with 'auto' or 'sketch': training reads every active feature's
    # estimate, so without collisions a heap of 3 of 12 features trains the
    # dense reference's model all the same, every feature's weight in the sketch.
    # predict_with='heap' trains the paper's model, heap members only: another one.
    X, y, _ = make_data(kind)
    p = X.shape[1]
    y_enc, K, loss = encode(kind, y)
    for predict_with in ("auto", "sketch"):
        est, (W, b, _) = _fit_and_dense_reference(kind, X, y, 1e-2, schedule,
                                                  n_features_to_select=3,
                                                  predict_with=predict_with)
        scale = max(1.0, np.abs(W).max())
        sketched = np.array([s.query(np.arange(p)) for s in est.sketches_])
        np.testing.assert_allclose(sketched, W, rtol=1e-4, atol=1e-5 * scale)
        np.testing.assert_allclose(est.intercept_, b, rtol=1e-4, atol=1e-5 * scale)
        # The heap holds the 3 largest estimates of each model.
        for c, heap in enumerate(est.heaps_):
            keys, _ = heap.items()
            assert set(keys) == set(np.argsort(-np.abs(W[c]))[:3])
    masked, _ = _fit_and_dense_reference(kind, X, y, 1e-2, schedule, n_features_to_select=3,
                                         predict_with="heap")
    heap_only = np.array([s.query(np.arange(p)) for s in masked.sketches_])
    assert np.abs(heap_only - W).max() > 0.1 * scale


def _table_cells_differ(keys, n_cells):
    """Whether ``keys`` fall in distinct cells of a feature table of ``n_cells``."""
    cells = [fmix64(int(k)) % n_cells for k in keys]
    return len(set(cells)) == len(cells)


# Softmax without damping is left out, as above.
@pytest.mark.parametrize("kind, damping", [(kind, damping) for kind in KINDS
                                           for damping in (0.0, 1e-2)
                                           if (kind, damping) != ("multiclass", 0.0)])
@pytest.mark.usefixtures("sparse_as_given")
def test_adaptive_steps_equal_dense_reference(kind, damping):
    # 'adaptive': 'normalized' in u = w * Q**(1/4), Q each feature's sum of x**2
    # so far; columns of scales from 1e-2 to 1e2 and a feature seen late.
    X, y, _ = make_data(kind)
    X = X * np.logspace(-2, 2, X.shape[1])
    X[:20, 3] = 0.0
    p = X.shape[1]
    assert _table_cells_differ(range(p), FEATURE_COUNT_CELLS)
    est, (W, b, window) = _fit_and_dense_reference(kind, X, y, damping, "adaptive")
    y_enc, K, loss = encode(kind, y)
    normalized, _, _ = dense_bear(X, y_enc, loss=loss, n_models=K, eta0=0.5, batch_size=5,
                                  history_size=3, n_passes=2, damping=damping,
                                  normalized=True)
    scale = max(1.0, np.abs(W).max())
    assert np.abs(W - normalized).max() > 0.1 * scale  # the schedules differ here
    np.testing.assert_allclose(est.coef_.toarray(), W, rtol=1e-4, atol=1e-5 * scale)
    np.testing.assert_allclose(est.intercept_, b, rtol=1e-4, atol=1e-5 * scale)
    # The pairs are kept in u; the table holds every feature's sum of squares.
    for got, (active, s_ref, r_ref, _) in zip(est.history_.pairs(), window):
        order = np.argsort(got["keys"], kind="stable")
        np.testing.assert_allclose(got["s"][:, order], s_ref, rtol=1e-4,
                                   atol=1e-5 * np.abs(s_ref).max())
    cells = [fmix64(k) % FEATURE_COUNT_CELLS for k in range(p)]
    np.testing.assert_allclose(est._state.feature_counts[cells], 2 * (X ** 2).sum(axis=0),
                               rtol=1e-6)


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("c", [2.0**-10, 2.0**10])
@pytest.mark.usefixtures("sparse_as_given")
def test_adaptive_model_does_not_depend_on_the_scale_of_the_features(kind, c):
    # In u a feature's values are x / Q**(1/4), so X * c is u * sqrt(c), and
    # 'normalized' steps in u take any scale out: the weights scale by 1 / c.
    # Powers of 4 scale every number the pass computes exactly, so the models
    # agree to rounding (other factors round the float32 pairs differently,
    # which softmax pairs amplify to 1e-3 over two passes).
    X, y, _ = make_data(kind, n_samples=60)
    X = X * np.logspace(-2, 2, X.shape[1])
    params = dict(n_features_to_select=X.shape[1], sketch_width=2**16, sketch_depth=1,
                  learning_rate="adaptive", eta0=1.0, batch_size=5, max_iter=2, damping=1e-2)
    plain, scaled = (fit_without_collisions(
        lambda seed: make_estimator(kind, random_state=seed, **params), np.arange(X.shape[1]),
        lambda e: e.fit(sp.csr_matrix(Z), y)) for Z in (X, X * c))
    read = "predict" if kind == "regression" else "decision_function"
    a = getattr(plain, read)(sp.csr_matrix(X))
    assert np.abs(a).max() > 0.1
    np.testing.assert_allclose(getattr(scaled, read)(sp.csr_matrix(X * c)), a, rtol=1e-9,
                               atol=1e-9 * np.abs(a).max())
    coef = plain.coef_.toarray()
    np.testing.assert_allclose(scaled.coef_.toarray() * c, coef, rtol=1e-9,
                               atol=1e-9 * np.abs(coef).max())


def _zipf_text(n=4000, p=3000, seed=0):
    """Word-like binary rows: feature j in a row with probability 3 / (j + 10),
    the label carried by the rarer features."""
    rng = np.random.RandomState(seed)
    X = sp.csr_matrix((rng.rand(n, p) < 3.0 / (np.arange(p) + 10)).astype(float))
    y = (X @ (rng.normal(size=p) * (np.arange(p) > 50)) > 0).astype(int)
    return X, y


@pytest.mark.parametrize("passes", [1, 3])
def test_auto_keeps_adaptive_where_the_probe_says(passes):
    # 'adaptive' misclassifies clearly fewer probe rows of Zipf text and is kept,
    # for one pass or several (training reads the sketch: see learning_rate); the
    # model is the one it trains from the start, and it beats 'normalized'.
    X, y = _zipf_text()
    train, test = slice(0, 3000), slice(3000, None)
    auto = BearClassifier(random_state=0, max_iter=passes).fit(X[train], y[train])
    assert auto.learning_rate_ == "adaptive"
    assert ("adaptive", 3.0) in auto._probe_candidates()
    adaptive = BearClassifier(random_state=0, max_iter=passes, learning_rate="adaptive",
                              eta0=auto.eta0_).fit(X[train], y[train])
    np.testing.assert_array_equal(auto.decision_function(X[test]),
                                  adaptive.decision_function(X[test]))
    normalized = BearClassifier(random_state=0, max_iter=passes,
                                learning_rate="normalized").fit(X[train], y[train])
    assert auto.score(X[test], y[test]) > normalized.score(X[test], y[test])


def test_a_model_switched_to_adaptive_is_refused_and_kept():
    # 'adaptive' scales by sums that a model trained under 'normalized' never kept.
    X, y = _zipf_text(n=600, p=300)
    est = BearClassifier(random_state=0, warm_start=True, max_iter=1,
                         learning_rate="normalized").fit(X, y)
    assert_refuses_schedule_switch(est, X, y, "adaptive",
                                   match=r"sums of squares .* fit it anew")


# ============================================================ 2. pairs, two-loop and memory
def test_window_under_churn_holds_exactly_the_last_batches():
    X, y, keys = churn_stream(2000, 5000, seed=0)
    bs, tau = 16, 4
    est = BearClassifier(n_features_to_select=50, sketch_width=4096, batch_size=bs,
                         history_size=tau, shuffle=False, random_state=0)
    rng = np.random.default_rng(1)
    bounds = np.unique(np.r_[0, 1, 2, 40, rng.integers(0, 2000, size=25), 2000])
    batches = []  # keys of every batch trained on, in order
    for start, stop in zip(bounds[:-1], bounds[1:]):
        est.partial_fit(X[start:stop], y[start:stop], classes=[0, 1])
        for first in range(start, stop, bs):
            batches.append(batch_keys(X, range(first, min(first + bs, stop))))
        window = batches[-tau:]
        history = est.history_
        assert history.n_batches == len(batches)
        assert history.n_pairs == len(window)
        got = [pair["keys"].tolist() for pair in history.pairs()]
        assert got == [[-1] + keys_ for keys_ in window]
    distinct = set().union(*map(set, batches))
    assert len(distinct) > 5 * tau * est.history_.capacity
    assert est.n_features_in_ == N_HUGE
    # The same in one pass of fit.
    est = clone(est).set_params(max_iter=1).fit(X, y)
    batches = [batch_keys(X, range(first, min(first + bs, X.shape[0])))
               for first in range(0, X.shape[0], bs)]
    window = batches[-tau:]
    assert [pair["keys"].tolist() for pair in est.history_.pairs()] == [[-1] + k for k in window]


def _random_pair(rng, universe, n_models, size):
    keys = rng.choice(universe, size=size, replace=False)
    s = rng.normal(size=(n_models, size))
    # Mostly positive curvature; now and then a pair bends the wrong way for a model.
    r = s * rng.uniform(0.2, 3.0, size=(n_models, size)) + 0.3 * rng.normal(size=(n_models, size))
    flip = rng.random(n_models) < 0.2
    r[flip] = -r[flip]
    # The history keeps pairs in float32: give it values it holds exactly.
    return keys, s.astype(np.float32).astype(float), r.astype(np.float32).astype(float)


def test_pairs_are_float32_and_older_float64_states_load():
    # The pairs' s and r are float32 (half the bytes of a pair coordinate); a state
    # saved with float64 pairs (model files of earlier 0.1.0 builds) loads rounded.
    rng = np.random.default_rng(0)
    history = LBFGSHistory(3, 2)
    universe = np.r_[-1, np.arange(50)]
    for _ in range(4):
        history.push(*_random_pair(rng, universe, 2, size=10))
    rebuild, (size, n_models, state, n_pairs, head, n_batches) = history.__reduce__()
    assert state["pair_s"].dtype == state["pair_r"].dtype == np.float32
    old_state = dict(state, pair_s=state["pair_s"].astype(np.float64),
                     pair_r=state["pair_r"].astype(np.float64))
    loaded = rebuild(size, n_models, old_state, n_pairs, head, n_batches)
    assert loaded.memory_bytes == history.memory_bytes
    for got, expected in zip(loaded.pairs(), history.pairs()):
        for name in ("keys", "s", "r", "valid"):
            np.testing.assert_array_equal(got[name], expected[name])
    g_keys = universe[:20]
    np.testing.assert_array_equal(loaded.direction(1, g_keys, np.ones(20)),
                                  history.direction(1, g_keys, np.ones(20)))


@pytest.mark.parametrize("tau, n_models", [(1, 1), (3, 1), (5, 3), (8, 2)])
def test_direction_equals_the_two_loop_on_the_union_of_supports(tau, n_models):
    """The vector-free two-loop against Algorithm 1 on explicit vectors, with pairs
    of different sizes that overlap each other and the gradient partly, keys far
    beyond 2**31 and the intercept's -1, invalid pairs, and a ring that wraps."""
    rng = np.random.default_rng(tau * 10 + n_models)
    universe = np.r_[-1, rng.integers(0, N_HUGE, size=60)]
    history = LBFGSHistory(tau, n_models, capacity=4)
    window = []
    n_checked = n_overlapping = 0
    for step in range(3 * tau + 2):
        keys, s, r = _random_pair(rng, universe, n_models, size=rng.integers(1, 30))
        history.push(keys, s, r)  # capacity grows as needed
        rs = np.einsum("cj,cj->c", s, r)
        valid = rs > 1e-10 * np.linalg.norm(s, axis=1) * np.linalg.norm(r, axis=1)
        window = (window + [(keys, s, r, valid)])[-tau:]
        assert history.n_pairs == len(window)
        for got, (k, s_, r_, v) in zip(history.pairs(), window):
            np.testing.assert_array_equal(got["keys"], k)
            np.testing.assert_array_equal(got["s"], s_)
            np.testing.assert_array_equal(got["r"], r_)
            np.testing.assert_array_equal(got["valid"], v)
        g_keys = rng.choice(universe, size=rng.integers(1, 40), replace=False)
        g = rng.normal(size=g_keys.size)
        for c in range(n_models):
            z = history.direction(c, g_keys, g)
            expected = _two_loop(g, g_keys.tolist(), c, window, fit_intercept=False)
            np.testing.assert_allclose(z, expected, rtol=1e-9, atol=1e-9 * np.abs(expected).max())
            n_checked += any(v[c] for *_, v in window)
        n_overlapping += any(np.intersect1d(k, g_keys).size for k, *_ in window)
    assert n_checked > 2 * tau and n_overlapping > 2 * tau  # the checks exercised pairs


def test_direction_without_usable_pairs_is_the_gradient():
    history = LBFGSHistory(3, 1)
    g = np.array([0.5, -2.0])
    np.testing.assert_array_equal(history.direction(0, [4, 2**40], g), g)
    history.push([4], s=[[1.0]], r=[[-1.0]])  # negative curvature: skipped
    assert not history.pairs()[0]["valid"][0]
    np.testing.assert_array_equal(history.direction(0, [4, 2**40], g), g)
    # A pair on other keys only rescales the gradient by its gamma = r^T s / r^T r.
    history.push([7, 8], s=[[1.0, 1.0]], r=[[2.0, 2.0]])
    np.testing.assert_allclose(history.direction(0, [4, 2**40], g), 0.5 * g)


def test_history_rejects_bad_keys_and_shapes():
    history = LBFGSHistory(2, 2)
    with pytest.raises(ValueError, match="distinct"):
        history.push([3, 3], s=np.ones((2, 2)), r=np.ones((2, 2)))
    with pytest.raises(ValueError, match="non-negative"):
        history.direction(0, [-5], [1.0])
    with pytest.raises(ValueError, match="one value per key and model"):
        history.push([1, 2], s=np.ones((2, 3)), r=np.ones((2, 3)))
    with pytest.raises(ValueError, match="model must be in"):
        history.direction(2, [1], [1.0])
    with pytest.raises(ValueError, match="history_size"):
        LBFGSHistory(257, 1)
    assert history.n_pairs == 0


@pytest.mark.parametrize("history_size", [1, 5, 256])
@pytest.mark.parametrize("n_models", [1, 20])
def test_history_bytes_counts_a_history_without_building_it(history_size, n_models):
    """What a memory budget asks of a capacity equals the bytes of the history built
    with it, across the powers of two where the batch's map and bitmap grow."""
    for capacity in (1, 2, 3, 4, 5, 32, 33, 64, 65, 1024, 1025, 14_060):
        history = LBFGSHistory(history_size, n_models)
        history.reserve(capacity)
        assert history_bytes(history_size, n_models, capacity) == history.memory_bytes


def test_memory_does_not_grow_with_samples_or_keys():
    bs, tau = 16, 5
    memories, distinct = [], []
    for n in (1000, 4000):
        X, y, _ = churn_stream(n, 5000, seed=n, nnz=(3, 3))
        est = BearClassifier(n_features_to_select=50, sketch_width=1024, batch_size=bs,
                             history_size=tau, max_iter=2, random_state=0).fit(X, y)
        history = est.history_
        assert history.capacity == bs * 3 + 1
        assert est.memory_bytes_ == (sum(s.memory_bytes for s in est.sketches_)
                                     + sum(h.memory_bytes for h in est.heaps_)
                                     + 2 * est.intercept_.nbytes + history.memory_bytes)
        # O(history_size * batch non-zeros), whatever the stream.
        assert history.memory_bytes < 200 * (tau + 1) * history.capacity
        memories.append((est.memory_bytes_, history.memory_bytes))
        distinct.append(np.unique(X.indices).size)
    assert memories[0] == memories[1]
    assert distinct[1] > distinct[0]


# ============================================= 3. partial_fit / warm_start / pickle
@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("shuffle", [False, True])
def test_partial_fit_passes_equal_fit(kind, shuffle):
    X, y, _ = make_data(kind, n_samples=45)
    n_passes = 3
    fitted = make_estimator(kind, shuffle=shuffle, alpha=1e-3, max_iter=n_passes).fit(X, y)
    partial = make_estimator(kind, shuffle=shuffle, alpha=1e-3)
    for _ in range(n_passes):
        partial.partial_fit(X, y, **fit_kwargs(partial, y))
    assert_same_state(fitted, partial)
    assert fitted.history_.n_batches == n_passes * n_batches(45, 4)
    assert fitted.history_.n_pairs == 3
    # The passes do something, and shuffling reorders the samples.
    shorter = make_estimator(kind, shuffle=shuffle, alpha=1e-3, max_iter=n_passes - 1)
    assert not np.array_equal(shorter.fit(X, y).intercept_, fitted.intercept_)
    other = make_estimator(kind, shuffle=not shuffle, alpha=1e-3, max_iter=n_passes)
    assert not np.array_equal(other.fit(X, y).intercept_, fitted.intercept_)


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("shuffle", [False, True])
def test_warm_start_fits_equal_one_long_fit(kind, shuffle):
    X, y, _ = make_data(kind, n_samples=45)
    long = make_estimator(kind, shuffle=shuffle, max_iter=5).fit(X, y)
    warm = make_estimator(kind, shuffle=shuffle, warm_start=True, max_iter=2).fit(X, y)
    warm.set_params(max_iter=3).fit(X, y)
    assert_same_state(long, warm)
    assert warm.n_iter_ == 3
    # Without warm_start the second fit starts over, curvature pairs included.
    cold = make_estimator(kind, shuffle=shuffle, max_iter=2).fit(X, y)
    cold.set_params(max_iter=3).fit(X, y)
    assert cold.t_ == 1 + 3 * 45
    assert cold.history_.n_batches == 3 * n_batches(45, 4)
    assert_same_state(cold, make_estimator(kind, shuffle=shuffle, max_iter=3).fit(X, y))


@pytest.mark.parametrize("kind", KINDS)
def test_pickle_mid_training_then_continue(kind):
    X, y, _ = make_data(kind, n_samples=45)
    X2, y2, _ = make_data(kind, n_samples=30, seed=1)
    est = make_estimator(kind, alpha=1e-3, max_iter=2).fit(X, y)
    assert est.history_.n_pairs == 3
    copy = pickle.loads(pickle.dumps(est))
    assert isinstance(copy.history_, LBFGSHistory)
    assert_same_state(est, copy)
    np.testing.assert_array_equal(copy.predict(X), est.predict(X))
    # Continuing the copy leaves the original alone ...
    before = snapshot(est)
    copy.partial_fit(X2, y2)
    assert_same_snapshot(snapshot(est), before)
    # ... and gives the model training without the pickle gives.
    est.partial_fit(X2, y2)
    assert_same_state(est, copy)
    copy.set_params(warm_start=True, max_iter=2).fit(X, y)
    est.set_params(warm_start=True, max_iter=2).fit(X, y)
    assert_same_state(est, copy)
    # The pairs matter: continuing from the same weights without them differs.
    forgetful = pickle.loads(pickle.dumps(est))
    forgetful._state.history = LBFGSHistory(est.history_size, est.history_.n_models)
    forgetful.partial_fit(X2, y2)
    est.partial_fit(X2, y2)
    assert not np.allclose(forgetful.coef_.toarray(), est.coef_.toarray())


def test_history_pickles_on_its_own():
    X, y, _ = make_data("multiclass", n_samples=45)
    est = make_estimator("multiclass", max_iter=2).fit(X, y)
    history = est.history_
    copy = pickle.loads(pickle.dumps(history))
    for attr in ("history_size", "n_models", "capacity", "n_pairs", "head", "n_batches",
                 "memory_bytes"):
        assert getattr(copy, attr) == getattr(history, attr), attr
    # The copy's pairs and their inner products give the same directions.
    keys = np.r_[-1, history.pairs()[-1]["keys"][1:4], 2**40]
    g = np.linspace(-1.0, 1.0, keys.size)
    for c in range(history.n_models):
        np.testing.assert_array_equal(copy.direction(c, keys, g), history.direction(c, keys, g))
    assert_same_pairs(pair_tuples(copy), pair_tuples(history))


# ============================================================ 4. curvature guard
def _guard_case(fit_intercept, zero_rows, zero_weights, damping, n=40, p=8, bs=5):
    rng = np.random.RandomState(7)
    X = rng.normal(size=(n, p))
    X[rng.rand(n, p) > 0.6] = 0.0
    y = (X @ rng.normal(size=p) > 0).astype(int)
    y[:2] = [0, 1]
    sw = np.ones(n)
    rows = np.arange(10, 10 + bs)  # the third batch
    if zero_rows:
        X[rows] = 0.0
    if zero_weights:
        sw[rows] = 0.0
    params = dict(n_features_to_select=p, sketch_width=2**16, sketch_depth=1, batch_size=bs,
                  history_size=256, learning_rate="constant", eta0=0.3, damping=damping,
                  fit_intercept=fit_intercept, max_iter=2, shuffle=False)
    return X, y, sw, rows, params


@pytest.mark.parametrize("how", ["empty_batch", "zero_weight_batch"])
@pytest.mark.parametrize("damping", [0.0, 1e-2])
def test_pair_without_curvature_is_kept_but_not_used(how, damping):
    """A batch without gradient (no features and no intercept, or all weights 0)
    gives a pair with r^T s = 0: it stays in the window, invalid, and the later
    directions are those computed without it."""
    empty = how == "empty_batch"
    X, y, sw, rows, params = _guard_case(fit_intercept=not empty, zero_rows=empty,
                                         zero_weights=not empty, damping=damping)
    n, p = X.shape
    est = fit_without_collisions(lambda seed: BearClassifier(random_state=seed, **params),
                                 np.arange(p), lambda e: e.fit(X, y, sample_weight=sw))
    n_per_pass = n_batches(n, params["batch_size"])
    pairs = est.history_.pairs()
    assert len(pairs) == 2 * n_per_pass  # history_size 256 keeps them all
    invalid = [i for i, pair in enumerate(pairs) if not pair["valid"].all()]
    assert invalid == [2, 2 + n_per_pass]
    for i in invalid:
        assert np.abs(pairs[i]["s"]).max(initial=0.0) == 0.0
        assert np.abs(pairs[i]["r"]).max(initial=0.0) == 0.0
        if empty:
            assert pairs[i]["keys"].size == 0
        else:
            assert pairs[i]["keys"][0] == -1 and pairs[i]["keys"].size > 1
    # The reference, which applies the same rule, agrees.
    W, b, window = dense_bear(X, np.where(y == 1, 1.0, -1.0), loss="log_loss",
                              eta0=params["eta0"], batch_size=params["batch_size"],
                              history_size=256, fit_intercept=params["fit_intercept"],
                              sample_weight=sw, n_passes=2, damping=damping)
    assert [i for i, w in enumerate(window) if not w[3].all()] == invalid
    np.testing.assert_allclose(est.coef_.toarray(), W, rtol=1e-5, atol=1e-6)
    # Dropping the batch altogether gives exactly the same model and pairs.
    keep = np.setdiff1d(np.arange(n), rows)
    without = fit_without_collisions(
        lambda seed: BearClassifier(random_state=seed, **params), np.arange(p),
        lambda e: e.fit(X[keep], y[keep], sample_weight=sw[keep]))
    np.testing.assert_array_equal(est.coef_.toarray(), without.coef_.toarray())
    np.testing.assert_array_equal(est.intercept_, without.intercept_)
    valid_pairs = [pair for i, pair in enumerate(pair_tuples(est.history_)) if i not in invalid]
    assert_same_pairs(valid_pairs, pair_tuples(without.history_))


def test_negative_curvature_pair_is_skipped_by_the_two_loop(monkeypatch):
    """Softmax: a class's secant pair can have r^T s < 0 (the other classes moved
    its probability). The next direction must ignore it, as the reference does,
    and using it would give another direction (the steps unbounded in the
    scores, so that the step is the direction's)."""
    monkeypatch.setattr(BearClassifier, "_MARGIN_TRUST", 0.0)
    rng = np.random.RandomState(1)
    n, p = 60, 6
    X = rng.normal(size=(n, p))
    X[rng.rand(n, p) > 0.6] = 0.0
    idx = rng.randint(0, 3, n)
    y = LABELS[idx]
    params = dict(n_features_to_select=p, sketch_width=2**16, sketch_depth=1, batch_size=1,
                  history_size=2, learning_rate="constant", eta0=0.5, damping=0.0,
                  max_iter=1, shuffle=False)
    ref = dict(loss="log_loss", n_models=3, eta0=0.5, batch_size=1, history_size=2,
               n_passes=1, damping=0.0, margin_trust=0.0)
    bad = 8  # the 9th sample's pair has negative curvature for class 2
    W9, b9, window9 = dense_bear(X[:bad + 1], idx[:bad + 1].astype(float), **ref)
    _, s_bad, r_bad, valid_bad = window9[-1]
    assert valid_bad.tolist() == [True, True, False]
    assert (s_bad[2] * r_bad[2]).sum() < 0 and np.abs(r_bad[2]).max() > 1e-3
    # The kernel stores the same pair, marked invalid.
    est9 = fit_without_collisions(lambda seed: BearClassifier(random_state=seed, **params),
                                  np.arange(p), lambda e: e.fit(X[:bad + 1], y[:bad + 1]))
    last = est9.history_.pairs()[-1]
    assert last["valid"].tolist() == [True, True, False]
    np.testing.assert_allclose(last["s"], s_bad, rtol=1e-4, atol=1e-7)
    np.testing.assert_allclose(last["r"], r_bad, rtol=1e-4, atol=1e-7)
    # The next sample's direction for class 2, skipping and using that pair.
    row = bad + 1
    active = np.flatnonzero(X[row] != 0)
    gW, gb = _gradient("log_loss", X[row:row + 1], idx[row:row + 1].astype(float),
                       np.ones(1), W9, b9, active, 0.0)
    g = _vector(gW[2], gb[2], active, True)
    step_skip = -0.5 * _two_loop(g, active, 2, window9, True)
    forced = [(a, s, r, np.ones_like(v)) for a, s, r, v in window9]
    step_used = -0.5 * _two_loop(g, active, 2, forced, True)
    assert not np.allclose(step_skip, step_used, rtol=1e-2)
    est10 = fit_without_collisions(lambda seed: BearClassifier(random_state=seed, **params),
                                   np.arange(p), lambda e: e.fit(X[:row + 1], y[:row + 1]))
    new = est10.history_.pairs()[-1]
    np.testing.assert_array_equal(new["keys"], np.r_[-1, active])
    np.testing.assert_allclose(new["s"][2], step_skip, rtol=1e-4, atol=1e-7)
    W10, b10, _ = dense_bear(X[:row + 1], idx[:row + 1].astype(float), **ref)
    np.testing.assert_allclose(est10.coef_.toarray(), W10, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(est10.intercept_, b10, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("kind", ["binary", "multiclass"])
def test_a_step_moves_no_score_of_its_batch_past_the_trust(kind):
    """Large steps on large features: each batch's step is scaled so that no score
    of its rows moves by more than BearClassifier._MARGIN_TRUST (10), as the dense
    reference does; without the bound the reference's model is another one, and
    a step that diverged without it now trains."""
    from _bear_reference import CLASSIFIER_MARGIN_TRUST

    assert BearClassifier._MARGIN_TRUST == CLASSIFIER_MARGIN_TRUST == 10.0
    X, y, _ = make_data(kind)
    X = 30.0 * X
    n, p = X.shape
    params = dict(n_features_to_select=p, sketch_width=2**16, sketch_depth=1, history_size=3,
                  damping=1e-2, learning_rate="constant", eta0=5.0, batch_size=8,
                  shuffle=False)
    est = fit_without_collisions(
        lambda seed: make_estimator(kind, random_state=seed, max_iter=2, **params),
        np.arange(p), lambda e: e.fit(X, y))
    y_enc, K, loss = encode(kind, y)
    ref = dict(loss=loss, n_models=K, eta0=5.0, batch_size=8, history_size=3, n_passes=2,
               damping=1e-2)
    W, b, _ = dense_bear(X, y_enc, **ref)
    scale = max(1.0, np.abs(W).max())
    np.testing.assert_allclose(est.coef_.toarray(), W, rtol=1e-4, atol=1e-5 * scale)
    np.testing.assert_allclose(est.intercept_, b, rtol=1e-4, atol=1e-5 * scale)
    unbounded, _, _ = dense_bear(X, y_enc, margin_trust=0.0, **ref)
    assert not np.allclose(unbounded, W, rtol=1e-2, atol=1e-3 * scale)
    # Batch by batch (partial_fit of one batch each): no score of the batch moved
    # further, and some batch's scores moved that far (the bound was reached).
    one = make_estimator(kind, random_state=est.random_state, **params)
    classes = np.unique(y)
    farthest = []
    for start in range(0, n, 8):
        rows = slice(start, start + 8)
        before = one.decision_function(X[rows]) if start else 0.0
        one.partial_fit(X[rows], y[rows], classes=classes)
        farthest.append(np.abs(one.decision_function(X[rows]) - before).max())
    assert max(farthest) <= 10.0 * (1 + 1e-5)
    assert max(farthest) >= 10.0 * (1 - 1e-5)
    np.testing.assert_allclose(one.coef_.toarray(), dense_bear(X, y_enc, **{**ref,
                               "n_passes": 1})[0], rtol=1e-4, atol=1e-5 * scale)
    # eta0=1e12 on features a million times larger: bounded, it trains.
    huge = make_estimator(kind, learning_rate="constant", eta0=1e12, damping=0.0,
                          batch_size=8).fit(X * 1e6, y)
    assert np.isfinite(huge.coef_.toarray()).all()
    assert huge.score(X * 1e6, y) > 0.5


def test_overshooting_steps_are_cut_so_the_loss_never_rises():
    """Squared loss, one batch of every row: the secant along a step is exact, so a step
    cut to it lands on the minimum along the step and the loss cannot rise. eta0=10
    overshoots (the first step, a gradient step, by far): the loss still falls every
    pass, and the model converges."""
    rng = np.random.RandomState(0)
    X = rng.normal(size=(60, 8))
    y = X @ rng.normal(size=8)
    est = BearRegressor(n_features_to_select=8, sketch_width=2**12, batch_size=60,
                        learning_rate="constant", eta0=10.0, damping=0.0, max_iter=1,
                        shuffle=False, warm_start=True, random_state=0)
    losses = []
    for _ in range(12):
        est.fit(X, y)
        losses.append(np.mean((est.predict(X) - y) ** 2))
    # (Once converged, the float32 sketch's rounding moves the loss by about 1e-7.)
    floor = 1e-6 * np.mean(y ** 2)
    assert all(b <= a * (1 + 1e-5) + floor for a, b in zip(losses, losses[1:])), losses
    assert losses[-1] < 1e-3 * np.mean(y ** 2)
    # The first step alone, uncut, would have overshot: 10 gradient steps' worth.
    one = BearRegressor(n_features_to_select=8, sketch_width=2**12, batch_size=60,
                        learning_rate="constant", eta0=10.0, max_iter=1, shuffle=False,
                        random_state=0).fit(X, y)
    gradient = X.T @ (0 - y) / 60
    uncut = -10.0 * gradient
    assert np.mean((X @ uncut - y) ** 2) > 10 * np.mean(y ** 2)
    assert np.mean((one.predict(X) - y) ** 2) < np.mean(y ** 2)


def test_damping_keeps_saturated_pairs_valid(monkeypatch):
    """Log loss far in the saturated region (margins 5000): the tiny step cannot
    change the gradient (r = 0 in floating point), so without damping the pair is
    invalid; damping adds damping * s and keeps it (steps unbounded in the
    scores, so that the damped pair's long step shows)."""
    monkeypatch.setattr(BearClassifier, "_MARGIN_TRUST", 0.0)
    X = np.array([[100.0], [-100.0]])
    y = np.array([1, 0])
    for damping, expected in ((0.0, [True, False, False]), (1e-2, [True, True, True])):
        est = BearClassifier(n_features_to_select=1, sketch_width=1024, sketch_depth=1,
                             batch_size=2, history_size=3, learning_rate="constant", eta0=0.01,
                             damping=damping, fit_intercept=False, max_iter=3, shuffle=False,
                             random_state=0).fit(X, y)
        pairs = est.history_.pairs()
        assert [bool(pair["valid"][0]) for pair in pairs] == expected
        _, _, window = dense_bear(X, np.array([1.0, -1.0]), loss="log_loss", eta0=0.01,
                                  batch_size=2, history_size=3, fit_intercept=False,
                                  n_passes=3, damping=damping, margin_trust=0.0)
        assert [bool(w[3][0]) for w in window] == expected
        if damping == 0:
            assert pairs[1]["s"][0, 0] != 0.0 and pairs[1]["r"][0, 0] == 0.0
            # Skipping the invalid pair: the third step repeats the second.
            assert pairs[2]["s"][0, 0] == pairs[1]["s"][0, 0]
        else:  # the damped pair scales the next step by about 1 / damping
            assert pairs[2]["s"][0, 0] > 100 * pairs[1]["s"][0, 0] > 0


# ============================================================ 5. integration
def test_pipeline_selects_planted_features_and_predicts_well():
    X, y, planted = planted_data(n_samples=600)
    pipe = Pipeline([
        ("select", BearClassifier(n_features_to_select=8, sketch_width=512, batch_size=16,
                                  random_state=0)),
        ("clf", LogisticRegression()),
    ])
    pipe.fit(X[:400], y[:400])
    support = pipe.named_steps["select"].get_support(indices=True)
    assert set(planted) <= set(support)
    assert len(support) <= 8
    assert pipe.named_steps["clf"].coef_.shape == (1, len(support))
    assert pipe.score(X[400:], y[400:]) > 0.9


def test_grid_search_over_eta0_and_history_size():
    X, y, _ = planted_data(n_samples=240)
    grid = {"eta0": [0.05, 0.2], "history_size": [1, 5]}
    search = GridSearchCV(BearClassifier(n_features_to_select=8, sketch_width=512,
                                         batch_size=16, max_iter=2, random_state=0),
                          grid, cv=3)
    search.fit(X, y)
    combos = {tuple(sorted(p.items())) for p in search.cv_results_["params"]}
    expected = {tuple(sorted(zip(grid, values))) for values in itertools.product(*grid.values())}
    assert combos == expected
    assert np.isfinite(search.cv_results_["mean_test_score"]).all()
    best = search.best_estimator_
    check_is_fitted(best)
    assert best.history_.history_size == best.history_size == search.best_params_["history_size"]
    assert best.eta0 == search.best_params_["eta0"]
    assert search.best_score_ > 0.7


def test_select_from_model_support_is_planted():
    X, y, planted = planted_data()
    sfm = SelectFromModel(BearClassifier(n_features_to_select=10, sketch_width=512,
                                         batch_size=16, random_state=0),
                          max_features=4, threshold=-np.inf)
    sfm.fit(X, y)
    np.testing.assert_array_equal(sfm.get_support(indices=True), planted)
    np.testing.assert_array_equal(sfm.transform(X), X[:, planted])


def test_regressor_recovers_sparse_support():
    rng = np.random.RandomState(0)
    X = rng.normal(size=(500, 100))
    y = 2 * X[:, 5] - 3 * X[:, 60] + 1.5 * X[:, 77]
    reg = BearRegressor(n_features_to_select=3, sketch_width=512, batch_size=32,
                        random_state=0).fit(X, y)
    np.testing.assert_array_equal(reg.get_support(indices=True), [5, 60, 77])
    assert reg.score(X, y) > 0.95


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
def test_regressor_intercept_starts_at_the_first_calls_weighted_mean():
    # Rows without a feature in one batch: the mean's residuals sum to 0, so one
    # step leaves the intercept where it started; a later call does not restart it.
    X = sp.csr_matrix((50, 10))
    y = np.arange(50.0) + 900
    weight = np.r_[np.ones(25), 3 * np.ones(25)]
    reg = BearRegressor(random_state=0, max_iter=1).partial_fit(X, y, sample_weight=weight)
    np.testing.assert_allclose(reg.intercept_, [np.average(y, weights=weight)])
    reg.partial_fit(X, y + 100)
    assert abs(reg.intercept_[0] - np.average(y, weights=weight)) > 1
    assert abs(reg.intercept_[0] - np.mean(y + 100)) > 1
    no_intercept = BearRegressor(random_state=0, max_iter=1, fit_intercept=False).fit(X, y)
    assert no_intercept.intercept_[0] == 0.0


@pytest.mark.parametrize("spread, mission_starts_at_mean", [(1.0, True), (200.0, False)])
def test_regressors_start_at_the_mean_far_from_zero(spread, mission_starts_at_mean):
    # MISSION's and IHT's intercept starts at the weighted mean target where it is
    # more than 10 standard deviations from 0 (a latitude), else at 0; BEAR's at the
    # mean always.
    from sklearn_sketch import IHTRegressor, MissionRegressor

    rng = np.random.RandomState(0)
    y = 1000 + spread * rng.normal(size=300)
    weight = rng.uniform(0.5, 2, size=300)
    X = sp.random(300, 20, density=0.2, random_state=0, format="csr")
    mean = np.average(y, weights=weight)
    for estimator, at_mean in ((MissionRegressor(random_state=0), mission_starts_at_mean),
                               (IHTRegressor(n_features_to_select=5, random_state=0),
                                mission_starts_at_mean),
                               (BearRegressor(random_state=0), True)):
        state = estimator._new_state(1, X)
        estimator._start_intercept(state, y, weight)
        assert state.intercept[0] == (pytest.approx(mean) if at_mean else 0.0)
    unweighted = MissionRegressor(fit_intercept=False)
    state = unweighted._new_state(1, X)
    unweighted._start_intercept(state, y, weight)
    assert state.intercept[0] == 0.0


@pytest.mark.parametrize("kind", KINDS)
def test_clone_gives_unfitted_estimator_with_equal_params(kind):
    X, y, _ = make_data(kind)
    est = make_estimator(kind, eta0=0.05, history_size=7, damping=0.1, max_iter=2).fit(X, y)
    cloned = clone(est)
    assert cloned.get_params() == est.get_params()
    assert cloned.get_params()["history_size"] == 7 and cloned.get_params()["damping"] == 0.1
    with pytest.raises(NotFittedError):
        check_is_fitted(cloned)
    for attr in ("intercept_", "sketches_", "heaps_", "history_", "t_", "memory_bytes_",
                 "coef_", "_state"):
        assert not hasattr(cloned, attr)


@pytest.mark.parametrize("kind", KINDS)
def test_pickle_round_trip_predicts_the_same(kind):
    X, y, _ = make_data(kind)
    est = make_estimator(kind, max_iter=2).fit(X, y)
    copy = pickle.loads(pickle.dumps(est))
    assert_same_state(est, copy)
    np.testing.assert_array_equal(copy.predict(X), est.predict(X))
    np.testing.assert_array_equal(copy.get_support(), est.get_support())
    if kind != "regression":
        np.testing.assert_array_equal(copy.predict_proba(X), est.predict_proba(X))


@pytest.mark.parametrize("n_classes", [2, 3])
def test_predict_proba(n_classes):
    X, y, _ = make_data("binary", n_classes=n_classes)
    est = make_estimator("binary", max_iter=3).fit(X, y)
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
    assert len(np.unique(proba[:, 0])) > 1  # not a constant model


@pytest.mark.parametrize("cls", [BearClassifier, BearRegressor], ids=lambda c: c.__name__)
@pytest.mark.parametrize("bad", [{"history_size": 0}, {"history_size": 257},
                                 {"damping": -1.0}, {"loss": "hinge"}, {"eta0": 0.0},
                                 {"predict_with": "both"}], ids=str)
def test_invalid_parameters_raise(cls, bad):
    X, y, _ = make_data("regression" if cls is BearRegressor else "binary")
    est = cls(**bad)
    with pytest.raises(InvalidParameterError):
        est.fit(X, y)
    assert issubclass(InvalidParameterError, ValueError)
    assert not hasattr(est, "history_")
    # The bounds themselves are accepted.
    if "history_size" in bad:
        cls(history_size=256 if bad["history_size"] > 1 else 1, n_features_to_select=4,
            sketch_width=64, max_iter=1).fit(X, y)


# ============================================================ 6. bad input
def _fitted(kind):
    X, y, _ = make_data(kind, n_samples=40)
    return make_estimator(kind, alpha=1e-3, max_iter=2).fit(X, y), X, y


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
@pytest.mark.parametrize("sparse", [False, True])
def test_non_finite_X_raises_and_keeps_the_model(kind, bad, sparse):
    est, X, y = _fitted(kind)
    assert_refuses_non_finite_X(est, X, y, bad, sparse)


@pytest.mark.parametrize("kind", KINDS)
def test_wrong_n_features_raises_and_keeps_the_model(kind):
    est, X, y = _fitted(kind)
    assert_refuses_wrong_n_features(est, X, y)


@pytest.mark.parametrize("kind", ["binary", "multiclass"])
def test_unseen_class_raises_and_keeps_the_model(kind):
    est, X, y = _fitted(kind)
    before = snapshot(est)
    y_unseen = y.copy()
    y_unseen[0] = 99
    with pytest.raises(ValueError, match="classes"):
        est.partial_fit(X, y_unseen)
    assert_same_snapshot(snapshot(est), before)
    with pytest.raises(ValueError, match="classes"):
        est.partial_fit(X, y, classes=np.r_[np.unique(y), 99])
    assert_same_snapshot(snapshot(est), before)
    with pytest.raises(ValueError, match="class"):
        est.set_params(warm_start=True).fit(X, y_unseen)
    assert_same_snapshot(snapshot(est), before)


@pytest.mark.parametrize("kind", KINDS)
def test_negative_sample_weight_raises_and_keeps_the_model(kind):
    est, X, y = _fitted(kind)
    before = snapshot(est)
    sw = np.ones(len(y))
    sw[4] = -0.5
    with pytest.raises(ValueError, match="(?i)negative"):
        est.fit(X, y, sample_weight=sw)
    assert_same_snapshot(snapshot(est), before)
    with pytest.raises(ValueError, match="(?i)negative"):
        est.partial_fit(X, y, sample_weight=sw)
    assert_same_snapshot(snapshot(est), before)


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("batch_size", [1, 4, 64])
def test_divergence_raises_and_keeps_the_model(kind, batch_size, monkeypatch):
    # The classifier's steps unbounded in the scores: a bounded step does not
    # diverge (test_a_step_moves_no_score_of_its_batch_past_the_trust).
    monkeypatch.setattr(BearClassifier, "_MARGIN_TRUST", 0.0)
    X, y, _ = make_data(kind, n_samples=40)
    X_big = X * 1e6
    # A fitted model, after several passes (pairs in the window) ...
    est = make_estimator(kind, batch_size=batch_size, max_iter=3, learning_rate="constant",
                         eta0=0.1).fit(X, y)
    assert est.history_.n_pairs > 0
    before = snapshot(est)
    # ... continued with a huge step on unscaled data: an error, the model unchanged.
    est.set_params(eta0=1e12, damping=0.0, warm_start=True)
    with pytest.raises(ValueError, match="diverged"):
        est.fit(X_big, y)
    assert_same_snapshot(snapshot(est), before)
    # A step that overflows at once: partial_fit and a cold fit leave it as it was.
    est.set_params(eta0=1e300)
    with pytest.raises(ValueError, match="diverged"):
        est.partial_fit(X_big, y)
    assert_same_snapshot(snapshot(est), before)
    est.set_params(warm_start=False)
    with pytest.raises(ValueError, match="diverged"):
        est.fit(X_big, y)
    assert_same_snapshot(snapshot(est), before)
    assert np.isfinite(est.predict(X)).all()
    # And the model still trains normally afterwards.
    est.set_params(eta0=0.1, damping=1e-2, warm_start=True).fit(X, y)
    assert est.history_.n_batches == before["history"][4] + 3 * n_batches(40, batch_size)
    # From scratch: an error, and nothing fitted.
    fresh = make_estimator(kind, batch_size=batch_size, eta0=1e300, damping=0.0)
    with pytest.raises(ValueError, match="diverged"):
        fresh.fit(X_big, y)
    with pytest.raises(NotFittedError):
        check_is_fitted(fresh)
    assert not hasattr(fresh, "history_")


# ============================================================ 7. multi-class
def test_multiclass_has_one_sketch_heap_and_two_loop_per_class():
    n_classes = 4
    X, y, _ = make_data("multiclass", n_samples=80, n_features=30, n_classes=n_classes)
    k = 4
    est = make_estimator("multiclass", n_features_to_select=k, max_iter=3).fit(X, y)
    assert len(est.sketches_) == len(est.heaps_) == len(est.intercept_) == n_classes
    assert est.history_.n_models == n_classes
    assert len({id(s) for s in est.sketches_}) == n_classes  # distinct objects
    for sketch in est.sketches_:
        assert sketch.same_configuration(est.sketches_[0])
    assert not all(np.array_equal(est.sketches_[0].table, s.table) for s in est.sketches_[1:])
    for pair in est.history_.pairs():
        assert pair["s"].shape == pair["r"].shape == (n_classes, pair["keys"].size)
        assert pair["valid"].shape == (n_classes,)
    assert est.coef_.shape == (n_classes, 30)
    # selected_features_: top k by the largest |weight| over the classes.
    weight = {}
    for c, heap in enumerate(est.heaps_):
        assert len(heap) <= k
        for key, w in zip(*heap.items()):
            weight.setdefault(int(key), np.zeros(n_classes))[c] = w
    assert len(weight) > k  # the union of the heaps really is cut down
    ranked = sorted(weight, key=lambda key: (np.abs(weight[key]).max(), key), reverse=True)[:k]
    assert est.selected_features_.keys.tolist() == ranked
    np.testing.assert_array_equal(est.selected_features_.weights,
                                  np.array([weight[key] for key in ranked]))
    np.testing.assert_array_equal(est.get_support(indices=True), np.sort(ranked))
    expected = np.zeros((n_classes, 30))
    for c, heap in enumerate(est.heaps_):
        keys, w = heap.items()
        expected[c, keys] = w
    np.testing.assert_array_equal(est.coef_.toarray(), expected)


def test_binary_has_a_single_model():
    X, y, _ = make_data("binary")
    est = make_estimator("binary").fit(X, y)
    assert len(est.sketches_) == len(est.heaps_) == len(est.intercept_) == 1
    assert est.history_.n_models == 1
    assert est.coef_.shape == (1, X.shape[1])
    assert est.decision_function(X).shape == (len(y),)


@pytest.mark.parametrize("params, depth", [
    (dict(memory_budget="1MB"), 2),
    (dict(memory_budget="1MB", predict_with="sketch"), 2),
    (dict(memory_budget="1MB", predict_with="heap"), 3),
    (dict(), 3),
    (dict(memory_budget="1MB", sketch_depth=4), 4),
])
def test_sketch_depth_none_is_two_rows_in_a_budget_read_by_training(params, depth):
    # Under a budget a sketch that training reads gets two rows of a wider
    # sketch; the paper's heap reads, and a width given without a budget, three.
    rng = np.random.default_rng(0)
    X = sp.random(400, 300, density=0.05, format="csr", random_state=0)
    y = rng.integers(0, 2, 400)
    est = BearClassifier(max_iter=1, random_state=0, **params).fit(X, y)
    assert est.sketch_depth_ == depth
    assert est.sketches_[0].depth == depth
    if "memory_budget" in params:
        assert est.memory_bytes_ <= 2**20
    assert BearRegressor().sketch_depth == 3
