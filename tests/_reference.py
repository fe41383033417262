"""Helpers shared by the estimator tests: small cases of every estimator, one snapshot.

``snapshot(est)`` copies every value that training changes or that a user reads
after it (intercepts, counters, sketch tables, seeds and scales, heap entries
with their auxiliary values, the coefficients and selection of a selector, the
classes, BEAR's curvature pairs). ``assert_same_snapshot`` compares two of them
exactly, so the same helper serves "a failed call changed nothing" and "two ways
of training give the same model". ``assert_refuses_non_finite_X`` and
``assert_refuses_wrong_n_features`` are the bad-input checks every estimator
family shares (``assert_refuses_schedule_switch``: a model asked to step by a
feature table it never kept). ``dense_sgd`` is the dense NumPy reference of the SGD update
every sketched estimator must equal when nothing collides (``dloss`` and
``encode`` as the kernel sees losses and labels); BEAR's L-BFGS reference is
``_bear_reference.py``. ``fmix64`` and ``reference_cross`` replay the
package's 64-bit hashing in Python integers.
"""
import math

import numpy as np

import sklearn_sketch as sk

#: Every estimator family (one case per truncation, and BEAR's 'adaptive' table), small
#: enough to train in milliseconds.
CASES = {
    "MissionClassifier": dict(n_features_to_select=6, sketch_width=64),
    "MissionRegressor": dict(n_features_to_select=6, sketch_width=64),
    "BearClassifier": dict(n_features_to_select=6, sketch_width=64, batch_size=8),
    "BearClassifier-adaptive": dict(n_features_to_select=6, sketch_width=64, batch_size=8,
                                    learning_rate="adaptive"),
    "BearRegressor": dict(n_features_to_select=6, sketch_width=64, batch_size=8),
    "WMSketchClassifier": dict(memory_budget="8KB"),
    "AWMSketchClassifier": dict(memory_budget="8KB"),
    "FeatureHashingClassifier": dict(sketch_width=64),
    "IHTClassifier": dict(n_features_to_select=6),
    "IHTRegressor": dict(n_features_to_select=6),
    "TruncationClassifier-simple": dict(memory_budget="2KB", truncation="simple"),
    "TruncationClassifier-probabilistic": dict(memory_budget="2KB",
                                               truncation="probabilistic"),
    "SpaceSavingClassifier": dict(memory_budget="2KB"),
    "SparsePerceptronClassifier": dict(n_features_to_select=6),
}


def make(case, **extra):
    """The estimator of ``CASES[case]`` (``extra`` overrides its parameters), seeded."""
    return getattr(sk, case.split("-")[0])(random_state=0, **{**CASES[case], **extra})


def data(case, n_classes=3, n=240, seed=0):
    """Sparse-ish dense data for ``case``: string labels, or targets for a regressor."""
    rng = np.random.RandomState(seed)
    X = rng.normal(size=(n, 30))
    X[rng.rand(*X.shape) < 0.6] = 0
    if "Regressor" in case:
        return X, X[:, 2] - 2 * X[:, 7]
    labels = np.array(["ant", "bee", "cat"][:n_classes])
    return X, labels[(X[:, 2] > 0).astype(int) + (n_classes > 2) * (X[:, 7] > 0)]

#: Scalars compared with ``==`` when the estimator has them.
_SCALARS = ("t_", "n_features_in_", "memory_bytes_", "online_error_rate_")
#: Arrays compared element for element when the estimator has them.
_ARRAYS = ("intercept_", "coef_", "selected", "classes_")


def _heap_entries(heap):
    keys, weights = heap.items()
    return keys.copy(), weights.copy(), heap.aux_items() if heap.has_aux else None


def pair_tuples(history):
    """BEAR's curvature pairs as ``(keys, s, r, valid)`` tuples, oldest first."""
    return [(p["keys"], p["s"], p["r"], p["valid"]) for p in history.pairs()]


def assert_same_pairs(pa, pb):
    """Two lists of :func:`pair_tuples` are equal, bit for bit."""
    assert len(pa) == len(pb), "number of pairs"
    for i, (a, b) in enumerate(zip(pa, pb)):
        for name, x, y in zip(("keys", "s", "r", "valid"), a, b):
            np.testing.assert_array_equal(x, y, err_msg=f"pair {i}: {name}")


