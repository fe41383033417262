# distutils: language = c++
"""Count the k-mers of many reads at once into CSR arrays.

A k-mer's key is its 2-bit packed code (``A=0, C=1, G=2, T=U=3``, first base in
the most significant bits). The code of the current k-mer and of its reverse
complement are updated per base, so a read of ``n`` bases costs ``O(n)`` before
the per-row sort that groups equal keys.

Comparison sorts of random keys spend their time on mispredicted branches, so a
row is first scattered into about ``n`` buckets by its keys' leading bits (a
counting sort), which leaves tiny buckets to sort; large ones (skewed reads) go
to ``std::sort``, so the worst case stays ``O(n log n)``.
"""
import numpy as np

from libc.stdint cimport int8_t, int32_t, int64_t, uint8_t, uint64_t
from libc.string cimport memset
from libcpp.algorithm cimport sort

cdef enum:
    # Buckets of the counting-sort pass: about one per key, at most 2**MAX_BUCKET_BITS.
    MAX_BUCKET_BITS = 16
    # Rows whose buckets hold at most this many keys are insertion-sorted whole; other
    # rows sort each bucket with std::sort.
    INSERTION_SORT_MAX = 16

# Output index type: int32 when the keys and nnz fit, as scipy's own CSR matrices.
ctypedef fused index_t:
    int32_t
    int64_t

# Code of each byte: 0 to 3 for ``ACGTU``/``acgtu``, -1 for a byte that splits a read.
cdef int8_t BASE_CODE[256]


cdef void _fill_base_code() noexcept:
    cdef int byte, code
    for byte in range(256):
        BASE_CODE[byte] = -1
    for code, bases in enumerate([b"Aa", b"Cc", b"Gg", b"TtUu"]):
        for byte in bases:
            BASE_CODE[byte] = code


_fill_base_code()


cdef int64_t _max_kmers(const int64_t[::1] offsets, int k, int64_t* longest) noexcept nogil:
    """Number of k-mers of the reads if none had a splitting character; ``longest``
    receives the largest number in one read."""
    cdef Py_ssize_t i
    cdef int64_t total = 0, n
    longest[0] = 0
    for i in range(offsets.shape[0] - 1):
        n = offsets[i + 1] - offsets[i] - k + 1
        if n > 0:
            total += n
            longest[0] = max(longest[0], n)
    return total


cdef Py_ssize_t _read_keys(const uint8_t* read, int64_t length, int k, bint canonical,
                           int64_t* keys) noexcept nogil:
    """Write the keys of the k-mers of one read into ``keys``; return how many."""
    cdef uint64_t mask = (<uint64_t>1 << (2 * k)) - 1
    cdef int first_shift = 2 * (k - 1)
    cdef uint64_t forward = 0, reverse = 0
    cdef int64_t i = 0
    cdef Py_ssize_t n = 0
    cdef int run = 0
    cdef int8_t code
    while i < length:
        code = BASE_CODE[read[i]]
        i += 1
        if code < 0:
            run = 0
            continue
        forward = ((forward << 2) | <uint64_t>code) & mask
        # The complement of the new last base becomes the first base of the reverse complement.
        reverse = (reverse >> 2) | (<uint64_t>(3 - code) << first_shift)
        run += 1
        if run < k:
            continue
        keys[n] = <int64_t>(min(forward, reverse) if canonical else forward)
        n += 1
        # Every further base up to the next split ends a k-mer; the split itself is left
        # to the outer loop, which restarts the run.
        while i < length:
            code = BASE_CODE[read[i]]
            if code < 0:
                break
            i += 1
            forward = ((forward << 2) | <uint64_t>code) & mask
            reverse = (reverse >> 2) | (<uint64_t>(3 - code) << first_shift)
            keys[n] = <int64_t>(min(forward, reverse) if canonical else forward)
            n += 1
    return n


cdef inline void _insertion_sort(index_t* keys, Py_ssize_t n) noexcept nogil:
    cdef Py_ssize_t i, j
    cdef index_t key
    for i in range(1, n):
        key = keys[i]
        j = i
        while j > 0 and keys[j - 1] > key:
            keys[j] = keys[j - 1]
            j -= 1
        keys[j] = key


cdef void _sort_keys(const int64_t* unsorted, Py_ssize_t n, int key_bits, index_t* keys,
                     Py_ssize_t* bucket_end) noexcept nogil:
    """Write the ``n`` keys of ``unsorted`` (below ``2**key_bits``) sorted into ``keys``.

    ``bucket_end`` needs room for ``2**MAX_BUCKET_BITS`` entries.
    """
    cdef int bucket_bits = 1
    while bucket_bits < MAX_BUCKET_BITS and (<Py_ssize_t>1 << bucket_bits) < n:
        bucket_bits += 1
    bucket_bits = min(bucket_bits, key_bits)
    cdef int shift = key_bits - bucket_bits
    cdef Py_ssize_t n_buckets = <Py_ssize_t>1 << bucket_bits
    cdef Py_ssize_t i, b, count, start, end, total = 0, largest = 0
    memset(bucket_end, 0, n_buckets * sizeof(Py_ssize_t))
    for i in range(n):
        b = unsorted[i] >> shift
        bucket_end[b] += 1
        largest = max(largest, bucket_end[b])
    for b in range(n_buckets):
        count = bucket_end[b]
        bucket_end[b] = total
        total += count
    # bucket_end[b] goes from the start of bucket b to its end.
    for i in range(n):
        b = unsorted[i] >> shift
        keys[bucket_end[b]] = <index_t>unsorted[i]
        bucket_end[b] += 1
    if shift == 0 or largest <= 1:
        return
    if largest <= INSERTION_SORT_MAX:
        # A key is out of order only within its bucket, so this costs at most
        # n * INSERTION_SORT_MAX steps, and about n for the usual buckets of 0 to 3 keys.
        _insertion_sort(keys, n)
        return
    start = 0
    for b in range(n_buckets):
        end = bucket_end[b]
        if end - start > 1:
            sort(keys + start, keys + end)
        start = end


