"""eta0='auto': the step of fewest progressive mistakes on a probe of the first pass."""
import sys
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp

from sklearn.metrics import roc_auc_score

from sklearn_sketch import (
    AWMSketchClassifier,
    BearClassifier,
    FeatureHashingClassifier,
    IHTClassifier,
    MissionClassifier,
    TruncationClassifier,
    WMSketchClassifier,
)

sys.path.insert(0, str(Path(__file__).parent))
from _reference import model_coordinates  # noqa: E402

from sklearn_sketch import _base  # noqa: E402
from sklearn_sketch._step_probe import (  # noqa: E402
    StepProbe,
    choose_step,
    smaller_steps_above,
    train_share,
    training_order,
)

CANDIDATES = IHTClassifier._AUTO_ETA0


def wide_task(seed=0, n=3000, p=5000, nnz=60):
    """Binary rows of 60 of 5000 features, labelled by a dense random direction."""
    rng = np.random.RandomState(seed)
    w = rng.normal(size=p)
    X = sp.csr_matrix((np.ones(n * nnz), (np.repeat(np.arange(n), nnz),
                                          rng.randint(0, p, size=n * nnz))), shape=(n, p))
    X.sum_duplicates()
    return X, (X @ w > 0).astype(int)


def narrow_task(seed=0, n=3000, p=50, noise=1.0):
    """Gaussian rows, two informative columns and label noise."""
    rng = np.random.RandomState(seed)
    X = rng.normal(size=(n, p))
    return X, (X[:, 0] + 0.5 * X[:, 1] + noise * rng.normal(size=n) > 0).astype(int)


def make(kind, k, **params):
    """A heap-only model of ``k`` entries; the step probe alone (under 'normalized', the
    schedule truncation keeps by default) unless ``learning_rate`` is given."""
    params.setdefault("learning_rate", "normalized")
    if kind == "iht":
        return IHTClassifier(k, shuffle=False, random_state=0, **params)
    return TruncationClassifier(None, n_features_to_select=k, shuffle=False, random_state=0,
                                **params)


@pytest.mark.parametrize("kind", ["iht", "truncation"])
@pytest.mark.usefixtures("sparse_as_given")
def test_auto_takes_the_step_of_fewest_probe_mistakes_then_fits_with_it(kind):
    chosen = {}
    # Little label noise: the narrow task wants a larger step (3 or 10 on seeds 0 to 3;
    # with noise 1 its probe's counts are within their noise, and it keeps 1).
    for name, (X, y), k in (("wide", wide_task(), 200),
                            ("narrow", narrow_task(noise=0.25), 5)):
        # The probe: the first max(2000, n // 10) rows of the first pass (no shuffle),
        # dense columns standardized by every row's statistics, as the fit does.
        seen = X if sp.issparse(X) else sp.csr_matrix(model_coordinates(X, X, "normalized"))
        mistakes = [make(kind, k, eta0=c, max_iter=1).fit(seen[:2000], y[:2000])
                    .online_error_rate_ for c in CANDIDATES]
        expected = CANDIDATES[int(np.argmin(mistakes))]
        auto = make(kind, k, eta0="auto").fit(X, y)
        assert auto.eta0_ == expected
        fixed = make(kind, k, eta0=expected).fit(X, y)
        np.testing.assert_array_equal(auto.coef_.toarray(), fixed.coef_.toarray())
        np.testing.assert_array_equal(auto.intercept_, fixed.intercept_)
        chosen[name] = auto.eta0_
    # The two tasks want different steps: the choice is made from the data.
    assert chosen["wide"] != chosen["narrow"]


