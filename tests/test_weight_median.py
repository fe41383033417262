"""Weight-Median Sketch (Algorithm 1) and Active-Set Weight-Median Sketch (Algorithm 2)
of Tai et al. (SIGMOD 2018): exact agreement with a dense NumPy SGD when nothing
collides, with explicit-decay replays of both algorithms on dense sketch arrays when
buckets collide, the memory budget, the scikit-learn API, recovery on a planted
stream and bad input."""
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
from sklearn.pipeline import Pipeline
from sklearn.utils.validation import check_is_fitted

from sklearn_sketch import AWMSketchClassifier, WMSketchClassifier
from sklearn_sketch._core import bucket_and_sign_arrays
from sklearn_sketch.weight_median import parse_memory_budget

sys.path.insert(0, str(Path(__file__).parent))
from _reference import (  # noqa: E402
    assert_refuses_class_errors,
    assert_refuses_non_finite_X,
    assert_refuses_wrong_n_features,
    assert_same_snapshot,
    assert_same_state,
    dense_sgd,
    encode,
    is_mistake,
    model_coordinates,
    loss_derivatives,
    snapshot,
    step_size,
)

WM, AWM = WMSketchClassifier, AWMSketchClassifier
BOTH = [WM, AWM]


def _name(cls):
    return cls.__name__


# ====================================================================== references
class SketchReplay:
    """Float64 replay of Algorithm 1 (``'wm'``) or 2 (``'awm'``) on dense ``z`` arrays.

    ``z[c]`` is the ``depth x width`` sketch of model ``c``, decayed explicitly (every
    cell multiplied by ``1 - eta alpha``) at every step; the heaps are dicts
    ``key -> weight``, also decayed explicitly. The hashes are the estimator's
    (``buckets``, ``signs`` of every key). Records every heap comparison's gap, so a
    test can check that float32 rounding in the estimator cannot flip a decision.
    """

    def __init__(self, algorithm, buckets, signs, width, capacity, n_models):
        self.algorithm = algorithm
        self.buckets = np.asarray(buckets)
        self.signs = np.asarray(signs, dtype=np.float64)
        self.depth = self.buckets.shape[0]
        self.root = np.sqrt(self.depth)
        self.rows = np.arange(self.depth)
        self.capacity = capacity
        self.z = np.zeros((n_models, self.depth, width))
        self.heaps = [dict() for _ in range(n_models)]
        self.b = np.zeros(n_models)
        self.t = 1.0
        self.mistakes = 0
        self.gaps = []
        self.counts = {"entered": 0, "evicted": 0, "sketch_steps": 0, "no_step": 0}

    # Sketch access through R = A / sqrt(s).
    def _signed(self, c, i):
        return self.signs[:, i] * self.z[c, self.rows, self.buckets[:, i]]

    def projected(self, c, i):
        """``z^T R e_i``: feature ``i``'s share of a WM prediction."""
        return self._signed(c, i).sum() / self.root

    def recovered(self, c, i):
        """``sqrt(s) * median_j(sign_j(i) z[j, h_j(i)])`` (mean of the middle two if even)."""
        return self.root * np.median(self._signed(c, i))

    def add(self, c, i, delta):
        """Add ``delta * R e_i``: ``sign_j(i) * delta / sqrt(s)`` to each row's cell."""
        self.z[c, self.rows, self.buckets[:, i]] += self.signs[:, i] * delta / self.root

    # Heap.
    def _heap_min(self, c):
        heap = self.heaps[c]
        return min(heap, key=lambda k: (abs(heap[k]), k))

    def _beats_min(self, c, key, w):
        """Room in the heap, or ``(|w|, key)`` above the minimum's (recording the gap)."""
        heap = self.heaps[c]
        if len(heap) < self.capacity:
            return True
        mk = self._heap_min(c)
        self.gaps.append(abs(abs(w) - abs(heap[mk])))
        return (abs(w), key) > (abs(heap[mk]), mk)

    def score(self, c, x_idx, x_val):
        s = self.b[c]
        for i, v in zip(x_idx, x_val):
            if self.algorithm == "awm" and i in self.heaps[c]:
                s += v * self.heaps[c][i]
            else:
                s += v * self.projected(c, i)
        return s

    def decision_function(self, X):
        X = sp.csr_matrix(X)
        out = np.zeros((X.shape[0], len(self.b)))
        for r in range(X.shape[0]):
            idx = X.indices[X.indptr[r]:X.indptr[r + 1]]
            val = X.data[X.indptr[r]:X.indptr[r + 1]]
            for c in range(len(self.b)):
                out[r, c] = self.score(c, idx, val)
        return out

    def fit_pass(self, X, y_enc, *, loss, learning_rate, eta0, power_t, alpha, batch_size,
                 fit_intercept=True, sample_weight=None):
        X = sp.csr_matrix(X)
        sw = np.ones(X.shape[0]) if sample_weight is None else np.asarray(sample_weight)
        X.sort_indices()
        n, K = X.shape[0], len(self.b)
        self.mistakes = 0
        for start in range(0, n, batch_size):
            rows = range(start, min(start + batch_size, n))
            m = len(rows)
            eta = step_size(learning_rate, eta0, power_t, self.t)
            feats = [(X.indices[X.indptr[r]:X.indptr[r + 1]],
                      X.data[X.indptr[r]:X.indptr[r + 1]]) for r in rows]
            D = np.zeros((m, K))
            for bi, r in enumerate(rows):
                s = np.array([self.score(c, *feats[bi]) for c in range(K)])
                self.mistakes += is_mistake(s, y_enc[r])
                D[bi] = loss_derivatives(loss, s, y_enc[r], K, sw[r])
                self.counts["no_step"] += int((D[bi] == 0.0).sum())
            if alpha > 0:
                decay = max(0.0, 1.0 - eta * alpha)
                self.z *= decay
                for heap in self.heaps:
                    for key in heap:
                        heap[key] *= decay
            step = -eta / m
            if fit_intercept:
                self.b += step * D.sum(axis=0)
            for c in range(K):
                if self.algorithm == "wm":
                    self._wm_step(c, feats, step * D[:, c])
                else:
                    for bi in range(m):
                        if D[bi, c] != 0.0:
                            idx, val = feats[bi]
                            self._awm_step(c, idx, step * D[bi, c] * val)
            self.t += m
        return self

    def _wm_step(self, c, feats, scaled):
        """Algorithm 1: every step into the sketch, then the heap tracks the estimates."""
        for (idx, val), g in zip(feats, scaled):
            if g != 0.0:
                for i, v in zip(idx, val):
                    self.add(c, i, g * v)
        heap = self.heaps[c]
        for (idx, _), g in zip(feats, scaled):
            if g == 0.0:
                continue
            for i in idx:
                w = self.recovered(c, i)
                if i in heap:
                    heap[i] = w
                elif self._beats_min(c, i, w):
                    if len(heap) >= self.capacity:
                        del heap[self._heap_min(c)]
                    heap[i] = w

    def _awm_step(self, c, idx, deltas):
        """Algorithm 2 for one sample of model ``c``."""
        heap = self.heaps[c]
        in_heap = [i in heap for i in idx]
        for i, d, inside in zip(idx, deltas, in_heap):
            if inside:
                heap[i] += d
        for i, d, inside in zip(idx, deltas, in_heap):
            if inside:
                continue
            w = self.recovered(c, i) + d
            if self._beats_min(c, i, w):
                if len(heap) >= self.capacity:
                    evicted = self._heap_min(c)
                    w_evicted = heap.pop(evicted)
                    # Written back so that its recovered weight is its heap weight.
                    self.add(c, evicted, w_evicted - self.recovered(c, evicted))
                    self.counts["evicted"] += 1
                heap[i] = w
                self.counts["entered"] += 1
            else:
                self.add(c, i, d)
                self.counts["sketch_steps"] += 1

    def heap_items(self, c):
        heap = self.heaps[c]
        keys = sorted(heap, key=lambda k: (abs(heap[k]), k), reverse=True)
        return np.array(keys, dtype=np.int64), np.array([heap[k] for k in keys])


