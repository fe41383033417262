# cython: boundscheck=False, wraparound=False
"""Keys of feature crosses, derived from their parts' 64-bit keys without strings.

The key of the cross of parts with keys ``k1, ..., kr`` (r = 2 or 3, in the
order the cross lists its fields) is ``cross(...cross(k1, k2)..., kr)`` with

    cross(a, b) = fmix64(a * 0x9E3779B97F4A7C15 + b + 1) mod (2**63 - 1)

in 64-bit unsigned arithmetic (``fmix64`` is MurmurHash3's finaliser), so a
cross key lies in the same ``[0, 2**63 - 1)`` key space as the keys of names.
"""
from libc.stdint cimport int64_t

import numpy as np

from .._core._murmurhash cimport cross_key


def cross_keys(const int64_t[:, ::1] parts, const int64_t[:, ::1] combos):
    """Keys of every cross of every row, in one compiled pass.

    Parameters
    ----------
    parts : ndarray of int64, shape (n_rows, n_fields)
        Key of each row's value of each field; -1 where the row has none.
    combos : ndarray of int64, shape (n_crosses, 3)
        Field indices of each cross, in order; a pair ends with -1.

    Returns
    -------
    keys : ndarray of int64, shape (n_rows, n_crosses)
        Key of each cross, -1 where a part is missing.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_sketch.feature_extraction._crosses import cross_keys
    >>> parts = np.array([[5, 7, 9], [5, -1, 9]])
    >>> keys = cross_keys(parts, np.array([[0, 2, -1], [0, 1, 2]]))
    >>> keys[0, 0] == keys[1, 0], keys[1, 1]
    (True, -1)
    """
    cdef Py_ssize_t n = parts.shape[0], m = parts.shape[1], c = combos.shape[0]
    cdef Py_ssize_t i, j, r, field
    cdef int64_t key, part
    if combos.shape[1] != 3:
        raise ValueError(f"combos must have 3 columns, got {combos.shape[1]}")
    for j in range(c):
        for r in range(3):
            field = combos[j, r]
            if field >= m or field < (0 if r < 2 else -1):
                raise ValueError(f"cross {j} names field {field} of {m}")
    out = np.empty((n, c), dtype=np.int64)
    cdef int64_t[:, ::1] keys = out
    with nogil:
        for i in range(n):
            for j in range(c):
                key = parts[i, combos[j, 0]]
                for r in range(1, 3):
                    field = combos[j, r]
                    if field < 0 or key < 0:
                        break
                    part = parts[i, field]
                    key = cross_key(key, part) if part >= 0 else -1
                keys[i, j] = key
    return out