def snapshot(est):
    """Everything training changes in a fitted estimator, copied."""
    state = {key: getattr(est, key) for key in _SCALARS if hasattr(est, key)}
    state["intercept_"] = np.array(est.intercept_, copy=True)
    state["tables"] = [np.array(s.table, copy=True) for s in est.sketches_]
    state["scales"] = [s.scale_factor for s in est.sketches_]
    state["seeds"] = [s.seeds.copy() for s in est.sketches_]
    state["heaps"] = [_heap_entries(h) for h in est.heaps_]
    if est.heaps_:
        if est.n_features_in_ < 2**31:  # a model of 64-bit keys has no dense coef_
            state["coef_"] = est.coef_.toarray()
        state["selected"] = est.selected_features_.keys.copy()
    if hasattr(est, "classes_"):
        state["classes_"] = est.classes_.copy()
    if hasattr(est, "feature_scale_"):
        state["standardization"] = (est.feature_mean_.copy(), est.feature_scale_.copy())
    if hasattr(est, "key_scales_"):
        state["standardization"] = (est.scaled_keys_.copy(), est.key_scales_.copy())
    history = getattr(est, "history_", None)
    if history is not None:
        state["history"] = (history.history_size, history.n_models, history.capacity,
                            history.n_pairs, history.n_batches, history.memory_bytes)
        state["pairs"] = pair_tuples(history)
    return state


def assert_same_snapshot(sa, sb):
    """Two snapshots hold the same values, bit for bit."""
    assert sa.keys() == sb.keys()
    for key in (*_SCALARS, "scales", "history"):
        if key in sa:
            assert sa[key] == sb[key], key
    for key in _ARRAYS:
        if key in sa:
            np.testing.assert_array_equal(sa[key], sb[key], err_msg=key)
    for key in ("tables", "seeds"):
        assert len(sa[key]) == len(sb[key]), key
        for a, b in zip(sa[key], sb[key]):
            np.testing.assert_array_equal(a, b, err_msg=key)
    assert len(sa["heaps"]) == len(sb["heaps"]), "number of heaps"
    for ha, hb in zip(sa["heaps"], sb["heaps"]):
        for xa, xb, what in zip(ha, hb, ("heap keys", "heap weights", "heap aux")):
            np.testing.assert_array_equal(xa, xb, err_msg=what)
    if "pairs" in sa:
        assert_same_pairs(sa["pairs"], sb["pairs"])
    if "standardization" in sa:
        for xa, xb in zip(sa["standardization"], sb["standardization"]):
            np.testing.assert_array_equal(xa, xb, err_msg="standardization")


def _without_standardization(state):
    """A snapshot less the columns' standardization and its bytes."""
    state = dict(state)
    mean, scale = state.pop("standardization", (np.zeros(0), np.zeros(0)))
    if "memory_bytes_" in state:
        state["memory_bytes_"] -= mean.nbytes + scale.nbytes
    return state


def assert_same_state(a, b, *, standardization=True):
    """Two fitted estimators hold the same model (with ``standardization=False``,
    whatever either holds to standardize or scale its columns: a model of dense ``X``
    against one of its standardized columns given as a sparse matrix)."""
    sa, sb = snapshot(a), snapshot(b)
    if not standardization:
        sa, sb = _without_standardization(sa), _without_standardization(sb)
    assert_same_snapshot(sa, sb)


def assert_refuses_non_finite_X(est, X, y, bad, sparse):
    """fit, partial_fit, predict and a warm-started fit refuse an ``X`` holding ``bad``
    (NaN or an infinity), naming it, and leave the fitted ``est`` exactly as it was."""
    import pytest
    import scipy.sparse as sp

    before = snapshot(est)
    X_bad = np.array(X, dtype=float)
    X_bad[3, 2] = bad
    if sparse:
        X_bad = sp.csr_matrix(X_bad)
    calls = (lambda: est.fit(X_bad, y), lambda: est.partial_fit(X_bad, y),
             lambda: est.predict(X_bad))
    for call in calls:
        with pytest.raises(ValueError, match="NaN|infinity"):
            call()
        assert_same_snapshot(snapshot(est), before)
    est.set_params(warm_start=True)
    with pytest.raises(ValueError, match="NaN|infinity"):
        est.fit(X_bad, y)
    assert_same_snapshot(snapshot(est), before)


