"""Hostile inputs found by the reproducers of issue 14: each must give a clear error
or the right answer, never a crash, a silent overflow or unbounded memory.

Cases that crashed the process run in a child interpreter, so a regression fails
one test instead of killing the session."""
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import sklearn_sketch
from sklearn_sketch import MissionClassifier

# Where the package under test was imported from: the checkout when built in
# place, site-packages when installed (a checkout without compiled extensions
# must not shadow it, so the child runs from that folder).
PACKAGE_PARENT = os.path.dirname(os.path.dirname(os.path.abspath(sklearn_sketch.__file__)))


def run_child(code):
    """Run ``code`` in a fresh interpreter on the package under test; its CompletedProcess."""
    env = dict(os.environ,
               PYTHONPATH=PACKAGE_PARENT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True,
                          text=True, env=env, cwd=PACKAGE_PARENT, timeout=300)


# ---------------------------------------------------------------- batch sizes
ESTIMATORS = {
    "MissionClassifier": "MissionClassifier(5, sketch_width=256, random_state=0)",
    "MissionRegressor": "MissionRegressor(5, sketch_width=256, random_state=0)",
    "IHTClassifier": "IHTClassifier(5, random_state=0)",
    "IHTRegressor": "IHTRegressor(5, random_state=0)",
    "FeatureHashingClassifier": "FeatureHashingClassifier(sketch_width=256, random_state=0)",
    "WMSketchClassifier": "WMSketchClassifier('8KB', random_state=0)",
    "AWMSketchClassifier": "AWMSketchClassifier('8KB', random_state=0)",
    "TruncationClassifier": "TruncationClassifier('1KB', random_state=0)",
    "TruncationClassifierP": "TruncationClassifier('1KB', truncation='probabilistic', "
                             "random_state=0)",
    "SpaceSavingClassifier": "SpaceSavingClassifier('1KB', random_state=0)",
    "SparsePerceptronClassifier": "SparsePerceptronClassifier(5, random_state=0)",
    "BearClassifier": "BearClassifier(5, sketch_width=256, random_state=0)",
    "BearRegressor": "BearRegressor(5, sketch_width=256, random_state=0)",
}


@pytest.mark.parametrize("name", sorted(ESTIMATORS))
def test_huge_batch_size_is_one_batch_of_all_rows(name):
    # 2**61 * 8 bytes wrapped to a 0-byte buffer (heap overflow, SIGABRT); 2**40 asked
    # for 8 TiB for 400 rows. A batch larger than the data is one batch of every row.
    result = run_child(f"""
        import numpy as np
        from sklearn_sketch import *
        rng = np.random.RandomState(0)
        X = rng.normal(size=(400, 20)); y = (X[:, 0] > 0).astype(int)
        if "Regressor" in {name!r}:
            y = X[:, 0] - 2 * X[:, 1]
        ref = {ESTIMATORS[name]}.set_params(batch_size=400).fit(X, y).predict(X)
        for bs in (2**40, 2**61, 2**63 - 1, 2**70):
            got = {ESTIMATORS[name]}.set_params(batch_size=bs).fit(X, y).predict(X)
            assert np.array_equal(got, ref), bs
        print("ok")
        """)
    assert result.returncode == 0, result.stderr[-2000:]
    assert result.stdout.strip() == "ok"


def test_sgd_kernel_buffer_size_overflow_raises_memory_error():
    # Sizes whose byte counts overflow must be refused before any allocation.
    result = run_child("""
        import numpy as np
        from sklearn_sketch import CountSketch, TopKHeap
        from sklearn_sketch._sgd_fast import SGDParams, sgd_pass, Loss, Schedule, WeightStore
        params = SGDParams(loss=Loss.LOG_LOSS, schedule=Schedule.CONSTANT,
                           store=WeightStore.SKETCH_AND_HEAP, eta0=0.1, power_t=0.5, alpha=0.0,
                           optimal_init=0.0, batch_size=1, fit_intercept=True)
        sketch = CountSketch(64, 3, random_state=0); heap = TopKHeap(4)
        indptr = np.array([0, 1], dtype=np.int64); indices = np.array([3], dtype=np.int64)
        one = np.ones(1)
        try:
            sgd_pass(params, [sketch], [heap], np.zeros(1), indptr, indices, one, one, one,
                     np.zeros(1, dtype=np.int64), 1.0, 2**62)
        except MemoryError as e:
            print("MemoryError", e)
        """)
    assert result.returncode == 0, result.stderr[-2000:]
    assert result.stdout.startswith("MemoryError cannot allocate"), result.stdout


