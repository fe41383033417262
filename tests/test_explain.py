"""OutlierExplainer and its exact reference, ExactExplainer."""
import numpy as np
import pandas as pd
import pytest
from sklearn.exceptions import NotFittedError

from sklearn_sketch import MissionClassifier
from sklearn_sketch._intervals import interval_edges
from sklearn_sketch.explain import (
    ExactExplainer,
    HeavyHittersExplainer,
    OutlierExplainer,
    QuantileStream,
    parse_rule,
    quantile_of,
)


def planted(n=20_000, seed=0):
    """Outliers exactly when a=x AND b=y; a=x and b=y alone are common among inliers."""
    rng = np.random.default_rng(seed)
    frame = pd.DataFrame({"a": rng.choice(list("xuvw"), n), "b": rng.choice(list("yzst"), n),
                          "c": rng.choice(list("pqr"), n)})
    frame["delay"] = np.where((frame.a == "x") & (frame.b == "y"), 90.0,
                              rng.uniform(0, 20, n))
    return frame


def test_a_planted_conjunction_is_the_top_explanation_above_its_parts():
    explainer = OutlierExplainer("delay > 30", columns=["a", "b", "c"], random_state=0)
    table = explainer.fit(planted()).explanations_
    assert table["feature"].iloc[0] == "a=x^b=y"
    rank = {name: i for i, name in enumerate(table["feature"])}
    for part in ("a=x", "b=y"):
        assert rank.get(part, len(rank)) > 0
    assert explainer.memory_bytes_ <= 128 * 1024
    assert "a=x^b=y" in repr(explainer).splitlines()[2]


def corrected_risk(outlier, inside):
    """The relative risk of the rows ``inside``, half an outlier and one row added to
    each side (Haldane and Anscombe), counted by NumPy."""
    outlier, inside = np.asarray(outlier, dtype=bool), np.asarray(inside, dtype=bool)
    return (((outlier & inside).sum() + 0.5) / (inside.sum() + 1.0)
            / (((outlier & ~inside).sum() + 0.5) / ((~inside).sum() + 1.0)))


def test_a_side_without_outliers_gives_a_finite_risk_not_one_capped_at_the_rows():
    # 3,292 of 3,322 planes share a type and hold every one of the 295 outliers: the
    # 30 others hold none. Uncorrected, the risk was capped at 3,322 and ranked first.
    # A wide-body model of 55 planes is an outlier every time; 240 more spread over 40.
    rows = ([{"type": "multi", "model": "wide", "seats": 300.0} for _ in range(55)]
            + [{"type": "multi", "model": f"m{i % 40}", "seats": 250.0 if i < 240 else 50.0}
               for i in range(3_237)]
            + [{"type": "single", "model": "s", "seats": 4.0} for _ in range(30)])
    table = ExactExplainer("seats > 200", min_support=0.0).fit(rows).explanations_
    risks = dict(zip(table["feature"], table["relative_risk"]))
    outlier = np.array([row["seats"] > 200 for row in rows])
    multi = np.array([row["type"] == "multi" for row in rows])
    assert risks["type=multi"] == pytest.approx(corrected_risk(outlier, multi), rel=1e-12)
    assert 5 < risks["type=multi"] < 6
    # The model of 55 outliers in 55 rows (13.5) ranks above the type of all rows but 30.
    assert table["feature"][0] == "model=wide" and 13 < table["relative_risk"][0] < 14


def test_relative_risks_and_supports_follow_the_exact_counts():
    frame = planted(n=5_000, seed=1)
    sketched = OutlierExplainer("delay > 30", columns=["a", "b", "c"], random_state=0,
                                min_support=0.0).fit(frame).explanations_
    exact = ExactExplainer("delay > 30", columns=["a", "b", "c"],
                           min_support=0.0).fit(frame).explanations_.set_index("feature")
    # Independent counting: pandas on the frame itself.
    outlier = frame.delay > 30
    assert exact.loc["a=x^b=y", "support"] == ((frame.a == "x") & (frame.b == "y")).sum()
    assert exact.loc["c=p", "outliers"] == (outlier & (frame.c == "p")).sum()
    assert exact.loc["a=u", "relative_risk"] == pytest.approx(
        corrected_risk(outlier, frame.a == "u"), rel=1e-12)
    # One chunk: the heap's features are counted exactly from the first row.
    joined = sketched.merge(exact, left_on="feature", right_index=True,
                            suffixes=("", "_exact"))
    assert len(joined) == len(sketched) >= 8
    for column in ("support", "outliers", "relative_risk"):
        np.testing.assert_allclose(joined[column], joined[column + "_exact"], rtol=1e-9)


