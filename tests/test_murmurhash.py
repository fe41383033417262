"""MurmurHash3 core: exact agreement with the reference ``mmh3`` package."""
import mmh3
import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from sklearn_sketch._core import (
    bucket_and_sign_arrays,
    hash_names,
    murmurhash3_32,
    murmurhash3_64,
)

INT64_MIN = -(2**63)
INT64_MAX = 2**63 - 1
UINT32_MAX = 2**32 - 1

seeds = st.one_of(
    st.sampled_from([0, 1, UINT32_MAX, 2**31, 2**31 - 1]),
    st.integers(0, UINT32_MAX),
)
int64s = st.one_of(
    st.sampled_from([INT64_MIN, INT64_MAX, 0, -1, 1, 2**32, 2**32 - 1, -(2**32), 2**31, -(2**31)]),
    st.integers(INT64_MIN, INT64_MAX),
)
FAST = settings(max_examples=600, deadline=None)


def ref_key_hash(key, seed):
    return mmh3.hash(int(key).to_bytes(8, "little", signed=True), seed, signed=False)


def ref_bucket_sign(key, seed, width):
    h = ref_key_hash(key, seed)
    return ((h >> 1) * width) >> 31, (1 if h & 1 else -1)


# --------------------------------------------------------------------------- bytes / str
@pytest.mark.parametrize("seed", [0, 1, 42, 2**31, UINT32_MAX])
def test_bytes_every_length_and_tail(seed):
    rng = np.random.default_rng(seed % 1000)
    for n in range(0, 65):
        for _ in range(4):
            data = rng.integers(0, 256, size=n, dtype=np.uint8).tobytes()
            assert murmurhash3_32(data, seed) == mmh3.hash(data, seed, signed=False)
    # all-0xff bytes exercise the sign extension of tail bytes
    for n in range(0, 20):
        data = b"\xff" * n
        assert murmurhash3_32(data, seed) == mmh3.hash(data, seed, signed=False)


@FAST
@given(data=st.binary(min_size=0, max_size=64), seed=seeds)
@example(data=b"", seed=0)
@example(data=b"", seed=UINT32_MAX)
def test_bytes_matches_mmh3(data, seed):
    h = murmurhash3_32(data, seed)
    assert type(h) is int
    assert h == mmh3.hash(data, seed, signed=False)
    # bytearray and memoryview are hashed as the same bytes
    assert murmurhash3_32(bytearray(data), seed) == h
    assert murmurhash3_32(memoryview(data), seed) == h


@FAST
@given(text=st.text(min_size=0, max_size=40), seed=seeds)
@example(text="", seed=0)
@example(text="héllo wörld", seed=7)
@example(text="日本語のテキスト", seed=UINT32_MAX)
@example(text="\U0001f600\x00a", seed=123)
def test_str_is_hashed_as_utf8(text, seed):
    expected = mmh3.hash(text.encode("utf-8"), seed, signed=False)
    assert murmurhash3_32(text, seed) == expected
    assert murmurhash3_32(text.encode("utf-8"), seed) == expected


def test_default_seed_is_zero():
    assert murmurhash3_32(b"kmer") == mmh3.hash(b"kmer", 0, signed=False)
    assert murmurhash3_32(12345) == ref_key_hash(12345, 0)
    assert murmurhash3_64("ACGT") == mmh3.hash64("ACGT", 0, signed=True)[0]


def test_known_vectors():
    # Published MurmurHash3 x86_32 test vectors.
    assert murmurhash3_32(b"", 0) == 0
    assert murmurhash3_32(b"", 1) == 0x514E28B7
    assert murmurhash3_32(b"", 0xFFFFFFFF) == 0x81F16F39
    assert murmurhash3_32(b"\x00\x00\x00\x00", 0) == 0x2362F9DE
    assert murmurhash3_32(b"Hello, world!", 1234) == 0xFAF6CDB3
    assert murmurhash3_32("The quick brown fox jumps over the lazy dog", 0x9747B28C) == 0x2FA826CD


# --------------------------------------------------------------------------- integer keys
@pytest.mark.parametrize("key", [INT64_MIN, INT64_MAX, 0, -1, 1, 2**32, 2**32 - 1, -(2**32)])
@pytest.mark.parametrize("seed", [0, 1, UINT32_MAX])
def test_int_key_extremes(key, seed):
    h = murmurhash3_32(key, seed)
    assert type(h) is int
    assert h == ref_key_hash(key, seed)
    # numpy scalars hash as the same int64
    assert murmurhash3_32(np.int64(key), seed) == h
    if key >= 0:
        assert murmurhash3_32(np.uint64(key), seed) == h


@FAST
@given(key=int64s, seed=seeds)
def test_int_key_matches_mmh3(key, seed):
    assert murmurhash3_32(key, seed) == ref_key_hash(key, seed)


def test_int_key_is_not_the_decimal_string():
    # keys are hashed as 8 little-endian bytes, not as text
    assert murmurhash3_32(5, 0) != mmh3.hash(b"5", 0, signed=False)
    assert murmurhash3_32(5, 0) == mmh3.hash(b"\x05" + b"\x00" * 7, 0, signed=False)


