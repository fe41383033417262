"""How an estimator reads numeric columns: standardized, scaled or as given.

Under ``learning_rate='normalized'`` a model trains in the coordinates of its first
call's columns: a dense array (and a sparse table at least half non-zero) centred
and scaled by each column's mean and standard deviation, a sparse table that is
mostly zeros scaled by the root mean square of each column's entries (its zeros
kept), and anything else (wide input: words, k-mers, hashed features) as given but
for its measured features (a length, a price), each scaled by the root mean square
of its values. See
``_BaseSketchSGD._set_standardization`` for the estimator's side (budget, presets).
"""
import numpy as np
import scipy.sparse as sp

from ._sorted_keys import find_sorted, unique_keys

#: Dense columns are standardized (learning_rate='normalized') unless their mean
#: and scale would take more than this share of ``memory_budget``, or the first
#: call holds fewer rows than STANDARDIZE_MIN_ROWS to estimate them from (one row
#: would centre every column on itself: nothing left to learn), or the rows, every
#: entry of which centring makes non-zero, would grow past STANDARDIZE_MAX_WIDTH
#: entries and more than twice their non-zeros (a mostly-zero array of many
#: columns, as ``.toarray()`` of a text matrix: 65,536 columns of 100 non-zeros
#: would train 655 times as long).
STANDARDIZE_BUDGET_SHARE, STANDARDIZE_MIN_ROWS, STANDARDIZE_MAX_WIDTH = 0.25, 30, 1000
#: Sparse input of at most this many columns is a table of measurements (svmlight files
#: of raw columns), scaled as dense columns are; wider sparse input (text, k-mers,
#: hashed features) is a bag of counts or indicators, read as given.
SPARSE_TABLE_MAX_WIDTH = 1000


def mostly_zeros(n_columns, nnz_per_row):
    """Whether rows of ``nnz_per_row`` non-zeros over ``n_columns`` columns are left as
    given: centred, each would hold every column (STANDARDIZE_MAX_WIDTH)."""
    return n_columns > STANDARDIZE_MAX_WIDTH and n_columns > 2 * nnz_per_row


def standardization_bytes(n_features):
    """Bytes of the mean and scale of ``n_features`` columns (float64 each)."""
    return 16 * int(n_features)


def column_mean_and_scale(X):
    """Each column's mean and scale of dense ``X`` (:func:`column_scale`)."""
    mean = X.mean(axis=0)
    return mean, column_scale(mean, X.std(axis=0))


def entry_rms(X):
    """The root mean square of each column's entries (its non-zero values) in sparse
    ``X`` (1 for a column with none): its zeros kept, an indicator of 1s stays 1.

    A measurement then holds most of its values near 1, beside indicators of 1,
    whatever its tail: divided by its largest value (as ``MaxAbsScaler`` does),
    a delay of 1,300 minutes where most are under 20 shrank most of them to a
    few hundredths, and the 'normalized' step, which a row shares among its
    features by their squares, left the delay's weight all but untrained. The
    flights' sparse table (fields one-hot beside raw columns, arrivals 15 minutes
    late, ``benchmarks/bench_dense_columns.py``): 0.907-0.910 scaled by the
    largest value, 0.913-0.918 by the root mean square; the weather's wet hours
    0.939-0.943 and 0.938-0.945.

    Examples
    --------
    >>> import scipy.sparse as sp
    >>> entry_rms(sp.csr_matrix([[3.0, 1.0, 0.0], [0.0, 1.0, 0.0], [-4.0, 0.0, 0.0]]))
    array([3.53553391, 1.        , 1.        ])
    """
    X = sp.csr_matrix(X)
    squares = np.bincount(X.indices, weights=np.square(X.data), minlength=X.shape[1])
    entries = np.bincount(X.indices[X.data != 0], minlength=X.shape[1])
    rms = np.sqrt(squares / np.maximum(entries, 1))
    return np.where(rms > 0, rms, 1.0)


