"""n_jobs: the classes' models on threads of their own, exactly as on one; one model (and
BEAR's) in parts of the rows, averaged: deterministic, and exactly parameter mixing (of
a classifier's copies that take n_jobs times the step, but BEAR's)."""
import sys
from pathlib import Path

import numpy as np
import pytest

from sklearn_sketch import (
    AWMSketchClassifier,
    BearClassifier,
    FeatureHashingClassifier,
    IHTClassifier,
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
    # Fixed steps and schedules: eta0='auto' and learning_rate='auto' would choose on
    # each copy's own rows.
    "mission": lambda **k: MissionClassifier(8, sketch_width=128, eta0=3.0,
                                             learning_rate="normalized", random_state=0, **k),
    "wm": lambda **k: WMSketchClassifier("8KB", eta0=1.0, learning_rate="normalized",
                                         random_state=0, **k),
    "awm": lambda **k: AWMSketchClassifier("8KB", eta0=1.0, learning_rate="normalized",
                                           random_state=0, **k),
    "hashing": lambda **k: FeatureHashingClassifier(sketch_width=256, eta0=1.0,
                                                    learning_rate="normalized", random_state=0,
                                                    **k),
    "iht": lambda **k: IHTClassifier(8, eta0=3.0, learning_rate="normalized", random_state=0,
                                     **k),
    "bear": lambda **k: BearClassifier(8, sketch_width=256, eta0=3.0, learning_rate="normalized",
                                       random_state=0, **k),
    "bear-adaptive": lambda **k: BearClassifier(8, sketch_width=256, eta0=3.0,
                                                learning_rate="adaptive", random_state=0, **k),
}


def data(n=4000, p=60, seed=0):
    rng = np.random.RandomState(seed)
    X = rng.normal(size=(n, p))
    return X, np.argmax(X[:, :6].reshape(n, 3, 2).sum(axis=2), axis=1)


def binary_data():
    X, y = data()
    return X, (y == 0).astype(int)


@pytest.mark.parametrize("name", sorted(MAKERS))
def test_a_pass_in_parts_is_the_average_of_copies_trained_on_the_parts(name):
    # One model (binary), or BEAR's coupled classes: the rows are split.
    X, y = data() if name.startswith("bear") else binary_data()
    n_jobs = 3
    est = MAKERS[name](n_jobs=n_jobs, max_iter=1, shuffle=False).fit(X, y)
    parts = np.array_split(np.arange(len(y)), n_jobs)
    copies = []
    for p in parts:
        copy = MAKERS[name](max_iter=1, shuffle=False)
        # The average of n copies moves as one with an n times smaller step (not BEAR's).
        if not name.startswith("bear"):
            copy.set_params(eta0=copy.eta0 * n_jobs)
        if est._floors_row_norms():  # the parts step with the whole pass's floor
            copy._preset_norm_floor = est.norm_floor_
        if hasattr(est, "feature_scale_"):  # and read the whole call's standardized columns
            copy._preset_standardization = (est.feature_mean_, est.feature_scale_)
        copies.append(copy.fit(X[p], y[p]))
    expected = average_estimators(copies, weights=[len(p) for p in parts])
    np.testing.assert_array_equal(est.intercept_, expected.intercept_)
    for got, want in zip(est.sketches_, expected.sketches_):
        np.testing.assert_array_equal(got.to_array(), want.to_array())
    if est.heaps_:
        np.testing.assert_array_equal(est.coef_.toarray(), expected.coef_.toarray())
    np.testing.assert_array_equal(est.predict(X), expected.predict(X))
    assert est.t_ == len(y) + 1


def test_a_regressors_pass_in_parts_averages_copies_that_keep_the_step():
    # Its squared loss has no bound on the gradient: no n_jobs times the step.
    X, y = data()
    y = X[:, :6] @ np.arange(1.0, 7.0)
    # 'invscaling' (under 'normalized' each part would take its own rows' statistics).
    make = lambda **k: MissionRegressor(8, sketch_width=128, random_state=0, max_iter=1,  # noqa: E731
                                        shuffle=False, learning_rate="invscaling",
                                        eta0=0.01, **k)
    est = make(n_jobs=3).fit(X, y)
    parts = np.array_split(np.arange(len(y)), 3)
    expected = average_estimators([make().fit(X[p], y[p]) for p in parts],
                                  weights=[len(p) for p in parts])
    np.testing.assert_array_equal(est.sketches_[0].to_array(), expected.sketches_[0].to_array())
    np.testing.assert_array_equal(est.intercept_, expected.intercept_)


@pytest.mark.parametrize("name", sorted(set(MAKERS) - {"bear", "bear-adaptive"}))
@pytest.mark.parametrize("n_jobs, loss, batch_size, alpha", [
    (2, "log_loss", 1, 0.0), (3, "log_loss", 1, 1e-4), (2, "hinge", 5, 0.0)])
def test_the_models_of_classes_train_on_threads_exactly_as_on_one(name, n_jobs, loss,
                                                                  batch_size, alpha):
    # Each thread trains its classes' models over every row, meeting the others once
    # a row for the scores: 3 classes on 2 threads (2 + 1) or 3, softmax or one-vs-rest.
    X, y = data()
    params = dict(loss=loss, batch_size=batch_size, alpha=alpha, max_iter=2)
    one = MAKERS[name](**params).fit(X, y)
    threads = MAKERS[name](n_jobs=n_jobs, **params).fit(X, y)
    assert_same_snapshot(snapshot(threads), snapshot(one))
    # Continuing a fitted model (its sketches journaled) stays exact too.
    one.partial_fit(X[:1500], y[:1500])
    threads.partial_fit(X[:1500], y[:1500])
    assert_same_snapshot(snapshot(threads), snapshot(one))