def test_partial_fit_chooses_on_its_first_call_and_keeps_the_step():
    X, y = narrow_task()
    est = IHTClassifier(5, learning_rate="normalized", random_state=0)
    est.partial_fit(X[:1000], y[:1000], classes=[0, 1])
    first = est.eta0_
    mistakes = [IHTClassifier(5, learning_rate="normalized", eta0=c, max_iter=1, random_state=0)
                .partial_fit(X[:1000], y[:1000], classes=[0, 1]).online_error_rate_
                for c in CANDIDATES]
    assert first in CANDIDATES and first == CANDIDATES[int(np.argmin(mistakes))]
    est.partial_fit(X[1000:], y[1000:])
    assert est.eta0_ == first
    # A number set later is used as given.
    est.set_params(eta0=0.5)
    assert est._sgd_params(1).eta0 == 0.5


@pytest.mark.parametrize("kind", ["iht", "truncation"])
def test_heap_only_probe_tries_the_largest_step_first_and_stops_the_trailing(kind, monkeypatch):
    # A task where 10 wins: 3 trails it by more than three roots after the first part
    # and is stopped there, and 1, below a step that erred more, is not tried.
    X, y = narrow_task(seed=2, noise=0.25)
    parts = []
    real_train_part = StepProbe.train_part

    def counted(probe, i):
        parts.append(probe.candidates[i][1])
        real_train_part(probe, i)

    monkeypatch.setattr(StepProbe, "train_part", counted)
    auto = make(kind, 5, eta0="auto").fit(X, y)
    n_parts = parts.count(10.0)
    assert parts[:n_parts] == [10.0] * n_parts and n_parts >= 3
    assert parts[n_parts:] == [3.0]
    # The same choice as every candidate trained whole.
    monkeypatch.setattr(_base, "choose_step",
                        lambda probe, n_threads=1: choose_step(probe, n_threads, False))
    whole = make(kind, 5, eta0="auto").fit(X, y)
    assert auto.eta0_ == whole.eta0_ == 10.0
    assert sorted(parts[n_parts + 1:]) == sorted([10.0, 3.0, 1.0] * n_parts)


def test_auto_step_survives_a_model_file(tmp_path):
    X, y = narrow_task()
    est = TruncationClassifier("4KB", random_state=0).fit(X, y)
    path = tmp_path / "model.skm"
    est.save(path)
    loaded = TruncationClassifier.load(path)
    assert loaded.eta0 == "auto" and loaded.eta0_ == est.eta0_
    est.partial_fit(X[:500], y[:500])
    loaded.partial_fit(X[:500], y[:500])
    np.testing.assert_array_equal(loaded.coef_.toarray(), est.coef_.toarray())


def test_auto_is_offered_where_no_number_is_needed():
    X, y = narrow_task()
    est = MissionClassifier(5, sketch_width=256, eta0="auto", random_state=0).fit(X, y)
    assert est.eta0_ in MissionClassifier._AUTO_ETA0 and est.score(X, y) > 0.7
    with pytest.raises(ValueError, match="eta0"):
        IHTClassifier(eta0="fast").fit(X, y)


def noisy_one_hot(seed=0, n=100_000, fields=5, values=30):
    """One-hot rows of 5 categorical fields, labels mostly noise (a 20% base rate
    that a few values raise): click-like data, where large steps chase the noise."""
    rng = np.random.RandomState(seed)
    codes = rng.randint(0, values, size=(n, fields))
    X = sp.csr_matrix((np.ones(n * fields), (np.repeat(np.arange(n), fields),
                                             (codes + values * np.arange(fields)).ravel())),
                      shape=(n, fields * values))
    risk = 0.15 + 0.25 * (codes[:, 0] < 3) + 0.1 * (codes[:, 1] < 5)
    return X, (rng.random_sample(n) < risk).astype(int)


@pytest.mark.parametrize("cls", [FeatureHashingClassifier, WMSketchClassifier,
                                 AWMSketchClassifier, MissionClassifier])
