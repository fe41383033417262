"""CountSketch: exact agreement with a dense NumPy reference, linearity, bounds, errors."""
import copy
import pickle

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sklearn_sketch._core import CountSketch, bucket_and_sign_arrays

INT64_MIN = -(2**63)
INT64_MAX = 2**63 - 1


# --------------------------------------------------------------------------- reference
def ref_table(keys, deltas, seeds, width, dtype=np.float64, table=None):
    """Dense reference: ``table[j, b_j(k)] += s_j(k) * delta`` in stream order."""
    keys = np.asarray(keys, dtype=np.int64)
    deltas = np.asarray(deltas, dtype=np.float64)
    seeds = np.asarray(seeds)
    if table is None:
        table = np.zeros((len(seeds), width), dtype=dtype)
    buckets, signs = bucket_and_sign_arrays(keys, seeds, width)
    for j in range(len(seeds)):
        # np.add.at is unbuffered and applies the updates in index order, like the sketch
        np.add.at(table[j], buckets[j], (signs[j] * deltas).astype(table.dtype))
    return table


def ref_query(table, keys, seeds, width, scale=1.0):
    """Median over rows of ``s_j(k) * table[j, b_j(k)]`` (np.median: mean of the middle two)."""
    keys = np.asarray(keys, dtype=np.int64)
    buckets, signs = bucket_and_sign_arrays(keys, seeds, width)
    rows = np.arange(len(seeds))[:, None]
    values = signs * table[rows, buckets].astype(np.float64)
    return np.median(values, axis=0) * scale


def state(cs):
    return cs.table.copy(), cs.scale_factor, cs.seeds.copy()


def assert_same_state(cs, st_before):
    table, scale, seeds = st_before
    np.testing.assert_array_equal(cs.table, table)
    assert cs.scale_factor == scale
    np.testing.assert_array_equal(cs.seeds, seeds)


def random_stream(rng, n, n_keys=200):
    pool = rng.integers(INT64_MIN, INT64_MAX, size=n_keys, dtype=np.int64, endpoint=True)
    pool[:4] = [INT64_MIN, INT64_MAX, 0, -1]
    keys = rng.choice(pool, size=n)
    deltas = rng.normal(size=n) * rng.choice([1e-3, 1.0, 1e3], size=n)
    return pool, keys, deltas


# --------------------------------------------------------------------------- exact reference
@pytest.mark.parametrize("depth", [1, 2, 3, 4, 5, 8])
@pytest.mark.parametrize("width", [1, 5, 64])
def test_matches_dense_reference_float64(depth, width):
    rng = np.random.default_rng(depth * 100 + width)
    cs = CountSketch(width, depth, dtype=np.float64, random_state=depth)
    pool, keys, deltas = random_stream(rng, 3000)
    cs.update(keys[:1000], deltas[:1000])
    cs.update(keys[1000:], deltas[1000:])
    table = ref_table(keys, deltas, cs.seeds, width)
    assert cs.table.dtype == np.float64
    np.testing.assert_array_equal(cs.table, table)
    np.testing.assert_array_equal(cs.to_array(), table)
    probe = np.concatenate([pool, rng.integers(-1000, 1000, size=100)])
    q = cs.query(probe)
    assert q.dtype == np.float64 and q.shape == probe.shape
    np.testing.assert_array_equal(q, ref_query(table, probe, cs.seeds, width))
    # scalar key query
    np.testing.assert_array_equal(cs.query(int(pool[5])), q[5:6])


