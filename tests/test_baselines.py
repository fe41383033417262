"""Streaming baselines of the WM-Sketch paper and the sparse perceptron.

``TruncationClassifier`` (simple truncation, Algorithm 3; probabilistic
truncation, Algorithm 4), ``SpaceSavingClassifier`` (frequent features) and
``SparsePerceptronClassifier`` (Xie et al., Algorithm 1) against pure-Python
replays of their update rules, dense online SGD, the Space-Saving guarantees,
the reservoir property of Algorithm 4, the paper's memory cost model, and the
estimator API (partial_fit, pickle, multi-class, sparse input, bad input).
"""
import math
import pickle
import sys
from collections import Counter
from pathlib import Path

import numpy as np

from sklearn_sketch._base import heap_bytes, largest_heap
import pytest
import scipy.sparse as sp
from sklearn.exceptions import NotFittedError
from sklearn.utils.validation import check_is_fitted

from sklearn_sketch import (
    SpaceSavingClassifier,
    SparsePerceptronClassifier,
    TruncationClassifier,
)

sys.path.insert(0, str(Path(__file__).parent))
from _reference import (  # noqa: E402
    MASK64,
    assert_same_snapshot,
    assert_same_state,
    dense_sgd,
    dloss,
    encode,
    fmix64,
    model_coordinates,
    snapshot,
)

KINDS = ["simple", "probabilistic", "space_saving", "perceptron"]
SGD_KINDS = ["simple", "probabilistic", "space_saving"]
#: The kinds that standardize dense columns ('normalized' steps on weights, not
#: Space-Saving's counts of non-zeros nor the perceptron's fixed steps).
STANDARDIZING = ["simple", "probabilistic"]
CLASSES = np.array([2, 5, 9])


# ------------------------------------------------------------------ helpers
def make_estimator(kind, k=6, **params):
    """An estimator of ``kind`` with ``k`` entries; SGD-only parameters are dropped
    for the perceptron."""
    kw = {"shuffle": False, "random_state": 0, "max_iter": 2}
    kw.update(params)
    if kind == "perceptron":
        for name in ("loss", "learning_rate", "alpha", "power_t"):
            kw.pop(name, None)
        return SparsePerceptronClassifier(k, **kw)
    if kind == "space_saving":
        return SpaceSavingClassifier(n_features_to_select=k, **kw)
    return TruncationClassifier(n_features_to_select=k, truncation=kind, **kw)


def make_data(n_samples=60, n_features=25, n_classes=2, density=0.3, seed=0):
    """Sparse Gaussian X (column 4 never set) and labels from CLASSES."""
    rng = np.random.RandomState(seed)
    X = rng.normal(size=(n_samples, n_features))
    X[rng.rand(n_samples, n_features) > density] = 0.0
    X[:, 4] = 0.0
    index = (X @ rng.normal(size=(n_features, n_classes))).argmax(axis=1)
    index[:n_classes] = np.arange(n_classes)
    return X, CLASSES[:n_classes][index]


def heap_model_weights(kind, heap):
    """Keys and model weights of a fitted heap, from its public API."""
    keys, weights = heap.items()
    # Only the heaps of the two stores that use auxiliary values allocate them.
    assert heap.has_aux == (kind in ("probabilistic", "space_saving"))
    if kind == "probabilistic":
        return keys, weights * heap.aux_items()
    if kind == "space_saving":
        return keys, heap.aux_items()
    return keys, weights


# ----------------------------------------------- pure-Python replay of the rules
def reservoir_exponential(seed, key, clock):
    """E = -log(u): the Exp(1) draw of (seed, key, clock) that defines r = exp(-E)."""
    inner = fmix64(((key & MASK64) * 0x9E3779B97F4A7C15 & MASK64) ^ int(clock))
    h = fmix64((seed & MASK64) ^ inner)
    return -math.log(((h >> 11) + 0.5) * 2.0 ** -53)


