"""Indexed min-heap keeping the ``capacity`` heaviest (key, weight) pairs."""
import numbers

import numpy as np

from libc.math cimport fabs, isfinite
from libc.stdint cimport int64_t, uint32_t, uint64_t
from libc.string cimport memset

from .._sorted_keys import unique_keys
from ._count_sketch import _check_scaling
from ._murmurhash cimport _fmix64

cdef double _MIN_SCALE = 1e-9
# Heaps of at least this many entries keep a presence filter of 8 bits an entry.
FILTER_MIN_CAPACITY = 64
cdef Py_ssize_t _FILTER_MIN_CAPACITY = FILTER_MIN_CAPACITY
# Multiply-shift range reduction of 32 bits reaches at most 2**32 filter bits.
cdef uint64_t _MAX_FILTER_BITS = <uint64_t>1 << 32
_MAX_CAPACITY = 2**31 - 1


cdef inline int _ready(TopKHeap heap) except -1:
    """Raise unless ``heap`` went through ``__init__`` (``__new__`` alone leaves no arrays)."""
    if heap._map == NULL:
        raise RuntimeError("this TopKHeap is not initialised (made by __new__ without "
                           "__init__): create it with TopKHeap(capacity)")
    return 0


def _stored(double value, double scale, what):
    """``value / scale`` (what the heap stores); ``ValueError`` if it overflows."""
    stored = value / scale
    if not isfinite(stored):
        raise ValueError(f"{what} {value:.3g} overflows the heap's scale factor {scale:.3g} "
                         "(its stored value would be infinite)")
    return stored


def _check_key(key):
    if isinstance(key, (bool, np.bool_)) or not isinstance(key, numbers.Integral):
        raise TypeError(f"key must be an integer, got {type(key).__name__}")
    if not -(1 << 63) <= key < (1 << 63):
        raise ValueError(f"key {key} does not fit in int64")
    return int(key)


def _check_weight(weight):
    if isinstance(weight, (bool, np.bool_)) or not isinstance(weight, numbers.Real):
        raise TypeError(f"weight must be a real number, got {type(weight).__name__}")
    if not np.isfinite(weight):
        raise ValueError(f"weight must be finite, got {weight}")
    return float(weight)


