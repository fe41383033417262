"""FeatureCrosser: attribute and cross keys, names on demand, every estimator on them."""
import sys
from pathlib import Path

import mmh3
import numpy as np
import pandas as pd
import pytest
from sklearn.model_selection import cross_val_score
from sklearn.pipeline import make_pipeline

import sklearn_sketch as sk
from sklearn_sketch._raw_features import hash_raw
from sklearn_sketch.feature_extraction import FeatureCrosser, NamedRows
from sklearn_sketch.feature_extraction._crosses import cross_keys

sys.path.insert(0, str(Path(__file__).parent))
from _reference import KEY_SPACE, reference_cross  # noqa: E402


def name_key(name):
    return mmh3.hash64(name.encode(), 0, signed=False)[0] % KEY_SPACE


def test_cross_keys_equal_the_reference_derivation():
    rng = np.random.default_rng(0)
    parts = rng.integers(0, KEY_SPACE, size=(50, 4), dtype=np.int64)
    parts[rng.random(parts.shape) < 0.1] = -1
    combos = np.array([[0, 1, -1], [3, 1, -1], [0, 2, 3], [2, 1, 0]])
    keys = cross_keys(parts, combos)
    for i in range(parts.shape[0]):
        for j, combo in enumerate(combos.tolist()):
            values = [int(parts[i, f]) for f in combo if f >= 0]
            expected = -1 if min(values) < 0 else reference_cross(*values)
            assert keys[i, j] == expected


def test_cross_keys_refuse_fields_out_of_range():
    with pytest.raises(ValueError, match="names field 5"):
        cross_keys(np.zeros((2, 3), dtype=np.int64), np.array([[0, 5, -1]]))


ROWS = [{"carrier": "WN", "dest": "HOU", "hour": 7},
        {"carrier": "AA", "dest": "HOU", "hour": 9},
        {"carrier": "WN", "dest": None, "hour": 7},
        {"carrier": "WN", "hour": float("nan")}]


def test_attribute_keys_are_those_of_raw_names_and_crosses_derive_from_them():
    rows = FeatureCrosser(crosses=[("carrier", "dest"), ("carrier", "dest", "hour")]).fit_transform(
        ROWS)
    wn, hou, seven = name_key("carrier=WN"), name_key("dest=HOU"), name_key("hour=7")
    assert hash_raw([{"carrier=WN": 1.0}])[0].indices[0] == wn  # the estimators' raw key
    first = set(rows.X[0].indices.tolist())
    assert first == {wn, hou, seven, reference_cross(wn, hou), reference_cross(wn, hou, seven)}
    # Missing values (None, absent, NaN) give no attribute and no cross with them.
    assert set(rows.X[2].indices.tolist()) == {wn, seven}
    assert set(rows.X[3].indices.tolist()) == {wn}
    assert rows.X.data.tolist() == [1.0] * rows.X.nnz


def test_dataframes_and_dicts_give_the_same_rows():
    frame = pd.DataFrame(ROWS)
    from_dicts = FeatureCrosser(max_order=3).fit_transform(ROWS)
    from_frame = FeatureCrosser(max_order=3).fit_transform(frame)
    assert FeatureCrosser(max_order=3).fit(frame).crosses_ == [
        ("carrier", "dest"), ("carrier", "hour"), ("dest", "hour"), ("carrier", "dest", "hour")]
    # Integer-valued floats in a DataFrame column read as 7.0: give the hour as int there.
    frame["hour"] = frame["hour"].astype("Int64")
    from_frame = FeatureCrosser(max_order=3).fit_transform(frame)
    for a, b in zip(from_dicts.X, from_frame.X):
        assert sorted(a.indices.tolist()) == sorted(b.indices.tolist())


def test_names_are_built_only_for_the_keys_asked_for():
    rows = FeatureCrosser(max_order=2).fit_transform(ROWS)
    key = reference_cross(name_key("carrier=WN"), name_key("dest=HOU"))
    assert rows.names.lookup([key, 12345]) == {key: "carrier=WN^dest=HOU"}
    assert rows.names.mean_name_bytes() > len("carrier=WN")


def test_bad_input_is_named():
    with pytest.raises(ValueError, match=r"max_order.* in the range \[1, 3\]"):
        FeatureCrosser(max_order=4).fit(ROWS)
    with pytest.raises(ValueError, match="2 or 3 distinct fields"):
        FeatureCrosser(crosses=[("carrier",)]).fit(ROWS)
    with pytest.raises(ValueError, match="2 or 3 distinct fields"):
        FeatureCrosser(crosses=[("carrier", "gate")]).fit(ROWS)
    with pytest.raises(ValueError, match=r"unknown column\(s\) \['gate'\]"):
        FeatureCrosser(fields=["carrier", "gate"]).fit(ROWS).transform(pd.DataFrame(ROWS))
    with pytest.raises(TypeError, match="DataFrame or a list of"):
        FeatureCrosser().fit([[1, 2], [3, 4]])