# ====================================================================== data
def ref_problem(n_classes, n_samples=40, n_features=20, seed=3):
    """Sparse-ish Gaussian rows, a never-touched column 7, labels 10, 20, 30."""
    rng = np.random.RandomState(seed)
    X = 0.5 * rng.normal(size=(n_samples, n_features))
    X[rng.rand(n_samples, n_features) > 0.6] = 0.0
    X[:, 7] = 0.0
    idx = (X @ rng.normal(size=(n_features, n_classes))).argmax(axis=1)
    idx[:n_classes] = np.arange(n_classes)
    return X, np.array([10, 20, 30])[idx]


def make_data(n_classes=2, n_samples=45, n_features=15, seed=0, density=0.5):
    rng = np.random.RandomState(seed)
    X = rng.normal(size=(n_samples, n_features))
    X[rng.rand(n_samples, n_features) > density] = 0.0
    idx = (X @ rng.normal(size=(n_features, n_classes))).argmax(axis=1)
    idx[:n_classes] = np.arange(n_classes)
    return X, 3 + 2 * idx


def make_estimator(cls, **params):
    """Small explicit shapes: a 16-cell wide sketch collides, the heap holds 6."""
    kw = dict(memory_budget=None, n_features_to_select=6, sketch_width=16, sketch_depth=2,
              random_state=0)
    kw.update(params)
    return cls(**kw)


def planted_data(n_samples=400, n_features=60, seed=0):
    rng = np.random.RandomState(seed)
    X = rng.normal(size=(n_samples, n_features))
    planted = np.array([5, 17, 33, 48])
    y = (X[:, planted] @ np.array([2.0, -2.0, 1.5, -1.5]) > 0).astype(int)
    return X, y, planted


def _assert_no_collisions(est, n_features):
    for sketch in est.sketches_:
        buckets, _ = sketch.buckets(np.arange(n_features))
        for row in buckets:
            assert len(np.unique(row)) == n_features, "test precondition: no collisions"


def _assert_collisions(est, n_features):
    buckets, _ = est.sketches_[0].buckets(np.arange(n_features))
    for row in buckets:
        assert len(np.unique(row)) < n_features, "test precondition: collisions"


def _n_models(n_classes):
    return 1 if n_classes == 2 else n_classes


# =========================================== 1. no collisions: WM = dense online SGD
_SETTINGS = [(alpha, bs, schedule) for alpha in (0.0, 0.02) for bs in (1, 4)
             for schedule in ("constant", "invscaling")]


def _ids_setting(s):
    return f"alpha{s[0]}-bs{s[1]}-{s[2]}"


def _check_against_dense(est, X, y, n_classes, rtol, atol_factor):
    classes = np.unique(y)
    p = est.get_params()
    progress = {}
    W, b, t, mistakes = dense_sgd(X, encode(y, classes), n_models=_n_models(n_classes),
                                  loss=p["loss"], learning_rate=p["learning_rate"],
                                  eta0=p["eta0"], power_t=p["power_t"], alpha=p["alpha"],
                                  batch_size=p["batch_size"], max_iter=p["max_iter"],
                                  progress=progress)
    scale = max(1.0, np.abs(W).max())
    assert np.abs(W).max() > 1e-2  # something was learned
    np.testing.assert_allclose(est.coef_.toarray(), W, rtol=rtol, atol=atol_factor * scale)
    np.testing.assert_allclose(est.intercept_, b, rtol=rtol,
                               atol=atol_factor * max(1.0, np.abs(b).max()))
    assert est.t_ == t
    X_test = np.random.RandomState(9).normal(size=(30, X.shape[1]))
    expected = X_test @ W.T + b
    np.testing.assert_allclose(est.decision_function(X_test),
                               expected.ravel() if n_classes == 2 else expected,
                               rtol=rtol, atol=10 * atol_factor * scale)
    assert est.online_error_rate_ == mistakes / len(y)
    # A binary log-loss model's progressive log loss, each sample's before its update.
    if "log_loss" in progress:
        np.testing.assert_allclose(est.online_log_loss_, progress["log_loss"] / len(y),
                                   rtol=rtol)
    else:
        assert not hasattr(est, "online_log_loss_")
    # The never-touched column 7 has no weight and is not selected.
    assert not est.get_support()[7]
    return W, b


@pytest.mark.parametrize("setting", _SETTINGS, ids=_ids_setting)
@pytest.mark.parametrize("depth", [1, 2, 3, 5])
def test_wm_without_collisions_equals_dense_online_logistic_regression(setting, depth):
    alpha, batch_size, schedule = setting
    X, y = ref_problem(2)
    est = WM(None, n_features_to_select=X.shape[1], sketch_width=2**20, sketch_depth=depth,
             learning_rate=schedule, eta0=0.3, alpha=alpha, batch_size=batch_size,
             max_iter=2, shuffle=False, random_state=0).fit(X, y)
    _assert_no_collisions(est, X.shape[1])
    W, _ = _check_against_dense(est, X, y, 2, rtol=1e-4, atol_factor=1e-5)
    # The recovered weight sqrt(s) * median is the dense weight, for every feature.
    recovered = np.sqrt(depth) * est.sketches_[0].query(np.arange(X.shape[1]))
    np.testing.assert_allclose(recovered, W[0], rtol=1e-4, atol=1e-5 * np.abs(W).max())