@pytest.mark.parametrize("depth", [1, 2, 3, 4, 5])
def test_matches_dense_reference_float32(depth):
    rng = np.random.default_rng(depth)
    width = 50
    cs = CountSketch(width, depth, random_state=depth)
    assert cs.dtype == np.float32
    pool, keys, deltas = random_stream(rng, 3000)
    cs.update(keys, deltas)
    table32 = ref_table(keys, deltas, cs.seeds, width, dtype=np.float32)
    assert cs.table.dtype == np.float32
    scale = np.abs(table32).max()
    np.testing.assert_allclose(cs.table, table32, rtol=1e-5, atol=1e-5 * scale)
    table64 = ref_table(keys, deltas, cs.seeds, width, dtype=np.float64)
    np.testing.assert_allclose(cs.table, table64, rtol=1e-4, atol=1e-5 * scale)
    np.testing.assert_allclose(cs.to_array(), table32, rtol=1e-5, atol=1e-5 * scale)
    assert cs.to_array().dtype == np.float64
    np.testing.assert_allclose(cs.query(pool), ref_query(table32, pool, cs.seeds, width),
                               rtol=1e-5, atol=1e-5 * scale)


@settings(max_examples=60, deadline=None)
@given(depth=st.integers(1, 6), width=st.integers(1, 40), seed=st.integers(0, 2**32 - 1),
       stream=st.lists(st.tuples(st.integers(INT64_MIN, INT64_MAX),
                                 st.floats(-1e6, 1e6, allow_nan=False)), max_size=60))
def test_matches_reference_hypothesis(depth, width, seed, stream):
    cs = CountSketch(width, depth, dtype=np.float64, random_state=seed)
    keys = np.array([k for k, _ in stream], dtype=np.int64)
    deltas = np.array([d for _, d in stream], dtype=np.float64)
    cs.update(keys, deltas)
    table = ref_table(keys, deltas, cs.seeds, width)
    np.testing.assert_array_equal(cs.table, table)
    if len(keys):
        np.testing.assert_array_equal(cs.query(keys), ref_query(table, keys, cs.seeds, width))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("depth", [7, 64])
def test_block_boundaries_and_max_depth(dtype, depth):
    """Stream lengths around the internal block size, up to the largest depth."""
    rng = np.random.default_rng(depth)
    width = 13
    cs = CountSketch(width, depth, dtype=dtype, random_state=depth)
    all_keys, all_deltas = [], []
    for n in (0, 1, 31, 32, 33, 64, 65, 100):
        keys = rng.integers(-50, 50, size=n)
        deltas = rng.integers(-100, 100, size=n).astype(np.float64)  # exact in float32 too
        cs.update(keys, deltas)
        all_keys.append(keys)
        all_deltas.append(deltas)
        table = ref_table(np.concatenate(all_keys), np.concatenate(all_deltas), cs.seeds,
                          width, dtype=dtype)
        np.testing.assert_array_equal(cs.table, table)
        probe = np.arange(-60, 60)[: max(n, 1)]
        np.testing.assert_array_equal(cs.query(probe), ref_query(table, probe, cs.seeds, width))


def test_table_is_read_only():
    cs = CountSketch(8, 2, random_state=0)
    cs.update([1, 2, 3], [1.0, 2.0, 3.0])
    table = cs.table
    assert not table.flags.writeable
    with pytest.raises(ValueError):
        table[0, 0] = 5.0
    with pytest.raises(ValueError):
        cs.table[:] = 0
    # the sketch itself still updates, and the view reflects the same storage
    before = cs.table.copy()
    cs.update([1], [10.0])
    assert not np.array_equal(cs.table, before)


def test_buckets_method_and_to_array_with_scale():
    cs = CountSketch(32, 3, dtype=np.float64, random_state=4)
    keys = np.array([5, -5, 2**40, INT64_MIN], dtype=np.int64)
    b, s = cs.buckets(keys)
    b2, s2 = bucket_and_sign_arrays(keys, cs.seeds, 32)
    np.testing.assert_array_equal(b, b2)
    np.testing.assert_array_equal(s, s2)
    cs.update(keys, [1.0, 2.0, 3.0, 4.0])
    cs.scale(0.25)
    np.testing.assert_array_equal(cs.to_array(), cs.table * 0.25)
    assert cs.scale_factor == 0.25


# --------------------------------------------------------------------------- linearity
small_streams = st.lists(st.tuples(st.integers(-50, 50), st.integers(-1000, 1000)), max_size=80)


