"""Count-Sketch of a real vector indexed by 64-bit keys."""
import numbers

import numpy as np

from libc.math cimport NAN, fabs, isfinite

cdef extern from "_minmax.h" nogil:
    double sk_min(double a, double b)
    double sk_max(double a, double b)
from libc.stdint cimport int64_t, uint32_t, uint64_t
from libc.stdlib cimport calloc, free, malloc, realloc
from libc.string cimport memcpy, memmove, memset

from ._murmurhash cimport bucket_and_sign_scrambled, scramble_key

cdef extern from *:
    void __builtin_prefetch(const void* address, int rw, int locality) nogil
from ._murmurhash import _as_key_array

# Below this magnitude the lazy scale is folded into the table, so stored values
# never underflow (scikit-learn's WeightVector does the same).
cdef double _MIN_SCALE = 1e-9

# Entries of the first undo log allocated; it then doubles.
cdef Py_ssize_t _JOURNAL_MIN_ENTRIES = 1024


cdef inline double _median3(double a, double b, double c) noexcept nogil:
    return sk_max(sk_min(a, b), sk_min(sk_max(a, b), c))


cdef inline void _sort2(double* v, int i, int j) noexcept nogil:
    cdef double lo = sk_min(v[i], v[j])
    v[j] = sk_max(v[i], v[j])
    v[i] = lo


cdef inline double _median5(double* v) noexcept nogil:
    """Median of ``v[:5]`` by a 9-comparator sorting network (reorders ``v``)."""
    _sort2(v, 0, 1)
    _sort2(v, 3, 4)
    _sort2(v, 2, 4)
    _sort2(v, 2, 3)
    _sort2(v, 0, 3)
    _sort2(v, 0, 2)
    _sort2(v, 1, 4)
    _sort2(v, 1, 3)
    _sort2(v, 1, 2)
    return v[2]


