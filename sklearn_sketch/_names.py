"""The names of the heap keys, packed in three arrays and bounded in bytes."""
import math
from collections.abc import Mapping

import numpy as np

from ._sorted_keys import find_sorted

# Bytes a named key costs besides its name's UTF-8 bytes: its int64 key and
# the uint32 end of its name in the pool.
NAME_OVERHEAD = 12
# Most bytes the names of one table may take (the ends are uint32).
MAX_POOL_BYTES = 2**32 - 1


def reserved_name_bytes(mean, shortest=16):
    """Bytes a budget reserves for the name of one heap entry, from the names' mean length.

    A quarter more than the mean (at least ``shortest`` bytes: the selected
    features may be longer than the typical name) plus :data:`NAME_OVERHEAD`;
    0 without names.
    """
    return NAME_OVERHEAD + max(shortest, math.ceil(1.25 * mean)) if mean else 0


def decoded_name(raw):
    """A feature's name from its bytes: UTF-8, else Windows-1252 (a Latin-1 VW file's
    ``caf\\xe9`` reads ``café``, not ``caf\\ufffd``), a byte neither reads as U+FFFD.

    Examples
    --------
    >>> decoded_name("café".encode()), decoded_name(b"caf\\xe9")
    ('café', 'café')
    """
    try:
        return str(raw, "utf-8")
    except UnicodeDecodeError:
        return str(raw, "cp1252", "replace")


def _as_bytes(name):
    return bytes(name) if isinstance(name, (bytes, bytearray)) else str(name).encode(
        "utf-8", "surrogatepass")


def lookup_names(names, keys):
    """``{key: name}`` for the ``keys`` that ``names`` (a ``{key: name}`` mapping, or an
    object whose ``lookup(keys)`` returns one, as a reader's ``KeyNames``) knows."""
    if hasattr(names, "lookup"):
        return names.lookup(keys)
    return {key: names[key] for key in np.asarray(keys).tolist() if key in names}


