"""Names of hashed feature keys, as a vectorized table (what a reader hashed)."""
import numpy as np


class KeyNames:
    """Names of hashed feature keys: the bytes each key is the hash of.

    The table keeps the names as one byte buffer. A lookup sorts the few
    requested keys, finds the table's keys among them (a vectorized binary
    search each, cheaper than sorting a table of millions of keys) and
    decodes only the names found. :class:`VowpalWabbitReader` with
    ``keep_names=True`` gives one per chunk.

    Parameters
    ----------
    keys : array-like of int, shape (n_names,)
        The keys, in any order. A key given more than once keeps its first name.
    offsets : array-like of int, shape (n_names + 1,)
        Where the names start in ``names``: name ``i`` is
        ``names[offsets[i]:offsets[i + 1]]``.
    names : bytes-like or array-like of uint8
        The names' bytes, one after the other.

    See Also
    --------
    VowpalWabbitReader : Its chunks carry the names of their keys.

    Examples
    --------
    >>> import mmh3
    >>> from sklearn_sketch.io import KeyNames
    >>> names = [b"w^good", b"w^bad", b"caf\\xc3\\xa9"]
    >>> keys = [mmh3.hash64(name, 0, signed=False)[0] % (2**63 - 1) for name in names]
    >>> table = KeyNames(keys, [0, 6, 11, 16], b"".join(names))
    >>> len(table)
    3
    >>> found = table.lookup([keys[2], 12345, keys[0]])
    >>> found == {keys[2]: "café", keys[0]: "w^good"}
    True
    """

    def __init__(self, keys, offsets, names):
        keys = np.asarray(keys, dtype=np.int64)
        offsets = np.asarray(offsets, dtype=np.int64)
        names = np.frombuffer(names, dtype=np.uint8) if isinstance(
            names, (bytes, bytearray, memoryview)) else np.asarray(names, dtype=np.uint8)
        if keys.ndim != 1 or offsets.shape != (keys.size + 1,) or names.ndim != 1:
            raise ValueError(f"need 1-d keys, offsets of one more item and 1-d names; got "
                             f"shapes {keys.shape}, {offsets.shape} and {names.shape}")
        if offsets[0] < 0 or (np.diff(offsets) < 0).any() or offsets[-1] > names.size:
            raise ValueError("offsets must increase within the names' bytes")
        self._keys = keys
        self._offsets = offsets
        self._names = np.ascontiguousarray(names)

    def __len__(self):
        return self.keys.size

    def __repr__(self):
        return f"KeyNames(<{len(self)} names>)"

    @property
    def keys(self):
        """ndarray of int64: the distinct keys, sorted."""
        return np.unique(self._keys)

    def lookup(self, keys):
        """Names of the requested keys that the table holds.

        Parameters
        ----------
        keys : array-like of int
            Keys to look up; keys not in the table are left out.

        Returns
        -------
        names : dict
            ``{key: name}`` with int keys and the names decoded as UTF-8
            (undecodable bytes become U+FFFD).
        """
        requested = np.unique(np.asarray(keys, dtype=np.int64))
        if self._keys.size == 0 or requested.size == 0:
            return {}
        position = np.minimum(np.searchsorted(requested, self._keys), requested.size - 1)
        rows = np.flatnonzero(requested[position] == self._keys)
        # The first row of a key given more than once.
        found, first = np.unique(self._keys[rows], return_index=True)
        rows = rows[first]
        buffer = memoryview(self._names)
        return {key: str(buffer[start:end], "utf-8", "replace") for key, start, end in zip(
            found.tolist(), self._offsets[rows].tolist(), self._offsets[rows + 1].tolist())}