@pytest.mark.parametrize("setting", [s for s in _SETTINGS if s[2] == "invscaling"],
                         ids=_ids_setting)
@pytest.mark.parametrize("depth", [1, 3])
@pytest.mark.parametrize("loss", ["log_loss", "hinge"])
def test_wm_multiclass_without_collisions_equals_dense(setting, depth, loss):
    """Softmax (log loss) or one-vs-rest (hinge) over 3 classes, one sketch per class."""
    alpha, batch_size, schedule = setting
    X, y = ref_problem(3)
    est = WM(None, n_features_to_select=X.shape[1], sketch_width=2**20, sketch_depth=depth,
             loss=loss, learning_rate=schedule, eta0=0.3, alpha=alpha, batch_size=batch_size,
             max_iter=2, shuffle=False, random_state=0).fit(X, y)
    _assert_no_collisions(est, X.shape[1])
    assert len(est.sketches_) == 3
    W, _ = _check_against_dense(est, X, y, 3, rtol=1e-4, atol_factor=1e-5)
    for c, sketch in enumerate(est.sketches_):
        np.testing.assert_array_equal(sketch.seeds, est.sketches_[0].seeds)
        recovered = np.sqrt(depth) * sketch.query(np.arange(X.shape[1]))
        np.testing.assert_allclose(recovered, W[c], rtol=1e-4, atol=1e-5 * np.abs(W).max())


# ====================== 2. WM with collisions: lazy scale = explicit O(k) decay, exactly
def _replay(est, X, y, algorithm, sample_weight=None):
    classes = np.unique(y)
    p = est.get_params()
    width, depth, capacity = est._model_shape()
    keys = np.arange(X.shape[1])
    buckets, signs = est.sketches_[0].buckets(keys)
    assert buckets.shape == (depth, X.shape[1])
    # The hashes of every model's sketch: the documented bucket/sign function of its seeds.
    for sketch in est.sketches_:
        expected = bucket_and_sign_arrays(keys, sketch.seeds, width)
        np.testing.assert_array_equal(sketch.buckets(keys)[0], expected[0])
        np.testing.assert_array_equal(sketch.buckets(keys)[1], expected[1])
        np.testing.assert_array_equal(sketch.seeds, est.sketches_[0].seeds)
    ref = SketchReplay(algorithm, buckets, signs, width, capacity, len(est.sketches_))
    for _ in range(p["max_iter"]):
        ref.fit_pass(X, encode(y, classes), loss=p["loss"], learning_rate=p["learning_rate"],
                     eta0=p["eta0"], power_t=p["power_t"], alpha=p["alpha"],
                     batch_size=p["batch_size"], fit_intercept=p["fit_intercept"],
                     sample_weight=sample_weight)
    return ref


def _assert_matches_replay(est, ref, X, n_classes, heap_rtol):
    z_scale = np.abs(ref.z).max()
    assert z_scale > 1e-2
    # No heap decision of the replay is a near tie that float32 cells could flip: the
    # cells drift a few float32 eps from the float64 replay. (An exact tie comes from two
    # keys on the same cells, and is exact, broken by the key, in float32 too.)
    gaps = [g for g in ref.gaps if g != 0.0]
    assert min(gaps, default=1.0) > 16 * np.finfo(np.float32).eps * max(1.0, z_scale), (
        "test precondition: no near tie")
    for c, sketch in enumerate(est.sketches_):
        values = sketch.to_array()
        np.testing.assert_array_equal(values, sketch.table.astype(np.float64)
                                      * sketch.scale_factor)
        np.testing.assert_allclose(values, ref.z[c], rtol=1e-5, atol=1e-5 * z_scale)
        keys, weights = est.heaps_[c].items()
        ref_keys, ref_weights = ref.heap_items(c)
        np.testing.assert_array_equal(keys, ref_keys)
        np.testing.assert_allclose(weights, ref_weights, rtol=heap_rtol,
                                   atol=heap_rtol * max(1.0, z_scale))
    np.testing.assert_allclose(est.intercept_, ref.b, rtol=1e-5, atol=1e-6)
    assert est.t_ == ref.t
    expected = ref.decision_function(X)
    np.testing.assert_allclose(est.decision_function(X),
                               expected.ravel() if n_classes == 2 else expected,
                               rtol=1e-5, atol=1e-4 * max(1.0, np.abs(expected).max()))
    assert est.online_error_rate_ == ref.mistakes / X.shape[0]


@pytest.mark.parametrize("depth", [2, 3])
@pytest.mark.parametrize("batch_size", [1, 3])
@pytest.mark.parametrize("schedule", ["constant", "invscaling"])
def test_wm_lazy_scale_equals_explicit_decay_with_collisions(depth, batch_size, schedule):
    X, y = ref_problem(2, n_samples=60, n_features=14)
    alpha = 0.05
    est = WM(None, n_features_to_select=4, sketch_width=5, sketch_depth=depth,
             learning_rate=schedule, eta0=0.4, alpha=alpha, batch_size=batch_size, max_iter=2,
             shuffle=False, random_state=1).fit(X, y)
    _assert_collisions(est, X.shape[1])
    ref = _replay(est, X, y, "wm")
    _assert_matches_replay(est, ref, X, 2, heap_rtol=1e-5)
    # The decay really acted (the sketch differs from the undecayed run) and went
    # through the paper's global scale: the product of the (1 - eta alpha) factors.
    decays = []
    t = 1.0
    for _ in range(2):
        for start in range(0, len(y), batch_size):
            decays.append(1.0 - step_size(schedule, 0.4, 0.5, t) * alpha)
            t += min(batch_size, len(y) - start)
    assert est.sketches_[0].scale_factor == pytest.approx(np.prod(decays), rel=1e-12)
    undecayed = WM(**{**est.get_params(), "alpha": 0.0}).fit(X, y)
    assert not np.allclose(undecayed.sketches_[0].to_array(), est.sketches_[0].to_array(),
                           rtol=0.05)


