"""Looking keys up in a sorted array of distinct keys, without a dict."""

import numpy as np


def find_sorted(sorted_keys, keys):
    """Where each of ``keys`` sits in ``sorted_keys``, and whether it is there.

    Parameters
    ----------
    sorted_keys : ndarray of shape (n,)
        Distinct keys in increasing order (may be empty).
    keys : ndarray of shape (m,)
        Keys to look up.

    Returns
    -------
    rows : ndarray of intp, shape (m,)
        The row of each key in ``sorted_keys`` where ``found``; a valid row
        (clipped into range) elsewhere, so ``sorted_keys[rows]`` never fails on
        a non-empty array.
    found : ndarray of bool, shape (m,)

    Examples
    --------
    >>> import numpy as np
    >>> rows, found = find_sorted(np.array([2, 5, 9]), np.array([5, 7, 9, 11]))
    >>> rows[found].tolist(), found.tolist()
    ([1, 2], [True, False, True, False])
    """
    keys = np.asarray(keys)
    if not sorted_keys.size:
        return np.zeros(keys.size, dtype=np.intp), np.zeros(keys.size, dtype=bool)
    rows = np.minimum(np.searchsorted(sorted_keys, keys), sorted_keys.size - 1)
    return rows, sorted_keys[rows] == keys