class Replay:
    """One sample per step, rows in order; each model a dict key -> entry.

    Entries: simple truncation and perceptron ``w``; probabilistic truncation
    ``[w / E, E]``; Space-Saving ``[count, w]``.
    """

    def __init__(self, kind, n_models, k, *, loss="log_loss", learning_rate="constant",
                 eta0=0.1, power_t=0.5, alpha=0.0, fit_intercept=True, seed=0, margin=1.0,
                 threshold=0.0):
        self.kind, self.k, self.loss = kind, k, loss
        if kind == "perceptron":
            self.loss, learning_rate, alpha = "perceptron", "constant", 0.0
        self.learning_rate, self.eta0, self.power_t = learning_rate, eta0, power_t
        self.alpha, self.fit_intercept, self.seed = alpha, fit_intercept, seed
        self.margin, self.threshold = margin, threshold
        self.models = [dict() for _ in range(n_models)]
        self.b = np.zeros(n_models)
        self.t = 1.0
        self.mistakes = 0
        self.stats = Counter()
        self.max_density = 0

    # -- model
    def weight(self, c, key):
        entry = self.models[c].get(key)
        if entry is None:
            return 0.0
        if self.kind == "probabilistic":
            return entry[0] * entry[1]
        if self.kind == "space_saving":
            return entry[1]
        return entry

    def coef(self, n_features):
        W = np.zeros((len(self.models), n_features))
        for c, model in enumerate(self.models):
            for key in model:
                W[c, key] = self.weight(c, key)
        return W

    def decision(self, X):
        scores = X @ self.coef(X.shape[1]).T + self.b
        return scores.ravel() if scores.shape[1] == 1 else scores

    # -- training
    def fit(self, X, y_enc, n_passes):
        for _ in range(n_passes):
            self.mistakes = 0
            for r in range(X.shape[0]):
                keys = np.flatnonzero(X[r])
                self.step(keys.tolist(), X[r, keys].tolist(), y_enc[r])
        return self

    def step(self, keys, vals, y):
        n_models = len(self.models)
        if self.learning_rate == "constant":
            eta = self.eta0
        else:
            eta = self.eta0 / self.t ** self.power_t
        scores = []
        for c in range(n_models):
            s = self.b[c]
            for key, x in zip(keys, vals):
                s += x * self.weight(c, key)
            scores.append(s)
        if n_models == 1:
            self.mistakes += (scores[0] > 0.0) != (y > 0.0)
        else:
            self.mistakes += int(np.argmax(scores)) != int(y)
        if n_models > 1 and self.loss == "log_loss":
            top = max(scores)
            e = [math.exp(s - top) for s in scores]
            dl = [e[c] / sum(e) - (1.0 if c == y else 0.0) for c in range(n_models)]
        else:
            dl = [dloss(self.loss, scores[c], y if n_models == 1 else (1.0 if c == y else -1.0),
                        self.margin) for c in range(n_models)]
        if self.alpha > 0:
            decay = max(0.0, 1.0 - eta * self.alpha)
            for model in self.models:
                for key, entry in model.items():
                    if self.kind == "simple":
                        model[key] = entry * decay
                    elif self.kind == "probabilistic":
                        entry[0] *= decay
                    else:  # Space-Saving: the weights, not the counts
                        entry[1] *= decay
        for c in range(n_models):
            if self.fit_intercept:
                self.b[c] += -eta * dl[c]
            deltas = [-eta * dl[c] * x for x in vals]
            getattr(self, "_update_" + self.kind)(self.models[c], keys, deltas, dl[c])
            self.max_density = max(self.max_density, len(self.models[c]))
        self.t += 1.0

    def _offer(self, model, key, entry, priority):
        """Insert while there is room, else replace the minimum by (priority, key) if beaten."""
        if len(model) < self.k:
            model[key] = entry
            return
        k_min = min(model, key=lambda q: (priority(model[q]), q))
        if (priority(entry), key) > (priority(model[k_min]), k_min):
            del model[k_min]
            model[key] = entry
            self.stats["evicted"] += 1
        else:
            self.stats["rejected"] += 1

    def _update_simple(self, model, keys, deltas, dl):
        if dl == 0.0:
            return
        new = []
        for key, d in zip(keys, deltas):
            if key in model:
                model[key] += d
            elif d != 0.0:
                new.append((key, d))
        for key, d in new:
            self._offer(model, key, d, abs)

    def _update_probabilistic(self, model, keys, deltas, dl):
        if dl == 0.0:
            return
        new = []
        for key, d in zip(keys, deltas):
            if key in model:
                model[key][0] += d / model[key][1]
            elif d != 0.0:
                new.append((key, d))
        for key, d in new:
            e = reservoir_exponential(self.seed, key, self.t)
            self._offer(model, key, [d / e, e], lambda entry: abs(entry[0]))

    def _update_space_saving(self, model, keys, deltas, dl):
        for key in keys:  # counting happens whatever the loss derivative
            if key in model:
                model[key][0] += 1.0
            elif len(model) < self.k:
                model[key] = [1.0, 0.0]
            else:
                k_min = min(model, key=lambda q: (model[q][0], q))
                count = model.pop(k_min)[0]
                model[key] = [count + 1.0, 0.0]
                self.stats["evicted"] += 1
        for key, d in zip(keys, deltas):
            if key in model:
                model[key][1] += d

    def _update_perceptron(self, model, keys, deltas, dl):
        if dl == 0.0:
            return
        lam = self.threshold
        for key, d in zip(keys, deltas):
            if key in model:
                w = model[key]
            elif len(model) == self.k:
                self.stats["skipped"] += 1
                continue
            else:
                w = 0.0
            w += d
            w = w - lam if w > lam else (w + lam if w < -lam else 0.0)
            if w == 0.0:
                if key in model:
                    self.stats["removed"] += 1
                model.pop(key, None)
            else:
                model[key] = w


def replay_for(est, kind, X, y, k, n_passes):
    """The replay of ``est``'s settings (fit already, for the reservoir seed)."""
    p = est.get_params()
    n_models = 1 if len(np.unique(y)) == 2 else len(np.unique(y))
    common = dict(eta0=p["eta0"], fit_intercept=p["fit_intercept"])
    if kind == "perceptron":
        common.update(margin=p["margin"], threshold=p["threshold"])
    else:
        common.update(loss=p["loss"], learning_rate=p["learning_rate"], power_t=p["power_t"],
                      alpha=p["alpha"], seed=est._state.shuffle_seed)
    return Replay(kind, n_models, k, **common).fit(X, encode(y), n_passes)