# ---------------------------------------------------------------- uninitialised objects
HEAP_CALLS = ["h.push_or_update(1, 1.0)", "1 in h", "h.contains(1)", "h.get(1)",
              "h.push_many([1], [1.0])", "h.remove(1)", "h.min()", "h.scale(2.0)", "h.clear()",
              "h.items()", "h.keys()", "h.weights()", "h.check_invariants()", "h.memory_bytes",
              "h.get_aux(1)", "h.set_aux(1, 1.0)", "h.scale_aux(2.0)", "h.aux_items()",
              "h.pop_min()"]
SKETCH_CALLS = ["c.query([1])", "c.update([1], [1.0])", "c.scale(2.0)", "c.clear()",
                "c.table", "c.seeds", "c.dtype", "c.memory_bytes", "c.to_array()", "c.copy()",
                "c.buckets([1])", "c.merge(CountSketch(8, 1))", "CountSketch(8, 1).merge(c)",
                "c.same_configuration(c)"]


@pytest.mark.parametrize("call", HEAP_CALLS + SKETCH_CALLS)
def test_uninitialised_core_objects_raise(call):
    # TopKHeap.__new__ left NULL pointers (segfault on the first offer); a bare
    # CountSketch answered queries from uninitialised stack memory.
    result = run_child(f"""
        from sklearn_sketch import CountSketch, TopKHeap
        h = TopKHeap.__new__(TopKHeap)
        c = CountSketch.__new__(CountSketch)
        try:
            {call}
        except RuntimeError as e:
            print(e)
        """)
    assert result.returncode == 0, result.stderr[-2000:]
    assert "is not initialised" in result.stdout, result.stdout


def test_uninitialised_objects_are_refused_by_the_kernels():
    result = run_child("""
        import numpy as np
        from sklearn_sketch import CountSketch, TopKHeap
        from sklearn_sketch._bear_fast import LBFGSHistory, bear_pass
        from sklearn_sketch._core import track_heavy_hitters
        from sklearn_sketch._sgd_fast import (SGDParams, decision_function_kernel, sgd_pass,
                                              Loss, Schedule, WeightStore)
        params = SGDParams(loss=Loss.LOG_LOSS, schedule=Schedule.CONSTANT,
                           store=WeightStore.SKETCH_AND_HEAP, eta0=0.1, power_t=0.5, alpha=0.0,
                           optimal_init=0.0, batch_size=1, fit_intercept=True)
        indptr = np.array([0, 1], dtype=np.int64); indices = np.array([3], dtype=np.int64)
        one = np.ones(1); order = np.zeros(1, dtype=np.int64)
        good_c, good_h = CountSketch(64, 3, random_state=0), TopKHeap(4)
        bad_c, bad_h = CountSketch.__new__(CountSketch), TopKHeap.__new__(TopKHeap)
        calls = [
            lambda: sgd_pass(params, [bad_c], [good_h], np.zeros(1), indptr, indices, one, one,
                             one, order, 1.0, 1),
            lambda: sgd_pass(params, [good_c], [bad_h], np.zeros(1), indptr, indices, one, one,
                             one, order, 1.0, 1),
            lambda: decision_function_kernel([bad_c], [], indptr, indices, one, np.zeros((1, 1))),
            lambda: decision_function_kernel([], [bad_h], indptr, indices, one, np.zeros((1, 1))),
            lambda: track_heavy_hitters(bad_c, good_h, [1]),
            lambda: track_heavy_hitters(good_c, bad_h, [1]),
            lambda: bear_pass(params, [good_c], [good_h], np.zeros(1),
                              LBFGSHistory.__new__(LBFGSHistory), indptr, indices, one, one,
                              one, order, 1.0, 1),
            lambda: LBFGSHistory.__new__(LBFGSHistory).push([1], [[1.0]], [[1.0]]),
            lambda: LBFGSHistory.__new__(LBFGSHistory).reserve(4),
        ]
        for call in calls:
            try:
                call()
                print("no error")
            except RuntimeError as e:
                assert "is not initialised" in str(e), e
                print("refused")
        try:
            sgd_pass(params, ["not a sketch"], [good_h], np.zeros(1), indptr, indices, one, one,
                     one, order, 1.0, 1)
        except TypeError as e:
            print("refused", e)
        """)
    assert result.returncode == 0, result.stderr[-2000:]
    lines = result.stdout.splitlines()
    assert lines[:9] == ["refused"] * 9, result.stdout
    assert lines[9].startswith("refused expected CountSketch"), result.stdout