@settings(max_examples=60, deadline=None)
@given(a=small_streams, b=small_streams, depth=st.integers(1, 5), width=st.integers(1, 30),
       seed=st.integers(0, 2**32 - 1), dtype=st.sampled_from([np.float32, np.float64]))
def test_merge_is_linear(a, b, depth, width, seed, dtype):
    def sketch(stream):
        cs = CountSketch(width, depth, dtype=dtype, random_state=seed)
        if stream:
            cs.update([k for k, _ in stream], [float(d) for _, d in stream])
        return cs

    sa, sb, sab = sketch(a), sketch(b), sketch(a + b)
    b_before = state(sb)
    sa.merge(sb)
    # integer-valued deltas: sums are exact in both dtypes
    np.testing.assert_array_equal(sa.table, sab.table)
    np.testing.assert_array_equal(sa.query(np.arange(-60, 60)), sab.query(np.arange(-60, 60)))
    assert_same_state(sb, b_before)  # the merged-in sketch is untouched


@settings(max_examples=60, deadline=None)
@given(a=st.lists(st.tuples(st.integers(INT64_MIN, INT64_MAX),
                            st.floats(-1e9, 1e9, allow_nan=False)), max_size=40),
       b=st.lists(st.tuples(st.integers(INT64_MIN, INT64_MAX),
                            st.floats(-1e9, 1e9, allow_nan=False)), max_size=40),
       dtype=st.sampled_from([np.float32, np.float64]))
def test_concatenated_update_equals_two_updates(a, b, dtype):
    one = CountSketch(17, 3, dtype=dtype, random_state=1)
    two = CountSketch(17, 3, dtype=dtype, random_state=1)
    ka = np.array([k for k, _ in a], dtype=np.int64)
    da = np.array([d for _, d in a], dtype=np.float64)
    kb = np.array([k for k, _ in b], dtype=np.int64)
    db = np.array([d for _, d in b], dtype=np.float64)
    one.update(np.concatenate([ka, kb]), np.concatenate([da, db]))
    two.update(ka, da)
    two.update(kb, db)
    np.testing.assert_array_equal(one.table, two.table)
    keys = np.concatenate([ka, kb])
    if len(keys):
        np.testing.assert_array_equal(one.query(keys), two.query(keys))


def test_merge_with_different_scales():
    rng = np.random.default_rng(0)
    a = CountSketch(40, 3, dtype=np.float64, random_state=2)
    b = CountSketch(40, 3, dtype=np.float64, random_state=2)
    _, ka, da = random_stream(rng, 500)
    _, kb, db = random_stream(rng, 500)
    a.update(ka, da)
    b.update(kb, db)
    a.scale(0.5)
    b.scale(-3.0)
    expected = a.to_array() + b.to_array()
    a.merge(b)
    np.testing.assert_allclose(a.to_array(), expected, rtol=1e-12, atol=1e-9)
    # merging into itself doubles
    before = a.to_array()
    a.merge(a)
    np.testing.assert_allclose(a.to_array(), 2 * before, rtol=1e-12, atol=1e-9)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_weighted_sum_is_the_sketch_of_the_weighted_sum(dtype):
    rng = np.random.default_rng(3)
    streams = [random_stream(rng, 400)[1:] for _ in range(3)]
    sketches = []
    for (keys, deltas), factor in zip(streams, (0.5, -3.0, 1.0)):
        cs = CountSketch(50, 3, dtype=dtype, random_state=4)
        cs.update(keys, deltas)
        cs.scale(factor)
        sketches.append(cs)
    before = [state(cs) for cs in sketches]
    weights = [0.2, 0.3, 0.5]
    total = CountSketch.weighted_sum(sketches, weights)
    # The weighted sum of the values, to the rounding of a few float operations on
    # each term and one to the cells' type.
    exact = sum(w * cs.to_array() for w, cs in zip(weights, sketches))
    terms = sum(abs(w) * np.abs(cs.to_array()) for w, cs in zip(weights, sketches))
    assert (np.abs(total.table - exact) <= np.finfo(dtype).eps * terms * 4).all()
    if dtype == np.float64:  # and, by linearity, the sketch of the weighted streams
        reference = CountSketch(50, 3, dtype=np.float64, random_state=4)
        for (keys, deltas), w, factor in zip(streams, weights, (0.5, -3.0, 1.0)):
            reference.update(keys, w * factor * deltas)
        np.testing.assert_allclose(total.to_array(), reference.to_array(), rtol=1e-12,
                                   atol=1e-9)
    assert total.dtype == dtype and total.scale_factor == 1.0
    assert total.same_configuration(sketches[0])
    for cs, b in zip(sketches, before):
        assert_same_state(cs, b)  # the inputs are untouched
    # A weight times a scale factor beyond float32 is fine while the sum fits.
    big = CountSketch(50, 3, random_state=4)
    big.update([1], [1e-20])
    np.testing.assert_allclose(CountSketch.weighted_sum([big], [1e40]).query([1]), [1e20],
                               rtol=1e-6)


