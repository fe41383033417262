"""memory_budget is the whole estimator's bytes: memory_bytes_ <= budget, always."""
import numpy as np
import pytest
import scipy.sparse as sp

from sklearn_sketch import (
    AWMSketchClassifier,
    BearClassifier,
    BearRegressor,
    FeatureHashingClassifier,
    IHTClassifier,
    IHTRegressor,
    MissionClassifier,
    SpaceSavingClassifier,
    TruncationClassifier,
    WMSketchClassifier,
)
from sklearn_sketch._base import heap_bytes, sketch_bytes
from sklearn_sketch._bear_fast import LBFGSHistory
from sklearn_sketch._names import NAME_OVERHEAD

BUDGETED = {
    "wm": lambda b: WMSketchClassifier(b, max_iter=1, random_state=0),
    "awm": lambda b: AWMSketchClassifier(b, max_iter=1, random_state=0),
    "truncation": lambda b: TruncationClassifier(b, max_iter=1, random_state=0),
    "probabilistic": lambda b: TruncationClassifier(b, truncation="probabilistic", max_iter=1,
                                                    random_state=0),
    "space_saving": lambda b: SpaceSavingClassifier(b, max_iter=1, random_state=0),
    "mission": lambda b: MissionClassifier(memory_budget=b, max_iter=1, random_state=0),
    "hashing": lambda b: FeatureHashingClassifier(memory_budget=b, max_iter=1, random_state=0),
    "iht": lambda b: IHTClassifier(memory_budget=b, max_iter=1, random_state=0),
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
            + (est.history_.memory_bytes if hasattr(est, "history_") else 0)
            + sum(getattr(est, name).nbytes for name in ("feature_mean_", "feature_scale_",
                                                         "scaled_keys_", "key_scales_")
                  if hasattr(est, name)))


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
    # Hard thresholding: a capacity given replaces the budget; by default the budget.
    est = IHTClassifier(10, memory_budget="8KB", max_iter=1, random_state=0).fit(X, y)
    assert est.n_features_to_select_ == 10
    assert IHTClassifier(max_iter=1, random_state=0).fit(X, y).n_features_to_select_ == (
        IHTClassifier(memory_budget="4MB", max_iter=1, random_state=0).fit(X, y)
        .n_features_to_select_) > 100_000
    reg = IHTRegressor(memory_budget="8KB", max_iter=1, random_state=0).fit(X, X[:, 0])
    assert reg.memory_bytes_ <= 8192 < heap_bytes(reg.n_features_to_select_ + 20)


def _history_bytes(history_size, n_models, capacity):
    history = LBFGSHistory(history_size, n_models)
    history.reserve(capacity)
    return history.memory_bytes