@pytest.mark.parametrize("alpha", [1.25, 2.5])
@pytest.mark.parametrize("depth", [2, 3])
def test_wm_strong_decay_equals_explicit_decay(alpha, depth):
    """eta * alpha = 0.5: the scale passes 1e-9 and is folded into the table; eta * alpha
    = 1: every step starts from a zero model (the decay factor is max(0, 1 - eta alpha))."""
    X, y = ref_problem(2, n_samples=60, n_features=14)
    est = WM(None, n_features_to_select=4, sketch_width=5, sketch_depth=depth,
             learning_rate="constant", eta0=0.4, alpha=alpha, max_iter=1, shuffle=False,
             random_state=1).fit(X, y)
    assert (1 - 0.4 * alpha) ** len(y) < 1e-9  # precondition: the scale underflows
    _assert_matches_replay(est, _replay(est, X, y, "wm"), X, 2, heap_rtol=1e-5)


@pytest.mark.parametrize("cls", BOTH, ids=_name)
@pytest.mark.parametrize("loss", ["log_loss", "hinge", "modified_huber"])
def test_sample_weight_losses_and_no_intercept_equal_replay(cls, loss):
    """Hinge and modified Huber have zero-gradient samples, which take no step."""
    X, y = ref_problem(2, n_samples=60, n_features=12, seed=4)
    sw = np.random.RandomState(0).uniform(0.2, 2.0, size=len(y))
    est = cls(None, n_features_to_select=3, sketch_width=4, sketch_depth=3, loss=loss,
              learning_rate="invscaling", eta0=0.5, alpha=0.01, batch_size=2, max_iter=2,
              fit_intercept=False, shuffle=False, random_state=3).fit(X, y, sample_weight=sw)
    ref = _replay(est, X, y, "wm" if cls is WM else "awm", sample_weight=sw)
    _assert_matches_replay(est, ref, X, 2, heap_rtol=1e-5)
    assert est.intercept_.tolist() == [0.0]
    assert (ref.counts["no_step"] > 0) == (loss != "log_loss")
    unweighted = _replay(est, X, y, "wm" if cls is WM else "awm")
    assert not np.allclose(unweighted.z, ref.z, rtol=0.05)


@pytest.mark.parametrize("depth", [2, 3])
def test_wm_multiclass_with_collisions_equals_replay(depth):
    X, y = ref_problem(3, n_samples=45, n_features=14)
    est = WM(None, n_features_to_select=4, sketch_width=5, sketch_depth=depth,
             learning_rate="invscaling", eta0=0.4, alpha=0.03, batch_size=2, max_iter=1,
             shuffle=False, random_state=2).fit(X, y)
    _assert_collisions(est, X.shape[1])
    _assert_matches_replay(est, _replay(est, X, y, "wm"), X, 3, heap_rtol=1e-5)


# ==================================================== 3. AWM: heap room, then Algorithm 2
@pytest.mark.parametrize("setting", _SETTINGS, ids=_ids_setting)
@pytest.mark.parametrize("depth", [1, 3])
@pytest.mark.parametrize("n_classes", [2, 3])
def test_awm_with_room_for_every_feature_equals_dense_online_sgd(setting, depth, n_classes):
    """Every touched feature enters the heap at once: exact dense SGD, the sketch untouched."""
    alpha, batch_size, schedule = setting
    X, y = ref_problem(n_classes)
    est = AWM(None, n_features_to_select=X.shape[1], sketch_width=4, sketch_depth=depth,
              learning_rate=schedule, eta0=0.3, alpha=alpha, batch_size=batch_size,
              max_iter=2, shuffle=False, random_state=0).fit(X, y)
    _check_against_dense(est, X, y, n_classes, rtol=1e-9, atol_factor=1e-12)
    touched = np.flatnonzero((X != 0).any(axis=0))
    for heap, sketch in zip(est.heaps_, est.sketches_):
        np.testing.assert_array_equal(np.sort(heap.keys()), touched)
        assert not sketch.table.any()


@pytest.mark.parametrize("depth", [1, 2, 3])
@pytest.mark.parametrize("capacity", [2, 3])
@pytest.mark.parametrize("alpha", [0.0, 0.02])
@pytest.mark.parametrize("schedule", ["constant", "invscaling"])
def test_awm_small_heap_equals_algorithm_2(depth, capacity, alpha, schedule):
    X, y = ref_problem(2, n_samples=60, n_features=12, seed=4)
    est = AWM(None, n_features_to_select=capacity, sketch_width=4, sketch_depth=depth,
              learning_rate=schedule, eta0=0.5, alpha=alpha, batch_size=1, max_iter=1,
              shuffle=False, random_state=3).fit(X, y)
    _assert_collisions(est, X.shape[1])
    ref = _replay(est, X, y, "awm")
    # Every branch of Algorithm 2 was taken.
    assert ref.counts["evicted"] > 0 and ref.counts["sketch_steps"] > 0, ref.counts
    _assert_matches_replay(est, ref, X, 2, heap_rtol=1e-5)
    # Predictions read a heap feature's weight exactly, not the sketch.
    keys, weights = est.heaps_[0].items()
    one_hot = np.zeros((len(keys), X.shape[1]))
    one_hot[np.arange(len(keys)), keys] = 1.0
    np.testing.assert_allclose(est.decision_function(one_hot) - est.intercept_[0], weights,
                               rtol=1e-12, atol=1e-15)


@pytest.mark.parametrize("batch_size", [2, 5])
@pytest.mark.parametrize("n_classes", [2, 3])
def test_awm_minibatch_and_multiclass_equal_algorithm_2(batch_size, n_classes):
    """A mini-batch is scored at its start; its samples then update one by one."""
    X, y = ref_problem(n_classes, n_samples=50, n_features=12, seed=6)
    est = AWM(None, n_features_to_select=3, sketch_width=4, sketch_depth=2,
              learning_rate="invscaling", eta0=0.5, alpha=0.01, batch_size=batch_size,
              max_iter=2, shuffle=False, random_state=5).fit(X, y)
    ref = _replay(est, X, y, "awm")
    assert ref.counts["evicted"] > 0 and ref.counts["sketch_steps"] > 0, ref.counts
    _assert_matches_replay(est, ref, X, n_classes, heap_rtol=1e-5)


def _one_sparse_rows(n_rows, n_keys, seed):
    """CSR arrays of rows of one value each (OutlierExplainer's examples), and labels."""
    rng = np.random.default_rng(seed)
    indices = rng.integers(0, n_keys, n_rows).astype(np.int64)
    data = rng.choice([1.0, 1.0, 0.5, -2.0, 3.0], n_rows)
    y = np.where(rng.random(n_rows) < 0.1 + 0.8 * (indices % 3 == 0), 1.0, -1.0)
    return np.arange(n_rows + 1, dtype=np.int64), indices, data, y, rng.random(n_rows) + 0.5


