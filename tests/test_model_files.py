"""Model files (``save`` / ``load``): exact round trips, refusals, forged pickles, fuzzing."""
import io
import json
import pickle
import sys
import zipfile
from pathlib import Path

import numpy as np
import pytest

import sklearn_sketch as sk
from sklearn_sketch import ModelFileError, load, save
from sklearn_sketch._core._count_sketch import _rebuild_count_sketch
from sklearn_sketch._core._topk_heap import _rebuild_topk_heap
from sklearn_sketch._model_files import FORMAT_VERSION

sys.path.insert(0, str(Path(__file__).parent))
from _reference import CASES, data, make  # noqa: E402


def snapshot(est):
    """Everything a fitted estimator holds, as bytes and exact values."""
    if "_state" not in est.__dict__:
        return {"params": est.get_params()}
    state = est._state
    heaps = []
    for heap in state.heaps:
        capacity, keys, weights, scale, aux, aux_scale, _ = heap.__reduce__()[1]
        heaps.append((capacity, keys.tobytes(), weights.tobytes(), np.float64(scale).tobytes(),
                      None if aux is None else aux.tobytes(),
                      np.float64(aux_scale).tobytes()))
    history = None
    if state.history is not None:
        size, n_models, pairs, n_pairs, head, n_batches = state.history.__reduce__()[1]
        history = (size, n_models, {k: v.tobytes() for k, v in pairs.items()}, n_pairs, head,
                   n_batches, state.history.memory_bytes)
    return {
        "params": est.get_params(),
        "sketches": [(s.width, s.depth, s.dtype.str, s.seeds.tobytes(), s.table.tobytes(),
                      np.float64(s.scale_factor).tobytes()) for s in state.sketches],
        "heaps": heaps, "history": history,
        "intercept": state.intercept.tobytes(), "t": np.float64(state.t).tobytes(),
        "clock": (state.n_passes, state.shuffle_seed, state.mistakes,
                  state.last_pass_samples),
        "read_errors": state.read_errors.tobytes(),
        "log_loss": np.float64(state.log_loss).tobytes(),
        "classes": (None if not hasattr(est, "classes_")
                    else (est.classes_.dtype.str, est.classes_.tolist())),
        "fitted": (est.n_features_in_, est.n_iter_, est._feature_names, est.memory_bytes_,
                   getattr(est, "predict_with_", None),
                   getattr(est, "online_error_rate_", None),
                   getattr(est, "online_log_loss_", None), est.intercept_.tobytes()),
    }


def round_trip(est, tmp_path, name="model.skm"):
    path = tmp_path / name
    save(est, path)
    return load(path)


@pytest.mark.parametrize("case, n_classes", [(case, n) for case in sorted(CASES)
                                             for n in ([1] if "Regressor" in case else [2, 3])])
def test_round_trip_is_exact_and_continues_partial_fit_exactly(case, n_classes, tmp_path):
    X, y = data(case, n_classes)
    est = make(case).fit(X, y)
    loaded = round_trip(est, tmp_path)
    assert type(loaded) is type(est)
    assert snapshot(loaded) == snapshot(est)
    assert est.predict(X).tobytes() == loaded.predict(X).tobytes()
    if hasattr(est, "decision_function"):
        assert est.decision_function(X).tobytes() == loaded.decision_function(X).tobytes()
    # Mid-training: both continue partial_fit exactly alike.
    X2, y2 = data(case, n_classes, seed=1)
    est.partial_fit(X2, y2)
    loaded.partial_fit(X2, y2)
    assert snapshot(loaded) == snapshot(est)


@pytest.mark.parametrize("case", ["BearClassifier", "MissionRegressor", "AWMSketchClassifier"])
def test_save_between_partial_fit_calls(case, tmp_path):
    X, y = data(case, 3)
    chunks = np.array_split(np.arange(X.shape[0]), 4)
    kwargs = {} if "Regressor" in case else {"classes": np.unique(y)}
    est = make(case)
    est.partial_fit(X[chunks[0]], y[chunks[0]], **kwargs)
    copy = round_trip(est, tmp_path)
    for rows in chunks[1:]:
        est.partial_fit(X[rows], y[rows])
        copy.partial_fit(X[rows], y[rows])
        assert snapshot(copy) == snapshot(est)
        copy = round_trip(copy, tmp_path)


