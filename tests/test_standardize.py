"""'normalized' steps standardize dense columns: their range does not matter."""
import pickle
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.datasets import load_breast_cancer, load_wine
from sklearn.exceptions import ConvergenceWarning
from sklearn.model_selection import StratifiedKFold, cross_val_score
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

import sklearn_sketch as sk
from sklearn_sketch import ModelFileError, _columns, average_estimators, load, save
from sklearn_sketch._base import parse_memory_budget

sys.path.insert(0, str(Path(__file__).parent))
from _reference import assert_same_state, standardized  # noqa: E402
from test_model_files import edit_header, write_members  # noqa: E402

MAKERS = {
    "hashing": lambda **k: sk.FeatureHashingClassifier(sketch_width=256, **k),
    "wm": lambda **k: sk.WMSketchClassifier("64KB", **k),
    "awm": lambda **k: sk.AWMSketchClassifier("64KB", **k),
    "mission": lambda **k: sk.MissionClassifier(8, sketch_width=256, **k),
    "bear": lambda **k: sk.BearClassifier(8, sketch_width=256, **k),
    "iht": lambda **k: sk.IHTClassifier(8, **k),
    "truncation": lambda **k: sk.TruncationClassifier("8KB", **k),
}


def ranges_task(n=600, p=12, seed=0):
    """Gaussian columns put on ranges from 1e-3 to 1e3 around offsets up to 1e4."""
    rng = np.random.RandomState(seed)
    Z = rng.normal(size=(n, p))
    y = (Z[:, 0] - Z[:, 5] + 0.5 * Z[:, 9] + 0.3 * rng.normal(size=n) > 0).astype(int)
    scale = 10.0 ** rng.uniform(-3, 3, size=p)
    offset = rng.uniform(-1e4, 1e4, size=p)
    return Z * scale + offset, y


def sparse_ranges_task(n=900, p=12, seed=0):
    """A sparse table: columns 70% zeros, on ranges from 1e-3 to 1e3."""
    rng = np.random.RandomState(seed)
    Z = rng.normal(size=(n, p)) * (rng.rand(n, p) < 0.3)
    y = (Z[:, 0] - Z[:, 5] + 0.5 * Z[:, 9] + 0.1 * rng.normal(size=n) > 0).astype(int)
    return sp.csr_matrix(Z * 10.0 ** rng.uniform(-3, 3, size=p)), y


def _without_the_statistics_bytes(est, n_features):
    """``est`` with ``memory_budget`` (if any) less what a standardized model spends on
    the mean and scale of ``n_features`` columns."""
    budget = est.get_params().get("memory_budget")
    if budget is not None:
        est.set_params(memory_budget=parse_memory_budget(budget) - 16 * n_features)
    return est


@pytest.mark.parametrize("name", sorted(MAKERS))
@pytest.mark.usefixtures("sparse_as_given")
def test_the_model_reads_standardized_columns(name):
    X, y = ranges_task()
    est = MAKERS[name](random_state=0).fit(X, y)
    np.testing.assert_array_equal(est.feature_mean_, X.mean(axis=0))
    np.testing.assert_array_equal(est.feature_scale_, X.std(axis=0))
    # The same model as the one of the standardized columns given as a sparse matrix
    # (read as given) in the budget less the statistics' 16 bytes a column, and as
    # scikit-learn's StandardScaler in front of it (up to rounding: columns of
    # offsets 1e4 and ranges 1e-3 are centred to a relative 1e-9 at best).
    given = _without_the_statistics_bytes(MAKERS[name](random_state=0), X.shape[1])
    given.fit(sp.csr_matrix(standardized(X)), y)
    assert_same_state(est, given, standardization=False)
    pipe = make_pipeline(StandardScaler(), given)
    pipe.fit(X, y)
    np.testing.assert_allclose(est.decision_function(X), pipe.decision_function(X),
                               rtol=1e-5, atol=1e-6)
    assert est.score(X, y) > 0.9