def assert_refuses_wrong_n_features(est, X, y):
    """Every call that reads ``X`` refuses one column too few or too many, naming the
    features, and leaves the fitted ``est`` exactly as it was."""
    import pytest
    import scipy.sparse as sp

    before = snapshot(est)
    calls = [est.predict, lambda X_bad: est.partial_fit(X_bad, y),
             lambda X_bad: est.set_params(warm_start=True).fit(X_bad, y)]
    calls += [getattr(est, name) for name in ("decision_function", "transform")
              if hasattr(est, name)]
    for X_bad in (X[:, :-1], np.hstack([X, X[:, :1]]), sp.csr_matrix(X[:, :-1])):
        for call in calls:
            with pytest.raises(ValueError, match="features"):
                call(X_bad)
            est.set_params(warm_start=False)
            assert_same_snapshot(snapshot(est), before)


def assert_refuses_class_errors(est, X, y):
    """An unseen label, a ``classes`` that disagrees, a single class and a warm-started
    fit on a new label are refused, naming the classes, and ``est`` is unchanged."""
    import pytest

    before = snapshot(est)
    y_unseen = y.copy()
    y_unseen[0] = 99
    calls = [lambda: est.partial_fit(X, y_unseen),
             lambda: est.partial_fit(X, y, classes=np.array([3, 5, 7, 9])),
             lambda: est.fit(X, np.full(len(y), 5)),
             lambda: est.set_params(warm_start=True).fit(X, np.where(y == y[0], 99, y))]
    for call in calls:
        with pytest.raises(ValueError, match="class"):
            call()
        est.set_params(warm_start=False)
        assert_same_snapshot(snapshot(est), before)


def assert_refuses_schedule_switch(est, X, y, schedule,
                                   match=r"fit it anew \(warm_start=False\)"):
    """A warm-started ``est`` switched to a ``learning_rate`` whose feature table it
    lacks refuses ``partial_fit`` and ``fit`` with the way out, and is unchanged."""
    import pytest

    before, scores = snapshot(est), est.decision_function(X)
    est.set_params(learning_rate=schedule)
    for train in (est.partial_fit, est.fit):
        with pytest.raises(ValueError, match=match):
            train(X, y)
    assert_same_snapshot(snapshot(est), before)
    np.testing.assert_array_equal(est.decision_function(X), scores)


# ------------------------------------------------------------ dense SGD reference
def encode(y, classes=None):
    """Labels as the kernel sees them: -1/+1 for two classes, else the class index."""
    classes = np.unique(y) if classes is None else classes
    if len(classes) == 2:
        return np.where(y == classes[1], 1.0, -1.0)
    return np.searchsorted(classes, y).astype(np.float64)


def dloss(loss, p, y, margin=1.0, stats=None):
    """Derivative of a loss in the score ``p`` (``y`` in {-1, +1}, or the target
    for 'squared_error'), clipped as the kernel clips it. ``stats`` counts the
    log-loss branches taken for large margins."""
    if loss == "squared_error":
        return min(1e12, max(-1e12, p - y))
    z = p * y
    if loss == "perceptron":
        return -y if z <= margin else 0.0
    if loss == "log_loss":
        if z > 18.0:
            if stats is not None:
                stats["z>18"] = stats.get("z>18", 0) + 1
            return -y * math.exp(-z)
        if z < -18.0:
            if stats is not None:
                stats["z<-18"] = stats.get("z<-18", 0) + 1
            return -y
        return -y / (math.exp(z) + 1.0)
    if loss == "hinge":
        return -y if z <= 1.0 else 0.0
    assert loss == "modified_huber", loss
    if z >= 1.0:
        return 0.0
    if z >= -1.0:
        return -2.0 * (1.0 - z) * y
    return -4.0 * y


def loss_derivatives(loss, scores, target, n_models, weight=1.0, margin=1.0, stats=None):
    """Per-model derivatives: softmax for multi-class log loss, else one-vs-rest."""
    if n_models > 1 and loss in ("log_loss", "softmax"):
        e = np.exp(scores - scores.max())
        return weight * (e / e.sum() - (np.arange(n_models) == target))
    if n_models == 1:
        return np.array([weight * dloss(loss, scores[0], target, margin, stats)])
    return np.array([weight * dloss(loss, scores[c], 1.0 if target == c else -1.0, margin,
                                    stats) for c in range(n_models)])


def step_size(learning_rate, eta0, power_t, t, alpha=0.0):
    """The schedule's step at clock ``t`` (scikit-learn's heuristic start for 'optimal')."""
    if learning_rate in ("constant", "normalized", "frequency", "adaptive"):
        return eta0
    if learning_rate == "optimal":
        typical_weight = np.sqrt(1.0 / np.sqrt(alpha))
        optimal_init = 1.0 / (typical_weight * alpha)
        return 1.0 / (alpha * (optimal_init + t - 1.0))
    assert learning_rate == "invscaling", learning_rate
    return eta0 / t**power_t


