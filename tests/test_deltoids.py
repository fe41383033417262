"""RelativeDeltoids and its exact reference."""
import numpy as np
import pytest
from sklearn.exceptions import NotFittedError

from sklearn_sketch import KmerVectorizer
from sklearn_sketch._heap_counts import HeapCounts
from sklearn_sketch.deltoids import (
    CountMinDeltoids,
    ExactDeltoids,
    RelativeDeltoids,
    item_occurrences,
)


def streams(seed=0, n=40_000, vocabulary=2_000):
    """Zipf-like common items in both streams; 'spike' 20x more frequent in A, rare overall."""
    rng = np.random.default_rng(seed)
    p = 1.0 / np.arange(1, vocabulary + 1)
    common = np.array([f"w{i}" for i in range(vocabulary)])[rng.choice(vocabulary, 2 * n,
                                                                        p=p / p.sum())]
    a = common[:n].tolist() + ["spike"] * 100
    b = common[n:].tolist() + ["spike"] * 5
    return a, b


def test_a_planted_deltoid_is_found_in_a_small_budget():
    a, b = streams()
    model = RelativeDeltoids("16KB", random_state=0).fit(a, b)
    assert model.memory_bytes_ <= 16 * 1024
    table = model.deltoids_
    assert table["item"].iloc[0] == "spike"
    assert table["log_ratio"].iloc[0] > np.log(8)  # 20x; its 5 occurrences in B are noise here


def test_the_planted_deltoid_survives_where_count_min_loses_its_counts():
    a, b = streams()
    ours = RelativeDeltoids("8KB", random_state=0).fit(a, b)
    count_min = CountMinDeltoids("8KB", random_state=0).fit(a, b)
    assert ours.memory_bytes_ <= 8 * 1024 and count_min.memory_bytes_ <= 8 * 1024
    assert ours.deltoids_["item"].iloc[0] == "spike"
    # Its 105 occurrences drown in the Count-Min cells it shares: a 20x ratio reads < 4x.
    spike = count_min.deltoids_.set_index("item")
    assert "spike" not in spike.index or spike.loc["spike", "log_ratio"] < np.log(4)
    # With room, Count-Min counts it right too (the comparison is fair).
    roomy = CountMinDeltoids("1MB", random_state=0).fit(a, b).deltoids_.set_index("item")
    assert roomy.loc["spike", "log_ratio"] > np.log(10)


def test_short_item_names_are_reserved_at_their_length_and_kept():
    """Names of 2 to 5 bytes: the budget reserves a quarter more than their mean, at
    least 8 bytes (not the 16 of estimators whose features may be n-grams), so more
    entries fit, every name is kept, and the real bytes stay within the budget."""
    import warnings

    from sklearn_sketch._base import heap_bytes
    from sklearn_sketch._names import NAME_OVERHEAD

    a, b = streams(seed=3)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a name left out would warn
        model = RelativeDeltoids("32KB", random_state=0).fit(a, b)
    assert model.memory_bytes_ <= 32 * 1024
    capacity = model.estimator_.n_features_to_select_
    assert len(model.estimator_.heaps_[0]) == capacity
    assert len(model.estimator_.selected_features_.names) == capacity
    assert all(name is not None for name in model.estimator_.selected_features_.names)
    # The heap's share holds each entry with 8 bytes of name, not 16.
    share = 0.85 * (32 * 1024 - 2 * model.counts_a_.memory_bytes)
    entry = NAME_OVERHEAD + model.heap_counts_.entry_bytes
    assert heap_bytes(capacity) + capacity * (entry + 8) <= share
    assert heap_bytes(capacity) + capacity * (entry + 16) > share


def test_ratio_estimates_follow_exact_counts():
    a, b = streams(seed=1)
    model = RelativeDeltoids("256KB", random_state=0).fit(a, b)
    exact = ExactDeltoids(min_count=0).fit(a, b).deltoids_.set_index("item")
    joined = model.deltoids_.merge(exact, left_on="item", right_index=True,
                                   suffixes=("", "_exact"))
    assert len(joined) >= 50
    frequent = joined[(joined.count_a_exact + joined.count_b_exact) >= 200]
    np.testing.assert_allclose(frequent.count_a, frequent.count_a_exact, rtol=0.1, atol=5)
    np.testing.assert_allclose(frequent.log_ratio, frequent.log_ratio_exact, atol=0.25)
    # Exact counts are exact.
    assert exact.loc["spike", "count_a"] == 100 and exact.loc["spike", "count_b"] == 5