# ---------------------------------------------------------------- overflow to inf
def test_count_sketch_update_that_overflows_raises_and_leaves_the_sketch_unchanged():
    from sklearn_sketch import CountSketch

    cs = CountSketch(64, 3, random_state=0)
    cs.update([7, 8], [2.0, -1.0])
    table = cs.table.copy()
    with pytest.raises(ValueError, match="overflows the sketch's float32 cells"):
        cs.update([8, 7, 7], [5.0, 1e39, 1.0])   # finite in float64, not in float32
    np.testing.assert_array_equal(cs.table, table)
    assert np.isfinite(cs.query([7, 8])).all()
    big = CountSketch(64, 3, dtype=np.float64, random_state=0)
    big.update([1], [1e308])
    with pytest.raises(ValueError, match="overflows"):
        big.update([1], [1e308])
    np.testing.assert_array_equal(big.query([1]), [1e308])


def test_count_sketch_scale_that_overflows_raises():
    from sklearn_sketch import CountSketch

    cs = CountSketch(64, 3, random_state=0)
    cs.update([1], [1.0])
    cs.scale(1e200)
    with pytest.raises(ValueError, match="scaling by 1e\\+200 overflows"):
        cs.scale(1e200)
    assert cs.scale_factor == 1e200
    np.testing.assert_allclose(cs.query([1]), [1e200])
    cs.scale(1e-190)   # shrinking never overflows
    np.testing.assert_allclose(cs.query([1]), [1e10])
    other = CountSketch(64, 3, random_state=0)
    other.update([1], [3e38])
    twice = CountSketch(64, 3, random_state=0)
    twice.update([1], [3e38])
    with pytest.raises(ValueError, match="merged sketch overflows"):
        twice.merge(other)
    np.testing.assert_allclose(twice.query([1]), [3e38], rtol=1e-6)


def test_heap_refuses_overflow_and_check_invariants_checks_finiteness():
    from sklearn_sketch import TopKHeap

    h = TopKHeap(4, aux=True)
    h.push_many([1, 2, 3], [1.0, -2.0, 3.0])
    h.scale(1e200)
    with pytest.raises(ValueError, match="overflows"):
        h.scale(1e200)
    h.push_or_update(9, 1.0)
    keys, weights = h.items()
    assert np.isfinite(weights).all() and keys.tolist() == [3, 2, 1, 9]
    h.check_invariants()
    h.scale(1e-208)   # scale factor 1e-8: a weight is stored as 1e8 times itself
    with pytest.raises(ValueError, match="overflows the heap's scale factor"):
        h.push_or_update(5, 1e301)
    with pytest.raises(ValueError, match="overflows the heap's scale factor"):
        h.push_many([5, 6], [1.0, 1e301])
    assert 5 not in h and 6 not in h
    h.set_aux(9, 1e300)
    with pytest.raises(ValueError, match="overflows"):
        h.scale_aux(1e10)
    h.check_invariants()