def test_counts_over_many_chunks_stay_close_to_the_exact_counts():
    # Features entering the heap after the first chunk start from the count sketches.
    frame = planted(n=20_000, seed=2)
    sketched = OutlierExplainer("delay > 30", columns=["a", "b", "c"], random_state=0,
                                min_support=0.0, chunk_rows=1_000).fit(frame).explanations_
    exact = ExactExplainer("delay > 30", columns=["a", "b", "c"],
                           min_support=0.0).fit(frame).explanations_.set_index("feature")
    joined = sketched.merge(exact, left_on="feature", right_index=True,
                            suffixes=("", "_exact"))
    assert (sketched.outliers <= sketched.support).all()
    big = joined.support_exact >= 500
    assert big.sum() >= 8
    np.testing.assert_allclose(joined.support[big], joined.support_exact[big], rtol=0.05)
    np.testing.assert_allclose(joined.relative_risk[big], joined.relative_risk_exact[big],
                               rtol=0.15)


def test_a_combination_first_seen_late_is_counted_over_the_rows_since():
    # c=new appears only from row 10,500: the sketches hold nothing of it before it
    # enters the heap, so its counts and its relative risk cover the rows since.
    frame = late_values()
    late = (frame.c == "new").to_numpy()
    explainer = OutlierExplainer("delay > 30", columns=["a", "b", "c"], random_state=0,
                                 min_support=0.0, chunk_rows=1_000).fit(frame)
    table = explainer.explanations_.set_index("feature")
    since = frame.iloc[10_000:]
    inside = (since.c == "new").to_numpy()
    outlier = (since.delay > 30).to_numpy()
    assert table.loc["c=new", "support"] == inside.sum() == late.sum()
    assert table.loc["c=new", "outliers"] == (outlier & inside).sum()
    assert table.loc["c=new", "rows"] == len(since)
    assert (table["rows"] <= len(frame)).all() and table["rows"].max() == len(frame)
    assert table.loc["c=new", "relative_risk"] == pytest.approx(
        corrected_risk(outlier, inside), rel=1e-12)


def late_values(n=20_000):
    """c=new from row 10,500 on, an outlier on every other of its rows."""
    frame = planted(n=n, seed=3)
    late = (np.arange(n) >= 10_500) & (np.arange(n) % 3 == 0)
    frame.loc[late, "c"] = "new"
    frame.loc[late & (np.arange(n) % 2 == 0), "delay"] = 60.0
    return frame


def test_recount_counts_every_heap_combination_over_every_row():
    frame = late_values()
    explainer = OutlierExplainer("delay > 30", columns=["a", "b", "c"], random_state=0,
                                 min_support=0.0, chunk_rows=1_000).fit(frame)
    before = explainer.explanations_
    assert (before["rows"] < len(frame)).any()  # late entrants, counted since they entered
    weights = explainer.estimator_.selected_features_.weights.copy()
    chunks = (frame.iloc[start:start + 3_000] for start in range(0, len(frame), 3_000))
    table = explainer.recount(chunks).explanations_
    exact = ExactExplainer("delay > 30", columns=["a", "b", "c"],
                           min_support=0.0).fit(frame).explanations_.set_index("feature")
    assert sorted(table["feature"]) == sorted(before["feature"])
    assert (table["rows"] == len(frame)).all()
    joined = table.merge(exact, left_on="feature", right_index=True, suffixes=("", "_exact"))
    for column in ("support", "outliers", "relative_risk"):
        np.testing.assert_allclose(joined[column], joined[column + "_exact"], rtol=1e-9)
    assert list(table["relative_risk"]) == sorted(table["relative_risk"], reverse=True)
    np.testing.assert_array_equal(explainer.estimator_.selected_features_.weights, weights)
    # The whole frame at once and its chunks count the same.
    again = explainer.recount(frame).explanations_
    pd.testing.assert_frame_equal(again, table)