cdef Py_ssize_t _count_rows(const uint8_t[::1] sequence, const int64_t[::1] offsets, int k,
                            bint canonical, bint binary, index_t[::1] indptr,
                            index_t[::1] indices, double[::1] data, int64_t[::1] unsorted,
                            Py_ssize_t[::1] bucket_end) noexcept nogil:
    """Fill the CSR arrays (``indices`` and ``data`` sized by the upper bound); return nnz."""
    cdef Py_ssize_t n_reads = offsets.shape[0] - 1
    cdef Py_ssize_t i, j, n_keys, start
    cdef Py_ssize_t nnz = 0
    cdef int64_t key, previous
    for i in range(n_reads):
        if offsets[i + 1] - offsets[i] < k:
            indptr[i + 1] = <index_t>nnz
            continue
        # The row's keys are sorted from the end of the output so far, which is never
        # ahead of this read's share of the upper bound, then merged in place.
        start = nnz
        n_keys = _read_keys(&sequence[offsets[i]], offsets[i + 1] - offsets[i], k,
                            canonical, &unsorted[0])
        _sort_keys(&unsorted[0], n_keys, 2 * k, &indices[start], &bucket_end[0])
        previous = -1  # keys are non-negative
        for j in range(start, start + n_keys):
            key = indices[j]
            if key != previous:
                indices[nnz] = <index_t>key
                data[nnz] = 1.0
                nnz += 1
                previous = key
            elif not binary:
                data[nnz - 1] += 1.0
        indptr[i + 1] = <index_t>nnz
    return nnz


def count_kmers(const uint8_t[::1] sequence, const int64_t[::1] offsets, int k,
                bint canonical, bint binary, index_dtype=np.int64):
    """CSR arrays of the k-mer counts of reads stored back to back.

    Parameters
    ----------
    sequence : bytes
        The reads, concatenated.
    offsets : ndarray of int64, shape (n_reads + 1,)
        Read ``i`` is ``sequence[offsets[i]:offsets[i + 1]]``.
    k : int
        k-mer length, from 1 to 31.
    canonical : bool
        Key each k-mer by the smaller of its code and its reverse complement's.
    binary : bool
        Store 1.0 for every k-mer present instead of its count.
    index_dtype : {numpy.int32, numpy.int64}, default=numpy.int64
        Type of ``indptr`` and ``indices``; int32 needs ``k <= 15`` and fewer
        than ``2**31`` k-mers in all (the caller checks).

    Returns
    -------
    indptr : ndarray of index_dtype, shape (n_reads + 1,)
    indices : ndarray of index_dtype
        Keys of row ``i`` in ``indices[indptr[i]:indptr[i + 1]]``, sorted and distinct.
    data : ndarray of float64
        Count of each key in its row.
    """
    cdef int64_t longest
    cdef Py_ssize_t nnz
    index_dtype = np.dtype(index_dtype)
    if index_dtype not in (np.dtype(np.int32), np.dtype(np.int64)):
        raise ValueError(f"index_dtype must be int32 or int64, got {index_dtype}")
    # Pages past the final nnz are never written, so the upper bound costs no memory.
    indices_array = np.empty(_max_kmers(offsets, k, &longest), dtype=index_dtype)
    data_array = np.empty(indices_array.shape[0], dtype=np.float64)
    indptr_array = np.zeros(offsets.shape[0], dtype=index_dtype)
    cdef double[::1] data = data_array
    cdef int64_t[::1] unsorted = np.empty(longest, dtype=np.int64)
    cdef Py_ssize_t[::1] bucket_end = np.empty(1 << MAX_BUCKET_BITS, dtype=np.intp)
    cdef int32_t[::1] indptr32, indices32
    cdef int64_t[::1] indptr64, indices64
    if index_dtype == np.int32:
        indptr32, indices32 = indptr_array, indices_array
        with nogil:
            nnz = _count_rows(sequence, offsets, k, canonical, binary, indptr32, indices32,
                              data, unsorted, bucket_end)
    else:
        indptr64, indices64 = indptr_array, indices_array
        with nogil:
            nnz = _count_rows(sequence, offsets, k, canonical, binary, indptr64, indices64,
                              data, unsorted, bucket_end)
    return indptr_array, indices_array[:nnz], data_array[:nnz]
