"""How an estimator reads numeric columns: standardized, scaled or as given.

Under ``learning_rate='normalized'`` a model trains in the coordinates of its first
call's columns: a dense array (and a sparse table at least half non-zero) centred
and scaled by each column's mean and standard deviation, a sparse table that is
mostly zeros scaled by each column's largest absolute value (its zeros kept), and
anything else (wide sparse input: words, k-mers, hashed features) as given. See
``_BaseSketchSGD._set_standardization`` for the estimator's side (budget, presets).
"""
import numpy as np
import scipy.sparse as sp

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


def column_max_abs(X):
    """Each column's largest absolute value in sparse ``X`` (1 for a column with
    none): the scale of :class:`~sklearn.preprocessing.MaxAbsScaler`, which keeps
    the zeros."""
    top = np.asarray(abs(X).max(axis=0).toarray()).ravel().astype(np.float64)
    return np.where(top > 0, top, 1.0)


def sparse_table_statistics(X):
    """``(mean, scale)`` of the columns of a sparse table ``X``: over the columns that
    hold a value, at least half non-zero, their mean and scale as the array's
    (:func:`column_mean_and_scale`; the others 0 and 1), else 0 and each column's
    largest absolute value (:func:`column_max_abs`), which keeps the zeros."""
    X = sp.csr_matrix(X)
    present = np.unique(X.indices[X.data != 0])
    if 2 * np.count_nonzero(X.data) < X.shape[0] * present.size:
        return np.zeros(X.shape[1]), column_max_abs(X)
    mean, scale = np.zeros(X.shape[1]), np.ones(X.shape[1])
    mean[present], scale[present] = column_mean_and_scale(X[:, present].toarray())
    return mean, scale


def column_scale(mean, std):
    """The standard deviations ``std``, where a column's is nothing against its
    ``mean`` (a constant column) 1: it is centred to zero, not blown up."""
    return np.where(std <= 1e-12 * np.maximum(np.abs(mean), 1.0), 1.0, std)


def first_call_statistics(X):
    """``(mean, scale)`` a new model takes from its first call's rows ``X``, or None
    when it reads them as given: fewer than ``STANDARDIZE_MIN_ROWS`` rows, sparse
    input of more than ``SPARSE_TABLE_MAX_WIDTH`` columns, or a dense array that is
    :func:`mostly_zeros`."""
    if X.shape[0] < STANDARDIZE_MIN_ROWS:
        return None
    if sp.issparse(X):
        return sparse_table_statistics(X) if X.shape[1] <= SPARSE_TABLE_MAX_WIDTH else None
    if mostly_zeros(X.shape[1], np.count_nonzero(X) / X.shape[0]):
        return None
    return column_mean_and_scale(X)


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
