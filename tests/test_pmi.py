"""StreamingPMI and its exact reference."""
import numpy as np
import pytest

from sklearn_sketch._heap_counts import heap_keys
from sklearn_sketch.pmi import ExactPMI, StreamingPMI, pair_keys, window_pairs


def corpus(n=400, seed=0):
    """Random words, with 'new york' and 'san francisco' planted in every other document."""
    rng = np.random.default_rng(seed)
    words = [f"w{i}" for i in range(150)]
    docs = []
    for i in range(n):
        doc = list(rng.choice(words, 10))
        doc[3:3] = ["new", "york"] if i % 2 else ["san", "francisco"]
        docs.append(doc)
    return docs


def test_window_pairs_are_every_ordered_pair_within_the_window():
    words, first, second, names = window_pairs(["aa bb cc dd", "ee ff"], window=2)
    pairs = sorted(zip((names[k] for k in first.tolist()), (names[k] for k in second.tolist())))
    assert pairs == [("aa", "bb"), ("aa", "cc"), ("bb", "cc"), ("bb", "dd"), ("cc", "dd"),
                     ("ee", "ff")]
    assert words.size == 6
    # Pair keys are ordered: (a, b) and (b, a) differ.
    assert pair_keys(first[:1], second[:1])[0] != pair_keys(second[:1], first[:1])[0]


def test_the_planted_pairs_come_first():
    model = StreamingPMI(memory_budget="256KB", random_state=0).fit(corpus())
    assert model.memory_bytes_ <= 256 * 1024
    assert set(model.pairs_["pair"][:2]) == {"new york", "san francisco"}


def _median_is_exact(sketch, keys):
    """Whether every key shares its cell with another key in at most one of three rows."""
    buckets, _ = sketch.buckets(np.unique(keys))
    shared = np.zeros(buckets.shape[1], dtype=int)
    for row in buckets:
        _, inverse, counts = np.unique(row, return_inverse=True, return_counts=True)
        shared += counts[inverse] > 1
    return buckets.shape[0] == 3 and (shared <= 1).all()


def test_pmi_estimates_equal_exact_pmi_without_collisions():
    docs = corpus(seed=1)
    model = StreamingPMI(memory_budget="64MB", count_share=0.9, min_count=1,
                         random_state=0).fit(docs)
    _, first, second, _ = window_pairs([" ".join(doc) for doc in docs], window=5)
    # One chunk, and a heap holding every pair: pairs are counted exactly from the
    # start. The word sketch must not collide.
    assert len(docs) <= model.chunk_documents
    assert np.isin(pair_keys(first, second), heap_keys(model.estimator_)).all()
    assert _median_is_exact(model.word_counts_, np.concatenate([first, second]))
    exact = ExactPMI(min_count=1).fit(docs).pairs_.set_index("pair")
    table = model.pairs_.set_index("pair")
    assert len(table) >= 100
    np.testing.assert_allclose(table["count"], exact.loc[table.index, "count"])
    np.testing.assert_allclose(table["pmi"], exact.loc[table.index, "pmi"], atol=1e-4)


def test_weights_converge_to_exact_pmi_without_penalty_or_collisions():
    # The paper's section 8.3: with lambda = 0, logistic regression of observed pairs
    # against pairs drawn from the unigrams converges to log P(a, b) / (P(a) P(b)) for
    # every pair; with a negatives per pair and an intercept b, weight + b + log(n)
    # does. A small vocabulary makes every pair frequent enough to converge.
    rng = np.random.default_rng(0)
    words = [f"w{i}" for i in range(10)]
    share = np.linspace(1, 3, 10) / np.linspace(1, 3, 10).sum()
    docs = [list(rng.choice(words, 12, p=share)) for _ in range(12_000)]
    for doc in docs[::3]:
        doc[4:6] = ["w0", "w1"]
    model = StreamingPMI(window=1, memory_budget="8MB", eta0=0.01, min_count=1,
                         random_state=0).fit(docs)
    assert model.alpha == 0.0 and model.estimator_.alpha == 0.0
    assert len(model.estimator_.selected_features_.keys) == 100  # every pair, exact
    table = model.pairs_.set_index("pair")
    exact = ExactPMI(window=1, min_count=1).fit(docs).pairs_.set_index("pair")
    learned = table["weight"] + model.estimator_.intercept_[0] + np.log(model.negatives)
    assert len(table) >= 50 and "w0 w1" in table.index
    # A constant step ends in noise around the optimum: over 22 seeds the largest error
    # of a pair averaged 0.21 and the mean error 0.068 (the exact PMIs span 1.6).
    error = np.abs(learned - exact.loc[table.index, "pmi"])
    assert error.max() < 0.35 and error.mean() < 0.15


def test_chunked_and_whole_input_give_the_same_model():
    docs = corpus(n=300)
    whole = StreamingPMI(memory_budget="128KB", chunk_documents=100, random_state=2).fit(docs)
    chunked = StreamingPMI(memory_budget="128KB", random_state=2)
    read_between = StreamingPMI(memory_budget="128KB", random_state=2)
    for start in range(0, 300, 100):
        chunked.partial_fit(docs[start:start + 100])
        # The table is built when read (not after each chunk), and read again after
        # the next chunk it is that chunk's.
        tables = [read_between.partial_fit(docs[start:start + 100]).pairs_]
    assert whole.pairs_.equals(chunked.pairs_) and whole.pairs_.equals(tables[-1])
    assert not StreamingPMI(memory_budget="128KB", random_state=2).partial_fit(
        docs[:100]).pairs_.equals(whole.pairs_)


@pytest.mark.parametrize("call, message", [
    (lambda: StreamingPMI().fit([]), "no document"),
    (lambda: StreamingPMI().fit([[], []]), "no word"),
    (lambda: StreamingPMI(window=0).fit(["aa bb"]), "window.* must be an int in the range"),
    (lambda: StreamingPMI(memory_budget="8KB").fit(["aa bb cc"]), "too small"),
    (lambda: StreamingPMI(negatives=0).fit(["aa bb"]), "negatives.* must be an int in the range"),
    (lambda: StreamingPMI(alpha=-1e-6).fit(["aa bb"]), "alpha.* must be a float in the range"),
])
def test_bad_input_is_named(call, message):
    with pytest.raises(ValueError, match=message):
        call()