def sparse_table_statistics(X):
    """``(mean, scale)`` of the columns of a sparse table ``X``: over the columns that
    hold a value, at least half non-zero, their mean and scale as the array's
    (:func:`column_mean_and_scale`; the others 0 and 1), else 0 and the root mean
    square of each column's entries (:func:`entry_rms`), which keeps the zeros."""
    X = sp.csr_matrix(X)
    present = unique_keys(X.indices[X.data != 0])
    if 2 * np.count_nonzero(X.data) < X.shape[0] * present.size:
        return np.zeros(X.shape[1]), entry_rms(X)
    mean, scale = np.zeros(X.shape[1]), np.ones(X.shape[1])
    mean[present], scale[present] = column_mean_and_scale(X[:, present].toarray())
    return mean, scale


def column_scale(mean, std):
    """The standard deviations ``std``, where a column's is nothing against its
    ``mean`` (a constant column) 1: it is centred to zero, not blown up."""
    return np.where(std <= 1e-12 * np.maximum(np.abs(mean), 1.0), 1.0, std)


def first_call_reading(X):
    """The attributes a new model takes from its first call's rows ``X``:
    ``{"feature_mean_", "feature_scale_"}`` (a dense array, a sparse table),
    ``{"scaled_keys_", "key_scales_"}`` (wider sparse input, or a dense array that is
    :func:`mostly_zeros`, with measured features: :func:`measured_keys`), or None
    when it reads them as given: fewer than ``STANDARDIZE_MIN_ROWS`` rows, or other
    wide input."""
    if X.shape[0] < STANDARDIZE_MIN_ROWS:
        return None
    if sp.issparse(X):
        if X.shape[1] <= SPARSE_TABLE_MAX_WIDTH:
            mean, scale = sparse_table_statistics(X)
            return {"feature_mean_": mean, "feature_scale_": scale}
        keyed = measured_keys(X)
        return None if keyed is None else dict(zip(("scaled_keys_", "key_scales_"), keyed))
    if mostly_zeros(X.shape[1], np.count_nonzero(X) / X.shape[0]):
        keyed = measured_keys(sp.csr_matrix(X[:MEASURED_ROWS]))
        return None if keyed is None else dict(zip(("scaled_keys_", "key_scales_"), keyed))
    mean, scale = column_mean_and_scale(X)
    return {"feature_mean_": mean, "feature_scale_": scale}


def read_columns(X, mean, scale):
    """``X`` in a model's coordinates: ``(X - mean) / scale``. Sparse rows stay sparse
    but for the centred columns (mean not 0), which are made dense."""
    if not sp.issparse(X):
        return (X - mean) / scale
    X = sp.csr_matrix(X, copy=True)
    centred = np.flatnonzero(mean)
    in_block = np.zeros(X.shape[1], dtype=bool)
    in_block[centred] = True
    block = (X[:, centred].toarray() - mean[centred]) / scale[centred]
    X.data = np.where(in_block[X.indices], 0.0, X.data / scale[X.indices])
    if not centred.size:
        return X
    X.eliminate_zeros()
    rows = np.repeat(np.arange(X.shape[0]), centred.size)
    return X + sp.csr_matrix((block.ravel(), (rows, np.tile(centred, X.shape[0]))),
                             shape=X.shape)


#: Wide sparse input (columns that are keys) is scaled feature by feature where at most
#: this many of its features hold values other than 1 (over the first call's first
#: ``MEASURED_ROWS`` rows), and only those that hold such values in most of their
#: entries (measurements): a few numeric features among indicators, as Vowpal Wabbit
#: files and raw ``{name: value}`` dicts hold. Counts of words or k-mers and normalized
#: rows make thousands of such features, and are read as given; a k-mer that repeats
#: in a few reads (a count of 2 among 1s), or whose counts stay whole numbers up to
#: COUNT_LIMIT, is a count, not a measurement.
MAX_SCALED_KEYS, MEASURED_ROWS, COUNT_LIMIT = 1000, 10_000, 16
#: Among counts, a measurement is in at least this share of the rows: a field of the
#: file, not a token of a few odd documents. 20 Newsgroups' uuencoded posts count
#: tokens thousands of times: 121 tokens mostly past COUNT_LIMIT, in 63 of 10,000
#: posts; scaled, the WM- and AWM-Sketch lost 0.7 to 1.1 points at 64KB.
MEASURED_MIN_SHARE = 0.01