def test_weighted_sum_errors():
    a = CountSketch(16, 3, random_state=2)
    with pytest.raises(ValueError, match="configurations"):
        CountSketch.weighted_sum([a, CountSketch(16, 3, random_state=3)], [1, 1])
    with pytest.raises(ValueError, match="one finite weight per sketch"):
        CountSketch.weighted_sum([a, a], [1])
    with pytest.raises(ValueError, match="one finite weight per sketch"):
        CountSketch.weighted_sum([a], [np.nan])
    a.update([1], [3e38])
    with pytest.raises(ValueError, match="overflows"):
        CountSketch.weighted_sum([a, a], [1, 1])


def test_merge_with_overflowing_scale_ratio():
    a = CountSketch(16, 3, dtype=np.float64, random_state=2)
    b = CountSketch(16, 3, dtype=np.float64, random_state=2)
    a.update([1, 2, 3], [1.0, 2.0, 3.0])
    b.update([3, 4], [5.0, 6.0])
    a.scale(1e-8)     # above the renormalization threshold: stays lazy
    b.scale(1e305)    # b.scale / a.scale overflows
    expected = a.to_array() + b.to_array()
    a.merge(b)
    assert np.isfinite(a.to_array()).all()
    np.testing.assert_allclose(a.to_array(), expected, rtol=1e-12)
    np.testing.assert_allclose(a.query([1, 4]), [1e-8, 6e305], rtol=1e-12)


@pytest.mark.parametrize("dtype, rtol", [(np.float64, 1e-12), (np.float32, 1e-6)])
def test_scale_then_query(dtype, rtol):
    rng = np.random.default_rng(5)
    cs = CountSketch(64, 5, dtype=dtype, random_state=5)
    pool, keys, deltas = random_stream(rng, 2000, n_keys=100)
    cs.update(keys, deltas)
    base = cs.query(pool)
    table_before = cs.table.copy()
    for c in (2.0, -0.5, 3.7):
        before = cs.query(pool)
        cs.scale(c)
        np.testing.assert_allclose(cs.query(pool), c * before, rtol=rtol, atol=0)
        # lazy: the stored table is untouched
        np.testing.assert_array_equal(cs.table, table_before)
    total = 2.0 * -0.5 * 3.7
    np.testing.assert_allclose(cs.query(pool), total * base, rtol=rtol)
    # accepts numpy scalars and ints
    cs.scale(np.float32(2.0))
    cs.scale(1)
    np.testing.assert_allclose(cs.query(pool), 2 * total * base, rtol=rtol)


