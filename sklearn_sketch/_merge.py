"""Parameter mixing: one estimator from fitted copies trained on different data."""
import copy

import numpy as np

from ._core import CountSketch, TopKHeap
from ._sorted_keys import keys_in_heaps, unique_keys


def average_estimators(estimators, weights=None):
    """The weighted average of fitted estimators of one class and one configuration.

    Parameter mixing (McDonald et al., 2010; the sketches are linear): train
    copies of one estimator (same parameters and ``random_state``, so the
    same hash functions) on different parts of the data, on different cores or
    machines, and average them. The sketches and intercepts are averaged
    exactly (the sketch of the averaged weights); each heap is rebuilt over
    the union of the copies' heap keys with their averaged weights, read from
    the averaged sketch where the heap holds sketch estimates (MISSION, BEAR,
    WM-Sketch) and from the copies' own weights elsewhere (AWM-Sketch: heap
    weight or sketch estimate; hard thresholding and truncation: heap weight
    or 0), keeping the ``n_features_to_select_`` heaviest. Feature names are
    merged. Copies that standardized or scaled their columns (``feature_mean_``,
    ``feature_scale_``) get the weighted average of their statistics, and
    copies that scaled measured features (``scaled_keys_``, ``key_scales_``)
    the union of those features, each scale averaged over the copies that
    measured it: exact when they share them, as the copies of ``n_jobs`` do
    (and those of :func:`sklearn_sketch.dask.fit` for dense columns). BEAR's
    curvature pairs belong to one run's steps and are not averaged: the
    result starts a new window.
    Probabilistic truncation and Space-Saving, whose heap entries hold
    reservoir keys or counts, cannot be averaged.

    Parameters
    ----------
    estimators : sequence of estimators
        Fitted estimators of one class, with equal parameters, classes and
        input features.
    weights : array-like of shape (n_estimators,), default=None
        Non-negative weights (for example the rows each copy trained on),
        normalised to sum to 1; equal weights by default.

    Returns
    -------
    estimator : estimator
        A new fitted estimator; the inputs are unchanged.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_sketch import MissionClassifier, average_estimators
    >>> rng = np.random.RandomState(0)
    >>> X = rng.normal(size=(2000, 50)); y = (X[:, 3] - 2 * X[:, 17] > 0).astype(int)
    >>> parts = [MissionClassifier(4, sketch_width=128, random_state=0).fit(X[i::2], y[i::2])
    ...          for i in range(2)]
    >>> model = average_estimators(parts)
    >>> sorted(model.selected_features_.keys[:2].tolist()), model.score(X, y) > 0.9
    ([3, 17], True)
    """
    estimators = list(estimators)
    if not estimators:
        raise ValueError("average_estimators needs at least one fitted estimator")
    first = estimators[0]
    _check_compatible(estimators)
    lam = _weights(weights, len(estimators))
    if len(estimators) == 1:
        return copy.deepcopy(first)
    # The copy shares the first estimator's sketches, heaps and history (the memo):
    # they are replaced below by new ones, so copying them would be wasted.
    state = first._state
    shared = state.sketches + state.heaps + [state.history]
    out = copy.deepcopy(first, memo={id(part): part for part in shared})
    average_states(first, [e._state for e in estimators], lam, into=out._state)
    history = out._state.history
    if history is not None:
        # The pairs measure one run's steps: the average starts a new window.
        fresh = type(history)(history.history_size, history.n_models)
        fresh.reserve(history.capacity)
        out._state.history = fresh
    if "feature_scale_" in first.__dict__ and not all(
            np.array_equal(e.feature_mean_, first.feature_mean_)
            and np.array_equal(e.feature_scale_, first.feature_scale_) for e in estimators):
        # Copies that each took their own part's statistics differ a little: their
        # average is used. Shared ones (n_jobs, sklearn_sketch.dask.fit) are kept as
        # they are.
        out.feature_mean_ = sum(w * e.feature_mean_ for w, e in zip(lam, estimators))
        out.feature_scale_ = sum(w * e.feature_scale_ for w, e in zip(lam, estimators))
    if "key_scales_" in first.__dict__ and not all(
            np.array_equal(e.scaled_keys_, first.scaled_keys_)
            and np.array_equal(e.key_scales_, first.key_scales_) for e in estimators):
        # Each copy measured its own part's features: a feature's scale is the
        # weighted average over the copies that measured it.
        keys = unique_keys(np.concatenate([e.scaled_keys_ for e in estimators]))
        total, weight = np.zeros(keys.size), np.zeros(keys.size)
        for w, e in zip(lam, estimators):
            at = np.searchsorted(keys, e.scaled_keys_)
            total[at] += w * e.key_scales_
            weight[at] += w
        out.scaled_keys_, out.key_scales_ = keys, total / weight
    out.n_iter_ = max(e.n_iter_ for e in estimators)
    out._remember_names(None, reset=False)  # the names of keys that left the heaps go
    for other in estimators[1:]:
        if getattr(other, "_feature_names", None):
            out._remember_names(other._feature_names, reset=False)
    out._set_fitted_attributes()
    return out


