"""Indexed min-heap keeping the ``capacity`` heaviest (key, weight) pairs."""
import numbers

import numpy as np

from libc.math cimport fabs
from libc.stdint cimport int64_t, uint64_t
from libc.string cimport memset

from ._murmurhash cimport _fmix64

cdef double _MIN_SCALE = 1e-9


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

    An indexed min-heap ordered by ``(|weight|, key)`` (the key breaks ties, so the
    content after any sequence of operations is well defined) plus an
    open-addressing map from key to heap position. Offering a new key to a full
    heap replaces the minimum only when the new entry orders above it.
    ``scale`` multiplies every weight in O(1) through a global factor; the order
    is that of the weights before scaling, so two weights that rounding makes
    equal after an inexact ``scale`` keep their earlier order.

    Parameters
    ----------
    capacity : int
        Largest number of entries kept, at least 1.

    Attributes
    ----------
    capacity : int
        Largest number of entries kept.
    memory_bytes : int
        Bytes held by the heap and its key map.

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
    """

    def __cinit__(self):
        self._scale = 1.0
        self._aux_scale = 1.0

    def __init__(self, capacity):
        if isinstance(capacity, (bool, np.bool_)) or not isinstance(capacity, numbers.Integral):
            raise TypeError(f"capacity must be an integer, got {type(capacity).__name__}")
        if capacity < 1:
            raise ValueError(f"capacity must be at least 1, got {capacity}")
        self._allocate(int(capacity))

    cdef _allocate(self, Py_ssize_t capacity):
        cdef Py_ssize_t map_size = 2
        while map_size < 2 * capacity:
            map_size *= 2
        keys = np.zeros(capacity, dtype=np.int64)
        weights = np.zeros(capacity, dtype=np.float64)
        map_index = np.zeros(capacity, dtype=np.intp)
        # The map's slots, (key, heap position) pairs side by side: one cache line a probe.
        slots = np.zeros((map_size, 2), dtype=np.int64)
        slots[:, 1] = -1
        aux = np.zeros(capacity, dtype=np.float64)
        cdef Py_ssize_t filter_bits = 64
        while filter_bits < 8 * capacity:
            filter_bits *= 2
        bitmap = np.zeros(filter_bits // 64, dtype=np.uint64)
        self._arrays = (keys, weights, map_index, slots, aux, bitmap)
        cdef uint64_t[::1] f = bitmap
        self._filter = &f[0]
        self._filter_mask = <uint64_t>(filter_bits - 1)
        self._filter_inserts = 0
        cdef int64_t[::1] k = keys
        cdef int64_t[:, ::1] m = slots
        cdef double[::1] w = weights, a = aux
        cdef Py_ssize_t[::1] mi = map_index
        self._keys = &k[0]
        self._weights = &w[0]
        self._aux = &a[0]
        self._aux_scale = 1.0
        self._map_index = &mi[0]
        self._map = <MapSlot*>&m[0, 0]
        self._map_mask = map_size - 1
        self.capacity = capacity
        self._size = 0
        self._scale = 1.0

    # --------------------------------------------------------------- key map
    cdef bint _maybe_present(self, int64_t key) noexcept nogil:
        cdef uint64_t bit = (_fmix64(<uint64_t>key) >> 32) & self._filter_mask
        return (self._filter[bit >> 6] >> (bit & 63)) & 1

    cdef void _filter_add(self, int64_t key) noexcept nogil:
        cdef uint64_t bit = (_fmix64(<uint64_t>key) >> 32) & self._filter_mask
        self._filter[bit >> 6] |= (<uint64_t>1) << (bit & 63)
        self._filter_inserts += 1
        # Removed keys leave their bits set; rebuild before stale bits pile up.
        if self._filter_inserts > 2 * self.capacity:
            self._filter_rebuild()

    cdef void _filter_rebuild(self) noexcept nogil:
        cdef Py_ssize_t i
        cdef uint64_t bit
        memset(self._filter, 0, ((self._filter_mask + 1) >> 3))
        for i in range(self._size):
            bit = (_fmix64(<uint64_t>self._keys[i]) >> 32) & self._filter_mask
            self._filter[bit >> 6] |= (<uint64_t>1) << (bit & 63)
        self._filter_inserts = self._size

    cdef Py_ssize_t _find(self, int64_t key) noexcept nogil:
        """Map slot holding ``key``, or the empty slot where it would go."""
        cdef Py_ssize_t slot = <Py_ssize_t>(_fmix64(<uint64_t>key) & <uint64_t>self._map_mask)
        while self._map[slot].pos >= 0 and self._map[slot].key != key:
            slot = (slot + 1) & self._map_mask
        return slot

    cdef void _map_delete(self, Py_ssize_t slot) noexcept nogil:
        """Empty ``slot`` and shift later entries of its probe run back."""
        cdef Py_ssize_t hole = slot, nxt = (slot + 1) & self._map_mask, home
        while self._map[nxt].pos >= 0:
            home = <Py_ssize_t>(_fmix64(<uint64_t>self._map[nxt].key) & <uint64_t>self._map_mask)
            # Move the entry back when its home is not cyclically in (hole, nxt].
            if ((nxt - home) & self._map_mask) >= ((nxt - hole) & self._map_mask):
                self._map[hole].key = self._map[nxt].key
                self._map[hole].pos = self._map[nxt].pos
                self._map_index[self._map[hole].pos] = hole
                hole = nxt
            nxt = (nxt + 1) & self._map_mask
        self._map[hole].pos = -1

    # ------------------------------------------------------------------ heap
    cdef bint _less(self, Py_ssize_t a, Py_ssize_t b) noexcept nogil:
        cdef double wa = fabs(self._weights[a]), wb = fabs(self._weights[b])
        return wa < wb or (wa == wb and self._keys[a] < self._keys[b])

    cdef void _swap(self, Py_ssize_t a, Py_ssize_t b) noexcept nogil:
        self._keys[a], self._keys[b] = self._keys[b], self._keys[a]
        self._weights[a], self._weights[b] = self._weights[b], self._weights[a]
        self._aux[a], self._aux[b] = self._aux[b], self._aux[a]
        self._map_index[a], self._map_index[b] = self._map_index[b], self._map_index[a]
        self._map[self._map_index[a]].pos = a
        self._map[self._map_index[b]].pos = b

    cdef void _sift_up(self, Py_ssize_t pos) noexcept nogil:
        cdef Py_ssize_t parent
        while pos > 0:
            parent = (pos - 1) >> 1
            if not self._less(pos, parent):
                break
            self._swap(pos, parent)
            pos = parent

    cdef void _sift_down(self, Py_ssize_t pos) noexcept nogil:
        cdef Py_ssize_t child, smallest
        while True:
            smallest = pos
            child = 2 * pos + 1
            if child < self._size and self._less(child, smallest):
                smallest = child
            if child + 1 < self._size and self._less(child + 1, smallest):
                smallest = child + 1
            if smallest == pos:
                return
            self._swap(pos, smallest)
            pos = smallest

    cdef void _remove_at(self, Py_ssize_t pos) noexcept nogil:
        cdef Py_ssize_t last = self._size - 1
        self._map_delete(self._map_index[pos])
        if pos != last:
            self._keys[pos] = self._keys[last]
            self._weights[pos] = self._weights[last]
            self._aux[pos] = self._aux[last]
            self._map_index[pos] = self._map_index[last]
            self._map[self._map_index[pos]].pos = pos
        self._size -= 1
        if pos < self._size:
            self._sift_up(pos)
            self._sift_down(pos)

    cdef void _heapify(self) noexcept nogil:
        cdef Py_ssize_t pos
        for pos in range(self._size // 2 - 1, -1, -1):
            self._sift_down(pos)

    # -------------------------------------------------------------- cdef API
    cdef bint accepts(self, int64_t key, double weight) noexcept nogil:
        """Whether ``offer(key, weight)`` would keep ``key`` (``key`` not in the heap)."""
        cdef double w, m
        if self._size < self.capacity:
            return True
        # Compare stored values, the order the heap keeps (see the class docstring).
        w = fabs(weight / self._scale)
        m = fabs(self._weights[0])
        return w > m or (w == m and key > self._keys[0])

    cdef HeapOutcome offer(self, int64_t key, double weight,
                           int64_t* evicted_key, double* evicted_weight) noexcept nogil:
        """Insert or update ``key``; on HEAP_REPLACED the evicted entry is written out."""
        cdef Py_ssize_t slot, pos
        cdef double stored = weight / self._scale
        if (self._size == self.capacity and not self._maybe_present(key)
                and not self.accepts(key, weight)):
            return HEAP_REJECTED  # absent and not good enough: no probe needed
        slot = self._find(key)
        if self._map[slot].pos >= 0:
            pos = self._map[slot].pos
            self._weights[pos] = stored
            self._sift_up(pos)
            self._sift_down(pos)
            return HEAP_UPDATED
        if self._size < self.capacity:
            pos = self._size
            self._size += 1
            self._keys[pos] = key
            self._weights[pos] = stored
            self._aux[pos] = 0.0
            self._map[slot].key = key
            self._map[slot].pos = pos
            self._map_index[pos] = slot
            self._filter_add(key)
            self._sift_up(pos)
            return HEAP_INSERTED
        if not self.accepts(key, weight):
            return HEAP_REJECTED
        evicted_key[0] = self._keys[0]
        evicted_weight[0] = self._weights[0] * self._scale
        self._map_delete(self._map_index[0])
        slot = self._find(key)  # the deletion may have shifted the probe run
        self._keys[0] = key
        self._weights[0] = stored
        self._aux[0] = 0.0
        self._map[slot].key = key
        self._map[slot].pos = 0
        self._map_index[0] = slot
        self._filter_add(key)
        self._sift_down(0)
        return HEAP_REPLACED

    cdef bint lookup(self, int64_t key, double* weight) noexcept nogil:
        cdef Py_ssize_t slot
        if not self._maybe_present(key):
            return False
        slot = self._find(key)
        if self._map[slot].pos < 0:
            return False
        weight[0] = self._weights[self._map[slot].pos] * self._scale
        return True

    cdef bint discard(self, int64_t key, double* weight) noexcept nogil:
        cdef Py_ssize_t slot = self._find(key), pos
        if self._map[slot].pos < 0:
            return False
        pos = self._map[slot].pos
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

        The pointer is valid until the heap next changes.
        """
        cdef Py_ssize_t slot = self._find(key)
        if self._map[slot].pos < 0:
            return NULL
        return &self._aux[self._map[slot].pos]

    cdef bint lookup_aux(self, int64_t key, double* weight, double* aux) noexcept nogil:
        """``lookup`` that also reads the auxiliary value."""
        cdef Py_ssize_t slot, pos
        if not self._maybe_present(key):
            return False
        slot = self._find(key)
        if self._map[slot].pos < 0:
            return False
        pos = self._map[slot].pos
        weight[0] = self._weights[pos] * self._scale
        aux[0] = self._aux[pos] * self._aux_scale
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
        return int(sum(a.nbytes for a in self._arrays))

    def contains(self, key):
        """Whether ``key`` is in the heap."""
        cdef double w
        return bool(self.lookup(_check_key(key), &w))

    def get(self, key, default=None):
        """Weight of ``key``, or ``default`` when it is not in the heap."""
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
        cdef int64_t k = _check_key(key), ek = 0
        cdef double w = _check_weight(weight), ew = 0.0
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
        from ._count_sketch import _as_finite_values
        from ._murmurhash import _as_key_array

        key_arr = _as_key_array(np.atleast_1d(keys))
        weight_arr = _as_finite_values(np.atleast_1d(weights), "weights")
        if key_arr.ndim != 1 or key_arr.shape != weight_arr.shape:
            raise ValueError(f"keys and weights must be 1-D of equal length, "
                             f"got {key_arr.shape} and {weight_arr.shape}")
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
        cdef double* slot = self.aux_slot(_check_key(key))
        if slot == NULL:
            return default
        return slot[0] * self._aux_scale

    def set_aux(self, key, value):
        """Set the auxiliary value of ``key``; ``KeyError`` if absent."""
        cdef double v = _check_weight(value)
        cdef double* slot = self.aux_slot(_check_key(key))
        if slot == NULL:
            raise KeyError(key)
        slot[0] = v / self._aux_scale

    def scale_aux(self, factor):
        """Multiply every auxiliary value by ``factor`` in O(1).

        Parameters
        ----------
        factor : float
            Finite multiplier.
        """
        self.multiply_aux(_check_weight(factor))

    def remove(self, key):
        """Remove ``key`` and return its weight; ``KeyError`` if absent."""
        cdef double w
        if not self.discard(_check_key(key), &w):
            raise KeyError(key)
        return w

    def min(self):
        """The entry of smallest ``(|weight|, key)`` as ``(key, weight)``."""
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
            Finite multiplier.
        """
        factor = _check_weight(factor)
        self.multiply(factor)

    def clear(self):
        """Remove every entry."""
        self._allocate(self.capacity)

    def items(self):
        """Keys and weights sorted by ``(|weight|, key)`` descending.

        Returns
        -------
        keys : ndarray of int64
        weights : ndarray of float64
        """
        keys = self._arrays[0][:self._size].copy()
        stored = self._arrays[1][:self._size]
        order = np.lexsort((keys, np.abs(stored)))[::-1]
        return keys[order], stored[order] * self._scale

    def aux_items(self):
        """Auxiliary values in the order of :meth:`items`."""
        keys = self._arrays[0][:self._size]
        stored = self._arrays[1][:self._size]
        order = np.lexsort((keys, np.abs(stored)))[::-1]
        return self._arrays[4][:self._size][order] * self._aux_scale

    def keys(self):
        """Keys sorted by ``(|weight|, key)`` descending."""
        return self.items()[0]

    def weights(self):
        """Weights in the order of :meth:`keys`."""
        return self.items()[1]

    def check_invariants(self):
        """Raise ``AssertionError`` if the heap order or the key map is broken."""
        cdef Py_ssize_t pos, slot, n_mapped = 0
        for pos in range(1, self._size):
            if self._less(pos, (pos - 1) >> 1):
                raise AssertionError(f"heap order broken at position {pos}")
        for pos in range(self._size):
            slot = self._map_index[pos]
            if self._map[slot].pos != pos or self._map[slot].key != self._keys[pos]:
                raise AssertionError(f"key map broken for position {pos}")
            if self._find(self._keys[pos]) != slot:
                raise AssertionError(f"key {self._keys[pos]} unreachable by probing")
            if not self._maybe_present(self._keys[pos]):
                raise AssertionError(f"key {self._keys[pos]} missing from the presence bitmap")
        for slot in range(self._map_mask + 1):
            n_mapped += self._map[slot].pos >= 0
        if n_mapped != self._size:
            raise AssertionError(f"key map holds {n_mapped} entries for {self._size}")

    def __reduce__(self):
        return (_rebuild_topk_heap,
                (self.capacity, self._arrays[0][:self._size].copy(),
                 self._arrays[1][:self._size].copy(), self._scale,
                 self._arrays[4][:self._size].copy(), self._aux_scale))

    def __repr__(self):
        return f"TopKHeap(capacity={self.capacity}, size={self._size})"


def _rebuild_topk_heap(capacity, keys, stored_weights, scale, stored_aux=None, aux_scale=1.0):
    """Rebuild a heap from its layout, so the state is exactly the pickled one."""
    cdef TopKHeap heap = TopKHeap(capacity)
    cdef const int64_t[::1] k = np.ascontiguousarray(keys, dtype=np.int64)
    cdef const double[::1] w = np.ascontiguousarray(stored_weights, dtype=np.float64)
    cdef const double[::1] a = np.ascontiguousarray(
        np.zeros(k.shape[0]) if stored_aux is None else stored_aux, dtype=np.float64)
    cdef Py_ssize_t pos, slot
    for pos in range(k.shape[0]):
        slot = heap._find(k[pos])
        heap._keys[pos] = k[pos]
        heap._weights[pos] = w[pos]
        heap._aux[pos] = a[pos]
        heap._map[slot].key = k[pos]
        heap._map[slot].pos = pos
        heap._map_index[pos] = slot
    heap._size = k.shape[0]
    heap._filter_rebuild()
    heap._scale = scale
    heap._aux_scale = aux_scale
    return heap