def is_mistake(scores, target):
    """Whether the scores predict another label than ``target`` (first maximum, as the kernel)."""
    if scores.shape[0] == 1:
        return (scores[0] > 0.0) != (target > 0.0)
    return int(np.argmax(scores)) != int(target)


def median_row_norm2(X, n_rows=10_000):
    """Median squared norm of the first ``n_rows`` non-zero rows of dense ``X`` (0: none)."""
    norms = (np.asarray(X, dtype=np.float64)[:n_rows] ** 2).sum(axis=1)
    norms = norms[norms > 0]
    return float(np.median(norms)) if norms.size else 0.0


def standardized(X, like=None):
    """Dense ``X`` with each column centred and scaled by the mean and standard
    deviation of that column of ``like`` (default ``X``; a constant column:
    scale 1), as estimators with 'normalized' steps standardize dense input by
    their first data's statistics."""
    X = np.asarray(X, dtype=np.float64)
    like = X if like is None else np.asarray(like, dtype=np.float64)
    mean, std = like.mean(axis=0), like.std(axis=0)
    return (X - mean) / np.where(std <= 1e-12 * np.maximum(np.abs(mean), 1.0), 1.0, std)


def model_coordinates(X, X_train, learning_rate):
    """Dense ``X`` as a model trained on dense ``X_train`` reads it: standardized by
    ``X_train``'s columns with 'normalized' steps, else as given."""
    return (standardized(X, X_train)
            if learning_rate in ("normalized", "frequency", "adaptive", "auto")
            else np.asarray(X))


