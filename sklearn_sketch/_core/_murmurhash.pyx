"""MurmurHash3 over 64-bit feature keys and over UTF-8 names.

The integer-key hash is the x86_32 hash of the key's 8 little-endian bytes
(two's complement), so ``murmurhash3_32(key, seed)`` equals
``mmh3.hash(key.to_bytes(8, "little", signed=True), seed, signed=False)``.
Names are hashed to 64-bit keys with the first half of x64_128, equal to
``mmh3.hash64(name, seed, signed=True)[0]``.
"""
import numpy as np

cimport numpy as cnp
from libc.stdint cimport int64_t, uint8_t, uint32_t, uint64_t

cnp.import_array()

_INT64_MIN = -(1 << 63)
_INT64_MAX = (1 << 63) - 1


def _check_seed(seed):
    if isinstance(seed, (bool, np.bool_)) or not isinstance(seed, (int, np.integer)):
        raise TypeError(f"seed must be an integer, got {type(seed).__name__}")
    if not 0 <= seed < (1 << 32):
        raise ValueError(f"seed must be in [0, 2**32), got {seed}")
    return <uint32_t>seed


def _as_bytes(name):
    if isinstance(name, str):
        return name.encode("utf-8")
    if isinstance(name, (bytes, bytearray, memoryview)):
        return bytes(name)
    raise TypeError(f"expected str or bytes, got {type(name).__name__}")


def _as_key_array(keys):
    """Return ``keys`` as a contiguous int64 array, refusing non-integer dtypes."""
    arr = np.asarray(keys)
    if arr.dtype.kind not in "iu":
        if arr.size == 0 and arr.dtype.kind == "f":
            return np.zeros(arr.shape, dtype=np.int64)
        raise TypeError(f"keys must be integers, got dtype {arr.dtype}")
    if arr.dtype == np.uint64 and arr.size and arr.max() > _INT64_MAX:
        raise ValueError("keys must fit in int64; got a uint64 key above 2**63 - 1")
    return np.ascontiguousarray(arr, dtype=np.int64)


def murmurhash3_32(key, seed=0):
    """MurmurHash3 x86_32 of an integer key, an array of keys, or a name.

    Parameters
    ----------
    key : int, array-like of int, str or bytes
        An int64 feature key (hashed as its 8 little-endian bytes), an array
        of them, or a name (``str`` is encoded as UTF-8).
    seed : int, default=0
        Seed in ``[0, 2**32)``.

    Returns
    -------
    hash : int or ndarray of uint32
        The unsigned 32-bit hash, or an array of them for array input.

    Examples
    --------
    >>> import mmh3
    >>> from sklearn_sketch._core import murmurhash3_32
    >>> murmurhash3_32(b"kmer", seed=7) == mmh3.hash(b"kmer", 7, signed=False)
    True
    >>> murmurhash3_32(-5) == mmh3.hash((-5).to_bytes(8, "little", signed=True), signed=False)
    True
    """
    cdef uint32_t s = _check_seed(seed)
    cdef const uint8_t[::1] buf
    if isinstance(key, (str, bytes, bytearray, memoryview)):
        data = _as_bytes(key)
        buf = data
        if len(data) == 0:
            return int(murmurhash3_32_bytes(NULL, 0, s))
        return int(murmurhash3_32_bytes(&buf[0], len(data), s))
    if isinstance(key, (int, np.integer)) and not isinstance(key, (bool, np.bool_)):
        if not _INT64_MIN <= key <= _INT64_MAX:
            raise ValueError(f"integer key {key} does not fit in int64")
        return int(murmurhash3_32_key(<int64_t>key, s))
    keys = _as_key_array(key)
    out = np.empty(keys.shape, dtype=np.uint32)
    _hash_keys_into(keys.reshape(-1), out.reshape(-1), s)
    return out


cdef void _hash_keys_into(const int64_t[::1] keys, uint32_t[::1] out, uint32_t seed) noexcept:
    cdef Py_ssize_t i
    with nogil:
        for i in range(keys.shape[0]):
            out[i] = murmurhash3_32_key(keys[i], seed)