def test_bear_history_is_saved(tmp_path):
    X, y = data("BearClassifier", 3)
    est = make("BearClassifier").fit(X, y)
    assert est.history_.n_pairs > 0
    loaded = round_trip(est, tmp_path)
    for a, b in zip(est.history_.pairs(), loaded.history_.pairs()):
        assert a["keys"].tolist() == b["keys"].tolist()
        assert a["s"].tobytes() == b["s"].tobytes() and a["r"].tobytes() == b["r"].tobytes()


def test_raw_names_numeric_labels_and_unfitted(tmp_path):
    docs = [["gene_a", "gene_b"], ["gene_c"], ["gene_a", "gene_d"], ["gene_b", "gene_c"]] * 20
    y = np.array([1, 0, 1, 0] * 20)
    est = sk.MissionClassifier(4, sketch_width=64, random_state=0).fit(docs, y)
    loaded = round_trip(est, tmp_path)
    assert loaded._feature_names == est._feature_names and est._feature_names
    assert loaded.selected_features_.names.tolist() == est.selected_features_.names.tolist()
    assert loaded.classes_.dtype == est.classes_.dtype
    assert loaded.predict(docs).tolist() == est.predict(docs).tolist()
    pd = pytest.importorskip("pandas")
    frame = pd.DataFrame(data("IHTClassifier", 2)[0][:, :4], columns=list("abcd"))
    named = sk.IHTClassifier(2).fit(frame, (frame.a > 0).astype(int))
    assert round_trip(named, tmp_path).get_feature_names_out().tolist() == \
        named.get_feature_names_out().tolist()
    fresh = round_trip(sk.BearClassifier(3, eta0=0.1), tmp_path)
    assert fresh.get_params() == sk.BearClassifier(3, eta0=0.1).get_params()
    assert "_state" not in fresh.__dict__


def test_refuses_what_it_cannot_save(tmp_path):
    with pytest.raises(ModelFileError, match="random_state"):
        save(sk.MissionClassifier(random_state=np.random.RandomState(0)), tmp_path / "m")
    with pytest.raises(ModelFileError, match="cannot save a"):
        save(sk.KmerVectorizer(), tmp_path / "m")
    assert not (tmp_path / "m").exists()


class _Payload:
    def __init__(self, path):
        self.path = str(path)

    def __reduce__(self):
        return (exec, (f"open({self.path!r}, 'w').write('ran')",))


def test_a_pickle_is_refused_without_running_it(tmp_path):
    marker = tmp_path / "PWNED"
    path = tmp_path / "evil.pkl"
    path.write_bytes(pickle.dumps(_Payload(marker)))
    with pytest.raises(ModelFileError, match="pickles are not read"):
        load(path)
    assert not marker.exists()


def test_newer_format_version_names_both_versions(tmp_path):
    est = sk.IHTClassifier(4, random_state=0).fit(*data("IHTClassifier", 2))
    path = tmp_path / "m.skm"
    save(est, path)
    edit_header(path, lambda h: h.update(format_version=FORMAT_VERSION + 1))
    with pytest.raises(ModelFileError, match=f"version {FORMAT_VERSION + 1}.*version "
                                             f"{FORMAT_VERSION}"):
        load(path)


