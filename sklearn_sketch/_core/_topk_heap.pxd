from libc.stdint cimport int64_t, uint64_t

ctypedef struct MapSlot:
    int64_t key
    int64_t pos


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
    cdef Py_ssize_t _size
    # Heap layout, min-heap on (|weight|, key). Stored weights times _scale are the weights.
    cdef int64_t* _keys
    cdef double* _weights
    cdef Py_ssize_t* _map_index      # heap position -> slot of its key in the map
    cdef double _scale
    # An auxiliary value per entry that moves with it (0 on insertion); stored
    # values times _aux_scale are the values.
    cdef double* _aux
    cdef double _aux_scale
    # Open-addressing key -> heap position map (linear probing, backward-shift
    # deletion); a slot's pos is -1 when it is empty.
    cdef MapSlot* _map
    cdef Py_ssize_t _map_mask
    # A bitmap with a bit set for every key inserted since it was last rebuilt:
    # a clear bit proves a key is absent without probing the (larger) map.
    cdef uint64_t* _filter
    cdef uint64_t _filter_mask
    cdef Py_ssize_t _filter_inserts
    cdef object _arrays

    cdef _allocate(self, Py_ssize_t capacity)
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
    cdef bint _maybe_present(self, int64_t key) noexcept nogil
    cdef void _filter_add(self, int64_t key) noexcept nogil
    cdef void _filter_rebuild(self) noexcept nogil
    cdef Py_ssize_t _find(self, int64_t key) noexcept nogil
    cdef void _map_delete(self, Py_ssize_t slot) noexcept nogil
    cdef bint _less(self, Py_ssize_t a, Py_ssize_t b) noexcept nogil
    cdef void _swap(self, Py_ssize_t a, Py_ssize_t b) noexcept nogil
    cdef void _sift_up(self, Py_ssize_t pos) noexcept nogil
    cdef void _sift_down(self, Py_ssize_t pos) noexcept nogil
    cdef void _remove_at(self, Py_ssize_t pos) noexcept nogil
    cdef void _heapify(self) noexcept nogil