def test_counts_of_a_stream_in_one_chunk_are_exact():
    a, b = streams(seed=2)
    model = RelativeDeltoids("32KB", min_count=0, random_state=0).fit(a, b)
    assert model.memory_bytes_ <= 32 * 1024
    table = model.deltoids_.set_index("item")
    exact = ExactDeltoids(min_count=0).fit(a, b).deltoids_.set_index("item")
    assert len(table) >= 100
    for column in ("count_a", "count_b", "log_ratio"):
        np.testing.assert_allclose(table[column], exact.loc[table.index, column], rtol=1e-6)


def test_heap_counts_follow_a_changing_heap():
    # Reference: an item entering the heap starts from the estimate and then counts
    # every occurrence exactly, chunk after chunk, until it leaves.
    # A total (here the chunk's size) accumulates the same way, from the estimate's.
    rng = np.random.default_rng(0)
    counts, truth, heap = HeapCounts(2, n_totals=1), {}, set()
    for _ in range(6):
        new_heap = set(rng.choice(50, 20, replace=False).tolist())
        a, b = rng.integers(0, 60, 500), rng.integers(0, 60, 300)
        truth = {k: truth.get(k, [7.0, 3.0, 100.0]) for k in new_heap}
        for k in new_heap:
            truth[k] = [truth[k][0] + (a == k).sum(), truth[k][1] + (b == k).sum(),
                        truth[k][2] + a.size]
        entered = counts.update(sorted(heap), sorted(new_heap), [a, b],
                                lambda keys: np.tile([7.0, 3.0, 100.0], (len(keys), 1)),
                                totals=[a.size])
        assert entered == len(new_heap - heap)
        heap = new_heap
        keys = np.array(sorted(heap), dtype=np.int64)
        np.testing.assert_array_equal(counts.query(keys[::-1], keys),
                                      [truth[k] for k in keys[::-1]])
    # The keys are the heap's: an item costs its counts only.
    assert counts.entry_bytes == 4 * 3
    assert counts.nbytes == 20 * counts.entry_bytes
    with pytest.raises(KeyError):
        counts.query([99], keys)
    # Keys that are not the heap's the counts follow are refused, not misread.
    moved = sorted(heap - {min(heap)} | {99})
    with pytest.raises(ValueError, match="not the heap keys these counts follow"):
        counts.query(moved[:1], moved)
    with pytest.raises(ValueError, match="previous_keys are not the heap keys"):
        counts.update(moved, moved, [a, b], lambda keys: np.zeros((len(keys), 3)))


def late_streams(n=20_000):
    """streams() with 'late' 30x more frequent in A, at the end of both."""
    a, b = streams(n=n, seed=4)
    return a + ["late"] * 60, b + ["late"] * 2


def test_recount_counts_every_heap_item_exactly_and_orders_by_log_ratio():
    a, b = late_streams()
    model = RelativeDeltoids("16KB", min_count=0, chunk_items=2_000, random_state=0).fit(a, b)
    exact = ExactDeltoids(min_count=0).fit(a, b).deltoids_.set_index("item")
    before = model.deltoids_.set_index("item")
    assert not model.exact_counts_
    assert (before.count_a + before.count_b
            < exact.loc[before.index, "count_a"] + exact.loc[before.index, "count_b"]).any()
    weights = model.estimator_.selected_features_.weights.copy()
    chunks = (part.tolist() for part in np.array_split(np.array(a), 7))
    table = model.recount(chunks, b).deltoids_
    assert model.exact_counts_ and (model.n_a_, model.n_b_) == (len(a), len(b))
    assert sorted(table["item"]) == sorted(before.index)
    for column in ("count_a", "count_b", "log_ratio"):
        np.testing.assert_allclose(table[column], exact.loc[table["item"], column], rtol=1e-6)
    assert list(table["log_ratio"]) == sorted(table["log_ratio"], reverse=True)
    assert table["item"].iloc[0] == "late"
    np.testing.assert_array_equal(model.estimator_.selected_features_.weights, weights)
    # A later chunk with new heap items makes the counts windowed again: ordered by weight.
    model.partial_fit(a=[f"new{i}" for i in range(300)] * 3, b=["w1"] * 10)
    assert not model.exact_counts_
    assert list(model.deltoids_["weight"]) == sorted(model.deltoids_["weight"], reverse=True)