@pytest.fixture
def threads_go_solo_at_once():
    from sklearn_sketch._sgd_fast import _set_slow_waits_to_solo

    old = _set_slow_waits_to_solo(0)
    yield
    _set_slow_waits_to_solo(old)


@pytest.mark.parametrize("name", ["wm", "mission", "iht"])
@pytest.mark.parametrize("batch_size", [1, 7])
def test_a_pass_handed_to_the_first_thread_is_still_exact(threads_go_solo_at_once, name,
                                                           batch_size):
    # On a busy machine (waits of a millisecond) the first thread takes every model
    # over after the batch where the threads agreed to; here they agree at once.
    X, y = data()
    params = dict(batch_size=batch_size, max_iter=2)
    one = MAKERS[name](**params).fit(X, y)
    threads = MAKERS[name](n_jobs=3, **params).fit(X, y)
    assert_same_snapshot(snapshot(threads), snapshot(one))
    est = MAKERS[name](n_jobs=3).set_params(eta0=1e300, learning_rate="constant")
    with pytest.raises(ValueError, match="diverged"):
        est.fit(X * 1e200, y)


@pytest.mark.parametrize("make", [
    lambda **k: TruncationClassifier("8KB", truncation="simple", eta0=1.0, random_state=0, **k),
    lambda **k: TruncationClassifier("8KB", truncation="probabilistic", eta0=1.0,
                                     random_state=0, **k),
    lambda **k: SpaceSavingClassifier("8KB", random_state=0, **k),
    lambda **k: SparsePerceptronClassifier(8, random_state=0, **k),
], ids=["truncation", "probabilistic-truncation", "space-saving", "soft-threshold"])
def test_the_baselines_of_classes_train_on_threads_exactly_as_on_one(make):
    # Their heaps hold the model (the probabilistic one draws by key and clock).
    X, y = data()
    assert_same_snapshot(snapshot(make(n_jobs=2).fit(X, y)), snapshot(make().fit(X, y)))


@pytest.mark.parametrize("name", ["hashing", "wm", "mission"])
def test_a_model_that_diverges_on_one_thread_stops_them_all(name):
    X, y = data()
    # In the update of a fresh model (the scores are 0 before it), and in the scores
    # of a fitted one: either way every thread stops, the call raises, nothing changes.
    est = MAKERS[name](n_jobs=3).set_params(eta0=1e300, learning_rate="constant")
    with pytest.raises(ValueError, match="diverged"):
        est.fit(X * 1e200, y)
    assert not hasattr(est, "coef_") and not hasattr(est, "intercept_")
    est = MAKERS[name](n_jobs=3).fit(X, y)
    # Only the last class's model (the third thread's) scores an infinity.
    last = est._state.sketches[-1]
    last.set_table(np.full(last.table.shape, 3e38, dtype=last.dtype))
    before = snapshot(est)
    with pytest.raises(ValueError, match="diverged"):
        est.partial_fit(X * 1e300, y)
    assert_same_snapshot(snapshot(est), before)


@pytest.mark.parametrize("name", sorted(MAKERS))
def test_same_random_state_and_n_jobs_give_the_same_model(name):
    X, y = data()
    first = MAKERS[name](n_jobs=2).fit(X, y)
    again = MAKERS[name](n_jobs=2).fit(X, y)
    assert_same_snapshot(snapshot(first), snapshot(again))
    one = MAKERS[name]().fit(X, y)
    assert abs(first.score(X, y) - one.score(X, y)) < 0.05


def test_n_jobs_continues_training_and_a_failed_call_changes_nothing():
    X, y = data()
    est = MAKERS["mission"](n_jobs=2).fit(X, y)
    est.partial_fit(X[:1000], y[:1000])
    before = snapshot(est)
    est.set_params(eta0=1e300, learning_rate="constant")
    with pytest.raises(ValueError, match="diverged"):
        est.partial_fit(X * 1e200, y)
    assert_same_snapshot(snapshot(est), before)


def test_more_jobs_than_batches_uses_one_thread_per_batch():
    X, y = data(n=10)
    est = MAKERS["mission"](n_jobs=64, batch_size=4).fit(X, y)
    assert est._n_threads(10, 4) == 2
    assert est.n_iter_ == 5


def _threads_in_a_daemon(n_jobs, queue):
    queue.put(MissionClassifier(n_jobs=n_jobs)._n_threads(1000, 1))


@pytest.mark.parametrize("n_jobs", [-1, -2, 2])
def test_n_jobs_counts_threads_the_same_in_a_daemon_process(n_jobs):
    """A Dask worker is a daemon process, where joblib's effective_n_jobs says 1 (it
    cannot start processes there); the threads of a pass can run, so n_jobs keeps its
    scikit-learn meaning: -1 every core, -2 all but one."""
    import multiprocessing
    import os

    cores = os.cpu_count() or 1
    expected = {-1: cores, -2: max(1, cores - 1), 2: 2}[n_jobs]
    assert MissionClassifier(n_jobs=n_jobs)._n_threads(1000, 1) == expected
    context = multiprocessing.get_context("fork")
    queue = context.Queue()
    process = context.Process(target=_threads_in_a_daemon, args=(n_jobs, queue), daemon=True)
    process.start()
    assert queue.get(timeout=60) == expected
    process.join(timeout=60)
