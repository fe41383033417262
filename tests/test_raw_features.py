"""Raw input (token lists, {name: value} dicts): hashed keys, names kept for heap features."""
import mmh3
import numpy as np
import scipy.sparse as sp
import pytest

from sklearn_sketch import AWMSketchClassifier, BearClassifier, MissionClassifier
from sklearn_sketch._examples_fast import shuffled_examples
from sklearn_sketch._raw_features import (RAW_N_FEATURES, hash_raw, name_keys,
                                         one_sparse_batches, one_sparse_rows)

GOOD, BAD = ["excellent", "superb", "délicieux"], ["awful", "terrible", "rotten"]


def planted_documents(n=2000, seed=0, vocabulary=3000):
    """Random words, plus two planted words that give the label away."""
    rng = np.random.default_rng(seed)
    words = [f"w{i}" for i in range(vocabulary)]
    docs, y = [], []
    for i in range(n):
        label = i % 2
        doc = [str(w) for w in rng.choice(words, 15)]
        doc += [str(w) for w in rng.choice(GOOD if label else BAD, 2)]
        docs.append(doc)
        y.append(label)
    return docs, np.array(y)


ESTIMATORS = {
    "mission": lambda: MissionClassifier(6, sketch_width=2**12, random_state=0),
    "bear": lambda: BearClassifier(6, sketch_width=2**12, random_state=0),
    "awm": lambda: AWMSketchClassifier("16KB", n_features_to_select=6, random_state=0),
}


@pytest.mark.parametrize("name", sorted(ESTIMATORS))
def test_planted_words_come_back_by_name(name):
    docs, y = planted_documents()
    est = ESTIMATORS[name]().fit(docs, y)
    assert sorted(est.get_feature_names_out()) == sorted(GOOD + BAD)
    assert sorted(est.selected_features_.names) == sorted(GOOD + BAD)
    np.testing.assert_array_equal(np.sort(est.selected_features_.keys),
                                  np.sort(name_keys(GOOD + BAD)))
    assert est.n_features_in_ == RAW_N_FEATURES
    assert est.score(docs, y) > 0.95
    # transform: the selected columns, in key order, holding the token counts.
    X_selected = est.transform(docs[:50])
    assert X_selected.shape == (50, 6)
    order = np.argsort(name_keys(est.get_feature_names_out()))
    np.testing.assert_array_equal(order, np.arange(6))
    for row, doc in enumerate(docs[:50]):
        expected = [doc.count(w) for w in est.get_feature_names_out()]
        np.testing.assert_array_equal(X_selected[row].toarray().ravel(), expected)


def test_dicts_equal_token_lists_with_counts():
    docs, y = planted_documents(n=400)
    dicts = [{w: float(doc.count(w)) for w in doc} for doc in docs]
    a = MissionClassifier(6, sketch_width=2**12, random_state=0, shuffle=False).fit(docs, y)
    b = MissionClassifier(6, sketch_width=2**12, random_state=0, shuffle=False).fit(dicts, y)
    np.testing.assert_array_equal(a.sketches_[0].table, b.sketches_[0].table)
    np.testing.assert_array_equal(a.selected_features_.keys, b.selected_features_.keys)
    assert list(a.get_feature_names_out()) == list(b.get_feature_names_out())
    np.testing.assert_array_equal(a.decision_function(docs), b.decision_function(dicts))


def test_keys_are_the_vowpal_wabbit_readers_keys():
    names = ["a", "délicieux", b"\xff\x00", ""]
    expected = [mmh3.hash64(n.encode() if isinstance(n, str) else n, 0, signed=False)[0]
                % (2**63 - 1) for n in names]
    np.testing.assert_array_equal(name_keys(names), expected)
    X, distinct = hash_raw([["b", "a", "b"], [], ["a"]])
    assert list(distinct.values()) == ["b", "a"]
    assert list(distinct) == name_keys(["b", "a"]).tolist()
    np.testing.assert_array_equal(X.indptr, [0, 2, 2, 3])
    row = dict(zip(X.indices[:2].tolist(), X.data[:2].tolist()))
    assert row == {int(name_keys(["a"])[0]): 1.0, int(name_keys(["b"])[0]): 2.0}


