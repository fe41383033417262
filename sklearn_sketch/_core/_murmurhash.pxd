# MurmurHash3 (Austin Appleby's public-domain design), written for this package.
#
# The functions are ``inline`` in this .pxd so every algorithm loop that
# cimports them gets them inlined. Blocks are read little-endian with memcpy,
# which is what the reference implementation does on x86 and ARM.

from libc.stdint cimport int64_t, uint8_t, uint32_t, uint64_t
from libc.string cimport memcpy


cdef inline uint32_t _rotl32(uint32_t x, int r) noexcept nogil:
    return (x << r) | (x >> (32 - r))


cdef inline uint64_t _rotl64(uint64_t x, int r) noexcept nogil:
    return (x << r) | (x >> (64 - r))


cdef inline uint32_t _fmix32(uint32_t h) noexcept nogil:
    h ^= h >> 16
    h *= 0x85ebca6bU
    h ^= h >> 13
    h *= 0xc2b2ae35U
    h ^= h >> 16
    return h


cdef inline uint64_t _fmix64(uint64_t k) noexcept nogil:
    k ^= k >> 33
    k *= 0xff51afd7ed558ccdULL
    k ^= k >> 33
    k *= 0xc4ceb9fe1a85ec53ULL
    k ^= k >> 33
    return k


cdef inline uint32_t _scramble32(uint32_t k1) noexcept nogil:
    """The seed-independent half of a block mix."""
    k1 *= 0xcc9e2d51U
    k1 = _rotl32(k1, 15)
    return k1 * 0x1b873593U


cdef inline uint32_t _combine32(uint32_t h1, uint32_t scrambled) noexcept nogil:
    h1 ^= scrambled
    h1 = _rotl32(h1, 13)
    return h1 * 5U + 0xe6546b64U


cdef inline uint32_t _mix_block32(uint32_t h1, uint32_t k1) noexcept nogil:
    return _combine32(h1, _scramble32(k1))


cdef inline uint64_t scramble_key(int64_t key) noexcept nogil:
    """Both scrambled 32-bit blocks of ``key``, to hash it under many seeds."""
    cdef uint64_t u = <uint64_t>key
    return (<uint64_t>_scramble32(<uint32_t>(u & 0xffffffffU))
            | ((<uint64_t>_scramble32(<uint32_t>(u >> 32))) << 32))


cdef inline uint32_t murmurhash3_32_scrambled(uint64_t scrambled, uint32_t seed) noexcept nogil:
    """``murmurhash3_32_key(key, seed)`` from ``scramble_key(key)``."""
    cdef uint32_t h1 = _combine32(seed, <uint32_t>(scrambled & 0xffffffffU))
    h1 = _combine32(h1, <uint32_t>(scrambled >> 32))
    return _fmix32(h1 ^ 8U)


cdef inline uint32_t murmurhash3_32_key(int64_t key, uint32_t seed) noexcept nogil:
    """x86_32 hash of the 8 little-endian bytes of ``key``."""
    return murmurhash3_32_scrambled(scramble_key(key), seed)


cdef inline uint32_t murmurhash3_32_bytes(const uint8_t* data, Py_ssize_t n,
                                          uint32_t seed) noexcept nogil:
    """x86_32 hash of ``n`` bytes."""
    cdef Py_ssize_t nblocks = n // 4, i
    cdef uint32_t h1 = seed, k1 = 0
    cdef const uint8_t* tail = data + nblocks * 4
    for i in range(nblocks):
        memcpy(&k1, data + 4 * i, 4)
        h1 = _mix_block32(h1, k1)
    k1 = 0
    cdef int rem = n & 3
    if rem == 3:
        k1 ^= (<uint32_t>tail[2]) << 16
    if rem >= 2:
        k1 ^= (<uint32_t>tail[1]) << 8
    if rem >= 1:
        k1 ^= tail[0]
        k1 *= 0xcc9e2d51U
        k1 = _rotl32(k1, 15)
        k1 *= 0x1b873593U
        h1 ^= k1
    return _fmix32(h1 ^ <uint32_t>n)