@pytest.mark.parametrize("loss", ["LOG_LOSS", "HINGE"])
@pytest.mark.parametrize("schedule", ["CONSTANT", "INVSCALING", "NORMALIZED"])
@pytest.mark.parametrize("alpha", [0.0, 0.02])
@pytest.mark.parametrize("fit_intercept", [True, False])
@pytest.mark.parametrize("depth", [1, 3])
def test_awm_one_sparse_loop_equals_the_general_loop_bit_for_bit(loss, schedule, alpha,
                                                                  fit_intercept, depth):
    """Rows of one value train in a loop of their own: the same model, bit for bit."""
    from sklearn_sketch import CountSketch, TopKHeap
    from sklearn_sketch._sgd_fast import Loss, Schedule, SGDParams, WeightStore, sgd_pass
    indptr, indices, data, y, weights = _one_sparse_rows(600, 40, seed=depth)
    params = SGDParams(loss=getattr(Loss, loss), schedule=getattr(Schedule, schedule),
                       store=WeightStore.ACTIVE_SET, eta0=0.3, power_t=0.5, alpha=alpha,
                       optimal_init=0.0, batch_size=1, fit_intercept=fit_intercept,
                       norm_floor=0.5)
    models = []
    for one_sparse_loop in (True, False):
        sketch, heap, intercept = CountSketch(8, depth, random_state=1), TopKHeap(4), np.zeros(1)
        order = np.random.default_rng(2).permutation(len(y)).astype(np.int64)
        result = sgd_pass(params, [sketch], [heap], intercept, indptr, indices, data, y,
                          weights, order, 1.0, 1, one_sparse_loop=one_sparse_loop)
        models.append((result, sketch.table.copy(), sketch.scale_factor, heap.items(),
                       intercept.copy()))
    (fast, table, scale, (keys, values), b), (general, *reference) = models
    assert fast == general
    np.testing.assert_array_equal(table, reference[0])
    assert scale == reference[1]
    np.testing.assert_array_equal(keys, reference[2][0])
    np.testing.assert_array_equal(values, reference[2][1])
    np.testing.assert_array_equal(b, reference[3])
    # Every branch ran: weights in the heap and in the sketch, the intercept moved.
    assert len(keys) == 4 and table.any() and (b[0] != 0.0) == fit_intercept


# Three heap features of twelve keys in 4 cells learn little; the test is the replay.
@pytest.mark.filterwarnings("ignore:AWMSketchClassifier learned next to nothing")
@pytest.mark.parametrize("depth", [1, 3])
@pytest.mark.parametrize("schedule", ["constant", "invscaling"])
def test_awm_on_one_sparse_rows_equals_algorithm_2(depth, schedule):
    """The estimator on rows of one value each (the loop of its own) replays Algorithm 2."""
    indptr, indices, data, y, _ = _one_sparse_rows(300, 12, seed=7)
    X = sp.csr_matrix((data, indices, indptr), shape=(len(y), 12)).toarray()
    est = AWM(None, n_features_to_select=3, sketch_width=4, sketch_depth=depth,
              learning_rate=schedule, eta0=0.5, alpha=0.01, batch_size=1, max_iter=1,
              shuffle=False, random_state=3).fit(X, y)
    ref = _replay(est, X, y, "awm")
    assert ref.counts["evicted"] > 0 and ref.counts["sketch_steps"] > 0, ref.counts
    _assert_matches_replay(est, ref, X, 2, heap_rtol=1e-5)


def test_awm_evicted_weight_is_recovered_from_the_sketch():
    """After an eviction, sqrt(s) * median of the evicted key equals its last heap weight."""
    X = np.zeros((2, 4))
    X[0, 0] = 1.0   # feature 0 enters the heap (capacity 1)
    X[1, 1] = 5.0   # feature 1 takes a larger step and evicts it
    y = np.array([1, 0])
    for depth in (1, 2, 3):
        est = AWM(None, n_features_to_select=1, sketch_width=64, sketch_depth=depth,
                  learning_rate="constant", eta0=1.0, alpha=0.0, shuffle=False,
                  max_iter=1, random_state=0)
        est.partial_fit(X[:1], y[:1], classes=[0, 1])
        w0 = est.heaps_[0].get(0)
        assert w0 > 0
        est.partial_fit(X[1:], y[1:])
        assert est.heaps_[0].keys().tolist() == [1]
        recovered = np.sqrt(depth) * est.sketches_[0].query([0])[0]
        assert recovered == pytest.approx(w0, rel=1e-6)


@pytest.mark.parametrize("cls", BOTH, ids=_name)
def test_hash_seeds_come_from_random_state(cls):
    X, y = make_data(3)
    a = make_estimator(cls, random_state=7, sketch_depth=4).fit(X, y)
    b = make_estimator(cls, random_state=7, sketch_depth=4, eta0=0.01).fit(X[:5], y[:5])
    c = make_estimator(cls, random_state=8, sketch_depth=4).fit(X, y)
    assert a.sketches_[0].seeds.shape == (4,)
    for sketch in a.sketches_ + b.sketches_:  # every model, and any data
        np.testing.assert_array_equal(sketch.seeds, a.sketches_[0].seeds)
    assert not np.array_equal(c.sketches_[0].seeds, a.sketches_[0].seeds)


# ====================================================================== 4. memory budget
@pytest.mark.parametrize("budget, expected", [
    ("2KB", 2048), ("2kb", 2048), ("2 KiB", 2048), ("1.5MB", 1572864), ("1.5 MiB", 1572864),
    ("1GB", 2**30), ("4096", 4096), ("512B", 512), (4096, 4096), (np.int64(8192), 8192),
    (" 8KB ", 8192), ("0.5KB", 512),
])
def test_parse_memory_budget(budget, expected):
    assert parse_memory_budget(budget) == expected


@pytest.mark.parametrize("bad", ["2TB", "abc", "", "KB", "-1KB", "1e3KB", "2 K B", "1.KB"])
def test_parse_memory_budget_rejects_bad_strings(bad):
    with pytest.raises(ValueError, match="memory_budget must be .*'8KB'"):
        parse_memory_budget(bad)