@pytest.mark.parametrize("dtype", [np.int64, np.int32, np.uint64])
@pytest.mark.parametrize("seed", [0, 99, UINT32_MAX])
def test_array_matches_scalar(dtype, seed):
    rng = np.random.default_rng(3)
    info = np.iinfo(dtype)
    hi = min(int(info.max), INT64_MAX)
    keys = rng.integers(int(info.min), hi, size=500, dtype=dtype, endpoint=True)
    keys[:2] = [info.min, hi]
    out = murmurhash3_32(keys, seed)
    assert isinstance(out, np.ndarray)
    assert out.dtype == np.uint32
    assert out.shape == keys.shape
    expected = [ref_key_hash(int(k), seed) for k in keys]
    assert out.tolist() == expected
    assert out.tolist() == [murmurhash3_32(int(k), seed) for k in keys]


def test_array_shapes_and_lists():
    keys = np.arange(-6, 6, dtype=np.int64).reshape(3, 4)
    out = murmurhash3_32(keys, 5)
    assert out.shape == (3, 4) and out.dtype == np.uint32
    assert out.ravel().tolist() == [ref_key_hash(k, 5) for k in range(-6, 6)]
    assert murmurhash3_32([1, -2, 3], 5).tolist() == [ref_key_hash(k, 5) for k in (1, -2, 3)]
    empty = murmurhash3_32(np.array([], dtype=np.int64), 5)
    assert empty.shape == (0,) and empty.dtype == np.uint32


@settings(max_examples=100, deadline=None)
@given(keys=st.lists(int64s, min_size=0, max_size=50), seed=seeds)
def test_array_matches_mmh3_hypothesis(keys, seed):
    out = murmurhash3_32(np.array(keys, dtype=np.int64), seed)
    assert out.dtype == np.uint32
    assert out.tolist() == [ref_key_hash(k, seed) for k in keys]


# --------------------------------------------------------------------------- 64-bit names
@FAST
@given(name=st.one_of(st.text(max_size=40), st.binary(max_size=64)), seed=seeds)
@example(name="", seed=0)
@example(name=b"", seed=UINT32_MAX)
def test_murmurhash3_64_matches_mmh3(name, seed):
    k = murmurhash3_64(name, seed)
    assert type(k) is int
    assert INT64_MIN <= k <= INT64_MAX
    assert k == mmh3.hash64(name, seed, signed=True)[0]


@pytest.mark.parametrize("seed", [0, 17, UINT32_MAX])
def test_murmurhash3_64_every_tail_length(seed):
    rng = np.random.default_rng(11)
    for n in range(0, 65):
        for _ in range(3):
            data = rng.integers(0, 256, size=n, dtype=np.uint8).tobytes()
            assert murmurhash3_64(data, seed) == mmh3.hash64(data, seed, signed=True)[0]
        data = b"\xff" * n
        assert murmurhash3_64(data, seed) == mmh3.hash64(data, seed, signed=True)[0]


@settings(max_examples=100, deadline=None)
@given(names=st.lists(st.one_of(st.text(max_size=20), st.binary(max_size=20)), max_size=30),
       seed=seeds)
def test_hash_names_matches_scalar(names, seed):
    out = hash_names(names, seed)
    assert isinstance(out, np.ndarray)
    assert out.dtype == np.int64
    assert out.shape == (len(names),)
    assert out.tolist() == [murmurhash3_64(n, seed) for n in names]
    assert out.tolist() == [mmh3.hash64(n, seed, signed=True)[0] for n in names]


def test_hash_names_iterables_and_default_seed():
    names = ["a", "b", "ACGT", "", "ü"]
    expected = [mmh3.hash64(n, 0, signed=True)[0] for n in names]
    assert hash_names(names).tolist() == expected
    assert hash_names(tuple(names)).tolist() == expected
    assert hash_names(iter(names)).tolist() == expected
    assert hash_names(n.encode() for n in names).tolist() == expected
    empty = hash_names([])
    assert empty.shape == (0,) and empty.dtype == np.int64


# --------------------------------------------------------------------------- errors
@pytest.mark.parametrize("func, arg", [
    (murmurhash3_32, b"x"), (murmurhash3_32, 5), (murmurhash3_32, np.arange(3)),
    (murmurhash3_64, "x"), (hash_names, ["x"]),
])
def test_seed_errors(func, arg):
    for bad in (-1, 2**32, 2**40):
        with pytest.raises(ValueError):
            func(arg, bad)
    for bad in (1.0, 0.5, "3", None, True):
        with pytest.raises(TypeError):
            func(arg, bad)
    # numpy integer seeds are accepted
    assert func(arg, np.uint32(7)) is not None