def test_recount_with_labels_and_its_errors():
    frame = late_values(n=6_000)
    y = (frame.delay > 30).to_numpy().astype(int)
    by_label = OutlierExplainer(columns=["a", "b", "c"], random_state=0, chunk_rows=1_000)
    by_rule = OutlierExplainer("delay > 30", columns=["a", "b", "c"], random_state=0,
                               chunk_rows=1_000)
    with pytest.raises(NotFittedError):
        by_rule.recount(frame)
    by_label.fit(frame, y).recount(frame, y)
    by_rule.fit(frame).recount(frame)
    pd.testing.assert_frame_equal(by_label.explanations_, by_rule.explanations_)
    with pytest.raises(ValueError, match="y only with the rows whole"):
        by_label.recount(iter([frame]), y)


def test_a_cross_covering_the_same_rows_as_its_part_is_left_out():
    # Each plane flies for one carrier, and the year never changes: the crosses of a
    # plane with its carrier or the year are the plane's rows again.
    rng = np.random.default_rng(4)
    n = 6_000
    tail = rng.integers(0, 20, n)
    frame = pd.DataFrame({"tail": [f"N{t}" for t in tail],
                          "carrier": np.array(list("ABCD"))[tail // 5],
                          "year": "2013", "hour": rng.integers(5, 10, n)})
    frame["delay"] = np.where((tail == 3) & (rng.random(n) < 0.8), 60.0, rng.uniform(0, 40, n))
    params = dict(outlier="delay > 30", columns=["tail", "carrier", "year", "hour"],
                  min_support=0.0)
    exact = ExactExplainer(**params).fit(frame).explanations_.set_index("feature")
    assert (exact.loc["tail=N3^carrier=A", ["support", "outliers"]]
            == exact.loc["tail=N3", ["support", "outliers"]]).all()
    explainer = OutlierExplainer(**params, random_state=0).fit(frame)
    table = explainer.explanations_
    names = set(table["feature"])
    # The year tells no row apart, and its crosses are their other parts' rows again:
    # neither explainer lists them.
    assert explainer.constant_fields_ == {"year": "2013"}
    assert not any("year=" in name for name in set(exact.index) | names)
    assert table["feature"].iloc[0] == "tail=N3"
    assert not names & {"tail=N3^carrier=A"}
    counts = {row.feature: (row.support, row.outliers, row.rows) for row in table.itertuples()}
    for name in names:
        parts = name.split("^")
        for part in parts if len(parts) > 1 else ():
            assert counts.get(part) != counts[name]
    assert any("^" in name for name in names)  # crosses that add something stay


def test_a_field_is_constant_only_while_every_row_so_far_has_its_one_value():
    rng = np.random.default_rng(5)
    n = 4_000
    frame = pd.DataFrame({"carrier": rng.choice(list("ABCD"), n), "year": "2013",
                          "gate": "G1", "zone": "Z1"})
    frame["delay"] = np.where((frame.carrier == "B") & (rng.random(n) < 0.7), 60.0, 1.0)
    frame.loc[n // 2:, "year"] = "2014"     # constant in each half, not over both
    frame.loc[n - 1, "zone"] = None          # a missing value: not in every row
    explainer = OutlierExplainer("delay > 30", min_support=0.0, chunk_rows=n // 2,
                                 random_state=0)
    explainer.partial_fit(frame.iloc[:n // 2])
    assert explainer.constant_fields_ == {"year": "2013", "gate": "G1", "zone": "Z1"}
    assert not any("year=" in name for name in explainer.explanations_["feature"])
    explainer.partial_fit(frame.iloc[n // 2:])
    assert explainer.constant_fields_ == {"gate": "G1"}
    names = list(explainer.explanations_["feature"])
    assert not any("gate=" in name for name in names)
    assert any("year=" in name for name in names) and any("zone=" in name for name in names)
    # fit starts the record again.
    assert explainer.fit(frame.iloc[:n // 2]).constant_fields_ == {
        "year": "2013", "gate": "G1", "zone": "Z1"}


def _quantities(n=8_000, seed=2):
    """Delayed exactly when the temperature is above 30; hour, flight and a code with
    -1 for none are whole numbers never negative, early (minutes) a signed quantity."""
    rng = np.random.default_rng(seed)
    frame = pd.DataFrame({"temp": rng.uniform(0, 33.3, n).round(2),
                          "hour": rng.integers(0, 24, n), "flight": rng.integers(1, 5000, n),
                          "code": np.where(rng.random(n) < 0.1, -1, rng.integers(0, 100, n)),
                          "early": rng.integers(-60, 200, n),
                          "carrier": rng.choice(list("ABCD"), n)})
    frame["delay"] = np.where(frame.temp > 30, 60.0, rng.uniform(0, 20, n))
    return frame


def test_columns_of_quantities_are_read_by_intervals():
    frame = _quantities()
    columns = ["temp", "hour", "flight", "code", "early", "carrier"]
    params = dict(outlier="delay > 30", columns=columns, min_support=0.0, random_state=0)
    explainer = OutlierExplainer(**params).fit(frame)
    assert sorted(explainer.bin_edges_) == ["early", "temp"]
    ranks = np.arange(1, 10) / 10
    edges = explainer.bin_edges_["temp"]
    np.testing.assert_array_equal(
        edges, interval_edges(np.quantile(frame.temp, ranks, method="inverted_cdf")))
    table = explainer.explanations_
    assert table["feature"].iloc[0] == f"temp=[{edges[-1]:.6g},inf)"
    assert table["support"].iloc[0] == (frame.temp >= edges[-1]).sum()
    # The same rows as dicts: the same intervals, the same explanations.
    dicts = OutlierExplainer(**params).fit(frame.to_dict("records"))
    assert {c: e.tolist() for c, e in dicts.bin_edges_.items()} == \
        {c: e.tolist() for c, e in explainer.bin_edges_.items()}
    assert list(dicts.explanations_["feature"]) == list(table["feature"])
    # bins=0: every temperature a category of its own.
    plain = OutlierExplainer(**params, bins=0).fit(frame)
    assert plain.bin_edges_ == {}
    assert not any("=[" in name for name in plain.explanations_["feature"])
    # partial_fit cuts at the first call's quantiles and keeps them.
    stream = OutlierExplainer(**params).partial_fit(frame.iloc[:2_000])
    first = stream.bin_edges_["temp"]
    np.testing.assert_array_equal(
        first, interval_edges(np.quantile(frame.temp[:2_000], ranks, method="inverted_cdf")))
    assert stream.partial_fit(frame.iloc[2_000:]).bin_edges_["temp"] is first
    with pytest.raises(ValueError, match="'bins' parameter"):
        OutlierExplainer(**{**params, "bins": 1}).fit(frame)


def test_a_value_that_holds_several_deciles_gets_an_interval_of_its_own():
    from sklearn_sketch._intervals import quantile_edges

    rng = np.random.default_rng(6)
    rain = np.where(rng.random(5_000) < 0.9, 0.0, rng.uniform(0.1, 3, 5_000))
    frame = pd.DataFrame({"rain": rain, "delay": np.where(rain > 0, 60.0, 0.0)})
    explainer = OutlierExplainer("delay > 30", columns=["rain"], random_state=0).fit(frame)
    dry, wet = explainer.bin_edges_["rain"]
    assert dry == 0 and wet == quantile_edges(
        lambda r: np.quantile(rain, r, method="inverted_cdf"), 10)[1] > 0
    assert explainer.explanations_["feature"].iloc[0] == f"rain=[{wet:.6g},inf)"
    # An atom at the top keeps the edges below it and needs none above.
    top = np.r_[np.arange(50.0) / 7, np.full(450, 9.0)]
    edges = quantile_edges(lambda r: np.quantile(top, r, method="inverted_cdf"), 10)
    assert edges.tolist() == [7.0, 9.0]  # 49/7 the first decile; nothing above 9


def test_partial_fit_over_chunks_equals_one_fit():
    frame = planted(n=6_000)
    params = dict(outlier="delay > 30", columns=["a", "b", "c"], random_state=0, chunk_rows=1000)
    whole = OutlierExplainer(**params).fit(frame)
    streamed = OutlierExplainer(**params)
    for start in range(0, len(frame), 1000):
        streamed.partial_fit(frame.iloc[start:start + 1000])
    pd.testing.assert_frame_equal(whole.explanations_, streamed.explanations_)
    assert (whole.n_rows_, whole.n_outliers_) == (streamed.n_rows_, streamed.n_outliers_)


def test_labels_dicts_and_a_quantile_rule():
    frame = planted(n=4_000)
    y = (frame.delay > 30).to_numpy().astype(int)
    by_label = OutlierExplainer(columns=["a", "b", "c"], random_state=0).fit(frame, y)
    by_rule = OutlierExplainer("delay > 30", columns=["a", "b", "c"], random_state=0).fit(frame)
    pd.testing.assert_frame_equal(by_label.explanations_, by_rule.explanations_)
    from_dicts = OutlierExplainer("delay > 30", columns=["a", "b", "c"], random_state=0).fit(
        frame.to_dict("records"))
    pd.testing.assert_frame_equal(by_rule.explanations_, from_dicts.explanations_)
    by_quantile = OutlierExplainer("delay >= q0.95", columns=["a", "b", "c"],
                                   random_state=0).fit(frame)
    assert by_quantile.threshold_ == pytest.approx(np.quantile(frame.delay, 0.95), rel=0.05)
    assert by_quantile.explanations_["feature"].iloc[0] == "a=x^b=y"


def test_rows_without_the_metric_are_skipped_and_counted():
    frame = planted(n=3_000)
    frame.loc[::10, "delay"] = np.nan
    explainer = OutlierExplainer("delay > 30", columns=["a", "b"], random_state=0).fit(frame)
    assert (explainer.n_skipped_, explainer.n_rows_) == (300, 2_700)


def test_other_estimators_explain_too():
    explainer = OutlierExplainer("delay > 30", columns=["a", "b", "c"], random_state=0,
                                 estimator=MissionClassifier(64, sketch_width=2048,
                                                             random_state=0),
                                 memory_budget="1MB")
    assert explainer.fit(planted()).explanations_["feature"].iloc[0] == "a=x^b=y"
    assert explainer.memory_bytes_ <= 2**20


@pytest.mark.parametrize("params, X, message", [
    (dict(outlier="delay > 30", columns=["a", "gate"]), None, r"unknown column\(s\) \['gate'\]"),
    (dict(outlier="delay > 1000"), None, "makes none of the first"),
    (dict(outlier="delay >= 0"), None, "makes all of the first"),
    (dict(outlier="a > 3"), None, "metric 'a' must be numeric"),
    (dict(outlier="speed > 3"), None, "metric 'speed' is not a column"),
    (dict(outlier="delay >> 3"), None, "is not METRIC OP VALUE"),
    (dict(outlier="delay > q1.5"), None, r"must be in \(0, 1\)"),
    (dict(outlier="delay > 30", max_order=4), None, r"max_order.* in the range \[1, 3\]"),
    (dict(), None, "give the outliers"),
])
def test_bad_input_is_named(params, X, message):
    with pytest.raises(ValueError, match=message):
        OutlierExplainer(**params).fit(planted(n=500) if X is None else X)


def test_parse_rule_and_quantile():
    assert parse_rule(" dep_delay>=q0.25 ") == ("dep_delay", ">=", 0.25, True)
    values = np.random.default_rng(0).integers(0, 40, 5_001).astype(float)
    for q in (0.0, 0.1, 0.5, 0.8, 0.9, 1.0):
        # The smallest value at least a q share of the values are at most.
        expected = np.sort(values)[max(int(np.ceil(q * values.size)) - 1, 0)]
        assert quantile_of(values, q) == expected


def test_quantile_stream_is_exact_up_to_its_values_then_a_kll_sketch():
    values = np.random.default_rng(1).normal(size=30_000).round(2)
    ranks = [0.1, 0.5, 0.8, 0.95]
    exact = [quantile_of(values, q) for q in ranks]
    stream = QuantileStream()
    assert stream.is_empty()
    for part in np.array_split(values, 7):
        stream.update(part)
    assert stream.n_values == values.size and not stream.is_empty()
    assert stream.quantiles(ranks).tolist() == exact
    # Past its exact values, every value (the kept ones too) is in the KLL sketch:
    # within its rank error, not exact.
    small = QuantileStream(exact_values=5_000, k=200)
    for part in np.array_split(values, 7):
        small.update(part)
    got = small.quantiles(ranks)
    assert small.n_values == values.size and small._sketch is not None
    assert small._sketch.n == values.size
    np.testing.assert_allclose([np.mean(values <= g) for g in got], ranks, atol=0.03)


def test_heavy_hitters_baseline_counts_the_outliers_frequent_combinations():
    frame = planted(n=6_000)
    baseline = HeavyHittersExplainer("delay > 30", columns=["a", "b", "c"], memory_budget="16KB")
    table = baseline.fit(frame).explanations_.set_index("feature")
    assert baseline.memory_bytes_ <= 16 * 1024
    exact = ExactExplainer("delay > 30", columns=["a", "b", "c"]).fit(frame)
    exact_table = exact.explanations_.set_index("feature")
    assert table.index[0] == "a=x^b=y"
    # Its counts are Space-Saving's: never below the truth for the outliers' items it holds.
    common = table.index.intersection(exact_table.index)
    assert len(common) >= 10
    assert (table.loc[common, "outliers"] >= exact_table.loc[common, "outliers"]).all()