@pytest.mark.parametrize("dtype, rtol", [(np.float64, 1e-12), (np.float32, 1e-6)])
def test_repeated_scale_down_renormalizes(dtype, rtol):
    rng = np.random.default_rng(6)
    cs = CountSketch(64, 3, dtype=dtype, random_state=6)
    pool, keys, deltas = random_stream(rng, 1000, n_keys=100)
    cs.update(keys, deltas)
    base = cs.query(pool)
    expected = base.copy()
    renormalized = False
    for _ in range(15):
        cs.scale(0.1)
        expected = expected * 0.1
        assert abs(cs.scale_factor) >= 1e-9
        if cs.scale_factor == 1.0:
            renormalized = True
        np.testing.assert_allclose(cs.query(pool), expected, rtol=rtol,
                                   atol=rtol * np.abs(expected).max())
    assert renormalized
    # after renormalization, updates are still applied on the visible scale
    prev = cs.scale_factor
    assert prev < 1.0  # lazily scaled again since the renormalization
    cs.scale(0.5)
    expected = expected * 0.5
    assert cs.scale_factor == prev * 0.5
    delta = 10 * np.abs(expected).max()
    before = cs.query(pool)
    cs.update([pool[0]], [delta])
    after = cs.query(pool)
    np.testing.assert_allclose(after[0], before[0] + delta, rtol=10 * rtol)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_scale_zero_and_clear(dtype):
    cs = CountSketch(32, 3, dtype=dtype, random_state=0)
    cs.update([1, 2, 3], [1.0, -2.0, 3.0])
    seeds = cs.seeds
    cs.scale(0)
    assert (cs.table == 0).all()
    assert cs.scale_factor == 1.0
    np.testing.assert_array_equal(cs.query([1, 2, 3]), 0.0)
    cs.update([1], [4.0])
    np.testing.assert_array_equal(cs.query([1]), [4.0])
    cs.scale(0.5)
    cs.clear()
    assert (cs.table == 0).all() and cs.scale_factor == 1.0
    np.testing.assert_array_equal(cs.seeds, seeds)
    np.testing.assert_array_equal(cs.query([1]), [0.0])


def test_scale_errors():
    cs = CountSketch(8, 2, random_state=0)
    cs.update([1], [1.0])
    before = state(cs)
    for bad in (np.nan, np.inf, -np.inf):
        with pytest.raises(ValueError):
            cs.scale(bad)
    for bad in ("2", None, True, [2.0]):
        with pytest.raises(TypeError):
            cs.scale(bad)
    assert_same_state(cs, before)


# --------------------------------------------------------------------------- exact recovery
@pytest.mark.parametrize("random_state", [0, 1, 2])
def test_exact_recovery_with_wide_table(random_state):
    rng = np.random.default_rng(random_state)
    keys = np.concatenate([
        rng.integers(INT64_MIN, INT64_MAX, size=40, dtype=np.int64),
        np.array([-1, -7, 2**32, 2**32 + 1, 2**40, INT64_MIN, INT64_MAX, 0, 1, -(2**33)]),
    ])
    assert len(np.unique(keys)) == 50
    values = np.concatenate([rng.normal(size=25) * 1e3, rng.integers(-2**50, 2**50, size=25)])
    values[:3] = [2.0**32 + 0.5, -(2.0**40), 1e-300]
    cs = CountSketch(2**20, 3, dtype=np.float64, random_state=random_state)
    # updates split in pieces, in shuffled order
    order = rng.permutation(100) % 50
    cs.update(keys[order], values[order] * 0.5)  # each key twice, half the value each time
    np.testing.assert_array_equal(cs.query(keys), values)
    others = np.setdiff1d(rng.integers(INT64_MIN, INT64_MAX, size=2000, dtype=np.int64), keys)
    others = np.concatenate([others, np.setdiff1d(np.arange(-100, 100), keys)])
    np.testing.assert_array_equal(cs.query(others), 0.0)


# --------------------------------------------------------------------------- error bound
def zipf_stream(rng, n_items, n_keys, a=1.2):
    draws = rng.zipf(a, size=4 * n_items)
    draws = draws[draws <= n_keys][:n_items]
    assert len(draws) == n_items
    # scatter the ranks over int64 keys so the keys are not small consecutive integers
    perm = rng.integers(INT64_MIN, INT64_MAX, size=n_keys + 1, dtype=np.int64)
    return perm[draws]


