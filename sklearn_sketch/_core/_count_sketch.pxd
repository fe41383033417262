from libc.stdint cimport int64_t, uint32_t, uint64_t

# Largest supported depth; bounds the stack buffers used for medians.
cdef enum:
    MAX_DEPTH = 64
    # Keys hashed (and their cells prefetched) ahead of the memory accesses.
    PREFETCH_BLOCK = 32


cimport cython


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

    cdef _init_arrays(self, Py_ssize_t width, Py_ssize_t depth, object seeds, object table,
                      double scale)
    cdef void locate(self, int64_t key, Py_ssize_t* cells, double* signs) noexcept nogil
    cdef void locate_prefetch(self, int64_t key, Py_ssize_t* cells,
                              double* signs) noexcept nogil
    cdef bint add_many(self, const int64_t* keys, const double* deltas, Py_ssize_t n,
                       Py_ssize_t* cell_log, double* old_log) noexcept nogil
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
    cdef void multiply(self, double factor) noexcept nogil
    cdef void _renormalize(self) noexcept nogil


cdef double median_inplace(double* values, Py_ssize_t n) noexcept nogil