def assert_matches_replay(est, ref, kind, X, rtol=1e-12, atol=1e-13):
    assert len(est.heaps_) == len(ref.models)
    for c, (heap, model) in enumerate(zip(est.heaps_, ref.models)):
        keys, weights = heap_model_weights(kind, heap)
        assert sorted(keys.tolist()) == sorted(model), f"heap keys of model {c}"
        expected = np.array([ref.weight(c, key) for key in keys.tolist()])
        np.testing.assert_allclose(weights, expected, rtol=rtol, atol=atol)
        raw_keys, raw_weights = heap.items()
        aux = heap.aux_items() if heap.has_aux else None
        if kind == "probabilistic":
            # E is a pure function of (seed, key, clock): bit-for-bit the same.
            np.testing.assert_array_equal(aux, [model[q][1] for q in raw_keys.tolist()])
            np.testing.assert_allclose(raw_weights, [model[q][0] for q in raw_keys.tolist()],
                                       rtol=rtol, atol=atol)
        if kind == "space_saving":
            np.testing.assert_array_equal(raw_weights, [model[q][0] for q in raw_keys.tolist()])
    np.testing.assert_allclose(est.intercept_, ref.b, rtol=rtol, atol=atol)
    np.testing.assert_allclose(est.coef_.toarray(), ref.coef(X.shape[1]), rtol=rtol, atol=atol)
    np.testing.assert_allclose(est.decision_function(X), ref.decision(X), rtol=1e-10,
                               atol=1e-12)
    assert est.online_error_rate_ == ref.mistakes / X.shape[0]
    assert est.t_ == ref.t


# ============================================= 1. exact replays of the rules
_SGD_SETTINGS = [  # (loss, learning_rate, eta0, alpha)
    ("log_loss", "constant", 0.5, 0.0),
    ("log_loss", "invscaling", 0.8, 0.05),
    ("hinge", "constant", 0.1, 0.0),
    ("hinge", "invscaling", 0.3, 0.05),
]


@pytest.mark.parametrize("kind", SGD_KINDS)
@pytest.mark.parametrize("setting", _SGD_SETTINGS, ids=lambda s: f"{s[0]}-{s[1]}-a{s[3]}")
@pytest.mark.parametrize("n_classes", [2, 3])
def test_sgd_baselines_equal_the_replay(kind, setting, n_classes):
    loss, schedule, eta0, alpha = setting
    X, y = make_data(n_classes=n_classes)
    k = 4
    est = make_estimator(kind, k, loss=loss, learning_rate=schedule, eta0=eta0, alpha=alpha,
                         random_state=7).fit(X, y)
    ref = replay_for(est, kind, X, y, k, n_passes=2)
    assert ref.stats["evicted"] > 0, "test precondition: the budget evicts"
    assert_matches_replay(est, ref, kind, X)
    assert est.predict(X).shape == (X.shape[0],)
    assert set(est.predict(X)) <= set(CLASSES[:n_classes])
    expected_shape = (X.shape[0],) if n_classes == 2 else (X.shape[0], n_classes)
    assert est.decision_function(X).shape == expected_shape


@pytest.mark.parametrize("n_classes", [2, 3])
@pytest.mark.parametrize("fit_intercept", [True, False])
@pytest.mark.parametrize("threshold", [0.05, 0.4])
def test_sparse_perceptron_equals_the_replay(n_classes, fit_intercept, threshold):
    X, y = make_data(n_classes=n_classes)
    k = 5
    est = make_estimator("perceptron", k, eta0=0.7, margin=1.0, threshold=threshold,
                         fit_intercept=fit_intercept, max_iter=3).fit(X, y)
    ref = replay_for(est, "perceptron", X, y, k, n_passes=3)
    assert ref.stats["skipped"] > 0, "test precondition: the density cap binds"
    assert ref.stats["removed"] > 0, "test precondition: soft thresholding removes weights"
    assert ref.max_density == k
    assert_matches_replay(est, ref, "perceptron", X)
    for heap in est.heaps_:
        assert (heap.weights() != 0).all()


def test_reservoir_hash_changes_with_seed_key_and_clock():
    """Sanity of the reference E itself (so the bitwise comparison above is not vacuous)."""
    draws = {reservoir_exponential(s, key, t) for s in (1, 2) for key in (0, 1, 2**40)
             for t in (1, 2, 3)}
    assert len(draws) == 18
    assert all(0 < e < 40 for e in draws)


def _survival_rate(x_big, x_small, n_seeds):
    """How often feature 0 (value x_big) keeps the single slot against feature 1."""
    X = np.array([[x_big, x_small]])
    kept = 0
    for seed in range(n_seeds):
        est = make_estimator("probabilistic", 1, random_state=seed, learning_rate="constant",
                             eta0=0.5, max_iter=1)
        est.partial_fit(X, [5], classes=[2, 5])
        kept += est.heaps_[0].keys().tolist() == [0]
    return kept / n_seeds