@pytest.mark.parametrize("cls, params", [
    (AWM, dict(memory_budget="8B")),
    (AWM, dict(memory_budget="15")),
    (WM, dict(memory_budget="16B")),                           # no room for 3 rows
    (AWM, dict(memory_budget="1KB", n_features_to_select=200)),  # heap eats the budget
    (WM, dict(memory_budget="256B", sketch_depth=64)),
])
def test_too_small_budget_raises(cls, params):
    X, y = make_data()
    est = cls(**params)
    with pytest.raises(ValueError, match="memory_budget"):
        est.fit(X, y)
    with pytest.raises(NotFittedError):
        check_is_fitted(est)


@pytest.mark.parametrize("cls", BOTH, ids=_name)
@pytest.mark.parametrize("bad", ["lots", "2TB", 8])
def test_bad_budget_raises_naming_memory_budget(cls, bad):
    X, y = make_data()
    with pytest.raises(ValueError, match="memory_budget"):
        cls(bad).fit(X, y)


@pytest.mark.parametrize("cls", BOTH, ids=_name)
@pytest.mark.parametrize("missing", ["n_features_to_select", "sketch_width", "sketch_depth"])
def test_no_budget_needs_the_three_values(cls, missing):
    X, y = make_data()
    params = dict(n_features_to_select=4, sketch_width=16, sketch_depth=2)
    params[missing] = None
    with pytest.raises(ValueError, match="memory_budget"):
        cls(None, **params).fit(X, y)


@pytest.mark.parametrize("cls", BOTH, ids=_name)
@pytest.mark.usefixtures("sparse_as_given")
def test_memory_bytes_does_not_depend_on_data(cls):
    memories = []
    for n_samples, n_features in [(30, 20), (300, 5000)]:
        rng = np.random.RandomState(0)
        X = sp.random(n_samples, n_features, density=0.05, random_state=rng, format="csr")
        y = np.arange(n_samples) % 3
        est = cls("4KB", max_iter=1, random_state=0).fit(X, y)
        expected = (sum(s.table.nbytes + s.seeds.nbytes for s in est.sketches_)
                    + sum(h.memory_bytes for h in est.heaps_) + 2 * est.intercept_.nbytes)
        assert est.memory_bytes_ == expected
        assert len(est.sketches_) == len(est.heaps_) == 3
        memories.append(est.memory_bytes_)
    assert memories[0] == memories[1]


# =========================================== 5. partial_fit / fit / warm start / API
@pytest.mark.parametrize("cls", BOTH, ids=_name)
@pytest.mark.parametrize("n_classes", [2, 3])
@pytest.mark.parametrize("shuffle", [False, True])
@pytest.mark.parametrize("batch_size", [1, 4])
def test_partial_fit_passes_equal_fit(cls, n_classes, shuffle, batch_size):
    X, y = make_data(n_classes)
    n_passes = 3
    kw = dict(shuffle=shuffle, batch_size=batch_size, alpha=1e-3)
    fitted = make_estimator(cls, max_iter=n_passes, **kw).fit(X, y)
    partial = make_estimator(cls, **kw)
    for _ in range(n_passes):
        partial.partial_fit(X, y, classes=np.unique(y))
    assert_same_state(fitted, partial)
    assert fitted.t_ == 1 + n_passes * len(y)
    assert fitted.n_iter_ == n_passes and partial.n_iter_ == 1
    shorter = make_estimator(cls, max_iter=n_passes - 1, **kw).fit(X, y)
    assert not np.array_equal(shorter.intercept_, fitted.intercept_)
    if shuffle:
        in_order = make_estimator(cls, max_iter=n_passes, **{**kw, "shuffle": False}).fit(X, y)
        assert not np.array_equal(in_order.intercept_, fitted.intercept_)


@pytest.mark.parametrize("cls", BOTH, ids=_name)
@pytest.mark.parametrize("n_classes", [2, 3])
@pytest.mark.parametrize("shuffle", [False, True])
def test_warm_start_fits_equal_one_long_fit(cls, n_classes, shuffle):
    X, y = make_data(n_classes)
    long = make_estimator(cls, shuffle=shuffle, max_iter=5).fit(X, y)
    warm = make_estimator(cls, shuffle=shuffle, warm_start=True, max_iter=2).fit(X, y)
    warm.set_params(max_iter=3).fit(X, y)
    assert_same_state(long, warm)
    assert warm.n_iter_ == 3
    cold = make_estimator(cls, shuffle=shuffle, max_iter=2).fit(X, y)
    cold.set_params(max_iter=3).fit(X, y)
    assert cold.t_ == 1 + 3 * len(y)
    assert not np.array_equal(cold.intercept_, long.intercept_)


@pytest.mark.parametrize("cls", BOTH, ids=_name)
@pytest.mark.parametrize("n_classes", [2, 3])
def test_pickle_round_trip_and_continued_training(cls, n_classes):
    X, y = make_data(n_classes)
    est = make_estimator(cls, batch_size=2, max_iter=2, alpha=1e-2).fit(X, y)
    copy = pickle.loads(pickle.dumps(est))
    assert_same_state(est, copy)
    np.testing.assert_array_equal(est.decision_function(X), copy.decision_function(X))
    np.testing.assert_array_equal(est.predict_proba(X), copy.predict_proba(X))
    X2, y2 = make_data(n_classes, seed=1)
    before = snapshot(est)
    copy.partial_fit(X2, y2)
    assert_same_snapshot(snapshot(est), before)  # the copy is independent
    est.partial_fit(X2, y2)
    assert_same_state(est, copy)


@pytest.mark.parametrize("cls", BOTH, ids=_name)
def test_clone_gives_unfitted_estimator_with_equal_params(cls):
    X, y = make_data()
    est = cls("4KB", eta0=0.05, batch_size=3, max_iter=2, random_state=0).fit(X, y)
    cloned = clone(est)
    assert cloned.get_params() == est.get_params()
    with pytest.raises(NotFittedError):
        check_is_fitted(cloned)
    for attr in ("intercept_", "sketches_", "heaps_", "t_", "coef_", "online_error_rate_"):
        assert not hasattr(cloned, attr)
    assert_same_state(cloned.fit(X, y), est)


@pytest.mark.parametrize("cls", BOTH, ids=_name)
def test_pipeline_selects_planted_features_and_predicts_well(cls):
    X, y, planted = planted_data(n_samples=600)
    pipe = Pipeline([
        ("select", cls(None, n_features_to_select=8, sketch_width=256, sketch_depth=3,
                       random_state=0)),
        ("clf", LogisticRegression()),
    ])
    pipe.fit(X[:400], y[:400])
    support = pipe.named_steps["select"].get_support(indices=True)
    assert set(planted) <= set(support)
    assert len(support) <= 8
    assert pipe.named_steps["clf"].coef_.shape == (1, len(support))
    assert pipe.score(X[400:], y[400:]) > 0.9


