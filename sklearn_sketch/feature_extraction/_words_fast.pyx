# cython: boundscheck=False, wraparound=False
"""Words of texts as scikit-learn's ``CountVectorizer`` finds them by default, compiled.

``re.findall(r"(?u)\\b\\w\\w+\\b", text.lower())`` is every maximal run of two or
more word characters of the lowered text, a word character being one that
``str.isalnum`` accepts or ``_`` (the regular expression engine's own test:
``Py_UNICODE_ISALNUM``). :func:`word_codes` finds the same runs in one compiled
scan of each text and names each distinct word once: a repeated word costs a
hash of its characters and a probe of a table, not a Python string, a regular
expression match and a dictionary lookup (20 Newsgroups' 11,314 training posts,
3.3M words: see :func:`word_codes`).
"""
from cpython.unicode cimport Py_UNICODE_ISALNUM
from libc.stdint cimport int64_t, uint64_t
from libc.stdlib cimport free, malloc, realloc
from libc.string cimport memset

import numpy as np

from .._core._murmurhash cimport _fmix64


cdef extern from "Python.h":
    int PyUnicode_KIND(object text)
    void* PyUnicode_DATA(object text)
    Py_UCS4 PyUnicode_READ(int kind, void* data, Py_ssize_t index) noexcept nogil


cdef inline bint _is_word(Py_UCS4 ch) noexcept:
    # ASCII by ranges (most characters of most texts), the rest by the Unicode database.
    if ch < 128:
        return (97 <= ch <= 122 or 48 <= ch <= 57 or 65 <= ch <= 90 or ch == 95)
    return Py_UNICODE_ISALNUM(ch)


cdef struct Slot:
    uint64_t hash
    int64_t code


cdef class _Vocabulary:
    """Distinct words by the hash of their characters, each held as its first
    occurrence (a text of ``texts`` and a place in it) and named once."""
    cdef Slot* slots
    cdef Py_ssize_t capacity, size
    cdef int64_t* first_text
    cdef int64_t* first_start
    cdef int64_t* first_length
    cdef Py_ssize_t room
    cdef list words

    def __cinit__(self):
        self.capacity = 1 << 12
        self.slots = <Slot*>malloc(self.capacity * sizeof(Slot))
        self.room = 1 << 10
        self.first_text = <int64_t*>malloc(self.room * sizeof(int64_t))
        self.first_start = <int64_t*>malloc(self.room * sizeof(int64_t))
        self.first_length = <int64_t*>malloc(self.room * sizeof(int64_t))
        if not (self.slots and self.first_text and self.first_start and self.first_length):
            raise MemoryError("cannot allocate a vocabulary")
        memset(self.slots, 0xFF, self.capacity * sizeof(Slot))  # code -1: empty
        self.size = 0
        self.words = []

    def __dealloc__(self):
        free(self.slots)
        free(self.first_text)
        free(self.first_start)
        free(self.first_length)

    cdef int _grow_table(self) except -1:
        cdef Py_ssize_t old_capacity = self.capacity, i, j
        cdef Slot* old = self.slots
        cdef Slot* slots = <Slot*>malloc(2 * old_capacity * sizeof(Slot))
        if not slots:
            raise MemoryError("cannot grow the vocabulary")
        memset(slots, 0xFF, 2 * old_capacity * sizeof(Slot))
        for i in range(old_capacity):
            if old[i].code >= 0:
                j = old[i].hash & (2 * old_capacity - 1)
                while slots[j].code >= 0:
                    j = (j + 1) & (2 * old_capacity - 1)
                slots[j] = old[i]
        self.slots, self.capacity = slots, 2 * old_capacity
        free(old)
        return 0

    cdef int _grow_firsts(self) except -1:
        cdef Py_ssize_t room = 2 * self.room
        cdef int64_t* text = <int64_t*>realloc(self.first_text, room * sizeof(int64_t))
        if text:
            self.first_text = text
        cdef int64_t* start = <int64_t*>realloc(self.first_start, room * sizeof(int64_t))
        if start:
            self.first_start = start
        cdef int64_t* length = <int64_t*>realloc(self.first_length, room * sizeof(int64_t))
        if length:
            self.first_length = length
        if not (text and start and length):
            raise MemoryError("cannot grow the vocabulary")
        self.room = room
        return 0

    cdef int64_t code(self, list texts, int64_t t, int kind, void* data, Py_ssize_t start,
                      Py_ssize_t length, uint64_t h) except -2:
        """The code of the word ``texts[t][start:start + length]`` (of hash ``h``), a
        new one for a word not seen before."""
        cdef Py_ssize_t j = h & (self.capacity - 1), i
        cdef int64_t code
        cdef object other
        cdef int other_kind
        cdef void* other_data
        cdef Py_ssize_t other_start
        cdef bint same
        while self.slots[j].code >= 0:
            code = self.slots[j].code
            if self.slots[j].hash == h and self.first_length[code] == length:
                other = texts[self.first_text[code]]
                other_kind = PyUnicode_KIND(other)
                other_data = PyUnicode_DATA(other)
                other_start = self.first_start[code]
                same = True
                for i in range(length):
                    if (PyUnicode_READ(kind, data, start + i)
                            != PyUnicode_READ(other_kind, other_data, other_start + i)):
                        same = False
                        break
                if same:
                    return code
            j = (j + 1) & (self.capacity - 1)
        code = self.size
        if code == self.room:
            self._grow_firsts()
        self.first_text[code] = t
        self.first_start[code] = start
        self.first_length[code] = length
        self.slots[j].hash = h
        self.slots[j].code = code
        self.words.append(texts[t][start:start + length])
        self.size += 1
        if 2 * self.size > self.capacity:
            self._grow_table()
        return code


