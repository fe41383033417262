from libc.stdint cimport int64_t, uint32_t, uint64_t

# Largest supported depth; bounds the stack buffers used for medians.
cdef enum:
    MAX_DEPTH = 64
    # Keys hashed (and their cells prefetched) ahead of the memory accesses.
    PREFETCH_BLOCK = 32


cimport cython


# An entry of a CountSketch's undo journal: a table cell and its value before the
# write that logged it. ``cell >= 0``: the first write to the cell since the
# journal began (its bit in the touched bitmap was set by this entry);
# ``cell < 0``: ``~cell`` written again inside a savepoint (see ``_undo_point``).
ctypedef struct JournalEntry:
    Py_ssize_t cell
    double old


@cython.final
cdef class CountSketch:
    cdef readonly Py_ssize_t width
    cdef readonly Py_ssize_t depth
    cdef uint64_t _uwidth
    cdef uint32_t* _seeds
    cdef float* _t32
    cdef double* _t64
    cdef bint _is64
    # Stored values times _scale are the sketch's values (lazy global scaling).
    cdef double _scale
    cdef object _seeds_arr
    cdef object _table_arr
    # Undo journal (``journal_begin``): off unless _jon. _jbits holds one bit per
    # cell (allocated and freed with each journal), _jlog the first old
    # value of every touched cell, _jsnapshot a copy of the whole table as it was
    # when the journal began (taken instead of a log that grew past an eighth
    # of the table, or before a write to every cell). _jsave: inside a savepoint every
    # write is logged (its entries stay until it ends, a copy or not); _jfailed: the
    # log or the copy could not be allocated.
    cdef bint _jon
    cdef bint _jsave
    cdef bint _jfailed
    cdef uint64_t* _jbits
    cdef JournalEntry* _jlog
    cdef Py_ssize_t _jlen
    cdef Py_ssize_t _jcap
    # Where the open savepoint's entries start in the log.
    cdef Py_ssize_t _jmark
    cdef double _jscale
    cdef void* _jsnapshot
    # With _jkeep (``hold_journal_memory``), a closed journal's copy is kept in
    # _jspare for the next journal's: new memory costs a page fault per page.
    cdef bint _jkeep
    cdef void* _jspare

    cdef _init_arrays(self, Py_ssize_t width, Py_ssize_t depth, object seeds, object table,
                      double scale)
    cdef void locate(self, int64_t key, Py_ssize_t* cells, double* signs) noexcept nogil
    cdef void locate_prefetch(self, int64_t key, Py_ssize_t* cells,
                              double* signs) noexcept nogil
    cdef void prefetch_located(self, const Py_ssize_t* cells, Py_ssize_t n_keys) noexcept nogil
    cdef bint add_many(self, const int64_t* keys, const double* deltas,
                       Py_ssize_t n) noexcept nogil
    cdef void estimate_many(self, const int64_t* keys, double* out, Py_ssize_t n) noexcept nogil
    cdef bint add_located(self, const Py_ssize_t* cells, const double* signs,
                          double delta) noexcept nogil
    cdef double estimate_located(self, const Py_ssize_t* cells,
                                 const double* signs) noexcept nogil
    cdef double sum_located(self, const Py_ssize_t* cells, const double* signs) noexcept nogil
    cdef double dot_located(self, const Py_ssize_t* cells, const double* signs, const double* x,
                            Py_ssize_t n, bint row_sums) noexcept nogil
    cdef bint add(self, int64_t key, double delta) noexcept nogil
    cdef double estimate(self, int64_t key) noexcept nogil
    cdef double add_and_estimate(self, int64_t key, double delta) noexcept nogil
    cdef bint multiply(self, double factor) noexcept nogil
    cdef bint _renormalize(self) noexcept nogil
    # The journal (see CountSketch.journal_begin in the .pyx).
    cdef bint _journal(self, const Py_ssize_t* cells, Py_ssize_t n) noexcept nogil
    cdef bint _journal_push(self, Py_ssize_t entry, Py_ssize_t cell) noexcept nogil
    cdef bint _journal_all(self) noexcept nogil
    cdef Py_ssize_t _table_bytes(self) noexcept nogil
    cdef Py_ssize_t _journal_limit(self) noexcept nogil
    cdef void _journal_replay(self, Py_ssize_t stop) noexcept nogil
    cdef void _journal_close(self) noexcept nogil
    cdef void _savepoint_release(self) noexcept nogil
    cdef void _journal_shrink(self) noexcept nogil
    cdef Py_ssize_t _undo_point(self) except -2
    cdef int _undo_release(self, Py_ssize_t mark) except -1
    cdef int _undo_to(self, Py_ssize_t mark) except -1


cdef double median_inplace(double* values, Py_ssize_t n) noexcept nogil
