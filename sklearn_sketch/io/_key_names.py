"""Names of hashed feature keys, as a vectorized table (what a reader hashed)."""
import numpy as np

from .._names import decoded_name
from .._sorted_keys import unique_keys
from ._parsers import first_rows, vw_feature_names


class KeyNames:
    """Names of hashed feature keys: the bytes each key is the hash of.

    The table keeps the names as one byte buffer. A lookup puts the few
    requested keys in a small hash set, finds the first row of each in one
    compiled pass over the table's keys (no sort of a table of millions of
    keys) and decodes only the names found. :class:`VowpalWabbitReader` with
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
        self._keys = np.ascontiguousarray(keys)
        self._offsets = offsets
        self._names = np.ascontiguousarray(names)

    def __len__(self):
        return self.keys.size

    def __repr__(self):
        return f"KeyNames(<{len(self)} names>)"

    @property
    def keys(self):
        """ndarray of int64: the distinct keys, sorted."""
        return unique_keys(self._keys)

    def mean_name_bytes(self, sample=4096):
        """Mean length in bytes of the names (of up to ``sample`` of them, evenly spread)."""
        if not len(self._keys):
            return 0.0
        rows = np.unique(np.linspace(0, len(self._keys) - 1, sample).astype(np.int64))
        return float(np.mean([len(name) for name in self._names_of(rows)]))

    def lookup(self, keys):
        """Names of the requested keys that the table holds.

        Parameters
        ----------
        keys : array-like of int
            Keys to look up; keys not in the table are left out.

        Returns
        -------
        names : dict
            ``{key: name}`` with int keys and the names decoded as UTF-8, else
            as Windows-1252 (:func:`sklearn_sketch._names.decoded_name`).
        """
        found, rows = first_rows(self._keys, keys)
        return {key: decoded_name(name)
                for key, name in zip(found.tolist(), self._names_of(rows))}

    def _names_of(self, rows):
        """The names' bytes of the table rows ``rows``."""
        buffer = memoryview(self._names)
        return [bytes(buffer[start:end]) for start, end in zip(
            self._offsets[rows].tolist(), self._offsets[rows + 1].tolist())]


#: Between the parts of a namespace cross's name, as Vowpal Wabbit's audit writes it.
VW_CROSS_SEPARATOR = b"*"


class _VowpalWabbitNames(KeyNames):
    """The names of a Vowpal Wabbit chunk's keys, rebuilt from its lines when looked up.

    ``keys`` are the chunk's entries (``X.indices``), ``starts`` where each
    entry's feature starts in ``text``, the chunk's lines, and ``crosses`` the
    starts of the parts of each namespace cross (entry ``i`` with
    ``starts[i] < 0`` is the cross ``crosses[-1 - starts[i]]``; see
    ``VowpalWabbitParser.take``). Nothing is gathered while parsing beyond the
    text and one offset per entry (three per cross).
    """

    def __init__(self, keys, starts, text, crosses=None):
        self._keys = keys
        self._starts = starts
        self._text = text
        self._crosses = np.zeros((0, 3), dtype=np.int64) if crosses is None else crosses

    def _names_of(self, rows):
        starts = self._starts[rows]
        crossed = starts < 0
        if not crossed.any():
            return vw_feature_names(self._text, starts)
        parts = self._crosses[-1 - starts[crossed]]
        wanted = unique_keys(np.concatenate([starts[~crossed], parts[parts >= 0]]))
        name_at = dict(zip(wanted.tolist(), vw_feature_names(self._text, wanted)))
        crosses = iter(parts.tolist())
        return [VW_CROSS_SEPARATOR.join(name_at[p] for p in next(crosses) if p >= 0)
                if start < 0 else name_at[start] for start in starts.tolist()]