def _column_reading(est):
    """How ``est`` reads its columns: standardized, scaled only or as given."""
    if "key_scales_" in est.__dict__:
        return "scales its measured features"
    if "feature_scale_" not in est.__dict__:
        return "reads its columns as given"
    return ("centres and scales its columns" if est.feature_mean_.any()
            else "scales its columns without centring them")


def average_states(estimator, states, lam, *, into):
    """Write the ``lam``-weighted average of ``states`` (models of ``estimator``) into ``into``.

    ``into`` gets new sketch and heap objects (the inputs are not changed);
    it keeps its own BEAR history. Its clock is the latest of the states'.
    """
    store = estimator._store
    sketches = list(into.sketches)
    heaps = list(into.heaps)
    for c in range(len(into.intercept)):
        own = [s.sketches[c] for s in states] if sketches else None
        if sketches:
            sketches[c] = CountSketch.weighted_sum(own, lam)
        if heaps:
            heaps[c] = _average_heap(store, [s.heaps[c] for s in states], own,
                                     sketches[c] if sketches else None, lam)
    into.sketches, into.heaps = sketches, heaps
    into.intercept = sum(w * s.intercept for w, s in zip(lam, states))
    if into.feature_counts is not None:
        # The 'frequency' schedule's counts ('adaptive': squared gradients), averaged
        # as the weights are (only their sizes relative to each other set the steps).
        average = sum(w * s.feature_counts.astype(np.float64) for w, s in zip(lam, states))
        dtype = into.feature_counts.dtype
        into.feature_counts = (np.rint(average) if dtype == np.uint32 else average).astype(dtype)
    into.t = max(s.t for s in states)
    into.n_passes = max(s.n_passes for s in states)
    into.mistakes = sum(s.mistakes for s in states)
    into.log_loss = sum(s.log_loss for s in states)
    into.last_pass_samples = sum(s.last_pass_samples for s in states)
    into.read_errors = sum(w * s.read_errors for w, s in zip(lam, states))


def _check_compatible(estimators):
    first = estimators[0]
    cls = type(first)
    params = first.get_params(deep=False)
    for i, est in enumerate(estimators):
        if type(est) is not cls:
            raise TypeError(f"estimator {i} is {type(est).__name__}, not {cls.__name__}: "
                            "only copies of one estimator can be averaged")
        if "_state" not in est.__dict__:
            raise ValueError(f"estimator {i} is not fitted")
        if first._store.averaged is not None:
            raise ValueError(f"{cls.__name__} cannot be averaged: "
                             f"{first._store.averaged} have no average")
        other = est.get_params(deep=False)
        for name, value in params.items():
            if name != "verbose" and not _same(value, other[name]):
                raise ValueError(f"estimator {i} has {name}={other[name]!r}, estimator 0 "
                                 f"{value!r}: averaged estimators need equal parameters "
                                 "(and random_state, for the same hash functions)")
        if _column_reading(first) != _column_reading(est):
            raise ValueError(f"estimator {i} {_column_reading(est)}, estimator 0 "
                             f"{_column_reading(first)} (feature_mean_, feature_scale_, "
                             "scaled_keys_, key_scales_): train the copies on the same kind "
                             "of input (dense or sparse, narrow or wide)")
        for name in ("classes_", "n_features_in_", "feature_names_in_", "learning_rate_",
                     "sketch_width_", "sketch_depth_", "n_features_to_select_"):
            if hasattr(first, name) != hasattr(est, name) or (
                    hasattr(first, name) and not np.array_equal(getattr(first, name),
                                                                getattr(est, name))):
                raise ValueError(f"estimator {i} differs from estimator 0 in {name}")
        if est._state.sketches and not all(
                a.same_configuration(b) for a, b in zip(first._state.sketches,
                                                        est._state.sketches)):
            raise ValueError(f"estimator {i} hashes with other seeds than estimator 0: "
                             "give the copies the same integer random_state")


def _same(a, b):
    try:
        return bool(a == b)
    except (TypeError, ValueError):
        return a is b


def _weights(weights, n):
    if weights is None:
        return np.full(n, 1.0 / n)
    lam = np.asarray(weights, dtype=np.float64)
    if lam.shape != (n,) or not np.isfinite(lam).all() or (lam < 0).any() or lam.sum() <= 0:
        raise ValueError(f"weights must be {n} non-negative finite numbers, not all 0")
    return lam / lam.sum()


def _average_heap(store, heaps, sketches, merged_sketch, lam):
    """The heap of the averaged model: the heaviest averaged weights of the heaps' keys."""
    capacity = heaps[0].capacity
    keys = keys_in_heaps(heaps)
    weights = store.averaged_heap_weights(keys, heaps, sketches, merged_sketch, lam)
    by_value = heaps[0].by_value
    order = np.lexsort((keys, -(weights if by_value else np.abs(weights))))
    kept, dropped = order[:capacity], order[capacity:]
    heap = TopKHeap(capacity, order="value" if by_value else "magnitude")
    heap.push_many(keys[kept], weights[kept])
    if dropped.size:
        store.after_heap_average(keys[dropped], weights[dropped], merged_sketch)
    return heap