def word_codes(texts):
    """The words of each text, lower case, as ``CountVectorizer()`` tokenizes: every
    run of two or more letters, digits or underscores (``(?u)\\b\\w\\w+\\b``).

    Parameters
    ----------
    texts : iterable of str
        Texts; anything else (None, NaN) has no word.

    Returns
    -------
    indptr : ndarray of int64, shape (n_texts + 1,)
        The words of text ``i`` are ``codes[indptr[i]:indptr[i + 1]]``, in order.
    codes : ndarray of int64
        Each word's index in ``words``.
    words : list of str
        The distinct words, in the order first seen.

    Examples
    --------
    >>> from sklearn_sketch.feature_extraction._words_fast import word_codes
    >>> indptr, codes, words = word_codes(["A cat, a CAT_2.", None, "Ünïcode x9 é"])
    >>> indptr.tolist(), codes.tolist(), words
    ([0, 1, 1, 3], [0, 1, 2], ['cat', 'cat_2', 'ünïcode'])
    """
    cdef list lowered = [text.lower() if isinstance(text, str) else "" for text in texts]
    cdef Py_ssize_t n_texts = len(lowered), t, i, n, start
    cdef Py_ssize_t total = 0
    for t in range(n_texts):
        total += len(<str>lowered[t])
    # A word takes two characters and a separator: at most (n + 1) // 3 in n.
    indptr = np.zeros(n_texts + 1, dtype=np.int64)
    codes = np.empty((total + n_texts) // 3 + 1, dtype=np.int64)
    cdef int64_t[::1] ends = indptr
    cdef int64_t[::1] out = codes
    cdef Py_ssize_t n_codes = 0
    cdef _Vocabulary vocabulary = _Vocabulary()
    cdef object text
    cdef int kind
    cdef void* data
    cdef uint64_t h
    cdef Py_UCS4 ch
    for t in range(n_texts):
        text = lowered[t]
        n = len(<str>text)
        kind = PyUnicode_KIND(text)
        data = PyUnicode_DATA(text)
        i = 0
        while i < n:
            ch = PyUnicode_READ(kind, data, i)
            if not _is_word(ch):
                i += 1
                continue
            start = i
            h = 0x9E3779B97F4A7C15ULL
            while True:
                h = (h ^ <uint64_t>ch) * 0x100000001B3ULL
                i += 1
                if i == n:
                    break
                ch = PyUnicode_READ(kind, data, i)
                if not _is_word(ch):
                    break
            if i - start >= 2:
                out[n_codes] = vocabulary.code(lowered, t, kind, data, start, i - start,
                                               _fmix64(h))
                n_codes += 1
        ends[t + 1] = n_codes
    return indptr, codes[:n_codes].copy(), vocabulary.words