def test_forged_pickles_of_the_core_raise():
    table = np.zeros((1, 256), np.float32)
    with pytest.raises(ValueError, match="shape"):
        _rebuild_count_sketch(2**30, 1, np.array([1], np.uint32), table, 1.0)
    with pytest.raises(ValueError, match="shape"):
        _rebuild_count_sketch(2**24, 3, np.array([1, 2, 3], np.uint32),
                              np.zeros((1, 1), np.float32), 1.0)
    with pytest.raises(ValueError, match="seeds"):
        _rebuild_count_sketch(256, 1, np.array([1, 2], np.uint32), table, 1.0)
    with pytest.raises(ValueError, match="finite"):
        _rebuild_count_sketch(256, 1, np.array([1], np.uint32), table + np.inf, 1.0)
    with pytest.raises(ValueError, match="scale_factor"):
        _rebuild_count_sketch(256, 1, np.array([1], np.uint32), table, 0.0)
    with pytest.raises(ValueError, match="fit a heap of capacity 2"):
        _rebuild_topk_heap(2, np.arange(100000), np.ones(100000), 1.0)
    with pytest.raises(ValueError, match="distinct"):
        _rebuild_topk_heap(4, [3, 3], [1.0, 2.0], 1.0)
    with pytest.raises(ValueError, match="heap order"):
        _rebuild_topk_heap(4, [1, 2], [5.0, 1.0], 1.0)
    with pytest.raises(ValueError, match="finite"):
        _rebuild_topk_heap(4, [1], [np.nan], 1.0)
    with pytest.raises(ValueError, match="one per key"):
        _rebuild_topk_heap(4, [1, 2], [1.0, 2.0], 1.0, np.zeros(1))
    # A genuine pickle still round-trips through the checked paths.
    heap = sk.TopKHeap(3, aux=True)
    heap.push_many([4, 5, 6, 7], [1.0, -3.0, 2.0, 0.5])
    heap.set_aux(5, 2.5)
    heap.scale(0.25)
    copy = pickle.loads(pickle.dumps(heap))
    assert [a.tobytes() if isinstance(a, np.ndarray) else a for a in copy.__reduce__()[1]] == \
        [a.tobytes() if isinstance(a, np.ndarray) else a for a in heap.__reduce__()[1]]
    copy.check_invariants()


def test_forged_history_pickle_raises():
    from sklearn_sketch._bear_fast import LBFGSHistory, _rebuild_history

    history = LBFGSHistory(2, 1)
    history.push([7, 8], s=[[1.0, 2.0]], r=[[4.0, 1.0]])
    size, n_models, pairs, n_pairs, head, n_batches = history.__reduce__()[1]
    too_long = dict(pairs, pair_len=np.array([50, 0], np.int32))
    with pytest.raises(ValueError, match="pair lengths"):
        _rebuild_history(size, n_models, too_long, n_pairs, head, n_batches)
    with pytest.raises(ValueError, match="head"):
        _rebuild_history(size, n_models, pairs, n_pairs, 7, n_batches)
    with pytest.raises(ValueError, match="pair_s"):
        _rebuild_history(size, n_models, dict(pairs, pair_s=np.zeros((2, 1, 1))), n_pairs,
                         head, n_batches)
    wrong_hash = dict(pairs, pair_hash=pairs["pair_hash"] + np.uint64(1))
    with pytest.raises(ValueError, match="hashes"):
        _rebuild_history(size, n_models, wrong_hash, n_pairs, head, n_batches)
    copy = pickle.loads(pickle.dumps(history))
    assert copy.direction(0, [7, 8], [1.0, 1.0]).tobytes() == \
        history.direction(0, [7, 8], [1.0, 1.0]).tobytes()


# ------------------------------------------------------------------ fuzzing
def read_header(path):
    with zipfile.ZipFile(path) as archive:
        header = np.load(io.BytesIO(archive.read("header.npy")), allow_pickle=False)
    return json.loads(header.tobytes())


def write_members(path, members):
    with zipfile.ZipFile(path, "w") as archive:
        for name, arr in members.items():
            buffer = io.BytesIO()
            np.save(buffer, arr, allow_pickle=arr.dtype == object)
            archive.writestr(name + ".npy", buffer.getvalue())


def edit_header(path, edit):
    with np.load(path, allow_pickle=False) as npz:
        members = {name: npz[name] for name in npz.files}
    header = json.loads(members["header"].tobytes())
    edit(header)
    members["header"] = np.frombuffer(json.dumps(header).encode(), np.uint8)
    write_members(path, members)


def leaves(node, path=()):
    """Paths of every value of the JSON tree (containers included)."""
    yield path
    if isinstance(node, dict):
        for key, value in node.items():
            yield from leaves(value, path + (key,))
    elif isinstance(node, list):
        for i, value in enumerate(node):
            yield from leaves(value, path + (i,))


