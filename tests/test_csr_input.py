"""CSR input of the estimators: unsorted rows are taken as they are, repeats are summed."""
import numpy as np
import pytest
import scipy.sparse as sp

from sklearn_sketch import FeatureHashingClassifier
from sklearn_sketch._base import _as_csr_int64
from sklearn_sketch._sgd_fast import rows_hold_more_keys_than, rows_repeat_a_column


def random_rows(rng, n_rows, repeat, max_len=40):
    """CSR arrays of rows in random column order; ``repeat`` puts a repeat in one row."""
    indptr, indices = [0], []
    for i in range(n_rows):
        size = int(rng.integers(0, max_len))
        row = rng.choice(2**62, size=size, replace=False).astype(np.int64)
        indices.extend(row.tolist())
        indptr.append(len(indices))
    indices = np.array(indices, dtype=np.int64)
    indptr = np.array(indptr, dtype=np.int64)
    if repeat:
        long_rows = np.flatnonzero(np.diff(indptr) >= 2)
        row = long_rows[rng.integers(long_rows.size)]
        a, b = indptr[row], indptr[row + 1]
        j, k = rng.choice(np.arange(a, b), size=2, replace=False)
        indices[j] = indices[k]
    return indptr, indices


def numpy_repeats(indptr, indices):
    return any(np.unique(indices[a:b]).size < b - a for a, b in zip(indptr[:-1], indptr[1:]))


@pytest.mark.parametrize("max_len", [6, 40, 3000])
def test_rows_repeat_a_column_matches_numpy(max_len):
    # Short and long rows (the per-row filter grows with the row).
    rng = np.random.default_rng(max_len)
    for trial in range(30):
        indptr, indices = random_rows(rng, 20, repeat=trial % 2 == 1, max_len=max_len)
        assert rows_repeat_a_column(indptr, indices) == numpy_repeats(indptr, indices)
        assert rows_repeat_a_column(indptr, indices) == (trial % 2 == 1)
    # Keys differing only in their high bits, or only in their low bits.
    for keys in [np.arange(500, dtype=np.int64) << 40, np.arange(500, dtype=np.int64)]:
        assert not rows_repeat_a_column(np.array([0, 500]), keys)
        assert rows_repeat_a_column(np.array([0, 501]), np.append(keys, keys[250]))
    # The same column in two different rows is no repeat.
    assert not rows_repeat_a_column(np.array([0, 1, 2]), np.array([7, 7]))
    assert not rows_repeat_a_column(np.array([0]), np.zeros(0, dtype=np.int64))


def test_rows_hold_more_keys_than_matches_numpy():
    # The eta0='auto' probe's load test: distinct columns of some rows (a row may
    # be read twice, and rows share columns) against a limit on either side.
    rng = np.random.default_rng(0)
    for trial in range(40):
        indptr, indices = random_rows(rng, 30, repeat=False, max_len=60)
        # Columns shared between rows, and some differing only in high bits.
        indices[rng.random(indices.size) < 0.5] = rng.integers(0, 50) << 40
        indices[rng.random(indices.size) < 0.3] = rng.integers(-20, 20)
        rows = rng.integers(0, 30, size=int(rng.integers(0, 40))).astype(np.int64)
        parts = [indices[indptr[r]:indptr[r + 1]] for r in rows]
        distinct = np.unique(np.concatenate(parts)).size if parts else 0
        for limit in {0, max(distinct - 1, 0), distinct, distinct + 1, 10**6}:
            assert rows_hold_more_keys_than(indptr, indices, rows, limit) == (distinct > limit)
    with pytest.raises(ValueError, match="limit"):
        rows_hold_more_keys_than(np.array([0, 1]), np.array([3]), np.array([0]), -1)
    with pytest.raises(IndexError, match="row 1"):
        rows_hold_more_keys_than(np.array([0, 1]), np.array([3]), np.array([1]), 0)