@pytest.mark.parametrize("random_state", [0, 1, 2, 3])
def test_count_sketch_error_bound_on_zipf(random_state):
    rng = np.random.default_rng(random_state)
    stream = zipf_stream(rng, 10**5, 10**4)
    uniq, counts = np.unique(stream, return_counts=True)
    x = counts.astype(np.float64)
    norm2 = np.sqrt((x ** 2).sum())
    eps = 0.05
    width = int(np.ceil(3 / eps**2))   # w = O(1 / eps^2)
    depth = 5                         # d = O(log(n / delta))
    assert width == 1200
    cs = CountSketch(width, depth, random_state=random_state)
    cs.update(stream, np.ones(len(stream)))
    top = np.argsort(-x, kind="stable")[:20]
    est = cs.query(uniq[top])
    err = np.abs(est - x[top])
    assert (err <= eps * norm2).all(), (err.max(), eps * norm2)
    # the heavy hitters are really recovered as the heaviest estimates among the top
    assert est[0] == pytest.approx(x[top[0]], abs=eps * norm2)
    # the estimate of the whole vector has L_inf error within the bound for most keys
    all_err = np.abs(cs.query(uniq) - x)
    assert np.mean(all_err <= eps * norm2) > 0.99


# --------------------------------------------------------------------------- merge errors
def test_merge_errors_leave_sketch_unchanged():
    base = CountSketch(16, 3, dtype=np.float64, seeds=[1, 2, 3])
    base.update([1, 2, 3], [1.0, 2.0, 3.0])
    base.scale(0.5)
    before = state(base)
    bad = [
        CountSketch(17, 3, dtype=np.float64, seeds=[1, 2, 3]),
        CountSketch(16, 2, dtype=np.float64, seeds=[1, 2]),
        CountSketch(16, 4, dtype=np.float64, seeds=[1, 2, 3, 4]),
        CountSketch(16, 3, dtype=np.float32, seeds=[1, 2, 3]),
        CountSketch(16, 3, dtype=np.float64, seeds=[1, 2, 4]),
        CountSketch(16, 3, dtype=np.float64, seeds=[3, 2, 1]),
    ]
    for other in bad:
        other.update([1, 5], [10.0, 20.0])
        assert not base.same_configuration(other)
        with pytest.raises(ValueError):
            base.merge(other)
        assert_same_state(base, before)
    with pytest.raises(TypeError):
        base.merge(None)
    with pytest.raises(TypeError):
        base.merge(base.table)
    assert_same_state(base, before)
    good = CountSketch(16, 3, dtype=np.float64, seeds=[1, 2, 3])
    assert base.same_configuration(good)
    assert not base.same_configuration("sketch")


# --------------------------------------------------------------------------- constructor
def test_constructor_validation():
    for bad in (0, -1, 2**31 + 1):
        with pytest.raises(ValueError):
            CountSketch(bad)
    for bad in (0, -1, 65):
        with pytest.raises(ValueError):
            CountSketch(8, bad)
    for bad in (2.5, "3", 8.0, None, True):
        with pytest.raises(TypeError):
            CountSketch(bad)
    for bad in (2.5, "3", True):
        with pytest.raises(TypeError):
            CountSketch(8, bad)
    for bad in (np.int32, np.int64, np.float16, np.complex128, "int32", object):
        with pytest.raises(TypeError):
            CountSketch(8, 2, dtype=bad)
    # boundaries
    assert CountSketch(1, 1).width == 1
    assert CountSketch(2, 64, random_state=0).depth == 64
    assert CountSketch(np.int64(8), np.int32(3)).width == 8