@pytest.mark.parametrize("name", sorted(MAKERS))
def test_a_change_of_each_columns_unit_and_origin_leaves_the_model_as_it_was(name):
    X, y = ranges_task()
    rng = np.random.RandomState(1)
    unit, origin = 10.0 ** rng.uniform(-3, 3, size=X.shape[1]), rng.normal(size=X.shape[1])
    est = MAKERS[name](random_state=0).fit(X, y)
    moved = MAKERS[name](random_state=0).fit(X * unit + origin, y)
    # Up to rounding: the columns' offsets reach 1e4 for ranges down to 1e-3.
    np.testing.assert_allclose(moved.decision_function(X * unit + origin),
                               est.decision_function(X), rtol=1e-5, atol=1e-5)
    if est.heaps_:
        np.testing.assert_array_equal(moved.get_support(indices=True),
                                      est.get_support(indices=True))


@pytest.mark.usefixtures("sparse_as_given")
def test_later_calls_read_the_first_calls_statistics():
    X, y = ranges_task(n=900)
    est = sk.AWMSketchClassifier("16KB", random_state=0)
    est.partial_fit(X[:300], y[:300], classes=[0, 1])
    mean, scale = X[:300].mean(axis=0), X[:300].std(axis=0)
    shifted = X[300:] + 5 * scale  # a later chunk of other means: not re-standardized
    est.partial_fit(shifted, y[300:])
    np.testing.assert_array_equal(est.feature_mean_, mean)
    np.testing.assert_array_equal(est.feature_scale_, scale)
    reference = _without_the_statistics_bytes(sk.AWMSketchClassifier("16KB", random_state=0),
                                              X.shape[1])
    reference.partial_fit(sp.csr_matrix((X[:300] - mean) / scale), y[:300], classes=[0, 1])
    reference.partial_fit(sp.csr_matrix((shifted - mean) / scale), y[300:])
    assert_same_state(est, reference, standardization=False)
    # A new fit takes the statistics anew.
    est.fit(shifted, y[300:])
    np.testing.assert_array_equal(est.feature_mean_, shifted.mean(axis=0))


def test_a_mostly_zero_array_of_many_columns_is_read_as_given():
    # Centred, each row would hold all 2,000 columns instead of about 20.
    rng = np.random.RandomState(0)
    X = rng.binomial(1, 0.01, size=(300, 2000)) * rng.uniform(1, 5, size=(300, 2000))
    y = (X[:, :50].sum(axis=1) > X[:, 50:100].sum(axis=1)).astype(int)
    est = sk.AWMSketchClassifier("1MB", random_state=0).fit(X, y)
    assert not hasattr(est, "feature_scale_")
    assert_same_state(est, sk.AWMSketchClassifier("1MB", random_state=0).fit(
        sp.csr_matrix(X), y))
    # Half non-zero, or at most 1,000 columns: standardized.
    assert hasattr(sk.AWMSketchClassifier("1MB", random_state=0).fit(X[:, :1000], y),
                   "feature_scale_")
    dense = np.where(X == 0, rng.uniform(1, 5, size=X.shape), X)
    dense[rng.rand(*X.shape) < 0.45] = 0.0
    assert hasattr(sk.AWMSketchClassifier("1MB", random_state=0).fit(dense, y),
                   "feature_scale_")


def test_a_model_of_dense_columns_reads_sparse_input_as_the_same_columns():
    X, y = ranges_task(n=900)
    dense = sk.MissionClassifier(8, sketch_width=256, random_state=0).fit(X[:600], y[:600])
    sparse = pickle.loads(pickle.dumps(dense))
    np.testing.assert_array_equal(dense.decision_function(X[600:]),
                                  sparse.decision_function(sp.csr_matrix(X[600:])))
    dense.partial_fit(X[600:], y[600:])
    sparse.partial_fit(sp.csr_matrix(X[600:]), y[600:])
    assert_same_state(dense, sparse)


@pytest.mark.parametrize("case", ["sparse", "few rows", "space saving", "constant step",
                                  "budget", "constant column"])
