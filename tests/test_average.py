"""average_estimators: parameter mixing of fitted copies, exact where the sketch is linear."""
import sys
from pathlib import Path

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
    average_estimators,
)

sys.path.insert(0, str(Path(__file__).parent))
from _reference import assert_same_snapshot, snapshot  # noqa: E402

MAKERS = {
    "mission": lambda: MissionClassifier(6, sketch_width=64, random_state=0),
    "bear": lambda: BearClassifier(6, sketch_width=64, random_state=0),
    "wm": lambda: WMSketchClassifier("2KB", random_state=0),
    "awm": lambda: AWMSketchClassifier("8KB", n_features_to_select=8, random_state=0),
    "hashing": lambda: FeatureHashingClassifier(sketch_width=64, random_state=0),
    "iht": lambda: IHTClassifier(6, random_state=0),
    "truncation": lambda: TruncationClassifier("1KB", random_state=0),
    "perceptron": lambda: SparsePerceptronClassifier(6, random_state=0),
}


def data(n_classes=3, n=1500, p=300, seed=0):
    rng = np.random.RandomState(seed)
    X = rng.binomial(1, 0.05, size=(n, p)) * rng.uniform(0.5, 2, size=(n, p))
    y = np.argmax(X[:, :12].reshape(n, n_classes, -1).sum(axis=2)
                  + 0.3 * rng.normal(size=(n, n_classes)), axis=1)
    return X, y


def parts(name, n_parts=3, n_classes=3):
    X, y = data(n_classes)
    return [MAKERS[name]().fit(X[i::n_parts], y[i::n_parts]) for i in range(n_parts)], X, y


def averaged_weights(estimators, lam, c, keys):
    """Brute force: the weighted sum of each copy's own weight of ``keys`` in model ``c``
    (its heap weight, else its sketch's estimate for the AWM-Sketch, else 0)."""
    total = np.zeros(keys.size)
    for est, w in zip(estimators, lam):
        heap = dict(zip(*(a.tolist() for a in est.heaps_[c].items())))
        tail = (np.sqrt(est.sketch_depth_) * est.sketches_[c].query(keys)
                if isinstance(est, AWMSketchClassifier) else np.zeros(keys.size))
        total += w * np.array([heap.get(k, t) for k, t in zip(keys.tolist(), tail.tolist())])
    return total


@pytest.mark.parametrize("name", sorted(MAKERS))
def test_sketches_and_intercepts_are_the_weighted_average(name):
    ests, X, y = parts(name)
    before = [snapshot(e) for e in ests]
    lam = np.array([1.0, 2.0, 5.0]) / 8
    avg = average_estimators(ests, weights=[1, 2, 5])
    np.testing.assert_allclose(avg.intercept_, sum(w * e.intercept_ for w, e in zip(lam, ests)))
    for c, sketch in enumerate(avg.sketches_):
        # Linearity: the average of the sketches is the sketch of the averaged weights
        # (up to float32 cells); the AWM-Sketch's cells also move for keys left out.
        expected = sum(w * e.sketches_[c].to_array() for w, e in zip(lam, ests))
        if name != "awm":
            np.testing.assert_allclose(sketch.to_array(), expected, rtol=1e-6, atol=1e-6)
        assert sketch.same_configuration(ests[0].sketches_[c])
    avg.partial_fit(X[:100], y[:100])  # training the average does not reach the inputs
    for e, snap in zip(ests, before):  # the inputs are not touched
        assert_same_snapshot(snapshot(e), snap)
    assert avg.memory_bytes_ <= max(e.memory_bytes_ for e in ests) + 64


@pytest.mark.parametrize("name", sorted(set(MAKERS) - {"hashing"}))
def test_heaps_hold_the_top_k_averaged_weights_of_the_union_of_heap_keys(name):
    ests, X, y = parts(name)
    lam = np.full(3, 1 / 3)
    avg = average_estimators(ests)
    reads_sketch = name in ("mission", "bear", "wm")
    for c, heap in enumerate(avg.heaps_):
        union = np.unique(np.concatenate([e.heaps_[c].keys() for e in ests]))
        if reads_sketch:
            root = np.sqrt(avg.sketch_depth_) if name == "wm" else 1.0
            weights = root * avg.sketches_[c].query(union)
        else:
            weights = averaged_weights(ests, lam, c, union)
        order = np.lexsort((union, -np.abs(weights)))[:heap.capacity]
        keys, got = heap.items()
        by_key = np.argsort(keys)
        np.testing.assert_array_equal(keys[by_key], np.sort(union[order]))
        np.testing.assert_allclose(got[by_key], weights[order][np.argsort(union[order])],
                                   rtol=1e-6, atol=1e-9)


