"""k-mer counts of DNA and RNA reads as a sparse matrix with one column per k-mer."""
from itertools import compress
from numbers import Integral

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator, TransformerMixin, _fit_context
from sklearn.utils._param_validation import Interval

from ._kmer_fast import count_kmers

_BASES = np.frombuffer(b"ACGT", dtype=np.uint8)
_INT32_MAX = np.iinfo(np.int32).max


def _check_not_single_read(X):
    if isinstance(X, (str, bytes)):
        raise ValueError(
            f"Iterable over reads expected, {type(X).__name__} object received."
        )


def _concatenate_reads(X):
    """Return the reads' bytes back to back and the int64 offsets of the reads.

    A ``str`` read contributes one byte per character: a non-ASCII character
    becomes ``?``, which splits the read like any other non-base. No Python
    code runs per read: joins, ``map(len)`` and, for mixed ``str``/``bytes``
    input, a NumPy scatter of the two joins.
    """
    _check_not_single_read(X)
    reads = X if isinstance(X, list) else list(X)
    types = set(map(type, reads))
    if not all(issubclass(t, (str, bytes)) for t in types):
        index, read = next((i, r) for i, r in enumerate(reads)
                           if not isinstance(r, (str, bytes)))
        raise TypeError(f"each read must be str or bytes; read {index} is {type(read).__name__}")
    has_str = any(issubclass(t, str) for t in types)
    has_bytes = any(issubclass(t, bytes) for t in types)
    lengths = np.fromiter(map(len, reads), dtype=np.int64, count=len(reads))
    offsets = np.zeros(len(reads) + 1, dtype=np.int64)
    np.cumsum(lengths, out=offsets[1:])
    if not has_str:
        return b"".join(reads), offsets
    if not has_bytes:
        return "".join(reads).encode("ascii", "replace"), offsets
    is_str = np.fromiter(map(str.__instancecheck__, reads), dtype=bool, count=len(reads))
    sequence = np.empty(offsets[-1], dtype=np.uint8)
    for mask, blob in ((is_str, "".join(compress(reads, is_str)).encode("ascii", "replace")),
                       (~is_str, b"".join(compress(reads, ~is_str)))):
        sequence[_positions(offsets[:-1][mask], lengths[mask])] = np.frombuffer(blob, np.uint8)
    return sequence.tobytes(), offsets


def _positions(starts, lengths):
    """The indices ``starts[i] + j`` for ``j < lengths[i]``, run after run."""
    run_starts = np.cumsum(lengths) - lengths
    return np.repeat(starts - run_starts, lengths) + np.arange(lengths.sum())


