"""The schedules of a feature table: learning_rate='frequency' (the 'normalized' step
with each feature's share scaled by 1 / sqrt(its count so far), the counts kept in a
small hashed table shared by the classes) and what it shares with 'adaptive' (squared
gradients in that table: test_adaptive_schedule.py has the rest), and the step probe
that chooses between the schedules ('auto').
"""
import pickle
import sys
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp

from sklearn_sketch import (
    AWMSketchClassifier,
    FeatureHashingClassifier,
    IHTClassifier,
    MissionClassifier,
    WMSketchClassifier,
    average_estimators,
    load,
)
from sklearn_sketch._base import FEATURE_COUNT_CELLS, MIN_FEATURE_COUNT_CELLS
from sklearn_sketch.mission import HEAP_ONLY_AUTO_ETA0

sys.path.insert(0, str(Path(__file__).parent))
from _reference import assert_refuses_schedule_switch, dense_sgd, encode, fmix64  # noqa: E402


def zipf_rows(n_rows=300, n_features=40, seed=0):
    """Sparse rows whose columns occur at very different rates (a word-count table):
    column j in about a 1 / (j + 1) share of the rows, counts as values."""
    rng = np.random.default_rng(seed)
    present = rng.random((n_rows, n_features)) < 0.9 / (1 + np.arange(n_features)) ** 0.7
    present[np.arange(n_rows), rng.integers(n_features, size=n_rows)] = True
    X = present * rng.integers(1, 4, size=(n_rows, n_features)).astype(float)
    w = rng.normal(size=(n_features, 3))
    return X, (X @ w).argmax(axis=1)


def count_reference(X, cells=FEATURE_COUNT_CELLS, passes=1):
    counts = np.zeros(cells, dtype=np.int64)
    for _ in range(passes):
        for j in np.flatnonzero(X.any(axis=0)):
            counts[fmix64(int(j)) % cells] += np.count_nonzero(X[:, j])
    return counts


#: The schedules that keep a feature table, and its dtype (counts, squared gradients).
TABLE_DTYPES = {"frequency": np.uint32, "adaptive": np.float32}


@pytest.mark.usefixtures("sparse_as_given")
@pytest.mark.parametrize("learning_rate", sorted(TABLE_DTYPES))
@pytest.mark.parametrize("n_classes, loss", [(2, "log_loss"), (3, "hinge"), (3, "log_loss")])
@pytest.mark.parametrize("batch_size", [1, 4])
@pytest.mark.parametrize("cls", [MissionClassifier, FeatureHashingClassifier, IHTClassifier])
def test_table_schedules_equal_the_dense_reference_without_collisions(cls, n_classes, loss,
                                                                      batch_size,
                                                                      learning_rate):
    X, y = zipf_rows()
    if n_classes == 2:
        y = (y == 0).astype(int)
    # Room for every feature: MISSION's heap, IHT's (the whole model), the sketches.
    extra = ({"n_features_to_select": X.shape[1]} if cls is not FeatureHashingClassifier
             else {})
    if cls is not IHTClassifier:
        extra["sketch_width"] = 2**20
    est = cls(learning_rate=learning_rate, eta0=0.5, loss=loss, batch_size=batch_size,
              max_iter=2, shuffle=False, random_state=0, **extra)
    est.fit(sp.csr_matrix(X), y)
    for sketch in est.sketches_:  # the reference has no collisions: neither may the sketch
        assert np.unique(sketch.buckets(np.arange(X.shape[1]))[0][0]).size == X.shape[1]
    n_models = 1 if n_classes == 2 else n_classes
    ref_loss = "softmax" if loss == "log_loss" and n_classes > 2 else loss
    table = np.zeros(FEATURE_COUNT_CELLS, dtype=TABLE_DTYPES[learning_rate])
    W, b, t, mistakes = dense_sgd(X, encode(y, np.unique(y)), n_models=n_models,
                                  loss=ref_loss, learning_rate=learning_rate, eta0=0.5,
                                  batch_size=batch_size, max_iter=2, standardize=False,
                                  counts=table)
    coef = est.coef_.toarray() if cls is not FeatureHashingClassifier else None
    if coef is None:  # feature hashing: each column's weight is its cell's
        cells, signs = est.sketches_[0].buckets(np.arange(X.shape[1]))
        coef = np.array([s.to_array()[0, cells[0]] * signs[0] for s in est.sketches_])
    assert np.abs(W).max() > 1e-2  # something was learned
    np.testing.assert_allclose(coef, W, rtol=1e-4, atol=1e-5 * max(1.0, np.abs(W).max()))
    np.testing.assert_allclose(est.intercept_, b, rtol=1e-4, atol=1e-6)
    assert est.t_ == t and est.online_error_rate_ == mistakes / len(y)
    kept = est._state.feature_counts
    assert kept.dtype == table.dtype and table.max() > 0
    if learning_rate == "frequency":  # whole counts: exact, and those of the rows
        np.testing.assert_array_equal(kept, table)
        np.testing.assert_array_equal(kept, count_reference(X, passes=2))
    else:  # float32 sums, added in the kernel's order by the reference
        np.testing.assert_allclose(kept, table, rtol=1e-5, atol=1e-6 * table.max())


