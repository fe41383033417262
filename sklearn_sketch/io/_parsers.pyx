"""Block parsers of the streaming readers: svmlight, Vowpal Wabbit, FASTA, FASTQ.

A parser is fed a buffer of bytes and an offset. ``parse`` reads the complete
units after the offset (lines; records for FASTA and FASTQ) until it holds
``max_units`` of them, appends them to its own growable arrays, and returns the
offset where it stopped: the caller keeps the unparsed tail (a partial line or
record) and feeds it again with the next block. ``take`` hands the accumulated
units over and empties the parser. The scan runs without the GIL; Python
objects are only made per chunk (arrays) or per read (names and sequences).

On a malformed unit the parser either stops at it and records an error code,
line and byte span (``on_error="raise"``; the reader turns them into a
``ParseError``), or drops the unit and counts it (``on_error="skip"``).
"""
import numpy as np

cimport cython
cimport numpy as cnp
from cpython.exc cimport PyErr_Clear, PyErr_Occurred
from cpython.ref cimport PyObject
from libc.math cimport INFINITY, NAN, copysign
from libc.stdint cimport int32_t, int64_t, uint64_t
from libc.stdlib cimport calloc, free, malloc, realloc, strtod
from libc.string cimport memchr, memcmp, memcpy, memset

from .._core._murmurhash cimport cross_key, murmurhash3_64_bytes

cnp.import_array()

cdef extern from "Python.h":
    double PyOS_string_to_double(const char* s, char** endptr,
                                 PyObject* overflow_exception)
    object PyUnicode_DecodeUTF8(const char* s, Py_ssize_t size, const char* errors)
    object PyBytes_FromStringAndSize(const char* v, Py_ssize_t size)
    char* PyBytes_AS_STRING(object o)

cdef int64_t INT64_MAX = 0x7FFFFFFFFFFFFFFF

# Modes of the svmlight column base.
cdef enum:
    BASE_ZERO = 0
    BASE_ONE = 1
    BASE_UNDECIDED = 2

# Outcomes of a line or record.
cdef enum:
    UNIT_OK = 0
    UNIT_BLANK = 1
    UNIT_ERROR = 2

# Error codes; messages in _MESSAGES.
cdef enum:
    E_NONE = 0
    E_NOMEM
    E_BAD_LABEL
    E_BAD_VALUE
    E_MISSING_COLON
    E_BAD_INDEX
    E_INDEX_OVERFLOW
    E_NEGATIVE_INDEX
    E_ZERO_INDEX
    E_ZERO_INDEX_AUTO
    E_UNSORTED
    E_INDEX_RANGE
    E_BAD_QID
    E_MISSING_BAR
    E_LABEL_FIELDS
    E_BAD_IMPORTANCE
    E_BAD_BASE
    E_EMPTY_NAME
    E_NO_HEADER
    E_BAD_HEADER
    E_SEQ_CHAR
    E_NO_AT
    E_NO_PLUS
    E_PLUS_MISMATCH
    E_QUAL_LEN
    E_QUAL_CHAR
    E_TRUNCATED

_MESSAGES = {
    E_BAD_LABEL: "bad label {token}: not a number",
    E_BAD_VALUE: "bad feature value {token}: not a number",
    E_MISSING_COLON: "feature {token} has no ':' between index and value",
    E_BAD_INDEX: "bad feature index {token}: not an integer",
    E_INDEX_OVERFLOW: "feature index {token} is out of the int64 range",
    E_NEGATIVE_INDEX: "negative feature index {token}",
    E_ZERO_INDEX: "feature index 0 in {token} but zero_based=False",
    E_ZERO_INDEX_AUTO: ("feature index 0 in {token}, but zero_based='auto' judged the file "
                        "one-based from its first block; pass zero_based=True"),
    E_UNSORTED: "feature indices must be sorted and unique within a line, got {token}",
    E_INDEX_RANGE: "feature index in {token} is not below n_features={n_features}",
    E_BAD_QID: "bad qid {token}: not an integer",
    E_MISSING_BAR: "no '|' in {token}: an example needs at least one namespace",
    E_LABEL_FIELDS: ("too many fields before the first '|': {token} "
                     "(expected label [importance [base]] [tag])"),
    E_BAD_IMPORTANCE: "bad importance weight {token}: not a non-negative number",
    E_BAD_BASE: "bad initial prediction {token}: not a number",
    E_EMPTY_NAME: "feature {token} has an empty name",
    E_NO_HEADER: "expected a '>' header line, got {token}",
    E_BAD_HEADER: "header {token} is not printable UTF-8 text",
    E_SEQ_CHAR: "invalid sequence character {token} (letters, '*', '-', '.' expected)",
    E_NO_AT: "FASTQ record does not start with '@': {token}",
    E_NO_PLUS: "a FASTQ record's sequence is followed by {token}, not by a '+' line",
    E_PLUS_MISMATCH: "'+' line {token} does not repeat the header",
    E_QUAL_LEN: "quality line {token} has {a} characters, the sequence {b}",
    E_QUAL_CHAR: "invalid quality character {token} ('!' to '~' expected)",
    E_TRUNCATED: "truncated FASTQ record {token}: the file ends {where}",
}

# Byte classes: ASCII whitespace as bytes.split() sees it, sequence letters.
cdef bint IS_SPACE[256]
cdef bint IS_SEQ[256]
for _c in range(256):
    IS_SPACE[_c] = _c in b" \t\n\r\x0b\x0c"
    IS_SEQ[_c] = (65 <= _c <= 90) or (97 <= _c <= 122) or _c in b"*-."

cdef double[23] POW10
for _c in range(23):
    POW10[_c] = 10.0 ** _c


# ------------------------------------------------------------ growable buffer
cdef struct Buffer:
    char* ptr
    Py_ssize_t size
    Py_ssize_t capacity


cdef int _reserve(Buffer* b, Py_ssize_t extra) noexcept nogil:
    """Room for ``extra`` more bytes; -1 when out of memory."""
    cdef Py_ssize_t need = b.size + extra
    if need <= b.capacity:
        return 0
    cdef Py_ssize_t capacity = max(need, 2 * b.capacity, 4096)
    cdef char* ptr = <char*>realloc(b.ptr, capacity)
    if ptr == NULL:
        return -1
    b.ptr = ptr
    b.capacity = capacity
    return 0


cdef inline int _push_i64(Buffer* b, int64_t x) noexcept nogil:
    if _reserve(b, 8):
        return -1
    memcpy(b.ptr + b.size, &x, 8)
    b.size += 8
    return 0


cdef inline int _push_f64(Buffer* b, double x) noexcept nogil:
    if _reserve(b, 8):
        return -1
    memcpy(b.ptr + b.size, &x, 8)
    b.size += 8
    return 0


cdef enum:
    # Arrays of at least this many bytes take their memory from the parser's pool.
    POOLED_MIN_BYTES = 1 << 20
    POOL_SLOTS = 32


cdef extern from *:
    """
    #if defined(__linux__)
    #include <sys/mman.h>
    #endif
    /* Ask for transparent huge pages over the block, as NumPy does for large
       arrays: one fault per 2 MB instead of one per 4 KB. */
    static void sketch_advise_huge_pages(void* ptr, size_t size) {
    #if defined(__linux__) && defined(MADV_HUGEPAGE)
        uintptr_t start = ((uintptr_t)ptr + 4095) & ~(uintptr_t)4095;
        uintptr_t end = ((uintptr_t)ptr + size) & ~(uintptr_t)4095;
        if (end > start) madvise((void*)start, end - start, MADV_HUGEPAGE);
    #else
        (void)ptr; (void)size;
    #endif
    }
    """
    void sketch_advise_huge_pages(void* ptr, size_t size) noexcept nogil