class KmerVectorizer(TransformerMixin, BaseEstimator):
    """Count the k-mers of DNA or RNA reads into a sparse matrix.

    Column ``j`` counts the k-mer whose 2-bit packed code is ``j``: ``A=0``,
    ``C=1``, ``G=2``, ``T=3`` (``U`` is read as ``T``, lower case as upper
    case), first base in the most significant bits. The matrix has ``4**k``
    columns and no vocabulary is learned, so the vectorizer is stateless:
    ``fit`` only validates the parameters and ``transform`` may be called
    without it. Any other character (``N``, IUPAC codes, gaps, spaces...)
    splits a read: no k-mer spans it.

    Parameters
    ----------
    k : int, default=12
        Length of the k-mers, from 1 to 31 (keys fit in 62 bits).
    canonical : bool, default=False
        Count a k-mer and its reverse complement as one feature, keyed by the
        smaller of their codes, so a read and its reverse complement give the
        same row.
    binary : bool, default=False
        Store 1.0 for every k-mer present in a read instead of its count.

    See Also
    --------
    sklearn.feature_extraction.text.HashingVectorizer : The stateless text
        vectorizer this one mirrors.

    Notes
    -----
    There is no ``get_feature_names_out``: naming ``4**k`` columns is not
    practical. :meth:`decode` gives the k-mer of any column index.

    Examples
    --------
    >>> from sklearn_sketch import KmerVectorizer
    >>> vectorizer = KmerVectorizer(k=2)
    >>> X = vectorizer.transform(["ACGTNACG", b"ttt"])
    >>> X.shape
    (2, 16)
    >>> vectorizer.decode(X[0].indices).tolist(), X[0].data.tolist()
    (['AC', 'CG', 'GT'], [2.0, 2.0, 1.0])
    >>> vectorizer.decode(X[1].indices).tolist(), X[1].data.tolist()
    (['TT'], [2.0])
    >>> canonical = KmerVectorizer(k=2, canonical=True).transform(["TTT"])
    >>> KmerVectorizer(k=2).decode(canonical.indices).tolist()
    ['AA']
    """

    _parameter_constraints = {
        "k": [Interval(Integral, 1, 31, closed="both")],
        "canonical": ["boolean"],
        "binary": ["boolean"],
    }

    def __init__(self, k=12, *, canonical=False, binary=False):
        self.k = k
        self.canonical = canonical
        self.binary = binary

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y=None):
        """Validate the parameters; nothing is learned.

        Parameters
        ----------
        X : iterable of str or bytes
            Reads; not read.
        y : None
            Ignored.

        Returns
        -------
        self : KmerVectorizer
            The vectorizer.
        """
        _check_not_single_read(X)
        return self

    def transform(self, X):
        """Count the k-mers of each read.

        Parameters
        ----------
        X : iterable of str or bytes
            Reads; ``str`` and ``bytes`` may be mixed.

        Returns
        -------
        X_kmers : scipy.sparse.csr_matrix of shape (n_reads, 4**k)
            Counts (float64) in canonical format (sorted indices, no
            duplicates). A read shorter than ``k`` gives an empty row.
            ``indices`` and ``indptr`` are int32 when every key and the
            number of stored counts fit (``k <= 15`` and ``nnz < 2**31``), as
            in scipy's own matrices and as scikit-learn's SGD estimators
            require, else int64.
        """
        self._validate_params()
        k = int(self.k)
        sequence, offsets = _concatenate_reads(X)
        # The kernel writes int32 directly when the upper bound on nnz (every
        # k-mer window of every read) fits; a larger bound is counted in int64 and
        # narrowed afterwards if the actual nnz fits.
        bound = np.maximum(np.diff(offsets) - k + 1, 0).sum()
        small_keys = 4**k - 1 <= _INT32_MAX
        index_dtype = np.int32 if small_keys and bound <= _INT32_MAX else np.int64
        indptr, indices, data = count_kmers(
            sequence, offsets, k, bool(self.canonical), bool(self.binary), index_dtype)
        if small_keys and indices.dtype == np.int64 and indices.size <= _INT32_MAX:
            indptr, indices = indptr.astype(np.int32), indices.astype(np.int32)
        # Set the arrays directly: the constructor would check and may copy them.
        X_kmers = sp.csr_matrix((len(offsets) - 1, 4**k), dtype=np.float64)
        X_kmers.indptr, X_kmers.indices, X_kmers.data = indptr, indices, data
        X_kmers.has_canonical_format = True
        return X_kmers

    def decode(self, keys):
        """Return the k-mers of column indices (keys).

        Parameters
        ----------
        keys : array-like of int
            Keys in ``[0, 4**k)``, e.g. the ``indices`` of a transformed row.

        Returns
        -------
        kmers : ndarray of str, same shape as ``keys``
            The k-mer of each key, in upper case with ``T`` (never ``U``).
        """
        self._validate_params()
        k = int(self.k)
        keys = np.asarray(keys)
        if keys.size == 0:
            return np.empty(keys.shape, dtype=f"<U{k}")
        if keys.dtype.kind not in "iu":
            raise TypeError(f"keys must be integers, got dtype {keys.dtype}")
        if keys.min() < 0 or keys.max() >= 4**k:
            raise ValueError(f"keys must be in [0, 4**{k}) for k={k}")
        shifts = np.arange(2 * (k - 1), -1, -2, dtype=np.uint64)
        digits = (keys.astype(np.uint64)[..., None] >> shifts) & np.uint64(3)
        letters = np.ascontiguousarray(_BASES[digits])
        return letters.view(f"S{k}")[..., 0].astype(f"<U{k}")

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.string = True
        tags.input_tags.two_d_array = False
        tags.requires_fit = False
        return tags