@pytest.mark.parametrize("cls", [MissionClassifier, FeatureHashingClassifier,
                                 WMSketchClassifier, AWMSketchClassifier])
def test_frequency_is_normalized_when_every_feature_is_in_every_row(cls):
    # Standardized dense columns: every feature counted alike, every share alike.
    rng = np.random.default_rng(1)
    X = rng.normal(size=(200, 12))
    y = (X[:, 0] - X[:, 3] > 0).astype(int)
    models = [cls(learning_rate=lr, eta0=1.0, random_state=0).fit(X, y)
              for lr in ("normalized", "frequency")]
    np.testing.assert_allclose(models[1].decision_function(X), models[0].decision_function(X),
                               rtol=1e-6, atol=1e-8)
    assert np.all(models[1]._state.feature_counts[[fmix64(j) % FEATURE_COUNT_CELLS
                                                    for j in range(12)]] == 200 * 5)


@pytest.mark.parametrize("learning_rate", sorted(TABLE_DTYPES))
def test_feature_tables_are_saved_copied_averaged_and_left_alone_by_a_failed_call(
        tmp_path, learning_rate):
    X, y = zipf_rows(seed=3)
    Xs = sp.csr_matrix(X)
    est = AWMSketchClassifier(learning_rate=learning_rate, random_state=0).fit(Xs, y)
    table = est._state.feature_counts.copy()
    assert table.dtype == TABLE_DTYPES[learning_rate] and table.size == FEATURE_COUNT_CELLS
    # A model file and a pickle hold the table, and training goes on from it alike.
    est.save(tmp_path / "m.skm")
    for other in (load(tmp_path / "m.skm"), pickle.loads(pickle.dumps(est))):
        np.testing.assert_array_equal(other._state.feature_counts, table)
        other.partial_fit(Xs, y)
    est.partial_fit(Xs, y)
    np.testing.assert_array_equal(other._state.feature_counts, est._state.feature_counts)
    np.testing.assert_array_equal(other.decision_function(Xs), est.decision_function(Xs))
    # A call that diverges leaves the model, table included, as it was.
    before = est._state.feature_counts.copy()
    est.set_params(eta0=1e300)
    with pytest.raises(ValueError):
        est.partial_fit(Xs * 1e300, y)
    np.testing.assert_array_equal(est._state.feature_counts, before)
    # Averaged copies average their tables: whole counts rounded, squares in float32.
    halves = [AWMSketchClassifier(learning_rate=learning_rate, random_state=0)
              .partial_fit(Xs[i::2], y[i::2], classes=np.unique(y)) for i in range(2)]
    merged = average_estimators(halves, weights=[1, 3])
    mean = (0.25 * halves[0]._state.feature_counts.astype(float)
            + 0.75 * halves[1]._state.feature_counts)
    assert merged._state.feature_counts.dtype == TABLE_DTYPES[learning_rate]
    if learning_rate == "frequency":
        np.testing.assert_array_equal(merged._state.feature_counts, np.rint(mean))
    else:
        np.testing.assert_allclose(merged._state.feature_counts, mean.astype(np.float32),
                                   rtol=1e-6)