def mean_name_bytes(names, sample=4096):
    """Mean UTF-8 length of the names of a ``{key: name}`` mapping (of a sample of it).

    ``names`` may also be an object with ``mean_name_bytes()`` (a reader's
    :class:`~sklearn_sketch.io.KeyNames`). 0 when there are no names.
    """
    if hasattr(names, "mean_name_bytes"):
        return float(names.mean_name_bytes())
    if not names:
        return 0.0
    values = list(names.values())
    step = max(1, len(values) // sample)
    return float(np.mean([len(_as_bytes(v)) for v in values[::step]]))


def gather_segments(pool, starts, lengths):
    """The segments ``pool[starts[i]:starts[i] + lengths[i]]``, one after the other."""
    total = int(lengths.sum())
    if total == 0:
        return np.zeros(0, dtype=np.uint8)
    out_starts = np.cumsum(lengths) - lengths
    return pool[np.arange(total) + np.repeat(starts - out_starts, lengths)]


class PackedNames(Mapping):
    """``{key: name}`` for the keys in the heaps, in three arrays and nothing else.

    Sorted int64 keys, the uint32 end of each name, and the names' UTF-8 bytes
    one after the other: a name costs its bytes plus :data:`NAME_OVERHEAD`
    (a dict of str costs about 130 bytes an entry), and :attr:`nbytes` is
    exact. Immutable: :meth:`updated` returns a new table, so a failed
    training call keeps the old one. Names are read back as str (bytes names
    decoded as UTF-8, undecodable bytes as U+FFFD).

    Parameters
    ----------
    names : mapping, default=None
        ``{key: name}`` with int keys and str or bytes names.

    Examples
    --------
    >>> from sklearn_sketch._names import PackedNames
    >>> table = PackedNames({7: "w^good", 3: "café"})
    >>> dict(table), table.nbytes
    ({3: 'café', 7: 'w^good'}, 35)
    >>> new, dropped = table.updated([7, 9], {9: "bad"})
    >>> dict(new), dropped
    ({7: 'w^good', 9: 'bad'}, 0)
    """

    __slots__ = ("_keys", "_ends", "_pool")

    def __init__(self, names=None):
        names = {} if names is None else names
        keys = np.fromiter(names.keys(), dtype=np.int64, count=len(names))
        encoded = [_as_bytes(v) for v in names.values()]
        lengths = np.fromiter(map(len, encoded), dtype=np.int64, count=len(encoded))
        pool = np.frombuffer(b"".join(encoded), dtype=np.uint8)
        self._set(keys, lengths, pool)

    def _set(self, keys, lengths, pool):
        """Store ``keys`` (distinct, any order) with their names laid out in ``pool``."""
        if int(np.sum(lengths)) > MAX_POOL_BYTES:
            raise ValueError(f"the names take {int(np.sum(lengths))} bytes, more than the "
                             f"{MAX_POOL_BYTES} one table holds")
        order = np.argsort(keys, kind="stable")
        starts = np.cumsum(lengths) - lengths
        self._keys = np.ascontiguousarray(keys[order])
        self._pool = gather_segments(pool, starts[order], lengths[order])
        self._ends = np.cumsum(lengths[order]).astype(np.uint32)

    @classmethod
    def _from_arrays(cls, keys, lengths, pool):
        table = cls.__new__(cls)
        table._set(keys, lengths, pool)
        return table

    @property
    def nbytes(self):
        """Bytes of the three arrays."""
        return int(self._keys.nbytes + self._ends.nbytes + self._pool.nbytes)

    @property
    def keys_array(self):
        """ndarray of int64: the named keys, sorted."""
        return self._keys

    def _name(self, row):
        start = int(self._ends[row - 1]) if row else 0
        return decoded_name(self._pool[start:int(self._ends[row])].tobytes())

    def names_of(self, keys):
        """ndarray of object: the name of each of ``keys``, None where it has none."""
        keys = np.asarray(keys, dtype=np.int64)
        rows, found = find_sorted(self._keys, keys)
        out = np.full(keys.size, None, dtype=object)
        for i, row in zip(np.flatnonzero(found).tolist(), rows[found].tolist()):
            out[i] = self._name(row)
        return out

    def __getitem__(self, key):
        row = int(np.searchsorted(self._keys, key))
        if row == self._keys.size or self._keys[row] != key:
            raise KeyError(key)
        return self._name(row)

    def __len__(self):
        return int(self._keys.size)

    def __iter__(self):
        return iter(self._keys.tolist())

    def __repr__(self):
        return f"PackedNames(<{len(self)} names, {self.nbytes} bytes>)"

    def updated(self, keys, new_names, max_bytes=None):
        """A table of the names of ``keys``: the ones kept here, then new ones.

        A key keeps its name while it stays; names of keys that left are
        dropped. The keys not named yet are named by ``new_names`` (a
        ``{key: name}`` mapping, or an object whose ``lookup(keys)`` returns
        one). With ``max_bytes``, new names are added shortest first while
        the table fits in ``max_bytes``.

        Parameters
        ----------
        keys : array-like of int
            The distinct keys to keep names for (the heaps' keys).
        new_names : mapping or object with ``lookup``, or None
            Names of keys not named yet.
        max_bytes : int, default=None
            Bound on :attr:`nbytes` of the new table.

        Returns
        -------
        table : PackedNames
        dropped : int
            New names left out to stay within ``max_bytes``.
        """
        keys = np.asarray(keys, dtype=np.int64)
        kept = np.isin(self._keys, keys, assume_unique=True)
        unnamed = keys[~np.isin(keys, self._keys, assume_unique=True)]
        new = {}
        if new_names is not None and unnamed.size:
            new = lookup_names(new_names, unnamed)
        if not new and kept.all():
            return self, 0  # nothing left or entered: the table is immutable, share it
        lengths = np.diff(self._ends.astype(np.int64), prepend=0)
        kept_lengths = lengths[kept]
        kept_pool = gather_segments(self._pool,
                                    (self._ends.astype(np.int64) - lengths)[kept], kept_lengths)
        kept_keys = self._keys[kept]
        new_keys = np.fromiter(new.keys(), dtype=np.int64, count=len(new))
        encoded = [_as_bytes(v) for v in new.values()]
        new_lengths = np.fromiter(map(len, encoded), dtype=np.int64, count=len(encoded))
        dropped = 0
        if max_bytes is not None and new_keys.size:
            room = max_bytes - (NAME_OVERHEAD * kept_keys.size + int(kept_lengths.sum()))
            by_length = np.argsort(new_lengths, kind="stable")
            cost = np.cumsum(new_lengths[by_length] + NAME_OVERHEAD)
            fits = np.sort(by_length[:int(np.searchsorted(cost, room, side="right"))])
            dropped = new_keys.size - fits.size
            new_keys, new_lengths = new_keys[fits], new_lengths[fits]
            encoded = [encoded[i] for i in fits.tolist()]
        pool = np.concatenate([kept_pool, np.frombuffer(b"".join(encoded), dtype=np.uint8)])
        table = PackedNames._from_arrays(np.concatenate([kept_keys, new_keys]),
                                         np.concatenate([kept_lengths, new_lengths]), pool)
        return table, int(dropped)