def test_when_the_columns_are_used_as_given(case):
    X, y = ranges_task(n=200)
    make = {"space saving": lambda: sk.SpaceSavingClassifier("8KB", random_state=0),
            "constant step": lambda: sk.AWMSketchClassifier(
                "64KB", learning_rate="constant", eta0=1e-6, random_state=0),
            # 12 columns' statistics (192 bytes) are more than a quarter of 700 bytes.
            "budget": lambda: sk.TruncationClassifier(700, random_state=0),
            }.get(case, lambda: sk.AWMSketchClassifier("64KB", random_state=0))
    if case == "few rows":
        X, y = X[:29], y[:29]  # fewer than 30 rows would centre each column on themselves
    if case == "constant column":
        X[:, 4] = 7.0
        est = make().fit(X, y)
        assert est.feature_mean_[4] == 7.0 and est.feature_scale_[4] == 1.0
        assert 4 not in est.get_support(indices=True)  # centred to nothing
        return
    if case == "sparse":
        # More than 1,000 columns, and more than 1,000 features of values other than 1:
        # a bag of counts (text, k-mers), not a table: its columns are not centred,
        # and only the measurements among them are scaled, stored sparse or as a
        # mostly-zero array alike.
        counts = np.random.RandomState(3).poisson(0.1, size=(X.shape[0], 3000))
        assert (counts.max(axis=0) >= 2).sum() > 1000
        X = np.hstack([X, counts])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        est = make().fit(sp.csr_matrix(X) if case == "sparse" else X, y)
        assert not hasattr(est, "feature_mean_") and not hasattr(est, "feature_scale_")
        given = make().fit(X if case == "sparse" else sp.csr_matrix(X), y)
    if case == "sparse":
        np.testing.assert_array_equal(est.scaled_keys_, np.arange(12))
    assert_same_state(est, given)


def test_memory_bytes_count_the_statistics_within_the_budget():
    X, y = ranges_task()
    for budget in (2**12, 2**14, 2**16):
        est = sk.AWMSketchClassifier(budget, random_state=0).fit(X, y)
        assert est.memory_bytes_ == est._model_bytes() + 16 * X.shape[1] <= budget
        scaled = sk.AWMSketchClassifier(budget, random_state=0).fit(
            sp.csr_matrix(np.where(np.random.RandomState(0).rand(*X.shape) < 0.7, 0, X)), y)
        assert not scaled.feature_mean_.any()  # a sparse table: scaled, not centred
        assert scaled.memory_bytes_ == scaled._model_bytes() + 16 * X.shape[1] <= budget


@pytest.mark.parametrize("loader", [load_breast_cancer, load_wine])
def test_raw_tables_score_with_defaults_as_standardized_ones(loader):
    # Raw breast cancer (0.001 to 4,000) and wine (0.1 to 1,700): read as given, the
    # defaults scored 0.59-0.61 and 0.08-0.30; standardized, 0.98.
    X, y = loader(return_X_y=True)
    cv = StratifiedKFold(5, shuffle=True, random_state=0)
    for make in (sk.FeatureHashingClassifier, sk.WMSketchClassifier, sk.AWMSketchClassifier,
                 sk.MissionClassifier, sk.BearClassifier):
        assert cross_val_score(make(random_state=0), X, y, cv=cv).mean() >= 0.95, make


def test_copies_average_their_statistics_and_kinds_of_input_do_not_mix():
    X, y = ranges_task(n=900)
    make = lambda: sk.WMSketchClassifier("64KB", eta0=1.0, random_state=0)  # noqa: E731
    copies = [make().fit(X[i::3], y[i::3]) for i in range(3)]
    merged = average_estimators(copies, weights=[1, 2, 3])
    weights = np.array([1, 2, 3]) / 6
    np.testing.assert_allclose(merged.feature_mean_,
                               sum(w * c.feature_mean_ for w, c in zip(weights, copies)))
    np.testing.assert_allclose(merged.feature_scale_,
                               sum(w * c.feature_scale_ for w, c in zip(weights, copies)))
    assert merged.score(X, y) > 0.9
    # Shared statistics are kept bit for bit.
    same = average_estimators([copies[0], copies[0]])
    np.testing.assert_array_equal(same.feature_mean_, copies[0].feature_mean_)
    # Copies that read their columns otherwise are refused: a sparse table scaled (not
    # centred), wide sparse input whose measured features are scaled.
    mostly_zeros = np.where(np.random.RandomState(0).rand(*X.shape) < 0.7, 0, X)
    scaled = make().fit(sp.csr_matrix(mostly_zeros[::3]), y[::3])
    with pytest.raises(ValueError, match="estimator 1 scales its columns without centring"):
        average_estimators([copies[0], scaled])
    wide = make().fit(sp.hstack([sp.csr_matrix(X[::3]), sp.csr_matrix((300, 1000))]), y[::3])
    with pytest.raises(ValueError, match="estimator 1 scales its measured features"):
        average_estimators([make().fit(np.hstack([X[::3], np.ones((300, 1000))]), y[::3]),
                            wide])


