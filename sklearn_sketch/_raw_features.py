"""Raw feature input: samples as token lists or ``{name: value}`` dicts.

Like scikit-learn's ``FeatureHasher``, names are hashed to 64-bit keys, so the
estimators see a CSR matrix with ``2**63 - 1`` columns. The key of a name is the
unsigned MurmurHash3 (x64_128, first half, seed 0) of its UTF-8 bytes modulo
``2**63 - 1``: the key ``sklearn_sketch.io.VowpalWabbitReader`` gives a feature of
the default namespace, so files and raw samples share one feature space.
"""
from itertools import chain

import numpy as np
import scipy.sparse as sp

from ._core import hash_names
from ._examples_fast import shuffled_examples

RAW_N_FEATURES = 2**63 - 1


class NamedRows:
    """Rows of hashed feature keys with a lookup of their names.

    What :class:`~sklearn_sketch.feature_extraction.FeatureCrosser` returns:
    every estimator here takes it as ``X`` and names the features of its heaps
    from it, as it does for token lists and dicts. Rows can be selected like
    an array's (``rows[10:20]``, ``rows[[3, 1]]``), so it passes through
    scikit-learn's cross-validation splitters.

    Parameters
    ----------
    X : scipy.sparse.csr_matrix of shape (n_samples, 2**63 - 1)
        The rows: one column per feature key.
    names : object
        ``lookup(keys) -> {key: name}`` for the keys of ``X`` (and optionally
        ``mean_name_bytes()``), as :class:`~sklearn_sketch.io.KeyNames`.

    Examples
    --------
    >>> from sklearn_sketch.feature_extraction import FeatureCrosser
    >>> rows = FeatureCrosser(max_order=2).fit_transform(
    ...     [{"a": 1, "b": "x"}, {"a": 2, "b": "x"}, {"a": 1}])
    >>> rows.shape[0], rows.X.getnnz(axis=1).tolist(), len(rows[[0, 2]])
    (3, [3, 3, 1], 2)
    """

    def __init__(self, X, names):
        self.X = X
        self.names = names

    @property
    def shape(self):
        return self.X.shape

    def __len__(self):
        return self.X.shape[0]

    def __getitem__(self, rows):
        return NamedRows(self.X[rows], self.names)


#: How to feed categories (strings) to an estimator, in errors that meet them.
CATEGORIES_HINT = ("for attributes with values that are categories, make features of them "
                   "first, for example with sklearn_sketch.feature_extraction.FeatureCrosser "
                   "(max_order=1: one 'name=value' feature each; 2 adds their pairs)")


def one_sparse_rows(keys, labels, names, rng):
    """One example per key (a row holding a single 1.0), in a random order.

    The order is drawn here and the rows gathered in it, so that an estimator
    trained with ``shuffle=False`` reads them in sequence: shuffling 1-sparse
    rows inside the pass cost a cache miss an example (5x slower). A row's
    items often share a label and files are often sorted (by time, by
    stream), hence the shuffle.

    Parameters
    ----------
    keys : ndarray of int64, shape (n,)
        The key of each example.
    labels : ndarray of int64, shape (n,)
        The label of each example, 0 or 1.
    names : object or None
        Names of the keys (``{key: name}`` or a ``lookup`` object), or None.
    rng : numpy.random.Generator
        Draws the order.

    Returns
    -------
    X : scipy.sparse.csr_matrix or NamedRows
        The examples, with their names when given.
    y : ndarray of int8
        Their labels, in the same order (int8: a classifier's label checks
        sort them, and 8-bit integers sort 10x faster than 64-bit ones).
    """
    return next(one_sparse_batches(keys, labels, names, rng, max(1, len(keys))))


def one_sparse_batches(keys, labels, names, rng, batch_rows):
    """:func:`one_sparse_rows` in batches of at most ``batch_rows`` examples.

    The same examples in the same order (the same draw from ``rng``), built a
    batch at a time: a matrix of 1-sparse rows costs 24 bytes an example (its
    value, column and row pointer), 180 MB for the k-mers of one bacterial
    genome, where the shuffled keys and labels alone cost 16. Training on the
    batches in turn is training on the whole, one pass in order.

    Yields
    ------
    X : scipy.sparse.csr_matrix or NamedRows
        The batch's examples, with their names when given.
    y : ndarray of int8
        Their labels.
    """
    keys, labels = shuffled_examples(np.ascontiguousarray(keys, dtype=np.int64),
                                     np.ascontiguousarray(labels, dtype=np.int64),
                                     int(rng.integers(2**63)))
    for start in range(0, max(1, keys.size), batch_rows):
        part = keys[start:start + batch_rows]
        X = sp.csr_matrix((np.ones(part.size), part, np.arange(part.size + 1)),
                          shape=(part.size, RAW_N_FEATURES))
        yield (X if names is None else NamedRows(X, names)), labels[start:start + batch_rows]