def test_dtype_and_memory():
    cs = CountSketch(100, 3, random_state=0)
    assert cs.dtype == np.float32
    assert cs.table.shape == (3, 100)
    assert cs.memory_bytes == 3 * 100 * 4 + 3 * 4
    cs = CountSketch(100, 7, dtype=np.float64, random_state=0)
    assert cs.dtype == np.float64 and cs.table.dtype == np.float64
    assert cs.memory_bytes == 7 * 100 * 8 + 7 * 4
    assert CountSketch(5, 2, dtype="float64").dtype == np.float64
    assert repr(cs) == "CountSketch(width=100, depth=7, dtype=float64)"
    assert (cs.table == 0).all() and cs.scale_factor == 1.0


def test_seeds():
    cs = CountSketch(64, 3, seeds=[0, 2**32 - 1, 12345])
    assert cs.seeds.dtype == np.uint32
    assert cs.seeds.tolist() == [0, 2**32 - 1, 12345]
    # seeds is a copy
    s = cs.seeds
    s[0] = 99
    assert cs.seeds[0] == 0
    cs.update([7], [1.0])
    b, sg = bucket_and_sign_arrays([7], [0, 2**32 - 1, 12345], 64)
    for j in range(3):
        assert cs.table[j, b[j, 0]] == sg[j, 0]
    assert CountSketch(8, 2, seeds=np.array([3, 4], dtype=np.uint64)).seeds.tolist() == [3, 4]
    # seeds override random_state
    assert CountSketch(8, 2, seeds=[3, 4], random_state=0).seeds.tolist() == [3, 4]
    for bad in ([1, 2], [1, 2, 3, 4], [[1, 2, 3]], [1.0, 2.0, 3.0], [-1, 2, 3], [2**32, 1, 2]):
        with pytest.raises(ValueError):
            CountSketch(8, 3, seeds=bad)


def test_random_state():
    a = CountSketch(8, 5, random_state=42)
    b = CountSketch(8, 5, random_state=42)
    c = CountSketch(8, 5, random_state=43)
    np.testing.assert_array_equal(a.seeds, b.seeds)
    assert not np.array_equal(a.seeds, c.seeds)
    assert a.seeds.dtype == np.uint32 and a.seeds.shape == (5,)
    r1, r2 = np.random.RandomState(7), np.random.RandomState(7)
    np.testing.assert_array_equal(CountSketch(8, 4, random_state=r1).seeds,
                                  CountSketch(8, 4, random_state=r2).seeds)
    # the RandomState instance is advanced: next sketch differs
    assert not np.array_equal(CountSketch(8, 4, random_state=r1).seeds,
                              CountSketch(8, 4, random_state=7).seeds)
    # None draws fresh seeds: rows almost surely differ between sketches
    assert not np.array_equal(CountSketch(8, 8).seeds, CountSketch(8, 8).seeds)


# --------------------------------------------------------------------------- bad input
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_bad_update_leaves_sketch_unchanged(dtype):
    cs = CountSketch(16, 3, dtype=dtype, random_state=0)
    cs.update([1, 2, 3], [1.0, 2.0, 3.0])
    cs.scale(0.5)
    before = state(cs)
    cases = [
        (ValueError, [1, 2], [1.0, np.nan]),
        (ValueError, [1, 2], [np.inf, 1.0]),
        (ValueError, [1, 2], [1.0, -np.inf]),
        (ValueError, [1, 2, 3], [1.0, 2.0]),
        (ValueError, [1], [1.0, 2.0]),
        (ValueError, [[1, 2], [3, 4]], [1.0, 2.0, 3.0, 4.0]),
        (ValueError, [[1, 2], [3, 4]], [[1.0, 2.0], [3.0, 4.0]]),
        (ValueError, [1, 2], [[1.0, 2.0]]),
        (TypeError, [1.0, 2.0], [1.0, 2.0]),
        (TypeError, np.array([1.5]), [1.0]),
        (TypeError, [1, 2], ["a", "b"]),
        (TypeError, [1, 2], [1 + 2j, 1.0]),
        (TypeError, ["1", "2"], [1.0, 2.0]),
        (ValueError, np.array([2**63], dtype=np.uint64), [1.0]),
    ]
    for exc, keys, deltas in cases:
        with pytest.raises(exc):
            cs.update(keys, deltas)
        assert_same_state(cs, before)
    with pytest.raises(TypeError):
        cs.query([1.5])
    with pytest.raises(ValueError):
        cs.query([[1, 2]])