cdef class _BlockPool:
    """Memory blocks of a parser's dead arrays, kept to back its next arrays.

    A chunk's arrays are tens of MB; fresh memory for each chunk costs a page
    fault per page (half a second per GB here, more than parsing the bytes),
    recycled memory costs nothing. Blocks come back when the chunk's arrays are
    garbage; the pool keeps up to ``POOL_SLOTS`` and frees them when it dies,
    so it never holds more than the reader had in flight. Used under the GIL
    only, which orders ``get`` and ``keep``.
    """

    cdef void* ptrs[POOL_SLOTS]
    cdef Py_ssize_t capacities[POOL_SLOTS]
    cdef int n

    def __dealloc__(self):
        cdef int i
        for i in range(self.n):
            free(self.ptrs[i])

    cdef void* get(self, Py_ssize_t size, Py_ssize_t* capacity):
        """A block of at least ``size`` bytes and at most about twice that (the
        smallest such kept block, else a new one); NULL when out of memory."""
        cdef int i, best = -1
        cdef void* ptr
        for i in range(self.n):
            if size <= self.capacities[i] <= 2 * size and (
                    best < 0 or self.capacities[i] < self.capacities[best]):
                best = i
        if best < 0:
            # Room for the next chunk's arrays, which are rarely of the same size.
            capacity[0] = size + size // 4
            ptr = malloc(capacity[0])
            if ptr != NULL:
                sketch_advise_huge_pages(ptr, capacity[0])
            return ptr
        ptr = self.ptrs[best]
        capacity[0] = self.capacities[best]
        self.n -= 1
        self.ptrs[best], self.capacities[best] = self.ptrs[self.n], self.capacities[self.n]
        return ptr

    cdef void keep(self, void* ptr, Py_ssize_t capacity):
        """Take back a block; free it when the pool is full."""
        if self.n == POOL_SLOTS:
            free(ptr)
            return
        self.ptrs[self.n], self.capacities[self.n] = ptr, capacity
        self.n += 1


@cython.no_gc
cdef class _PooledMemory:
    """The memory behind one array (its ``base``); back to the pool when the array dies."""

    cdef void* ptr
    cdef Py_ssize_t capacity
    cdef _BlockPool pool

    def __dealloc__(self):
        if self.ptr != NULL:
            self.pool.keep(self.ptr, self.capacity)


cdef object _take_array(Buffer* b, dtype, _BlockPool pool):
    """The buffer's items as a new array; empties the buffer.

    A large array's memory comes from ``pool`` and goes back to it when the
    array (and every view of it) is garbage.
    """
    cdef cnp.npy_intp n = b.size // np.dtype(dtype).itemsize
    cdef _PooledMemory memory
    if b.size < POOLED_MIN_BYTES:
        out = np.empty(n, dtype=dtype)
    else:
        memory = _PooledMemory()
        memory.pool = pool
        memory.ptr = pool.get(b.size, &memory.capacity)
        if memory.ptr == NULL:
            raise MemoryError()
        out = cnp.PyArray_SimpleNewFromData(1, &n, cnp.dtype(dtype).num, memory.ptr)
        cnp.set_array_base(out, memory)
    if b.size:
        memcpy(cnp.PyArray_DATA(out), b.ptr, b.size)
    b.size = 0
    return out


# ------------------------------------------------------------------ numbers
cdef inline bint _lower_is(const unsigned char* s, Py_ssize_t n, const char* word,
                           Py_ssize_t m) noexcept nogil:
    if n != m:
        return False
    cdef Py_ssize_t i
    for i in range(n):
        if (s[i] | 0x20) != <unsigned char>word[i]:
            return False
    return True


cdef int _parse_double(const unsigned char* s, const unsigned char* e, bint c_numeric,
                       double* out) noexcept nogil:
    """Parse ``[s, e)`` as Python's ``float`` does (no underscores); -1 if not a number.

    Up to 15 significant digits and a power of ten within 1e22 are exact in
    double arithmetic (Clinger's fast path); longer numbers go to ``strtod``,
    which is correctly rounded but follows LC_NUMERIC, so under a locale whose
    decimal point is not '.' they go to Python's own parser under the GIL.
    """
    cdef const unsigned char* p = s
    cdef bint negative = False, any_digit = False
    cdef uint64_t mantissa = 0
    cdef int n_digits = 0, digit
    cdef Py_ssize_t exponent = 0, exp10 = 0
    cdef bint exp_negative
    if p < e and (p[0] == c'+' or p[0] == c'-'):
        negative = p[0] == c'-'
        p += 1
    if p == e:
        return -1
    if (p[0] | 0x20) == c'i' or (p[0] | 0x20) == c'n':
        if _lower_is(p, e - p, "inf", 3) or _lower_is(p, e - p, "infinity", 8):
            out[0] = -INFINITY if negative else INFINITY
            return 0
        if _lower_is(p, e - p, "nan", 3):
            out[0] = copysign(NAN, -1.0 if negative else 1.0)
            return 0
        return -1
    while p < e and c'0' <= p[0] <= c'9':
        any_digit = True
        digit = p[0] - c'0'
        if mantissa or digit:
            if n_digits < 19:
                mantissa = mantissa * 10 + digit
            else:
                exponent += 1
            n_digits += 1
        p += 1
    if p < e and p[0] == c'.':
        p += 1
        while p < e and c'0' <= p[0] <= c'9':
            any_digit = True
            digit = p[0] - c'0'
            if mantissa or digit:
                if n_digits < 19:
                    mantissa = mantissa * 10 + digit
                    exponent -= 1
                n_digits += 1
            else:
                exponent -= 1
            p += 1
    if not any_digit:
        return -1
    if p < e and (p[0] | 0x20) == c'e':
        p += 1
        exp_negative = False
        if p < e and (p[0] == c'+' or p[0] == c'-'):
            exp_negative = p[0] == c'-'
            p += 1
        if p == e:
            return -1
        while p < e and c'0' <= p[0] <= c'9':
            if exp10 < 100000:
                exp10 = exp10 * 10 + (p[0] - c'0')
            p += 1
        exponent += -exp10 if exp_negative else exp10
    if p != e:
        return -1
    if mantissa == 0:
        out[0] = -0.0 if negative else 0.0
        return 0
    if n_digits <= 15 and -22 <= exponent <= 22:
        if exponent >= 0:
            out[0] = <double>mantissa * POW10[exponent]
        else:
            out[0] = <double>mantissa / POW10[-exponent]
        if negative:
            out[0] = -out[0]
        return 0
    return _parse_double_slow(s, e - s, c_numeric, out)


cdef int _parse_double_slow(const unsigned char* s, Py_ssize_t n, bint c_numeric,
                            double* out) noexcept nogil:
    """Correctly rounded conversion of a validated number of ``n`` bytes."""
    cdef char small[64]
    cdef char* text = small
    if n >= 64:
        text = <char*>malloc(n + 1)
    if text == NULL:
        return -1
    memcpy(text, s, n)
    text[n] = 0
    if c_numeric:
        out[0] = strtod(text, NULL)
    else:
        with gil:
            out[0] = PyOS_string_to_double(text, NULL, NULL)
            if PyErr_Occurred():
                PyErr_Clear()
                out[0] = NAN
    if text != small:
        free(text)
    return 0


# Outcomes of _parse_int64.
cdef enum:
    INT_OK = 0
    INT_BAD = 1
    INT_OVERFLOW = 2


cdef int _parse_int64(const unsigned char* s, const unsigned char* e,
                      int64_t* out) noexcept nogil:
    """Parse ``[s, e)`` as a signed decimal int64."""
    cdef bint negative = False
    cdef uint64_t value = 0, limit
    if s < e and (s[0] == c'+' or s[0] == c'-'):
        negative = s[0] == c'-'
        s += 1
    if s == e:
        return INT_BAD
    limit = (<uint64_t>INT64_MAX) + negative
    while s < e:
        if not c'0' <= s[0] <= c'9':
            return INT_BAD
        if value > (limit - (s[0] - c'0')) // 10:
            while s < e and c'0' <= s[0] <= c'9':
                s += 1
            return INT_OVERFLOW if s == e else INT_BAD
        value = value * 10 + (s[0] - c'0')
        s += 1
    out[0] = -<int64_t>(value - 1) - 1 if negative and value else <int64_t>value
    return INT_OK


cdef inline Py_ssize_t _skip_space(const unsigned char* p, Py_ssize_t i,
                                   Py_ssize_t e) noexcept nogil:
    while i < e and IS_SPACE[p[i]]:
        i += 1
    return i


cdef inline Py_ssize_t _token_end(const unsigned char* p, Py_ssize_t i,
                                  Py_ssize_t e) noexcept nogil:
    while i < e and not IS_SPACE[p[i]]:
        i += 1
    return i


cdef inline Py_ssize_t _rstrip(const unsigned char* p, Py_ssize_t s,
                               Py_ssize_t e) noexcept nogil:
    while e > s and IS_SPACE[p[e - 1]]:
        e -= 1
    return e