def test_one_chunk_counts_are_exact_and_recount_needs_a_heap():
    a, b = streams(seed=2, n=5_000)
    model = RelativeDeltoids("32KB", random_state=0)
    with pytest.raises(NotFittedError):
        model.recount(a, b)
    assert model.fit(a, b).exact_counts_
    assert list(model.deltoids_["log_ratio"]) == sorted(model.deltoids_["log_ratio"],
                                                        reverse=True)
    with pytest.raises(TypeError, match="ExactDeltoids has no heap to recount"):
        ExactDeltoids().fit(a, b).recount(a, b)
    with pytest.raises(ValueError, match="stream b holds no item"):
        model.recount(a, [])


def test_a_chunk_trained_in_batches_is_the_chunk_trained_whole(monkeypatch):
    # The examples of a chunk are built a batch at a time (bounded memory): the same
    # examples in the same order, so the same model.
    import sklearn_sketch.deltoids as deltoids

    a, b = streams(n=20_000)
    tables = []
    for batch in (10**9, 4_096, 333):
        monkeypatch.setattr(deltoids, "TRAINING_BATCH", batch)
        model = RelativeDeltoids("32KB", random_state=3).partial_fit(a=a, b=b)
        tables.append(model.deltoids_)
    assert tables[0].equals(tables[1]) and tables[0].equals(tables[2])


def test_chunked_and_whole_input_give_the_same_model():
    a, b = streams(n=20_000)
    whole = RelativeDeltoids("32KB", chunk_items=5_000, random_state=3).fit(a, b)
    chunked = RelativeDeltoids("32KB", random_state=3)
    read_between = RelativeDeltoids("32KB", random_state=3)
    for part_a, part_b in zip(np.array_split(np.array(a), 5), np.array_split(np.array(b), 5)):
        chunked.partial_fit(a=part_a.tolist(), b=part_b.tolist())
        # Built when read, and read again after the next chunk, that chunk's table.
        first_table = read_between.partial_fit(a=part_a.tolist(), b=part_b.tolist()).deltoids_
        assert len(first_table["item"]) > 0
    assert whole.deltoids_.equals(chunked.deltoids_)
    assert whole.deltoids_.equals(read_between.deltoids_)


def test_one_stream_at_a_time_and_kmer_counts():
    reads_a = ["ACGTACGTTTGACCA" * 4] * 30 + ["GGGGCCCCAAAATTTT" * 4] * 30
    reads_b = ["GGGGCCCCAAAATTTT" * 4] * 30
    vectorizer = KmerVectorizer(k=6)
    keys_a, _ = item_occurrences(vectorizer.transform(reads_a))
    assert keys_a.size == vectorizer.transform(reads_a).sum()
    model = RelativeDeltoids("16KB", min_count=1, random_state=0)
    for _ in range(5):
        model.partial_fit(vectorizer.transform(reads_a), stream="a")
        model.partial_fit(vectorizer.transform(reads_b), stream="b")
    top = vectorizer.decode(np.array([int(model.deltoids_["item"].iloc[0])]))[0]
    assert top in "ACGTACGTTTGACCA" * 4 or top in vectorizer.decode(
        vectorizer.transform(["ACGTACGTTTGACCA" * 4]).indices)


@pytest.mark.parametrize("call, message", [
    (lambda: RelativeDeltoids().fit([], ["x"]), "stream a is empty"),
    (lambda: RelativeDeltoids().fit(["x"], []), "stream b is empty"),
    (lambda: RelativeDeltoids("64B").fit(["x"], ["y"]), "too small"),
    (lambda: RelativeDeltoids().partial_fit(["x"], stream="c"), "stream='a' or 'b'"),
    (lambda: RelativeDeltoids().partial_fit(a=[], b=[]), "holds no item"),
    (lambda: RelativeDeltoids(heap_share=1.5).fit(["x"], ["y"]),
     r"heap_share.* in the range \(0.0, 1.0\)"),
    (lambda: ExactDeltoids(min_count=-1).fit(["x"], ["y"]), r"min_count.* in the range \[0, inf\)"),
    (lambda: CountMinDeltoids(heap_share=0).fit(["x"], ["y"]), "heap_share"),
    (lambda: RelativeDeltoids(random_state=-3).fit(["x"], ["y"]), "random_state"),
])
def test_bad_input_is_named(call, message):
    with pytest.raises(ValueError, match=message):
        call()