@pytest.mark.parametrize("cls", BOTH, ids=_name)
def test_select_from_model(cls):
    X, y, planted = planted_data()
    est = cls(None, n_features_to_select=10, sketch_width=256, sketch_depth=3, random_state=0)
    sfm = SelectFromModel(est, max_features=4, threshold=-np.inf).fit(X, y)
    np.testing.assert_array_equal(sfm.get_support(indices=True), planted)
    np.testing.assert_array_equal(sfm.transform(X), X[:, planted])
    # The same as the estimator's own four most important features.
    top4 = np.sort(sfm.estimator_.selected_features_.keys[:4])
    np.testing.assert_array_equal(top4, planted)


@pytest.mark.parametrize("cls", BOTH, ids=_name)
@pytest.mark.parametrize("n_classes", [2, 3])
def test_selection_and_coef_are_the_heaps(cls, n_classes):
    X, y = make_data(n_classes, n_samples=80, n_features=30)
    k = 4
    est = make_estimator(cls, n_features_to_select=k).fit(X, y)
    weight = {}
    for c, heap in enumerate(est.heaps_):
        assert len(heap) <= k
        for key, w in zip(*heap.items()):
            weight.setdefault(int(key), np.zeros(len(est.heaps_)))[c] = w
    ranked = sorted(weight, key=lambda key: (np.abs(weight[key]).max(), key), reverse=True)[:k]
    assert est.selected_features_.keys.tolist() == ranked
    np.testing.assert_array_equal(est.get_support(indices=True), np.sort(ranked))
    np.testing.assert_array_equal(est.transform(X), X[:, np.sort(ranked)])
    coef = est.coef_.toarray()
    expected = np.zeros_like(coef)
    for c, heap in enumerate(est.heaps_):
        keys, w = heap.items()
        expected[c, keys] = w
    np.testing.assert_array_equal(coef, expected)


@pytest.mark.parametrize("cls", BOTH, ids=_name)
@pytest.mark.parametrize("batch_size", [1, 4])
@pytest.mark.usefixtures("sparse_as_given")
def test_dense_and_csr_give_the_same_model(cls, batch_size):
    X, y = make_data(3)
    dense = make_estimator(cls, batch_size=batch_size, alpha=1e-3).fit(X, y)
    # Dense columns train standardized under 'normalized' steps; sparse input as given.
    S = model_coordinates(X, X, dense.learning_rate)
    for kind in (sp.csr_matrix, sp.csr_array, sp.csc_matrix):
        sparse = make_estimator(cls, batch_size=batch_size, alpha=1e-3).fit(kind(S), y)
        assert_same_state(dense, sparse, standardization=False)
        np.testing.assert_array_equal(dense.decision_function(X),
                                      sparse.decision_function(kind(S)))
        np.testing.assert_array_equal(dense.decision_function(X),
                                      dense.decision_function(kind(X)))


@pytest.mark.parametrize("cls", BOTH, ids=_name)
@pytest.mark.parametrize("n_classes", [2, 3])
def test_predict_proba_and_predict(cls, n_classes):
    X, y = make_data(n_classes)
    est = make_estimator(cls).fit(X, y)
    proba = est.predict_proba(X)
    scores = est.decision_function(X)
    if n_classes == 2:
        np.testing.assert_allclose(proba[:, 1], expit(scores), rtol=1e-12)
        np.testing.assert_array_equal(est.predict(X), est.classes_[(scores > 0).astype(int)])
    else:
        e = np.exp(scores - scores.max(axis=1, keepdims=True))
        np.testing.assert_allclose(proba, e / e.sum(axis=1, keepdims=True), rtol=1e-12)
        np.testing.assert_array_equal(est.predict(X), est.classes_[scores.argmax(axis=1)])
    np.testing.assert_allclose(proba.sum(axis=1), 1.0, rtol=1e-12)
    est.set_params(loss="hinge").fit(X, y)
    assert not hasattr(est, "predict_proba")


# ============================================================ 6. planted sparse stream
def planted_stream(n=20000, p=2000, nnz=20, k=10, p_heavy=0.1, seed=0):
    """Binary sparse rows: each heavy feature active w.p. ``p_heavy``, plus random light
    features; labels drawn from a logistic model with ``k`` heavy weights of magnitude
    2-4 and small weights elsewhere."""
    rng = np.random.RandomState(seed)
    heavy = rng.choice(p, k, replace=False)
    light = np.setdiff1d(np.arange(p), heavy)
    H = rng.rand(n, k) < p_heavy
    heavy_rows, heavy_slot = np.nonzero(H)
    light_cols = light[rng.randint(0, light.size, size=(n, nnz - 1))]
    rows = np.concatenate([heavy_rows, np.repeat(np.arange(n), nnz - 1)])
    cols = np.concatenate([heavy[heavy_slot], light_cols.ravel()])
    X = sp.csr_matrix((np.ones(rows.size), (rows, cols)), shape=(n, p))
    X.sum_duplicates()
    X.data[:] = 1.0
    w = 0.1 * rng.normal(size=p)
    w[heavy] = rng.choice([-1.0, 1.0], k) * rng.uniform(2.0, 4.0, k)
    y = (rng.rand(n) < expit(X @ w)).astype(int)
    return X, y, heavy, w


@pytest.fixture(scope="module")
def stream():
    return planted_stream()


def test_awm_recovers_planted_heavy_features_in_4kb(stream):
    X, y, heavy, w = stream
    awm = AWM("4KB", max_iter=1, random_state=0).fit(X, y)
    top = awm.selected_features_.keys[:10]
    found = set(top.tolist()) & set(heavy.tolist())
    assert len(found) >= 8, sorted(found)
    # The recovered weights have the true signs.
    weights = dict(zip(awm.heaps_[0].keys().tolist(), awm.heaps_[0].weights()))
    assert all(np.sign(weights[f]) == np.sign(w[f]) for f in found)
    # Online error: a real learner, better than always predicting the majority class.
    majority_error = min(y.mean(), 1 - y.mean())
    assert 0.0 < awm.online_error_rate_ < 0.5
    assert awm.online_error_rate_ < majority_error
    # The paper's claim: in the same memory, the active set recovers at least as well.
    wm = WM("4KB", max_iter=1, random_state=0).fit(X, y)
    wm_found = set(wm.selected_features_.keys[:10].tolist()) & set(heavy.tolist())
    assert len(found) >= len(wm_found)
    assert 0.0 < wm.online_error_rate_ < 0.5