cdef inline void murmurhash3_128_bytes(const uint8_t* data, Py_ssize_t n, uint32_t seed,
                                       uint64_t* out) noexcept nogil:
    """x64_128 hash of ``n`` bytes into ``out[0]``, ``out[1]``."""
    cdef uint64_t c1 = 0x87c37b91114253d5ULL, c2 = 0x4cf5ad432745937fULL
    cdef uint64_t h1 = seed, h2 = seed, k1, k2
    cdef Py_ssize_t nblocks = n // 16, i
    cdef const uint8_t* tail = data + nblocks * 16
    cdef int rem = n & 15, j
    for i in range(nblocks):
        memcpy(&k1, data + 16 * i, 8)
        memcpy(&k2, data + 16 * i + 8, 8)
        k1 *= c1
        k1 = _rotl64(k1, 31)
        k1 *= c2
        h1 ^= k1
        h1 = _rotl64(h1, 27)
        h1 += h2
        h1 = h1 * 5 + 0x52dce729ULL
        k2 *= c2
        k2 = _rotl64(k2, 33)
        k2 *= c1
        h2 ^= k2
        h2 = _rotl64(h2, 31)
        h2 += h1
        h2 = h2 * 5 + 0x38495ab5ULL
    k1 = 0
    k2 = 0
    if rem > 8:
        for j in range(rem - 1, 7, -1):
            k2 ^= (<uint64_t>tail[j]) << (8 * (j - 8))
        k2 *= c2
        k2 = _rotl64(k2, 33)
        k2 *= c1
        h2 ^= k2
    if rem > 0:
        for j in range(min(rem, 8) - 1, -1, -1):
            k1 ^= (<uint64_t>tail[j]) << (8 * j)
        k1 *= c1
        k1 = _rotl64(k1, 31)
        k1 *= c2
        h1 ^= k1
    h1 ^= <uint64_t>n
    h2 ^= <uint64_t>n
    h1 += h2
    h2 += h1
    h1 = _fmix64(h1)
    h2 = _fmix64(h2)
    h1 += h2
    h2 += h1
    out[0] = h1
    out[1] = h2


cdef inline int64_t murmurhash3_64_bytes(const uint8_t* data, Py_ssize_t n,
                                         uint32_t seed) noexcept nogil:
    """First 64 bits of the x64_128 hash, as a signed key."""
    cdef uint64_t out[2]
    murmurhash3_128_bytes(data, n, seed, out)
    return <int64_t>out[0]


cdef inline void bucket_and_sign_scrambled(uint64_t scrambled, uint32_t seed, uint64_t width,
                                           Py_ssize_t* bucket, double* sign) noexcept nogil:
    """``bucket_and_sign`` from ``scramble_key(key)`` (hash a key once for all rows)."""
    cdef uint32_t h = murmurhash3_32_scrambled(scrambled, seed)
    bucket[0] = <Py_ssize_t>(((<uint64_t>(h >> 1)) * width) >> 31)
    sign[0] = <double>(<int>((h & 1U) << 1) - 1)


cdef inline void bucket_and_sign(int64_t key, uint32_t seed, uint64_t width,
                                 Py_ssize_t* bucket, double* sign) noexcept nogil:
    """Count-Sketch row hash: the top 31 bits pick the bucket, the low bit the sign.

    The bucket uses the multiply-shift range reduction ``(h >> 1) * width >> 31``
    (no division), which is uniform for any ``width <= 2**31``.
    """
    bucket_and_sign_scrambled(scramble_key(key), seed, width, bucket, sign)


cdef inline int64_t cross_key(int64_t a, int64_t b) noexcept nogil:
    """Key of the cross of two keys: ``fmix64(a * 0x9E3779B97F4A7C15 + b + 1)`` modulo
    ``2**63 - 1`` in unsigned 64-bit arithmetic, in the key space of names' keys."""
    return <int64_t>(_fmix64(<uint64_t>a * 0x9E3779B97F4A7C15ULL + <uint64_t>b + 1)
                     % 0x7FFFFFFFFFFFFFFFULL)
