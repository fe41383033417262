"""Streaming readers: equal to scikit-learn's loader, hashed VW keys, FASTA/FASTQ, errors."""
import bz2
import doctest
import gc
import gzip
import importlib
import importlib.util
import inspect
import io
import lzma
import os
import pickle
import sys
import zipfile
from pathlib import Path

import mmh3
import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sklearn.datasets import load_svmlight_file

import sklearn_sketch.io
from sklearn_sketch import (
    AWMSketchClassifier,
    BearClassifier,
    MissionClassifier,
    MissionRegressor,
)
from sklearn_sketch.io import (
    partial_fit_stream,
    MAX_FEATURES,
    Chunk,
    FastaReader,
    FastqReader,
    KeyNames,
    ParseError,
    SvmlightReader,
    VowpalWabbitReader,
)
from sklearn_sketch.io._parsers import (
    SvmlightParser,
    VowpalWabbitParser,
    first_rows,
    vw_feature_names,
)
from sklearn_sketch.io._readers import AUTO_BASE_BYTES

sys.path.insert(0, str(Path(__file__).parent))
from _reference import reference_cross  # noqa: E402


def write(tmp_path, name, content):
    path = tmp_path / name
    path.write_bytes(content.encode() if isinstance(content, str) else content)
    return path


COMPRESSIONS = [None, "gzip", "bzip2", "xz", "zip"]


def pack(data, kind):
    """``data`` compressed as ``kind`` (a zip archive of one file), or as it is."""
    if kind is None:
        return data
    if kind == "zip":
        out = io.BytesIO()
        with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as archive:
            archive.writestr("inner/data.txt", data)
        return out.getvalue()
    return {"gzip": gzip, "bzip2": bz2, "xz": lzma}[kind].compress(data)


def stack(chunks):
    """indptr, indices, data, y of the chunks' rows put one after the other."""
    indptr, indices, data, y = [np.zeros(1, dtype=np.int64)], [], [], []
    for chunk in chunks:
        indptr.append(chunk.X.indptr[1:] + indptr[-1][-1])
        indices.append(chunk.X.indices)
        data.append(chunk.X.data)
        y.append(chunk.y)
    cat = np.concatenate
    return cat(indptr), cat(indices or [[]]), cat(data or [[]]), cat(y or [[]])


def assert_same_as_sklearn(chunks, path, **kwargs):
    X, y = load_svmlight_file(str(path), **kwargs)
    X = sp.csr_matrix(X)
    indptr, indices, data, labels = stack(chunks)
    np.testing.assert_array_equal(indptr, X.indptr)
    np.testing.assert_array_equal(indices, X.indices)
    # Bitwise, so that -0.0 and the last bit of every value count.
    np.testing.assert_array_equal(data.view(np.int64), X.data.view(np.int64))
    np.testing.assert_array_equal(labels, y)


# ---------------------------------------------------------------- svmlight
VALUES = ["1", "-0.25", "1e-3", "2.5E+2", "+7", "0", "-0", "1.5e-310", ".5", "3.",
          "123456789.123456789", "-2.2250738585072011e-308", "1E22", "9007199254740993"]


def svmlight_text(rng, n_rows, zero_based, eol="\n"):
    """Random rows with empty rows, comments, blank lines, qids, tabs and odd numbers."""
    lines = ["# generated", ""]
    first = 0 if zero_based else 1
    for _ in range(n_rows):
        parts = [str(rng.choice(["1", "-1", "0.5", "+2", "3e1", "-0"]))]
        if rng.random() < 0.3:
            parts.append(f"qid:{rng.integers(1, 4)}")
        size = int(rng.integers(0, 6))
        for index in np.sort(rng.choice(np.arange(first, first + 50), size, replace=False)):
            value = repr(rng.normal()) if rng.random() < 0.5 else str(rng.choice(VALUES))
            parts.append(f"{index}:{value}")
        line = ("\t" if rng.random() < 0.2 else " ").join(parts)
        if rng.random() < 0.2:
            line += " # comment 1:2"
        if rng.random() < 0.1:
            lines.append("   # a comment line")
        lines.append(line)
    return eol.join(lines) + eol


def data_lines(text):
    return [i + 1 for i, line in enumerate(text.split("\n")) if line.split("#")[0].strip()]


@pytest.mark.parametrize("zero_based", [True, False])
@pytest.mark.parametrize("chunk_rows", [1, 7, 10**6])
@pytest.mark.parametrize("block_size", [16, 2**20])
def test_svmlight_equals_load_svmlight_file(tmp_path, zero_based, chunk_rows, block_size):
    rng = np.random.default_rng(chunk_rows + zero_based)
    text = svmlight_text(rng, 60, zero_based, eol="\r\n" if chunk_rows == 7 else "\n")
    path = write(tmp_path, "data.svm", text)
    reader = SvmlightReader(path, chunk_rows, n_features=60, zero_based=zero_based,
                            block_size=block_size)
    chunks = list(reader)
    assert_same_as_sklearn(chunks, path, n_features=60, zero_based=zero_based)
    sizes = [chunk.X.shape[0] for chunk in chunks]
    assert sizes == [min(chunk_rows, 60 - i) for i in range(0, 60, chunk_rows)]
    assert [chunk.first_line for chunk in chunks] == data_lines(text)[::chunk_rows]
    for chunk in chunks:
        assert isinstance(chunk.X, sp.csr_matrix) and chunk.X.shape[1] == 60
        assert chunk.X.indices.dtype == chunk.X.indptr.dtype == np.int64
        assert chunk.X.has_canonical_format and chunk.X.data.dtype == np.float64
        assert chunk.sample_weight is None and chunk.qid is None
    assert reader.n_skipped_ == 0 and reader.zero_based_ is zero_based


def test_large_chunks_recycle_dead_chunks_memory_and_keep_the_live_ones(tmp_path):
    # Arrays of 1 MiB or more take their memory from the parser's pool: a dead
    # chunk's blocks back a later chunk, while live chunks, kept past the end
    # of the reader, hold their own rows.
    rng = np.random.default_rng(0)
    n_rows, per_row, chunk_rows = 5000, 200, 1000  # 1.6 MB of indices a chunk
    columns = np.sort(rng.choice(10**6, size=(n_rows, per_row)), axis=1)
    lines = [f"{i % 3} " + " ".join(f"{c}:{v}" for c, v in zip(np.unique(row), range(1, 999)))
             for i, row in enumerate(columns)]
    path = write(tmp_path, "large.svm", "\n".join(lines) + "\n")
    reader = SvmlightReader(path, chunk_rows, n_features=10**6, zero_based=True)
    kept, blocks = [], []
    for i, chunk in enumerate(reader):
        blocks.append({chunk.X.indices.ctypes.data, chunk.X.data.ctypes.data})
        if i % 2 == 0:
            kept.append(chunk)
    del reader, chunk
    gc.collect()
    assert blocks[3] == blocks[1]  # chunk 1 died while chunk 2 was read
    X, y = load_svmlight_file(str(path), n_features=10**6, zero_based=True)
    for i, chunk in zip(range(0, 5, 2), kept):
        rows = slice(i * chunk_rows, (i + 1) * chunk_rows)
        expected = sp.csr_matrix(X[rows])
        for got, want in [(chunk.X.indptr, expected.indptr), (chunk.X.indices, expected.indices),
                          (chunk.X.data, expected.data)]:
            np.testing.assert_array_equal(got, want)
        np.testing.assert_array_equal(chunk.y, y[rows])


def test_svmlight_default_shape_trains_across_chunks(tmp_path):
    path = write(tmp_path, "data.svm", svmlight_text(np.random.default_rng(0), 40, False))
    chunks = list(SvmlightReader(path, chunk_rows=15, zero_based=False))
    assert {chunk.X.shape[1] for chunk in chunks} == {MAX_FEATURES}
    assert_same_as_sklearn(chunks, path, zero_based=False)
    clf = MissionClassifier(5, sketch_width=64, random_state=0)
    for chunk in chunks:
        clf.partial_fit(chunk.X, chunk.y > 0, classes=[False, True])
    assert clf.n_features_in_ == MAX_FEATURES


def test_svmlight_numbers_parse_as_python_float(tmp_path):
    numbers = VALUES + ["1e400", "-1e400", "4.9e-324", "2e-324", "inf", "-Infinity", "NaN",
                        "0.1", "123456789012345678901234567890", "0.000000000000000000001234",
                        "1" + "0" * 80 + ".5e-70", "-.5e-3", "7E0", "2.225073858507201136e-308"]
    path = write(tmp_path, "n.svm", "".join(f"{v} 1:{v}\n" for v in numbers))
    (chunk,) = SvmlightReader(path, zero_based=True)
    expected = np.array([float(v) for v in numbers])
    np.testing.assert_array_equal(chunk.X.data.view(np.int64), expected.view(np.int64))
    np.testing.assert_array_equal(chunk.y.view(np.int64), expected.view(np.int64))