def test_update_accepts_various_inputs():
    cs = CountSketch(2**16, 3, dtype=np.float64, random_state=0)
    cs.update(np.array([3], dtype=np.int32), np.array([2], dtype=np.int64))
    cs.update(np.uint64(3), 1.5)
    cs.update([], [])
    cs.update(np.array([], dtype=np.int64), np.array([]))
    np.testing.assert_array_equal(cs.query([3]), [3.5])
    assert cs.query([]).shape == (0,)


# --------------------------------------------------------------------------- copies
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("how", ["pickle", "deepcopy", "copy", "method"])
def test_copies_are_equal_and_independent(dtype, how):
    rng = np.random.default_rng(8)
    cs = CountSketch(50, 4, dtype=dtype, random_state=8)
    pool, keys, deltas = random_stream(rng, 500)
    cs.update(keys, deltas)
    cs.scale(0.375)
    if how == "pickle":
        other = pickle.loads(pickle.dumps(cs))
    elif how == "deepcopy":
        other = copy.deepcopy(cs)
    elif how == "copy":
        other = copy.copy(cs)
    else:
        other = cs.copy()
    assert type(other) is CountSketch
    assert (other.width, other.depth, other.dtype) == (cs.width, cs.depth, cs.dtype)
    np.testing.assert_array_equal(other.seeds, cs.seeds)
    np.testing.assert_array_equal(other.table, cs.table)
    assert other.scale_factor == cs.scale_factor == 0.375
    np.testing.assert_array_equal(other.query(pool), cs.query(pool))
    assert other.memory_bytes == cs.memory_bytes
    assert cs.same_configuration(other)
    before = state(cs)
    q_before = cs.query(pool)
    other.update(pool, np.ones(len(pool)))
    other.scale(2.0)
    assert not np.array_equal(other.table, cs.table)
    assert_same_state(cs, before)
    np.testing.assert_array_equal(cs.query(pool), q_before)
    # and the other way round
    snap = state(other)
    cs.update(pool[:3], [1.0, 2.0, 3.0])
    cs.clear()
    assert_same_state(other, snap)
    # continuing the same operations on both gives identical results
    twin = cs.copy()
    for sk in (cs, twin):
        sk.update(keys[:100], deltas[:100])
        sk.scale(-1.5)
    np.testing.assert_array_equal(cs.table, twin.table)
    np.testing.assert_array_equal(cs.query(pool), twin.query(pool))


# --------------------------------------------------------------------------- int64 extremes
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_int64_extreme_keys(dtype):
    keys = np.array([INT64_MIN, INT64_MAX, -1, 0, 2**32, 2**32 - 1], dtype=np.int64)
    values = np.array([1.0, 2.0, 3.0, 4.0, 5.0, 6.0])
    cs = CountSketch(2**18, 3, dtype=dtype, random_state=0)
    cs.update(keys, values)
    np.testing.assert_array_equal(cs.query(keys), values)
    np.testing.assert_array_equal(cs.table, ref_table(keys, values, cs.seeds, 2**18, dtype))
    # python ints at the extremes and uint64 below 2**63
    cs.update([INT64_MIN, INT64_MAX], [1.0, 1.0])
    cs.update(np.array([INT64_MAX], dtype=np.uint64), [1.0])
    np.testing.assert_array_equal(cs.query([INT64_MIN, INT64_MAX]), [2.0, 4.0])
    # a single key fills the row at exactly one bucket
    single = CountSketch(7, 3, dtype=dtype, random_state=3)
    single.update([INT64_MIN], [2.5])
    b, s = bucket_and_sign_arrays([INT64_MIN], single.seeds, 7)
    expected = np.zeros((3, 7))
    expected[np.arange(3), b[:, 0]] = 2.5 * s[:, 0]
    np.testing.assert_array_equal(single.table, expected)