cdef double median_inplace(double* v, Py_ssize_t n) noexcept nogil:
    """Median of ``v[:n]`` (mean of the two middle values for even ``n``); reorders ``v``."""
    cdef Py_ssize_t i, j
    cdef double x
    if n == 1:
        return v[0]
    if n == 2:
        return 0.5 * (v[0] + v[1])
    # Depths 3 and 5: min/max networks, branch-free (the values are random, so
    # compare-and-swap branches would mispredict half the time).
    if n == 3:
        return _median3(v[0], v[1], v[2])
    if n == 5:
        return _median5(v)
    for i in range(1, n):
        x = v[i]
        j = i - 1
        while j >= 0 and v[j] > x:
            v[j + 1] = v[j]
            j -= 1
        v[j + 1] = x
    if n & 1:
        return v[n // 2]
    return 0.5 * (v[n // 2 - 1] + v[n // 2])


def _check_int(name, value, low, high):
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{name} must be an integer, got {type(value).__name__}")
    if not low <= value <= high:
        raise ValueError(f"{name} must be in [{low}, {high}], got {value}")
    return int(value)


def _check_dtype(dtype):
    try:
        dt = np.dtype(dtype)
    except TypeError as exc:
        raise TypeError(f"dtype must be float32 or float64, got {dtype!r}") from exc
    if dt not in (np.float32, np.float64):
        raise TypeError(f"dtype must be float32 or float64, got {dt}")
    return dt


def _check_scaling(double scale, double factor, stored, what):
    """Raise ``ValueError`` unless ``stored * scale * factor`` and the scale stay finite.

    ``stored`` (an array) is read only when ``|factor| > 1``: a smaller factor
    cannot overflow.
    """
    if fabs(factor) <= 1.0:
        return
    new_scale = scale * factor
    largest = float(np.abs(stored).max()) if stored.size else 0.0
    if not (isfinite(new_scale) and isfinite(largest * fabs(new_scale))):
        raise ValueError(
            f"scaling by {factor:.3g} overflows: a {what} of magnitude "
            f"{largest * fabs(scale):.3g} would become infinite (scale factor {scale:.3g}); "
            "nothing was changed")


def _as_finite_values(values, what="deltas"):
    arr = np.asarray(values)
    if arr.dtype.kind not in "iuf":
        raise TypeError(f"{what} must be real numbers, got dtype {arr.dtype}")
    arr = np.ascontiguousarray(arr, dtype=np.float64)
    if not np.isfinite(arr).all():
        raise ValueError(f"{what} must be finite; got NaN or infinity")
    return arr


cdef inline int _ready(CountSketch sketch) except -1:
    """Raise unless ``sketch`` went through ``__init__`` (``__new__`` alone leaves no table)."""
    if sketch._table_arr is None:
        raise RuntimeError("this CountSketch is not initialised (made by __new__ without "
                           "__init__): create it with CountSketch(width, depth)")
    return 0


cdef inline void _locate(CountSketch sketch, int64_t key, Py_ssize_t* cells,
                         double* signs) noexcept nogil:
    """Flat table offsets and signs of ``key`` in every row (inlined where called)."""
    cdef Py_ssize_t j, b
    cdef uint64_t scrambled = scramble_key(key)
    for j in range(sketch.depth):
        bucket_and_sign_scrambled(scrambled, sketch._seeds[j], sketch._uwidth, &b, &signs[j])
        cells[j] = j * sketch.width + b


cdef class CountSketch:
    """Count-Sketch: a ``depth x width`` table holding a compressed real vector.

    Each key ``i`` (any int64) is hashed in row ``j`` to a bucket ``b_j(i)`` and a
    sign ``s_j(i)`` with MurmurHash3 under the row's seed (see
    :func:`~sklearn_sketch._core.bucket_and_sign_arrays`). ``update`` adds
    ``s_j(i) * delta`` to ``table[j, b_j(i)]`` in every row; ``query`` returns the
    median over rows of ``s_j(i) * table[j, b_j(i)]``, which estimates ``x_i`` to
    within ``O(||x||_2 / sqrt(width))`` with probability growing in ``depth``.
    ``scale`` multiplies the whole vector in O(1) through a global factor.

    Between :meth:`journal_begin` and :meth:`journal_commit` or
    :meth:`journal_rollback`, every write is undoable: the first write to a
    cell logs its previous value (a bitmap of one bit per cell, freed with the
    journal, marks the cells logged), so a rollback restores the cells and the scale factor bit for bit
    at a cost proportional to the cells touched, not to the table. A journal
    whose log would pass an eighth of the table's bytes, or that sees a write to every
    cell (a renormalisation of the scale, :meth:`clear`, :meth:`merge`,
    :meth:`set_table`), holds one copy of the table instead. The estimators
    train a fitted model this way, so a diverging ``partial_fit`` leaves it as
    it was without copying it first.

    Parameters
    ----------
    width : int
        Buckets per row, in ``[1, 2**31]``.
    depth : int, default=3
        Number of rows (independent hashes), in ``[1, 64]``.
    dtype : {numpy.float32, numpy.float64}, default=numpy.float32
        Type of the table cells.
    random_state : int, RandomState instance or None, default=None
        Draws the per-row hash seeds. Ignored when ``seeds`` is given.
    seeds : array-like of int, shape (depth,), default=None
        Explicit per-row seeds in ``[0, 2**32)``.

    Attributes
    ----------
    width, depth : int
        Shape of the table.
    dtype : numpy.dtype
        Type of the table cells.
    seeds : ndarray of uint32
        Copy of the per-row seeds.
    table : ndarray of shape (depth, width)
        Read-only view of the stored cells; the sketch's values are
        ``table * scale_factor``.
    scale_factor : float
        Global factor applied lazily to the table.
    memory_bytes : int
        Bytes held by the table and the seeds.
    journaling : bool
        Whether a journal is open.
    journal_cells : int
        Cells whose previous value the open journal keeps (every cell once it
        holds a copy of the table); 0 without a journal.
    journal_bytes : int
        Bytes held by the journal: the touched bitmap (``depth * width / 8``
        bytes), the log and the copy, which outlives the journal while
        :meth:`hold_journal_memory` is on.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_sketch import CountSketch
    >>> cs = CountSketch(width=1024, depth=3, random_state=0)
    >>> cs.update(np.array([7, 2**40, -3]), np.array([2.5, -1.0, 4.0]))
    >>> cs.query([7, 2**40, -3, 99]).round(3).tolist()
    [2.5, -1.0, 4.0, 0.0]
    >>> cs.scale(0.5)
    >>> float(cs.query([7])[0])
    1.25

    Undoing writes:

    >>> cs.journal_begin()
    >>> cs.update([7, 7], [10.0, 5.0])
    >>> cs.scale(1e-12)          # renormalises: the journal takes a copy of the table
    >>> cs.journal_rollback()
    >>> float(cs.query([7])[0]), cs.scale_factor
    (1.25, 0.5)
    """

    def __cinit__(self):
        self._scale = 1.0

    def __dealloc__(self):
        free(self._jbits)
        free(self._jlog)
        free(self._jsnapshot)
        free(self._jspare)

    def __init__(self, width, depth=3, *, dtype=np.float32, random_state=None, seeds=None):
        width = _check_int("width", width, 1, 1 << 31)
        depth = _check_int("depth", depth, 1, MAX_DEPTH)
        dt = _check_dtype(dtype)
        if seeds is None:
            from sklearn.utils import check_random_state

            rng = check_random_state(random_state)
            seed_arr = rng.randint(0, 1 << 32, size=depth, dtype=np.uint64).astype(np.uint32)
        else:
            seed_arr = np.asarray(seeds)
            if seed_arr.dtype.kind not in "iu" or seed_arr.shape != (depth,):
                raise ValueError(f"seeds must be {depth} integers, got {seed_arr!r}")
            if seed_arr.min() < 0 or seed_arr.max() >= (1 << 32):
                raise ValueError("seeds must be in [0, 2**32)")
            seed_arr = seed_arr.astype(np.uint32)
        self._init_arrays(width, depth, np.ascontiguousarray(seed_arr),
                          np.zeros((depth, width), dtype=dt), 1.0)

    cdef _init_arrays(self, Py_ssize_t width, Py_ssize_t depth, object seeds, object table,
                      double scale):
        cdef uint32_t[::1] seed_view = seeds
        self.width = width
        self.depth = depth
        self._uwidth = <uint64_t>width
        self._seeds_arr = seeds
        self._seeds = &seed_view[0]
        self._table_arr = table
        self._is64 = table.dtype == np.float64
        cdef float[:, ::1] t32
        cdef double[:, ::1] t64
        if self._is64:
            t64 = table
            self._t64 = &t64[0, 0]
            self._t32 = NULL
        else:
            t32 = table
            self._t32 = &t32[0, 0]
            self._t64 = NULL
        self._scale = scale

    # ------------------------------------------------------------------ cdef API
    cdef void locate(self, int64_t key, Py_ssize_t* cells, double* signs) noexcept nogil:
        """Flat table offsets and signs of ``key`` in every row."""
        _locate(self, key, cells, signs)

    cdef void locate_prefetch(self, int64_t key, Py_ssize_t* cells,
                              double* signs) noexcept nogil:
        """``locate`` that also prefetches the cells, to be touched a little later."""
        _locate(self, key, cells, signs)
        self.prefetch_located(cells, 1)

    cdef void prefetch_located(self, const Py_ssize_t* cells, Py_ssize_t n_keys) noexcept nogil:
        """Prefetch the located cells of ``n_keys`` keys, located by this sketch or
        by another of the same configuration (the models of a multi-class pass share
        their cells' places, each in its own table)."""
        cdef Py_ssize_t j
        if self._is64:
            for j in range(n_keys * self.depth):
                __builtin_prefetch(&self._t64[cells[j]], 1, 3)
        else:
            for j in range(n_keys * self.depth):
                __builtin_prefetch(&self._t32[cells[j]], 1, 3)

    cdef bint add_many(self, const int64_t* keys, const double* deltas,
                       Py_ssize_t n) noexcept nogil:
        """``add`` over arrays; False when a value stops being finite or the journal fails.

        Keys of a block are hashed ahead so cache misses overlap. Each key's
        cells go through the open journal (if any) before they are written; the
        call stops after the block where a cell times the scale factor is not
        finite, or at the key whose cells the journal could not log (nothing of
        that key is written). It undoes nothing itself: :meth:`update` opens a
        journal (or a savepoint) around it and rolls it back.
        """
        cdef Py_ssize_t cells[MAX_DEPTH * PREFETCH_BLOCK]
        cdef double signs[MAX_DEPTH * PREFETCH_BLOCK]
        cdef Py_ssize_t start = 0, i, j, m, c, d = self.depth
        cdef double scale = self._scale, inv_scale = 1.0 / self._scale, delta, value
        cdef float* t32 = self._t32
        cdef double* t64 = self._t64
        cdef bint finite = True, journal = self._jon
        while start < n and finite:
            m = min(<Py_ssize_t>PREFETCH_BLOCK, n - start)
            for i in range(m):
                self.locate_prefetch(keys[start + i], &cells[i * d], &signs[i * d])
            # Locals instead of self.*: extensions build with -fno-strict-aliasing,
            # so a table store would otherwise force reloading the object's fields.
            for i in range(m):
                if journal and not self._journal(&cells[i * d], d):
                    finite = False
                    break
                delta = deltas[start + i] * inv_scale
                for j in range(d):
                    c = cells[i * d + j]
                    if t64 != NULL:
                        t64[c] += signs[i * d + j] * delta
                        value = t64[c]
                    else:
                        t32[c] += <float>(signs[i * d + j] * delta)
                        value = t32[c]
                    finite &= isfinite(value * scale)
            start += m
        return finite

    cdef void estimate_many(self, const int64_t* keys, double* out, Py_ssize_t n) noexcept nogil:
        """``estimate`` over arrays, hashing a block of keys ahead so cache misses overlap."""
        cdef Py_ssize_t cells[MAX_DEPTH * PREFETCH_BLOCK]
        cdef double signs[MAX_DEPTH * PREFETCH_BLOCK]
        cdef Py_ssize_t start = 0, i, m, d = self.depth
        while start < n:
            m = min(<Py_ssize_t>PREFETCH_BLOCK, n - start)
            for i in range(m):
                self.locate_prefetch(keys[start + i], &cells[i * d], &signs[i * d])
            for i in range(m):
                out[start + i] = self.estimate_located(&cells[i * d], &signs[i * d])
            start += m

    cdef bint add_located(self, const Py_ssize_t* cells, const double* signs,
                          double delta) noexcept nogil:
        """Add ``delta`` at located cells; False when a cell overflowed (is not finite).

        False too, with nothing written, when the open journal cannot log the
        cells (``journal_failed``).
        """
        cdef Py_ssize_t j
        cdef double d = delta / self._scale
        cdef bint finite = True
        if self._jon and not self._journal(cells, self.depth):
            return False
        if self._is64:
            for j in range(self.depth):
                self._t64[cells[j]] += signs[j] * d
                finite &= isfinite(self._t64[cells[j]])
        else:
            for j in range(self.depth):
                self._t32[cells[j]] += <float>(signs[j] * d)
                finite &= isfinite(self._t32[cells[j]])
        return finite

    cdef double estimate_located(self, const Py_ssize_t* cells,
                                 const double* signs) noexcept nogil:
        cdef double v[MAX_DEPTH]
        cdef Py_ssize_t j
        if self.depth == 3 and not self._is64:
            # The common shape, without a call: the median of three float32 cells.
            return _median3(signs[0] * self._t32[cells[0]], signs[1] * self._t32[cells[1]],
                            signs[2] * self._t32[cells[2]]) * self._scale
        if self._is64:
            for j in range(self.depth):
                v[j] = signs[j] * self._t64[cells[j]]
        else:
            for j in range(self.depth):
                v[j] = signs[j] * self._t32[cells[j]]
        return median_inplace(v, self.depth) * self._scale

    cdef double sum_located(self, const Py_ssize_t* cells, const double* signs) noexcept nogil:
        """Sum over rows of the signed cells: ``sqrt(depth)`` times the WM-Sketch's
        ``z^T R e_key``, the key's share of a Weight-Median prediction."""
        cdef Py_ssize_t j
        cdef double total = 0.0
        if self._is64:
            for j in range(self.depth):
                total += signs[j] * self._t64[cells[j]]
        else:
            for j in range(self.depth):
                total += signs[j] * self._t32[cells[j]]
        return total * self._scale

    cdef double dot_located(self, const Py_ssize_t* cells, const double* signs, const double* x,
                            Py_ssize_t n, bint row_sums) noexcept nogil:
        """``sum_p x[p] * v_p`` over ``n`` located keys in one call, with ``v_p`` the
        key's sum over rows (``row_sums``) or its estimate (the median)."""
        cdef Py_ssize_t p, d = self.depth
        cdef double total = 0.0
        if row_sums:
            for p in range(n):
                total += x[p] * self.sum_located(&cells[p * d], &signs[p * d])
        else:
            for p in range(n):
                total += x[p] * self.estimate_located(&cells[p * d], &signs[p * d])
        return total

    cdef bint add(self, int64_t key, double delta) noexcept nogil:
        """Add ``delta`` at ``key``; False when a cell overflowed (is not finite)."""
        cdef Py_ssize_t cells[MAX_DEPTH]
        cdef double signs[MAX_DEPTH]
        self.locate(key, cells, signs)
        return self.add_located(cells, signs, delta)

    cdef double estimate(self, int64_t key) noexcept nogil:
        cdef Py_ssize_t cells[MAX_DEPTH]
        cdef double signs[MAX_DEPTH]
        self.locate(key, cells, signs)
        return self.estimate_located(cells, signs)

    cdef double add_and_estimate(self, int64_t key, double delta) noexcept nogil:
        """Add ``delta`` at ``key`` and return the new estimate, hashing once.

        NaN when :meth:`add_located` fails (a cell overflowed, or the journal
        could not log the cells).
        """
        cdef Py_ssize_t cells[MAX_DEPTH]
        cdef double signs[MAX_DEPTH]
        self.locate(key, cells, signs)
        if not self.add_located(cells, signs, delta):
            return NAN
        return self.estimate_located(cells, signs)

    cdef bint multiply(self, double factor) noexcept nogil:
        """Multiply every value by ``factor`` (finite) in O(1), folding the scale when tiny.

        False, with nothing changed, when folding needs a copy of the table for
        the open journal and it cannot be allocated.
        """
        cdef double scale = 0.0 if factor == 0.0 else self._scale * factor
        if fabs(scale) < _MIN_SCALE:
            # Folding writes every cell: the journal covers them first.
            if self._jon and not self._journal_all():
                return False
            self._scale = scale
            return self._renormalize()
        self._scale = scale
        return True

    cdef bint _renormalize(self) noexcept nogil:
        """Fold the global scale into the table (False, nothing changed: journal failed)."""
        cdef Py_ssize_t i, n = self.depth * self.width
        cdef double s = self._scale
        if self._jon and not self._journal_all():
            return False
        if s == 0.0:
            if self._is64:
                memset(self._t64, 0, n * sizeof(double))
            else:
                memset(self._t32, 0, n * sizeof(float))
        elif self._is64:
            for i in range(n):
                self._t64[i] *= s
        else:
            for i in range(n):
                self._t32[i] = <float>(self._t32[i] * s)
        self._scale = 1.0
        return True

    # ------------------------------------------------------------ the journal
    cdef bint _journal(self, const Py_ssize_t* cells, Py_ssize_t n) noexcept nogil:
        """Log the ``n`` cells about to be written: first writes, or every write in a savepoint.

        Called before the writes, only while a journal is open. False when the
        log cannot grow (``_jfailed``): the caller must then write nothing.
        """
        cdef Py_ssize_t j, c
        cdef uint64_t bit
        if self._jfailed:
            return False
        if self._jsnapshot != NULL and not self._jsave:
            return True
        for j in range(n):
            c = cells[j]
            bit = (<uint64_t>1) << (c & 63)
            if self._jbits[c >> 6] & bit:
                if self._jsave and not self._journal_push(~c, c):
                    return False
                continue
            if not self._journal_push(c, c):
                return False
            if self._jsnapshot != NULL and not self._jsave:
                # The push folded the log into a copy: every cell is covered now.
                return True
            self._jbits[c >> 6] |= bit
        return True

    cdef bint _journal_push(self, Py_ssize_t entry, Py_ssize_t cell) noexcept nogil:
        """Append ``(entry, table[cell])`` to the log, growing it, or fold it into a copy.

        A log past an eighth of the table's bytes costs more than a copy of
        the table (an entry costs a random bitmap probe and a later finiteness
        read; a copy streams; on DNA chunks with a 64 MB table, the log took
        4.2 s where copies took 2.5 s): it is folded into one (outside a savepoint no entry is then
        made; a savepoint keeps logging its writes). False when no memory is
        left (``_jfailed``).
        """
        cdef Py_ssize_t limit, cap
        cdef JournalEntry* grown
        if self._jlen == self._jcap:
            limit = self._journal_limit()
            if self._jsnapshot == NULL and self._jlen >= limit:
                if not self._journal_all():
                    return False
                if not self._jsave:
                    return True
        if self._jlen == self._jcap:
            cap = max(_JOURNAL_MIN_ENTRIES, 2 * self._jcap)
            if not self._jsave:
                cap = min(cap, self._journal_limit())
            grown = <JournalEntry*>realloc(self._jlog, cap * sizeof(JournalEntry))
            if grown == NULL:
                self._jfailed = True
                return False
            self._jlog = grown
            self._jcap = cap
        self._jlog[self._jlen].cell = entry
        self._jlog[self._jlen].old = self._t64[cell] if self._is64 else self._t32[cell]
        self._jlen += 1
        return True

    cdef Py_ssize_t _table_bytes(self) noexcept nogil:
        return self.depth * self.width * (sizeof(double) if self._is64 else sizeof(float))

    cdef Py_ssize_t _journal_limit(self) noexcept nogil:
        """Entries past which the log is folded into a copy: an eighth of the table's bytes."""
        return max(_JOURNAL_MIN_ENTRIES,
                   self._table_bytes() // (8 * <Py_ssize_t>sizeof(JournalEntry)))

    cdef bint _journal_all(self) noexcept nogil:
        """Cover every cell: a copy of the table as it was when the journal began.

        The copy is the current table with the logged old values written back
        (newest first, so each cell ends with its oldest); the log is then
        emptied, but for the entries of an open savepoint, which it needs to
        undo its own writes. Nothing to do without a journal or with a copy
        already. False when the copy cannot be allocated (``_jfailed``;
        nothing changed).
        """
        cdef Py_ssize_t i, c, n = self._table_bytes(), keep_from
        cdef float* snap32
        cdef double* snap64
        if not self._jon or self._jsnapshot != NULL:
            return True
        self._jsnapshot, self._jspare = (self._jspare if self._jspare != NULL else malloc(n)), NULL
        if self._jsnapshot == NULL:
            self._jfailed = True
            return False
        memcpy(self._jsnapshot, self._t64 if self._is64 else <void*>self._t32, n)
        snap32 = <float*>self._jsnapshot
        snap64 = <double*>self._jsnapshot
        i = self._jlen
        while i > 0:
            i -= 1
            c = self._jlog[i].cell
            if c < 0:
                c = ~c
            if self._is64:
                snap64[c] = self._jlog[i].old
            else:
                snap32[c] = <float>self._jlog[i].old
        # The bits now belong to the savepoint's entries only.
        keep_from = self._jmark if self._jsave else self._jlen
        for i in range(keep_from):
            c = self._jlog[i].cell
            if c >= 0:
                self._jbits[c >> 6] &= ~((<uint64_t>1) << (c & 63))
        if self._jsave:
            memmove(self._jlog, &self._jlog[keep_from],
                    (self._jlen - keep_from) * sizeof(JournalEntry))
            self._jlen -= keep_from
            self._jmark = 0
        else:
            free(self._jlog)
            self._jlog = NULL
            self._jlen = self._jcap = 0
        return True

    cdef void _journal_replay(self, Py_ssize_t stop) noexcept nogil:
        """Write back the old values of the entries from ``stop`` on, newest first."""
        cdef Py_ssize_t i = self._jlen, c
        while i > stop:
            i -= 1
            c = self._jlog[i].cell
            if c >= 0:
                self._jbits[c >> 6] &= ~((<uint64_t>1) << (c & 63))
            else:
                c = ~c
            if self._is64:
                self._t64[c] = self._jlog[i].old
            else:
                self._t32[c] = <float>self._jlog[i].old
        self._jlen = stop

    cdef void _journal_close(self) noexcept nogil:
        """Forget the journal: free its bitmap, log and copy (the copy is kept
        for the next journal while ``hold_journal_memory`` is on).

        Otherwise nothing of a journal outlives it, so ``memory_bytes`` (the
        table and the seeds) is all a sketch holds between training calls.
        """
        free(self._jbits)
        free(self._jlog)
        if self._jkeep and self._jspare == NULL:
            self._jspare = self._jsnapshot
        else:
            free(self._jsnapshot)
        self._jbits = NULL
        self._jlog = NULL
        self._jsnapshot = NULL
        self._jlen = self._jcap = 0
        self._jon = self._jsave = self._jfailed = False

    cdef void _savepoint_release(self) noexcept nogil:
        """End the savepoint keeping its writes: drop the entries the journal does not need.

        A repeat write's entry is dropped (the cell's first entry holds its old
        value), and every entry when the journal holds a copy; the log is
        folded if it is now past its limit.
        """
        cdef Py_ssize_t i, c, n = self._jmark
        for i in range(self._jmark, self._jlen):
            c = self._jlog[i].cell
            if self._jsnapshot != NULL:
                if c >= 0:
                    self._jbits[c >> 6] &= ~((<uint64_t>1) << (c & 63))
            elif c >= 0:
                self._jlog[n] = self._jlog[i]
                n += 1
        self._jlen = self._jmark if self._jsnapshot != NULL else n
        self._jsave = False
        if self._jsnapshot == NULL and self._jlen >= self._journal_limit():
            self._journal_all()
        self._journal_shrink()

    cdef void _journal_shrink(self) noexcept nogil:
        """Give back the log's room past twice its entries (a savepoint may have grown it)."""
        cdef Py_ssize_t cap = max(_JOURNAL_MIN_ENTRIES, 2 * self._jlen)
        cdef JournalEntry* shrunk
        if self._jlen == 0:
            free(self._jlog)
            self._jlog = NULL
            self._jcap = 0
        elif self._jcap > cap:
            shrunk = <JournalEntry*>realloc(self._jlog, cap * sizeof(JournalEntry))
            if shrunk != NULL:
                self._jlog = shrunk
                self._jcap = cap

    cdef Py_ssize_t _undo_point(self) except -2:
        """Make the next writes undoable: a journal (returns -1) or, in an open one, a savepoint.

        A savepoint (returns 0) logs every write, so :meth:`_undo_to` can
        restore the values it found, which the journal's first-write entries
        do not hold.
        """
        if not self._jon:
            self.journal_begin()
            return -1
        if self._jsave:
            raise RuntimeError("a savepoint is already open on this sketch")
        if self._jfailed:
            raise MemoryError("the open journal of this sketch failed to allocate its log")
        self._jsave = True
        self._jmark = self._jlen
        return 0

    cdef int _undo_release(self, Py_ssize_t mark) except -1:
        """Keep the writes since :meth:`_undo_point` returned ``mark``."""
        if mark < 0:
            self.journal_commit()
        else:
            self._savepoint_release()
        return 0

    cdef int _undo_to(self, Py_ssize_t mark) except -1:
        """Undo the writes since :meth:`_undo_point` returned ``mark``, bit for bit."""
        if mark < 0:
            self.journal_rollback()
        else:
            self._journal_replay(self._jmark)
            self._jsave = False
            self._journal_shrink()
        return 0

    # ---------------------------------------------------------------- Python API
    @property
    def dtype(self):
        _ready(self)
        return self._table_arr.dtype

    @property
    def seeds(self):
        _ready(self)
        return self._seeds_arr.copy()

    @property
    def table(self):
        _ready(self)
        view = self._table_arr.view()
        view.flags.writeable = False
        return view

    @property
    def scale_factor(self):
        return self._scale

    @property
    def memory_bytes(self):
        _ready(self)
        return int(self._table_arr.nbytes + self._seeds_arr.nbytes)

    def update(self, keys, deltas):
        """Add ``deltas[i]`` to the value of ``keys[i]``, in order.

        Parameters
        ----------
        keys : array-like of int, shape (n,)
            Feature keys (any int64; repeated keys accumulate).
        deltas : array-like of float, shape (n,)
            Finite increments.

        Raises
        ------
        ValueError
            When a cell would overflow its dtype; the sketch is then unchanged.
        MemoryError
            When the undo log cannot be allocated; the sketch is then unchanged.

        Notes
        -----
        The undo is the sketch's journal: the update opens one and commits it,
        or, inside a journal opened by :meth:`journal_begin`, runs as a
        savepoint of it (which logs every write of the update until it ends,
        so its log is up to ``depth`` entries per key for that time).
        """
        _ready(self)
        key_arr, delta_arr = self._check_pairs(keys, deltas)
        cdef const int64_t[::1] k = key_arr
        cdef const double[::1] d = delta_arr
        if k.shape[0] == 0:
            return
        # The journal (or, in an open one, a savepoint) logs the touched cells'
        # previous values: an overflow restores them exactly.
        cdef Py_ssize_t mark = self._undo_point()
        cdef bint finite
        with nogil:
            finite = self.add_many(&k[0], &d[0], k.shape[0])
        if finite:
            self._undo_release(mark)
            return
        failed = self._jfailed
        self._undo_to(mark)
        if failed:
            raise MemoryError("cannot allocate the undo log of the update; the sketch is "
                              "unchanged")
        raise ValueError(
                f"the update overflows the sketch's {self.dtype.name} cells (largest "
                f"|delta| {np.abs(delta_arr).max():.3g}, scale factor {self._scale:.3g}); "
                "the sketch is unchanged")

    def query(self, keys):
        """Estimated values of ``keys``: the median over rows.

        Parameters
        ----------
        keys : array-like of int, shape (n,)
            Feature keys.

        Returns
        -------
        values : ndarray of float64, shape (n,)
        """
        _ready(self)
        key_arr = _as_key_array(np.atleast_1d(keys))
        if key_arr.ndim != 1:
            raise ValueError(f"keys must be 1-D, got shape {key_arr.shape}")
        out = np.empty(key_arr.shape[0], dtype=np.float64)
        cdef const int64_t[::1] k = key_arr
        cdef double[::1] o = out
        if k.shape[0] == 0:
            return out
        with nogil:
            self.estimate_many(&k[0], &o[0], k.shape[0])
        return out

    def scale(self, factor):
        """Multiply every value by ``factor`` in O(1).

        Parameters
        ----------
        factor : float
            Finite multiplier; ``0`` clears the sketch. O(1) when ``|factor| <= 1``;
            a larger one reads the table to check that no value overflows.

        Raises
        ------
        ValueError
            When a value or the scale factor would overflow (nothing changes).
        """
        _ready(self)
        if isinstance(factor, (bool, np.bool_)) or not isinstance(factor, numbers.Real):
            raise TypeError(f"factor must be a real number, got {type(factor).__name__}")
        if not np.isfinite(factor):
            raise ValueError(f"factor must be finite, got {factor}")
        _check_scaling(self._scale, float(factor), self._table_arr, "value")
        if not self.multiply(float(factor)):
            raise MemoryError("cannot copy the table for the open journal; nothing was "
                              "changed")

    def clear(self):
        """Set every value to zero (the seeds are kept)."""
        _ready(self)
        self._cover_all_cells()
        self._scale = 0.0
        self._renormalize()

    def _cover_all_cells(self):
        """Before a write to every cell: make the open journal (if any) hold a copy."""
        if not self._journal_all():
            raise MemoryError("cannot copy the table for the open journal; nothing was "
                              "changed")

    def journal_begin(self, expected_writes=0):
        """Open a journal: the writes until :meth:`journal_commit` become undoable.

        The first write to each cell logs its previous value (once: a bitmap
        of one bit per cell, allocated with the journal and freed with it, marks
        the cells logged); the scale factor is saved now. Every write path
        goes through the journal: :meth:`update`, :meth:`scale`,
        :meth:`clear`, :meth:`merge`, :meth:`set_table` and the training
        kernels. A rollback then costs the cells touched, not the table.

        Parameters
        ----------
        expected_writes : int, default=0
            Cell writes the caller expects (a bound is enough: a training
            call knows its non-zeros times the depth). When they could fill
            the log past an eighth of the table's bytes, the journal takes its copy
            of the table now instead of logging first and copying later.

        Raises
        ------
        RuntimeError
            When a journal is already open.
        MemoryError
            When the bitmap (or the copy) cannot be allocated.

        Examples
        --------
        >>> from sklearn_sketch import CountSketch
        >>> cs = CountSketch(64, 3, random_state=0)
        >>> cs.update([1, 2], [1.0, 2.0])
        >>> cs.journal_begin()
        >>> cs.update([1, 1, 3], [5.0, 5.0, 7.0])
        >>> cs.journal_cells              # 2 keys x 3 rows, each cell logged once
        6
        >>> cs.journal_rollback()
        >>> cs.query([1, 2, 3]).tolist()
        [1.0, 2.0, 0.0]
        """
        _ready(self)
        if self._jon:
            raise RuntimeError("a journal is already open on this sketch")
        if self._jbits == NULL:
            self._jbits = <uint64_t*>calloc((self.depth * self.width + 63) // 64,
                                            sizeof(uint64_t))
            if self._jbits == NULL:
                raise MemoryError("cannot allocate the journal's bitmap")
        if isinstance(expected_writes, (bool, np.bool_)) or not isinstance(
                expected_writes, numbers.Integral) or expected_writes < 0:
            raise ValueError(f"expected_writes must be a non-negative integer, "
                             f"got {expected_writes!r}")
        self._jlen = self._jcap = 0
        self._jsave = self._jfailed = False
        self._jscale = self._scale
        self._jon = True
        if expected_writes >= self._journal_limit() and not self._journal_all():
            self._journal_close()
            raise MemoryError("cannot copy the table for the journal")

    def journal_rollback(self):
        """Undo every write since :meth:`journal_begin` (cells and scale, bit for bit) and close it.

        Raises
        ------
        RuntimeError
            When no journal is open.
        """
        self._check_journal()
        with nogil:
            self._journal_replay(0)
            if self._jsnapshot != NULL:
                memcpy(self._t64 if self._is64 else <void*>self._t32, self._jsnapshot,
                       self._table_bytes())
            self._scale = self._jscale
            self._journal_close()

    def journal_commit(self):
        """Keep the writes since :meth:`journal_begin` and close the journal (its log is freed).

        Raises
        ------
        RuntimeError
            When no journal is open.
        """
        self._check_journal()
        with nogil:
            self._journal_close()

    def journal_finite(self):
        """Whether the scale factor and every cell written since :meth:`journal_begin` are finite.

        The cells not written keep the values they had, so a sketch finite
        when the journal began is finite now exactly when this holds. Costs
        the cells logged (the whole table once the journal holds a copy).

        Returns
        -------
        finite : bool

        Raises
        ------
        RuntimeError
            When no journal is open.
        """
        self._check_journal()
        if self._jsnapshot != NULL:
            return self.all_finite()
        if not (isfinite(self._scale) and self._scale != 0.0):
            return False
        cdef Py_ssize_t i, c
        cdef double value
        cdef bint finite = True
        with nogil:
            for i in range(self._jlen):
                c = self._jlog[i].cell
                if c < 0:
                    c = ~c
                value = self._t64[c] if self._is64 else self._t32[c]
                if not (isfinite(value) and isfinite(value * self._scale)):
                    finite = False
                    break
        return finite

    def all_finite(self):
        """Whether the scale factor and every cell times it are finite (no allocation).

        Returns
        -------
        finite : bool
        """
        _ready(self)
        cdef Py_ssize_t i, n = self.depth * self.width
        cdef double scale = self._scale
        cdef const uint32_t* bits32 = <const uint32_t*>self._t32
        cdef const uint64_t* bits64 = <const uint64_t*>self._t64
        cdef uint32_t bad32 = 0
        cdef uint64_t bad64 = 0
        if not (isfinite(scale) and scale != 0.0):
            return False
        with nogil:
            # Infinity and NaN have every exponent bit set: an integer test the
            # compiler vectorises (the extensions build with -fno-strict-aliasing).
            if self._is64:
                for i in range(n):
                    bad64 |= (bits64[i] & 0x7FF0000000000000ULL) == 0x7FF0000000000000ULL
            else:
                for i in range(n):
                    bad32 |= (bits32[i] & 0x7F800000U) == 0x7F800000U
        if bad32 or bad64:
            return False
        if fabs(scale) <= 1.0:
            return True
        # A scale above 1 (only CountSketch.scale makes one) may overflow a finite cell.
        return bool(isfinite(float(self._table_arr.max()) * scale)
                    and isfinite(float(self._table_arr.min()) * scale))

    def _check_journal(self):
        _ready(self)
        if not self._jon:
            raise RuntimeError("no journal is open on this sketch (see journal_begin)")
        if self._jsave:
            raise RuntimeError("a savepoint is open on this sketch")

    @property
    def journaling(self):
        return bool(self._jon)

    @property
    def journal_failed(self):
        """Whether the open journal could not allocate its log or copy (writes were refused)."""
        return bool(self._jon and self._jfailed)

    @property
    def journal_cells(self):
        if not self._jon:
            return 0
        if self._jsnapshot != NULL:
            return self.depth * self.width
        cdef Py_ssize_t i, n = 0
        for i in range(self._jlen):
            n += self._jlog[i].cell >= 0
        return n

    def hold_journal_memory(self, bint hold):
        """Keep a journal's copy of the table for the next journal (``hold=True``), or
        free it and stop keeping it (``hold=False``).

        A stream of training calls on a large table (each a journal that
        copies the table) then reuses one copy instead of new memory each
        call, whose first touch costs a page fault per page: feature hashing
        with 2**24 cells over twenty 10,000-read DNA chunks made 300,000
        faults, a third of a second. The kept copy is counted in
        :attr:`journal_bytes`.

        Examples
        --------
        >>> from sklearn_sketch import CountSketch
        >>> cs = CountSketch(1024, 3, random_state=0)
        >>> cs.hold_journal_memory(True)
        >>> cs.journal_begin(expected_writes=10**6)  # enough to copy the table
        >>> cs.journal_commit()
        >>> cs.journal_bytes                         # the copy, kept: 3 x 1024 float32
        12288
        >>> cs.hold_journal_memory(False)
        >>> cs.journal_bytes
        0
        """
        self._jkeep = hold
        if not hold:
            free(self._jspare)
            self._jspare = NULL

    @property
    def journal_bytes(self):
        cdef Py_ssize_t n = 0
        if self._jspare != NULL:
            n += self._table_bytes()
        if self._jbits != NULL:
            n += (self.depth * self.width + 63) // 64 * sizeof(uint64_t)
        n += self._jcap * sizeof(JournalEntry)
        if self._jsnapshot != NULL:
            n += self._table_bytes()
        return int(n)

    def same_configuration(self, other):
        """Whether ``other`` hashes keys exactly as this sketch (shape, dtype, seeds)."""
        _ready(self)
        return (isinstance(other, CountSketch)
                and self.width == other.width and self.depth == other.depth
                and self.dtype == other.dtype
                and np.array_equal(self._seeds_arr, other.seeds))

    def _check_initialised(self):
        """Raise ``RuntimeError`` unless the sketch went through ``__init__``."""
        _ready(self)

    def merge(self, CountSketch other not None):
        """Add ``other`` into this sketch (the sketch of the sum of both vectors).

        Parameters
        ----------
        other : CountSketch
            A sketch with the same width, depth, dtype and seeds.
        """
        _ready(self)
        _ready(other)
        if not self.same_configuration(other):
            raise ValueError(
                "cannot merge Count-Sketches with different configurations: "
                f"(width={self.width}, depth={self.depth}, dtype={self.dtype}) and "
                f"(width={other.width}, depth={other.depth}, dtype={other.dtype}), "
                "or different seeds")
        self._cover_all_cells()
        ratio = other._scale / self._scale
        if not np.isfinite(ratio):
            self._renormalize()
            ratio = other._scale
        with np.errstate(over="ignore"):
            merged = self._table_arr + (other._table_arr * ratio).astype(self.dtype, copy=False)
        if not np.isfinite(merged).all():
            raise ValueError("the merged sketch overflows its cells; this sketch is unchanged")
        self._table_arr[...] = merged

    @staticmethod
    def weighted_sum(sketches, weights):
        """The sketch of ``sum_i weights[i] * x_i``, where ``sketches[i]`` sketches ``x_i``.

        A new sketch; the inputs are not changed. Each table is read once
        (scaling copies and merging them reads and writes every table three
        times), a block at a time.

        Parameters
        ----------
        sketches : sequence of CountSketch
            Sketches of one configuration (see :meth:`same_configuration`).
        weights : sequence of float
            One finite weight per sketch.

        Returns
        -------
        CountSketch
            Scale factor 1.

        Raises
        ------
        ValueError
            Sketches of other configurations, weights of another length or
            not finite, or a sum that overflows the cells.

        Examples
        --------
        >>> from sklearn_sketch._core import CountSketch
        >>> a, b = CountSketch(64, 3, seeds=[1, 2, 3]), CountSketch(64, 3, seeds=[1, 2, 3])
        >>> a.update([7], [2.0]); b.update([7], [4.0])
        >>> float(CountSketch.weighted_sum([a, b], [0.5, 0.5]).query([7])[0])
        3.0
        """
        sketches = list(sketches)
        weights = np.asarray(weights, dtype=np.float64)
        if not sketches or weights.shape != (len(sketches),) or not np.isfinite(weights).all():
            raise ValueError(f"weighted_sum needs one finite weight per sketch, got "
                             f"{weights.size} weights for {len(sketches)} sketches")
        cdef CountSketch first = sketches[0], sketch
        _ready(first)
        for sketch in sketches:
            if not first.same_configuration(sketch):
                raise ValueError("cannot add Count-Sketches of different configurations "
                                 "(width, depth, dtype or seeds)")
        factors = [float(w) * (<CountSketch>s)._scale for w, s in zip(weights, sketches)]
        tables = [(<CountSketch>s)._table_arr.reshape(-1) for s in sketches]
        table = np.empty_like(first._table_arr)
        out = table.reshape(-1)
        # Summed in float64 a block at a time (a block stays in cache): a weight
        # times a scale factor need not fit the cells' type, only the sum must.
        block = 1 << 15
        total = np.empty(min(block, out.size))
        term = np.empty_like(total)
        with np.errstate(over="ignore", invalid="ignore"):
            for a in range(0, out.size, block):
                b = min(a + block, out.size)
                part, add = total[:b - a], term[:b - a]
                np.multiply(tables[0][a:b], factors[0], out=part, dtype=np.float64)
                for values, factor in zip(tables[1:], factors[1:]):
                    part += np.multiply(values[a:b], factor, out=add, dtype=np.float64)
                out[a:b] = part
                if not np.isfinite(out[a:b]).all():
                    raise ValueError("the weighted sum overflows the sketch's cells")
        cdef CountSketch result = CountSketch.__new__(CountSketch)
        result._init_arrays(first.width, first.depth, first._seeds_arr.copy(), table, 1.0)
        return result

    def copy(self):
        """An independent copy."""
        _ready(self)
        cdef CountSketch out = CountSketch.__new__(CountSketch)
        out._init_arrays(self.width, self.depth, self._seeds_arr.copy(),
                         self._table_arr.copy(), self._scale)
        return out

    def __deepcopy__(self, memo):
        # One copy of the table (the pickle route of __reduce__ makes three).
        return self.copy()

    def buckets(self, keys):
        """Buckets and signs of ``keys`` in every row (see ``bucket_and_sign_arrays``)."""
        _ready(self)
        from ._murmurhash import bucket_and_sign_arrays

        return bucket_and_sign_arrays(keys, self._seeds_arr, self.width)

    def to_array(self):
        """The sketch's cell values (``table * scale_factor``) as float64."""
        _ready(self)
        return self._table_arr.astype(np.float64) * self._scale

    def _check_pairs(self, keys, deltas):
        key_arr = _as_key_array(np.atleast_1d(keys))
        delta_arr = _as_finite_values(np.atleast_1d(deltas))
        if key_arr.ndim != 1 or delta_arr.ndim != 1:
            raise ValueError(
                f"keys and deltas must be 1-D, got shapes {key_arr.shape} and {delta_arr.shape}")
        if key_arr.shape[0] != delta_arr.shape[0]:
            raise ValueError(
                f"keys and deltas have different lengths: {key_arr.shape[0]} != {delta_arr.shape[0]}")
        return key_arr, delta_arr

    def set_table(self, table, scale_factor=1.0):
        """Replace the stored cells and the scale (the sketch's values are their product).

        Parameters
        ----------
        table : array-like of shape (depth, width)
            Finite cells, of the sketch's dtype (copied).
        scale_factor : float, default=1.0
            Finite global factor, ``|scale_factor| >= 1e-9`` (smaller factors
            are folded into the table, so a sketch never holds one).

        Examples
        --------
        >>> import numpy as np
        >>> from sklearn_sketch import CountSketch
        >>> cs = CountSketch(4, 1, seeds=[1])
        >>> cs.set_table(np.array([[1, 2, 3, 4]], dtype=np.float32), 0.5)
        >>> cs.to_array().tolist()
        [[0.5, 1.0, 1.5, 2.0]]
        """
        arr = np.asarray(table)
        if arr.dtype != self.dtype or arr.shape != (self.depth, self.width):
            raise ValueError(
                f"table must be {self.dtype} of shape ({self.depth}, {self.width}), "
                f"got {arr.dtype} {arr.shape}")
        if isinstance(scale_factor, (bool, np.bool_)) or not isinstance(scale_factor,
                                                                       numbers.Real):
            raise TypeError(f"scale_factor must be a real number, "
                            f"got {type(scale_factor).__name__}")
        if not np.isfinite(scale_factor) or abs(scale_factor) < _MIN_SCALE:
            raise ValueError(f"scale_factor must be finite with |scale_factor| >= 1e-9, "
                             f"got {scale_factor}")
        if not np.isfinite(arr).all():
            raise ValueError("table must be finite; got NaN or infinity")
        self._cover_all_cells()
        np.copyto(self._table_arr, arr)
        self._scale = float(scale_factor)

    def __reduce__(self):
        # The live table, not a copy: pickling writes it out (or, out of band, hands
        # it over as a buffer, as for any numpy array), and _rebuild_count_sketch
        # copies what it is given.
        return (_rebuild_count_sketch,
                (self.width, self.depth, self._seeds_arr.copy(), self._table_arr,
                 self._scale))

    def __repr__(self):
        return (f"CountSketch(width={self.width}, depth={self.depth}, "
                f"dtype={self.dtype.name})")


def _rebuild_count_sketch(width, depth, seeds, table, scale):
    """Unpickle a sketch: its public constructor, then :meth:`CountSketch.set_table`.

    Every size is checked against the arrays given before anything is
    allocated, so a forged pickle raises instead of reading out of bounds.
    """
    table = np.asarray(table)
    if table.dtype.kind != "f" or table.shape != (depth, width):
        raise ValueError(f"a CountSketch of width {width!r} and depth {depth!r} needs a float "
                         f"table of that shape, got {table.dtype} {table.shape}")
    out = CountSketch(width, depth, dtype=table.dtype, seeds=seeds)
    out.set_table(table, scale)
    return out