def is_raw_input(X):
    """Whether ``X`` is a sequence of samples given as token lists or dicts.

    The first sample that is a dict or a non-empty list or tuple decides, so
    empty documents may come first; samples that are all empty lists are raw
    (empty documents: numeric rows cannot have zero columns).
    """
    if isinstance(X, NamedRows):
        return True
    if not isinstance(X, (list, tuple)) or len(X) == 0:
        return False
    for sample in X:
        if isinstance(sample, dict):
            return True
        if not isinstance(sample, (list, tuple)):
            return False
        if len(sample) > 0:
            return isinstance(sample[0], (str, bytes))
    return True


def name_keys(names):
    """Keys of feature names (str or bytes), as int64 in ``[0, 2**63 - 1)``."""
    keys = hash_names(names).view(np.uint64) % np.uint64(RAW_N_FEATURES)
    return keys.astype(np.int64)


def keys_of_names(flat, prefix=""):
    """Keys of the names of ``flat`` (str or bytes), each distinct name hashed once
    (a token finds its key by a dict lookup), and ``{key: name}`` of the distinct
    names: ``(keys, names)``. With ``prefix`` (str names) a name is ``prefix +
    item``, built once per distinct item.

    Examples
    --------
    >>> keys, names = keys_of_names(["cat", "dog", "cat"], prefix="t=")
    >>> bool(keys[0] == keys[2]), sorted(names.values())
    (True, ['t=cat', 't=dog'])
    """
    distinct = list(dict.fromkeys(flat))
    named = [prefix + item for item in distinct] if prefix else distinct
    distinct_keys = name_keys(named).tolist() if named else []
    key_of = dict(zip(distinct, distinct_keys))
    keys = np.fromiter(map(key_of.__getitem__, flat), dtype=np.int64, count=len(flat))
    return keys, dict(zip(distinct_keys, named))


def hash_raw(X):
    """CSR of hashed features and the distinct names seen.

    Parameters
    ----------
    X : list of (list of str) or list of dict
        Token lists (each token counts 1; repeats add up) or ``{name: value}``.

    Returns
    -------
    X : scipy.sparse.csr_matrix of shape (n_samples, 2**63 - 1)
    names : dict
        ``{key: name}`` for the distinct names of ``X`` (a :class:`NamedRows`'
        own lookup for one).
    """
    if isinstance(X, NamedRows):
        return X.X, X.names
    types = set(map(type, X))
    if isinstance(X[0], dict):
        if not all(issubclass(t, dict) for t in types):
            raise TypeError("raw input mixes dicts with other samples; pass all samples "
                            "as {name: value} dicts or all as token lists")
        flat = list(chain.from_iterable(map(dict.keys, X)))
        try:
            data = np.fromiter(chain.from_iterable(map(dict.values, X)), dtype=np.float64,
                               count=len(flat))
        except (TypeError, ValueError) as error:
            raise TypeError(f"feature values of dict samples must be numbers ({error}); "
                            f"{CATEGORIES_HINT}") from None
    else:
        if any(issubclass(t, (str, bytes, dict)) for t in types):
            raise TypeError("raw input must be a list of token lists: a sample is a single "
                            "string or a dict among token lists")
        flat = list(chain.from_iterable(X))
        data = np.ones(len(flat))
    lengths = np.fromiter(map(len, X), dtype=np.int64, count=len(X))
    try:
        keys, names = keys_of_names(flat)
    except TypeError:
        raise TypeError("feature names must be str or bytes") from None
    indptr = np.concatenate([[0], np.cumsum(lengths)])
    matrix = sp.csr_matrix((data, keys, indptr), shape=(len(X), RAW_N_FEATURES))
    matrix.sum_duplicates()
    return matrix, names