def test_names_kept_are_bounded_by_the_heaps():
    est = MissionClassifier(5, sketch_width=2**10, random_state=0)
    seen = set()
    for chunk in range(6):
        docs, y = planted_documents(n=300, seed=chunk, vocabulary=20000)
        docs = [[f"{w}_{chunk}" if w.startswith("w") else w for w in doc] for doc in docs]
        seen.update(w for doc in docs for w in doc)
        est.partial_fit(docs, y, classes=[0, 1])
        heap_keys = set(est.heaps_[0].keys().tolist())
        assert set(est._feature_names) == heap_keys
        assert len(est._feature_names) <= 5
    assert len(seen) > 10000
    assert sorted(est.get_feature_names_out()) == sorted(
        n for n in est._feature_names.values())


@pytest.mark.parametrize("bad, message", [
    ([{"a": 1.0}, ["b"]], "mixes dicts"),
    ([["a"], "bc"], "single string"),
    ([["a", 3]], "str or bytes"),
    ([{"a": "x"}], "must be numbers .*FeatureCrosser"),
])
def test_bad_raw_input_raises_and_keeps_the_model(bad, message):
    docs, y = planted_documents(n=200)
    est = MissionClassifier(6, sketch_width=2**12, random_state=0).fit(docs, y)
    table = est.sketches_[0].table.copy()
    keys = est.selected_features_.keys.copy()
    names = dict(est._feature_names)
    with pytest.raises(TypeError, match=message):
        est.partial_fit(bad, [0] * len(bad))
    np.testing.assert_array_equal(est.sketches_[0].table, table)
    np.testing.assert_array_equal(est.selected_features_.keys, keys)
    assert est._feature_names == names


def test_raw_then_numeric_input_is_refused():
    docs, y = planted_documents(n=200)
    est = MissionClassifier(6, sketch_width=2**12, random_state=0).fit(docs, y)
    with pytest.raises(ValueError, match="features"):
        est.partial_fit(np.ones((3, 4)), [0, 1, 0])


def _splitmix_shuffle(keys, labels, seed):
    """Pure-Python reference: SplitMix64 and the inside-out Fisher-Yates shuffle."""
    mask, state = 2**64 - 1, seed
    out_keys, out_labels = [0] * len(keys), [0] * len(keys)
    for i in range(len(keys)):
        state = (state + 0x9E3779B97F4A7C15) & mask
        z = state
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & mask
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & mask
        j = (z ^ (z >> 31)) % (i + 1)
        out_keys[i], out_labels[i] = out_keys[j], out_labels[j]
        out_keys[j], out_labels[j] = keys[i], labels[i]
    return out_keys, out_labels


@pytest.mark.parametrize("seed", [0, 1, 2**63 + 5])
def test_shuffled_examples_follow_the_reference(seed):
    rng = np.random.default_rng(seed % 97)
    keys = rng.integers(0, 2**62, 300)
    labels = rng.integers(0, 2, 300)
    got_keys, got_labels = shuffled_examples(keys, labels, seed)
    want_keys, want_labels = _splitmix_shuffle(keys.tolist(), labels.tolist(), seed)
    assert got_keys.tolist() == want_keys and got_labels.tolist() == want_labels
    assert got_labels.dtype == np.int8


def test_shuffled_examples_are_uniform():
    # Where the example at position 0 lands, over many seeds: every place about as often.
    n, trials = 8, 16_000
    landed = np.zeros(n)
    for seed in range(trials):
        keys, _ = shuffled_examples(np.arange(n), np.zeros(n, dtype=np.int64), seed)
        landed[np.flatnonzero(keys == 0)[0]] += 1
    chi2 = ((landed - trials / n) ** 2 / (trials / n)).sum()
    assert chi2 < 24.3  # the 0.999 quantile of chi-square with 7 degrees of freedom