# BEAR pays its curvature pairs first: room for history_size pairs on the largest
# active set batch_size rows of the first data form (about 0.5 KB a coordinate for 3
# classes, 2 KB for 20), but no more than a quarter of the budget: batches then end
# early. Here 1 MB caps every class count, 4 MB caps 20 classes, 6 MB none.
@pytest.mark.parametrize("n_classes", [2, 3, 20])
@pytest.mark.parametrize("budget", ["1MB", "4MB", 6_000_000, "16MB"])
def test_bear_memory_bytes_within_budget_history_included(n_classes, budget):
    X, y = _data(n_classes, n_samples=200)
    # Sparse: the pairs' room follows the rows' lengths (dense columns would be
    # standardized, every row as long as the data is wide).
    # Batches of 64 (the classifier's default is 32): the caps below are theirs.
    est = BearClassifier(memory_budget=budget, history_size=5, max_iter=2, batch_size=64,
                         random_state=0).fit(sp.csr_matrix(X), y)
    n_bytes = {"1MB": 2**20, "4MB": 2**22, "16MB": 2**24}.get(budget, budget)
    assert est.memory_bytes_ == _explicit_bytes(est) <= n_bytes
    assert est.memory_bytes_ > 0.9 * n_bytes
    # The pairs' room (training reads the sketch, the default): the largest 64 rows
    # but at most 8 rows of the median length, plus the intercept, or the most a
    # quarter of the budget holds.
    lengths = np.count_nonzero(X, axis=1)
    wanted = min(np.sort(lengths)[-64:].sum(), int(8 * np.median(lengths))) + 1
    capacity = est.history_.capacity
    K = 1 if n_classes == 2 else n_classes
    assert est.history_.history_size == 5  # rows of about 15: five pairs fit
    if _history_bytes(5, K, wanted) > n_bytes // 4:
        assert _history_bytes(5, K, capacity) <= n_bytes // 4 < _history_bytes(5, K, capacity + 1)
    else:
        assert capacity == wanted
    # Batches of about 8 rows of about 15 non-zeros: several times as many as of 64.
    assert est.history_.n_batches >= 3 * 2 * -(-200 // 64)
    # With the paper's heap reads the room is the largest 64 rows' (or the quarter's).
    heap = BearClassifier(memory_budget=budget, history_size=5, max_iter=1, batch_size=64,
                          predict_with="heap", random_state=0).fit(sp.csr_matrix(X), y)
    largest = np.sort(lengths)[-64:].sum() + 1
    if _history_bytes(5, K, largest) <= n_bytes // 4:
        assert heap.history_.capacity == largest
    else:
        assert heap.history_.capacity < largest
    # Training on more of the same keeps the shape and the bound.
    est.partial_fit(sp.csr_matrix(X[:100]), y[:100])
    assert est.memory_bytes_ == _explicit_bytes(est) <= n_bytes
    assert est.history_.capacity == capacity


def test_bear_budget_keeps_fewer_pairs_when_the_longest_row_needs_it():
    """Pairs on a 3,000-non-zero row for 20 classes: about 0.9 KB a coordinate with 5
    pairs, 0.2 KB with 1. In 8 MB (a quarter: 2 MB) only 1 or 2 pairs fit."""
    rng = np.random.RandomState(0)
    X = sp.random(100, 10_000, density=0.002, format="lil", random_state=rng)
    X[0, :3000] = 1.0
    X = X.tocsr()
    y = np.arange(100) % 20
    # With the paper's heap reads the room is for the largest batch, long row included.
    est = BearClassifier(memory_budget="8MB", history_size=5, max_iter=1,
                         predict_with="heap", random_state=0).fit(X, y)
    kept = est.history_.history_size
    assert 1 <= kept < 5
    assert _history_bytes(kept, 20, 3001) <= 2**21 < _history_bytes(kept + 1, 20, 3001)
    assert est.history_.capacity >= 3001
    assert est.memory_bytes_ == _explicit_bytes(est) <= 2**23
    # Training on the sketch's reads, the room is for 8 rows of the median length
    # (about 20 non-zeros): five pairs of it fit, and the long row steps alone.
    sketch = BearClassifier(memory_budget="8MB", history_size=5, max_iter=1,
                            random_state=0).fit(X, y)
    median = int(8 * np.median(np.diff(X.indptr)))
    assert sketch.history_.history_size == 5
    assert sketch.history_.capacity == median + 1 < 3001
    assert sketch.memory_bytes_ == _explicit_bytes(sketch) <= 2**23


def test_bear_history_size_auto_keeps_one_pair_under_a_budget_and_five_without():
    X, y = _data(3, n_samples=200)
    X = sp.csr_matrix(X)  # rows of about 15 non-zeros
    assert BearClassifier(max_iter=1).fit(X, y).history_.history_size == 5
    budgeted = BearClassifier(memory_budget="1MB", max_iter=1).fit(X, y)
    assert budgeted.history_.history_size == 1
    # One pair leaves the batches more room than five in the same quarter, where the
    # quarter caps five (batches of 64 rows; 32 fit with five; heap reads, whose room
    # is for whole batches).
    one = BearClassifier(memory_budget="1MB", batch_size=64, predict_with="heap",
                         max_iter=1).fit(X, y)
    five = BearClassifier(memory_budget="1MB", history_size=5, batch_size=64,
                          predict_with="heap", max_iter=1).fit(X, y)
    assert one.history_.history_size == 1
    assert one.history_.capacity > five.history_.capacity
    assert budgeted.memory_bytes_ == _explicit_bytes(budgeted) <= 2**20
    # A number given is kept, budget or not.
    assert BearClassifier(memory_budget="1MB", history_size=3,
                          max_iter=1).fit(X, y).history_.history_size == 3


def test_bear_budget_steps_on_rows_longer_than_it_reserved_without_growing():
    X, y = _data(3, n_samples=200)
    est = BearRegressor(memory_budget="1MB", batch_size=8, random_state=0).fit(
        sp.csr_matrix(X), y)  # rows of about 15 non-zeros
    before, capacity = est.memory_bytes_, est.history_.capacity
    dense = np.ones((16, X.shape[1]))
    assert X.shape[1] > capacity - 1  # every dense row is longer than the pairs' room
    predicted = est.predict(dense)
    est.partial_fit(dense, np.full(16, 5.0))
    assert est.history_.capacity == capacity
    assert est.memory_bytes_ == before == _explicit_bytes(est)
    # The long rows trained: their predictions moved towards the target.
    assert np.abs(est.predict(dense) - 5.0).mean() < np.abs(predicted - 5.0).mean()


def test_bear_budget_too_small_for_its_pairs_says_so():
    X, y = _data(20, n_samples=60)
    K = len(np.unique(y))
    least = _history_bytes(1, K, 2)
    with pytest.raises(ValueError, match=r"memory_budget=400 .*curvature pairs.* a pair of "
                                         rf"one feature and the intercept for {K} model\(s\) "
                                         rf"takes {least} bytes; give at least \d+KB"):
        BearClassifier(memory_budget=400).fit(X, y)
    BearClassifier(memory_budget=-(-4 * least // 1024) * 1024 + 2**16, max_iter=1).fit(X, y)


def test_bear_budget_below_one_pair_on_the_longest_row_still_fits():
    """A 3,000-non-zero row for 20 classes needs about 0.7 MB for one pair, more than
    a quarter of 2 MB: the pairs keep their quarter and that row steps alone."""
    X = sp.lil_matrix((40, 5000))
    X[:, :10] = 1.0
    X[0, :3000] = 1.0
    y = np.arange(40) % 20
    assert _history_bytes(1, 20, 3001) > 2**19
    est = BearClassifier(memory_budget="2MB", max_iter=2, random_state=0).fit(X.tocsr(), y)
    assert est.history_.capacity - 1 < 3000
    assert est.history_.memory_bytes <= 2**19
    assert est.memory_bytes_ == _explicit_bytes(est) <= 2**21


def test_bear_budgeted_model_learns():
    X, y = _data(3, n_samples=3000, n_features=200, seed=1)
    est = BearClassifier(memory_budget="1MB", random_state=0).fit(X[:2000], y[:2000])
    assert est.memory_bytes_ <= 2**20
    assert est.score(X[2000:], y[2000:]) > 0.55  # chance is about 1/3


def _token_data(n_classes, n_samples=300, seed=0):
    """Token lists: random words of 3 to 14 letters, some of them telling the class."""
    rng = np.random.RandomState(seed)
    words = ["".join(rng.choice(list("abcdéfgh"), size=rng.randint(3, 15)))
             for _ in range(3000)]
    y = rng.randint(0, n_classes, size=n_samples)
    docs = [[words[j] for j in rng.randint(0, len(words), size=12)]
            + [words[c * 7 + j] for j in rng.randint(0, 7, size=3)] for c in y]
    return docs, y


def _names_bytes_by_hand(est):
    # An int64 key and a uint32 end each.
    return sum(8 + 4 + len(name.encode("utf-8")) for name in est._feature_names.values())


@pytest.mark.parametrize("name", sorted(set(BUDGETED) - {"hashing"}))
@pytest.mark.parametrize("n_classes", [2, 20])
@pytest.mark.parametrize("budget", ["16KB", "1MB"])
def test_names_of_raw_input_fit_inside_the_budget(name, n_classes, budget):
    # The names of the heap keys are part of the estimator: the budget reserves
    # room for them when the first data carries names, and the heaps are named.
    docs, y = _token_data(n_classes)
    est = BUDGETED[name](budget).set_params(max_iter=2).fit(docs, y)
    n_bytes = {"16KB": 2**14, "1MB": 2**20}[budget]
    names = est._feature_names
    assert est.memory_bytes_ == _explicit_bytes(est) + _names_bytes_by_hand(est) <= n_bytes
    # The shape fills the budget with room for a name per heap entry (a worst
    # case: the heaps of different classes often share keys, named once).
    n_entries = len(est.heaps_) * est.n_features_to_select_
    assert (est._model_bytes() + n_entries * est._name_bytes + est._standardization_bytes()
            > 0.9 * n_bytes)
    assert est._name_bytes >= NAME_OVERHEAD + 16
    heap_keys = np.unique(np.concatenate([h.keys() for h in est.heaps_]))
    assert set(names) <= set(heap_keys.tolist())
    assert len(names) >= 0.9 * heap_keys.size
    # Names stay inside the budget through further training on new words.
    more, y_more = _token_data(n_classes, seed=1)
    est.partial_fit(more, y_more)
    assert est.memory_bytes_ == _explicit_bytes(est) + _names_bytes_by_hand(est) <= n_bytes


def test_names_that_outgrow_their_room_are_left_out_with_a_warning():
    # Room is reserved from the first data's names (short here); much longer
    # names later cannot all be kept in the budget: the keys stay, the
    # estimator says how many names it left out, and the bound holds.
    docs, y = _token_data(2)
    est = MissionClassifier(memory_budget="16KB", random_state=0).fit(docs, y)
    rng = np.random.RandomState(3)
    long_words = ["long-feature-name-" * 4 + str(i) for i in range(200)]
    long_docs = [[long_words[j] for j in rng.randint(0, 200, size=10)] for _ in y]
    with pytest.warns(UserWarning, match=r"name\(s\) were not kept .*memory_budget") as seen:
        for _ in range(3):
            est.partial_fit(long_docs, y)
    # Once per model, not at every chunk of a stream.
    assert sum("were not kept" in str(w.message) for w in seen) == 1
    assert est.memory_bytes_ == _explicit_bytes(est) + _names_bytes_by_hand(est) <= 2**14
    names = est.selected_features_.names
    assert any(n is None for n in names)
    kept = [n for n in names if n is not None]
    assert kept and all(n in long_words or n in sum(docs, []) for n in kept)


def test_streamed_names_fit_inside_the_budget(tmp_path):
    # A Vowpal Wabbit stream names its keys after each chunk; the first chunk's
    # names set the room the budget keeps for them.
    from sklearn_sketch.io import VowpalWabbitReader, partial_fit_stream

    docs, y = _token_data(2, n_samples=600)
    path = tmp_path / "train.vw"
    path.write_text("".join(f"{2 * c - 1} |w {' '.join(doc)}\n" for doc, c in zip(docs, y)))
    est = MissionClassifier(memory_budget="16KB", random_state=0)
    partial_fit_stream(est, VowpalWabbitReader(path, chunk_rows=200, keep_names=True),
                       classes=[-1, 1], epochs=2)
    assert est.memory_bytes_ == _explicit_bytes(est) + _names_bytes_by_hand(est) <= 2**14
    names = est.selected_features_.names
    assert all(n is not None and n.startswith("w^") for n in names)


def test_bear_regressor_keeps_the_largest_batch_room_under_a_budget():
    # The median-rows room was measured on classification only.
    X, y = _data(3, n_samples=200)
    X = sp.csr_matrix(X)  # rows of about 15 non-zeros
    lengths = np.diff(X.indptr)
    reg = BearRegressor(memory_budget="4MB", batch_size=64, max_iter=1, random_state=0).fit(
        X, y.astype(float))
    assert reg.history_.capacity == np.sort(lengths)[-64:].sum() + 1
    clf = BearClassifier(memory_budget="4MB", batch_size=64, max_iter=1, random_state=0).fit(
        X, y)
    assert clf.history_.capacity == int(8 * np.median(lengths)) + 1


@pytest.mark.parametrize("make", [
    lambda: FeatureHashingClassifier(random_state=0),
    lambda: MissionClassifier(random_state=0, eta0=0.1, learning_rate="normalized"),
    lambda: AWMSketchClassifier(memory_budget="64MB", random_state=0),
])
def test_a_model_past_the_machines_memory_is_refused_before_it_is_made(make, monkeypatch):
    """The tables are zeroed lazily, so a model of many classes larger than the
    machine would be killed part way, without a word: fit refuses it first, saying
    what it would take, and leaves the estimator unfitted."""
    from sklearn_sketch import _base

    X = np.random.default_rng(0).random((300, 4))
    y = np.arange(300) % 100  # 100 classes
    est = make()
    est.fit(X[:40], y[:40] % 2)  # a model of one class fits anywhere
    params = est.get_params()
    if params.get("memory_budget") is not None:
        need = _base.parse_memory_budget(params["memory_budget"])
    else:
        width, depth, capacity = est._model_shape(100)
        need = 100 * ((sketch_bytes(width, depth or 1) if width else 0)
                      + (heap_bytes(capacity, est._store.heap_aux) if capacity else 0))
    monkeypatch.setattr(_base, "physical_memory", lambda: int(need / 0.75) - 1)
    fresh = make()
    what = ("memory_budget='64MB'" if params.get("memory_budget") else
            r"100 models \(one a class\) of [\d.]+ MiB take [\d.]+ [MG]iB")
    with pytest.raises(MemoryError, match=rf"{type(fresh).__name__}: {what}: more than 75% "
                                          r"of this machine's [\d.]+ [MG]iB of memory\. "
                                          r"Give a"):
        fresh.fit(X, y)
    assert not hasattr(fresh, "_state")
    monkeypatch.setattr(_base, "physical_memory", lambda: int(need / 0.75) + 1)
    assert make().fit(X, y).memory_bytes_ <= need + 2**20
    monkeypatch.setattr(_base, "physical_memory", lambda: None)  # the system does not say
    make().fit(X, y)