def test_a_model_file_keeps_the_statistics_and_refuses_bad_ones(tmp_path):
    X, y = ranges_task()
    est = sk.AWMSketchClassifier("16KB", random_state=0).fit(X, y)
    path = tmp_path / "m.skm"
    save(est, path)
    loaded = load(path)
    assert_same_state(loaded, est)
    np.testing.assert_array_equal(loaded.decision_function(X), est.decision_function(X))
    with np.load(path, allow_pickle=False) as npz:
        members = {name: npz[name] for name in npz.files}
    for name, value, message in [
            ("feature_scale", np.zeros(X.shape[1]), "positive"),
            ("feature_mean", np.zeros(3), "feature_mean"),
            ("feature_scale", np.full(X.shape[1], np.nan), "NaN")]:
        write_members(tmp_path / "bad.skm", {**members, name: value})
        with pytest.raises(ModelFileError, match=message):
            load(tmp_path / "bad.skm")
    del members["feature_mean"]
    write_members(tmp_path / "bad.skm", members)
    with pytest.raises(ModelFileError, match="feature_mean"):
        load(tmp_path / "bad.skm")
    # A model that reads its columns as given claims no statistics.
    save(sk.AWMSketchClassifier("16KB", learning_rate="constant", eta0=0.1,
                                random_state=0).fit(X, y), tmp_path / "c.skm")
    edit_header(tmp_path / "c.skm", lambda h: h["fitted"].update(standardized=True))
    with pytest.raises(ModelFileError, match="standardized"):
        load(tmp_path / "c.skm")


@pytest.mark.parametrize("name", sorted(MAKERS))
def entries_rms(S):
    """The root mean square of each column's non-zero values (1 for none), column by
    column in dense NumPy."""
    dense = S.toarray()
    out = np.ones(dense.shape[1])
    for j in range(dense.shape[1]):
        entries = dense[:, j][dense[:, j] != 0]
        if entries.size:
            out[j] = np.sqrt(np.mean(entries ** 2))
    return out