def measured_keys(X):
    """``(keys, scales)``: the sorted measured features of wide sparse ``X`` with the
    root mean square of their entries in its first ``MEASURED_ROWS`` rows (as
    :func:`entry_rms`), or None (read as given).

    Where 1 to ``MAX_SCALED_KEYS`` features hold values other than 1 there (a few
    numeric features among indicators), a measured feature is one most of whose
    values are not 1, with a fraction among them or a value past ``COUNT_LIMIT``.
    Where more do (counts of words or k-mers, normalized rows), it is one most of
    whose values are past ``COUNT_LIMIT`` (a length beside the counted words of a
    Vowpal Wabbit file or the normalized words of a TF-IDF table, not a word
    counted past ``COUNT_LIMIT`` in a few long posts), or fractions where at most
    ``MAX_SCALED_KEYS`` features are so (a price beside counted words; not the
    words of normalized rows), and that is in at least ``MEASURED_MIN_SHARE`` of
    the rows. Read as given, such a feature makes a row's norm, and so the
    'normalized' step, hundreds of times the other features'.
    """
    X = sp.csr_matrix(X)
    end = X.indptr[min(X.shape[0], MEASURED_ROWS)]
    values = np.abs(X.data[:end])
    measured = (values != 1.0) & (values != 0.0)
    if not measured.any() or not MAX_SCALED_KEYS:
        return None
    indices = np.asarray(X.indices[:end])[measured]
    keys, inverse = np.unique(indices, return_inverse=True)
    values = values[measured]
    scales = np.zeros(keys.size)
    np.maximum.at(scales, inverse, values)
    # Each feature's entries (non-zero values) in those rows.
    at, found = find_sorted(keys, np.asarray(X.indices[:end])[X.data[:end] != 0.0])
    entries = np.bincount(at[found], minlength=keys.size)
    fractions = values != np.round(values)
    if keys.size <= MAX_SCALED_KEYS:
        # Small counts (a k-mer repeated within a read) are left as they are.
        most = 2 * np.bincount(inverse, minlength=keys.size) > entries
        fraction = np.zeros(keys.size, dtype=bool)
        fraction[inverse[fractions]] = True
        keep = most & (fraction | (scales > COUNT_LIMIT))
    else:
        large = 2 * np.bincount(inverse, weights=values > COUNT_LIMIT,
                                minlength=keys.size) > entries
        fractional = 2 * np.bincount(inverse, weights=fractions, minlength=keys.size) > entries
        keep = large
        if np.count_nonzero(fractional & ~large) <= MAX_SCALED_KEYS:
            keep = keep | fractional
        keep &= entries >= MEASURED_MIN_SHARE * min(X.shape[0], MEASURED_ROWS)
    if not keep.any() or np.count_nonzero(keep) > MAX_SCALED_KEYS:
        return None
    # Over every entry: the measured values' squares, and 1 for each value of 1.
    n_measured = np.bincount(inverse, minlength=keys.size)
    squares = np.bincount(inverse, weights=np.square(values), minlength=keys.size)
    rms = np.sqrt((squares + entries - n_measured)[keep] / entries[keep])
    return keys[keep].astype(np.int64), rms


def read_keyed(X, keys, scales):
    """``X`` with the values of features ``keys`` divided by their ``scales``."""
    if not sp.issparse(X):
        X = np.array(X, dtype=np.float64)
        X[:, keys] /= scales
        return X
    X = sp.csr_matrix(X, copy=True)
    at, hit = find_sorted(keys, X.indices)
    X.data = np.where(hit, X.data / scales[at], X.data)
    return X