def test_probabilistic_truncation_keeps_a_feature_with_probability_growing_with_weight():
    """Algorithm 4: two new weights w0, w1 compete for one slot; the reservoir key
    r**(1/|w|) keeps w0 with probability |w0| / (|w0| + |w1|)."""
    n = 500
    rates = []
    for ratio in (1.0, 2.0, 6.0):
        rate = _survival_rate(ratio, 1.0, n)
        expected = ratio / (ratio + 1.0)
        sigma = math.sqrt(expected * (1 - expected) / n)
        assert abs(rate - expected) < 4.5 * sigma, (ratio, rate, expected)
        rates.append(rate)
    assert rates[0] < rates[1] < rates[2]
    # Simple truncation keeps the larger one every time.
    X = np.array([[1.5, 1.0]])
    for seed in range(3):
        est = make_estimator("simple", 1, random_state=seed, max_iter=1)
        est.partial_fit(X, [5], classes=[2, 5])
        assert est.heaps_[0].keys().tolist() == [0]


def test_probabilistic_truncation_kept_set_depends_on_the_seed():
    """On a real stream the kept set differs from simple truncation's for some seeds
    (the reservoir keys are random), and always holds K entries."""
    X, y = make_data(n_samples=40, n_features=20, seed=1)
    simple = make_estimator("simple", 3, max_iter=1).fit(X, y)
    simple_keys = set(simple.heaps_[0].keys().tolist())
    differs = 0
    for seed in range(20):
        est = make_estimator("probabilistic", 3, max_iter=1, random_state=seed).fit(X, y)
        keys = est.heaps_[0].keys().tolist()
        assert len(keys) == 3
        differs += set(keys) != simple_keys
    assert 0 < differs


def test_ties_are_broken_by_the_larger_key():
    """Equal |w| (or equal counts): the entry of larger key orders above."""
    X = np.array([[1.0, 1.0, 1.0]])
    for k, kept in ((1, [2]), (2, [1, 2])):
        est = make_estimator("simple", k, loss="hinge", learning_rate="constant", alpha=0.0,
                             max_iter=1).fit(np.vstack([X, -X]), [5, 2])
        assert sorted(est.heaps_[0].keys().tolist()) == kept
    # Space-Saving: keys 0 and 1 counted once each; key 2 replaces the minimum (0, 1) = key 0.
    X = np.array([[1.0, 1.0, 0.0], [0.0, 0.0, 1.0]])
    est = make_estimator("space_saving", 2, max_iter=1).fit(X, [2, 5])
    keys, counts = est.heaps_[0].items()
    assert dict(zip(keys.tolist(), counts.tolist())) == {1: 1.0, 2: 2.0}


# ======================================= 2. room for every feature: dense SGD
@pytest.mark.parametrize("kind", SGD_KINDS)
@pytest.mark.parametrize("setting", [("log_loss", "invscaling", 0.5, 0.01, 2),
                                     ("hinge", "constant", 0.1, 0.0, 2),
                                     ("log_loss", "constant", 0.3, 0.0, 3)],
                         ids=["log-inv-l2", "hinge-const", "softmax"])