def test_no_path_gives_a_heap_a_non_finite_weight():
    # Neither an update nor a rebuilt (unpickled) heap can hold inf or NaN.
    from sklearn_sketch import TopKHeap
    from sklearn_sketch._core._topk_heap import _rebuild_topk_heap

    for bad in (np.inf, np.nan):
        with pytest.raises(ValueError):
            _rebuild_topk_heap(4, np.array([1, 2]), np.array([1.0, bad]), 1.0)
        heap = TopKHeap(4)
        with pytest.raises(ValueError):
            heap.push_or_update(1, bad)
        assert len(heap) == 0
        heap.check_invariants()


@pytest.mark.parametrize("store", ["SKETCH_ONLY", "WEIGHT_MEDIAN", "ACTIVE_SET", "BEAR"])
def test_kernel_reports_divergence_when_a_cell_overflows(store):
    # One cell overflows while the median of the key's three cells stays finite:
    # the kernel must still report the pass as diverged.
    from sklearn_sketch import CountSketch, TopKHeap
    from sklearn_sketch._bear_fast import LBFGSHistory, bear_pass
    from sklearn_sketch._sgd_fast import Loss, PassStatus, Schedule, SGDParams, WeightStore
    from sklearn_sketch._sgd_fast import sgd_pass

    sketch = CountSketch(64, 3, random_state=0)
    buckets, signs = sketch.buckets([5])
    # Nearly full cell in row 0 of key 5, in the direction of the step (y = -1 pushes
    # the weight down), so the add overflows float32 there only.
    table = np.zeros((3, 64), dtype=np.float32)
    table[0, buckets[0, 0]] = -signs[0, 0] * 3.3e38
    from sklearn_sketch._core._count_sketch import _rebuild_count_sketch
    sketch = _rebuild_count_sketch(64, 3, sketch.seeds, table, 1.0)
    heap = TopKHeap(1)
    heap.push_or_update(99, 1e300)   # AWM: key 5 cannot enter the heap, it goes to the sketch
    params = SGDParams(loss=Loss.SQUARED_ERROR, schedule=Schedule.CONSTANT,
                       store=getattr(WeightStore, store, WeightStore.SKETCH_AND_HEAP),
                       eta0=1.0, power_t=0.5, alpha=0.0, optimal_init=0.0, batch_size=1,
                       fit_intercept=False)
    indptr = np.array([0, 1], dtype=np.int64)
    indices = np.array([5], dtype=np.int64)
    # A step of 1e38 overflows the prepared cell only (float32 holds 3.4e38).
    data, y = np.array([1e29]), np.array([-1e9])
    args = (indptr, indices, data, y, np.ones(1), np.zeros(1, dtype=np.int64), 1.0, 1)
    if store == "BEAR":
        _, status, _, _ = bear_pass(params, [sketch], [heap], np.zeros(1),
                                    LBFGSHistory(2, 1, capacity=2), *args)
    else:
        _, status, _, _ = sgd_pass(params, [sketch], [] if store == "SKETCH_ONLY" else [heap],
                                   np.zeros(1), *args)
    assert not np.isfinite(sketch.table).all()   # the setup did overflow a cell
    assert status == PassStatus.PASS_DIVERGED