def test_unsorted_unique_rows_are_taken_without_copy():
    rng = np.random.default_rng(0)
    indptr, indices = random_rows(rng, 50, repeat=False)
    data = rng.normal(size=indices.size)
    X = sp.csr_matrix((50, 2**62))
    X.data, X.indices, X.indptr = data, indices, indptr
    assert not X.has_canonical_format
    got_indptr, got_indices, got_data = _as_csr_int64(X)
    # The rows in their order, the caller's arrays themselves.
    assert np.shares_memory(got_indices, indices) and np.shares_memory(got_data, data)
    np.testing.assert_array_equal(got_indices, indices)
    np.testing.assert_array_equal(got_indptr, indptr)
    # Stored zeros are dropped, the other entries kept in their order.
    zeros = data.copy()
    zeros[::3] = 0.0
    X.data = zeros
    got_indptr, got_indices, got_data = _as_csr_int64(X)
    kept = zeros != 0
    np.testing.assert_array_equal(got_indices, indices[kept])
    np.testing.assert_array_equal(got_data, zeros[kept])
    np.testing.assert_array_equal(got_indptr, np.concatenate([[0], np.cumsum(kept)])[indptr])
    np.testing.assert_array_equal(X.data, zeros)


def test_repeats_in_unsorted_rows_are_summed():
    rng = np.random.default_rng(1)
    indptr, indices = random_rows(rng, 50, repeat=True)
    data = rng.normal(size=indices.size)
    X = sp.csr_matrix((50, 2**62))
    X.data, X.indices, X.indptr = data.copy(), indices.copy(), indptr.copy()
    got_indptr, got_indices, got_data = _as_csr_int64(X)
    expected = sp.csr_matrix((data.copy(), indices.copy(), indptr.copy()), shape=X.shape)
    expected.sum_duplicates()
    np.testing.assert_array_equal(got_indptr, expected.indptr)
    np.testing.assert_array_equal(got_indices, expected.indices)
    np.testing.assert_array_equal(got_data, expected.data)
    # The caller's matrix is left as it was.
    np.testing.assert_array_equal(X.indices, indices)


def test_unsorted_rows_train_feature_hashing_like_sorted_rows():
    # Feature hashing has no heap: a row's order only changes the rounding of
    # the sums (a heap estimator also offers the features to its heap in that order).
    rng = np.random.default_rng(2)
    indptr, indices = random_rows(rng, 400, repeat=False, max_len=30)
    indices %= 5000
    unique_rows = [np.unique(indices[a:b]).size == b - a for a, b in zip(indptr[:-1],
                                                                       indptr[1:])]
    keep = np.repeat(unique_rows, np.diff(indptr))
    lengths = np.diff(indptr)[unique_rows]
    indices = indices[keep]
    indptr = np.concatenate([[0], np.cumsum(lengths)])
    data = rng.normal(size=indices.size)
    unsorted = sp.csr_matrix((lengths.size, 5000))
    unsorted.data, unsorted.indices, unsorted.indptr = data, indices, indptr
    assert not unsorted.has_canonical_format
    y = rng.integers(0, 2, lengths.size)
    for width in [2**16, 64]:
        models = [FeatureHashingClassifier(sketch_width=width, batch_size=4, random_state=0,
                                           learning_rate="constant", eta0=0.01).fit(X, y)
                  for X in [unsorted, unsorted.sorted_indices()]]
        tables = [np.array([s.table for s in model.sketches_]) for model in models]
        assert np.abs(tables[0]).max() > 0
        if width == 2**16:
            # Rows rarely share a cell: the same sums here, bit for bit.
            np.testing.assert_array_equal(tables[0], tables[1])
            np.testing.assert_array_equal(models[0].intercept_, models[1].intercept_)
        else:
            # Cells shared within a row add in another order (float32 cells).
            np.testing.assert_allclose(tables[0], tables[1], rtol=1e-5, atol=1e-6)
            np.testing.assert_allclose(models[0].intercept_, models[1].intercept_, rtol=1e-6)