@pytest.mark.parametrize("learning_rate", ["frequency", "adaptive"])
def test_frequency_threads_train_the_same_model_as_one(learning_rate):
    # Each thread of a team counts every row (and, under 'adaptive', sums every class's
    # squared loss derivatives) alike.
    X, y = zipf_rows(n_rows=2000, n_features=300, seed=4)
    Xs = sp.csr_matrix(X)
    models = [FeatureHashingClassifier(learning_rate=learning_rate, n_jobs=n_jobs,
                                       random_state=0).fit(Xs, y) for n_jobs in (1, 2)]
    np.testing.assert_array_equal(models[0]._state.feature_counts,
                                  models[1]._state.feature_counts)
    for a, b in zip(models[0].sketches_, models[1].sketches_):
        np.testing.assert_array_equal(a.table, b.table)


@pytest.mark.parametrize("learning_rate", sorted(TABLE_DTYPES))
@pytest.mark.parametrize("budget", ["16KB", "64KB", "1MB", "8MB"])
@pytest.mark.parametrize("cls", [MissionClassifier, WMSketchClassifier, AWMSketchClassifier,
                                 IHTClassifier])
def test_feature_tables_fit_in_the_budget_and_are_counted(cls, budget, learning_rate):
    from sklearn_sketch._base import parse_memory_budget

    X, y = zipf_rows(seed=5)
    est = cls(learning_rate=learning_rate, memory_budget=budget, random_state=0).fit(X, y)
    cells = est._state.feature_counts.size
    limit = parse_memory_budget(budget)
    assert cells == min(FEATURE_COUNT_CELLS, max(MIN_FEATURE_COUNT_CELLS, limit // 64))
    assert est.memory_bytes_ <= limit
    without = cls(learning_rate="normalized", memory_budget=budget, random_state=0).fit(X, y)
    # The table is in memory_bytes_, and the rest of the model made room for it.
    assert est.memory_bytes_ - 4 * cells <= without.memory_bytes_


def test_a_model_switched_to_or_from_frequency_is_refused_or_saved_as_it_is(tmp_path):
    X, y = zipf_rows(seed=6)
    Xs = sp.csr_matrix(X)
    # Trained under 'normalized': no counts to step by, so 'frequency' is refused
    # (partial_fit and a warm fit) with the way out, and the model is left as it was.
    est = AWMSketchClassifier(random_state=0, warm_start=True).fit(Xs, y)
    assert_refuses_schedule_switch(est, Xs, y, "frequency")
    est.save(tmp_path / "switched.skm")  # saved as it is, and read back so
    assert load(tmp_path / "switched.skm")._state.feature_counts is None
    # Trained under 'frequency', then switched to 'normalized': it trains on, keeping
    # its counts, and its file (counts included) loads.
    est = AWMSketchClassifier(learning_rate="frequency", random_state=0).fit(Xs, y)
    counts = est._state.feature_counts.copy()
    est.set_params(learning_rate="normalized").partial_fit(Xs, y)
    np.testing.assert_array_equal(est._state.feature_counts, counts)
    est.save(tmp_path / "m.skm")
    loaded = load(tmp_path / "m.skm")
    np.testing.assert_array_equal(loaded._state.feature_counts, counts)
    np.testing.assert_array_equal(loaded.decision_function(Xs), est.decision_function(Xs))


# ------------------------------------------------------------ learning_rate='auto'
def word_rows(n_rows=4000, n_words=20000, n_classes=4, seed=0):
    """Rows of 30 words drawn from a Zipf vocabulary, each class favouring its own
    twentieth of the words (five times as likely): rare words carry the classes."""
    rng = np.random.RandomState(seed)
    p = 1 / np.arange(1, n_words + 1) ** 1.1
    favoured = rng.rand(n_classes, n_words) < 0.05
    rows, y = [], np.arange(n_rows) % n_classes
    for c in y:
        q = p * np.where(favoured[c], 5, 1)
        rows.append(np.unique(rng.choice(n_words, 30, p=q / q.sum())))
    indptr = np.cumsum([0] + [r.size for r in rows])
    indices = np.concatenate(rows)
    return sp.csr_matrix((np.ones(indices.size), indices, indptr), shape=(n_rows, n_words)), y


AUTO_MAKERS = [
    lambda **k: MissionClassifier(200, sketch_width=2**14, random_state=0, **k),
    lambda **k: FeatureHashingClassifier(random_state=0, **k),
    lambda **k: WMSketchClassifier(random_state=0, **k),
    lambda **k: AWMSketchClassifier(random_state=0, **k),
]
#: Hard thresholding chooses its schedule too ('normalized' or 'adaptive'; no sketch).
IHT_MAKER = lambda **k: IHTClassifier(memory_budget="64KB", random_state=0, **k)  # noqa: E731


@pytest.mark.parametrize("make", AUTO_MAKERS + [IHT_MAKER])
def test_auto_is_the_default_and_trains_the_model_of_the_schedule_it_chose(make):
    X, y = word_rows()
    auto = make().fit(X, y)
    other = auto._AUTO_OTHER_SCHEDULE
    assert auto.learning_rate == "auto" and auto.learning_rate_ in ("normalized", other)
    assert (auto._state.feature_counts is not None) == (auto.learning_rate_ == other)
    # The first pass goes on from the probe's model: one thread, the same model as
    # the chosen schedule and step given from the start.
    fixed = make(learning_rate=auto.learning_rate_, eta0=auto.eta0_).fit(X, y)
    np.testing.assert_array_equal(auto.intercept_, fixed.intercept_)
    np.testing.assert_array_equal(auto.decision_function(X), fixed.decision_function(X))
    assert auto.memory_bytes_ == fixed.memory_bytes_


@pytest.mark.parametrize("make", AUTO_MAKERS[1:])
def test_auto_chooses_adaptive_where_rare_words_carry_the_classes(make):
    # Lightly loaded sketches (the defaults): 'adaptive' errs on far fewer probe rows.
    # Feature hashing and the (A)WM-Sketch try it; MISSION tries 'frequency'.
    X, y = word_rows()
    assert make()._AUTO_OTHER_SCHEDULE == "adaptive"
    assert make().fit(X, y).learning_rate_ == "adaptive"
    assert MissionClassifier._AUTO_OTHER_SCHEDULE == "frequency"


def test_iht_probes_adaptive_with_its_largest_step_beside_every_normalized_step():
    est = IHT_MAKER()
    assert est.learning_rate == "auto" and est.eta0 == "auto"
    assert est._probe_candidates() == (
        [("normalized", step) for step in HEAP_ONLY_AUTO_ETA0]
        + [("adaptive", max(HEAP_ONLY_AUTO_ETA0))])


@pytest.mark.parametrize("make", AUTO_MAKERS)
def test_auto_keeps_normalized_on_a_loaded_sketch_without_training_frequency(make, monkeypatch):
    X, y = word_rows(n_rows=2000)
    est = make()
    monkeypatch.setattr(type(est), "_AUTO_LIGHT_LOAD", 1e-9)
    probe = est._step_probe(X, y, classes=np.unique(y))
    lost = [probe.lost[i] for i, c in enumerate(probe.candidates) if c[0] != "normalized"]
    assert lost and all(lost)
    est.fit(X, y)
    assert est.learning_rate_ == "normalized" and est._state.feature_counts is None


def test_auto_takes_another_schedule_only_by_more_than_the_noise():
    est = WMSketchClassifier(learning_rate="auto", eta0=1.0)
    assert est._AUTO_Z == 2.0 and est._AUTO_SCHEDULE_Z == 1.5
    assert est._probe_candidates() == [("normalized", 1.0), ("adaptive", 1.0)]
    assert est._auto_choice([400.0, 371.0]) == 0  # 400 - 1.5 * 20 = 370 to beat
    assert est._auto_choice([400.0, 369.0]) == 1
    assert est._auto_choice([np.inf, 500.0]) == 1  # 'normalized' diverged
    assert est._auto_choice([np.inf, np.inf]) is None
    est.set_params(eta0="auto")
    candidates = est._probe_candidates()
    assert candidates[:5] == [("normalized", s) for s in WMSketchClassifier._AUTO_ETA0]
    assert candidates[5:] == [("adaptive", 3.0)]  # the largest step alone
    # Within 'normalized' the step is chosen as eta0='auto' chooses it; the fewest
    # of 'normalized' (here its step 3) is the count 'frequency' must beat.
    counts = [400.0, 300.0, 410.0, 420.0, 430.0, 275.0]
    assert est._auto_choice(counts) == 1  # 275 is not under 300 - 1.5 * sqrt(300)
    counts[5] = 273.0  # under 300 - 1.5 * sqrt(300) = 274.0
    assert est._auto_choice(counts) == 5
    # 'normalized' keeps its first (3's 370 is not under 400 - 2 * 20), but
    # 'frequency' must beat the fewest, 370 - 1.5 * sqrt(370) = 341.1, not the kept
    # 400's 370.
    assert est._auto_choice([400.0, 370.0, 410.0, 420.0, 430.0, 345.0]) == 0
    assert est._auto_choice([400.0, 370.0, 410.0, 420.0, 430.0, 340.0]) == 5
    # A schedule given is used as it is.
    est.set_params(learning_rate="frequency")
    assert {c[0] for c in est._probe_candidates()} == {"frequency"}


def test_auto_schedule_is_saved_and_a_file_without_it_loads(tmp_path):
    X, y = word_rows(n_rows=1000)
    from test_model_files import edit_header  # noqa: E402

    for make, rows in ((AWMSketchClassifier, (X, y)), (MissionClassifier, word_rows())):
        est = make(memory_budget="1MB", random_state=0).fit(*rows)
        X_, y_ = rows
        path = tmp_path / "m.skm"
        est.save(path)
        assert load(path).learning_rate_ == est.learning_rate_ == est._AUTO_OTHER_SCHEDULE
        edit_header(path, lambda h: h["fitted"].pop("learning_rate_"))
        loaded = load(path)  # a file without it: the table tells
        assert loaded.learning_rate_ == est.learning_rate_
        np.testing.assert_array_equal(loaded.predict(X_), est.predict(X_))
    est = AWMSketchClassifier("1MB", random_state=0).fit(X, y)
    est.save(path)
    edit_header(path, lambda h: h["fitted"].update(learning_rate_="adagrad"))
    with pytest.raises(Exception, match="learning_rate_ must be one of"):
        load(path)
    without = AWMSketchClassifier("1MB", learning_rate="normalized", random_state=0).fit(X, y)
    without.set_params(learning_rate="auto").save(path)
    edit_header(path, lambda h: h["fitted"].update(learning_rate_="frequency"))
    with pytest.raises(Exception, match="'frequency' needs the feature_counts"):
        load(path)


class ScriptedProbe:
    """A probe whose candidates make the given mistakes in each part (what
    ``choose_step`` reads of a :class:`~sklearn_sketch._step_probe.StepProbe`)."""

    def __init__(self, estimator, script):
        self.estimator, self.script = estimator, script
        self.candidates = estimator._probe_candidates()
        self.parts = [None] * len(script[0])
        n = len(self.candidates)
        self.lost, self.mistakes, self.done = [False] * n, [0] * n, [0] * n

    def start(self, i):
        pass

    def train_part(self, i):
        self.mistakes[i] += self.script[i][self.done[i]]
        self.done[i] += 1

    def finished(self, i):
        return self.done[i] == len(self.parts)

    def lose(self, i):
        self.lost[i] = True

    def keep_only(self, indices):
        pass

    def count(self, i):
        return np.inf if self.lost[i] else float(self.mistakes[i])


STOPPED = (150, 150, 150, 150)  # past the bar of 400 - 2 * 20 after three parts


@pytest.mark.parametrize("step_3, frequency, winner, done", [
    # 'frequency' ends at 365: over the 'normalized' bar (360), under its own (370).
    (STOPPED, (90, 90, 90, 95), 5, [4, 3, 3, 3, 3, 4]),
    # Stopped at its own bar, 370, after three parts.
    (STOPPED, (120, 120, 130, 0), 0, [4, 3, 3, 3, 3, 3]),
    # Step 3 under 'normalized' was stopped at 365 (no fewer over its whole probe):
    # 'frequency''s 365 does not beat that by 1.5 roots.
    ((100, 100, 100, 65), (90, 90, 90, 95), 0, [4, 4, 3, 3, 3, 4]),
])
def test_a_frequency_candidate_stops_at_its_own_bar_and_beats_the_stopped_counts(
        step_3, frequency, winner, done, monkeypatch):
    """'normalized' candidates stop at the first's bar of 2 roots (400 - 40), the
    'frequency' one at 1.5 roots (400 - 30): it could still win under that. What
    a 'normalized' candidate stopped at its bar had made counts as its fewest."""
    from sklearn_sketch._step_probe import choose_step

    monkeypatch.setattr(WMSketchClassifier, "_AUTO_RACE_Z", None)  # the bars alone
    est = WMSketchClassifier()
    script = [(100, 100, 100, 100), step_3] + [STOPPED] * 3 + [frequency]
    probe = ScriptedProbe(est, script)
    chosen, counts = choose_step(probe)
    assert probe.done == done and chosen == winner
    assert counts[:5] == [400.0] + [np.inf] * 4
    assert counts[5] == (sum(frequency) if done[5] == 4 else np.inf)


def test_a_candidate_that_trails_the_best_before_it_stops_and_its_count_is_no_floor():
    """The other schedule trains right after the first; a candidate 2 roots
    behind the best of those trained before it after a part (but the last)
    stops there; what it had made then says nothing of its whole probe (it is
    behind, not ahead): the fewest 'normalized' count stays the first's."""
    from sklearn_sketch._step_probe import choose_step, training_order

    est = WMSketchClassifier()
    assert est._AUTO_RACE_Z == 2.0
    assert training_order(est._probe_candidates()) == [0, 5, 1, 2, 3, 4]
    # After one part: 121 - 100 >= 2 * sqrt(100); 119 - 100 is not, but 119 - 90
    # (the 'adaptive' candidate, trained second) >= 2 * sqrt(90).
    script = [(100, 100, 100, 100), (121, 0, 0, 0), (119, 100, 100, 100),
              (150, 0, 0, 0), (150, 0, 0, 0), (90, 90, 90, 95)]
    probe = ScriptedProbe(est, script)
    chosen, counts = choose_step(probe)
    # Step 0.3 stops after one part; having made more mistakes than the first
    # there, it leaves 0.1 and 0.03 untried.
    assert probe.done == [4, 1, 1, 0, 0, 4]
    assert chosen == 5 and counts == [400.0] + [np.inf] * 4 + [365.0]
    # Against the first alone (the other schedule out of the way), 0.3 trains on
    # and is stopped at the bar (400 - 2 * 20) in its last part.
    script[5] = (150, 0, 0, 0)
    probe = ScriptedProbe(est, script)
    chosen, counts = choose_step(probe)
    assert probe.done == [4, 1, 4, 0, 0, 1] and chosen == 0


@pytest.mark.parametrize("script, done, winner", [
    # 0.3 ahead of the first, 0.1 behind 0.3 after its first part (raced: 130 - 100
    # >= 20): 0.03 is not tried.
    ([(100,) * 4, (130, 0, 0, 0), (95,) * 4, (130, 0, 0, 0), (50,) * 4, (200,) * 4],
     [4, 1, 4, 1, 0, 1], 0),
    # Each smaller step ahead of the one above it: all are tried, and 0.03 wins.
    ([(100,) * 4, (130, 0, 0, 0), (95,) * 4, (90,) * 4, (80,) * 4, (200,) * 4],
     [4, 1, 4, 4, 4, 1], 4),
    # 0.1 level with 0.3 on the rows both trained: no fewer mistakes, 0.03 untried.
    ([(100,) * 4, (130, 0, 0, 0), (85,) * 4, (85,) * 4, (50,) * 4, (200,) * 4],
     [4, 1, 4, 4, 0, 1], 2),
])
def test_smaller_steps_are_tried_until_one_errs_no_less_than_the_step_above(
        script, done, winner):
    """The steps under the first's are tried largest first, and no further once
    one makes no fewer mistakes than the next larger one tried: a step that
    would have won below that (50 a part) is not trained."""
    from sklearn_sketch._step_probe import choose_step

    est = WMSketchClassifier()
    assert [c for c in est._probe_candidates()] == [
        ("normalized", 1.0), ("normalized", 3.0), ("normalized", 0.3), ("normalized", 0.1),
        ("normalized", 0.03), ("adaptive", 3.0)]
    probe = ScriptedProbe(est, script)
    chosen, counts = choose_step(probe)
    assert probe.done == done and chosen == winner
    assert all(np.isinf(c) for c, d in zip(counts, done) if d < 4)


@pytest.mark.parametrize("learning_rate, done, winner", [
    ("normalized", [4, 4, 0], 0),    # 3 level with 10: 1 is not tried, 10 kept
    ("constant", [4, 4, 4], 2),      # level counts are no reason to stop: 1 wins
    ("invscaling", [4, 4, 4], 2),
])
def test_the_descent_stops_only_under_the_schedules_it_was_measured_on(
        learning_rate, done, winner):
    """IHT's probe (10, 3, 1; the fewest mistakes win): 3 errs as often as 10 and 1
    a little less. Under 'normalized' the descent leaves 1 untried; under
    'constant' and 'invscaling', where the counts were often level and not ordered
    by the step, every step trains and the fewest wins."""
    from sklearn_sketch._step_probe import choose_step

    est = IHTClassifier(learning_rate=learning_rate)
    assert [c[1] for c in est._probe_candidates()] == [10.0, 3.0, 1.0]
    probe = ScriptedProbe(est, [(100,) * 4, (100,) * 4, (95,) * 4])
    chosen, _ = choose_step(probe)
    assert probe.done == done and chosen == winner


def test_in_threads_a_smaller_step_waits_for_the_one_above_in_an_earlier_round():
    """In rounds of threads a candidate is told only what earlier rounds did: 0.03,
    in the round of 0.1, trains though 0.1 does worse than 0.3 (and wins); in one
    thread it is not tried."""
    from sklearn_sketch._step_probe import choose_step

    est = WMSketchClassifier()
    script = [(100,) * 4, (130,) * 4, (95,) * 4, (110,) * 4, (50,) * 4, (200,) * 4]
    probe = ScriptedProbe(est, script)
    chosen, counts = choose_step(probe, n_threads=2)
    # Rounds: (1, 'adaptive'), (3, 0.3), (0.1, 0.03). 'adaptive' trains whole beside
    # the first; 3 trails the first by 2 roots after a part; 0.3 and 0.1 reach the
    # bar (360) in their last part.
    assert probe.done == [4, 1, 4, 4, 4, 4]
    assert chosen == 4 and counts == [400.0] + [np.inf] * 3 + [200.0, 800.0]
    # In one thread 'adaptive' trails the first by 2 roots after a part, too.
    probe = ScriptedProbe(est, script)
    chosen, counts = choose_step(probe)
    assert probe.done == [4, 1, 4, 4, 0, 1] and chosen == 0