def murmurhash3_64(name, seed=0):
    """64-bit feature key of a name: the first half of MurmurHash3 x64_128.

    Parameters
    ----------
    name : str or bytes
        Feature name; ``str`` is encoded as UTF-8.
    seed : int, default=0
        Seed in ``[0, 2**32)``.

    Returns
    -------
    key : int
        Signed 64-bit key.

    Examples
    --------
    >>> import mmh3
    >>> from sklearn_sketch._core import murmurhash3_64
    >>> murmurhash3_64("ACGT") == mmh3.hash64("ACGT", 0, signed=True)[0]
    True
    """
    cdef uint32_t s = _check_seed(seed)
    data = _as_bytes(name)
    cdef const uint8_t[::1] buf = data
    if len(data) == 0:
        return int(murmurhash3_64_bytes(NULL, 0, s))
    return int(murmurhash3_64_bytes(&buf[0], len(data), s))


def hash_names(names, seed=0):
    """Hash an iterable of names to an int64 array of 64-bit keys.

    Parameters
    ----------
    names : iterable of str or bytes
        Feature names; ``str`` is encoded as UTF-8.
    seed : int, default=0
        Seed in ``[0, 2**32)``.

    Returns
    -------
    keys : ndarray of int64
        ``keys[i] == murmurhash3_64(names[i], seed)``.

    Examples
    --------
    >>> from sklearn_sketch._core import hash_names, murmurhash3_64
    >>> keys = hash_names(["a", "b"])
    >>> bool(keys[1] == murmurhash3_64("b"))
    True
    """
    cdef uint32_t s = _check_seed(seed)
    cdef list encoded = [_as_bytes(name) for name in names]
    cdef Py_ssize_t i, n = len(encoded)
    cdef bytes data
    cdef const uint8_t* ptr
    out = np.empty(n, dtype=np.int64)
    cdef int64_t[::1] out_view = out
    for i in range(n):
        data = encoded[i]
        ptr = <const uint8_t*><char*>data
        out_view[i] = murmurhash3_64_bytes(ptr, len(data), s)
    return out


def bucket_and_sign_arrays(keys, seeds, width):
    """Count-Sketch buckets and signs of ``keys`` for every row seed.

    Row ``j`` hashes ``h = murmurhash3_32(key, seeds[j])``; the bucket is
    ``((h >> 1) * width) >> 31`` and the sign is ``+1`` if ``h`` is odd, else ``-1``.

    Parameters
    ----------
    keys : array-like of int
        Feature keys (int64).
    seeds : array-like of uint32
        One seed per sketch row.
    width : int
        Number of buckets per row, in ``[1, 2**31]``.

    Returns
    -------
    buckets : ndarray of int64, shape (len(seeds), len(keys))
    signs : ndarray of int8, shape (len(seeds), len(keys))

    Examples
    --------
    >>> from sklearn_sketch._core import bucket_and_sign_arrays
    >>> b, s = bucket_and_sign_arrays([1, 2, 3], [11, 12], width=8)
    >>> b.shape, bool(((b >= 0) & (b < 8)).all()), sorted(set(s.ravel()) - {-1, 1})
    ((2, 3), True, [])
    """
    cdef const int64_t[::1] k = _as_key_array(keys).reshape(-1)
    seed_arr = np.asarray(seeds)
    if seed_arr.dtype.kind not in "iu" or seed_arr.ndim != 1:
        raise TypeError("seeds must be a 1-D integer array")
    if seed_arr.size and (seed_arr.min() < 0 or seed_arr.max() >= (1 << 32)):
        raise ValueError("seeds must be in [0, 2**32)")
    if not 1 <= width <= (1 << 31):
        raise ValueError(f"width must be in [1, 2**31], got {width}")
    cdef const uint32_t[::1] s = np.ascontiguousarray(seed_arr, dtype=np.uint32)
    buckets = np.empty((s.shape[0], k.shape[0]), dtype=np.int64)
    signs = np.empty((s.shape[0], k.shape[0]), dtype=np.int8)
    cdef int64_t[:, ::1] b_view = buckets
    cdef cnp.int8_t[:, ::1] s_view = signs
    cdef Py_ssize_t i, j, bucket
    cdef double sign
    cdef uint64_t w = width
    with nogil:
        for j in range(s.shape[0]):
            for i in range(k.shape[0]):
                bucket_and_sign(k[i], s[j], w, &bucket, &sign)
                b_view[j, i] = bucket
                s_view[j, i] = <cnp.int8_t>sign
    return buckets, signs