def test_key_errors():
    with pytest.raises(TypeError):
        murmurhash3_32(np.array([1.0, 2.0]))
    with pytest.raises(TypeError):
        murmurhash3_32(np.array([1.5], dtype=np.float32))
    with pytest.raises(TypeError):
        murmurhash3_32(1.5)
    with pytest.raises(ValueError):
        murmurhash3_32(2**63)
    with pytest.raises(ValueError):
        murmurhash3_32(-(2**63) - 1)
    with pytest.raises(ValueError):
        murmurhash3_32(np.uint64(2**63))
    with pytest.raises(ValueError):
        murmurhash3_32(np.array([1, 2**63], dtype=np.uint64))
    with pytest.raises(ValueError):
        murmurhash3_32(np.array([2**64 - 1], dtype=np.uint64))
    # uint64 keys up to int64 max are fine
    assert murmurhash3_32(np.array([INT64_MAX], dtype=np.uint64)).tolist() == [
        ref_key_hash(INT64_MAX, 0)]


@pytest.mark.parametrize("bad", [5, 5.0, None, ["a"], np.int64(3)])
def test_murmurhash3_64_type_errors(bad):
    with pytest.raises(TypeError):
        murmurhash3_64(bad)
    with pytest.raises(TypeError):
        hash_names(["ok", bad])


# --------------------------------------------------------------------------- bucket / sign
@pytest.mark.parametrize("width", [1, 2, 7, 1000, 2**14, 2**31 - 1, 2**31])
def test_bucket_and_sign_matches_reference(width):
    rng = np.random.default_rng(width % 97)
    keys = rng.integers(INT64_MIN, INT64_MAX, size=300, dtype=np.int64, endpoint=True)
    keys[:6] = [INT64_MIN, INT64_MAX, 0, -1, 2**32, 2**32 - 1]
    row_seeds = np.array([0, 1, 12345, UINT32_MAX], dtype=np.uint32)
    buckets, signs = bucket_and_sign_arrays(keys, row_seeds, width)
    assert buckets.dtype == np.int64 and signs.dtype == np.int8
    assert buckets.shape == signs.shape == (4, 300)
    assert ((buckets >= 0) & (buckets < width)).all()
    assert set(np.unique(signs).tolist()) <= {-1, 1}
    for j, seed in enumerate(row_seeds.tolist()):
        ref = [ref_bucket_sign(int(k), seed, width) for k in keys]
        assert buckets[j].tolist() == [b for b, _ in ref]
        assert signs[j].tolist() == [s for _, s in ref]
    if width == 1:
        assert (buckets == 0).all()


@settings(max_examples=200, deadline=None)
@given(keys=st.lists(int64s, max_size=20), row_seeds=st.lists(seeds, max_size=5),
       width=st.one_of(st.sampled_from([1, 7, 2**14, 2**31]), st.integers(1, 2**31)))
def test_bucket_and_sign_hypothesis(keys, row_seeds, width):
    buckets, signs = bucket_and_sign_arrays(np.array(keys, dtype=np.int64),
                                            np.array(row_seeds, dtype=np.uint64), width)
    assert buckets.shape == (len(row_seeds), len(keys))
    for j, seed in enumerate(row_seeds):
        for i, k in enumerate(keys):
            b, s = ref_bucket_sign(k, seed, width)
            assert 0 <= b < width
            assert buckets[j, i] == b and signs[j, i] == s


def test_bucket_and_sign_errors():
    with pytest.raises(ValueError):
        bucket_and_sign_arrays([1, 2], [0], 0)
    with pytest.raises(ValueError):
        bucket_and_sign_arrays([1, 2], [0], 2**31 + 1)
    with pytest.raises(ValueError):
        bucket_and_sign_arrays([1, 2], [-1], 8)
    with pytest.raises(ValueError):
        bucket_and_sign_arrays([1, 2], [2**32], 8)
    with pytest.raises(TypeError):
        bucket_and_sign_arrays([1, 2], [1.0], 8)
    with pytest.raises(TypeError):
        bucket_and_sign_arrays([1.5, 2.0], [1], 8)


def test_bucket_uniformity_and_sign_balance():
    n_keys, width = 20000, 16
    rng = np.random.default_rng(0)
    keys_sets = [
        np.arange(n_keys, dtype=np.int64),                          # consecutive
        np.arange(n_keys, dtype=np.int64) << 32,                    # high bits only
        rng.integers(INT64_MIN, INT64_MAX, size=n_keys, dtype=np.int64),
    ]
    for keys in keys_sets:
        buckets, signs = bucket_and_sign_arrays(keys, [0, 7, 2**32 - 1], width)
        for j in range(3):
            counts = np.bincount(buckets[j], minlength=width)
            assert counts.shape == (width,)
            mean = n_keys / width
            assert np.all(np.abs(counts - mean) <= 0.2 * mean), counts
            # chi-square with 15 dof: 99.9% quantile is ~37.7; use a loose bound
            chi2 = ((counts - mean) ** 2 / mean).sum()
            assert chi2 < 60, chi2
            frac_plus = (signs[j] == 1).mean()
            assert 0.45 <= frac_plus <= 0.55, frac_plus
        # different seeds give different hashes (rows are independent)
        assert (buckets[0] != buckets[1]).mean() > 0.8