def test_fields_of_numbers_are_read_by_their_intervals():
    rows = [{"temp": 31.5, "c": "A"}, {"temp": 12, "c": "B"}, {"temp": None, "c": "A"},
            {"temp": "n/a", "c": "B"}, {"temp": float("nan"), "c": "A"}, {"temp": 10.0, "c": "A"}]
    crosser = FeatureCrosser(max_order=2, bin_edges={"temp": [10.0, 30.0]}).fit(rows)
    for X in (rows, pd.DataFrame(rows)):
        out = crosser.transform(X)
        names = [sorted(out.names.lookup(out.X.indices[a:b]).values())
                 for a, b in zip(out.X.indptr[:-1], out.X.indptr[1:])]
        # A value that is no number (None, NaN, text) is missing: no attribute, no cross.
        assert names == [["c=A", "c=A^temp=[30,inf)", "temp=[30,inf)"],
                         ["c=B", "c=B^temp=[10,30)", "temp=[10,30)"], ["c=A"], ["c=B"],
                         ["c=A"], ["c=A", "c=A^temp=[10,30)", "temp=[10,30)"]]
        # An interval's key is that of its name, as any attribute's.
        keys = {name: key for key, name in out.names.lookup(out.X.indices).items()}
        assert keys["temp=[30,inf)"] == hash_raw([["temp=[30,inf)"]])[0].indices[0]
    for edges in ([30.0, 10.0], [], [1.0, np.inf]):
        with pytest.raises(ValueError, match="increasing finite edges"):
            FeatureCrosser(bin_edges={"temp": edges}).fit(rows)
    with pytest.raises(ValueError, match="increasing finite edges"):
        FeatureCrosser(bin_edges={"gate": [1.0]}).fit(rows)


def planted(n=3000, seed=0):
    """Outliers exactly when a=x AND b=y; each part alone is common among inliers."""
    rng = np.random.default_rng(seed)
    a, b, c = rng.choice(list("xuvw"), n), rng.choice(list("yzst"), n), rng.choice(list("pq"), n)
    rows = [{"a": i, "b": j, "c": k} for i, j, k in zip(a, b, c)]
    return rows, ((a == "x") & (b == "y")).astype(int)


ESTIMATORS = [sk.MissionClassifier(64, sketch_width=4096, random_state=0),
              sk.BearClassifier(64, sketch_width=4096, random_state=0),
              sk.WMSketchClassifier(memory_budget="64KB", random_state=0),
              sk.AWMSketchClassifier(memory_budget="64KB", random_state=0),
              sk.IHTClassifier(64, random_state=0),
              sk.TruncationClassifier(memory_budget="64KB", random_state=0),
              sk.SpaceSavingClassifier(memory_budget="64KB", random_state=0),
              sk.SparsePerceptronClassifier(random_state=0)]


@pytest.mark.parametrize("estimator", ESTIMATORS, ids=lambda e: type(e).__name__)
def test_every_estimator_trains_on_crosses_and_names_them(estimator):
    rows, y = planted()
    model = make_pipeline(FeatureCrosser(max_order=2), estimator).fit(rows, y)
    names = model[-1].selected_features_.names
    assert "a=x^b=y" in names.tolist()
    assert model.score(rows, y) > 0.9


def test_crossed_rows_pass_through_cross_validation():
    rows, y = planted()
    scores = cross_val_score(make_pipeline(FeatureCrosser(max_order=2),
                                           sk.AWMSketchClassifier(random_state=0)),
                             rows, y, cv=3)
    assert scores.min() > 0.95
    assert isinstance(FeatureCrosser().fit_transform(rows)[[0, 1]], NamedRows)


def test_a_million_distinct_crosses_stay_in_the_budget_and_only_heap_keys_keep_names():
    rng = np.random.default_rng(0)
    n = 1_500_000
    frame = pd.DataFrame({"u": rng.integers(0, 2000, n), "v": rng.integers(0, 2000, n)})
    y = ((frame.u % 7 == 0) & (frame.v % 5 == 0)).to_numpy().astype(int)
    rows = FeatureCrosser(max_order=2).fit_transform(frame)
    assert np.unique(rows.X.indices).size > 10**6
    model = sk.AWMSketchClassifier(memory_budget="64KB", random_state=0, max_iter=1)
    model.fit(rows, y)
    assert model.memory_bytes_ <= 64 * 1024
    assert 0 < len(model._feature_names) <= model.n_features_to_select_