# ---------------------------------------------------------------- raw input
def test_raw_input_whose_first_document_is_empty():
    # Raw input was recognised by X[0] only: an empty first document fell through to
    # numeric validation ("inhomogeneous shape").
    from sklearn_sketch._raw_features import is_raw_input

    docs = [["a"], ["b"], ["a", "c"], ["b"], [], ["a", "b"]]
    y = [0, 1, 0, 1, 1, 0]
    moved = [docs[4]] + docs[:4] + docs[5:]
    y_moved = [y[4]] + y[:4] + y[5:]
    first = MissionClassifier(5, sketch_width=256, shuffle=False, random_state=0)
    first.fit(moved, y_moved)
    assert first.n_features_in_ == 2**63 - 1
    # The same documents in the same order give the same model as the hashed matrix.
    from sklearn_sketch._raw_features import hash_raw
    ref = MissionClassifier(5, sketch_width=256, shuffle=False, random_state=0)
    ref.fit(hash_raw(moved)[0], y_moved)
    np.testing.assert_array_equal(first.sketches_[0].table, ref.sketches_[0].table)
    np.testing.assert_array_equal(first.predict([[], ["a"], ["b"]]),
                                  ref.predict(hash_raw([[], ["a"], ["b"]])[0]))
    first.partial_fit([[], ["b"], ["a"], ["b"]], [0, 1, 0, 1])
    assert first.predict([[], [], ["a"]]).shape == (3,)
    assert is_raw_input([(), {"a": 1.0}]) and is_raw_input([[], []])
    assert not is_raw_input([[], [1.0, 2.0]]) and not is_raw_input([[1.0], []])
    with pytest.raises(TypeError, match="token lists"):
        first.partial_fit([[], {"a": 1.0}], [0, 1])