def test_awm_sketch_reads_the_averaged_weight_of_keys_left_out():
    ests, X, y = parts("awm")
    avg = average_estimators(ests)
    root = np.sqrt(avg.sketch_depth_)
    n_out = 0
    for c, heap in enumerate(avg.heaps_):
        union = np.unique(np.concatenate([e.heaps_[c].keys() for e in ests]))
        out = union[~np.isin(union, heap.keys())]
        expected = averaged_weights(ests, np.full(3, 1 / 3), c, out)
        # Exact but where two keys left out share a cell.
        close = np.isclose(root * avg.sketches_[c].query(out), expected, rtol=1e-5, atol=1e-6)
        assert close.mean() > 0.8
        n_out += out.size
    assert n_out > 10


@pytest.mark.parametrize("name", sorted(MAKERS))
def test_one_estimator_averages_to_itself(name):
    ests, X, y = parts(name, n_parts=1)
    avg = average_estimators(ests)
    assert avg is not ests[0]
    assert_same_snapshot(snapshot(avg), snapshot(ests[0]))
    np.testing.assert_array_equal(avg.predict(X), ests[0].predict(X))


def test_average_continues_to_train_and_keeps_names():
    y = (np.arange(600) // 2) % 2
    docs = [[f"w{i % 50}", f"v{i % 7}", "good" if label else "bad"] for i, label in enumerate(y)]
    ests = [MissionClassifier(4, sketch_width=256, random_state=0).fit(docs[i::2], y[i::2])
            for i in range(2)]
    avg = average_estimators(ests)
    assert {"good", "bad"} <= set(avg.selected_features_.names)
    assert avg.history_ is None if hasattr(avg, "history_") else True
    avg.partial_fit(docs[:100], y[:100])
    assert avg.score(docs, y) > 0.9


def test_bear_starts_a_new_window_of_pairs():
    ests, X, y = parts("bear")
    avg = average_estimators(ests)
    assert avg.history_.n_pairs == 0
    assert avg.history_.capacity == ests[0].history_.capacity
    avg.partial_fit(X[:200], y[:200])
    assert avg.history_.n_pairs > 0


@pytest.mark.parametrize("bad, error, message", [
    (lambda e: [e, MissionClassifier(6, sketch_width=64, random_state=1).fit(*data())],
     ValueError, "random_state"),
    (lambda e: [e, MissionClassifier(7, sketch_width=64, random_state=0).fit(*data())],
     ValueError, "n_features_to_select=7"),
    (lambda e: [e, IHTClassifier(6, random_state=0).fit(*data())], TypeError, "IHTClassifier"),
    (lambda e: [e, MissionClassifier(6, sketch_width=64, random_state=0)], ValueError,
     "not fitted"),
    (lambda e: [e, MissionClassifier(6, sketch_width=64, random_state=0).fit(*data(2))],
     ValueError, "classes_"),
    (lambda e: [], ValueError, "at least one"),
])
def test_incompatible_estimators_are_refused_by_name(bad, error, message):
    est = MissionClassifier(6, sketch_width=64, random_state=0).fit(*data())
    with pytest.raises(error, match=message):
        average_estimators(bad(est))


@pytest.mark.parametrize("weights", [[1, -1], [0, 0], [1], [np.nan, 1]])
def test_bad_weights_are_refused(weights):
    est = MissionClassifier(6, sketch_width=64, random_state=0).fit(*data())
    with pytest.raises(ValueError, match="weights"):
        average_estimators([est, est], weights=weights)


@pytest.mark.parametrize("est", [SpaceSavingClassifier("1KB", random_state=0),
                                 TruncationClassifier("1KB", truncation="probabilistic",
                                                      random_state=0)])
def test_heaps_of_counts_or_reservoir_keys_cannot_be_averaged(est):
    est.fit(*data())
    with pytest.raises(ValueError, match="cannot be averaged"):
        average_estimators([est, est])


@pytest.mark.parametrize("make", [
    lambda: MissionRegressor(6, sketch_width=64, random_state=0),
    lambda: BearRegressor(6, sketch_width=64, random_state=0),
    lambda: IHTRegressor(6, random_state=0),
], ids=["mission", "bear", "iht"])
def test_regressors_average_too(make):
    rng = np.random.RandomState(3)
    X = rng.normal(size=(1200, 40))
    y = X[:, 2] - 2 * X[:, 7]
    copies = [make().fit(X[i::2], y[i::2]) for i in range(2)]
    avg = average_estimators(copies)
    np.testing.assert_allclose(avg.intercept_, np.mean([c.intercept_ for c in copies], axis=0))
    assert {2, 7} <= set(avg.get_support(indices=True).tolist())
    assert avg.score(X, y) > 0.9
