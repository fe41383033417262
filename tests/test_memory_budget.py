"""memory_budget is the whole estimator's bytes: memory_bytes_ <= budget, always."""
import numpy as np
import pytest

from sklearn_sketch import (
    AWMSketchClassifier,
    BearClassifier,
    BearRegressor,
    FeatureHashingClassifier,
    MissionClassifier,
    SpaceSavingClassifier,
    TruncationClassifier,
    WMSketchClassifier,
)
from sklearn_sketch._base import heap_bytes, sketch_bytes

BUDGETED = {
    "wm": lambda b: WMSketchClassifier(b, max_iter=1, random_state=0),
    "awm": lambda b: AWMSketchClassifier(b, max_iter=1, random_state=0),
    "truncation": lambda b: TruncationClassifier(b, max_iter=1, random_state=0),
    "probabilistic": lambda b: TruncationClassifier(b, truncation="probabilistic", max_iter=1,
                                                    random_state=0),
    "space_saving": lambda b: SpaceSavingClassifier(b, max_iter=1, random_state=0),
    "mission": lambda b: MissionClassifier(memory_budget=b, max_iter=1, random_state=0),
    "hashing": lambda b: FeatureHashingClassifier(memory_budget=b, max_iter=1, random_state=0),
}


def _data(n_classes, n_samples=400, n_features=300, seed=0):
    rng = np.random.RandomState(seed)
    X = rng.binomial(1, 0.05, size=(n_samples, n_features)).astype(float)
    centers = rng.normal(size=(n_classes, n_features)) * 3
    y = np.argmax(X @ centers.T + rng.normal(size=(n_samples, n_classes)), axis=1)
    return X, y


def _explicit_bytes(est):
    """The allocated arrays counted one by one."""
    return (sum(s.table.nbytes + s.seeds.nbytes for s in est.sketches_)
            + sum(sum(a.nbytes for a in h._arrays if a is not None) for h in est.heaps_)
            + 2 * est.intercept_.nbytes
            + (est.history_.memory_bytes if hasattr(est, "history_") else 0))


@pytest.mark.parametrize("name", sorted(BUDGETED))
@pytest.mark.parametrize("n_classes", [2, 3, 20])
@pytest.mark.parametrize("budget", ["16KB", "64KB", "1MB", 100_000, "16MB"])
def test_memory_bytes_within_budget(name, n_classes, budget):
    X, y = _data(n_classes, n_samples=60)
    est = BUDGETED[name](budget).fit(X, y)
    n_bytes = {"16KB": 2**14, "64KB": 2**16, "1MB": 2**20, "16MB": 2**24}.get(budget, budget)
    assert est.memory_bytes_ == _explicit_bytes(est)
    assert est.memory_bytes_ <= n_bytes
    # Most of the budget is used (the shape is the largest that fits).
    assert est.memory_bytes_ > 0.9 * n_bytes
    n_models = 1 if len(est.classes_) == 2 else len(est.classes_)
    if est.sketches_:
        assert est.sketch_width_ == est.sketches_[0].width
        assert all(s.memory_bytes == sketch_bytes(est.sketch_width_, est.sketch_depth_)
                   for s in est.sketches_)
    if est.heaps_:
        assert est.n_features_to_select_ == est.heaps_[0].capacity
        assert all(h.memory_bytes == heap_bytes(h.capacity, h.has_aux) for h in est.heaps_)
    assert len(est.intercept_) == n_models


@pytest.mark.parametrize("name", sorted(BUDGETED))
def test_budget_too_small_names_the_budget(name):
    X, y = _data(20, n_samples=60)
    with pytest.raises(ValueError, match="memory_budget=400"):
        BUDGETED[name](400).fit(X, y)


@pytest.mark.parametrize("name", sorted(BUDGETED))
def test_budgeted_models_learn(name):
    X, y = _data(3, n_samples=3000, n_features=200, seed=1)
    est = BUDGETED[name]("64KB").set_params(max_iter=5).fit(X[:2000], y[:2000])
    assert est.score(X[2000:], y[2000:]) > 0.55  # chance is about 1/3


def test_explicit_values_override_the_budget_shares():
    X, y = _data(2, n_samples=60)
    est = AWMSketchClassifier("8KB", n_features_to_select=10, max_iter=1, random_state=0).fit(X, y)
    assert est.n_features_to_select_ == 10
    assert est.sketch_width_ == (8192 - 16 - heap_bytes(10)) // 4 - 1
    est = WMSketchClassifier("8KB", n_features_to_select=7, sketch_width=33, sketch_depth=5,
                             max_iter=1, random_state=0).fit(X, y)
    assert (est.n_features_to_select_, est.sketch_width_, est.sketch_depth_) == (7, 33, 5)
    est = WMSketchClassifier(None, n_features_to_select=3, sketch_width=9, sketch_depth=2,
                             max_iter=1, random_state=0).fit(X, y)
    assert (est.n_features_to_select_, est.sketch_width_, est.sketch_depth_) == (3, 9, 2)


# BEAR pays its curvature pairs first: room for history_size pairs on the largest
# active set batch_size rows of the first data form (about 0.5 KB a coordinate for 3
# classes, 2 KB for 20), so its smallest budgets are larger than the others'.
@pytest.mark.parametrize("n_classes", [2, 3, 20])
@pytest.mark.parametrize("budget", ["4MB", 6_000_000, "16MB"])
def test_bear_memory_bytes_within_budget_history_included(n_classes, budget):
    X, y = _data(n_classes, n_samples=200)
    est = BearClassifier(memory_budget=budget, max_iter=2, random_state=0).fit(X, y)
    n_bytes = {"4MB": 2**22, "16MB": 2**24}.get(budget, budget)
    assert est.memory_bytes_ == _explicit_bytes(est) <= n_bytes
    assert est.memory_bytes_ > 0.9 * n_bytes
    # The pairs' room was reserved from the data: the largest 64 rows, plus the intercept.
    largest = np.sort(np.count_nonzero(X, axis=1))[-64:].sum()
    assert est.history_.capacity == largest + 1
    # Training on more of the same (no larger batch) keeps the shape and the bound.
    est.partial_fit(X[:100], y[:100])
    assert est.memory_bytes_ == _explicit_bytes(est) <= n_bytes
    assert est.history_.capacity == largest + 1


def test_bear_budget_refuses_batches_larger_than_it_reserved():
    X, y = _data(3, n_samples=200)
    est = BearRegressor(memory_budget="1MB", batch_size=8, random_state=0).fit(X, y)
    before = est.memory_bytes_
    dense = np.ones((16, X.shape[1]))
    with pytest.raises(ValueError, match="more than the .* that memory_budget reserved"):
        est.partial_fit(dense, np.zeros(16))
    assert est.memory_bytes_ == before == _explicit_bytes(est)


def test_bear_budget_too_small_for_its_pairs_says_so():
    X, y = _data(20, n_samples=60)
    with pytest.raises(ValueError, match="memory_budget=400 .*curvature pairs"):
        BearClassifier(memory_budget=400).fit(X, y)


def test_bear_budgeted_model_learns():
    X, y = _data(3, n_samples=3000, n_features=200, seed=1)
    est = BearClassifier(memory_budget="1MB", random_state=0).fit(X[:2000], y[:2000])
    assert est.memory_bytes_ <= 2**20
    assert est.score(X[2000:], y[2000:]) > 0.55  # chance is about 1/3