@pytest.mark.parametrize("name", sorted(MAKERS))
def test_a_sparse_table_is_scaled_by_the_rms_of_each_columns_entries(name, monkeypatch):
    S, y = sparse_ranges_task()
    est = MAKERS[name](random_state=0).fit(S[:600], y[:600])
    np.testing.assert_array_equal(est.feature_mean_, 0.0)
    np.testing.assert_allclose(est.feature_scale_, entries_rms(S[:600]), rtol=1e-12)
    # The zeros stay zeros: the model reads the same sparse rows, scaled.
    read = est._standardized(S)
    assert sp.issparse(read) and read.nnz == S.nnz
    np.testing.assert_array_equal(read.toarray(), S.toarray() / est.feature_scale_)
    # A column's unit does not matter (powers of 2, which scale without rounding, in the
    # rows' own order: the heaps of MISSION and BEAR turn on near ties that a last bit
    # of a sum can break).
    unit = 2.0 ** np.random.RandomState(1).randint(-10, 11, size=S.shape[1])
    S_moved = S.copy()
    S_moved.data = S_moved.data * unit[S_moved.indices]
    moved = MAKERS[name](random_state=0).fit(S_moved[:600], y[:600])
    np.testing.assert_allclose(moved.decision_function(S_moved), est.decision_function(S),
                               rtol=1e-9, atol=1e-9)
    scaled = est.score(S[600:], y[600:])
    # The columns divided by hand, and scaled by 1: the same model.
    by_hand = S.copy()
    by_hand.data = by_hand.data / est.feature_scale_[by_hand.indices]
    with monkeypatch.context() as patch:
        patch.setattr(_columns, "entry_rms", lambda X: np.ones(X.shape[1]))
        own = MAKERS[name](random_state=0).fit(by_hand[:600], y[:600])
    np.testing.assert_allclose(est.decision_function(S), own.decision_function(by_hand),
                               rtol=1e-9, atol=1e-9)
    monkeypatch.setattr(_columns, "SPARSE_TABLE_MAX_WIDTH", 0)
    monkeypatch.setattr(_columns, "MAX_SCALED_KEYS", 0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        given = MAKERS[name](random_state=0).fit(S[:600], y[:600]).score(S[600:], y[600:])
    # Read as given, the defaults scored 0.53-0.66 here; scaled, 0.76-0.84.
    assert scaled >= 0.75 and scaled >= given + 0.1, (scaled, given)


def test_a_table_stored_sparse_is_standardized_as_the_array():
    X, y = ranges_task()
    for make in (MAKERS["awm"], MAKERS["bear"]):
        dense = make(random_state=0).fit(X, y)
        assert_same_state(dense, make(random_state=0).fit(sp.csr_matrix(X), y))
    # Half the cells non-zero is the edge: a sparse matrix of fewer is scaled only.
    half = X.copy()
    half[np.arange(X.shape[0])[:, None] % 2 == np.arange(X.shape[1]) % 2] = 0.0
    assert MAKERS["awm"](random_state=0).fit(sp.csr_matrix(half), y).feature_mean_.any()
    half[0, 0] = half[0, 1] = 0.0
    assert not MAKERS["awm"](random_state=0).fit(sp.csr_matrix(half), y).feature_mean_.any()


def test_a_scaled_sparse_model_keeps_its_scales_in_later_calls_and_model_files(tmp_path):
    S, y = sparse_ranges_task()
    est = sk.WMSketchClassifier("16KB", random_state=0).partial_fit(S[:300], y[:300],
                                                                    classes=[0, 1])
    first = est.feature_scale_.copy()
    est.partial_fit(S[300:] * 10.0, y[300:])  # later rows ten times larger: not rescaled
    np.testing.assert_array_equal(est.feature_scale_, first)
    save(est, tmp_path / "m.skm")
    loaded = load(tmp_path / "m.skm")
    assert_same_state(loaded, est)
    np.testing.assert_array_equal(loaded.decision_function(S), est.decision_function(S))
    # Dense input to a scaled model is read in the same coordinates.
    np.testing.assert_allclose(est.decision_function(S.toarray()), est.decision_function(S),
                               rtol=1e-12, atol=1e-12)


# ------------------------------------------------ measured features of wide input
def measured_dicts(n=3000, seed=0):
    """Raw dicts: a category (indicators) and two measurements of ranges 1e4 and 1e-2;
    the label is the sign of a sum of the measurements' standard units."""
    rng = np.random.RandomState(seed)
    a, b = rng.normal(size=n), rng.normal(size=n)
    cat = rng.choice(list("ABCDEFGH"), n)
    y = (a - b + 0.2 * rng.normal(size=n) > 0).astype(int)
    rows = [{f"carrier={c}": 1.0, "distance": 1e4 * u, "wind": 1e-2 * v}
            for c, u, v in zip(cat, a, b)]
    return rows, y


def test_measured_features_of_raw_dicts_are_scaled_by_the_rms_of_their_values(monkeypatch):
    from sklearn_sketch._raw_features import name_keys

    rows, y = measured_dicts()
    est = MAKERS["awm"](random_state=0).fit(rows[:2000], y[:2000])
    keys = np.sort(name_keys(["distance", "wind"]))
    np.testing.assert_array_equal(est.scaled_keys_, keys)
    rms = {name: np.sqrt(np.mean([r[name] ** 2 for r in rows[:2000] if r[name] != 0]))
           for name in ("distance", "wind")}
    expected = [rms[n] for n in sorted(rms, key=lambda n: name_keys([n])[0])]
    np.testing.assert_allclose(est.key_scales_, expected, rtol=1e-12)
    assert est.memory_bytes_ == est._model_bytes() + est._feature_names.nbytes + 2 * 16
    scaled = est.score(rows[2000:], y[2000:])
    # The same model as the values divided by hand and read as given (no budget here:
    # the statistics' bytes would otherwise narrow the shape).
    hashing = lambda: sk.FeatureHashingClassifier(sketch_width=256, random_state=0)  # noqa: E731
    own = hashing().fit(rows[:2000], y[:2000])
    divided = [{k: v / est.key_scales_[list(est.scaled_keys_).index(name_keys([k])[0])]
                if k in rms else v for k, v in r.items()} for r in rows[:2000]]
    monkeypatch.setattr(_columns, "MAX_SCALED_KEYS", 0)
    by_hand = hashing().fit(divided, y[:2000])
    assert_same_state(own, by_hand, standardization=False)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        given = MAKERS["awm"](random_state=0).fit(rows[:2000], y[:2000]).score(rows[2000:],
                                                                              y[2000:])
    # Read as given, distance's range buries wind: measured 0.75 against 0.93.
    assert scaled > 0.9 and scaled > given + 0.1, (scaled, given)


def test_measured_features_travel_in_model_files_and_averages(tmp_path):
    rows, y = measured_dicts()
    est = MAKERS["wm"](random_state=0).fit(rows, y)
    save(est, tmp_path / "m.skm")
    loaded = load(tmp_path / "m.skm")
    assert_same_state(loaded, est)
    np.testing.assert_array_equal(loaded.key_scales_, est.key_scales_)
    np.testing.assert_array_equal(loaded.decision_function(rows), est.decision_function(rows))
    with np.load(tmp_path / "m.skm", allow_pickle=False) as npz:
        members = {name: npz[name] for name in npz.files}
    for name, value in [("scaled_keys", members["scaled_keys"][::-1].copy()),
                        ("key_scales", -members["key_scales"])]:
        write_members(tmp_path / "bad.skm", {**members, name: value})
        with pytest.raises(ModelFileError, match="scaled_keys must be increasing"):
            load(tmp_path / "bad.skm")
    # Copies that measured their own parts: the union of the features, each scale the
    # weighted average over the copies that measured it.
    parts = [MAKERS["wm"](learning_rate="normalized", eta0=1.0, random_state=0)
             .fit(rows[i::2], y[i::2]) for i in (0, 1)]
    merged = average_estimators(parts, weights=[1, 3])
    np.testing.assert_array_equal(merged.scaled_keys_, parts[0].scaled_keys_)
    np.testing.assert_allclose(merged.key_scales_,
                               0.25 * parts[0].key_scales_ + 0.75 * parts[1].key_scales_)
    given = MAKERS["wm"](eta0=1.0, random_state=0).fit(
        sp.csr_matrix(np.random.RandomState(0).poisson(0.1, (300, 3000)).astype(float)),
        np.arange(300) % 2)
    assert not hasattr(given, "key_scales_")  # counts of many features: read as given


def test_counts_are_not_measurements():
    from sklearn_sketch._columns import COUNT_LIMIT, measured_keys

    rng = np.random.RandomState(0)
    n = 400
    rows = np.repeat(np.arange(n), 3)
    keys = np.concatenate([[10**6, 2 * 10**6, 3 * 10**6]] * n)

    def matrix(values):
        return sp.csr_matrix((values, (rows, keys)), shape=(n, 2**40))

    ones = np.ones(3 * n)
    # A k-mer repeated in a few reads: 2 among 1s.
    repeated = ones.copy()
    repeated[::50] = 2.0
    assert measured_keys(matrix(repeated)) is None
    # Whole numbers up to COUNT_LIMIT, even mostly above 1: counts too.
    assert measured_keys(matrix(rng.randint(2, COUNT_LIMIT + 1, 3 * n).astype(float))) is None
    # A fraction, or a value past the limit: measurements, each scaled by the root mean
    # square of its values.
    measured = rng.randint(2, COUNT_LIMIT + 1, 3 * n).astype(float)
    measured[0::3] *= 100.0  # key 1e6: values past the limit
    measured[1::3] /= 7.0  # key 2e6: fractions
    got, scales = measured_keys(matrix(measured))
    np.testing.assert_array_equal(got, [10**6, 2 * 10**6])
    np.testing.assert_allclose(scales, [np.sqrt(np.mean(measured[0::3] ** 2)),
                                        np.sqrt(np.mean(measured[1::3] ** 2))], rtol=1e-12)
    # A measurement's entries of 1 count in its root mean square.
    measured[0:30:3] = 1.0
    np.testing.assert_allclose(measured_keys(matrix(measured))[1][0],
                               np.sqrt(np.mean(measured[0::3] ** 2)), rtol=1e-12)


def test_among_counts_a_measurement_is_one_mostly_past_the_counts():
    from sklearn_sketch._columns import COUNT_LIMIT, MAX_SCALED_KEYS, measured_keys

    rng = np.random.RandomState(0)
    n, words = 3000, 5000
    # Thousands of words counted 1 to 5 times a row, one counted past COUNT_LIMIT in a
    # few rows, and two measurements: a length (whole numbers mostly past the limit)
    # and a price (fractions).
    per_row = 30
    rows = np.repeat(np.arange(n), per_row + 3)
    counted = rng.randint(0, words, (n, per_row))
    length, price, spiky = 10**7, 2 * 10**7, 3 * 10**7
    counted[:, 0] = spiky
    keys = np.column_stack([counted, np.full(n, length), np.full(n, price),
                            np.zeros(n, dtype=np.int64)])
    keys[:, -1] = words + rng.randint(0, 100, n)
    values = rng.randint(1, 6, (n, per_row + 3)).astype(float)
    values[::100, 0] = 5 * COUNT_LIMIT  # the word counted past the limit, in 1% of rows
    values[:, per_row] = rng.randint(COUNT_LIMIT + 1, 5000, n)
    values[:, per_row + 1] = rng.uniform(0.1, 99.0, n)
    X = sp.csr_matrix((values.ravel(), (rows, keys.ravel())), shape=(n, 2**40))
    X.sum_duplicates()
    got, scales = measured_keys(X)
    np.testing.assert_array_equal(got, [length, price])
    np.testing.assert_allclose(scales, np.sqrt(np.mean(values[:, per_row:per_row + 2] ** 2,
                                                       axis=0)), rtol=1e-12)
    # Normalized rows: every value a fraction, thousands of features: read as given,
    # but for a length beside them.
    bag = X.copy()
    bag.data[np.isin(bag.indices, [length, price])] = 0.0
    bag.eliminate_zeros()
    normalized = sp.csr_matrix(bag.multiply(1.0 / np.sqrt(bag.multiply(bag).sum(axis=1))))
    assert measured_keys(normalized) is None
    beside = normalized + sp.csr_matrix((values[:, per_row], (np.arange(n), np.full(n, length))),
                                        shape=X.shape)
    np.testing.assert_array_equal(measured_keys(beside)[0], [length])
    # A token counted past the limit wherever it is, in fewer than 1% of the rows (a
    # few odd documents): a count.
    rare = X + sp.csr_matrix((np.full(20, 500.0), (np.arange(20) * 7, np.full(20, 4 * 10**7))),
                             shape=X.shape)
    np.testing.assert_array_equal(measured_keys(rare)[0], [length, price])
    # More measurements than MAX_SCALED_KEYS: read as given.
    many = sp.random(n, MAX_SCALED_KEYS + 200, density=0.05, format="csr", random_state=0,
                     data_rvs=lambda k: rng.randint(COUNT_LIMIT + 1, 5000, k).astype(float))
    assert measured_keys(sp.hstack([many, bag]).tocsr()) is None


def test_a_length_beside_counted_words_does_not_bury_the_words():
    # Vowpal Wabbit text of counted words and a document length (values in the
    # hundreds): read as given, the length made each row's norm, and the 'normalized'
    # step, hundreds of times the words' (20 Newsgroups atheism against christian from
    # the command line: 0.54-0.56 against 0.92 without the length).
    rng = np.random.RandomState(0)
    n, vocabulary = 4000, 3000
    y = rng.randint(0, 2, n)
    lam = np.where(np.arange(vocabulary) < 30, 0.4, 0.02)
    counts = rng.poisson(lam, (n, vocabulary)).astype(float)
    counts[:, :15] += rng.poisson(0.6, (n, 15)) * y[:, None]
    counts[:, 15:30] += rng.poisson(0.6, (n, 15)) * (1 - y[:, None])
    length = 300.0 + 2000.0 * rng.rand(n)
    X = sp.hstack([sp.csr_matrix(counts), sp.csr_matrix(length[:, None])]).tocsr()
    X = sp.csr_matrix(X, shape=(n, 2**30))  # wide: keys, not a table
    for name in ("hashing", "awm"):
        est = MAKERS[name](random_state=0).fit(X[:3000], y[:3000])
        np.testing.assert_array_equal(est.scaled_keys_, [vocabulary])
        scaled = est.score(X[3000:], y[3000:])
        without = X[:, :vocabulary]
        alone = MAKERS[name](random_state=0).fit(without[:3000], y[:3000]).score(
            without[3000:], y[3000:])
        assert scaled >= alone - 0.03, (name, scaled, alone)