# ---------------------------------------------------------------- long lines
def _gzip_without_newline(path, n_bytes, prefix=b""):
    import gzip

    with gzip.open(path, "wb", compresslevel=9) as f:
        f.write(prefix)
        for _ in range(n_bytes // 2**16):
            f.write(b"1" * 2**16)


@pytest.mark.parametrize("reader", ["svmlight", "vw", "fasta", "fastq", "labels"])
def test_a_line_longer_than_max_line_bytes_fails_fast(tmp_path, reader):
    # A small gzip file holding one huge line was read into one buffer (2.2 GB for
    # 1 GiB); the cap stops the read once the unit passes it.
    import time
    import tracemalloc

    from sklearn_sketch.io import (FastaReader, FastqReader, ParseError, RecordTooLong,
                                   SvmlightReader, VowpalWabbitReader, scan_labels)

    path = str(tmp_path / "bomb.gz")
    head = {"svmlight": b"1 1:2\n-1 2:1\n", "vw": b"1 | a b\n-1 | c\n",
            "fasta": b">r1\nACGT\n>r2\n", "fastq": b"@r1\nACGT\n+\nIIII\n@r2\n",
            "labels": b"1 1:2\n-1 2:1\n"}[reader]
    _gzip_without_newline(path, 64 * 2**20, head)   # 64 MiB of '1' after two short units
    cap = 2**20
    make = {"svmlight": lambda: list(SvmlightReader(path, max_line_bytes=cap)),
            "vw": lambda: list(VowpalWabbitReader(path, max_line_bytes=cap)),
            "fasta": lambda: list(FastaReader(path, max_line_bytes=cap)),
            "fastq": lambda: list(FastqReader(path, max_line_bytes=cap)),
            "labels": lambda: scan_labels(path, "svmlight", max_line_bytes=cap)}[reader]
    tracemalloc.start()
    start = time.perf_counter()
    try:
        with pytest.raises(RecordTooLong, match="longer than max_line_bytes=1048576") as info:
            make()
        elapsed = time.perf_counter() - start
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert isinstance(info.value, ParseError) and info.value.path == path
    assert info.value.line == {"svmlight": 3, "vw": 3, "fasta": 3, "fastq": 5,
                               "labels": 3}[reader]
    assert elapsed < 5
    assert peak < 16 * cap   # not the 64 MiB line


@pytest.mark.parametrize("records", [1, 2])
def test_a_reader_keeps_no_copy_of_a_long_record_it_gave(tmp_path, records):
    # A genome's record arrives over many blocks; a reader per file mixed with
    # others (ShuffledReader) is suspended while its record is cut into reads. Its
    # text is not kept beside the parsed sequence: a record the last of its file
    # (1) or followed by another (2, a chunk a record).
    import tracemalloc

    from sklearn_sketch.io import FastaReader

    rng = np.random.default_rng(0)
    bases = 4 * 2**20
    seq = rng.choice(list(b"ACGT"), bases).astype(np.uint8).tobytes()
    text = b">chr\n" + b"\n".join(seq[i:i + 80] for i in range(0, bases, 80)) + b"\n"
    path = tmp_path / "genome.fa"
    path.write_bytes(text + b">plasmid\nACGT\n" * (records - 1))
    tracemalloc.start()
    try:
        chunks = iter(FastaReader(path, chunk_reads=1, block_size=2**16))
        first = next(chunks)
        held = tracemalloc.get_traced_memory()[0]
    finally:
        tracemalloc.stop()
    assert first.sequences[0] == seq
    assert bases <= held < 1.25 * bases  # the text kept too was 2.0x
    assert [c.names for c in chunks] == [["plasmid"]] * (records - 1)


def test_max_line_bytes_keeps_lines_up_to_the_cap(tmp_path):
    from sklearn_sketch.io import ParseError, SvmlightReader

    path = tmp_path / "long.svm"
    line = b"1 " + b" ".join(b"%d:1" % i for i in range(1, 3000)) + b"\n"
    path.write_bytes(b"-1 1:1\n" + line + b"1 2:1\n")
    chunks = list(SvmlightReader(path, max_line_bytes=len(line), block_size=64))
    assert [c.X.getnnz() for c in chunks] == [1 + 2999 + 1]
    with pytest.raises(ParseError, match="line 2: line or record longer"):
        list(SvmlightReader(path, max_line_bytes=len(line) - 2, block_size=64))
    with pytest.raises(ValueError, match="max_line_bytes must be >= 1"):
        SvmlightReader(path, max_line_bytes=0)


# ---------------------------------------------------------------- selection API cost
def test_selection_api_costs_o_k_plus_nnz_at_2_to_the_30_columns():
    # get_feature_names_out took 30 s and 1.45 GB, transform of 5 rows 25 s and
    # 4.3 GB: both went through an n_features-sized mask or name list.
    import time
    import tracemalloc

    import scipy.sparse as sp

    n_features = 2**30
    rng = np.random.RandomState(0)
    rows = np.repeat(np.arange(200), 20)
    cols = rng.randint(0, n_features, size=rows.size)
    X = sp.csr_matrix((np.ones(rows.size), (rows, cols)), shape=(200, n_features))
    X.sum_duplicates()
    y = np.arange(200) % 2
    m = MissionClassifier(50, sketch_width=2**12, random_state=0).fit(X, y)
    columns = m.get_support(indices=True)
    assert columns.size == 50 and np.all(np.diff(columns) > 0)
    tracemalloc.start()
    start = time.perf_counter()
    try:
        names = m.get_feature_names_out()
        Xt = m.transform(X[:5])
        support = m.get_support(indices=True)
        selected = m.selected_features_
        elapsed = time.perf_counter() - start
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert elapsed < 1.0
    assert peak < 2**20   # 1 MiB: nothing of n_features size
    assert names.tolist() == [f"x{c}" for c in columns]
    np.testing.assert_array_equal(support, columns)
    assert set(selected.keys.tolist()) == set(columns.tolist())
    expected = np.zeros((5, 50))
    sub = X[:5].tocoo()
    for r, c, v in zip(sub.row, sub.col, sub.data):
        if c in set(columns.tolist()):
            expected[r, np.searchsorted(columns, c)] = v
    assert Xt.shape == (5, 50)
    np.testing.assert_array_equal(Xt.toarray(), expected)
    with pytest.raises(ValueError, match=r"more than 2\*\*27.*get_support\(indices=True\)"):
        m.get_support()
    # Names given as input_features are indexed, not rebuilt.
    small = MissionClassifier(3, sketch_width=256, random_state=0).fit(
        np.random.RandomState(0).normal(size=(40, 6)), np.arange(40) % 2)
    names_in = np.array([f"f{i}" for i in range(6)], dtype=object)
    np.testing.assert_array_equal(small.get_feature_names_out(names_in),
                                  names_in[small.get_support()])
    with pytest.raises(ValueError, match="input_features"):
        small.get_feature_names_out(names_in[:5])