cdef class TopKHeap:
    """The ``capacity`` entries of largest ``|weight|``, with O(1) lookup by key.

    An indexed min-heap ordered by ``(|weight|, key)`` (``(weight, key)`` with
    ``order="value"``: the largest weights, most positive first; the key breaks ties, so the
    content after any sequence of operations is well defined) plus an
    open-addressing map from key to heap position. Offering a new key to a full
    heap replaces the minimum only when the new entry orders above it.
    ``scale`` multiplies every weight in O(1) through a global factor; the order
    is that of the weights before scaling, so two weights that rounding makes
    equal after an inexact ``scale`` keep their earlier order.

    An entry costs at most 24 bytes when the heap is full: its int64 key and
    float64 weight (16 bytes), its share of the key map, ``ceil(10 *
    capacity / 7)`` 4-byte slots (load 0.7) that hold a heap position and a
    tag of the key's hash (the key itself is read from the heap), and from 64
    entries on one byte of a presence filter: a bit set for each key inserted
    since the filter was last rebuilt (it is rebuilt from the heap after
    ``2 * capacity`` insertions), so that most keys not in the heap, the common
    case of a model's lookups, are known absent without probing the map. An
    auxiliary value per entry (``aux=True``) adds 8 bytes.

    Parameters
    ----------
    capacity : int
        Largest number of entries kept, from 1 to ``2**31 - 1``.
    aux : bool, default=False
        Keep an auxiliary float64 value per entry that moves with it
        (:meth:`get_aux`, :meth:`set_aux`, :meth:`scale_aux`).
    order : {"magnitude", "value"}, default="magnitude"
        Keep the entries of largest ``|weight|``, or of largest weight (a
        model that explains one class keeps its features for that class
        only); with "value", ``scale`` takes positive factors only, which keep
        the order.

    Attributes
    ----------
    capacity : int
        Largest number of entries kept.
    by_value : bool
        Whether the heap orders by weight (``order="value"``) rather than by
        ``|weight|``.
    has_aux : bool
        Whether the heap keeps auxiliary values.
    n_slots : int
        Slots of the key map.
    memory_bytes : int
        Bytes of every array the heap holds (keys, weights, key map, presence
        filter, auxiliary values): ``16 * capacity + 4 * n_slots +
        filter_bits / 8``, plus ``8 * capacity`` with ``aux``.
    filter_bits : int
        Bits of the presence filter: ``8 * capacity`` rounded up to a multiple
        of 64 (at most ``2**32``), 0 below 64 entries.

    Examples
    --------
    >>> from sklearn_sketch import TopKHeap
    >>> heap = TopKHeap(2)
    >>> heap.push_or_update(10, 0.5) is None
    True
    >>> heap.push_or_update(11, -2.0) is None
    True
    >>> heap.push_or_update(12, 1.0)   # full: evicts the smallest |weight|
    (10, 0.5)
    >>> heap.keys().tolist(), heap.weights().tolist()
    ([11, 12], [-2.0, 1.0])
    >>> heap.get(11), 10 in heap
    (-2.0, False)
    >>> TopKHeap(1000).memory_bytes / 1000
    22.716
    """

    def __cinit__(self):
        self._scale = 1.0
        self._aux_scale = 1.0

    def __init__(self, capacity, *, aux=False, order="magnitude"):
        if isinstance(capacity, (bool, np.bool_)) or not isinstance(capacity, numbers.Integral):
            raise TypeError(f"capacity must be an integer, got {type(capacity).__name__}")
        if not 1 <= capacity <= _MAX_CAPACITY:
            raise ValueError(f"capacity must be from 1 to 2**31 - 1, got {capacity}")
        if order not in ("magnitude", "value"):
            raise ValueError(f"order must be 'magnitude' or 'value', got {order!r}")
        self.by_value = order == "value"
        self._allocate(int(capacity), bool(aux))

    cdef _allocate(self, Py_ssize_t capacity, bint aux):
        cdef Py_ssize_t n_slots = (10 * capacity + 6) // 7
        keys = np.zeros(capacity, dtype=np.int64)
        weights = np.zeros(capacity, dtype=np.float64)
        slots = np.zeros(n_slots, dtype=np.uint32)
        aux_values = np.zeros(capacity, dtype=np.float64) if aux else None
        cdef uint64_t filter_bits = 0
        if capacity >= _FILTER_MIN_CAPACITY:
            filter_bits = min(<uint64_t>(8 * capacity + 63) // 64 * 64, _MAX_FILTER_BITS)
        presence = np.zeros(filter_bits // 64, dtype=np.uint64)
        self._arrays = (keys, weights, slots, aux_values, presence if filter_bits else None)
        cdef uint64_t[::1] f
        self._filter = NULL
        if filter_bits:
            f = presence
            self._filter = &f[0]
        self._filter_bits = filter_bits
        self._filter_inserts = 0
        cdef int64_t[::1] k = keys
        cdef double[::1] w = weights, a
        cdef uint32_t[::1] m = slots
        self._keys = &k[0]
        self._weights = &w[0]
        self._aux = NULL
        if aux:
            a = aux_values
            self._aux = &a[0]
        self._aux_scale = 1.0
        self._map = &m[0]
        self._n_slots = n_slots
        self._pos_bits = int(capacity).bit_length()
        self._pos_mask = <uint32_t>((1 << self._pos_bits) - 1)
        self._tag_mask = <uint32_t>((1 << (32 - self._pos_bits)) - 1)
        self.capacity = capacity
        self._size = 0
        self._scale = 1.0

    # --------------------------------------------------------------- key map
    cdef inline Py_ssize_t _home(self, uint64_t h) noexcept nogil:
        # Multiply-shift range reduction of the hash's high half to [0, n_slots).
        return <Py_ssize_t>(((h >> 32) * <uint64_t>self._n_slots) >> 32)

    cdef inline uint32_t _tag(self, uint64_t h) noexcept nogil:
        return (<uint32_t>h & self._tag_mask) << self._pos_bits

    cdef inline uint64_t _filter_bit(self, uint64_t h) noexcept nogil:
        # Remixed so that the bit is independent of the map's home slot.
        return (((h * 0x9E3779B97F4A7C15ULL) >> 32) * self._filter_bits) >> 32

    cdef bint _maybe_present(self, uint64_t h) noexcept nogil:
        """False proves the key of hash ``h`` absent; True means probe the map."""
        cdef uint64_t bit
        if self._filter == NULL:
            return True
        bit = self._filter_bit(h)
        return (self._filter[bit >> 6] >> (bit & 63)) & 1

    cdef void _filter_add(self, uint64_t h) noexcept nogil:
        cdef uint64_t bit
        if self._filter == NULL:
            return
        bit = self._filter_bit(h)
        self._filter[bit >> 6] |= (<uint64_t>1) << (bit & 63)
        self._filter_inserts += 1
        # Removed keys leave their bits set: rebuild before they pile up.
        if self._filter_inserts > 2 * self.capacity:
            self._filter_rebuild()

    cdef void _filter_rebuild(self) noexcept nogil:
        cdef Py_ssize_t i
        cdef uint64_t bit
        if self._filter == NULL:
            return
        memset(self._filter, 0, self._filter_bits // 8)
        for i in range(self._size):
            bit = self._filter_bit(_fmix64(<uint64_t>self._keys[i]))
            self._filter[bit >> 6] |= (<uint64_t>1) << (bit & 63)
        self._filter_inserts = self._size

    cdef Py_ssize_t _find(self, int64_t key) noexcept nogil:
        """Map slot holding ``key``, or the empty slot where it would go."""
        return self._find_hashed(key, _fmix64(<uint64_t>key))

    cdef Py_ssize_t _find_hashed(self, int64_t key, uint64_t h) noexcept nogil:
        """``_find`` of a key whose ``_fmix64`` hash is ``h``."""
        cdef uint32_t tag = self._tag(h), v
        cdef Py_ssize_t slot = self._home(h)
        while True:
            v = self._map[slot]
            if v == 0:
                return slot
            # The tag spares reading the key of most other entries of the run.
            if (v & ~self._pos_mask) == tag and self._keys[(v & self._pos_mask) - 1] == key:
                return slot
            slot += 1
            if slot == self._n_slots:
                slot = 0

    cdef Py_ssize_t _slot_of(self, int64_t key, Py_ssize_t pos) noexcept nogil:
        """Map slot of the entry ``key`` at heap position ``pos`` (it must be there)."""
        cdef uint64_t h = _fmix64(<uint64_t>key)
        cdef uint32_t target = self._tag(h) | <uint32_t>(pos + 1)
        cdef Py_ssize_t slot = self._home(h)
        while self._map[slot] != target:
            slot += 1
            if slot == self._n_slots:
                slot = 0
        return slot

    cdef inline void _set_pos(self, Py_ssize_t slot, Py_ssize_t pos) noexcept nogil:
        self._map[slot] = (self._map[slot] & ~self._pos_mask) | <uint32_t>(pos + 1)

    cdef inline Py_ssize_t _pos_at(self, Py_ssize_t slot) noexcept nogil:
        """Heap position in ``slot``, -1 when it is empty."""
        return <Py_ssize_t>(self._map[slot] & self._pos_mask) - 1

    cdef void _map_delete(self, Py_ssize_t slot) noexcept nogil:
        """Empty ``slot`` and shift later entries of its probe run back."""
        cdef Py_ssize_t n = self._n_slots, hole = slot, nxt = slot + 1, home
        cdef uint32_t v
        if nxt == n:
            nxt = 0
        while self._map[nxt] != 0:
            v = self._map[nxt]
            home = self._home(_fmix64(<uint64_t>self._keys[(v & self._pos_mask) - 1]))
            # Move the entry back when its home is not cyclically in (hole, nxt].
            if (nxt - home + n) % n >= (nxt - hole + n) % n:
                self._map[hole] = v
                hole = nxt
            nxt += 1
            if nxt == n:
                nxt = 0
        self._map[hole] = 0

    # ------------------------------------------------------------------ heap
    cdef inline double _rank(self, double stored) noexcept nogil:
        """What the heap orders by: the stored weight, or its magnitude."""
        return stored if self.by_value else fabs(stored)

    cdef inline bint _less(self, Py_ssize_t a, Py_ssize_t b) noexcept nogil:
        cdef double wa = self._rank(self._weights[a]), wb = self._rank(self._weights[b])
        return wa < wb or (wa == wb and self._keys[a] < self._keys[b])

    cdef void _move(self, Py_ssize_t src, Py_ssize_t dst) noexcept nogil:
        """Copy the entry at ``src`` to ``dst`` and point its map slot there."""
        cdef Py_ssize_t slot = self._slot_of(self._keys[src], src)
        self._keys[dst] = self._keys[src]
        self._weights[dst] = self._weights[src]
        if self._aux != NULL:
            self._aux[dst] = self._aux[src]
        self._set_pos(slot, dst)

    cdef Py_ssize_t _sift_up(self, Py_ssize_t pos, Py_ssize_t slot) noexcept nogil:
        """Move the entry at ``pos`` (map slot ``slot``) up; return where it lands."""
        cdef int64_t key = self._keys[pos]
        cdef double weight = self._weights[pos], w = self._rank(weight), wp, aux = 0.0
        cdef Py_ssize_t parent
        if self._aux != NULL:
            aux = self._aux[pos]
        while pos > 0:
            parent = (pos - 1) >> 1
            wp = self._rank(self._weights[parent])
            if not (w < wp or (w == wp and key < self._keys[parent])):
                break
            self._move(parent, pos)
            pos = parent
        self._keys[pos] = key
        self._weights[pos] = weight
        if self._aux != NULL:
            self._aux[pos] = aux
        self._set_pos(slot, pos)
        return pos

    cdef void _sift_down(self, Py_ssize_t pos, Py_ssize_t slot) noexcept nogil:
        """Move the entry at ``pos`` (map slot ``slot``) down."""
        cdef int64_t key = self._keys[pos]
        cdef double weight = self._weights[pos], w = self._rank(weight), wc, aux = 0.0
        cdef Py_ssize_t child
        if self._aux != NULL:
            aux = self._aux[pos]
        while True:
            child = 2 * pos + 1
            if child >= self._size:
                break
            if child + 1 < self._size and self._less(child + 1, child):
                child += 1
            wc = self._rank(self._weights[child])
            if not (wc < w or (wc == w and self._keys[child] < key)):
                break
            self._move(child, pos)
            pos = child
        self._keys[pos] = key
        self._weights[pos] = weight
        if self._aux != NULL:
            self._aux[pos] = aux
        self._set_pos(slot, pos)

    cdef void _remove_at(self, Py_ssize_t pos) noexcept nogil:
        cdef Py_ssize_t last = self._size - 1, slot
        self._map_delete(self._slot_of(self._keys[pos], pos))
        if pos != last:
            # Found after the deletion, which may have shifted it.
            slot = self._slot_of(self._keys[last], last)
            self._move(last, pos)
        self._size -= 1
        if pos < self._size and self._sift_up(pos, slot) == pos:
            self._sift_down(pos, slot)

    cdef void _heapify(self) noexcept nogil:
        cdef Py_ssize_t pos
        for pos in range(self._size // 2 - 1, -1, -1):
            self._sift_down(pos, self._slot_of(self._keys[pos], pos))

    # -------------------------------------------------------------- cdef API
    cdef bint accepts(self, int64_t key, double weight) noexcept nogil:
        """Whether ``offer(key, weight)`` would keep ``key`` (``key`` not in the heap)."""
        cdef double w, m
        if self._size < self.capacity:
            return True
        # Compare stored values, the order the heap keeps (see the class docstring).
        w = self._rank(weight / self._scale)
        m = self._rank(self._weights[0])
        return w > m or (w == m and key > self._keys[0])

    cdef HeapOutcome offer(self, int64_t key, double weight,
                           int64_t* evicted_key, double* evicted_weight) noexcept nogil:
        """Insert or update ``key``; on HEAP_REPLACED the evicted entry is written out."""
        cdef uint64_t h = _fmix64(<uint64_t>key)
        cdef Py_ssize_t slot, pos
        cdef double stored = weight / self._scale
        if (self._size == self.capacity and not self._maybe_present(h)
                and not self.accepts(key, weight)):
            return HEAP_REJECTED  # absent and not good enough: no probe needed
        slot = self._find_hashed(key, h)
        pos = self._pos_at(slot)
        if pos >= 0:
            self._weights[pos] = stored
            if self._sift_up(pos, slot) == pos:
                self._sift_down(pos, slot)
            return HEAP_UPDATED
        if self._size < self.capacity:
            pos = self._size
            self._size += 1
            self._keys[pos] = key
            self._weights[pos] = stored
            if self._aux != NULL:
                self._aux[pos] = 0.0
            self._map[slot] = self._tag(h) | <uint32_t>(pos + 1)
            self._filter_add(h)
            self._sift_up(pos, slot)
            return HEAP_INSERTED
        if not self.accepts(key, weight):
            return HEAP_REJECTED
        evicted_key[0] = self._keys[0]
        evicted_weight[0] = self._weights[0] * self._scale
        self._map_delete(self._slot_of(self._keys[0], 0))
        slot = self._find_hashed(key, h)  # the deletion may have shifted the probe run
        self._map[slot] = self._tag(h) | 1
        self._keys[0] = key
        self._filter_add(h)  # after the key is in place: a rebuild reads the keys
        self._weights[0] = stored
        if self._aux != NULL:
            self._aux[0] = 0.0
        self._sift_down(0, slot)
        return HEAP_REPLACED

    cdef bint lookup(self, int64_t key, double* weight) noexcept nogil:
        cdef uint64_t h = _fmix64(<uint64_t>key)
        cdef Py_ssize_t pos
        if not self._maybe_present(h):
            return False
        pos = self._pos_at(self._find_hashed(key, h))
        if pos < 0:
            return False
        weight[0] = self._weights[pos] * self._scale
        return True

    cdef bint discard(self, int64_t key, double* weight) noexcept nogil:
        cdef Py_ssize_t pos = self._pos_at(self._find(key))
        if pos < 0:
            return False
        weight[0] = self._weights[pos] * self._scale
        self._remove_at(pos)
        return True

    cdef void multiply(self, double factor) noexcept nogil:
        """Multiply every weight by ``factor`` (finite) in O(1), folding the scale when tiny."""
        cdef Py_ssize_t i
        if factor == 0.0:
            self._scale = 0.0
        else:
            self._scale *= factor
        if fabs(self._scale) < _MIN_SCALE:
            for i in range(self._size):
                self._weights[i] *= self._scale
            self._scale = 1.0
            # Rounding can create ties that the key must now break: restore the order.
            self._heapify()

    cdef double* aux_slot(self, int64_t key) noexcept nogil:
        """Stored auxiliary value of ``key`` (times ``aux_scale()``), or NULL if absent.

        NULL too when the heap keeps no auxiliary values. The pointer is valid
        until the heap next changes.
        """
        cdef Py_ssize_t pos
        if self._aux == NULL:
            return NULL
        pos = self._pos_at(self._find(key))
        if pos < 0:
            return NULL
        return &self._aux[pos]

    cdef bint lookup_aux(self, int64_t key, double* weight, double* aux) noexcept nogil:
        """``lookup`` that also reads the auxiliary value (0 without auxiliary values)."""
        cdef uint64_t h = _fmix64(<uint64_t>key)
        cdef Py_ssize_t pos
        if not self._maybe_present(h):
            return False
        pos = self._pos_at(self._find_hashed(key, h))
        if pos < 0:
            return False
        weight[0] = self._weights[pos] * self._scale
        aux[0] = self._aux[pos] * self._aux_scale if self._aux != NULL else 0.0
        return True

    cdef double min_weight(self) noexcept nogil:
        """Weight of the minimum entry (0 when empty)."""
        return self._weights[0] * self._scale if self._size > 0 else 0.0

    cdef double aux_scale(self) noexcept nogil:
        return self._aux_scale

    cdef void multiply_aux(self, double factor) noexcept nogil:
        """Multiply every auxiliary value by ``factor`` in O(1), folding the scale when tiny."""
        cdef Py_ssize_t i
        self._aux_scale = 0.0 if factor == 0.0 else self._aux_scale * factor
        if fabs(self._aux_scale) < _MIN_SCALE:
            if self._aux != NULL:
                for i in range(self._size):
                    self._aux[i] *= self._aux_scale
            self._aux_scale = 1.0

    # ------------------------------------------------------------ Python API
    def __len__(self):
        return self._size

    def __contains__(self, key):
        return self.contains(key)

    @property
    def memory_bytes(self):
        _ready(self)
        return int(sum(a.nbytes for a in self._arrays if a is not None))

    @property
    def filter_bits(self):
        return int(self._filter_bits)

    @property
    def has_aux(self):
        return self._aux != NULL

    @property
    def n_slots(self):
        return self._n_slots

    def _check_initialised(self):
        """Raise ``RuntimeError`` unless the heap went through ``__init__``."""
        _ready(self)

    def copy(self):
        """An independent copy with the same layout: O(capacity), no re-insertion.

        Returns
        -------
        heap : TopKHeap
            A heap equal to this one array for array (heap order, key map and
            scale factors), so it evolves exactly as this one would.

        Examples
        --------
        >>> from sklearn_sketch import TopKHeap
        >>> heap = TopKHeap(3)
        >>> heap.push_many([1, 2, 3], [0.5, -2.0, 1.0])
        >>> other = heap.copy()
        >>> other.push_or_update(4, 9.0)
        (1, 0.5)
        >>> heap.keys().tolist(), other.keys().tolist()
        ([2, 3, 1], [4, 2, 3])
        """
        _ready(self)
        cdef TopKHeap out = TopKHeap.__new__(TopKHeap)
        out.by_value = self.by_value
        out._allocate(self.capacity, self._aux != NULL)
        out._restore(self)
        return out

    def __copy__(self):
        return self.copy()

    def __deepcopy__(self, memo):
        return self.copy()

    def _restore(self, TopKHeap other not None):
        """Make this heap equal to ``other`` (a copy of it), array for array, in place."""
        _ready(self)
        _ready(other)
        if other.capacity != self.capacity or (other._aux != NULL) != (self._aux != NULL):
            raise ValueError("a heap is restored from a copy of the same capacity and aux")
        for mine, theirs in zip(self._arrays, other._arrays):
            if mine is not None:
                np.copyto(mine, theirs)
        self._size = other._size
        self._scale = other._scale
        self._aux_scale = other._aux_scale
        # The presence filter was copied with the arrays; its rebuild clock too.
        self._filter_inserts = other._filter_inserts

    def _check_has_aux(self):
        _ready(self)
        if self._aux == NULL:
            raise ValueError("this heap keeps no auxiliary values: create it with "
                             "TopKHeap(capacity, aux=True)")

    def contains(self, key):
        """Whether ``key`` is in the heap."""
        _ready(self)
        cdef double w
        return bool(self.lookup(_check_key(key), &w))

    def get(self, key, default=None):
        """Weight of ``key``, or ``default`` when it is not in the heap."""
        _ready(self)
        cdef double w
        if self.lookup(_check_key(key), &w):
            return w
        return default

    def push_or_update(self, key, weight):
        """Offer ``(key, weight)``.

        A key already in the heap gets the new weight. A new key is inserted while
        there is room, and afterwards only if ``(|weight|, key)`` orders above the
        minimum, which is then evicted.

        Parameters
        ----------
        key : int
            Feature key (int64).
        weight : float
            Finite weight.

        Returns
        -------
        left : tuple of (int, float) or None
            The entry that is not in the heap after the call: the evicted minimum,
            or ``(key, weight)`` itself when it was rejected; ``None`` otherwise.
        """
        _ready(self)
        cdef int64_t k = _check_key(key), ek = 0
        cdef double w = _check_weight(weight), ew = 0.0
        _stored(w, self._scale, "weight")
        cdef HeapOutcome outcome = self.offer(k, w, &ek, &ew)
        if outcome == HEAP_REPLACED:
            return (ek, ew)
        if outcome == HEAP_REJECTED:
            return (k, w)
        return None

    def push_many(self, keys, weights):
        """``push_or_update`` every pair in order, in one call without the GIL.

        Parameters
        ----------
        keys : array-like of int, shape (n,)
            Feature keys (int64).
        weights : array-like of float, shape (n,)
            Finite weights.
        """
        _ready(self)
        from ._count_sketch import _as_finite_values
        from ._murmurhash import _as_key_array

        key_arr = _as_key_array(np.atleast_1d(keys))
        weight_arr = _as_finite_values(np.atleast_1d(weights), "weights")
        if key_arr.ndim != 1 or key_arr.shape != weight_arr.shape:
            raise ValueError(f"keys and weights must be 1-D of equal length, "
                             f"got {key_arr.shape} and {weight_arr.shape}")
        if weight_arr.size:
            _stored(np.abs(weight_arr).max(), self._scale, "weight")
        cdef const int64_t[::1] k = key_arr
        cdef const double[::1] w = weight_arr
        cdef Py_ssize_t i
        cdef int64_t ek
        cdef double ew
        with nogil:
            for i in range(k.shape[0]):
                self.offer(k[i], w[i], &ek, &ew)

    def get_aux(self, key, default=None):
        """Auxiliary value of ``key`` (0 when inserted), or ``default`` when absent."""
        self._check_has_aux()
        cdef double* slot = self.aux_slot(_check_key(key))
        if slot == NULL:
            return default
        return slot[0] * self._aux_scale

    def set_aux(self, key, value):
        """Set the auxiliary value of ``key``; ``KeyError`` if absent."""
        self._check_has_aux()
        cdef double v = _check_weight(value)
        cdef double* slot = self.aux_slot(_check_key(key))
        if slot == NULL:
            raise KeyError(key)
        slot[0] = _stored(v, self._aux_scale, "auxiliary value")

    def scale_aux(self, factor):
        """Multiply every auxiliary value by ``factor`` in O(1).

        Parameters
        ----------
        factor : float
            Finite multiplier.
        """
        self._check_has_aux()
        factor = _check_weight(factor)
        _check_scaling(self._aux_scale, factor, self._arrays[3][:self._size], "auxiliary value")
        self.multiply_aux(factor)

    def remove(self, key):
        """Remove ``key`` and return its weight; ``KeyError`` if absent."""
        _ready(self)
        cdef double w
        if not self.discard(_check_key(key), &w):
            raise KeyError(key)
        return w

    def min(self):
        """The entry of smallest ``(|weight|, key)`` as ``(key, weight)``."""
        _ready(self)
        if self._size == 0:
            raise IndexError("min() of an empty TopKHeap")
        return (self._keys[0], self._weights[0] * self._scale)

    def pop_min(self):
        """Remove and return the entry of smallest ``(|weight|, key)``."""
        item = self.min()
        self._remove_at(0)
        return item

    def scale(self, factor):
        """Multiply every weight by ``factor`` in O(1).

        Parameters
        ----------
        factor : float
            Finite multiplier; positive for a heap ordered by value (a negative
            one would reverse its order).
        """
        _ready(self)
        factor = _check_weight(factor)
        if self.by_value and factor <= 0:
            raise ValueError(f"a heap ordered by value scales by positive factors only, "
                             f"got {factor}")
        _check_scaling(self._scale, factor, self._arrays[1][:self._size], "weight")
        self.multiply(factor)

    def clear(self):
        """Remove every entry."""
        _ready(self)
        self._allocate(self.capacity, self._aux != NULL)

    def items(self):
        """Keys and weights sorted by ``(|weight|, key)`` descending (``(weight, key)`` for
        a heap ordered by value).

        Returns
        -------
        keys : ndarray of int64
        weights : ndarray of float64
        """
        _ready(self)
        keys = self._arrays[0][:self._size].copy()
        stored = self._arrays[1][:self._size]
        order = np.lexsort((keys, stored if self.by_value else np.abs(stored)))[::-1]
        return keys[order], stored[order] * self._scale

    def aux_items(self):
        """Auxiliary values in the order of :meth:`items`."""
        self._check_has_aux()
        keys = self._arrays[0][:self._size]
        stored = self._arrays[1][:self._size]
        order = np.lexsort((keys, stored if self.by_value else np.abs(stored)))[::-1]
        return self._arrays[3][:self._size][order] * self._aux_scale

    def keys(self):
        """Keys sorted by ``(|weight|, key)`` descending (``(weight, key)`` by value)."""
        return self.items()[0]

    def weights(self):
        """Weights in the order of :meth:`keys`."""
        return self.items()[1]

    def all_finite(self):
        """Whether every weight, auxiliary value and scale factor is finite: O(size), no sort.

        Returns
        -------
        finite : bool
        """
        _ready(self)
        cdef Py_ssize_t pos
        if not (isfinite(self._scale) and isfinite(self._aux_scale)):
            return False
        for pos in range(self._size):
            if not isfinite(self._weights[pos] * self._scale):
                return False
            if self._aux != NULL and not isfinite(self._aux[pos] * self._aux_scale):
                return False
        return True

    def check_invariants(self):
        """Raise ``AssertionError`` if the heap order or the key map is broken, or a
        weight, auxiliary value or scale factor is not finite."""
        _ready(self)
        cdef Py_ssize_t pos, slot, n_mapped = 0
        cdef uint32_t v
        for pos in range(1, self._size):
            if self._less(pos, (pos - 1) >> 1):
                raise AssertionError(f"heap order broken at position {pos}")
        for slot in range(self._n_slots):
            v = self._map[slot]
            if v == 0:
                continue
            n_mapped += 1
            pos = self._pos_at(slot)
            if pos >= self._size:
                raise AssertionError(f"map slot {slot} points past the heap")
            if self._find(self._keys[pos]) != slot:
                raise AssertionError(f"key {self._keys[pos]} unreachable by probing")
            if (v & ~self._pos_mask) != self._tag(_fmix64(<uint64_t>self._keys[pos])):
                raise AssertionError(f"key {self._keys[pos]} has a wrong tag")
        if n_mapped != self._size:
            raise AssertionError(f"key map holds {n_mapped} entries for {self._size}")
        for pos in range(self._size):
            if not self._maybe_present(_fmix64(<uint64_t>self._keys[pos])):
                raise AssertionError(f"key {self._keys[pos]} is missing from the presence filter")
        if not (isfinite(self._scale) and self._scale != 0.0 and isfinite(self._aux_scale)
                and self._aux_scale != 0.0):
            raise AssertionError(f"scale factors {self._scale}, {self._aux_scale} are not "
                                 "finite and non-zero")
        for pos in range(self._size):
            if not isfinite(self._weights[pos] * self._scale):
                raise AssertionError(f"key {self._keys[pos]} has a non-finite weight")
            if self._aux != NULL and not isfinite(self._aux[pos] * self._aux_scale):
                raise AssertionError(f"key {self._keys[pos]} has a non-finite auxiliary value")

    def __reduce__(self):
        aux = self._arrays[3]
        return (_rebuild_topk_heap,
                (self.capacity, self._arrays[0][:self._size].copy(),
                 self._arrays[1][:self._size].copy(), self._scale,
                 None if aux is None else aux[:self._size].copy(), self._aux_scale,
                 "value" if self.by_value else "magnitude"))

    def __repr__(self):
        order = ", order='value'" if self.by_value else ""
        return f"TopKHeap(capacity={self.capacity}, size={self._size}{order})"


def _rebuild_topk_heap(capacity, keys, stored_weights, scale, stored_aux=None, aux_scale=1.0,
                       order="magnitude"):
    """Rebuild a heap from its layout, so the state is exactly the pickled one.

    The heap is made by its constructor and filled by insertions in layout
    order, which keep a valid layout where it is; every size and value is
    checked first, so a forged layout raises instead of reading out of bounds.
    """
    from ._count_sketch import _as_finite_values
    from ._murmurhash import _as_key_array

    key_arr = _as_key_array(np.atleast_1d(keys))
    weight_arr = _as_finite_values(np.atleast_1d(stored_weights), "weights")
    if key_arr.ndim != 1 or key_arr.shape != weight_arr.shape:
        raise ValueError(f"keys and weights must be 1-D of equal length, "
                         f"got {key_arr.shape} and {weight_arr.shape}")
    heap = TopKHeap(capacity, aux=stored_aux is not None, order=order)
    if heap.by_value and scale < 0:
        raise ValueError(f"the scale of a heap ordered by value must be positive, got {scale}")
    if key_arr.shape[0] > heap.capacity:
        raise ValueError(f"{key_arr.shape[0]} entries do not fit a heap of capacity {capacity}")
    if unique_keys(key_arr).size != key_arr.size:
        raise ValueError("the keys of a heap must be distinct")
    for name, value in (("scale", scale), ("aux_scale", aux_scale)):
        _check_weight(value)
        if abs(value) < _MIN_SCALE:
            raise ValueError(f"{name} must satisfy |{name}| >= 1e-9, got {value}")
    if stored_aux is not None:
        aux_arr = _as_finite_values(np.atleast_1d(stored_aux), "auxiliary values")
        if aux_arr.shape != key_arr.shape:
            raise ValueError(f"auxiliary values must be one per key, got shape {aux_arr.shape}")
    heap.push_many(key_arr, weight_arr)
    if not np.array_equal(heap._arrays[0][:key_arr.shape[0]], key_arr):
        raise ValueError("the entries are not in heap order")
    if stored_aux is not None:
        heap._arrays[3][:key_arr.shape[0]] = aux_arr
    cdef TopKHeap out = heap
    out._scale = float(scale)
    out._aux_scale = float(aux_scale)
    return heap