cdef bint _is_printable_utf8(const unsigned char* s, Py_ssize_t n) noexcept nogil:
    """Valid UTF-8 without C0 control characters other than tab and ``\x01``.

    ``\x01`` (Ctrl-A) separates the names of identical sequences merged into
    one record in NCBI's FASTA databases (nr, nt).
    """
    cdef Py_ssize_t i = 0, j, need
    cdef unsigned char c, lo, hi
    while i < n:
        c = s[i]
        if c < 0x80:
            if c < 0x20 and c != c'\t' and c != 0x01 or c == 0x7F:
                return False
            i += 1
            continue
        lo, hi = 0x80, 0xBF
        if 0xC2 <= c <= 0xDF:
            need = 1
        elif 0xE0 <= c <= 0xEF:
            need = 2
            if c == 0xE0:
                lo = 0xA0
            elif c == 0xED:
                hi = 0x9F
        elif 0xF0 <= c <= 0xF4:
            need = 3
            if c == 0xF0:
                lo = 0x90
            elif c == 0xF4:
                hi = 0x8F
        else:
            return False
        if i + need >= n:
            return False
        if not lo <= s[i + 1] <= hi:
            return False
        for j in range(2, need + 1):
            if not 0x80 <= s[i + j] <= 0xBF:
                return False
        i += need + 1
    return True


# -------------------------------------------------------------- base parser
cdef class _BlockParser:
    """State shared by the parsers: line count, skipped units, the last error."""

    cdef readonly Py_ssize_t line
    cdef readonly Py_ssize_t n_skipped
    cdef readonly Py_ssize_t n_units
    cdef readonly Py_ssize_t first_line
    cdef bint skip
    cdef bint c_numeric
    cdef int error
    cdef Py_ssize_t error_line, error_start, error_end, error_a, error_b
    cdef _BlockPool pool

    def __init__(self, bint skip):
        self.skip = skip
        self.pool = _BlockPool()

    def parse(self, const unsigned char[::1] buf, Py_ssize_t start, bint final,
              Py_ssize_t max_units, bint c_numeric=True):
        """Parse the complete units of ``buf[start:]``; return where parsing stopped.

        ``final`` says that ``buf`` ends the file (its last line needs no
        newline). Parsing stops after ``max_units`` units in the parser, before
        an incomplete unit, or at an error (see ``error_reason``).
        ``c_numeric`` says that ``strtod`` reads '.' as the decimal point.
        """
        cdef Py_ssize_t n = buf.shape[0], end
        cdef const unsigned char* p = &buf[0] if n else NULL
        if not 0 <= start <= n:
            raise ValueError(f"start={start} is outside the buffer of {n} bytes")
        self.error = E_NONE
        self.c_numeric = c_numeric
        with nogil:
            end = self._parse(p, start, n, final, max_units)
        if self.error == E_NOMEM:
            raise MemoryError()
        self._after_parse(buf)
        return end

    def error_reason(self, const unsigned char[::1] buf):
        """``(line, reason)`` of the error that stopped the last ``parse``, or None."""
        if self.error == E_NONE:
            return None
        token = bytes(buf[self.error_start:min(self.error_end, self.error_start + 60)])
        # Undecodable bytes and control characters are shown escaped (\xff, \x00).
        text = "".join(c if c.isprintable() else c.encode("unicode_escape").decode()
                       for c in token.decode("utf-8", "backslashreplace"))
        if self.error_end - self.error_start > 60:
            text += "..."
        reason = _MESSAGES[self.error].format(token=f"'{text}'", a=self.error_a,
                                              b=self.error_b, **self._message_fields())
        if self.error == E_MISSING_BAR and token.lstrip().startswith(b"__label__"):
            reason += (" (fastText's format, '__label__X text': the command line reads "
                       "it with --csv)")
        if self.error == E_BAD_LABEL and b"," in token:
            reason += (" (labels joined by ',' make a multi-label example: an example "
                       "takes one label here)")
        elif self.error == E_BAD_LABEL and b":" in token:
            reason += (" (a 'class:cost' label, as Vowpal Wabbit's --csoaa and --wap read "
                       "them: an example takes one label here, a class or a number)")
        return self.error_line, reason

    def _message_fields(self):
        return {}

    cdef Py_ssize_t _parse(self, const unsigned char* p, Py_ssize_t pos, Py_ssize_t n,
                           bint final, Py_ssize_t max_units) noexcept nogil:
        return pos

    cdef void _after_parse(self, const unsigned char[::1] buf):
        pass

    cdef inline int _fail(self, int code, Py_ssize_t line, Py_ssize_t start,
                          Py_ssize_t end) noexcept nogil:
        self.error = code
        self.error_line = line
        self.error_start = start
        self.error_end = end
        return UNIT_ERROR

    cdef inline void _count_unit(self, Py_ssize_t line) noexcept nogil:
        if self.n_units == 0:
            self.first_line = line
        self.n_units += 1


cdef class _LineParser(_BlockParser):
    """A unit is one line; ``_line`` parses it into the arrays or fails."""

    cdef Py_ssize_t _parse(self, const unsigned char* p, Py_ssize_t pos, Py_ssize_t n,
                           bint final, Py_ssize_t max_units) noexcept nogil:
        cdef const unsigned char* eol
        cdef Py_ssize_t line_end, next_line
        cdef int outcome
        while self.n_units < max_units and pos < n:
            eol = <const unsigned char*>memchr(p + pos, c'\n', n - pos)
            if eol == NULL:
                if not final:
                    break
                line_end = next_line = n
            else:
                line_end = eol - p
                next_line = line_end + 1
            self.line += 1
            outcome = self._line(p, pos, line_end)
            if outcome == UNIT_ERROR:
                if not self.skip or self.error == E_NOMEM:
                    self.line -= 1
                    return pos
                self.error = E_NONE
                self.n_skipped += 1
            elif outcome == UNIT_OK:
                self._count_unit(self.line)
            pos = next_line
        return pos

    cdef int _line(self, const unsigned char* p, Py_ssize_t s, Py_ssize_t e) noexcept nogil:
        return UNIT_BLANK