def dense_sgd(X, y_enc, *, n_models, loss="log_loss", learning_rate, eta0, power_t=0.5,
              alpha=0.0, batch_size=1, max_iter=1, sample_weight=None, fit_intercept=True,
              k=None, margin=1.0, stats=None, norm_floor=None, standardize=None,
              progress=None, count_cells=2**14, counts=None):
    """Plain NumPy mini-batch SGD on a dense weight matrix, rows in order.

    Each mini-batch is scored at the current weights, then
    ``w <- (1 - eta alpha) w`` and ``w <- w - eta / m * sum dloss x``, with the
    schedules of the kernel ('constant', 'invscaling', 'optimal', and
    'normalized': the weights step by ``eta0 / max(||x||**2, norm_floor)``, the
    intercept by ``eta0 / (nnz + 1)``; ``norm_floor`` defaults to the median
    ``||x||**2`` of the rows, :func:`median_row_norm2`; 'frequency': as
    'normalized', with each feature's ``x_j`` taken as ``x_j / sqrt(n_j)`` in
    the step and ``sum x_j**2 / sqrt(n_j)`` for ``||x||**2`` (the floor
    scaling it by ``max(1, norm_floor / ||x||**2)``), ``n_j`` the count of the
    cell ``fmix64(j) % count_cells`` after the row's own, counted in column
    order when the row is scored, in ``counts`` if given); 'adaptive': as
    'frequency' with ``n_j`` the float32 sum, in that cell, of the rows'
    ``sum_c dloss_c**2 * x_j**2`` (the row's own included; a share of 0 where
    the sum is 0, and no division for a row of no loss derivative).
    Multi-class log loss
    ('log_loss' or 'softmax') is the multinomial loss, other losses one-vs-rest. With ``k``, hard thresholding
    keeps the top ``k`` entries of each model by ``(|w|, key)`` after every
    update (the entries kept so far and the keys that received a non-zero step
    compete).

    ``standardize`` (default: with 'normalized') trains on :func:`standardized`
    ``X``, as the estimators do with dense input; give False for a reference of
    sparse input.

    Returns ``W, b, t, mistakes`` (``mistakes`` of the last pass, each counted
    before its sample's update). ``progress``, a dict, receives the last pass's
    summed log loss before each update (``"log_loss"``, binary log loss only).
    """
    X = np.asarray(X, dtype=np.float64)
    if standardize is None:
        standardize = learning_rate in ("normalized", "frequency", "adaptive")
    if standardize:
        X = standardized(X)
    n, p = X.shape
    sw = np.ones(n) if sample_weight is None else np.asarray(sample_weight, dtype=np.float64)
    W = np.zeros((n_models, p))
    b = np.zeros(n_models)
    kept = np.zeros((n_models, p), dtype=bool)
    if norm_floor is None:
        norm_floor = median_row_norm2(X)
    if learning_rate in ("frequency", "adaptive"):
        dtype = np.int64 if learning_rate == "frequency" else np.float32
        counts = np.zeros(count_cells, dtype=dtype) if counts is None else counts
        slots = np.array([fmix64(j) % counts.size for j in range(p)])
    F = np.ones_like(X)
    t = 1.0
    for _ in range(max_iter):
        mistakes, log_loss = 0, 0.0
        for start in range(0, n, batch_size):
            rows = np.arange(start, min(start + batch_size, n))
            m = len(rows)
            eta = step_size(learning_rate, eta0, power_t, t, alpha)
            D = np.zeros((m, n_models))
            intercept_scale = np.ones(m)
            for i, r in enumerate(rows):
                s = W @ X[r] + b
                if loss != "squared_error":
                    mistakes += is_mistake(s, y_enc[r])
                if loss == "log_loss" and n_models == 1:
                    log_loss += np.logaddexp(0.0, -y_enc[r] * s[0])
                D[i] = loss_derivatives(loss, s, y_enc[r], n_models, sw[r], margin, stats)
                norm2 = X[r] @ X[r]
                if learning_rate == "frequency":
                    for j in np.flatnonzero(X[r]):
                        counts[slots[j]] += 1
                        F[r, j] = 1.0 / np.sqrt(counts[slots[j]])
                    if norm2 > 0:
                        scaled = (X[r] ** 2 * F[r]).sum() * max(1.0, norm_floor / norm2)
                        D[i] /= scaled
                        intercept_scale[i] = scaled / (np.count_nonzero(X[r]) + 1)
                if learning_rate == "adaptive":
                    squares = float(D[i] @ D[i])
                    for j in np.flatnonzero(X[r]):
                        cell = slots[j]
                        counts[cell] = np.float32(counts[cell] + np.float32(squares * X[r, j] ** 2))
                        F[r, j] = 1.0 / np.sqrt(float(counts[cell])) if counts[cell] > 0 else 0.0
                    scaled = (X[r] ** 2 * F[r]).sum()
                    if norm2 > 0 and scaled > 0:
                        scaled *= max(1.0, norm_floor / norm2)
                        D[i] /= scaled
                        intercept_scale[i] = scaled / (np.count_nonzero(X[r]) + 1)
                if learning_rate == "normalized" and norm2 > 0:
                    norm2 = max(norm2, norm_floor)
                    D[i] /= norm2
                    intercept_scale[i] = norm2 / (np.count_nonzero(X[r]) + 1)
            if alpha > 0:
                W *= max(0.0, 1.0 - eta * alpha)
            step = -eta / m
            if fit_intercept:
                b += step * (D * intercept_scale[:, None]).sum(axis=0)
            delta = step * (D.T @ (X[rows] * F[rows]))
            W += delta
            if k is not None:
                for c in range(n_models):
                    touched = ((D[:, c] != 0)[:, None] & (X[rows] != 0)).any(axis=0)
                    candidates = np.flatnonzero(kept[c] | (touched & (delta[c] != 0)))
                    order = np.lexsort((candidates, np.abs(W[c, candidates])))[::-1]
                    keep = np.zeros(p, dtype=bool)
                    keep[candidates[order[:k]]] = True
                    W[c, ~keep] = 0.0
                    kept[c] = keep
            t += m
    if progress is not None and loss == "log_loss" and n_models == 1:
        progress["log_loss"] = log_loss
    return W, b, t, mistakes


# ------------------------------------------------------ hashes in Python integers
MASK64, KEY_SPACE = 2**64 - 1, 2**63 - 1


def fmix64(k):
    """MurmurHash3's 64-bit finalizer on Python ints."""
    k &= MASK64
    k ^= k >> 33
    k = (k * 0xFF51AFD7ED558CCD) & MASK64
    k ^= k >> 33
    k = (k * 0xC4CEB9FE1A85EC53) & MASK64
    return k ^ (k >> 33)


def reference_cross(*parts):
    """Key of the cross of parts' keys, the documented derivation in Python integers."""
    key = parts[0]
    for part in parts[1:]:
        key = fmix64((key * 0x9E3779B97F4A7C15 + part + 1) & MASK64) % KEY_SPACE
    return key
