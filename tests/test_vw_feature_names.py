"""Models trained on a Vowpal Wabbit file name their selected features."""
import pickle

import mmh3
import numpy as np
import pytest
import scipy.sparse as sp

from sklearn_sketch import (
    AWMSketchClassifier,
    BearClassifier,
    FeatureHashingClassifier,
    IHTClassifier,
    MissionClassifier,
)
from sklearn_sketch.io import MAX_FEATURES, VowpalWabbitReader, partial_fit_stream


def planted_vw_file(path, n=2000, seed=0, vocabulary=3000):
    """Random words in namespaces ``w`` and ``x``; ``w^good`` or ``w^bad`` gives the label."""
    rng = np.random.default_rng(seed)
    with open(path, "w") as f:
        for i in range(n):
            noise = [f"v{j}" for j in rng.integers(0, vocabulary, 16)]
            word = "good" if i % 2 else "bad"
            f.write(f"{1 if i % 2 else -1} |w {word} {' '.join(noise[:8])} "
                    f"|x {' '.join(noise[8:])}\n")
    return path


def vw_key(name, n_bits=None):
    h = mmh3.hash64(name.encode(), 0, signed=False)[0]
    return h % MAX_FEATURES if n_bits is None else h & (2**n_bits - 1)


def heap_keys(model):
    return set(np.concatenate([h.keys() for h in model.heaps_]).tolist())


def mission():
    return MissionClassifier(6, sketch_width=2**12, random_state=0)


@pytest.fixture(scope="module")
def vw_path(tmp_path_factory):
    return planted_vw_file(tmp_path_factory.mktemp("vw") / "planted.vw")


def test_mission_names_the_deciding_words(vw_path):
    model = partial_fit_stream(mission(), VowpalWabbitReader(vw_path, 250, keep_names=True),
                               classes=[-1, 1])
    selected = model.selected_features_
    assert set(selected.names[:2]) == {"w^good", "w^bad"}
    assert set(selected.keys[:2].tolist()) == {vw_key("w^good"), vw_key("w^bad")}
    # Every selected key is named by the bytes that hash to it.
    assert [vw_key(name) for name in selected.names] == selected.keys.tolist()
    assert model.n_features_in_ == MAX_FEATURES
    out = model.get_feature_names_out()
    assert {"w^good", "w^bad"} <= set(out)
    assert [vw_key(name) for name in out] == model.get_support(indices=True).tolist()
    # Without the names, the same model shows keys.
    bare = partial_fit_stream(mission(), VowpalWabbitReader(vw_path, 250), classes=[-1, 1])
    np.testing.assert_array_equal(bare.selected_features_.keys, selected.keys)
    assert bare.selected_features_.names is None
    assert f"x{vw_key('w^good')}" in bare.get_feature_names_out()


def test_masked_keys_are_named_too(vw_path):
    # 2**20 columns: get_feature_names_out goes through the boolean mask path.
    model = partial_fit_stream(mission(), VowpalWabbitReader(
        vw_path, 250, n_bits=20, keep_names=True), classes=[-1, 1])
    assert model.n_features_in_ == 2**20
    assert set(model.selected_features_.names[:2]) == {"w^good", "w^bad"}
    out = model.get_feature_names_out()
    assert {"w^good", "w^bad"} <= set(out)
    assert [vw_key(name, 20) for name in out] == model.get_support(indices=True).tolist()
    # Explicit input names still name the columns by position.
    given = np.array([f"c{i}" for i in range(2**20)], dtype=object)
    np.testing.assert_array_equal(model.get_feature_names_out(given),
                                  given[model.get_support(indices=True)])


ESTIMATORS = {
    "mission": mission,
    "bear": lambda: BearClassifier(6, sketch_width=2**12, random_state=0),
    "awm": lambda: AWMSketchClassifier("16KB", n_features_to_select=6, random_state=0),
    "iht": lambda: IHTClassifier(6, random_state=0),
}