@pytest.mark.parametrize("extra_room", [0, 5])
def test_room_for_every_feature_equals_dense_sgd(kind, setting, extra_room):
    loss, schedule, eta0, alpha, n_classes = setting
    X, y = make_data(n_samples=50, n_features=15, n_classes=n_classes, density=0.4, seed=2)
    n_passes = 2
    est = make_estimator(kind, X.shape[1] + extra_room, loss=loss, learning_rate=schedule,
                         eta0=eta0, alpha=alpha, max_iter=n_passes, random_state=3).fit(X, y)
    n_models = 1 if n_classes == 2 else n_classes
    W, b, _, _ = dense_sgd(X, encode(y), n_models=n_models, loss=loss, learning_rate=schedule,
                           eta0=eta0, alpha=alpha, max_iter=n_passes)
    np.testing.assert_allclose(est.coef_.toarray(), W, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(est.intercept_, b, rtol=1e-12, atol=1e-14)
    scores = X @ W.T + b
    np.testing.assert_allclose(est.decision_function(X),
                               scores.ravel() if n_models == 1 else scores, rtol=1e-10,
                               atol=1e-12)
    if kind == "space_saving":
        frequency = n_passes * (X != 0).sum(axis=0)
        for heap in est.heaps_:
            keys, counts = heap.items()
            np.testing.assert_array_equal(counts, frequency[keys])
            np.testing.assert_array_equal(np.sort(keys), np.flatnonzero(frequency))


# ================================================ 3. Space-Saving guarantees
def _frequency_stream(n_samples=400, n_features=60, seed=0):
    rng = np.random.RandomState(seed)
    present = rng.rand(n_samples, n_features) < 0.04
    present[:, :5] = rng.rand(n_samples, 5) < 0.5  # five frequent features
    X = present * rng.uniform(0.5, 1.5, size=present.shape)
    y = (X[:, 0] + X[:, 7] > X[:, 1]).astype(int)
    return X, y


@pytest.mark.parametrize("shuffle,random_state,n_passes",
                         [(False, 0, 1), (True, 0, 1), (True, 1, 1), (True, 2, 3)])
def test_space_saving_guarantees(shuffle, random_state, n_passes):
    X, y = _frequency_stream(seed=random_state)
    k = 12
    est = make_estimator("space_saving", k, shuffle=shuffle, random_state=random_state,
                         max_iter=n_passes).fit(X, y)
    frequency = n_passes * (X != 0).sum(axis=0)
    total = int(frequency.sum())
    heavy = np.flatnonzero(frequency > total / k)
    assert heavy.size >= 3, "test precondition: some features exceed N / K"
    assert (frequency > 0).sum() > k, "test precondition: more features than counters"
    keys, counts = est.heaps_[0].items()
    assert len(keys) == k
    assert set(heavy.tolist()) <= set(keys.tolist())
    assert counts.sum() == total
    assert (counts >= frequency[keys]).all()
    # Overestimation is at most the minimum count, itself at most N / K.
    assert (counts - frequency[keys] <= counts.min()).all()
    assert counts.min() <= total / k


def test_space_saving_counts_every_occurrence_even_without_loss():
    """Counting does not depend on the gradient: samples the hinge loss ignores
    (margin > 1) are still counted, and their weights stay put."""
    X = np.array([[1.0, 0.0, 2.0], [0.0, 3.0, 1.0], [1.0, 1.0, 0.0]])
    y = np.array([1, 0, 1])
    est = make_estimator("space_saving", 3, loss="hinge", learning_rate="constant",
                         eta0=1.0, alpha=0.0, max_iter=1).fit(X, y)
    before = dict(zip(*heap_model_weights("space_saving", est.heaps_[0])))
    scores = est.decision_function(X)
    easy = (np.where(y == 1, 1, -1) * scores) > 1.0
    assert easy.any(), "test precondition: a sample beyond the hinge margin"
    X_easy = np.repeat(X[easy][:1], 4, axis=0)
    est.partial_fit(X_easy, np.repeat(y[easy][:1], 4))
    keys, counts = est.heaps_[0].items()
    expected = (X != 0).sum(axis=0) + (X_easy != 0).sum(axis=0)
    np.testing.assert_array_equal(counts, expected[keys])
    after = dict(zip(*heap_model_weights("space_saving", est.heaps_[0])))
    assert after == before


# ============================================== 4. sparse perceptron
@pytest.mark.parametrize("batch_size,chunk", [(1, 1), (3, 5)])
def test_sparse_perceptron_density_never_exceeds_the_cap(batch_size, chunk):
    X, y = make_data(n_samples=120, n_features=40, density=0.3, seed=4)
    cap = 5
    est = make_estimator("perceptron", cap, threshold=0.05, batch_size=batch_size)
    reached = False
    for start in range(0, len(y), chunk):
        est.partial_fit(X[start:start + chunk], y[start:start + chunk], classes=CLASSES[:2])
        heap = est.heaps_[0]
        assert len(heap) <= cap
        assert est.coef_.nnz <= cap
        assert (heap.weights() != 0).all()
        reached |= len(heap) == cap
    assert reached, "test precondition: the cap is reached"


@pytest.mark.parametrize("margin", [0.0, 1.0, 2.5])
@pytest.mark.parametrize("n_classes", [2, 3])
def test_sparse_perceptron_without_threshold_is_the_margin_perceptron(margin, n_classes):
    X, y = make_data(n_samples=50, n_features=15, n_classes=n_classes, seed=5)
    est = make_estimator("perceptron", 10**6, threshold=0.0, eta0=0.3, margin=margin,
                         max_iter=3).fit(X, y)
    n_models = 1 if n_classes == 2 else n_classes
    W, b, _, _ = dense_sgd(X, encode(y), n_models=n_models, loss="perceptron",
                           learning_rate="constant", eta0=0.3, max_iter=3, margin=margin)
    np.testing.assert_allclose(est.coef_.toarray(), W, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(est.intercept_, b, rtol=1e-12, atol=1e-14)


def test_sparse_perceptron_samples_beyond_the_margin_change_nothing():
    X, y = make_data(n_samples=80, n_features=20, seed=6)
    est = make_estimator("perceptron", 8, threshold=0.02, margin=0.5, max_iter=4).fit(X, y)
    z = encode(y) * est.decision_function(X)
    beyond, within = np.flatnonzero(z > 0.5), np.flatnonzero(z <= 0.5)
    assert beyond.size and within.size, "test precondition: both kinds of samples"
    for i in beyond[:10]:
        before = snapshot(est)
        est.partial_fit(X[i:i + 1], y[i:i + 1])
        after = snapshot(est)
        assert after["t_"] == before["t_"] + 1
        # The counters move (the online error rate is this call's); the model does not.
        after["t_"], after["online_error_rate_"] = before["t_"], before["online_error_rate_"]
        assert_same_snapshot(after, before)
    i = within[0]
    before = est.intercept_.copy()
    est.partial_fit(X[i:i + 1], y[i:i + 1])
    assert est.intercept_[0] == before[0] + est.eta0 * encode(y)[i]


def test_sparse_perceptron_margin_boundary_is_inclusive():
    """The empty model scores 0: margin 0 updates (z <= tau), a negative margin never does."""
    X, y = make_data(n_samples=30, n_features=10, seed=7)
    updates = make_estimator("perceptron", 5, margin=0.0, threshold=0.0, max_iter=1).fit(X, y)
    assert updates.intercept_[0] != 0.0 and updates.coef_.nnz > 0
    never = make_estimator("perceptron", 5, margin=-0.5, threshold=0.0, max_iter=1).fit(X, y)
    assert never.intercept_[0] == 0.0 and never.coef_.nnz == 0 and len(never.heaps_[0]) == 0


# ============================================== 5. memory budget
_BUDGETS = {16: 16, 100: 100, 1000: 1000, "1KB": 1024, "3KB": 3072, "2 KiB": 2048}
_BYTES_PER_ENTRY = {"simple": 8, "probabilistic": 12, "space_saving": 12}


def _budgeted(kind, budget, **params):
    if kind == "space_saving":
        return SpaceSavingClassifier(budget, random_state=0, max_iter=1, **params)
    return TruncationClassifier(budget, truncation=kind, random_state=0, max_iter=1, **params)


@pytest.mark.parametrize("kind", SGD_KINDS)
@pytest.mark.parametrize("budget", list(_BUDGETS), ids=str)
def test_memory_budget_resolves_to_the_cost_model_capacity(kind, budget):
    X, y = make_data(n_samples=20, n_features=30)
    if largest_heap(_BUDGETS[budget] - 16, kind != "simple") == 0:
        with pytest.raises(ValueError, match="memory_budget"):
            _budgeted(kind, budget).fit(X, y)
        return
    est = _budgeted(kind, budget).fit(X, y)
    # Real bytes: the largest heap that fits beside the intercept and its copy.
    aux = kind in ("probabilistic", "space_saving")
    assert est.heaps_[0].capacity == largest_heap(_BUDGETS[budget] - 16, aux)
    assert est.memory_bytes_ <= _BUDGETS[budget]
    assert len(est.heaps_[0]) <= est.heaps_[0].capacity


@pytest.mark.parametrize("kind", SGD_KINDS)
def test_n_features_to_select_overrides_the_budget(kind):
    X, y = make_data(n_samples=20, n_features=30)
    for budget in ("1KB", 16, None):
        est = _budgeted(kind, budget, n_features_to_select=7).fit(X, y)
        assert est.heaps_[0].capacity == 7


@pytest.mark.parametrize("kind", SGD_KINDS)
def test_too_small_or_missing_budget_raises(kind):
    X, y = make_data(n_samples=20, n_features=30)
    per_entry = heap_bytes(1, kind in ("probabilistic", "space_saving")) + 16
    # Exactly one entry (and the intercepts) fits at per_entry bytes, none below.
    assert _budgeted(kind, f"{per_entry}B").fit(X, y).heaps_[0].capacity == 1
    with pytest.raises(ValueError):
        _budgeted(kind, f"{per_entry - 1}B").fit(X, y)
    with pytest.raises(ValueError):
        _budgeted(kind, 8).fit(X, y)
    with pytest.raises(ValueError):
        _budgeted(kind, None).fit(X, y)
    with pytest.raises(ValueError):
        _budgeted(kind, "lots").fit(X, y)


@pytest.mark.parametrize("kind", KINDS)
def test_memory_bytes_do_not_depend_on_data_size(kind):
    small = make_data(n_samples=20, n_features=10, seed=1)
    large = make_data(n_samples=300, n_features=2000, density=0.05, seed=2)
    sizes = set()
    for X, y in (small, large):
        for fmt in (np.asarray, sp.csr_matrix):
            est = make_estimator(kind, 16, max_iter=1).fit(fmt(X), y)
            # Standardized dense columns add their mean and scale, 16 bytes a column
            # (not the large data's: 2,000 columns, mostly zeros).
            standardized = hasattr(est, "feature_scale_")
            assert standardized == (fmt is np.asarray and len(y) >= 30
                                    and X.shape[1] <= 1000 and kind in STANDARDIZING)
            sizes.add(est.memory_bytes_ - 16 * X.shape[1] * standardized)
    assert len(sizes) == 1
    # ...but they do grow with the capacity.
    X, y = small
    bigger = make_estimator(kind, 64, max_iter=1).fit(X, y)
    assert bigger.memory_bytes_ > sizes.pop()


# ============================================== 6. API equivalences
@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("shuffle", [False, True])
@pytest.mark.parametrize("n_classes", [2, 3])
def test_partial_fit_passes_equal_fit(kind, shuffle, n_classes):
    X, y = make_data(n_classes=n_classes, seed=8)
    n = 3
    fitted = make_estimator(kind, 5, shuffle=shuffle, max_iter=n, random_state=11).fit(X, y)
    partial = make_estimator(kind, 5, shuffle=shuffle, random_state=11)
    for _ in range(n):
        partial.partial_fit(X, y, classes=np.unique(y))
    assert_same_snapshot(snapshot(partial), snapshot(fitted))
    assert partial.online_error_rate_ == fitted.online_error_rate_
    if shuffle and kind != "perceptron":
        # The order matters here, so the shuffled fit is not the in-order one.
        in_order = make_estimator(kind, 5, shuffle=False, max_iter=n, random_state=11).fit(X, y)
        assert not np.array_equal(in_order.intercept_, fitted.intercept_)


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("n_classes", [2, 3])
def test_pickle_round_trip_and_continued_training(kind, n_classes):
    X, y = make_data(n_classes=n_classes, seed=9)
    est = make_estimator(kind, 5, alpha=0.01, shuffle=True).fit(X, y)
    clone = pickle.loads(pickle.dumps(est))
    assert_same_snapshot(snapshot(clone), snapshot(est))
    np.testing.assert_array_equal(clone.decision_function(X), est.decision_function(X))
    np.testing.assert_array_equal(clone.predict(X), est.predict(X))
    X2, y2 = make_data(n_classes=n_classes, seed=10)
    est.partial_fit(X2, y2)
    clone.partial_fit(X2, y2)
    assert_same_snapshot(snapshot(clone), snapshot(est))
    np.testing.assert_array_equal(clone.decision_function(X2), est.decision_function(X2))
    if kind in ("probabilistic", "space_saving"):
        assert any(np.any(h[2] != 0) for h in snapshot(est)["heaps"])


@pytest.mark.parametrize("kind,loss", [(k, loss) for k in SGD_KINDS
                                       for loss in ("log_loss", "hinge")]
                         + [("perceptron", None)])
def test_multiclass_predictions(kind, loss):
    X, y = make_data(n_samples=90, n_features=12, n_classes=3, density=0.6, seed=12)
    est = make_estimator(kind, 12, loss=loss, max_iter=5).fit(X, y)
    scores = est.decision_function(X)
    assert scores.shape == (len(y), 3)
    assert len(est.heaps_) == 3 and est.coef_.shape == (3, X.shape[1])
    # coef_ weighs the columns the model reads: standardized dense columns.
    X_model = model_coordinates(X, X, est.learning_rate) if kind in STANDARDIZING else X
    np.testing.assert_allclose(scores, X_model @ est.coef_.toarray().T + est.intercept_,
                               rtol=1e-12, atol=1e-12)
    pred = est.predict(X)
    assert pred.shape == (len(y),)
    np.testing.assert_array_equal(pred, est.classes_[scores.argmax(axis=1)])
    np.testing.assert_array_equal(est.classes_, CLASSES)
    assert est.score(X, y) > 1 / 3
    if loss == "log_loss":  # softmax
        proba = est.predict_proba(X)
        assert proba.shape == (len(y), 3)
        np.testing.assert_allclose(proba.sum(axis=1), 1.0)


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("batch_size", [1, 4])
@pytest.mark.usefixtures("sparse_as_given")
def test_dense_and_csr_give_the_same_model(kind, batch_size):
    X, y = make_data(seed=13)
    dense = make_estimator(kind, 5, batch_size=batch_size, alpha=0.01).fit(X, y)
    # Dense columns train standardized under 'normalized' steps; sparse input as given.
    raw = X
    if kind in STANDARDIZING:
        X = model_coordinates(X, X, dense.learning_rate)
    csr = sp.csr_matrix(X)
    # Explicit zeros stored, and unsorted indices: neither is a feature nor an order.
    rows, cols = np.nonzero(np.ones_like(X))
    with_zeros = sp.csr_matrix((X[rows, cols], (rows, cols)), shape=X.shape)
    assert with_zeros.nnz == X.size
    unsorted = csr.copy()
    for r in range(unsorted.shape[0]):
        lo, hi = unsorted.indptr[r], unsorted.indptr[r + 1]
        unsorted.indices[lo:hi] = unsorted.indices[lo:hi][::-1]
        unsorted.data[lo:hi] = unsorted.data[lo:hi][::-1]
    unsorted.has_sorted_indices = False
    for variant in (csr, with_zeros):
        other = make_estimator(kind, 5, batch_size=batch_size, alpha=0.01).fit(variant, y)
        assert_same_state(other, dense, standardization=False)
        np.testing.assert_array_equal(other.decision_function(variant),
                                      dense.decision_function(raw))
    # A row is read in its stored order (the heap sees its features in that
    # order), so reversed rows train as reversed rows, stored zeros or not.
    unsorted_with_zeros = with_zeros.copy()
    for r in range(unsorted_with_zeros.shape[0]):
        lo, hi = unsorted_with_zeros.indptr[r], unsorted_with_zeros.indptr[r + 1]
        unsorted_with_zeros.indices[lo:hi] = unsorted_with_zeros.indices[lo:hi][::-1]
        unsorted_with_zeros.data[lo:hi] = unsorted_with_zeros.data[lo:hi][::-1]
    unsorted_with_zeros.has_sorted_indices = False
    reversed_model = make_estimator(kind, 5, batch_size=batch_size, alpha=0.01).fit(unsorted, y)
    other = make_estimator(kind, 5, batch_size=batch_size, alpha=0.01).fit(
        unsorted_with_zeros, y)
    assert_same_snapshot(snapshot(other), snapshot(reversed_model))
    np.testing.assert_array_equal(other.decision_function(unsorted_with_zeros),
                                  reversed_model.decision_function(unsorted))
    np.testing.assert_allclose(reversed_model.decision_function(unsorted),
                               reversed_model.decision_function(X), rtol=1e-12, atol=1e-15)
    if kind == "space_saving":
        # The never-set column 4 is not counted even though the matrix stores it.
        assert 4 not in dense.heaps_[0]


# ============================================== 7. bad input
def _fitted(kind, n_classes=3):
    X, y = make_data(n_classes=n_classes, seed=14)
    return make_estimator(kind, 5, alpha=0.01).fit(X, y), X, y


@pytest.mark.parametrize("kind", KINDS)
def test_non_finite_and_wrong_shape_input_raise_and_keep_the_model(kind):
    est, X, y = _fitted(kind)
    before = snapshot(est)
    X_nan = X.copy()
    X_nan[3, 2] = np.nan
    for bad in (X_nan, sp.csr_matrix(X_nan)):
        for call in (lambda: est.partial_fit(bad, y), lambda: est.predict(bad),
                     lambda: est.set_params(warm_start=True).fit(bad, y)):
            with pytest.raises(ValueError, match="NaN"):
                call()
            assert_same_snapshot(snapshot(est), before)
    est.set_params(warm_start=False)
    for bad in (X[:, :-1], np.hstack([X, X[:, :1]]), sp.csr_matrix(X[:, :-1])):
        with pytest.raises(ValueError, match="features"):
            est.predict(bad)
        with pytest.raises(ValueError, match="features"):
            est.partial_fit(bad, y)
        assert_same_snapshot(snapshot(est), before)


@pytest.mark.parametrize("kind", KINDS)
def test_class_errors_raise_and_keep_the_model(kind):
    est, X, y = _fitted(kind)
    before = snapshot(est)
    y_unseen = y.copy()
    y_unseen[0] = 99
    with pytest.raises(ValueError, match="classes"):
        est.partial_fit(X, y_unseen)
    assert_same_snapshot(snapshot(est), before)
    with pytest.raises(ValueError, match="class"):
        est.fit(X, np.full(len(y), 5))
    assert_same_snapshot(snapshot(est), before)
    fresh = make_estimator(kind, 5)
    with pytest.raises(ValueError, match="class"):
        fresh.fit(X, np.full(len(y), 5))
    with pytest.raises(ValueError, match="classes"):
        fresh.partial_fit(X, y)
    with pytest.raises(NotFittedError):
        check_is_fitted(fresh)


def _explode(est, kind):
    params = {"eta0": 1e300}
    if kind != "perceptron":
        params["learning_rate"] = "constant"
    return est.set_params(**params)


@pytest.mark.parametrize("kind", KINDS)
def test_divergence_raises_and_keeps_the_model(kind):
    X_big, y_big = make_data(n_samples=30, n_features=5, n_classes=3, density=1.0, seed=15)
    X_big = X_big * 1e10
    fresh = _explode(make_estimator(kind, 5), kind)
    with pytest.raises(ValueError, match="diverged"):
        fresh.fit(X_big, y_big)
    with pytest.raises(NotFittedError):
        check_is_fitted(fresh)
    X, y = make_data(n_features=5, n_classes=3, seed=16)
    est = make_estimator(kind, 3, alpha=0.01).fit(X, y)
    before = snapshot(est)
    predictions = est.decision_function(X)
    _explode(est, kind)
    with pytest.raises(ValueError, match="diverged"):
        est.partial_fit(X_big, y_big)
    assert_same_snapshot(snapshot(est), before)
    with pytest.raises(ValueError, match="diverged"):
        est.set_params(warm_start=True).fit(X_big, y_big)
    assert_same_snapshot(snapshot(est), before)
    np.testing.assert_array_equal(est.decision_function(X), predictions)


@pytest.mark.parametrize("kind", KINDS)
def test_divergence_in_the_last_update_is_detected(kind):
    """A weight that overflows in the very last update of a pass is never read by a
    later score, so the end-of-pass check must catch it (or the model stay finite)."""
    X = np.array([[1e10, 2e10, 0.0]])
    est = _explode(make_estimator(kind, 5, max_iter=1), kind)
    try:
        est.partial_fit(X, [5], classes=[2, 5])
    except ValueError as exc:
        assert "diverged" in str(exc)
        with pytest.raises(NotFittedError):
            check_is_fitted(est)
        return
    assert np.isfinite(est.coef_.toarray()).all(), "the model holds inf/nan weights"
    assert np.isfinite(est.decision_function(X)).all()


@pytest.mark.parametrize("kind", KINDS)
def test_opposite_overflowing_steps_in_a_batch_are_divergence(kind):
    """Two samples of one batch step the same feature by +inf and -inf; their sum is
    NaN, which must be reported as divergence, not thresholded away to a zero weight."""
    X = np.array([[1e300, 0.0], [1e300, 0.0]])
    est = _explode(make_estimator(kind, 5, batch_size=2, max_iter=1, fit_intercept=False),
                   kind)
    with pytest.raises(ValueError, match="diverged"):
        est.fit(X, [2, 5])
    with pytest.raises(NotFittedError):
        check_is_fitted(est)