def test_default_steps_shrink_for_labels_that_are_mostly_noise(cls):
    # The default is 'auto': the first step of its grid unless another wins.
    first = cls._AUTO_ETA0[0]
    assert cls().get_params()["eta0"] == "auto"
    smaller = [step for step in cls._AUTO_ETA0 if step < first]
    assert smaller == sorted(smaller, reverse=True) and min(smaller) <= 0.03
    X, y = noisy_one_hot()
    noisy = cls(random_state=0).fit(X, y)
    wide = cls(random_state=0).fit(*wide_task())
    assert noisy.eta0_ < first <= wide.eta0_
    # The noisy labels' choice beats the first step on held-out rows.
    X_test, y_test = noisy_one_hot(seed=1)
    one = cls(eta0=first, random_state=0).fit(X, y)
    assert roc_auc_score(y_test, noisy.decision_function(X_test)) > roc_auc_score(
        y_test, one.decision_function(X_test))


@pytest.mark.parametrize("cls, depth", [(FeatureHashingClassifier, 1), (AWMSketchClassifier, 1),
                                        (WMSketchClassifier, 3), (MissionClassifier, 3)])
def test_a_larger_step_is_tried_only_on_a_lightly_loaded_sketch(cls, depth):
    X, y = wide_task()
    probe = X.shape[0]  # rows: all 3000 hold fewer than 500,000 non-zeros (no shuffle)
    distinct = np.unique(X[:probe].indices).size
    larger = cls._AUTO_ETA0.index(3.0)
    assert cls._AUTO_ETA0[0] < 3.0
    # Never stopped early: every count tried is the candidate's whole probe.
    unpruned = type("Unpruned", (cls,), {"_AUTO_Z": -1e9})
    light_width = -(-distinct // (cls._AUTO_LIGHT_LOAD * depth))
    for width, tried in ((light_width, True), (light_width - 1, False)):
        params = dict(sketch_width=width, sketch_depth=depth, shuffle=False, random_state=0)
        if cls is not FeatureHashingClassifier:
            params.update(memory_budget=None, n_features_to_select=10)
        _, counts = choose_step(unpruned(**params)._step_probe(X, y, classes=[0, 1]))
        assert np.isfinite(counts[0])
        if tried:
            fit = cls(eta0=3.0, max_iter=1, **params).fit(X[:probe], y[:probe])
            assert counts[larger] == round(fit.online_error_rate_ * probe)
        else:
            assert counts[larger] == np.inf


@pytest.mark.parametrize("cls", [FeatureHashingClassifier, WMSketchClassifier,
                                 AWMSketchClassifier, MissionClassifier])
@pytest.mark.parametrize("rows", [2500, 12_000])
def test_the_first_pass_goes_on_from_the_probe_as_if_the_step_was_given(cls, rows):
    # 12,000 rows probe 2000 and go on from there; 2500 rows probe all but 500 of them
    # (a tenth of 12,000 is 1200: the first rows until 500,000 non-zeros).
    X, y = noisy_one_hot(n=rows)
    auto = cls(memory_budget="64KB", max_iter=2, random_state=0).fit(X, y)
    fixed = cls(memory_budget="64KB", max_iter=2, random_state=0, eta0=auto.eta0_).fit(X, y)
    for a, b in zip(auto._state.sketches, fixed._state.sketches):
        np.testing.assert_array_equal(a.table, b.table)
    for a, b in zip(auto._state.heaps, fixed._state.heaps):
        np.testing.assert_array_equal(np.sort(a.keys()), np.sort(b.keys()))
    np.testing.assert_array_equal(auto.intercept_, fixed.intercept_)
    assert auto.online_error_rate_ == fixed.online_error_rate_
    assert auto.t_ == fixed.t_ and auto.n_iter_ == fixed.n_iter_ == 2
    if hasattr(auto, "predict_with_"):
        np.testing.assert_array_equal(auto._state.read_errors, fixed._state.read_errors)
    np.testing.assert_array_equal(auto.decision_function(X[:200]),
                                  fixed.decision_function(X[:200]))


@pytest.mark.parametrize("cls", [FeatureHashingClassifier, MissionClassifier, BearClassifier])
def test_a_lean_probe_keeps_no_model_and_ends_on_the_same_one(cls, monkeypatch):
    # A model past LEAN_BYTES: no candidate's model is kept (four at once took 1.27 GB
    # for a 336 MB model), the first pass trains the probe's rows again from scratch,
    # and the fit ends on the model of a probe that kept them.
    import sklearn_sketch._step_probe as step_probe

    X, y = noisy_one_hot(n=12_000)
    y = y + 2 * (X[:, 7].toarray().ravel() > 0)  # three classes: three models
    kept = cls(max_iter=2, random_state=0).fit(X, y)
    seen = []
    original = step_probe.choose_step

    def watched(probe, *args, **kwargs):
        result = original(probe, *args, **kwargs)
        seen.append((probe.lean, dict(probe.states)))
        return result

    monkeypatch.setattr(step_probe, "LEAN_BYTES", 0)
    monkeypatch.setattr(_base, "choose_step", watched)
    lean = cls(max_iter=2, random_state=0).fit(X, y)
    assert seen and seen[0] == (True, {})
    assert (lean.learning_rate_, lean.eta0_) == (kept.learning_rate_, kept.eta0_)
    for a, b in zip(lean._state.sketches, kept._state.sketches):
        np.testing.assert_array_equal(a.table, b.table)
    np.testing.assert_array_equal(lean.intercept_, kept.intercept_)
    assert lean.t_ == kept.t_ and lean.online_error_rate_ == kept.online_error_rate_
    np.testing.assert_array_equal(lean.decision_function(X[:300]),
                                  kept.decision_function(X[:300]))


@pytest.mark.parametrize("budget, task", [("64KB", "noisy one-hot"), ("256KB", "wide")])
def test_bear_goes_on_from_its_probe_where_its_batches_end(budget, task):
    """Under a budget BEAR's batches end early where their non-zeros would outgrow
    the curvature pairs' room, so they do not start every batch_size rows: the
    probe cuts the pass where they start, and the first pass goes on from the
    probe as if the step had been given (a smaller step on the noisy labels,
    the first one on the wide rows)."""
    X, y = noisy_one_hot(n=12_000) if task == "noisy one-hot" else wide_task(n=12_000)
    auto = BearClassifier(memory_budget=budget, max_iter=1, random_state=0).fit(X, y)
    fixed = BearClassifier(memory_budget=budget, max_iter=1, random_state=0,
                           eta0=auto.eta0_).fit(X, y)
    room = auto.history_.capacity - 1
    assert room < 64 * np.diff(X.indptr).max()  # batches of 64 rows do not fit
    assert (auto.eta0_ < 3.0) == (task == "noisy one-hot")
    for a, b in zip(auto._state.sketches, fixed._state.sketches):
        np.testing.assert_array_equal(a.table, b.table)
    np.testing.assert_array_equal(auto.intercept_, fixed.intercept_)
    assert auto.online_error_rate_ == fixed.online_error_rate_
    np.testing.assert_array_equal(auto.decision_function(X[:500]),
                                  fixed.decision_function(X[:500]))


def test_the_probe_in_threads_chooses_as_on_one():
    X, y = noisy_one_hot(n=30_000)
    one = FeatureHashingClassifier(memory_budget="64KB", max_iter=1, random_state=0).fit(X, y)
    two = FeatureHashingClassifier(memory_budget="64KB", max_iter=1, random_state=0,
                                   n_jobs=2).fit(X, y)
    assert one.eta0_ == two.eta0_ < FeatureHashingClassifier._AUTO_ETA0[0]
    again = FeatureHashingClassifier(memory_budget="64KB", max_iter=1, random_state=0,
                                     n_jobs=2).fit(X, y)
    np.testing.assert_array_equal(two._state.sketches[0].table, again._state.sketches[0].table)


def _probe_parts(probe):
    """Each candidate's count after each part it trained, as ``choose_step`` trains."""
    parts, train_part = {}, probe.train_part

    def logged(i):
        train_part(i)
        parts.setdefault(i, []).append(probe.mistakes[i])
    probe.train_part = logged
    return parts


@pytest.mark.usefixtures("sparse_as_given")
def test_bear_stops_a_candidate_that_trails_the_first_and_chooses_as_without(monkeypatch):
    X, y = wide_task(n=20_000)
    z = BearClassifier._AUTO_RACE_Z
    assert z == BearClassifier._AUTO_Z
    runs = {}
    for race in (z, None):
        monkeypatch.setattr(BearClassifier, "_AUTO_RACE_Z", race)
        probe = BearClassifier(random_state=0)._step_probe(X, y, classes=[0, 1])
        parts = _probe_parts(probe)
        winner, counts = choose_step(probe)
        fit = BearClassifier(random_state=0, max_iter=1).fit(X, y)
        runs[race] = winner, parts, fit
    (winner, raced, fit), (plain_winner, plain, plain_fit) = runs[z], runs[None]
    first = raced[0]
    assert winner == plain_winner == 0 and plain[0] == first and len(first) == 4
    stopped_early, skipped = 0, 0
    steps = BearClassifier._AUTO_ETA0  # 3, then smaller steps, largest first
    for i in range(1, len(steps)):
        # A smaller step is not tried once the one above it (itself not the first)
        # made no fewer mistakes than the step above that on the rows both trained.
        above = raced.get(i - 1, [])
        if i >= 2 and (not above or above[-1] >= raced[i - 2][len(above) - 1]):
            assert i not in raced
            skipped += 1
            continue
        # The same rows give the same counts; racing only cuts the run short, at the
        # first part (but the last) where the candidate trailed by z sqrt(first).
        assert raced[i] == plain[i][:len(raced[i])]
        trailing = [p for p, count in enumerate(plain[i][:3])
                    if count - first[p] >= z * np.sqrt(first[p])]
        assert len(raced[i]) == (trailing[0] + 1 if trailing else len(plain[i]))
        stopped_early += len(raced[i]) < len(plain[i])
    assert stopped_early + skipped >= 2
    # The fit goes on from the same model as without racing.
    assert fit.eta0_ == plain_fit.eta0_
    for a, b in zip(fit._state.sketches, plain_fit._state.sketches):
        np.testing.assert_array_equal(a.table, b.table)
    np.testing.assert_array_equal(fit.intercept_, plain_fit.intercept_)


def test_the_choice_keeps_the_first_step_unless_another_is_clearly_better():
    pick = WMSketchClassifier._auto_step_index
    assert WMSketchClassifier._AUTO_Z == 2.0
    inf = float("inf")
    assert pick([100, 90, 70, 80]) == 2      # 70 < 100 - 2 * sqrt(100)
    assert pick([100, 85, 90, inf]) == 0     # within the first's noise
    assert pick([100, 70, 70, 90]) == 1      # ties go to the earlier
    assert pick([inf, 50, inf, inf]) == 1    # the first diverged
    assert pick([inf, inf, inf, inf]) is None


@pytest.mark.parametrize("share", [1, 2, 3])
@pytest.mark.usefixtures("sparse_as_given")
def test_a_share_of_the_probe_counts_mistakes_on_that_share_of_its_rows(share):
    """What each of ``share`` partitions probes (sklearn_sketch.dask sums them): the
    first 2000 / share rows of the pass (no shuffle), each candidate's progressive
    mistakes there, on the whole share."""
    X, y = wide_task()
    probe = make("iht", 200, eta0="auto")._step_probe(X, y, classes=[0, 1], share=share)
    counts = train_share(probe)
    rows = -(-2000 // share)
    assert probe.rows == rows and np.isfinite(counts).all()
    for step, count in zip(CANDIDATES, counts):
        fit = make("iht", 200, eta0=step, max_iter=1).fit(X[:rows], y[:rows])
        assert count == round(fit.online_error_rate_ * rows)
    # The first candidate's model is kept, and the best other's, trained on those rows.
    best = 1 + int(np.argmin(counts[1:]))
    assert probe.kept(0)[1:3] == (rows, counts[0]) and probe.kept(best)[2] == counts[best]
    assert all(probe.kept(i) is None for i in set(range(len(counts))) - {0, best})
    if share == 1:  # the whole probe chooses as a fit does
        chosen = CANDIDATES[IHTClassifier._auto_step_index(counts)]
        assert chosen == make("iht", 200, eta0="auto").fit(X, y).eta0_


def test_a_share_stops_candidates_that_trail_or_descend_but_none_at_the_bar():
    """A partition's share of the probe (sklearn_sketch.dask sums the shares' counts)
    stops, on its own counts, a candidate that trails the best trained before it
    after a part and
    the smaller steps past its best, as one probe does; but never at the bar, where
    one probe stops the losers: a candidate that reaches the share's bar may still
    win summed."""
    X, y = narrow_task(n=20_000, noise=0.1)
    est = FeatureHashingClassifier(memory_budget="64KB", random_state=0)
    whole = est._step_probe(X, y, classes=[0, 1])
    _, counts = choose_step(whole)
    # The whole probe stopped some candidates before the end of its rows.
    assert any(not np.isfinite(c) and whole.done[i] < len(whole.parts)
               for i, c in enumerate(counts))
    for half in (slice(0, 10_000), slice(10_000, None)):
        share = est._step_probe(X[half], y[half], classes=[0, 1], share=2)
        plain = est._step_probe(X[half], y[half], classes=[0, 1], share=2)
        parts = _probe_parts(plain)
        every = choose_step(plain, stop_losers=False)[1]  # each candidate whole
        shared = train_share(share)
        first = parts[0]
        above = smaller_steps_above(share.candidates)
        for i, count in enumerate(shared):
            if np.isfinite(count):  # trained whole, never stopped at the bar
                assert share.done[i] == len(share.parts) and count == every[i]
                continue
            if i not in parts:  # lost before its probe (not light)
                assert share.done[i] == 0
                continue
            done = share.done[i]
            trailed = False
            if done > 0:
                # The fewest mistakes after that part of those trained whole before it.
                before = training_order(share.candidates)
                before = before[:before.index(i)]
                best = min(parts[j][done - 1] for j in before if np.isfinite(shared[j]))
                trailed = parts[i][done - 1] - best >= 2 * np.sqrt(best)
            previous = above.get(i, 0)
            skipped = done == 0 and previous != 0 and (
                not np.isfinite(shared[previous]) and share.done[previous] < len(share.parts)
                or every[previous] >= every[above[previous]])
            assert trailed or skipped, (i, done, parts[i], first)
        # Some candidates stopped early (the point of it).
        assert sum(share.done) < sum(plain.done)


@pytest.mark.parametrize("kind", ["iht", "truncation"])
@pytest.mark.usefixtures("sparse_as_given")
def test_a_copy_to_be_averaged_goes_on_from_its_probe_with_a_scaled_step(kind):
    """One of w copies that sklearn_sketch.dask averages (``_eta0_scale = w``): the
    probe's rows train with the step it chose, the rest of the pass with w times it,
    as two partial_fits with those steps do."""
    X, y = wide_task()
    auto = make(kind, 200, eta0="auto", max_iter=1)
    auto._eta0_scale = 4
    auto.fit(X, y)
    step = make(kind, 200, eta0="auto").fit(X, y).eta0_
    assert auto.eta0_ == 4 * step and "_eta0_scale" not in auto.__dict__
    two_steps = make(kind, 200, eta0=step).partial_fit(X[:2000], y[:2000], classes=[0, 1])
    two_steps.set_params(eta0=4 * step).partial_fit(X[2000:], y[2000:])
    np.testing.assert_array_equal(auto.coef_.toarray(), two_steps.coef_.toarray())
    np.testing.assert_array_equal(auto.intercept_, two_steps.intercept_)
