"""Streaming heavy hitters: Count-Sketch estimates offered to a top-k heap."""
import numpy as np

from libc.math cimport isfinite
from libc.stdint cimport int64_t

from ._count_sketch cimport MAX_DEPTH, CountSketch
from ._count_sketch import _as_finite_values
from ._murmurhash import _as_key_array
from ._topk_heap cimport TopKHeap


def track_heavy_hitters(CountSketch sketch not None, TopKHeap heap not None, keys, deltas=None):
    """Add a stream to ``sketch`` and keep its heaviest keys in ``heap``.

    For each item in order: ``sketch[key] += delta``, then the key's new estimate
    is offered to the heap (Charikar et al.'s Count-Sketch heavy hitters). One
    call processes the whole array without the GIL.

    Parameters
    ----------
    sketch : CountSketch
        Sketch receiving the stream.
    heap : TopKHeap
        Heap receiving the estimates.
    keys : array-like of int, shape (n,)
        Stream of keys.
    deltas : array-like of float, shape (n,), default=None
        Increments; ``None`` counts each occurrence as 1.

    Raises
    ------
    ValueError
        When a sketch cell or an estimate would overflow to infinity; the
        sketch (through its undo journal) and the heap (from a copy taken
        first, ``O(heap capacity)``) are then exactly as before the call.
    MemoryError
        When the sketch's undo log cannot be allocated (both unchanged too).

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_sketch import CountSketch, TopKHeap
    >>> from sklearn_sketch._core import track_heavy_hitters
    >>> stream = np.repeat(np.arange(100), np.arange(100))   # key i appears i times
    >>> sketch, heap = CountSketch(512, 5, random_state=0), TopKHeap(3)
    >>> track_heavy_hitters(sketch, heap, stream)
    >>> heap.keys().tolist()
    [99, 98, 97]
    """
    sketch._check_initialised()
    heap._check_initialised()
    key_arr = _as_key_array(np.atleast_1d(keys))
    if deltas is None:
        delta_arr = np.ones(key_arr.shape[0], dtype=np.float64)
    else:
        delta_arr = _as_finite_values(np.atleast_1d(deltas))
    if key_arr.ndim != 1 or delta_arr.shape != key_arr.shape:
        raise ValueError(
            f"keys and deltas must be 1-D of equal length, got {key_arr.shape} and {delta_arr.shape}")
    cdef const int64_t[::1] k = key_arr
    cdef const double[::1] d = delta_arr
    cdef Py_ssize_t i, n = k.shape[0]
    cdef int64_t evicted_key
    cdef double estimate, evicted_weight
    cdef Py_ssize_t cells[MAX_DEPTH]
    cdef double signs[MAX_DEPTH]
    cdef bint finite = True
    if n == 0:
        return
    saved_heap = heap.copy()
    cdef Py_ssize_t mark = sketch._undo_point()
    with nogil:
        for i in range(n):
            sketch.locate(k[i], cells, signs)
            if not sketch.add_located(cells, signs, d[i]):
                finite = False
                break
            estimate = sketch.estimate_located(cells, signs)
            # The heap stores estimate / its scale: that must stay finite too.
            if not (isfinite(estimate) and isfinite(estimate / heap._scale)):
                finite = False
                break
            heap.offer(k[i], estimate, &evicted_key, &evicted_weight)
    if finite:
        sketch._undo_release(mark)
        return
    failed = sketch.journal_failed
    sketch._undo_to(mark)
    heap._restore(saved_heap)
    if failed:
        raise MemoryError("cannot allocate the sketch's undo log; the sketch and the heap "
                          "are unchanged")
    raise ValueError(
        f"item {i} (key {k[i]}, delta {d[i]:.3g}) overflows the sketch's "
        f"{sketch.dtype.name} cells or its estimate; the sketch and the heap are unchanged")