def test_svmlight_numbers_without_c_locale_strtod():
    # Under a locale whose decimal point is not '.', long numbers go through
    # Python's parser instead of strtod: same values.
    line = b"0.1000000000000000055511151231257827 7:2.2250738585072011e-308\n"
    results = []
    for c_numeric in (True, False):
        parser = SvmlightParser(0, MAX_FEATURES, False)
        parser.parse(bytearray(line), 0, True, 10, c_numeric)
        results.append(parser.take())
    for a, b in zip(results[0], results[1]):
        np.testing.assert_array_equal(a, b)
    assert results[0][3][0] == 0.1 and results[0][2][0] == 2.2250738585072011e-308


def test_svmlight_query_id(tmp_path):
    text = "".join(f"{i % 2} qid:{i // 3} {i + 1}:{i}.5\n" for i in range(10))
    path = write(tmp_path, "q.svm", text)
    chunks = list(SvmlightReader(path, chunk_rows=4, zero_based=False, query_id=True))
    X, y, qid = load_svmlight_file(str(path), zero_based=False, query_id=True)
    np.testing.assert_array_equal(np.concatenate([c.qid for c in chunks]), qid)
    assert_same_as_sklearn(chunks, path, zero_based=False)


def test_svmlight_zero_based_auto(tmp_path):
    rows = [f"1 {i + 1}:1" for i in range(200)]
    zero_first = write(tmp_path, "zero.svm", "\n".join(["1 0:2 3:1"] + rows) + "\n")
    reader = SvmlightReader(zero_first, chunk_rows=50)
    chunks = list(reader)
    assert reader.zero_based_ is True
    assert_same_as_sklearn(chunks, zero_first)

    one = write(tmp_path, "one.svm", "\n".join(["-1", "# no feature yet"] + rows) + "\n")
    reader = SvmlightReader(one, chunk_rows=1, block_size=8)
    chunks = list(reader)
    assert reader.zero_based_ is False
    assert_same_as_sklearn(chunks, one)

    # The base is judged on at least the first AUTO_BASE_BYTES, whatever the block
    # size: an index 0 within them makes the file zero-based, as scikit-learn reads it.
    near_zero = write(tmp_path, "near.svm", "\n".join(rows + ["1 0:1"]) + "\n")
    for block_size in (64, 2**20):
        reader = SvmlightReader(near_zero, block_size=block_size)
        assert_same_as_sklearn(list(reader), near_zero)
        assert reader.zero_based_ is True
    # scikit-learn sees an index 0 past them too; one pass cannot, so it refuses.
    many = [f"1 {i % 50 + 1}:1" for i in range(AUTO_BASE_BYTES // 6)]
    late_zero = write(tmp_path, "late.svm", "\n".join(many + ["1 0:1"]) + "\n")
    assert late_zero.stat().st_size > AUTO_BASE_BYTES
    for block_size in (64, 2**20):
        with pytest.raises(ParseError, match=f"line {len(many) + 1}: .*pass zero_based=True"):
            list(SvmlightReader(late_zero, block_size=block_size))
    assert_same_as_sklearn(SvmlightReader(late_zero, zero_based=True), late_zero,
                           zero_based=True)


def test_svmlight_unsorted_indices_rejected_like_sklearn(tmp_path):
    for line in ("1 3:1 2:1", "1 2:1 2:1"):
        path = write(tmp_path, "u.svm", f"1 1:1\n{line}\n")
        with pytest.raises(ValueError, match="sorted and unique"):
            load_svmlight_file(str(path))
        with pytest.raises(ParseError, match="line 2: feature indices must be sorted"):
            list(SvmlightReader(path))


def test_svmlight_no_trailing_newline_and_empty_files(tmp_path):
    path = write(tmp_path, "t.svm", "1 1:1\n-1 2:2")
    (chunk,) = SvmlightReader(path, zero_based=False, n_features=2)
    np.testing.assert_array_equal(chunk.X.toarray(), [[1, 0], [0, 2]])
    for content in ("", "\n\n", "# only\n  # comments"):
        reader = SvmlightReader(write(tmp_path, "e.svm", content))
        assert list(reader) == [] and reader.n_skipped_ == 0


SVMLIGHT_ERRORS = [
    ("1 1:1\n1 2:abc\n", {}, 2, "bad feature value 'abc'"),
    ("x 1:1\n", {}, 1, r"bad label 'x': not a number$"),
    ("1 1:1\n2,7 3:1\n", {}, 2, r"bad label '2,7': not a number \(labels joined by ',' make "
                                 "a multi-label example"),
    ("1 1:1\n\n-1 2\n", {}, 3, "feature '2' has no ':'"),
    ("1 99999999999999999999:1\n", {}, 1, "out of the int64 range"),
    ("1 -3:1\n", {}, 1, "negative feature index '-3'"),
    ("1 a:1\n", {}, 1, "bad feature index 'a'"),
    ("1 0:1\n", {"zero_based": False}, 1, "index 0 in '0:1' but zero_based=False"),
    ("1 1:\xff\xfe\n", {}, 1, r"bad feature value '\\xff\\xfe'"),
    ("\x00\x01\x02\x03 \x7f:1\n", {}, 1, "bad label"),
    ("1 qid:a 1:1\n", {}, 1, "bad qid 'qid:a'"),
    ("1 5:1\n", {"zero_based": True, "n_features": 5}, 1, "not below n_features=5"),
    ("1 1:1_0\n", {}, 1, "bad feature value '1_0'"),
    ("1 1:0x10\n", {}, 1, "bad feature value '0x10'"),
    ("1 1:1e\n", {}, 1, "bad feature value '1e'"),
]


@pytest.mark.parametrize("content, kwargs, line, message", SVMLIGHT_ERRORS)
def test_svmlight_parse_errors(tmp_path, content, kwargs, line, message):
    path = write(tmp_path, "bad.svm", content.encode("latin-1"))
    with pytest.raises(ParseError, match=message) as info:
        list(SvmlightReader(path, **kwargs))
    assert str(info.value).startswith(f"{path}, line {line}: ")
    assert (info.value.path, info.value.line) == (str(path), line)


def test_parse_error_pickles():
    err = pickle.loads(pickle.dumps(ParseError("a.svm", 4, "bad label 'x'")))
    assert (str(err), err.path, err.line, err.reason) == (
        "a.svm, line 4: bad label 'x'", "a.svm", 4, "bad label 'x'")


def test_svmlight_skip_counts_bad_lines(tmp_path):
    good = svmlight_text(np.random.default_rng(3), 30, False).splitlines(keepends=True)
    bad = ["1 1:abc\n", "x 1:1\n", "-1 2\n", "1 -3:1\n", "1 0:1\n", "1 2:1 1:1\n"]
    mixed = good[:10] + bad[:3] + good[10:20] + bad[3:] + good[20:]
    path = write(tmp_path, "mixed.svm", "".join(mixed))
    reader = SvmlightReader(path, chunk_rows=4, zero_based=False, n_features=60,
                            on_error="skip", block_size=32)
    chunks = list(reader)
    assert reader.n_skipped_ == len(bad)
    assert_same_as_sklearn(chunks, write(tmp_path, "good.svm", "".join(good)),
                           zero_based=False, n_features=60)


def test_readers_are_reiterable(tmp_path):
    path = write(tmp_path, "r.svm", svmlight_text(np.random.default_rng(1), 20, False))
    reader = SvmlightReader(path, chunk_rows=6)
    first, second = stack(reader), stack(reader)
    for a, b in zip(first, second):
        np.testing.assert_array_equal(a, b)


# ------------------------------------------------------------ Vowpal Wabbit
def vw_key(name, namespace=b""):
    text = namespace + b"^" + name if namespace else name
    return mmh3.hash64(text, 0, signed=False)[0] % MAX_FEATURES


def name_text(raw):
    """A name as the readers show it: UTF-8, else Windows-1252 (U+FFFD for the rest)."""
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        return raw.decode("cp1252", "replace")


def rows_as_dicts(X):
    return [dict(zip(X.indices[a:b].tolist(), X.data[a:b].tolist()))
            for a, b in zip(X.indptr[:-1], X.indptr[1:])]


def assert_vw_rows(X):
    """A VW chunk's rows: int64 indices, distinct columns, no stored zero."""
    assert X.indices.dtype == X.indptr.dtype == np.int64
    assert not (X.data == 0).any()
    for a, b in zip(X.indptr[:-1], X.indptr[1:]):
        assert np.unique(X.indices[a:b]).size == b - a


def test_vowpal_wabbit_hand_written_file(tmp_path):
    lines = [
        b"1 2.5 'ex1|animal cat dog:2 |color red:0.5",
        b"",
        b"-1 |animal cat cat:2",
        b"0.3 1 0.1 tag2|animal:2 bird |  plain 7:3",
        b"|caf\xe9 na\xefve:-1e-2",
        b"2 |a\tx\r",
    ]
    path = write(tmp_path, "toy.vw", b"\n".join(lines))
    reader = VowpalWabbitReader(path, chunk_rows=2, block_size=8)
    chunks = list(reader)
    assert [len(c.y) for c in chunks] == [2, 2, 1]
    assert [c.first_line for c in chunks] == [1, 4, 6]
    y = np.concatenate([c.y for c in chunks])
    np.testing.assert_array_equal(y, [1, -1, 0.3, np.nan, 2])
    np.testing.assert_array_equal(np.concatenate([c.sample_weight for c in chunks]),
                                  [2.5, 1, 1, 1, 1])
    rows = [row for c in chunks for row in rows_as_dicts(c.X)]
    assert rows == [
        {vw_key(b"cat", b"animal"): 1.0, vw_key(b"dog", b"animal"): 2.0,
         vw_key(b"red", b"color"): 0.5},
        {vw_key(b"cat", b"animal"): 3.0},
        {vw_key(b"bird", b"animal"): 2.0, vw_key(b"plain"): 1.0, vw_key(b"7"): 3.0},
        {vw_key(b"na\xefve", b"caf\xe9"): -1e-2},
        {vw_key(b"x", b"a"): 1.0},
    ]
    for chunk in chunks:
        assert chunk.X.shape[1] == MAX_FEATURES
        assert_vw_rows(chunk.X)
    # The keys of a row stay in the order of the line.
    assert chunks[0].X.indices[:3].tolist() == [
        vw_key(b"cat", b"animal"), vw_key(b"dog", b"animal"), vw_key(b"red", b"color")]


def vw_reference_rows(text, n_bits):
    """Each example's ``[(key, summed value)]``: first appearance order, zeros dropped."""
    rows = []
    for line in text.split(b"\n"):
        if not line.strip():
            continue
        row = {}
        for section in line.split(b"|")[1:]:
            fields = section.split()
            namespace, _, scale = (fields[0].partition(b":") if section[:1].strip()
                                   else (b"", b"", b""))
            tokens = fields[1:] if namespace or scale else fields
            for token in tokens:
                name, _, value = token.partition(b":")
                hashed = namespace + b"^" + name if namespace else name
                h = mmh3.hash64(hashed, 0, signed=False)[0]
                key = h % MAX_FEATURES if n_bits is None else h & (2**n_bits - 1)
                row[key] = row.get(key, 0.0) + float(value or 1) * float(scale or 1)
        rows.append([(key, value) for key, value in row.items() if value != 0])
    return rows


@pytest.mark.parametrize("n_bits", [None, 3])
def test_vowpal_wabbit_rows_sum_repeats_and_drop_zeros(tmp_path, n_bits):
    # Few words, so rows repeat keys; n_bits=3 makes different words collide.
    rng = np.random.default_rng(0 if n_bits is None else n_bits)
    words = [b"a", b"b", b"c", b"d", b"e"]
    lines = []
    for _ in range(400):
        sections = []
        for _ in range(int(rng.integers(1, 4))):
            namespace = [b"", b"n", b"m:2"][rng.integers(3)]
            tokens = [words[i] + [b"", b":0", b":-1", b":0.5", b":3"][rng.integers(5)]
                      for i in rng.integers(0, len(words), int(rng.integers(1, 12)))]
            sections.append(b"|" + namespace + b" " + b" ".join(tokens))
        lines.append(b"1 " + b" ".join(sections))
    # Long rows too: the per-row table grows past its first size.
    lines.append(b"1 |w " + b" ".join(b"t%d t%d:-1" % (i, i % 50) for i in range(300)))
    text = b"\n".join(lines) + b"\n"
    path = write(tmp_path, "repeats.vw", text)
    expected = vw_reference_rows(text, n_bits)
    assert any(len(row) < 2 for row in expected) and sum(map(len, expected)) > 1000
    for keep_names in [False, True]:
        chunks = list(VowpalWabbitReader(path, 64, n_bits=n_bits, keep_names=keep_names))
        got = []
        for chunk in chunks:
            assert_vw_rows(chunk.X)
            X = chunk.X
            got += [list(zip(X.indices[a:b].tolist(), X.data[a:b].tolist()))
                    for a, b in zip(X.indptr[:-1], X.indptr[1:])]
        assert got == expected


def test_vowpal_wabbit_keys_match_package_hash(tmp_path):
    from sklearn_sketch._core import murmurhash3_64

    path = write(tmp_path, "k.vw", "1 |ns feature\n")
    (chunk,) = VowpalWabbitReader(path)
    assert chunk.X.indices[0] == (murmurhash3_64(b"ns^feature") % 2**64) % MAX_FEATURES


def test_vowpal_wabbit_n_bits(tmp_path):
    path = write(tmp_path, "b.vw", "1 |a x y z |b x\n")
    (chunk,) = VowpalWabbitReader(path, n_bits=3)
    assert chunk.X.shape == (1, 8)
    expected = {}
    for ns, name in [(b"a", b"x"), (b"a", b"y"), (b"a", b"z"), (b"b", b"x")]:
        key = mmh3.hash64(ns + b"^" + name, 0, signed=False)[0] & 7
        expected[key] = expected.get(key, 0) + 1.0
    assert rows_as_dicts(chunk.X) == [expected]


VW_ERRORS = [
    ("1 |f x\n1 2\n", 2, "no '|' in '1 2'"),
    ("a |f x\n", 1, "bad label 'a'"),
    ("1 |f x\n1:0 2:1 |f y\n", 2, r"bad label '1:0': not a number \(a 'class:cost' label"),
    ("1 -2 |f x\n", 1, "bad importance weight '-2'"),
    ("1 1 z |f x\n", 1, "bad initial prediction 'z'"),
    ("1 2 3 4 tag|f x\n", 1, "too many fields"),
    ("1 |f x:abc\n", 1, "bad feature value 'abc'"),
    ("1 |f:q x\n", 1, "bad feature value 'q'"),
    ("1 |f :3\n", 1, "feature ':3' has an empty name"),
]


@pytest.mark.parametrize("content, line, message", VW_ERRORS)
def test_vowpal_wabbit_parse_errors(tmp_path, content, line, message):
    path = write(tmp_path, "bad.vw", content)
    with pytest.raises(ParseError, match=message) as info:
        list(VowpalWabbitReader(path))
    assert str(info.value).startswith(f"{path}, line {line}: ")
    reader = VowpalWabbitReader(path, on_error="skip")
    rows = sum(len(chunk.y) for chunk in reader)
    assert reader.n_skipped_ == 1 and rows == content.count("\n") - 1


def twin_files(tmp_path, rng, n_rows=300):
    """A svmlight file and its VW twin (features named by their index in namespace f)."""
    svm, vw, weights = [], [], []
    for _ in range(n_rows):
        columns = np.sort(rng.choice(40, size=int(rng.integers(1, 8)), replace=False))
        values = np.round(rng.normal(size=columns.size), 3).tolist()
        label = 1 if sum(v for c, v in zip(columns, values) if c < 3) > 0 else -1
        weight = float(rng.choice([0.5, 1.0, 2.0]))
        pairs = [f"{c + 1}:{v!r}" for c, v in zip(columns, values)]
        svm.append(f"{label} " + " ".join(pairs))
        vw.append(f"{label} {weight} |f " + " ".join(pairs))
        weights.append(weight)
    return (write(tmp_path, "twin.svm", "\n".join(svm) + "\n"),
            write(tmp_path, "twin.vw", "\n".join(vw) + "\n"), np.array(weights))


def test_vowpal_wabbit_twin_gives_the_same_model(tmp_path):
    svm_path, vw_path, weights = twin_files(tmp_path, np.random.default_rng(0))
    keys = np.array([vw_key(str(c + 1).encode(), b"f") for c in range(40)])
    assert np.unique(keys).size == 40

    def map_columns(X):
        """The svmlight columns replaced by the keys of their VW names (sorted again)."""
        mapped = sp.csr_matrix((X.data.copy(), keys[X.indices], X.indptr.copy()),
                               shape=(X.shape[0], MAX_FEATURES))
        mapped.sum_duplicates()
        return mapped

    def train(chunks, mapped):
        clf = MissionClassifier(4, sketch_width=128, random_state=0, shuffle=False,
                                learning_rate="constant", eta0=0.1, max_iter=1)
        start = 0
        for chunk in chunks:
            X = chunk.X
            if mapped:
                X = map_columns(X)
            stop = start + X.shape[0]
            sample_weight = chunk.sample_weight if chunk.sample_weight is not None else (
                weights[start:stop])
            clf.partial_fit(X, chunk.y, classes=[-1, 1], sample_weight=sample_weight)
            start = stop
        return clf

    svm_chunks = list(SvmlightReader(svm_path, chunk_rows=64, zero_based=False))
    vw_chunks = list(VowpalWabbitReader(vw_path, chunk_rows=64))
    np.testing.assert_array_equal(np.concatenate([c.sample_weight for c in vw_chunks]), weights)
    for svm_chunk, vw_chunk in zip(svm_chunks, vw_chunks):
        mapped = map_columns(svm_chunk.X)
        mapped.eliminate_zeros()  # A VW row drops a feature of value 0.
        vw_sorted = vw_chunk.X.sorted_indices()
        for a, b in [(mapped.indptr, vw_sorted.indptr), (mapped.indices, vw_sorted.indices),
                     (mapped.data, vw_sorted.data)]:
            np.testing.assert_array_equal(a, b)
        np.testing.assert_array_equal(svm_chunk.y, vw_chunk.y)

    from_svm = train(svm_chunks, mapped=True)
    # Sorted like the svmlight rows: MISSION offers a row's features to its heap
    # in the row's order, which can change the model (tests/test_csr_input.py).
    from_vw = train([chunk._replace(X=chunk.X.sorted_indices()) for chunk in vw_chunks],
                    mapped=False)
    np.testing.assert_array_equal(from_vw.intercept_, from_svm.intercept_)
    np.testing.assert_array_equal(from_vw.selected_features_.keys,
                                  from_svm.selected_features_.keys)
    np.testing.assert_array_equal(from_vw.selected_features_.weights,
                                  from_svm.selected_features_.weights)
    # The model found the informative columns 0..2 through their hashed keys.
    assert set(keys[:3]) <= set(from_vw.selected_features_.keys.tolist())


# ------------------------------------------------------ Vowpal Wabbit names
NAME_WORDS = [b"good", b"bad", b"caf\xc3\xa9", b"na\xefve", b"\xff\xfe", b"7", b"x"] + [
    b"w%d" % i for i in range(40)]
NAMESPACES = [b"", b"a", b"b", b"ns", b"\xc3\xa9t\xc3\xa9"]


def vw_names_text(rng, n_lines):
    """VW text of several namespaces, the default one, repeats, scales and blank lines.

    Also returns each example's features as ``(hashed bytes, value)`` in file order.
    """
    lines, rows = [], []
    for i in range(n_lines):
        if rng.random() < 0.1:
            lines.append(b"")
            continue
        parts, row = [b"1" if i % 2 else b"-1"], []
        for _ in range(int(rng.integers(1, 4))):
            namespace = NAMESPACES[rng.integers(len(NAMESPACES))]
            scale = 2.0 if namespace and rng.random() < 0.3 else 1.0
            tokens = []
            for j in rng.integers(0, len(NAME_WORDS), int(rng.integers(1, 6))):
                value = 0.5 if rng.random() < 0.3 else 1.0
                tokens.append(NAME_WORDS[j] + (b":0.5" if value == 0.5 else b""))
                row.append((namespace + b"^" + NAME_WORDS[j] if namespace else NAME_WORDS[j],
                            value * scale))
            parts.append(b"|" + namespace + (b":2" if scale == 2.0 else b"") + b" "
                         + b" ".join(tokens))
        lines.append(b" ".join(parts))
        rows.append(row)
    return b"\n".join(lines) + b"\n", rows


def name_key(hashed, n_bits=None):
    """Key of the hashed bytes of a feature, as the reader computes it."""
    h = mmh3.hash64(hashed, 0, signed=False)[0]
    return h % MAX_FEATURES if n_bits is None else h & (2**n_bits - 1)


def first_names(rows, n_bits=None):
    """``{key: hashed bytes}`` of the first feature of each key, in order of appearance."""
    names = {}
    for row in rows:
        for hashed, _ in row:
            names.setdefault(name_key(hashed, n_bits), hashed)
    return names


@pytest.mark.parametrize("n_bits", [0, 4])
def test_vowpal_wabbit_parser_names_are_the_hashed_bytes(n_bits):
    # n_bits=4 folds about 200 names onto 16 keys: each keeps its first name.
    text, rows = vw_names_text(np.random.default_rng(n_bits), 300)
    parser = VowpalWabbitParser(n_bits, False, True)
    parser.parse(bytearray(text), 0, True, 10**6)
    indptr, indices, data, y, weight, first_line, starts, kept, crosses = parser.take()
    assert starts.dtype == np.int64 and kept.dtype == np.uint8 and crosses.shape == (0, 3)
    assert starts.shape == indices.shape
    # The kept text is the non-blank lines, each ending with a newline.
    assert kept.tobytes() == b"".join(line.strip() + b"\n" for line in text.splitlines()
                                      if line.strip())
    # Each entry starts at the first feature of its key in its row.
    names = vw_feature_names(kept, starts)
    for row, a, b in zip(rows, indptr[:-1], indptr[1:]):
        assert dict(zip(indices[a:b].tolist(), names[a:b])) == first_names([row], n_bits or None)
    # The chunk's first name of each key.
    expected = first_names(rows, n_bits or None)
    found, first = first_rows(indices, list(expected))
    np.testing.assert_array_equal(found, list(expected))
    assert vw_feature_names(kept, starts[first]) == list(expected.values())
    # The names are off by default, and the rows do not depend on them.
    plain = VowpalWabbitParser(n_bits, False)
    plain.parse(bytearray(text), 0, True, 10**6)
    for a, b in zip(plain.take(), (indptr, indices, data, y, weight, first_line)):
        np.testing.assert_array_equal(a, b)


def reference_interactions(row, interactions, n_bits=None):
    """A VW row's ``{key: value}`` with its namespace crosses, in Python integers.

    ``row`` is ``[(hashed bytes, value)]`` in line order. Repeated keys are summed
    (a key keeps its first namespace), then each interaction crosses the distinct
    features of its namespaces (combinations where letters repeat), then
    everything is summed again.
    """
    def summed(entries):
        out = {}
        for key, value, letter, name in entries:
            if key in out:
                out[key][0] += value
            else:
                out[key] = [value, letter, name]
        return [(k, v, letter, name) for k, (v, letter, name) in out.items() if v != 0]

    base = summed([(name_key(hashed, n_bits), value,
                    hashed[:1] if b"^" in hashed else b" ", hashed) for hashed, value in row])
    crosses = []
    for spec in interactions:
        letters = [bytes([c]) for c in spec.encode()]
        for i, (ki, vi, li, ni) in enumerate(base):
            if li != letters[0]:
                continue
            for j, (kj, vj, lj, nj) in enumerate(base):
                if lj != letters[1] or (letters[1] == letters[0] and j <= i):
                    continue
                if len(letters) == 2:
                    parts = [(ki, vi, ni), (kj, vj, nj)]
                    crosses.append(parts)
                    continue
                for k, (kk, vk, lk, nk) in enumerate(base):
                    if lk != letters[2] or (letters[2] == letters[1] and k <= j) or (
                            letters[2] == letters[0] != letters[1] and k <= i):
                        continue
                    crosses.append([(ki, vi, ni), (kj, vj, nj), (kk, vk, nk)])
    crossed = []
    for parts in crosses:
        key = reference_cross(*[p[0] for p in parts])
        key = key if n_bits is None else key & (2**n_bits - 1)
        crossed.append((key, float(np.prod([p[1] for p in parts])), None,
                        b"*".join(p[2] for p in parts)))
    return summed(base + crossed)


@pytest.mark.parametrize("n_bits", [None, 6])
@pytest.mark.parametrize("interactions", [["ab"], ["nn", " a"], ["abn", "aab", "aba", "bb"]])
def test_vowpal_wabbit_interactions_equal_the_reference(n_bits, interactions, tmp_path):
    text, rows = vw_names_text(np.random.default_rng(7), 400)
    path = tmp_path / "crossed.vw"
    path.write_bytes(text)
    reader = VowpalWabbitReader(path, 150, n_bits=n_bits, keep_names=True,
                                interactions=interactions)
    chunks = list(reader)
    X = sp.vstack([chunk.X for chunk in chunks]).tocsr()
    assert X.shape[0] == len(rows)
    n_crosses = 0
    for r, row in enumerate(rows):
        expected = reference_interactions(row, interactions, n_bits)
        got = dict(zip(X.indices[X.indptr[r]:X.indptr[r + 1]].tolist(),
                       X.data[X.indptr[r]:X.indptr[r + 1]].tolist()))
        assert got == pytest.approx({k: v for k, v, _, _ in expected})
        n_crosses += sum(name is not None and b"*" in name for _, _, _, name in expected)
    assert n_crosses > 100
    if n_bits is None:  # names are exact where keys do not fold
        first = chunks[0]
        names = first.feature_names.lookup(first.X.indices)
        for row in rows[:150]:
            for key, _, _, name in reference_interactions(row, interactions):
                assert names[key] == name_text(name)


@pytest.mark.parametrize("interactions, message", [
    (["a"], "2 or 3 namespace letters"), (["abcd"], "2 or 3 namespace letters"),
    (["a|"], "2 or 3 namespace letters"), ([7], "2 or 3 namespace letters"),
    (["ab"] * 17, "at most 16"),
])
def test_vowpal_wabbit_interactions_are_checked(interactions, message, tmp_path):
    with pytest.raises(ValueError, match=message):
        VowpalWabbitReader(tmp_path / "any.vw", interactions=interactions)


def test_vowpal_wabbit_parser_text_starts_again_per_chunk():
    lines = [b"1 |w " + b" ".join(b"t%d" % (100 * i + j) for j in range(100))
             for i in range(50)]
    buf = bytearray(b"\n".join(lines + lines[:1]) + b"\n")
    parser = VowpalWabbitParser(0, False, True)
    end = parser.parse(buf, 0, False, 50)
    starts, text, _ = parser.take()[6:]
    assert text.tobytes() == b"".join(line + b"\n" for line in lines)
    assert vw_feature_names(text, starts) == [b"w^t%d" % i for i in range(5000)]
    # The next chunk keeps its own lines only.
    parser.parse(buf, end, True, 50)
    starts, text, _ = parser.take()[6:]
    assert text.tobytes() == lines[0] + b"\n"
    assert vw_feature_names(text, starts) == [b"w^t%d" % i for i in range(100)]


def test_first_rows_and_vw_feature_names():
    keys = np.array([5, 7, 5, 9, -3, 7], dtype=np.int64)
    found, rows = first_rows(keys, [9, 5, 4, 5, -3, 2**62])
    assert found.tolist() == [9, 5, -3] and rows.tolist() == [3, 0, 4]
    for requested in [[], [4]]:
        found, rows = first_rows(keys, requested)
        assert found.size == rows.size == 0
    assert first_rows(np.zeros(0, dtype=np.int64), [1])[0].size == 0
    # Many requested keys (the set grows) against a long table, checked by numpy.
    rng = np.random.default_rng(0)
    table = rng.integers(-2**63, 2**63 - 1, 5000, dtype=np.int64)[rng.integers(0, 5000, 20000)]
    requested = np.concatenate([table[rng.integers(0, table.size, 700)],
                                rng.integers(-2**63, 2**63 - 1, 300, dtype=np.int64)])
    found, rows = first_rows(table, requested)
    present = np.isin(requested, table)
    expected_found = requested[present][np.sort(np.unique(requested[present],
                                                          return_index=True)[1])]
    np.testing.assert_array_equal(found, expected_found)
    np.testing.assert_array_equal(rows, [np.flatnonzero(table == k)[0] for k in found])
    text = b"1 2 'tag|ns:2 a:1 b |  c:0.5 \xc3\xa9 |x\td\n-1 |y e|z f\n"
    tokens = [b"a:1", b"b", b"c:0.5", b"\xc3\xa9", b"d", b"e", b"f"]
    starts = [text.index(b" " + t) + 1 if t != b"d" else text.index(b"\td") + 1
              for t in tokens]
    assert vw_feature_names(text, starts) == [b"ns^a", b"ns^b", b"c", b"\xc3\xa9", b"x^d",
                                               b"y^e", b"z^f"]
    with pytest.raises(ValueError):
        vw_feature_names(text, [len(text)])
    with pytest.raises(ValueError):
        vw_feature_names(b"1 a b\n", [2])


@pytest.mark.parametrize("compress", [False, True])
@pytest.mark.parametrize("chunk_rows, block_size", [(1, 7), (13, 64), (10**6, 2**20)])
@pytest.mark.parametrize("n_bits", [None, 5])
def test_vowpal_wabbit_reader_keep_names(tmp_path, compress, chunk_rows, block_size, n_bits):
    text, rows = vw_names_text(np.random.default_rng(chunk_rows), 200)
    path = write(tmp_path, "names.vw", gzip.compress(text) if compress else text)
    kwargs = dict(n_bits=n_bits, block_size=block_size)
    named = list(VowpalWabbitReader(path, chunk_rows, keep_names=True, **kwargs))
    plain = list(VowpalWabbitReader(path, chunk_rows, keep_names=False, **kwargs))
    assert len(named) == len(plain) == -(-len(rows) // chunk_rows)
    union = {}
    for i, (chunk, bare) in enumerate(zip(named, plain)):
        chunk_rows_ = rows[i * chunk_rows:(i + 1) * chunk_rows]
        # The same rows with and without names, and the rows of the file.
        assert bare.feature_names is None
        for a, b in [(chunk.X.indptr, bare.X.indptr), (chunk.X.indices, bare.X.indices),
                     (chunk.X.data, bare.X.data), (chunk.y, bare.y),
                     (chunk.sample_weight, bare.sample_weight)]:
            np.testing.assert_array_equal(a, b)
        expected_rows = []
        for row in chunk_rows_:
            expected_rows.append({})
            for hashed, value in row:
                key = name_key(hashed, n_bits)
                expected_rows[-1][key] = expected_rows[-1].get(key, 0.0) + value
        assert rows_as_dicts(chunk.X) == expected_rows
        # Every column of the chunk named by its first bytes in the chunk.
        expected = first_names(chunk_rows_, n_bits)
        columns = np.unique(chunk.X.indices)
        np.testing.assert_array_equal(chunk.feature_names.keys, columns)
        assert chunk.feature_names.lookup(columns) == {
            key: name_text(name) for key, name in expected.items()}
        for key, name in chunk.feature_names.lookup(columns).items():
            union.setdefault(key, name)
    # Wherever the chunks and blocks end, the file's first name of every key.
    assert union == {key: name_text(name)
                     for key, name in first_names(rows, n_bits).items()}


def test_vowpal_wabbit_skipped_line_names_nothing(tmp_path):
    path = write(tmp_path, "skip.vw",
                 "1 |f kept\n1 |f only_in_bad bad:abc\n-1 |g other |f only_in_bad:x\n| last\n")
    reader = VowpalWabbitReader(path, on_error="skip", keep_names=True)
    (chunk,) = reader
    assert reader.n_skipped_ == 2
    names = chunk.feature_names
    assert sorted(names.lookup(names.keys).values()) == ["f^kept", "last"]
    assert names.lookup([vw_key(b"only_in_bad", b"f")]) == {}


def test_chunk_without_names_keeps_its_five_fields():
    chunk = Chunk(sp.csr_matrix((1, 3)), np.ones(1), None, 1, None)
    assert chunk.feature_names is None and chunk.qid is None and chunk.row_names is None
    assert Chunk._fields[5:] == ("feature_names", "row_names")


def test_key_names_lookup():
    names = [b"w^good", b"caf\xc3\xa9", b"\xff", b"", b"second"]
    keys = [7, -2, 2**62, 0, 7]
    offsets = np.cumsum([0] + [len(n) for n in names])
    for names_bytes in [b"".join(names), np.frombuffer(b"".join(names), dtype=np.uint8)]:
        table = KeyNames(np.array(keys), offsets, names_bytes)
        assert len(table) == 4 and repr(table) == "KeyNames(<4 names>)"
        np.testing.assert_array_equal(table.keys, [-2, 0, 7, 2**62])
        # Missing keys left out, a repeated key keeps its first name, bytes not UTF-8 read as
        # Windows-1252.
        assert table.lookup([7, 5, 2**62, -2, 0, 7, 2**63 - 1]) == {
            7: "w^good", 2**62: "ÿ", -2: "café", 0: ""}
        assert table.lookup([]) == {} and table.lookup(np.array([[0, 7]])) == {
            0: "", 7: "w^good"}
        assert pickle.loads(pickle.dumps(table)).lookup([-2]) == {-2: "café"}
    assert KeyNames([], [0], b"").lookup([1, 2]) == {}
    for bad in [([1, 2], [0, 1], b"ab"), ([1], [0, 3], b"ab"), ([1, 2], [0, 2, 1], b"ab"),
                ([[1]], [0, 1], b"a")]:
        with pytest.raises(ValueError):
            KeyNames(*bad)


# -------------------------------------------------------------- FASTA/FASTQ
def random_records(rng, n, max_len=150):
    letters = np.frombuffer(b"ACGTNacgt", dtype=np.uint8)
    return [(f"read{i} sample={i % 3} é", letters[rng.integers(0, 9, int(rng.integers(0, max_len)))]
             .tobytes()) for i in range(n)]


def fasta_text(records, width, eol):
    lines = []
    for name, seq in records:
        lines.append(b">" + name.encode())
        lines.extend(seq[i:i + width] for i in range(0, len(seq), width))
    return eol.join(lines) + eol


def fastq_text(records, rng, eol):
    lines = []
    for i, (name, seq) in enumerate(records):
        qual = bytes(rng.integers(33, 127, len(seq)).astype(np.uint8))
        lines += [b"@" + name.encode(), seq, b"+" + (name.encode() if i % 2 else b""), qual]
    return eol.join(lines) + eol


@pytest.mark.parametrize("eol", [b"\n", b"\r\n"])
@pytest.mark.parametrize("block_size", [5, 2**20])
@pytest.mark.parametrize("compress", COMPRESSIONS)
def test_fasta_records(tmp_path, eol, block_size, compress):
    records = random_records(np.random.default_rng(0), 25)
    text = fasta_text(records, width=17, eol=eol)
    # The compression is told by its magic bytes, not by the file's name.
    path = write(tmp_path, "reads.txt", pack(text, compress))
    reader = FastaReader(path, chunk_reads=4, block_size=block_size)
    chunks = list(reader)
    assert [len(c.names) for c in chunks] == [4] * 6 + [1]
    assert [n for c in chunks for n in c.names] == [name for name, _ in records]
    assert [s for c in chunks for s in c.sequences] == [seq for _, seq in records]
    headers = [i + 1 for i, line in enumerate(text.split(eol)) if line.startswith(b">")]
    assert [c.first_line for c in chunks] == headers[::4]
    assert all(c.qualities is None and c.labels is None and c.path == str(path)
               for c in chunks)


def genbank_text(records, embl=False):
    """GenBank (or EMBL) flat-file text of ``(accession, description, seq)``:
    headers, features, and the sequence in numbered lines of 60 letters."""
    out = []
    for accession, description, seq in records:
        if embl:
            out += [f"ID   {accession}; SV 1; linear; genomic DNA; STD; PRO; {len(seq)} BP.",
                    "XX", f"DE   {description}", "XX", "FT   source          1..5",
                    f"SQ   Sequence {len(seq)} BP;"]
        else:
            out += [f"LOCUS       {accession}  {len(seq)} bp    DNA     linear   BCT 01-JAN-2000",
                    f"DEFINITION  {description}", "            second line of it.",
                    f"VERSION     {accession}.1", "FEATURES             Location/Qualifiers",
                    '     source          1..5', '                     /note="ORIGIN 12 acgt"']
            if seq:
                out.append("ORIGIN      ")
        text = seq.decode().lower()
        for start in range(0, len(text), 60):
            groups = " ".join(text[i:i + 10] for i in range(start, min(start + 60, len(text)), 10))
            out.append(f"     {groups}   {start + 60}" if embl else f"{start + 1:>9} {groups}")
        out.append("//")
    return ("\n".join(out) + "\n").encode()


@pytest.mark.parametrize("embl", [False, True])
@pytest.mark.parametrize("block_size", [7, 2**20])
@pytest.mark.parametrize("compress", [None, "gzip"])
def test_genbank_and_embl_files_read_as_their_fasta_twin(tmp_path, embl, block_size, compress):
    # NCBI's genomes come as GenBank too: "expected a '>' header line, got 'LOCUS ...'".
    rng = np.random.default_rng(3)
    records = [(f"AC{i:04d}", f"Bacterium {i} plasmid, complete",
                bytes(rng.choice(list(b"ACGT"), int(rng.integers(1, 400))).astype(np.uint8)))
               for i in range(12)]
    records[4] = (records[4][0], records[4][1], b"")   # a contig record: no sequence
    path = write(tmp_path, "genomes.txt", pack(genbank_text(records, embl), compress))
    chunks = list(FastaReader(path, chunk_reads=5, block_size=block_size))
    assert [len(c.names) for c in chunks] == [5, 5, 2]
    names = [n for c in chunks for n in c.names]
    suffix = "" if embl else ".1"
    assert names == [f"{a}{suffix} {d}" for a, d, _ in records]
    assert [s.upper() for c in chunks for s in c.sequences] == [seq for _, _, seq in records]
    # The last record may lack its '//' (Biopython reads such a file too).
    cut = genbank_text(records[:2], embl).rstrip(b"/\n")
    tail = list(FastaReader(write(tmp_path, "cut.gb", cut)))
    assert [s.upper() for s in tail[0].sequences] == [records[0][2], records[1][2]]
    # FASTQ is not read as a flat file.
    with pytest.raises(ParseError, match="expected an '@' header|'@'"):
        list(FastqReader(path))
    # A record past max_line_bytes (a chromosome where a reader caps its records)
    # says so by its class, as a FASTA record does.
    from sklearn_sketch.io import RecordTooLong
    long_record = genbank_text([("AC9999", "chromosome", b"ACGT" * 1000)], embl)
    with pytest.raises(RecordTooLong, match="longer than max_line_bytes=1000"):
        list(FastaReader(write(tmp_path, "long.gb", long_record), max_line_bytes=1000,
                         block_size=block_size))


@pytest.mark.parametrize("eol", [b"\n", b"\r\n"])
@pytest.mark.parametrize("block_size", [3, 2**20])
@pytest.mark.parametrize("compress", COMPRESSIONS)
def test_fastq_records(tmp_path, eol, block_size, compress):
    rng = np.random.default_rng(1)
    records = random_records(rng, 25)
    text = fastq_text(records, rng, eol)
    path = write(tmp_path, "reads.gz.txt", pack(text, compress))
    chunks = list(FastqReader(path, chunk_reads=10, block_size=block_size))
    assert [len(c.names) for c in chunks] == [10, 10, 5]
    assert [n for c in chunks for n in c.names] == [name for name, _ in records]
    assert [s for c in chunks for s in c.sequences] == [seq for _, seq in records]
    assert [q for c in chunks for q in c.qualities] == text.split(eol)[3::4]
    assert [c.first_line for c in chunks] == [1, 41, 81]


@pytest.mark.parametrize("eol", [b"\n", b"\r\n"])
@pytest.mark.parametrize("block_size", [3, 2**20])
def test_fastq_records_wrapped_over_lines(tmp_path, eol, block_size):
    # The format lets sequence and quality wrap (Sanger-era and long-read files):
    # the sequence ends at the '+' line, the quality when it is as long, and a
    # quality line may start with '@' or '+'.
    rng = np.random.default_rng(4)
    records = random_records(rng, 12)
    lines, qualities, starts = [], [], []
    for i, (name, seq) in enumerate(records):
        starts.append(len(lines) + 1)
        qual = bytes(rng.integers(33, 127, len(seq)).astype(np.uint8))
        qual = (b"@+"[i % 2:i % 2 + 1] + qual[1:]) if qual else qual
        qualities.append(qual)
        width = 1 + i % 7
        lines += [b"@" + name.encode()]
        lines += [seq[j:j + width] for j in range(0, len(seq), width)] or [b""]
        lines += [b"+"]
        lines += [qual[j:j + width + 3] for j in range(0, len(qual), width + 3)] or [b""]
    path = write(tmp_path, "wrapped.fq", eol.join(lines) + eol)
    chunks = list(FastqReader(path, chunk_reads=5, block_size=block_size))
    assert [n for c in chunks for n in c.names] == [name for name, _ in records]
    assert [s for c in chunks for s in c.sequences] == [seq for _, seq in records]
    assert [q for c in chunks for q in c.qualities] == qualities
    assert [c.first_line for c in chunks] == starts[::5]


def test_plain_file_named_gz_is_read_as_plain(tmp_path):
    path = write(tmp_path, "reads.fq.gz", "@a\nAC\n+\nII\n")
    (chunk,) = FastqReader(path)
    assert chunk.sequences == [b"AC"]


def test_read_labels_by_function_and_by_file(tmp_path):
    records = random_records(np.random.default_rng(2), 7)
    a = write(tmp_path, "a.fa", fasta_text(records[:3], 60, b"\n"))
    b = write(tmp_path, "b.fa", fasta_text(records[3:], 60, b"\n"))
    by_file = list(FastaReader({a: "ecoli", b: "saureus"}, chunk_reads=2))
    assert [c.path for c in by_file] == [str(a), str(a), str(b), str(b)]
    assert [c.labels.tolist() for c in by_file] == [["ecoli"] * 2, ["ecoli"],
                                                   ["saureus"] * 2, ["saureus"] * 2]
    by_name = list(FastaReader([a, b], label=lambda name: int(name.split("=")[1][0])))
    assert [c.labels.tolist() for c in by_name] == [[0, 1, 2], [0, 1, 2, 0]]
    with pytest.raises(ValueError, match="not both"):
        FastaReader({a: 0}, label=len)


def test_fasta_header_of_merged_ncbi_names(tmp_path):
    # NCBI's nr and nt join the names of identical sequences with Ctrl-A.
    header = "gi|1348916|gb|G26684| human STS\x01gi|1375195|gb|G26945| human STS"
    path = write(tmp_path, "nr.fa", f">{header}\nACGT\n>r2\x02\nAC\n".encode())
    with pytest.raises(ParseError, match=r"header '>r2\\x02' is not printable") as info:
        list(FastaReader(path))
    assert info.value.line == 3
    (chunk,) = FastaReader(path, on_error="skip")
    assert chunk.names == [header] and chunk.sequences == [b"ACGT"]


def test_fasta_long_genome_is_gathered_in_blocks(tmp_path):
    rng = np.random.default_rng(3)
    genome = np.frombuffer(b"ACGT", dtype=np.uint8)[rng.integers(0, 4, 5_000_000)].tobytes()
    text = fasta_text([("chromosome", genome), ("plasmid", genome[:1000])], 80, b"\n")
    reader = FastaReader(write(tmp_path, "genome.fa", text), block_size=2**16)
    (chunk,) = reader
    assert chunk.names == ["chromosome", "plasmid"]
    assert chunk.sequences[0] == genome and chunk.sequences[1] == genome[:1000]


FASTQ_ERRORS = [
    (b"@r1\nACGT\n+\nIIII\n@r2\nAC\n", 5, "truncated FASTQ record '@r2': the file ends "
                                         "after its sequence, before a '\\+' line"),
    (b"@r1\nACGT\n", 1, "the file ends after its sequence"),
    (b"@r1\n", 1, "the file ends after its header line"),
    (b"@r1\nACGT\n+\n", 1, "the file ends after its '\\+' line, before its quality"),
    (b"@r1\nACGT\n+\nII\nII\nI\n", 6, "does not start with '@': 'I'"),
    (b"@r1\nACGT\n+\nIII\n@r2\nAC\n+\nII\n", 4,
     "quality line 'III' has 3 characters, the sequence 4"),
    (b"@r1\nACGT\n+\nIII\n", 4, "quality line 'III' has 3 characters, the sequence 4"),
    (b"r1\nACGT\n+\nIIII\n", 1, "does not start with '@': 'r1'"),
    (b"@r\xe91\nACGT\n+\nIIII\n", 1, "not printable UTF-8"),
    (b"@r1\nAC#T\n+\nIIII\n", 2, "invalid sequence character '#'"),
    (b"@r1\nACGT\n+r2\nIIII\n", 3, r"'\+' line '\+r2' does not repeat the header"),
    (b"@r1\nACGT\n@r2\nAC\n+\nII\n", 3,
     "sequence is followed by '@r2', not by a '\\+' line"),
    (b"@r1\nAC\nGT\n+r1\nII\nI\x7f\n", 6, r"invalid quality character '\\x7f'"),
    (b"@r1\nAC\nG T\n+r1\nIIII\n", 3, "invalid sequence character ' '"),
    (b"@r1\nAC\nGT\n+r2\nIIII\n", 4, r"'\+' line '\+r2' does not repeat the header"),
    (b"@r1\nACGT\n+\nII I\n", 4, "invalid quality character ' '"),
]


@pytest.mark.parametrize("content, line, message", FASTQ_ERRORS)
def test_fastq_parse_errors(tmp_path, content, line, message):
    path = write(tmp_path, "bad.fq", content)
    with pytest.raises(ParseError, match=message) as info:
        list(FastqReader(path))
    assert (info.value.path, info.value.line) == (str(path), line)


def test_fastq_skip(tmp_path):
    good = b"@g%d\nACGT\n+\nIIII\n"
    parts = [good % 0, b"stray line\nanother\n", good % 1, b"@b\nAC\n+\nI\n", good % 2,
             b"@t\nAC\n"]
    reader = FastqReader(write(tmp_path, "s.fq", b"".join(parts)), on_error="skip",
                         block_size=7)
    names = [n for chunk in reader for n in chunk.names]
    assert names == ["g0", "g1", "g2"] and reader.n_skipped_ == 3


FASTA_ERRORS = [
    (b"ACGT\n>r1\nAC\n", 1, "expected a '>' header line, got 'ACGT'"),
    (b">r1\nACGT\nAC\x00GT\n", 3, r"invalid sequence character '\\x00'"),
    (b">r\xff\nAC\n", 1, r"header '>r\\xff' is not printable UTF-8"),
]


@pytest.mark.parametrize("content, line, message", FASTA_ERRORS)
def test_fasta_parse_errors(tmp_path, content, line, message):
    path = write(tmp_path, "bad.fa", content)
    with pytest.raises(ParseError, match=message) as info:
        list(FastaReader(path))
    assert (info.value.path, info.value.line) == (str(path), line)
    reader = FastaReader(path, on_error="skip")
    list(reader)
    assert reader.n_skipped_ == 1


def test_fasta_skip_keeps_the_good_records(tmp_path):
    content = b"junk\n>a\nAC\n>b\nA!C\nGG\n>c\nTT\n>\xff\nA\n>d\n"
    reader = FastaReader(write(tmp_path, "s.fa", content), on_error="skip", block_size=4)
    chunks = list(reader)
    assert [n for c in chunks for n in c.names] == ["a", "c", "d"]
    assert [s for c in chunks for s in c.sequences] == [b"AC", b"TT", b""]
    assert reader.n_skipped_ == 3


def test_corrupt_gzip_is_a_parse_error(tmp_path):
    packed = gzip.compress(b"@a\nAC\n+\nII\n" * 1000)
    path = write(tmp_path, "cut.fq", packed[: len(packed) // 2])
    with pytest.raises(ParseError, match="corrupt gzip data"):
        list(FastqReader(path, on_error="skip"))
    empty = write(tmp_path, "empty.fq.gz", gzip.compress(b""))
    assert list(FastqReader(empty)) == [] and list(FastaReader(empty)) == []


@pytest.mark.parametrize("kind", COMPRESSIONS[1:])
def test_compressed_svmlight_reads_as_plain(tmp_path, kind):
    text = b"".join(b"%d 1:%d 3:0.5 %d:2\n" % (i % 2, i, 4 + i % 7) for i in range(300))
    path = write(tmp_path, "rows.svm", pack(text, kind))
    assert sklearn_sketch.io._readers.compression(path) == kind
    X, y = load_svmlight_file(io.BytesIO(text), n_features=2**20, zero_based=False)
    chunks = list(SvmlightReader(path, 64, n_features=2**20, zero_based=False))
    assert (sp.vstack([c.X for c in chunks]) != X).nnz == 0
    assert np.array_equal(np.concatenate([c.y for c in chunks]), y)


def test_compression_errors_name_the_file(tmp_path):
    # Text that starts with bzip2's letters is text; a zip of two files is refused.
    path = write(tmp_path, "bz.vw", b"1 | BZh91AY\n0 | BZh9 x\n")
    assert sklearn_sketch.io._readers.compression(path) is None
    assert [c.y.tolist() for c in VowpalWabbitReader(path)] == [[1.0, 0.0]]
    two = io.BytesIO()
    with zipfile.ZipFile(two, "w") as archive:
        archive.writestr("a.svm", "1 1:1\n")
        archive.writestr("b.svm", "0 2:1\n")
    path = write(tmp_path, "two.zip", two.getvalue())
    with pytest.raises(ValueError, match=r"two.zip is a zip archive of 2 files, \['a.svm', "
                                         r"'b.svm'\]: one file is read from a zip archive"):
        list(SvmlightReader(path))
    for kind in ("bzip2", "xz"):
        packed = pack(b"1 1:1\n" * 5000, kind)
        path = write(tmp_path, f"cut.{kind}", packed[: len(packed) // 2])
        with pytest.raises(ParseError, match=f"corrupt {kind} data|ends"):
            list(SvmlightReader(path))


def test_invalid_parameters(tmp_path):
    path = write(tmp_path, "p.svm", "1 1:1\n")
    for kwargs, error in [({"chunk_rows": 0}, ValueError), ({"chunk_rows": 1.5}, TypeError),
                          ({"zero_based": "yes"}, ValueError), ({"on_error": "ignore"}, ValueError),
                          ({"block_size": 0}, ValueError), ({"n_features": 0}, ValueError),
                          ({"n_features": 2**63}, ValueError)]:
        with pytest.raises(error):
            SvmlightReader(path, **kwargs)
    with pytest.raises(ValueError):
        VowpalWabbitReader(path, n_bits=63)
    with pytest.raises(TypeError):
        FastaReader(path, label="not callable")


# ---------------------------------------------------------------------- fuzz
SAMPLES = {
    SvmlightReader: b"1 qid:2 1:0.5 3:-2e3 # c\n\n-1 2:1\n+1 4:.5\n",
    VowpalWabbitReader: b"1 2 'a|ns x:2 y |b z\n-1 |x\n\n|c w:0.5\n",
    FastaReader: b">r1 d\nACGT\nAC\n\n>r2\nTT\r\n>r3\n",
    FastqReader: b"@r1\nACGT\n+\nIIII\n@r2\nAC\n+r2\n!~\n",
}


def mutate(data, edits):
    data = bytearray(data)
    for position, byte, kind in edits:
        position %= len(data) + 1
        if kind == 0:
            data.insert(position, byte)
        elif data and kind == 1:
            del data[position % len(data)]
        elif data:
            data[position % len(data)] = byte
    return bytes(data)


def read_all(reader):
    """Everything the reader yields, arrays as bytes (bitwise, NaN equal to NaN)."""
    out = []
    for chunk in reader:
        if hasattr(chunk, "X"):
            if isinstance(reader, VowpalWabbitReader):
                assert_vw_rows(chunk.X)
            else:
                assert chunk.X.indices.dtype == np.int64 and chunk.X.has_canonical_format
            out.append(tuple(a.tobytes() for a in (chunk.X.indptr, chunk.X.indices,
                                                    chunk.X.data, chunk.y)))
        else:
            assert all(isinstance(s, bytes) for s in chunk.sequences)
            out.append((chunk.names, chunk.sequences, chunk.qualities, chunk.first_line))
    return out


@pytest.fixture(scope="module")
def fuzz_path(tmp_path_factory):
    return tmp_path_factory.mktemp("fuzz") / "input"


# FUZZ_EXAMPLES=5000 for a longer local run.
@pytest.mark.parametrize("Reader", list(SAMPLES), ids=lambda r: r.__name__)
@settings(max_examples=int(os.environ.get("FUZZ_EXAMPLES", 200)), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.one_of(
    st.binary(max_size=200),
    st.lists(st.tuples(st.integers(0, 400), st.integers(0, 255), st.integers(0, 2)),
             max_size=6)),
    block_size=st.integers(1, 40), skip=st.booleans(), compress=st.sampled_from(COMPRESSIONS))
def test_fuzz_only_parse_errors(fuzz_path, Reader, data, block_size, skip, compress):
    if isinstance(data, list):
        data = mutate(SAMPLES[Reader], data)
    fuzz_path.write_bytes(pack(data, compress))
    on_error = "skip" if skip else "raise"
    small_blocks = Reader(fuzz_path, 2, on_error=on_error, block_size=block_size)
    try:
        result = read_all(small_blocks)
    except ParseError as exc:
        assert exc.path == str(fuzz_path) and exc.line >= 1
        # The error does not depend on where the blocks fall.
        with pytest.raises(ParseError) as again:
            read_all(Reader(fuzz_path, 2, on_error=on_error))
        assert str(again.value) == str(exc)
        return
    assert result == read_all(Reader(fuzz_path, 2, on_error=on_error))


@pytest.mark.parametrize("kind", COMPRESSIONS[1:])
def test_fuzz_truncated_compression_of_every_length(fuzz_path, kind):
    packed = pack(SAMPLES[FastqReader] * 3, kind)
    for cut in range(len(packed)):
        fuzz_path.write_bytes(packed[:cut])
        try:
            read_all(FastqReader(fuzz_path))
        except ParseError:
            pass


# ------------------------------------------------------------------- docs
validate = pytest.importorskip("numpydoc.validate").validate
IGNORED = {"GL08", "SA01", "EX01", "ES01", "RT02", "PR02", "GL02", "SS05"}


def public_io_objects():
    for name in sklearn_sketch.io.__all__:
        obj = getattr(sklearn_sketch.io, name)
        if inspect.isfunction(obj):
            yield f"sklearn_sketch.io.{name}"
        if inspect.isclass(obj):
            yield f"sklearn_sketch.io.{name}"
            if name.endswith("Reader"):
                yield f"sklearn_sketch.io.{name}.__iter__"
    yield "sklearn_sketch.io.KeyNames.lookup"


@pytest.mark.parametrize("path", sorted(set(public_io_objects())))
def test_io_docstrings_are_valid_numpydoc(path):
    errors = [(code, message) for code, message in validate(path)["errors"]
              if code not in IGNORED]
    assert not errors, errors


@pytest.mark.parametrize("module", ["_readers", "_sampling", "_training", "_key_names"])
def test_io_docstring_examples(module):
    module = importlib.import_module(f"sklearn_sketch.io.{module}")
    result = doctest.testmod(module, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.attempted > 0 and result.failed == 0


STREAM_ESTIMATORS = {
    "mission": lambda: MissionClassifier(6, sketch_width=64, batch_size=4, shuffle=False,
                                         random_state=0),
    "bear": lambda: BearClassifier(6, sketch_width=64, batch_size=4, shuffle=False,
                                   random_state=0),
    "awm": lambda: AWMSketchClassifier("2KB", batch_size=4, shuffle=False, random_state=0),
}


@pytest.mark.parametrize("name", sorted(STREAM_ESTIMATORS))
@pytest.mark.usefixtures("sparse_as_given")
def test_model_fitted_on_a_stream_equals_model_fitted_in_memory(tmp_path, name):
    # Chunks of a multiple of the batch size keep the batches of one in-memory
    # pass, so one partial_fit per chunk must give the very same model.
    path = write(tmp_path, "data.svm", svmlight_text(np.random.default_rng(3), 96, False))
    chunks = list(SvmlightReader(path, chunk_rows=12, zero_based=False))
    X = sp.vstack([chunk.X for chunk in chunks], format="csr")
    y = np.concatenate([chunk.y for chunk in chunks])
    in_memory = STREAM_ESTIMATORS[name]().set_params(max_iter=1).fit(X, y > 0)
    streamed = STREAM_ESTIMATORS[name]()
    if streamed._floors_row_norms():
        # The first call sets the floor of 'normalized' (its rows' median ||x||**2):
        # here 12 rows against 96, so the stream is given the in-memory one.
        streamed._preset_norm_floor = in_memory.norm_floor_
    for chunk in chunks:
        streamed.partial_fit(chunk.X, chunk.y > 0, classes=[False, True])
    np.testing.assert_array_equal(streamed.intercept_, in_memory.intercept_)
    for a, b in zip(streamed.sketches_, in_memory.sketches_):
        np.testing.assert_array_equal(a.table, b.table)
    for a, b in zip(streamed.heaps_, in_memory.heaps_):
        np.testing.assert_array_equal(a.items()[0], b.items()[0])
        np.testing.assert_array_equal(a.items()[1], b.items()[1])
    np.testing.assert_array_equal(streamed.selected_features_.keys,
                                  in_memory.selected_features_.keys)
    assert streamed.t_ == in_memory.t_


def test_partial_fit_stream_equals_the_manual_loop_and_reports_progress(tmp_path, capsys):
    path = write(tmp_path, "data.svm", svmlight_text(np.random.default_rng(4), 60, False))
    reader = SvmlightReader(path, chunk_rows=8, zero_based=False)
    manual = MissionRegressor(6, sketch_width=64, random_state=0)
    for _ in range(3):
        for chunk in reader:
            manual.partial_fit(chunk.X, chunk.y)
    streamed = partial_fit_stream(MissionRegressor(6, sketch_width=64, random_state=0),
                                  reader, epochs=3, verbose=1)
    np.testing.assert_array_equal(streamed.sketches_[0].table, manual.sketches_[0].table)
    np.testing.assert_array_equal(streamed.selected_features_.keys,
                                  manual.selected_features_.keys)
    assert streamed.t_ == manual.t_ == 3 * 60 + 1
    progress = capsys.readouterr().err
    if importlib.util.find_spec("tqdm") is None:
        # ": 60 rows," (a rate such as "11,160 rows/s" also holds "60 rows").
        assert progress.count(": 60 rows,") == 3 and "epoch 3/3" in progress
    with pytest.raises(ValueError, match="epochs"):
        partial_fit_stream(streamed, reader, epochs=0)


def test_progress_prints_the_last_line_of_a_pass_once(monkeypatch, capsys):
    from sklearn_sketch.io import _training

    monkeypatch.setitem(sys.modules, "tqdm", None)  # the plain lines, tqdm or not
    clock = iter([0.0, 6.0, 7.0, 8.0, 9.0])
    monkeypatch.setattr(_training.time, "perf_counter", lambda: next(clock))
    first = _training._Progress(1, "epoch 1/2")  # at 0 s
    first.update(40)   # at 6 s: printed
    first.close()      # the same 40 rows: not printed again
    second = _training._Progress(1, "epoch 2/2")  # at 7 s
    second.update(10)  # at 8 s: too soon to print
    second.close()     # at 9 s: the pass's line
    lines = capsys.readouterr().err.splitlines()
    assert [line.split(",")[0] for line in lines] == ["epoch 1/2: 40 rows", "epoch 2/2: 10 rows"]


def test_prefetching_trains_the_same_model_and_raises_the_readers_errors(tmp_path):
    path = write(tmp_path, "data.svm", svmlight_text(np.random.default_rng(5), 60, False))
    models = [partial_fit_stream(MissionRegressor(6, sketch_width=64, random_state=0),
                                 SvmlightReader(path, chunk_rows=8, zero_based=False),
                                 epochs=2, prefetch=prefetch) for prefetch in (True, False)]
    np.testing.assert_array_equal(models[0].sketches_[0].table, models[1].sketches_[0].table)
    assert models[0].t_ == models[1].t_ == 121
    bad = write(tmp_path, "bad.svm", svmlight_text(np.random.default_rng(5), 40, False)
                + "1 3:x\n")
    model = MissionRegressor(6, sketch_width=64, random_state=0)
    with pytest.raises(ParseError, match=r"bad.svm, line \d+: bad feature value"):
        partial_fit_stream(model, SvmlightReader(bad, chunk_rows=8, zero_based=False))
    assert model.t_ == 41  # The 40 good rows were learnt before the error.


def test_chunks_of_zero_importance_are_skipped_and_unlabelled_rows_refused(tmp_path):
    path = write(tmp_path, "z.vw", "1 1 |f a\n-1 1 |f b\n" * 5 + "1 0 |f a\n" * 10
                 + "-1 1 |f b\n")
    model = partial_fit_stream(MissionClassifier(5, sketch_width=256, random_state=0),
                               VowpalWabbitReader(path, chunk_rows=10), classes=[-1, 1])
    assert model.t_ == 12  # 10 + 1 weighted rows, the chunk of zeros skipped.
    unlabelled = write(tmp_path, "u.vw", "1 |f a\n|f b\n")
    with pytest.raises(ValueError, match="no label"):
        partial_fit_stream(MissionClassifier(5, sketch_width=256),
                           VowpalWabbitReader(unlabelled), classes=[-1, 1])