def replaced(node, path, value):
    """A copy of the JSON tree ``node`` with ``value`` at ``path``."""
    node = json.loads(json.dumps(node))
    parent = node
    for key in path[:-1]:
        parent = parent[key]
    parent[path[-1]] = value
    return node


def wrong_values(path, value):
    """Values of another JSON type than ``value``, none of which the field may take.

    A parameter can take several types (``random_state`` an int or None), so
    parameters only get containers; ``fitted: null`` is a valid unfitted model.
    """
    if path[0] == "params":
        return [[1, "a"], {"a": 1}]
    candidates = [True, 7, 0.5, "x", [1, "a"], {"a": 1}]
    if path != ("fitted",):
        candidates.append(None)
    return [c for c in candidates if type(c) is not type(value)]


@pytest.mark.parametrize("case", ["BearClassifier", "AWMSketchClassifier",
                                  "TruncationClassifier-probabilistic"])
def test_fuzzed_files_raise_or_load_the_same_model(case, tmp_path):
    X, y = data(case, 3, n=120)
    est = make(case).fit(X, y)
    path = tmp_path / "m.skm"
    save(est, path)
    original, expected = path.read_bytes(), snapshot(est)
    header = read_header(path)
    with np.load(path, allow_pickle=False) as npz:
        members = {name: npz[name] for name in npz.files}
    rng = np.random.RandomState(0)
    mutant = tmp_path / "mutant.skm"

    def check():
        try:
            model = load(mutant)
        except ModelFileError:
            return 1
        assert snapshot(model) == expected
        return 0

    refused = n_mutants = 0
    # Random bytes of the archive.
    for _ in range(150):
        raw = bytearray(original)
        for position in rng.randint(0, len(raw), size=rng.randint(1, 4)):
            raw[position] = rng.randint(256)
        mutant.write_bytes(bytes(raw))
        refused += check()
        n_mutants += 1
    # Every field of the header (the free-form metadata aside) to a value of a
    # wrong type, and every list but the names (a subset is valid) one item short.
    mutations = []
    for field in leaves(header):
        if field and field[0] != "metadata":
            value = header
            for key in field:
                value = value[key]
            mutations += [(field, bad) for bad in wrong_values(field, value)]
            if isinstance(value, list) and value and "feature_names" not in field:
                mutations.append((field, value[:-1]))
    for i in rng.permutation(len(mutations))[:200]:
        field, bad = mutations[i]
        header_bytes = json.dumps(replaced(header, field, bad)).encode()
        write_members(mutant, {**members, "header": np.frombuffer(header_bytes, np.uint8)})
        refused += check()
        n_mutants += 1
    assert refused > 0.8 * n_mutants


@pytest.mark.parametrize("edit, message", [
    (lambda h: h.update(estimator="os.system"), "unknown estimator"),
    (lambda h: h["fitted"]["state"]["heaps"][0].update(capacity=1), "entries for capacity"),
    (lambda h: h["fitted"]["state"]["sketches"][0].update(scale=float("nan")), "JSON"),
    (lambda h: h["params"].update(eta0=-1.0), "eta0"),
    (lambda h: h["fitted"].update(norm_floor_=-1.0), "norm_floor_"),
    (lambda h: h["fitted"].update(norm_floor_="1"), "norm_floor_"),
    (lambda h: h["fitted"].update(norm_sample=[1.0, -2.0]), "norm_sample"),
    (lambda h: h["fitted"].update(norm_sample=[1.0] * 256), "norm_sample"),
    (lambda h: h["fitted"].update(n_features_in_="30"), "n_features_in_"),
    (lambda h: h["fitted"]["classes"].update(values=["b", "a", "c"]), "sorted"),
])
def test_inconsistent_headers_raise(edit, message, tmp_path):
    X, y = data("MissionClassifier", 3)
    path = tmp_path / "m.skm"
    save(make("MissionClassifier").fit(X, y), path)
    edit_header(path, edit)
    with pytest.raises(ModelFileError, match=message):
        load(path)