@pytest.mark.parametrize("cls", BOTH, ids=_name)
def test_online_error_rate_counts_mistakes_before_each_update(cls):
    """Without collisions, the mistakes are those of dense online SGD before each step."""
    X, y = ref_problem(2, n_samples=80, seed=11)
    est = cls(None, n_features_to_select=X.shape[1], sketch_width=2**16, sketch_depth=1,
              learning_rate="constant", eta0=0.5, alpha=0.0, max_iter=1, shuffle=False,
              random_state=0).fit(X, y)
    _assert_no_collisions(est, X.shape[1])
    _, _, _, mistakes = dense_sgd(X, encode(y, np.unique(y)), n_models=1,
                                  learning_rate="constant", eta0=0.5, alpha=0.0, batch_size=1)
    assert 0 < mistakes < len(y)
    assert est.online_error_rate_ == mistakes / len(y)
    # A second pass counts its own mistakes only.
    _, _, _, second = dense_sgd(X, encode(y, np.unique(y)), n_models=1, max_iter=2,
                                learning_rate="constant", eta0=0.5, alpha=0.0, batch_size=1)
    assert second != mistakes
    est.partial_fit(X, y)
    assert est.online_error_rate_ == second / len(y)


# ====================================================================== 7. bad input
def _fitted(cls):
    X, y = make_data(3)
    return make_estimator(cls, alpha=1e-3, batch_size=2).fit(X, y), X, y


@pytest.mark.parametrize("cls", BOTH, ids=_name)
@pytest.mark.parametrize("bad", [np.nan, np.inf])
@pytest.mark.parametrize("sparse", [False, True])
def test_non_finite_X_raises_and_keeps_the_model(cls, bad, sparse):
    est, X, y = _fitted(cls)
    assert_refuses_non_finite_X(est, X, y, bad, sparse)


@pytest.mark.parametrize("cls", BOTH, ids=_name)
def test_wrong_n_features_raises_and_keeps_the_model(cls):
    est, X, y = _fitted(cls)
    assert_refuses_wrong_n_features(est, X, y)


@pytest.mark.parametrize("cls", BOTH, ids=_name)
def test_class_errors_keep_the_model(cls):
    est, X, y = _fitted(cls)
    assert_refuses_class_errors(est, X, y)
    fresh = make_estimator(cls)
    with pytest.raises(ValueError, match="only one class"):
        fresh.fit(X, np.full(len(y), 5))
    with pytest.raises(ValueError, match="classes"):
        fresh.partial_fit(X, y)  # classes missing on the first call
    with pytest.raises(NotFittedError):
        check_is_fitted(fresh)


@pytest.mark.parametrize("cls", BOTH, ids=_name)
@pytest.mark.parametrize("batch_size", [1, 4])
def test_divergence_raises_and_keeps_the_model(cls, batch_size):
    X_big, y_big = make_data(2, n_samples=30, n_features=5, density=1.0)
    X_big = X_big * 1e10
    explode = dict(eta0=1e300, learning_rate="constant")
    fresh = make_estimator(cls, batch_size=batch_size, **explode)
    with pytest.raises(ValueError, match="diverged"):
        fresh.fit(X_big, y_big)
    with pytest.raises(NotFittedError):
        check_is_fitted(fresh)
    X, y = make_data(2, n_features=5)
    est = make_estimator(cls, batch_size=batch_size).fit(X, y)
    before = snapshot(est)
    proba = est.predict_proba(X)
    est.set_params(**explode)
    with pytest.raises(ValueError, match="diverged"):
        est.fit(X_big, y_big)
    assert_same_snapshot(snapshot(est), before)
    with pytest.raises(ValueError, match="diverged"):
        est.partial_fit(X_big, y_big)
    assert_same_snapshot(snapshot(est), before)
    est.set_params(warm_start=True)
    with pytest.raises(ValueError, match="diverged"):
        est.fit(X_big, y_big)
    assert_same_snapshot(snapshot(est), before)
    np.testing.assert_array_equal(est.predict_proba(X), proba)


@pytest.mark.parametrize("cls", BOTH, ids=_name)
def test_divergence_in_a_single_batch_is_detected(cls):
    """One batch holding every sample: no later score sees the overflow."""
    X_big, y_big = make_data(2, n_samples=30, n_features=5, density=1.0)
    est = make_estimator(cls, batch_size=30, max_iter=1, eta0=1e300, learning_rate="constant")
    with pytest.raises(ValueError, match="diverged"):
        est.fit(X_big * 1e10, y_big)


def test_parse_memory_budget_refuses_non_positive_and_bool():
    with pytest.raises(ValueError, match="positive"):
        parse_memory_budget(-8)
    with pytest.raises(ValueError, match="positive"):
        parse_memory_budget(0)
    with pytest.raises(TypeError, match="memory_budget"):
        parse_memory_budget(True)


def test_awm_heap_ordered_by_value_keeps_the_features_of_class_1():
    import pickle

    from sklearn_sketch import average_estimators, load, save

    rng = np.random.RandomState(0)
    X = rng.normal(size=(3000, 100))
    y = (X[:, 3] - 2 * X[:, 17] + X[:, 5] > 0).astype(int)
    by_magnitude = AWMSketchClassifier("4KB", random_state=0).fit(X, y)
    by_value = AWMSketchClassifier("4KB", heap_order="value", random_state=0).fit(X, y)
    # Feature 17 (weight -2) leads by magnitude; by value the heap holds none of the
    # negative features while it has room for positive ones.
    assert by_magnitude.selected_features_.keys[0] == 17
    assert set(by_value.selected_features_.keys[:2].tolist()) == {3, 5}
    assert 17 not in by_value.selected_features_.keys
    weights = by_value.selected_features_.weights[:, 0]
    assert (np.diff(weights) <= 0).all()
    # Predictions still read the negative weights (in the sketch).
    assert by_value.score(X, y) > 0.95
    for copy in (pickle.loads(pickle.dumps(by_value)), average_estimators([by_value])):
        assert copy.heaps_[0].by_value
        np.testing.assert_array_equal(copy.selected_features_.keys,
                                      by_value.selected_features_.keys)
    import os
    import tempfile
    path = os.path.join(tempfile.mkdtemp(), "m.skm")
    save(by_value, path)
    loaded = load(path)
    assert loaded.heaps_[0].by_value and loaded.heap_order == "value"
    np.testing.assert_array_equal(loaded.predict(X), by_value.predict(X))
