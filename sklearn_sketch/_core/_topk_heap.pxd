from libc.stdint cimport int64_t, uint32_t, uint64_t


# Outcomes of TopKHeap.offer.
cdef enum HeapOutcome:
    HEAP_REJECTED = 0   # not in the heap and not better than its minimum
    HEAP_UPDATED = 1    # already in the heap; weight replaced
    HEAP_INSERTED = 2   # inserted into free room
    HEAP_REPLACED = 3   # inserted in place of the evicted minimum


cimport cython


@cython.final
cdef class TopKHeap:
    cdef readonly Py_ssize_t capacity
    cdef readonly bint by_value
    cdef Py_ssize_t _size
    # Heap layout, min-heap on (|weight|, key). Stored weights times _scale are the weights.
    cdef int64_t* _keys
    cdef double* _weights
    cdef double _scale
    # An auxiliary value per entry that moves with it (0 on insertion), allocated
    # only when asked for (NULL otherwise); stored values times _aux_scale are the values.
    cdef double* _aux
    cdef double _aux_scale
    # Open-addressing key -> heap position map (linear probing, backward-shift
    # deletion) of _n_slots 32-bit slots: 0 when empty, else a tag of the key's
    # hash in the bits above _pos_bits and (heap position + 1) below.
    cdef uint32_t* _map
    cdef Py_ssize_t _n_slots
    cdef int _pos_bits
    cdef uint32_t _pos_mask
    cdef uint32_t _tag_mask
    # A presence filter of _filter_bits bits (8 per entry; NULL below
    # FILTER_MIN_CAPACITY entries): a bit is set for every key inserted since the
    # last rebuild, so a clear bit proves a key absent without probing the map.
    cdef uint64_t* _filter
    cdef uint64_t _filter_bits
    cdef Py_ssize_t _filter_inserts
    # Every array the heap holds (keys, weights, map, aux or None): memory_bytes.
    cdef readonly object _arrays

    cdef _allocate(self, Py_ssize_t capacity, bint aux)
    cdef HeapOutcome offer(self, int64_t key, double weight,
                           int64_t* evicted_key, double* evicted_weight) noexcept nogil
    cdef bint accepts(self, int64_t key, double weight) noexcept nogil
    cdef bint lookup(self, int64_t key, double* weight) noexcept nogil
    cdef bint discard(self, int64_t key, double* weight) noexcept nogil
    cdef void multiply(self, double factor) noexcept nogil
    cdef double* aux_slot(self, int64_t key) noexcept nogil
    cdef bint lookup_aux(self, int64_t key, double* weight, double* aux) noexcept nogil
    cdef double min_weight(self) noexcept nogil
    cdef double aux_scale(self) noexcept nogil
    cdef void multiply_aux(self, double factor) noexcept nogil
    cdef Py_ssize_t _home(self, uint64_t h) noexcept nogil
    cdef uint32_t _tag(self, uint64_t h) noexcept nogil
    cdef Py_ssize_t _pos_at(self, Py_ssize_t slot) noexcept nogil
    cdef double _rank(self, double stored) noexcept nogil
    cdef bint _less(self, Py_ssize_t a, Py_ssize_t b) noexcept nogil
    cdef uint64_t _filter_bit(self, uint64_t h) noexcept nogil
    cdef bint _maybe_present(self, uint64_t h) noexcept nogil
    cdef void _filter_add(self, uint64_t h) noexcept nogil
    cdef void _filter_rebuild(self) noexcept nogil
    cdef Py_ssize_t _find(self, int64_t key) noexcept nogil
    cdef Py_ssize_t _find_hashed(self, int64_t key, uint64_t h) noexcept nogil
    cdef Py_ssize_t _slot_of(self, int64_t key, Py_ssize_t pos) noexcept nogil
    cdef void _set_pos(self, Py_ssize_t slot, Py_ssize_t pos) noexcept nogil
    cdef void _map_delete(self, Py_ssize_t slot) noexcept nogil
    cdef void _move(self, Py_ssize_t src, Py_ssize_t dst) noexcept nogil
    cdef Py_ssize_t _sift_up(self, Py_ssize_t pos, Py_ssize_t slot) noexcept nogil
    cdef void _sift_down(self, Py_ssize_t pos, Py_ssize_t slot) noexcept nogil
    cdef void _remove_at(self, Py_ssize_t pos) noexcept nogil
    cdef void _heapify(self) noexcept nogil