@pytest.mark.parametrize("name", sorted(ESTIMATORS))
def test_names_are_kept_for_the_heap_keys_only(tmp_path, name):
    path = planted_vw_file(tmp_path / "wide.vw", n=1500, vocabulary=50000)
    model = ESTIMATORS[name]()
    capacity = sum(h.capacity for h in ESTIMATORS[name]()._new_state(1).heaps)
    seen = set()
    for i, chunk in enumerate(VowpalWabbitReader(path, 300, keep_names=True)):
        if i == 0:  # a budget keeps room for names given before the first call
            assert model.remember_feature_names(chunk.feature_names) is model
        model.partial_fit(chunk.X, chunk.y, classes=[-1, 1])
        assert model.remember_feature_names(chunk.feature_names) is model
        seen.update(chunk.feature_names.keys.tolist())
        # Each heap key entered with a chunk that named it.
        assert set(model._feature_names) == heap_keys(model)
        assert len(model._feature_names) <= capacity
        assert all(vw_key(n) == k for k, n in model._feature_names.items())
        assert None not in model.selected_features_.names
    assert len(seen) > 10 * capacity
    streamed = partial_fit_stream(ESTIMATORS[name](), VowpalWabbitReader(
        path, 300, keep_names=True), classes=[-1, 1])
    assert streamed._feature_names == model._feature_names
    np.testing.assert_array_equal(streamed.selected_features_.names,
                                  model.selected_features_.names)


def test_names_survive_pickling_and_partial_fit(vw_path):
    model = partial_fit_stream(mission(), VowpalWabbitReader(vw_path, 250, keep_names=True),
                               classes=[-1, 1])
    names = dict(model._feature_names)
    copy = pickle.loads(pickle.dumps(model))
    assert copy._feature_names == names
    np.testing.assert_array_equal(copy.selected_features_.names, model.selected_features_.names)
    # More training without names: the keys still in the heaps keep theirs.
    partial_fit_stream(copy, VowpalWabbitReader(vw_path, 250))
    assert copy._feature_names and set(copy._feature_names) <= heap_keys(copy)
    assert all(names[k] == n for k, n in copy._feature_names.items())
    assert set(copy.selected_features_.names[:2]) == {"w^good", "w^bad"}


def test_remember_feature_names_from_a_mapping():
    X = sp.random(600, 40, density=0.2, format="csr", random_state=0)
    y = np.asarray(X[:, 3].toarray().ravel() > 0).astype(int)
    model = MissionClassifier(4, sketch_width=128, random_state=0).fit(X, y)
    assert model.selected_features_.names is None
    keys = model.selected_features_.keys.tolist()
    mapping = {k: f"col{k}" for k in range(40)}
    mapping[10**6] = "not in the heaps"
    model.remember_feature_names(mapping)
    assert model.selected_features_.names.tolist() == [f"col{k}" for k in keys]
    assert set(model._feature_names) == heap_keys(model) and 10**6 not in model._feature_names
    # A named key keeps its first name; the mapping only names the unnamed keys.
    model.remember_feature_names({k: "other" for k in range(40)})
    assert model.selected_features_.names.tolist() == [f"col{k}" for k in keys]
    np.testing.assert_array_equal(model.get_feature_names_out(),
                                  [f"col{k}" for k in model.get_support(indices=True)])
    # A new fit starts without names.
    model.fit(X, y)
    assert model.selected_features_.names is None
    # Before the first fit, the names are those of the data that fit trains on.
    fresh = MissionClassifier(4, sketch_width=64, random_state=0)
    assert fresh.remember_feature_names(mapping) is fresh
    assert not hasattr(fresh, "selected_features_")
    fresh.fit(X, y)
    assert fresh.selected_features_.names.tolist() == [
        f"col{k}" for k in fresh.selected_features_.keys]


def test_estimator_without_heap_ignores_names(vw_path):
    model = partial_fit_stream(FeatureHashingClassifier(sketch_width=256, random_state=0),
                               VowpalWabbitReader(vw_path, 500, keep_names=True),
                               classes=[-1, 1])
    assert model.remember_feature_names({1: "a"}) is model
    assert not getattr(model, "_feature_names", {})
    assert not hasattr(model, "selected_features_")
    unfitted = FeatureHashingClassifier()
    assert unfitted.remember_feature_names({1: "a"}) is unfitted