# ---------------------------------------------------------------- svmlight
cdef class SvmlightParser(_LineParser):
    """``label [qid:N] index:value ... [# comment]`` lines into CSR arrays.

    Parameters
    ----------
    base : {0, 1, 2}
        0 for zero-based indices, 1 for one-based (index 0 is an error, the
        stored column is index - 1), 2 while ``zero_based='auto'`` is undecided
        (read as zero-based; ``decide_base`` settles it).
    n_features : int
        Columns are below this bound.
    skip : bool
        Skip malformed lines instead of stopping at them.
    """

    cdef int base
    cdef bint auto_base
    cdef int64_t n_features
    cdef readonly int64_t min_column
    cdef Buffer indptr, indices, data, labels, qids

    def __init__(self, int base, int64_t n_features, bint skip):
        super().__init__(skip)
        self.base = base
        self.auto_base = base == BASE_UNDECIDED
        self.n_features = n_features
        self.min_column = INT64_MAX
        if _push_i64(&self.indptr, 0):
            raise MemoryError()

    def __dealloc__(self):
        free(self.indptr.ptr)
        free(self.indices.ptr)
        free(self.data.ptr)
        free(self.labels.ptr)
        free(self.qids.ptr)

    def _message_fields(self):
        return {"n_features": self.n_features}

    @property
    def nnz(self):
        """Stored features."""
        return self.data.size // 8

    def decide_base(self, const unsigned char[::1] buf, Py_ssize_t start, bint final,
                    bint c_numeric=True):
        """Settle ``zero_based='auto'`` on the complete lines of ``buf[start:]``.

        The lines are read by a throwaway zero-based parser; once they hold a
        feature, the file is zero-based if one of them has index 0, else one-based.
        """
        if self.base != BASE_UNDECIDED:
            return
        probe = SvmlightParser(BASE_ZERO, INT64_MAX, True)
        probe.parse(buf, start, final, INT64_MAX, c_numeric)
        if probe.nnz:
            self.base = BASE_ZERO if probe.min_column == 0 else BASE_ONE

    @property
    def zero_based(self):
        """True or False once decided, None while undecided."""
        return None if self.base == BASE_UNDECIDED else self.base == BASE_ZERO

    def take(self):
        """``(indptr, indices, data, y, qid, first_line)`` of the parsed rows; empties the parser."""
        pool = self.pool
        indptr = _take_array(&self.indptr, np.int64, pool)
        out = (indptr, _take_array(&self.indices, np.int64, pool),
               _take_array(&self.data, np.float64, pool),
               _take_array(&self.labels, np.float64, pool), _take_array(&self.qids, np.int64, pool),
               self.first_line)
        self.n_units = 0
        if _push_i64(&self.indptr, 0):
            raise MemoryError()
        return out

    cdef int _line(self, const unsigned char* p, Py_ssize_t s, Py_ssize_t e) noexcept nogil:
        cdef const unsigned char* hash_mark = <const unsigned char*>memchr(p + s, c'#', e - s)
        cdef Py_ssize_t row_start = self.data.size, t, colon
        cdef double label, value
        cdef int64_t index, previous = -1, qid = -1
        cdef int status
        if hash_mark != NULL:
            e = hash_mark - p
        s = _skip_space(p, s, e)
        if s == e:
            return UNIT_BLANK
        t = _token_end(p, s, e)
        if _parse_double(p + s, p + t, self.c_numeric, &label):
            return self._fail(E_BAD_LABEL, self.line, s, t)
        s = _skip_space(p, t, e)
        if e - s >= 4 and p[s] == c'q' and p[s + 1] == c'i' and p[s + 2] == c'd' \
                and p[s + 3] == c':':
            t = _token_end(p, s, e)
            if _parse_int64(p + s + 4, p + t, &qid) != INT_OK:
                return self._fail(E_BAD_QID, self.line, s, t)
            s = _skip_space(p, t, e)
        while s < e:
            t = _token_end(p, s, e)
            colon = s
            while colon < t and p[colon] != c':':
                colon += 1
            if colon == t:
                return self._row_fail(E_MISSING_COLON, s, t, row_start)
            status = _parse_int64(p + s, p + colon, &index)
            if status == INT_BAD:
                return self._row_fail(E_BAD_INDEX, s, colon, row_start)
            if status == INT_OVERFLOW:
                return self._row_fail(E_INDEX_OVERFLOW, s, colon, row_start)
            if index < 0:
                return self._row_fail(E_NEGATIVE_INDEX, s, colon, row_start)
            if index <= previous:
                return self._row_fail(E_UNSORTED, s, t, row_start)
            previous = index
            if self.base == BASE_ONE:
                if index == 0:
                    return self._row_fail(E_ZERO_INDEX_AUTO if self.auto_base else E_ZERO_INDEX,
                                          s, t, row_start)
                index -= 1
            if index >= self.n_features:
                return self._row_fail(E_INDEX_RANGE, s, t, row_start)
            if _parse_double(p + colon + 1, p + t, self.c_numeric, &value):
                return self._row_fail(E_BAD_VALUE, colon + 1, t, row_start)
            if _push_i64(&self.indices, index) or _push_f64(&self.data, value):
                return self._fail(E_NOMEM, self.line, s, s)
            if index < self.min_column:
                self.min_column = index
            s = _skip_space(p, t, e)
        if (_push_i64(&self.indptr, self.data.size // 8) or _push_f64(&self.labels, label)
                or _push_i64(&self.qids, qid)):
            return self._fail(E_NOMEM, self.line, s, s)
        return UNIT_OK

    cdef int _row_fail(self, int code, Py_ssize_t start, Py_ssize_t end,
                       Py_ssize_t row_start) noexcept nogil:
        self.data.size = row_start
        self.indices.size = row_start
        return self._fail(code, self.line, start, end)


# ------------------------------------------------------------ Vowpal Wabbit
cdef inline int _fibonacci_shift(Py_ssize_t n_slots) noexcept nogil:
    """64 minus log2 of a power of two: the shift of Fibonacci hashing into it."""
    cdef int shift = 64
    while n_slots > 1:
        n_slots >>= 1
        shift -= 1
    return shift


cdef inline Py_ssize_t _home(int64_t key, int shift) noexcept nogil:
    # Fibonacci hashing: the top bits of the product, whatever bits vary in the keys.
    return <Py_ssize_t>((<uint64_t>key * 0x9E3779B97F4A7C15ULL) >> shift)


cdef class VowpalWabbitParser(_LineParser):
    """``label [importance [base]] [tag]|namespace feature[:value] ...`` lines.

    A feature's key is the unsigned 64-bit MurmurHash3 (first half of x64_128,
    seed 0) of ``namespace + b"^" + name``, or of ``name`` in the default
    namespace, masked to ``n_bits`` bits when ``n_bits > 0``, else reduced
    modulo ``2**63 - 1`` (so every key is a valid column below ``2**63 - 1``).
    The values of a key repeated within a line (or of keys that collide) are
    summed into its first entry, and entries whose sum is 0 are dropped: each
    row holds distinct keys with non-zero values, in the order of the line.

    Parameters
    ----------
    n_bits : int
        Mask keys to this many bits; 0 for the full range.
    skip : bool
        Skip malformed lines instead of stopping at them.
    keep_names : bool, default=False
        Also keep the text of the parsed lines and, for each entry, where its
        feature (the first one of its key in the line) starts in that text,
        so that the names of chosen keys can be rebuilt later
        (:func:`vw_feature_names`).
    interactions : sequence of bytes, default=()
        Crosses of namespaces, VW's ``-q ab`` and ``--cubic abc``: each a
        string of 2 or 3 namespace letters (a namespace's first byte; a space
        for the default namespace), at most 16. Every feature of a namespace
        of the first letter is crossed with every feature of one of the
        second (and third): the cross's key is
        ``cross_key(cross_key(k1, k2), k3)`` of the parts' keys (as
        :func:`~sklearn_sketch.feature_extraction._crosses.cross_keys`), masked
        like theirs, and its value the product of theirs. Where letters repeat,
        each combination of distinct features is crossed once (VW also crosses
        a feature with itself when its value is not 1). Crosses are added after
        the line's repeated keys are summed, and summed with them.
    """

    cdef uint64_t mask
    cdef Buffer indptr, indices, data, labels, weights, scratch, starts, text
    # The namespace letter of each entry of the row being parsed, and the starts of
    # the parts of each cross entry (its start is -1 - its row in this table).
    cdef Buffer letters, crosses
    cdef readonly bint keep_names
    cdef unsigned char interaction_letters[48]
    cdef int interaction_sizes[16]
    cdef int n_interactions
    # Per-row table of the keys seen (entry numbers, -1 when empty).
    cdef int32_t* slots
    cdef Py_ssize_t n_slots

    def __init__(self, int n_bits, bint skip, bint keep_names=False, interactions=()):
        super().__init__(skip)
        self.mask = ((<uint64_t>1) << n_bits) - 1 if n_bits else 0
        self.keep_names = keep_names
        interactions = [bytes(spec) for spec in interactions]
        if len(interactions) > 16:
            raise ValueError(f"at most 16 interactions, got {len(interactions)}")
        for i, spec in enumerate(interactions):
            if not 2 <= len(spec) <= 3:
                raise ValueError(f"an interaction is 2 or 3 namespace letters, got {spec!r}")
            self.interaction_sizes[i] = len(spec)
            for r in range(len(spec)):
                self.interaction_letters[3 * i + r] = spec[r]
        self.n_interactions = len(interactions)
        if _push_i64(&self.indptr, 0):
            raise MemoryError()

    def __dealloc__(self):
        free(self.indptr.ptr)
        free(self.indices.ptr)
        free(self.data.ptr)
        free(self.labels.ptr)
        free(self.weights.ptr)
        free(self.scratch.ptr)
        free(self.starts.ptr)
        free(self.text.ptr)
        free(self.letters.ptr)
        free(self.crosses.ptr)
        free(self.slots)

    def take(self):
        """``(indptr, indices, data, y, sample_weight, first_line)``; empties the parser.

        A row's keys are distinct, in order of first appearance in the line.
        With ``keep_names`` three more arrays follow: ``starts`` (int64, one per
        entry), ``text`` (uint8), the parsed lines one after the other, each
        followed by a newline, and ``crosses`` (int64, shape (n, 3)): entry
        ``i``'s feature starts at ``text[starts[i]]``, or, for a cross, its
        parts start at the non-negative ``crosses[-1 - starts[i]]``.
        """
        pool = self.pool
        out = (_take_array(&self.indptr, np.int64, pool),
               _take_array(&self.indices, np.int64, pool),
               _take_array(&self.data, np.float64, pool), _take_array(&self.labels, np.float64, pool),
               _take_array(&self.weights, np.float64, pool), self.first_line)
        if self.keep_names:
            out += (_take_array(&self.starts, np.int64, pool),
                    _take_array(&self.text, np.uint8, pool),
                    _take_array(&self.crosses, np.int64, pool).reshape(-1, 3))
        self.n_units = 0
        if _push_i64(&self.indptr, 0):
            raise MemoryError()
        return out

    cdef int _line(self, const unsigned char* p, Py_ssize_t s, Py_ssize_t e) noexcept nogil:
        cdef const unsigned char* bar
        cdef Py_ssize_t starts[5]
        cdef Py_ssize_t ends[5]
        cdef Py_ssize_t n_fields = 0, q, t, i, ns_start, ns_end, colon, row_start
        cdef Py_ssize_t text_shift
        cdef double label = NAN, weight = 1.0, scale, value, base
        cdef int64_t key
        s = _skip_space(p, s, e)
        if s == e:
            return UNIT_BLANK
        bar = <const unsigned char*>memchr(p + s, c'|', e - s)
        if bar == NULL:
            return self._fail(E_MISSING_BAR, self.line, s, _rstrip(p, s, e))
        q = _skip_space(p, s, bar - p)
        while q < bar - p:
            t = _token_end(p, q, bar - p)
            if n_fields == 5:
                return self._fail(E_LABEL_FIELDS, self.line, s, bar - p)
            starts[n_fields] = q
            ends[n_fields] = t
            n_fields += 1
            q = _skip_space(p, t, bar - p)
        # A tag is the field glued to the '|' or the field starting with a quote.
        if n_fields and (ends[n_fields - 1] == bar - p or p[starts[n_fields - 1]] == c"'"):
            n_fields -= 1
        if n_fields > 3:
            return self._fail(E_LABEL_FIELDS, self.line, s, bar - p)
        if n_fields >= 1 and _parse_double(p + starts[0], p + ends[0], self.c_numeric, &label):
            return self._fail(E_BAD_LABEL, self.line, starts[0], ends[0])
        if n_fields >= 2 and (
                _parse_double(p + starts[1], p + ends[1], self.c_numeric, &weight)
                or not weight >= 0):
            return self._fail(E_BAD_IMPORTANCE, self.line, starts[1], ends[1])
        if n_fields == 3 and _parse_double(p + starts[2], p + ends[2], self.c_numeric, &base):
            return self._fail(E_BAD_BASE, self.line, starts[2], ends[2])
        row_start = self.data.size
        self.letters.size = 0
        # Where the line will start in the kept text, minus where it starts in p.
        text_shift = self.text.size - s
        q = bar - p
        while q < e:
            q += 1  # past the '|'
            ns_start = q
            while q < e and not IS_SPACE[p[q]] and p[q] != c'|':
                q += 1
            ns_end = q
            scale = 1.0
            colon = ns_start
            while colon < ns_end and p[colon] != c':':
                colon += 1
            if colon < ns_end:
                if _parse_double(p + colon + 1, p + ns_end, self.c_numeric, &scale):
                    return self._row_fail(E_BAD_VALUE, colon + 1, ns_end, row_start)
                ns_end = colon
            # The scratch buffer starts with "namespace^" for the section's features.
            if ns_end > ns_start:
                if _reserve(&self.scratch, ns_end - ns_start + 1):
                    return self._fail(E_NOMEM, self.line, ns_start, ns_start)
                memcpy(self.scratch.ptr, p + ns_start, ns_end - ns_start)
                self.scratch.ptr[ns_end - ns_start] = c'^'
            while True:
                q = _skip_space(p, q, e)
                if q == e or p[q] == c'|':
                    break
                t = q
                while t < e and not IS_SPACE[p[t]] and p[t] != c'|':
                    t += 1
                colon = q
                while colon < t and p[colon] != c':':
                    colon += 1
                if colon == q:
                    return self._row_fail(E_EMPTY_NAME, q, t, row_start)
                value = 1.0
                if colon < t and _parse_double(p + colon + 1, p + t, self.c_numeric, &value):
                    return self._row_fail(E_BAD_VALUE, colon + 1, t, row_start)
                if _reserve(&self.scratch, ns_end - ns_start + 1 + colon - q):
                    return self._fail(E_NOMEM, self.line, q, q)
                key = self._key(p, ns_end - ns_start, q, colon)
                if (_push_i64(&self.indices, key) or _push_f64(&self.data, value * scale)
                        or self.keep_names and _push_i64(&self.starts, q + text_shift)):
                    return self._fail(E_NOMEM, self.line, q, q)
                if self.n_interactions:
                    if _reserve(&self.letters, 1):
                        return self._fail(E_NOMEM, self.line, q, q)
                    self.letters.ptr[self.letters.size] = \
                        <char>(p[ns_start] if ns_end > ns_start else c' ')
                    self.letters.size += 1
                q = t
        if self._merge_row(row_start // 8, True):
            return self._fail(E_NOMEM, self.line, s, s)
        if self.n_interactions and (self._add_crosses(row_start // 8)
                                    or self._merge_row(row_start // 8, False)):
            return self._fail(E_NOMEM, self.line, s, s)
        if self.keep_names:
            if _reserve(&self.text, e - s + 1):
                return self._fail(E_NOMEM, self.line, s, s)
            memcpy(self.text.ptr + self.text.size, p + s, e - s)
            self.text.ptr[self.text.size + e - s] = c'\n'
            self.text.size += e - s + 1
        if (_push_i64(&self.indptr, self.data.size // 8) or _push_f64(&self.labels, label)
                or _push_f64(&self.weights, weight)):
            return self._fail(E_NOMEM, self.line, s, s)
        return UNIT_OK

    cdef int _merge_row(self, Py_ssize_t first, bint letters) noexcept nogil:
        """Sum the repeated keys of the row from entry ``first`` on, drop its zeros.

        Each key keeps its first entry (and that entry's start in the text, and
        its namespace letter when ``letters``). Linear in the row's entries: a
        table of twice as many slots, small enough to stay in cache, finds the
        repeats. -1 when out of memory.
        """
        cdef int64_t* keys = <int64_t*>self.indices.ptr
        cdef double* values = <double*>self.data.ptr
        cdef int64_t* starts = <int64_t*>self.starts.ptr
        cdef char* ns = self.letters.ptr
        letters = letters and self.n_interactions
        cdef Py_ssize_t n = self.data.size // 8, size = n - first, n_slots = 64
        cdef Py_ssize_t j, slot, w = first, kept = first
        cdef int32_t k
        cdef int shift
        cdef int64_t key
        cdef int32_t* grown
        if size > 1:
            while n_slots < 2 * size:
                n_slots *= 2
            if n_slots > self.n_slots:
                grown = <int32_t*>realloc(self.slots, n_slots * sizeof(int32_t))
                if grown == NULL:
                    return -1
                self.slots, self.n_slots = grown, n_slots
            memset(self.slots, 0xFF, n_slots * sizeof(int32_t))
            shift = _fibonacci_shift(n_slots)
            for j in range(first, n):
                key = keys[j]
                slot = _home(key, shift)
                while True:
                    k = self.slots[slot]
                    if k < 0:
                        self.slots[slot] = <int32_t>(w - first)
                        keys[w] = key
                        values[w] = values[j]
                        if self.keep_names:
                            starts[w] = starts[j]
                        if letters:
                            ns[w - first] = ns[j - first]
                        w += 1
                        break
                    if keys[first + k] == key:
                        values[first + k] += values[j]
                        break
                    slot = (slot + 1) & (n_slots - 1)
        else:
            w = n
        for j in range(first, w):
            if values[j] != 0:
                keys[kept] = keys[j]
                values[kept] = values[j]
                if self.keep_names:
                    starts[kept] = starts[j]
                if letters:
                    ns[kept - first] = ns[j - first]
                kept += 1
        self.indices.size = self.data.size = 8 * kept
        if self.keep_names:
            self.starts.size = 8 * kept
        if letters:
            self.letters.size = kept - first
        return 0

    cdef int _add_crosses(self, Py_ssize_t first) noexcept nogil:
        """Append the crosses of the interactions to the row from entry ``first`` on
        (its keys summed and its letters aligned). -1 when out of memory."""
        cdef Py_ssize_t end = self.data.size // 8, i, j, k, j0, k0
        cdef int spec, size
        cdef unsigned char a, b, c
        cdef const unsigned char* ns = <const unsigned char*>self.letters.ptr
        for spec in range(self.n_interactions):
            size = self.interaction_sizes[spec]
            a = self.interaction_letters[3 * spec]
            b = self.interaction_letters[3 * spec + 1]
            c = self.interaction_letters[3 * spec + 2]
            for i in range(first, end):
                if ns[i - first] != a:
                    continue
                j0 = i + 1 if b == a else first
                for j in range(j0, end):
                    if ns[j - first] != b:
                        continue
                    if size == 2:
                        if self._push_cross(i, j, -1):
                            return -1
                        continue
                    k0 = j + 1 if c == b else (i + 1 if c == a else first)
                    for k in range(k0, end):
                        if ns[k - first] == c and self._push_cross(i, j, k):
                            return -1
        return 0

    cdef int _push_cross(self, Py_ssize_t i, Py_ssize_t j, Py_ssize_t k) noexcept nogil:
        """Append the cross of entries ``i``, ``j`` (and ``k`` unless -1)."""
        # Pointers are read again at each call: pushing may move the buffers.
        cdef int64_t* keys = <int64_t*>self.indices.ptr
        cdef double* values = <double*>self.data.ptr
        cdef int64_t* starts = <int64_t*>self.starts.ptr
        cdef int64_t key = cross_key(keys[i], keys[j])
        cdef double value = values[i] * values[j]
        cdef int64_t part_i, part_j, part_k = -1
        if k >= 0:
            key = cross_key(key, keys[k])
            value *= values[k]
        if self.mask:
            key = <int64_t>(<uint64_t>key & self.mask)
        if self.keep_names:
            part_i, part_j = starts[i], starts[j]
            if k >= 0:
                part_k = starts[k]
            if (_push_i64(&self.starts, -1 - self.crosses.size // 24)
                    or _push_i64(&self.crosses, part_i) or _push_i64(&self.crosses, part_j)
                    or _push_i64(&self.crosses, part_k)):
                return -1
        return _push_i64(&self.indices, key) or _push_f64(&self.data, value)

    cdef int64_t _key(self, const unsigned char* p, Py_ssize_t ns_len, Py_ssize_t name_start,
                      Py_ssize_t name_end) noexcept nogil:
        """Key of a feature; the scratch buffer must start with "namespace^" and have
        room for the name after it."""
        cdef Py_ssize_t name_len = name_end - name_start
        cdef uint64_t h
        if ns_len == 0:
            h = <uint64_t>murmurhash3_64_bytes(p + name_start, name_len, 0)
        else:
            memcpy(self.scratch.ptr + ns_len + 1, p + name_start, name_len)
            h = <uint64_t>murmurhash3_64_bytes(<const unsigned char*>self.scratch.ptr,
                                               ns_len + 1 + name_len, 0)
        if self.mask:
            return <int64_t>(h & self.mask)
        # h % (2**63 - 1) without a division: 2**63 is 1 modulo 2**63 - 1.
        h = (h >> 63) + (h & <uint64_t>INT64_MAX)
        return <int64_t>(h - <uint64_t>INT64_MAX if h >= <uint64_t>INT64_MAX else h)

    cdef int _row_fail(self, int code, Py_ssize_t start, Py_ssize_t end,
                       Py_ssize_t row_start) noexcept nogil:
        self.data.size = row_start
        self.indices.size = row_start
        if self.keep_names:
            self.starts.size = row_start
        return self._fail(code, self.line, start, end)


# ------------------------------------------------------------ key names
cdef struct _Wanted:
    int64_t key
    Py_ssize_t position  # in the requested keys; -1 for an empty slot


def first_rows(const int64_t[::1] keys, requested):
    """The requested keys found in ``keys`` and the first row of each.

    One pass over ``keys`` without the GIL (it stops once all are found): a
    bit filter of the requested keys, small enough for the L1 cache, turns
    most keys away at one load; the others are looked up in an
    open-addressing set of the requested keys.

    Parameters
    ----------
    keys : ndarray of int64, shape (n,)
        The table's keys, in any order, repeats allowed.
    requested : array-like of int
        Keys to find; repeats and keys not in ``keys`` are allowed.

    Returns
    -------
    found : ndarray of int64
        The distinct requested keys present in ``keys``, in order of request.
    rows : ndarray of int64
        ``rows[i]`` is the first ``j`` with ``keys[j] == found[i]``.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_sketch.io._parsers import first_rows
    >>> first_rows(np.array([5, 7, 5, 9]), [9, 5, 4, 5])
    (array([9, 5]), array([3, 0]))
    """
    wanted_array = np.ascontiguousarray(np.asarray(requested, dtype=np.int64).ravel())
    cdef const int64_t[::1] wanted = wanted_array
    cdef Py_ssize_t m = wanted.shape[0], n = keys.shape[0], n_slots = 16, n_bits = 1024
    cdef Py_ssize_t i, j, slot, n_distinct = 0, n_found = 0
    cdef int shift, bit_shift
    cdef int64_t key
    cdef uint64_t h
    while n_slots < 4 * m:
        n_slots *= 2
    while n_bits < 32 * m and n_bits < 2**18:
        n_bits *= 2
    shift = _fibonacci_shift(n_slots)
    bit_shift = _fibonacci_shift(n_bits)
    cdef _Wanted* table = <_Wanted*>malloc(n_slots * sizeof(_Wanted))
    cdef uint64_t* bits = <uint64_t*>calloc(n_bits // 64, sizeof(uint64_t))
    first_array = np.full(m, -1, dtype=np.int64)
    cdef int64_t[::1] first = first_array
    if table == NULL or bits == NULL:
        free(table)
        free(bits)
        raise MemoryError()
    with nogil:
        for slot in range(n_slots):
            table[slot].position = -1
        for i in range(m):
            key = wanted[i]
            h = <uint64_t>key * 0x9E3779B97F4A7C15ULL
            bits[(h >> bit_shift) >> 6] |= (<uint64_t>1) << ((h >> bit_shift) & 63)
            slot = <Py_ssize_t>(h >> shift)
            while table[slot].position >= 0 and table[slot].key != key:
                slot = (slot + 1) & (n_slots - 1)
            if table[slot].position < 0:
                table[slot].key = key
                table[slot].position = i
                n_distinct += 1
        for j in range(n):
            if n_found == n_distinct:
                break
            key = keys[j]
            h = <uint64_t>key * 0x9E3779B97F4A7C15ULL
            if not (bits[(h >> bit_shift) >> 6] >> ((h >> bit_shift) & 63)) & 1:
                continue
            slot = <Py_ssize_t>(h >> shift)
            while table[slot].position >= 0:
                if table[slot].key == key:
                    i = table[slot].position
                    if first[i] < 0:
                        first[i] = j
                        n_found += 1
                    break
                slot = (slot + 1) & (n_slots - 1)
    free(table)
    free(bits)
    hit = first_array >= 0
    return wanted_array[hit], first_array[hit]


def vw_feature_names(const unsigned char[::1] text, starts):
    """The hashed bytes of Vowpal Wabbit features, from where they start in their line.

    A feature ``name[:value]`` starting at ``text[start]`` in the section
    ``|namespace[:scale] ...`` gives ``namespace + b"^" + name``, or ``name``
    in the default namespace: the bytes its key is the hash of.

    Parameters
    ----------
    text : bytes-like
        Lines of a Vowpal Wabbit file, each ending with a newline.
    starts : array-like of int
        Offsets of feature tokens in ``text``.

    Returns
    -------
    names : list of bytes
        One per start.

    Examples
    --------
    >>> from sklearn_sketch.io._parsers import vw_feature_names
    >>> text = b"1 |w:2 good bad:0.5 | plain\\n"
    >>> vw_feature_names(text, [text.index(b"bad"), text.index(b"plain")])
    [b'w^bad', b'plain']
    """
    cdef Py_ssize_t n = text.shape[0], start, name_end, bar, ns_end, ns_start
    cdef const unsigned char* p = &text[0] if n else NULL
    out = []
    for start in np.asarray(starts, dtype=np.int64).tolist():
        if not 0 < start < n:
            raise ValueError(f"start {start} is outside the text of {n} bytes")
        name_end = start
        while name_end < n and not IS_SPACE[p[name_end]] and p[name_end] != c'|' \
                and p[name_end] != c':':
            name_end += 1
        bar = start - 1
        while bar >= 0 and p[bar] != c'|':
            bar -= 1
        if bar < 0:
            raise ValueError(f"no '|' before the feature at {start}")
        ns_start = ns_end = bar + 1
        while ns_end < start and not IS_SPACE[p[ns_end]] and p[ns_end] != c':':
            ns_end += 1
        name = PyBytes_FromStringAndSize(<const char*>p + start, name_end - start)
        if ns_end > ns_start:
            name = PyBytes_FromStringAndSize(<const char*>p + ns_start, ns_end - ns_start) \
                + b"^" + name
        out.append(name)
    return out


# -------------------------------------------------------------- FASTA/FASTQ
cdef struct Record:
    Py_ssize_t header_start, header_end, seq_start, seq_end, seq_len, qual_start, qual_end, line


cdef inline Py_ssize_t _line_end(const unsigned char* p, Py_ssize_t pos,
                                 Py_ssize_t n) noexcept nogil:
    """Offset of the newline ending the line at ``pos``, or ``n``."""
    cdef const unsigned char* eol = <const unsigned char*>memchr(p + pos, c'\n', n - pos)
    return n if eol == NULL else eol - p


cdef class _ReadsParser(_BlockParser):
    """Records into lists of names (str), sequences and qualities (bytes).

    The nogil scan validates the records and notes their byte spans; the
    Python objects are made from the spans before ``parse`` returns.
    """

    cdef Buffer records
    cdef list names, sequences, qualities

    def __init__(self, bint skip):
        super().__init__(skip)
        self.names, self.sequences, self.qualities = [], [], []

    def __dealloc__(self):
        free(self.records.ptr)

    def take(self):
        """``(names, sequences, qualities, first_line)``; empties the parser."""
        out = self.names, self.sequences, self.qualities, self.first_line
        self.names, self.sequences, self.qualities = [], [], []
        self.n_units = 0
        return out

    cdef int _push_record(self, Py_ssize_t header_start, Py_ssize_t header_end,
                          Py_ssize_t seq_start, Py_ssize_t seq_end, Py_ssize_t seq_len,
                          Py_ssize_t qual_start, Py_ssize_t qual_end,
                          Py_ssize_t line) noexcept nogil:
        cdef Record* r
        if _reserve(&self.records, sizeof(Record)):
            return self._fail(E_NOMEM, line, 0, 0)
        r = <Record*>(self.records.ptr + self.records.size)
        r.header_start, r.header_end = header_start, header_end
        r.seq_start, r.seq_end, r.seq_len = seq_start, seq_end, seq_len
        r.qual_start, r.qual_end, r.line = qual_start, qual_end, line
        self.records.size += sizeof(Record)
        self._count_unit(line)
        return UNIT_OK

    cdef void _after_parse(self, const unsigned char[::1] buf):
        cdef Record* r = <Record*>self.records.ptr
        cdef Py_ssize_t i, n = self.records.size // <Py_ssize_t>sizeof(Record)
        if n == 0:
            return
        cdef const char* p = <const char*>&buf[0]
        for i in range(n):
            self.names.append(PyUnicode_DecodeUTF8(p + r[i].header_start,
                                                   r[i].header_end - r[i].header_start,
                                                   "strict"))
            self.sequences.append(self._sequence(p, &r[i]))
            self._add_quality(p, &r[i])
        self.records.size = 0

    cdef object _sequence(self, const char* p, Record* r):
        return PyBytes_FromStringAndSize(p + r.seq_start, r.seq_len)

    cdef void _add_quality(self, const char* p, Record* r):
        pass

    cdef Py_ssize_t _skip_blank_lines(self, const unsigned char* p, Py_ssize_t pos,
                                      Py_ssize_t n, bint final) noexcept nogil:
        """Offset of the next non-blank line (or of an incomplete one, or ``n``)."""
        cdef Py_ssize_t end
        while pos < n:
            end = _line_end(p, pos, n)
            if end == n and not final or _skip_space(p, pos, end) < end:
                return pos
            pos = end + 1 if end < n else n
            self.line += 1
        return pos



cdef class FastaParser(_ReadsParser):
    """FASTA records: a ``>header`` line, then sequence lines up to the next header.

    Whitespace inside sequence lines (line breaks, ``\\r``) is dropped. A
    record is complete when the next header or the end of the file is seen.
    Skipping drops everything up to the next header line.
    """

    cdef Py_ssize_t _parse(self, const unsigned char* p, Py_ssize_t pos, Py_ssize_t n,
                           bint final, Py_ssize_t max_units) noexcept nogil:
        cdef Py_ssize_t line, record_line, end, header_end, seq_start, seq_len, i, next_line
        cdef int code
        while self.n_units < max_units:
            pos = self._skip_blank_lines(p, pos, n, final)
            if pos == n:
                return pos
            end = _line_end(p, pos, n)
            if end == n and not final:
                return pos
            record_line = line = self.line + 1
            header_end = _rstrip(p, pos, end)
            code = E_NONE
            if p[pos] != c'>':
                code = E_NO_HEADER
            elif not _is_printable_utf8(p + pos + 1, header_end - pos - 1):
                code = E_BAD_HEADER
            if code != E_NONE and not self.skip:
                self._fail(code, line, pos, header_end)
                return pos
            seq_start = next_line = min(end + 1, n)
            seq_len = 0
            while True:
                if next_line >= n:
                    if not final:
                        return pos
                    break
                end = _line_end(p, next_line, n)
                if end == n and not final:
                    return pos
                if p[next_line] == c'>':
                    break
                line += 1
                if code == E_NONE:
                    for i in range(next_line, end):
                        if IS_SEQ[p[i]]:
                            seq_len += 1
                        elif not IS_SPACE[p[i]]:
                            if not self.skip:
                                self._fail(E_SEQ_CHAR, line, i, i + 1)
                                return pos
                            code = E_SEQ_CHAR
                            break
                next_line = end + 1 if end < n else n
            if code != E_NONE:
                self.n_skipped += 1
            elif self._push_record(pos + 1, header_end, seq_start, next_line, seq_len, 0, 0,
                                   record_line) == UNIT_ERROR:
                return pos
            self.line = line
            pos = next_line
        return pos

    cdef object _sequence(self, const char* p, Record* r):
        return _joined_lines(p, r.seq_start, r.seq_end, r.seq_len)


cdef object _joined_lines(const char* p, Py_ssize_t start, Py_ssize_t end, Py_ssize_t length):
    """The ``length`` bytes of ``p[start:end]`` that are not whitespace (lines joined)."""
    if end - start == length:
        return PyBytes_FromStringAndSize(p + start, length)
    joined = PyBytes_FromStringAndSize(NULL, length)
    cdef char* out = PyBytes_AS_STRING(joined)
    cdef Py_ssize_t i, j = 0
    for i in range(start, end):
        if not IS_SPACE[<unsigned char>p[i]]:
            out[j] = p[i]
            j += 1
    return joined


# Where a truncated FASTQ record ends (the error's ``a``).
cdef enum:
    ENDS_AFTER_HEADER = 1
    ENDS_IN_SEQUENCE = 2
    ENDS_AFTER_PLUS = 3

_TRUNCATED_WHERE = {
    ENDS_AFTER_HEADER: "after its header line",
    ENDS_IN_SEQUENCE: "after its sequence, before a '+' line",
    ENDS_AFTER_PLUS: "after its '+' line, before its quality",
}


cdef class FastqParser(_ReadsParser):
    """FASTQ records: ``@header``, sequence lines, ``+[header]``, quality lines.

    Most files hold a record in four lines; the format (Cock et al., 2010,
    Nucleic Acids Research 38:1767) lets the sequence and the quality wrap over
    several lines, as Sanger-era and long-read files do, and Biopython and
    seqtk read them so. The sequence ends at the line that starts with '+'; the
    quality ends when it is as long as the sequence (a quality line may start
    with '@' or '+', both quality characters). Quality characters are
    ``'!'..'~'``. Skipping drops a bad record up to where the next can start,
    or a run of lines that do not start with '@' (counted once).
    """

    cdef bint in_bad_run

    def _message_fields(self):
        return {"where": _TRUNCATED_WHERE.get(self.error_a, "")}

    cdef Py_ssize_t _parse(self, const unsigned char* p, Py_ssize_t pos, Py_ssize_t n,
                           bint final, Py_ssize_t max_units) noexcept nogil:
        cdef Py_ssize_t line, end, resume
        while self.n_units < max_units:
            pos = self._skip_blank_lines(p, pos, n, final)
            if pos == n:
                return pos
            line = self.line + 1
            end = _line_end(p, pos, n)
            if end == n and not final:
                return pos
            if p[pos] != c'@':
                if not self.skip:
                    self._fail(E_NO_AT, line, pos, _rstrip(p, pos, end))
                    return pos
                if not self.in_bad_run:
                    self.n_skipped += 1
                    self.in_bad_run = True
                self.line += 1
                pos = min(end + 1, n)
                continue
            self.in_bad_run = False
            resume = self._record(p, pos, n, final)
            if resume < 0:
                return pos
            if self.error == E_NOMEM or self.error != E_NONE and not self.skip:
                return pos
            if self.error != E_NONE:
                self.error = E_NONE
                self.n_skipped += 1
            pos = resume
        return pos

    cdef Py_ssize_t _record(self, const unsigned char* p, Py_ssize_t pos, Py_ssize_t n,
                            bint final) noexcept nogil:
        """Read the record at ``pos``: where the next unit starts, or -1 (incomplete).

        On a bad record the error is set (the first in the file's order) and the
        offset returned is where a skip resumes; ``self.line`` counts the lines
        up to it.
        """
        cdef Py_ssize_t line = self.line + 1, header_end, end, q, stop, i
        cdef Py_ssize_t seq_start, seq_end, seq_len = 0, seq_lines = 0
        cdef Py_ssize_t plus_start, plus_end, qual_start, qual_end, qual_len = 0
        cdef Py_ssize_t qual_line = 0, qual_lines = 0, first_qual_len = 0
        end = _line_end(p, pos, n)
        header_end = _rstrip(p, pos, end)
        if not _is_printable_utf8(p + pos + 1, header_end - pos - 1):
            self._fail(E_BAD_HEADER, line, pos, header_end)
        # Sequence lines, up to a '+' line.
        seq_start = seq_end = q = min(end + 1, n)
        while True:
            if q >= n:
                if not final:
                    return self._incomplete()
                self._first_fail(E_TRUNCATED, line, pos, header_end,
                                 ENDS_IN_SEQUENCE if seq_lines else ENDS_AFTER_HEADER, 0)
                return self._resume(n, 1 + seq_lines)
            end = _line_end(p, q, n)
            if end == n and not final:
                return self._incomplete()
            if p[q] == c'+':
                break
            if p[q] == c'@':
                # A header where the '+' line should be: this record has none.
                self._first_fail(E_NO_PLUS, line + 1 + seq_lines, q, _rstrip(p, q, end), 0, 0)
                return self._resume(q, 1 + seq_lines)
            stop = _rstrip(p, q, end)
            if self.error == E_NONE:
                for i in range(q, stop):
                    if not IS_SEQ[p[i]]:
                        self._fail(E_SEQ_CHAR, line + 1 + seq_lines, i, i + 1)
                        break
            seq_len += stop - q
            seq_end = stop
            seq_lines += 1
            q = min(end + 1, n)
        plus_start, plus_end = q, _rstrip(p, q, end)
        if plus_end - plus_start > 1 and (
                plus_end - plus_start != header_end - pos
                or memcmp(p + plus_start + 1, p + pos + 1, header_end - pos - 1)):
            self._first_fail(E_PLUS_MISMATCH, line + 1 + seq_lines, plus_start, plus_end, 0, 0)
        # Quality lines, until as long as the sequence (at least one line).
        qual_start = qual_end = q = min(end + 1, n)
        while qual_lines == 0 or qual_len < seq_len:
            if q >= n:
                if not final:
                    return self._incomplete()
                if qual_lines == 0:
                    self._first_fail(E_TRUNCATED, line, pos, header_end, ENDS_AFTER_PLUS, 0)
                else:
                    self._first_fail(E_QUAL_LEN, qual_line, qual_start,
                                     qual_start + first_qual_len, qual_len, seq_len)
                return self._resume(n, 2 + seq_lines + qual_lines)
            end = _line_end(p, q, n)
            if end == n and not final:
                return self._incomplete()
            stop = _rstrip(p, q, end)
            if qual_len + stop - q > seq_len:
                if qual_lines == 0:
                    # One quality line, too long.
                    self._first_fail(E_QUAL_LEN, line + 2 + seq_lines, q, stop, stop - q,
                                     seq_len)
                    return self._resume(min(end + 1, n), 3 + seq_lines)
                # Too short, and the next line (the next record's, most likely) does
                # not complete it.
                self._first_fail(E_QUAL_LEN, qual_line, qual_start, qual_start + first_qual_len,
                                 qual_len, seq_len)
                return self._resume(q, 2 + seq_lines + qual_lines)
            if qual_lines == 0:
                qual_line, first_qual_len = line + 2 + seq_lines, stop - q
            if self.error == E_NONE:
                for i in range(q, stop):
                    if not 33 <= p[i] <= 126:
                        self._fail(E_QUAL_CHAR, line + 2 + seq_lines + qual_lines, i, i + 1)
                        break
            qual_len += stop - q
            qual_end = stop
            qual_lines += 1
            q = min(end + 1, n)
        if self.error == E_NONE and self._push_record(
                pos + 1, header_end, seq_start, seq_end, seq_len, qual_start, qual_end,
                line) == UNIT_ERROR:
            return -1
        return self._resume(q, 2 + seq_lines + qual_lines)

    cdef inline void _first_fail(self, int code, Py_ssize_t line, Py_ssize_t start,
                                 Py_ssize_t end, Py_ssize_t a, Py_ssize_t b) noexcept nogil:
        """Set the error unless one earlier in the record is set already."""
        if self.error == E_NONE:
            self._fail(code, line, start, end)
            self.error_a, self.error_b = a, b

    cdef inline Py_ssize_t _incomplete(self) noexcept nogil:
        """-1: the record is cut by the buffer's end; it is read again, whole, later."""
        self.error = E_NONE
        return -1

    cdef inline Py_ssize_t _resume(self, Py_ssize_t offset, Py_ssize_t n_lines) noexcept nogil:
        self.line += n_lines
        return offset

    cdef object _sequence(self, const char* p, Record* r):
        return _joined_lines(p, r.seq_start, r.seq_end, r.seq_len)

    cdef void _add_quality(self, const char* p, Record* r):
        self.qualities.append(_joined_lines(p, r.qual_start, r.qual_end, r.seq_len))


# ------------------------------------------------------------------ labels
cdef class LabelParser(_LineParser):
    """The label of each svmlight or Vowpal Wabbit line, the rest unread.

    A fast first pass for the classes of a file: lines are only split at their
    label, so scanning costs a fraction of parsing. A Vowpal Wabbit line
    without a label (``|f a``, ``'tag|f a``) gives NaN. Blank and svmlight
    comment lines give nothing.

    Parameters
    ----------
    vw : bool
        Vowpal Wabbit lines (else svmlight).
    skip : bool
        Skip lines whose label is not a number instead of stopping at them.
    """

    cdef bint vw
    cdef Buffer labels

    def __init__(self, bint vw, bint skip):
        super().__init__(skip)
        self.vw = vw

    def __dealloc__(self):
        free(self.labels.ptr)

    def take(self):
        """``(labels, first_line)`` of the lines parsed; empties the parser."""
        out = (_take_array(&self.labels, np.float64, self.pool), self.first_line)
        self.n_units = 0
        return out

    cdef int _line(self, const unsigned char* p, Py_ssize_t s, Py_ssize_t e) noexcept nogil:
        cdef const unsigned char* mark
        cdef Py_ssize_t t
        cdef double label = NAN
        if self.vw:
            mark = <const unsigned char*>memchr(p + s, c'|', e - s)
            s = _skip_space(p, s, e)
            if s == e:
                return UNIT_BLANK
            if mark == NULL:
                return self._fail(E_MISSING_BAR, self.line, s, _rstrip(p, s, e))
            e = mark - p
        else:
            mark = <const unsigned char*>memchr(p + s, c'#', e - s)
            if mark != NULL:
                e = mark - p
            s = _skip_space(p, s, e)
            if s == e:
                return UNIT_BLANK
        s = _skip_space(p, s, e)
        t = _token_end(p, s, e)
        # In VW, the field glued to the '|' or starting with a quote is a tag.
        if s < e and not (self.vw and (t == e or p[s] == c"'")):
            if _parse_double(p + s, p + t, self.c_numeric, &label):
                return self._fail(E_BAD_LABEL, self.line, s, t)
        if _push_f64(&self.labels, label):
            return self._fail(E_NOMEM, self.line, s, s)
        return UNIT_OK