def test_inconsistent_arrays_raise(tmp_path):
    X, y = data("MissionClassifier", 3)
    path = tmp_path / "m.skm"
    save(make("MissionClassifier").fit(X, y), path)
    with np.load(path, allow_pickle=False) as npz:
        members = {name: npz[name] for name in npz.files}
    for name, value, message in [
            ("sketch_1_table", np.zeros((3, 32), np.float32), "differs"),
            ("sketch_0_seeds", np.zeros(2, np.uint32), "sketch_0_seeds"),
            ("intercept", np.zeros(2), "intercept"),
            ("heap_0_weights", np.full(members["heap_0_weights"].shape, np.inf), "NaN"),
            ("heap_0_keys", np.zeros(members["heap_0_keys"].shape, np.int64), "distinct"),
            ("surplus", np.zeros(1), "unexpected"),
            ("classes", np.array(["a", 1], object), "unsupported layout")]:
        write_members(tmp_path / "bad.skm", {**members, name: value})
        with pytest.raises(ModelFileError, match=message):
            load(tmp_path / "bad.skm")


def test_a_member_claiming_a_huge_shape_is_refused_before_allocating(tmp_path):
    X, y = data("IHTClassifier", 2)
    path = tmp_path / "m.skm"
    save(make("IHTClassifier").fit(X, y), path)
    with np.load(path, allow_pickle=False) as npz:
        members = {name: npz[name] for name in npz.files}
    with zipfile.ZipFile(path, "w") as archive:
        for name, arr in members.items():
            buffer = io.BytesIO()
            np.save(buffer, arr, allow_pickle=False)
            raw = buffer.getvalue()
            if name == "intercept":
                raw = raw.replace(b"(1,)", b"(4000000000,)").replace(b" " * 9 + b"\n", b"\n")
            archive.writestr(name + ".npy", raw)
    with pytest.raises(ModelFileError, match="intercept.*bytes for shape"):
        load(path)


def test_pickle_still_serves_scikit_learn_tools(tmp_path):
    """joblib (read-only memory maps) and GridSearchCV(n_jobs=2) go through the checked rebuilds."""
    import joblib
    from sklearn.model_selection import GridSearchCV

    X, y = data("BearClassifier", 3)
    est = make("BearClassifier").fit(X, y)
    joblib.dump(est, tmp_path / "est.joblib")
    copy = joblib.load(tmp_path / "est.joblib", mmap_mode="r")
    assert snapshot(copy) == snapshot(est)
    X2, y2 = data("BearClassifier", 3, seed=1)
    assert snapshot(copy.partial_fit(X2, y2)) == snapshot(est.partial_fit(X2, y2))
    search = GridSearchCV(make("MissionClassifier"), {"eta0": [0.1, 1.0]}, cv=2, n_jobs=2)
    assert search.fit(X, y).best_estimator_.predict(X).shape == y.shape


def test_a_file_without_the_step_floor_loads_as_trained_without_one(tmp_path):
    # Files written before 'normalized' had a floor trained with none: 0.0.
    X, y = data("MissionClassifier", 3)
    path = tmp_path / "m.skm"
    model = make("MissionClassifier").fit(X, y)
    assert model.learning_rate == "auto" and model.norm_floor_ > 0
    save(model, path)
    assert load(path).norm_floor_ == model.norm_floor_
    edit_header(path, lambda h: h["fitted"].pop("norm_floor_"))
    assert load(path).norm_floor_ == 0.0


def test_a_stream_saved_before_its_floor_is_fixed_goes_on_as_if_never_saved(tmp_path):
    # Fed a few rows at a time, the floor keeps the rows' norms until 256 are seen.
    X, y = data("MissionClassifier", 3)
    path = tmp_path / "m.skm"
    straight = make("MissionClassifier").partial_fit(X[:10], y[:10], classes=np.unique(y))
    saved = make("MissionClassifier").partial_fit(X[:10], y[:10], classes=np.unique(y))
    assert saved._norm_sample.size == 10
    save(saved, path)
    resumed = load(path)
    for model in (straight, resumed):
        model.partial_fit(X[10:], y[10:])
    assert resumed.norm_floor_ == straight.norm_floor_
    np.testing.assert_array_equal(resumed.intercept_, straight.intercept_)
    np.testing.assert_array_equal(resumed.coef_.toarray(), straight.coef_.toarray())