def test_shuffled_examples_refuse_labels_other_than_0_and_1():
    with pytest.raises(ValueError, match="0 or 1"):
        shuffled_examples(np.arange(3), np.array([0, 2, 1]), 0)
    with pytest.raises(ValueError, match="3 keys but 2 labels"):
        shuffled_examples(np.arange(3), np.array([0, 1]), 0)


def test_one_sparse_rows_keep_each_key_with_its_label():
    rng = np.random.default_rng(0)
    keys = rng.integers(0, 2**62, 1000)
    labels = (keys % 3 == 0).astype(np.int64)
    X, y = one_sparse_rows(keys, labels, None, np.random.default_rng(1))
    assert X.shape == (1000, RAW_N_FEATURES) and (X.getnnz(axis=1) == 1).all()
    assert (X.data == 1.0).all()
    assert sorted(X.indices.tolist()) == sorted(keys.tolist())
    assert ((X.indices % 3 == 0) == (y == 1)).all()
    assert not np.array_equal(X.indices, keys)  # shuffled


@pytest.mark.parametrize("batch_rows", [1, 7, 1000, 5000])
def test_one_sparse_batches_are_the_rows_in_order(batch_rows):
    keys = np.random.default_rng(0).integers(0, 2**62, 1000)
    labels = (keys % 3 == 0).astype(np.int64)
    X, y = one_sparse_rows(keys, labels, {1: "x"}, np.random.default_rng(1))
    batches = list(one_sparse_batches(keys, labels, {1: "x"}, np.random.default_rng(1),
                                      batch_rows))
    assert len(batches) == -(-1000 // batch_rows)
    assert all(part.X.shape[0] <= batch_rows and part.names == {1: "x"} for part, _ in batches)
    assert (sp.vstack([part.X for part, _ in batches]) != X.X).nnz == 0
    np.testing.assert_array_equal(np.concatenate([labels for _, labels in batches]), y)


def test_a_list_of_documents_points_to_token_lists_and_vectorizers():
    docs = ["good movie, great cast", "bad film and an awful plot"] * 50
    y = [1, 0] * 50
    for fit in (lambda m: m.fit(docs, y), lambda m: m.partial_fit(docs, y, classes=[0, 1])):
        with pytest.raises(ValueError, match=r"could not convert string to float.*X is a list "
                                             r"of strings: give each document as the list of "
                                             r"its tokens.*HashingVectorizer"):
            fit(MissionClassifier(random_state=0))
    # The way it names works: the documents' tokens, raw input, learn the task.
    tokens = [doc.lower().split() for doc in docs]
    fitted = MissionClassifier(random_state=0).fit(tokens, y)
    assert fitted.score(tokens, y) == 1.0
    with pytest.raises(ValueError, match="X is a list of strings"):
        fitted.predict(docs)


def test_categories_among_numbers_point_to_the_crosser():
    # A DataFrame of carriers and airports: scikit-learn's own error says only that a
    # string is not a number; ours says how to make features of the categories.
    pd = pytest.importorskip("pandas")
    from sklearn_sketch.feature_extraction import FeatureCrosser

    frame = pd.DataFrame({"carrier": ["AA", "WN"] * 50, "hour": [5, 21] * 50})
    y = [0, 1] * 50
    with pytest.raises(ValueError, match="could not convert string to float.*FeatureCrosser"):
        AWMSketchClassifier(random_state=0).fit(frame, y)
    fitted = AWMSketchClassifier(random_state=0).fit(frame[["hour"]], y)
    with pytest.raises(ValueError, match="FeatureCrosser"):
        fitted.predict(frame[["carrier"]].rename(columns={"carrier": "hour"}))
    # And the way it names works: one 'name=value' feature each.
    crossed = FeatureCrosser(max_order=1).fit_transform(frame)
    model = AWMSketchClassifier(random_state=0).fit(crossed, y)
    assert model.score(crossed, y) == 1.0
    assert {"carrier=WN", "hour=21"} <= set(model.selected_features_.names[:4])
