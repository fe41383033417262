"""One pass of sketched SGD over CSR rows: MISSION, IHT, feature hashing, (A)WM-Sketch.

The algorithms share the loop and differ in where the weights live:

* ``SKETCH_AND_HEAP`` (MISSION): the gradient goes into a Count-Sketch; the
  touched features' new estimates are offered to the top-k heap, and the heap
  weights are the model used for predictions.
* ``HEAP_ONLY`` (IHT): the heap is the whole model; the step is applied to the
  heap weights, then hard thresholding keeps the top k (an evicted weight is lost).
* ``SKETCH_ONLY`` (feature hashing): the sketch is the model, read by estimate.
* ``WEIGHT_MEDIAN`` (WM-Sketch, Tai et al. 2018, Algorithm 1): online gradient
  descent on the sketch ``z`` through the projection ``R = A / sqrt(s)``: the
  prediction reads ``z^T R x`` (a sum over rows), a step adds ``-eta g R x``,
  a weight is ``sqrt(s)`` times the median; a heap passively tracks the largest.
* ``ACTIVE_SET`` (AWM-Sketch, Algorithm 2): heap weights are exact and not in
  the sketch; a feature outside enters the heap when its updated estimate beats
  the heap minimum, and the evicted weight is written back into the sketch.
* ``PROB_TRUNCATION`` (WM-Sketch paper, Algorithm 4): the heap keeps the K
  weights of largest reservoir key ``r**(1/|w|)``; it stores ``w / E`` with
  ``E = -log r`` in the entry's auxiliary value (the same order).
* ``SPACE_SAVING`` (frequent features): the heap counts feature occurrences
  with the Space-Saving rule and the weights of the counted features live in
  the auxiliary values.
* ``SOFT_THRESHOLD`` (Xie et al., Algorithm 1): an exact sparse model of at
  most K weights, each soft-thresholded after its update; new features are not
  added while K weights are non-zero.

Each of the ``K`` models (one per class, or one) has its own sketch and heap;
the sketches share their seeds, so a key is hashed once per batch for all of
them. Python is entered once per pass, never per sample.
"""
import numpy as np

from cpython.ref cimport PyObject
from libc.math cimport isfinite, log, sqrt
from libc.stdint cimport int64_t, uint32_t, uint64_t
from libc.stdlib cimport free, malloc, qsort
from libc.string cimport memcpy, memset

from ._core._count_sketch cimport MAX_DEPTH, CountSketch
from ._core._murmurhash cimport _fmix64
from ._core._topk_heap cimport HEAP_REPLACED, TopKHeap


#: The auto prediction compares the heap's and the sketch's reads on every
#: COMPARE_EVERY-th sample.
cdef int64_t COMPARE_EVERY = 4


cdef class SGDParams:
    """Settings of a pass (a small object instead of many positional arguments)."""

    def __init__(self, *, loss, schedule, store, eta0, power_t, alpha, optimal_init,
                 batch_size, fit_intercept, margin=0.0, threshold=0.0, seed=0, damping=0.0,
                 compare_reads=False, norm_floor=0.0, margin_trust=0.0, read_sketch=False):
        self.compare_reads = compare_reads
        self.read_sketch = read_sketch
        self.margin_trust = margin_trust
        self.norm_floor = norm_floor
        self.margin = margin
        self.damping = damping
        self.threshold = threshold
        self.seed = seed
        self.loss = loss
        self.schedule = schedule
        self.store = store
        self.eta0 = eta0
        self.power_t = power_t
        self.alpha = alpha
        self.optimal_init = optimal_init
        # Kernels use at most one batch of the data's rows: a larger batch is one batch.
        self.batch_size = min(batch_size, PY_SSIZE_T_MAX)
        self.fit_intercept = fit_intercept


ctypedef struct KeyDelta:
    int64_t key
    double delta


cdef int _compare_keys(const void* a, const void* b) noexcept nogil:
    cdef int64_t ka = (<const KeyDelta*>a).key, kb = (<const KeyDelta*>b).key
    return (ka > kb) - (ka < kb)


cdef inline double model_weight(int store, PyObject* sketch, PyObject* heap, int64_t key,
                                const Py_ssize_t* cells, const double* signs, double root,
                                bint* in_heap) noexcept nogil:
    """Weight of ``key`` used for predictions in a store that reads a heap (the
    sketch-only stores score a whole row with ``CountSketch.dot_located``)."""
    cdef double w, aux
    if store == PROB_TRUNCATION or store == SPACE_SAVING:
        in_heap[0] = (<TopKHeap>heap).lookup_aux(key, &w, &aux)
        if not in_heap[0]:
            return 0.0
        return w * aux if store == PROB_TRUNCATION else aux
    in_heap[0] = (<TopKHeap>heap).lookup(key, &w)
    if in_heap[0]:
        return w
    if store == ACTIVE_SET:
        return (<CountSketch>sketch).sum_located(cells, signs) / root
    return 0.0


cdef bint _active_set_step(CountSketch sketch, TopKHeap heap, const int64_t* keys,
                           const double* deltas, Py_ssize_t n, const Py_ssize_t* cells,
                           const double* signs, double root, bint* in_heap,
                           bint in_heap_known) noexcept nogil:
    """AWM-Sketch update of one sample's features; False if a weight or cell became non-finite.

    Features in the heap take their step there first; then each other feature
    either enters the heap with its updated estimate (the evicted weight going
    back into the sketch) or takes its step in the sketch. ``in_heap`` holds
    each key's membership (filled here unless ``in_heap_known``).
    """
    cdef Py_ssize_t p, depth = sketch.depth
    cdef double w
    cdef int64_t evicted_key
    cdef double evicted_weight
    for p in range(n):
        if not in_heap_known:
            in_heap[p] = heap.lookup(keys[p], &w)
        elif in_heap[p]:
            heap.lookup(keys[p], &w)
        if in_heap[p]:
            w += deltas[p]
            if not isfinite(w):
                return False
            heap.offer(keys[p], w, &evicted_key, &evicted_weight)
    for p in range(n):
        if in_heap[p]:
            continue
        w = root * sketch.estimate_located(&cells[p * depth], &signs[p * depth]) + deltas[p]
        if not isfinite(w):
            return False
        if heap.accepts(keys[p], w):
            if heap.offer(keys[p], w, &evicted_key, &evicted_weight) == HEAP_REPLACED:
                if not sketch.add(evicted_key,
                                  (evicted_weight - root * sketch.estimate(evicted_key)) / root):
                    return False
        elif not sketch.add_located(&cells[p * depth], &signs[p * depth], deltas[p] / root):
            return False
    return True


cdef Py_ssize_t _sum_duplicate_keys(KeyDelta* pairs, Py_ssize_t n, bint presorted) noexcept nogil:
    """Sort ``pairs`` by key (unless ``presorted``) and sum equal keys; new length."""
    cdef Py_ssize_t i, m = 0
    if n == 0:
        return 0
    if not presorted:
        qsort(pairs, n, sizeof(KeyDelta), _compare_keys)
    for i in range(1, n):
        if pairs[i].key == pairs[m].key:
            pairs[m].delta += pairs[i].delta
        else:
            m += 1
            pairs[m] = pairs[i]
    return m + 1


cdef inline double _exponential(uint64_t seed, int64_t key, double clock) noexcept nogil:
    """An Exp(1) draw that is a function of (seed, key, clock): no RNG state to carry."""
    cdef uint64_t h = _fmix64(seed ^ _fmix64(<uint64_t>key * 0x9E3779B97F4A7C15ULL
                                             ^ <uint64_t>clock))
    return -log(((<double>(h >> 11)) + 0.5) * (1.0 / 9007199254740992.0))


cdef void _probabilistic_truncation_step(TopKHeap heap, KeyDelta* pairs, Py_ssize_t n,
                                         bint presorted, uint64_t seed,
                                         double clock) noexcept nogil:
    """Algorithm 4: step every weight, then keep the K of largest reservoir key.

    The reservoir key ``r**(1/|w|)`` of a weight orders like ``|w| / E`` with
    ``E = -log r`` drawn when the feature enters, which the heap stores.
    """
    cdef Py_ssize_t i, m = _sum_duplicate_keys(pairs, n, presorted), n_new = 0
    cdef double w, e
    cdef double* slot
    cdef int64_t evicted_key
    cdef double evicted_weight
    for i in range(m):
        if heap.lookup_aux(pairs[i].key, &w, &e):
            heap.offer(pairs[i].key, w + pairs[i].delta / e, &evicted_key, &evicted_weight)
        elif pairs[i].delta != 0.0:
            pairs[n_new] = pairs[i]
            n_new += 1
    for i in range(n_new):
        e = _exponential(seed, pairs[i].key, clock)
        if heap.accepts(pairs[i].key, pairs[i].delta / e):
            heap.offer(pairs[i].key, pairs[i].delta / e, &evicted_key, &evicted_weight)
            slot = heap.aux_slot(pairs[i].key)
            slot[0] = e / heap.aux_scale()


cdef void _space_saving_step(TopKHeap heap, const int64_t* keys, const double* deltas,
                             Py_ssize_t n) noexcept nogil:
    """Count the sample's features (Space-Saving), then step the counted ones' weights.

    A feature not counted replaces the least counted one (whose weight is lost)
    with that count plus one.
    """
    cdef Py_ssize_t p
    cdef double count
    cdef double* slot
    cdef int64_t evicted_key
    cdef double evicted_weight
    for p in range(n):
        if heap.lookup(keys[p], &count):
            heap.offer(keys[p], count + 1.0, &evicted_key, &evicted_weight)
        else:
            heap.offer(keys[p], heap.min_weight() + 1.0 if heap._size == heap.capacity else 1.0,
                       &evicted_key, &evicted_weight)
    for p in range(n):
        slot = heap.aux_slot(keys[p])
        if slot != NULL:
            slot[0] += deltas[p] / heap.aux_scale()


cdef bint _soft_threshold_step(TopKHeap heap, KeyDelta* pairs, Py_ssize_t n, bint presorted,
                               double threshold) noexcept nogil:
    """Step the weights, soft-threshold each updated one; no new feature past capacity.

    False if a stepped weight is not finite: thresholding would zero a NaN and
    hide the divergence.
    """
    cdef Py_ssize_t i, m = _sum_duplicate_keys(pairs, n, presorted)
    cdef double w
    cdef int64_t evicted_key
    cdef double evicted_weight
    for i in range(m):
        if not heap.lookup(pairs[i].key, &w):
            if heap._size == heap.capacity:
                continue
            w = 0.0
        w += pairs[i].delta
        if not isfinite(w):
            return False
        w = (w - threshold if w > threshold else (w + threshold if w < -threshold else 0.0))
        if w == 0.0:
            heap.discard(pairs[i].key, &evicted_weight)
        else:
            heap.offer(pairs[i].key, w, &evicted_key, &evicted_weight)
    return True


cdef void _hard_threshold_step(TopKHeap heap, KeyDelta* pairs, Py_ssize_t n,
                               bint presorted) noexcept nogil:
    """IHT: add the summed deltas to the heap weights, then keep the top k.

    Keys already in the heap are updated first and new keys offered after, so
    the result is exactly the top k of the union (the hard threshold H_k).
    """
    cdef Py_ssize_t i, m = _sum_duplicate_keys(pairs, n, presorted)
    cdef double w
    cdef int64_t evicted_key
    cdef double evicted_weight
    # Keys in the heap take their step now; the others move to the front to be offered.
    n = 0
    for i in range(m):
        if heap.lookup(pairs[i].key, &w):
            heap.offer(pairs[i].key, w + pairs[i].delta, &evicted_key, &evicted_weight)
        elif pairs[i].delta != 0.0:
            pairs[n] = pairs[i]
            n += 1
    for i in range(n):
        heap.offer(pairs[i].key, pairs[i].delta, &evicted_key, &evicted_weight)


cdef bint _every_row_one_sparse(const int64_t[::1] indptr,
                                const int64_t[::1] order) noexcept nogil:
    """Whether each row of ``order`` holds exactly one stored value."""
    cdef Py_ssize_t i
    for i in range(order.shape[0]):
        if indptr[order[i] + 1] - indptr[order[i]] != 1:
            return False
    return True


cdef int _one_sparse_active_set_pass(SGDParams params, CountSketch sketch, TopKHeap heap,
                                     double* intercept, const int64_t* indptr,
                                     const int64_t* indices, const double* data,
                                     const double* y, const double* sample_weight,
                                     const int64_t* order, Py_ssize_t n_rows, double* t,
                                     Py_ssize_t* mistakes, double* log_loss) noexcept nogil:
    """:func:`sgd_pass` of one AWM-Sketch model over rows of one value each, one
    row a batch: the same arithmetic, in the same order, as the general loop
    (the same model bit for bit), without its per-batch bookkeeping of several
    models, teams and buffers. The WM-Sketch paper's explanations train on such
    rows (one example per attribute or cross, ``OutlierExplainer``): 12.1M of
    them on the flights out of New York, where the general loop spent about a
    quarter of the pass on that bookkeeping. Returns the pass status."""
    cdef Py_ssize_t cells[MAX_DEPTH]
    cdef double signs[MAX_DEPTH]
    cdef Py_ssize_t i, row, p
    cdef int64_t key
    cdef double root = sqrt(<double>sketch.depth)
    cdef double eta, x, w, s, dl, norm2, decay, step, delta
    cdef bint in_heap
    cdef int status = PASS_OK
    for i in range(n_rows):
        row = order[i]
        p = indptr[row]
        key = indices[p]
        x = data[p]
        eta = learning_rate(params, t[0])
        sketch.locate_prefetch(key, cells, signs)
        s = intercept[0]
        in_heap = heap.lookup(key, &w)
        if not in_heap:
            w = sketch.sum_located(cells, signs) / root
        s += x * w
        if not isfinite(s):
            return PASS_DIVERGED
        log_loss[0] += sample_log_loss(params.loss, 1, s, y[row])
        mistakes[0] += sample_dloss(params.loss, 1, &s, y[row], sample_weight[row],
                                    params.margin, &dl)
        norm2 = 1.0
        if params.schedule == NORMALIZED:
            s = x * x
            if s > 0.0 and isfinite(s):
                s = max(s, params.norm_floor)
                norm2 = s / 2.0
                dl /= s
        if params.alpha > 0.0:
            decay = max(0.0, 1.0 - eta * params.alpha)
            if not sketch.multiply(decay):
                status = PASS_DIVERGED
            heap.multiply(decay)
        step = -eta
        if params.fit_intercept:
            intercept[0] += step * (dl * norm2)
            if not isfinite(intercept[0]):
                status = PASS_DIVERGED
        if dl != 0.0:
            delta = step * dl * x
            if not _active_set_step(sketch, heap, &key, &delta, 1, cells, signs, root,
                                    &in_heap, True):
                status = PASS_DIVERGED
        t[0] += 1
        if status != PASS_OK:
            return status
    return status


cdef extern from "_spin_barrier.h" nogil:
    ctypedef struct sks_barrier:
        pass
    ctypedef struct sks_waiter:
        long sense
        long rounds
    void sks_barrier_init(sks_barrier* b, long n)
    int sks_barrier_wait(sks_barrier* b, sks_waiter* w)
    void sks_barrier_raise(sks_barrier* b, sks_waiter* w)
    long sks_barrier_raised(sks_barrier* b, sks_waiter* w)
    void sks_barrier_go_solo(sks_barrier* b, sks_waiter* w)
    long sks_barrier_solo(sks_barrier* b, sks_waiter* w)


#: Waits of more than half a millisecond (another thread of the team was not running:
#: a busy machine) after which a class-parallel pass goes on in its first thread.
cdef long SLOW_WAITS_TO_SOLO = 16


def _set_slow_waits_to_solo(long waits):
    """Set how many slow waits make a class-parallel pass go solo; returns the old value
    (tests set 0 to take that path on an idle machine)."""
    global SLOW_WAITS_TO_SOLO
    old, SLOW_WAITS_TO_SOLO = SLOW_WAITS_TO_SOLO, waits
    return old


cdef class ClassTeam:
    """What the threads of one class-parallel pass share: a barrier and the scores.

    Each of ``n_threads`` threads runs :func:`sgd_pass` over every row for its
    own range of the ``n_models`` models (the classes); once per row they meet
    to read every model's score, which the softmax (and the mistake count)
    needs. The scores are kept twice, by row parity, so one meeting a row is
    enough. A thread that finds a model diverging raises the barrier's flag:
    all stop together after the next meeting.

    Parameters
    ----------
    n_threads : int
        Threads that will call ``sgd_pass`` with this team.
    n_models : int
        Models (``len(intercept)``) of the pass.
    """
    cdef sks_barrier barrier
    cdef double* scores
    cdef double* sketch_scores
    cdef readonly Py_ssize_t n_threads, n_models

    def __cinit__(self, Py_ssize_t n_threads, Py_ssize_t n_models):
        if n_threads < 1 or n_models < 1:
            raise ValueError("a team needs at least one thread and one model")
        self.n_threads = n_threads
        self.n_models = n_models
        sks_barrier_init(&self.barrier, n_threads)
        self.scores = <double*>malloc_array(2 * n_models, 1, sizeof(double))
        self.sketch_scores = <double*>malloc_array(2 * n_models, 1, sizeof(double))
        if not (self.scores and self.sketch_scores):
            raise MemoryError()
        memset(self.scores, 0, 2 * n_models * sizeof(double))
        memset(self.sketch_scores, 0, 2 * n_models * sizeof(double))

    def __dealloc__(self):
        free(self.scores)
        free(self.sketch_scores)


def check_models(list sketches, list heaps):
    """Raise unless ``sketches`` and ``heaps`` hold initialised CountSketch and TopKHeap objects.

    The kernels cast the entries without the GIL: a wrong type or an object
    made by ``__new__`` alone would be read as garbage.

    Parameters
    ----------
    sketches : list of CountSketch
    heaps : list of TopKHeap
    """
    for sketch in sketches:
        if not isinstance(sketch, CountSketch):
            raise TypeError(f"expected CountSketch objects, got {type(sketch).__name__}")
        sketch._check_initialised()
    for heap in heaps:
        if not isinstance(heap, TopKHeap):
            raise TypeError(f"expected TopKHeap objects, got {type(heap).__name__}")
        heap._check_initialised()


def sgd_pass(SGDParams params not None, list sketches, list heaps, double[::1] intercept,
             const int64_t[::1] indptr, const int64_t[::1] indices, const double[::1] data,
             const double[::1] y, const double[::1] sample_weight, const int64_t[::1] order,
             double t, Py_ssize_t max_batch_nnz, Py_ssize_t class_start=0,
             Py_ssize_t class_stop=-1, ClassTeam team=None, uint32_t[::1] feature_counts=None,
             bint one_sparse_loop=True):
    """Train the ``K = len(intercept)`` models on the rows ``order``, in mini-batches.

    Parameters
    ----------
    params : SGDParams
        Loss, schedule, weight store, step sizes, batch size.
    sketches, heaps : list of CountSketch, list of TopKHeap
        One per model (empty when the store does not use them). Sketches must
        share width, depth and seeds.
    intercept : ndarray of float64, shape (K,)
        Updated in place (when ``params.fit_intercept``).
    indptr, indices, data : CSR arrays (int64 indices, canonical: no duplicates)
    y : ndarray of float64
        Regression target, binary target in {-1, +1}, or class index for
        ``K > 1`` (one-vs-rest, or softmax with ``SOFTMAX``).
    sample_weight : ndarray of float64
    order : ndarray of int64
        Rows in the order they are visited.
    t : float
        Samples seen so far plus one (the schedule's clock).
    max_batch_nnz : int
        Largest number of non-zeros in one mini-batch (sizes the buffers).
    class_start, class_stop : int, default=0 and -1 (``K``)
        The models this call trains (with ``team``; all of them otherwise).
    team : ClassTeam, default=None
        Shared with the other threads of a class-parallel pass, each training
        its own range of models over every row. The models (and ``t``,
        ``mistakes`` and ``read_errors``) are those of one call over all of
        them, bit for bit: a model's arithmetic never reads another's weights,
        only every model's score, shared at each row.
    feature_counts : ndarray of uint32, default=None
        With ``FREQUENCY``: how often the features hashed to each cell
        (``fmix64(key) % size``) occurred so far, shared by the models and
        counted on (saturating). With ``ADAPTIVE``: the float32 bits of the sum
        of the squared gradients of those features so far, over every model
        (``view(np.uint32)`` of a float32 array). Each thread of a team counts
        in its own copy (every thread reads every row and every model's loss
        derivative), and the first writes it back.
    one_sparse_loop : bool, default=True
        Train one AWM-Sketch model (``ACTIVE_SET``, one row a batch, no
        per-feature schedule) over rows of one value each in a loop of its own
        (:func:`_one_sparse_active_set_pass`), the same model bit for bit;
        False trains them in the general loop (the reference it is tested
        against).

    Returns
    -------
    t : float
        The clock after the pass.
    status : PassStatus
        ``PASS_DIVERGED`` when a score or weight became non-finite; the pass
        stops there.
    mistakes : int
        Samples misclassified by the model just before their update (the online
        error count; meaningless for regression).
    read_errors : tuple of float
        With ``params.compare_reads`` and a sketch-and-heap store: the summed
        errors (squared error for regression, else misclassifications) of the
        heap-only and of the sketch-reading predictions, just before their
        update, of every ``COMPARE_EVERY``-th sample by the clock; zeros
        otherwise.
    """
    cdef Py_ssize_t K = intercept.shape[0], n_rows = order.shape[0]
    cdef Py_ssize_t bs = params.batch_size, depth = 0
    cdef Py_ssize_t c_lo = class_start, c_hi = K if class_stop < 0 else class_stop
    cdef bint in_team = team is not None
    if not 0 <= c_lo < c_hi <= K:
        raise ValueError(f"models [{class_start}, {class_stop}) are not a range of the {K}")
    if in_team and team.n_models != K:
        raise ValueError(f"the team shares the scores of {team.n_models} models, not {K}")
    if not in_team and (c_lo != 0 or c_hi != K):
        raise ValueError("a part of the models is trained only with a team")
    cdef int store = params.store, loss = params.loss
    cdef bint has_sketch = not (store == HEAP_ONLY or store == PROB_TRUNCATION
                                or store == SPACE_SAVING or store == SOFT_THRESHOLD)
    cdef bint has_heap = store != SKETCH_ONLY
    if (has_sketch and len(sketches) != K) or (has_heap and len(heaps) != K):
        raise ValueError("one sketch and one heap per model are needed")
    check_models(sketches if has_sketch else [], heaps if has_heap else [])
    if has_sketch:
        depth = (<CountSketch>sketches[0]).depth
        for sketch in sketches:
            if not (<CountSketch>sketches[0]).same_configuration(sketch):
                raise ValueError("the sketches of the models must share their configuration")
    # Buffers are sized by the data: a batch holds at most every row.
    bs = max(1, min(bs, n_rows))
    cdef PyObject** sk = <PyObject**>malloc_array(K, 1, sizeof(PyObject*))
    cdef PyObject** hp = <PyObject**>malloc_array(K, 1, sizeof(PyObject*))
    cdef Py_ssize_t* cells = <Py_ssize_t*>malloc_array(max_batch_nnz, depth, sizeof(Py_ssize_t))
    cdef double* signs = <double*>malloc_array(max_batch_nnz, depth, sizeof(double))
    cdef double* dl = <double*>malloc_array(bs, K, sizeof(double))
    cdef double* row_norm2 = <double*>malloc_array(bs, 1, sizeof(double))
    cdef double* scores = <double*>malloc_array(K, 1, sizeof(double))
    cdef double* sketch_scores = <double*>malloc_array(K, 1, sizeof(double))
    cdef KeyDelta* pairs = <KeyDelta*>malloc_array(max_batch_nnz, 1, sizeof(KeyDelta))
    # Whether each (non-zero, model) key was in the heap when the batch was scored.
    cdef bint* in_heap = <bint*>malloc_array(max_batch_nnz, K, sizeof(bint))
    cdef double* row_delta = <double*>malloc_array(max_batch_nnz, 1, sizeof(double))
    cdef bint* row_flags = <bint*>malloc_array(max_batch_nnz, 1, sizeof(bint))
    # FREQUENCY: each non-zero's 1 / sqrt(count) in the batch, and this call's counts;
    # ADAPTIVE: 1 / sqrt(sum of squared gradients), and this call's sums (as float32).
    cdef bint by_gradient = params.schedule == ADAPTIVE
    cdef bint by_frequency = params.schedule == FREQUENCY or by_gradient
    if by_frequency and (feature_counts is None or feature_counts.shape[0] == 0):
        raise ValueError("the 'frequency' and 'adaptive' schedules need a non-empty "
                         "feature_counts array")
    cdef Py_ssize_t n_counts = feature_counts.shape[0] if by_frequency else 0
    cdef double* freq = <double*>malloc_array(max_batch_nnz if by_frequency else 0, 1,
                                              sizeof(double))
    cdef uint32_t* counts = <uint32_t*>malloc_array(n_counts, 1, sizeof(uint32_t))
    cdef bint allocated = (sk and hp and cells and signs and dl and row_norm2 and scores
                           and sketch_scores and pairs and in_heap and row_delta and row_flags
                           and freq and counts)
    # A team's threads all start, or none: one that cannot allocate tells the others.
    cdef sks_waiter waiter
    waiter.sense = 0
    waiter.rounds = 0
    cdef bint team_failed = False
    if in_team:
        with nogil:
            if not allocated:
                sks_barrier_raise(&team.barrier, &waiter)
            sks_barrier_wait(&team.barrier, &waiter)
            team_failed = sks_barrier_raised(&team.barrier, &waiter)
    if not allocated or team_failed:
        free(sk); free(hp); free(cells); free(signs); free(dl); free(row_norm2); free(scores)
        free(sketch_scores); free(pairs); free(in_heap); free(row_delta); free(row_flags)
        free(freq); free(counts)
        raise MemoryError(f"cannot allocate the buffers of a batch of {bs} rows and "
                          f"{max_batch_nnz} non-zeros for {K} model(s)")
    if by_frequency:
        memcpy(counts, &feature_counts[0], n_counts * sizeof(uint32_t))
    cdef Py_ssize_t c
    for c in range(K):
        if has_sketch:
            sk[c] = <PyObject*>sketches[c]
        if has_heap:
            hp[c] = <PyObject*>heaps[c]

    cdef Py_ssize_t start, stop, b, row, p, q, off, n_pairs, n_row
    # Weight-Median stores read and write the sketch through R = A / sqrt(depth).
    cdef double root = sqrt(<double>depth) if store == WEIGHT_MEDIAN or store == ACTIVE_SET else 1.0
    cdef double eta, decay, step, x, w, s, dsum, s_sketch, s_freq, dl2
    cdef float* squares = <float*>counts
    cdef Py_ssize_t slot
    cdef int64_t key, evicted_key
    cdef double evicted_weight
    cdef int status = PASS_OK
    cdef Py_ssize_t mistakes = 0
    # Progressive validation of the two ways a MISSION model can predict: the
    # heap alone (what training reads) and the sketch for features outside it.
    # Every COMPARE_EVERY-th sample is enough to tell which read errs less, and
    # the sketch reads of the others (a sixth of the pass's time) are saved.
    cdef bint compare_pass = params.compare_reads and store == SKETCH_AND_HEAP
    cdef bint compare = False
    cdef double heap_error = 0.0, sketch_error = 0.0, log_loss = 0.0
    cdef CountSketch sketch0 = sketches[0] if has_sketch else None
    # Stores whose scores read the sketch (MISSION's read the heap alone).
    cdef bint reads_sketch = (store == WEIGHT_MEDIAN or store == SKETCH_ONLY
                              or store == ACTIVE_SET)
    # The scores every model's update reads: this call's own, or the team's, by
    # row parity (a thread may write the next row's while another reads these).
    cdef double* own_scores = scores
    cdef double* own_sketch_scores = sketch_scores
    cdef int parity = 0
    cdef long slow_waits = 0
    cdef bint going_solo = False
    # Rows of one value each (OutlierExplainer's examples) train in a loop of their own.
    cdef bint one_sparse = (one_sparse_loop and store == ACTIVE_SET and K == 1
                            and not in_team and bs == 1 and not by_frequency)
    with nogil:
        if one_sparse and n_rows > 0 and _every_row_one_sparse(indptr, order):
            status = _one_sparse_active_set_pass(
                params, sketch0, <TopKHeap>hp[0], &intercept[0], &indptr[0], &indices[0],
                &data[0], &y[0], &sample_weight[0], &order[0], n_rows, &t, &mistakes,
                &log_loss)
            n_rows = 0  # the general loop below has nothing left to train
        start = 0
        # A team stops together, after a meeting; alone, at the first divergence.
        while start < n_rows and (in_team or status == PASS_OK):
            stop = min(start + bs, n_rows)
            eta = learning_rate(params, t)
            # Scores and loss derivatives of the batch at the current weights.
            off = 0
            for b in range(stop - start):
                row = order[start + b]
                compare = compare_pass and (<int64_t>t + b) % COMPARE_EVERY == 0
                if in_team:
                    scores = team.scores + parity * K
                    sketch_scores = team.sketch_scores + parity * K
                    parity = 1 - parity
                if has_sketch:
                    for p in range(indptr[row], indptr[row + 1]):
                        q = off + p - indptr[row]
                        sketch0.locate_prefetch(indices[p], &cells[q * depth], &signs[q * depth])
                for c in range(c_lo, c_hi):
                    s = intercept[c]
                    if reads_sketch and c + 1 < c_hi:
                        # The models share their cells' places, each in its own table:
                        # the next model's are fetched while this one's are read (and,
                        # in the update below, written).
                        (<CountSketch>sk[c + 1]).prefetch_located(
                            &cells[off * depth], indptr[row + 1] - indptr[row])
                    if store == WEIGHT_MEDIAN or store == SKETCH_ONLY:
                        # Sketch-only reads: one call for the whole row.
                        s += (<CountSketch>sk[c]).dot_located(
                            &cells[off * depth], &signs[off * depth], &data[indptr[row]],
                            indptr[row + 1] - indptr[row], store == WEIGHT_MEDIAN) / root
                    else:
                        s_sketch = s
                        for p in range(indptr[row], indptr[row + 1]):
                            q = off + p - indptr[row]
                            w = model_weight(store, sk[c], hp[c], indices[p],
                                             &cells[q * depth], &signs[q * depth], root,
                                             &in_heap[q * K + c])
                            s += data[p] * w
                            if compare:
                                if not in_heap[q * K + c]:
                                    w = (<CountSketch>sk[c]).estimate_located(
                                        &cells[q * depth], &signs[q * depth])
                                s_sketch += data[p] * w
                        if compare:
                            sketch_scores[c] = s_sketch
                    scores[c] = s
                    if not isfinite(s):
                        status = PASS_DIVERGED
                if in_team:
                    if status != PASS_OK:
                        sks_barrier_raise(&team.barrier, &waiter)
                    slow_waits += sks_barrier_wait(&team.barrier, &waiter)
                    if sks_barrier_raised(&team.barrier, &waiter):
                        status = PASS_DIVERGED
                    # Many slow waits, and at least one meeting in 8 (a long row now and
                    # then makes one thread wait on an idle machine too).
                    if SLOW_WAITS_TO_SOLO == 0 or (slow_waits >= SLOW_WAITS_TO_SOLO
                                                   and 8 * slow_waits >= waiter.rounds):
                        sks_barrier_go_solo(&team.barrier, &waiter)
                    if sks_barrier_solo(&team.barrier, &waiter):
                        going_solo = True
                    # The softmax overwrites its scores: each thread its own copy.
                    memcpy(own_scores, scores, K * sizeof(double))
                    scores = own_scores
                if status != PASS_OK:
                    break
                if compare:
                    heap_error += read_error(loss, K, scores, y[row])
                    sketch_error += read_error(loss, K, sketch_scores, y[row])
                log_loss += sample_log_loss(loss, K, scores[0], y[row])
                mistakes += sample_dloss(loss, K, scores, y[row], sample_weight[row],
                                         params.margin, &dl[b * K])
                row_norm2[b] = 1.0
                if params.schedule == NORMALIZED or by_frequency:
                    # Each sample moves its own margin by the same amount whatever the
                    # scale of its features: the weights step by eta0 / ||x||^2, and the
                    # intercept by eta0 / (nnz + 1), as one more feature of the row.
                    # FREQUENCY steps x_j / sqrt(n_j) instead of x_j, divided by
                    # sum(x_j^2 / sqrt(n_j)) (the floor scaling it as it would ||x||^2).
                    s = 0.0
                    s_freq = 0.0
                    dl2 = 0.0
                    if by_gradient:
                        for c in range(K):
                            dl2 += dl[b * K + c] * dl[b * K + c]
                    for p in range(indptr[row], indptr[row + 1]):
                        s += data[p] * data[p]
                        if by_frequency:
                            # A feature seen n times so far takes 1 / sqrt(n) of the share
                            # of the step its value gives it (AdaGrad's per-coordinate
                            # step, with counts for the squared gradients); under
                            # ADAPTIVE, 1 / sqrt of its squared gradients so far.
                            slot = feature_cell(indices[p], n_counts)
                            q = off + p - indptr[row]
                            if by_gradient:
                                squares[slot] += <float>(dl2 * data[p] * data[p])
                                freq[q] = (1.0 / sqrt(<double>squares[slot])
                                           if squares[slot] > 0.0 else 0.0)
                            else:
                                if counts[slot] < 0xFFFFFFFFU:
                                    counts[slot] += 1
                                freq[q] = 1.0 / sqrt(<double>counts[slot])
                            s_freq += data[p] * data[p] * freq[q]
                    # Under ADAPTIVE a sample of no loss derivative (every dl 0) has no
                    # squared gradients, hence s_freq 0: it takes no step to divide.
                    if s > 0.0 and isfinite(s) and not (by_gradient and s_freq == 0.0):
                        if by_frequency:
                            s = s_freq * max(1.0, params.norm_floor / s)
                        else:
                            s = max(s, params.norm_floor)
                        row_norm2[b] = s / (indptr[row + 1] - indptr[row] + 1.0)
                        for c in range(K):
                            dl[b * K + c] /= s
                off += indptr[row + 1] - indptr[row]
            if status != PASS_OK:
                break

            # L2: w <- (1 - eta * alpha) w, in O(1) through the global scales.
            if params.alpha > 0.0:
                decay = max(0.0, 1.0 - eta * params.alpha)
                for c in range(c_lo, c_hi):
                    # False only when a sketch's journal cannot copy its table to
                    # fold the scale (nothing changed): the caller raises.
                    if has_sketch and not (<CountSketch>sk[c]).multiply(decay):
                        status = PASS_DIVERGED
                    if store == SPACE_SAVING:
                        (<TopKHeap>hp[c]).multiply_aux(decay)
                    elif has_heap:
                        (<TopKHeap>hp[c]).multiply(decay)

            step = -eta / (stop - start)
            for c in range(c_lo, c_hi):
                if params.fit_intercept:
                    dsum = 0.0
                    for b in range(stop - start):
                        dsum += dl[b * K + c] * row_norm2[b]
                    intercept[c] += step * dsum
                    if not isfinite(intercept[c]):
                        status = PASS_DIVERGED
                if store == HEAP_ONLY or store == PROB_TRUNCATION or store == SOFT_THRESHOLD:
                    n_pairs = 0
                    off = 0
                    for b in range(stop - start):
                        row = order[start + b]
                        if dl[b * K + c] != 0.0:
                            for p in range(indptr[row], indptr[row + 1]):
                                pairs[n_pairs].key = indices[p]
                                pairs[n_pairs].delta = step * dl[b * K + c] * data[p]
                                if by_frequency:
                                    pairs[n_pairs].delta *= freq[off + p - indptr[row]]
                                n_pairs += 1
                        off += indptr[row + 1] - indptr[row]
                    # A single canonical CSR row has sorted, distinct keys already.
                    if store == HEAP_ONLY:
                        _hard_threshold_step(<TopKHeap>hp[c], pairs, n_pairs, stop - start == 1)
                    elif store == PROB_TRUNCATION:
                        _probabilistic_truncation_step(<TopKHeap>hp[c], pairs, n_pairs,
                                                       stop - start == 1, params.seed, t)
                    elif not _soft_threshold_step(<TopKHeap>hp[c], pairs, n_pairs,
                                                  stop - start == 1, params.threshold):
                        status = PASS_DIVERGED
                        break
                    continue
                if store == SPACE_SAVING:
                    off = 0
                    for b in range(stop - start):
                        row = order[start + b]
                        n_row = indptr[row + 1] - indptr[row]
                        for p in range(n_row):
                            row_delta[p] = step * dl[b * K + c] * data[indptr[row] + p]
                            if by_frequency:
                                row_delta[p] *= freq[off + p]
                        _space_saving_step(<TopKHeap>hp[c], &indices[indptr[row]], row_delta,
                                           n_row)
                        off += n_row
                    continue
                if store == ACTIVE_SET:
                    off = 0
                    for b in range(stop - start):
                        row = order[start + b]
                        n_row = indptr[row + 1] - indptr[row]
                        if c + 1 < c_hi:
                            (<CountSketch>sk[c + 1]).prefetch_located(&cells[off * depth], n_row)
                        if dl[b * K + c] != 0.0:
                            for p in range(n_row):
                                row_delta[p] = step * dl[b * K + c] * data[indptr[row] + p]
                                if by_frequency:
                                    row_delta[p] *= freq[off + p]
                                # With one sample per batch, membership seen while scoring
                                # still holds: this heap has not changed since.
                                row_flags[p] = in_heap[(off + p) * K + c]
                            if not _active_set_step(
                                    <CountSketch>sk[c], <TopKHeap>hp[c], &indices[indptr[row]],
                                    row_delta, n_row, &cells[off * depth], &signs[off * depth],
                                    root, row_flags, stop - start == 1):
                                status = PASS_DIVERGED
                                break
                        off += n_row
                    continue
                # Sketch stores: add the step, then refresh the heap from the sketch.
                off = 0
                for b in range(stop - start):
                    row = order[start + b]
                    if c + 1 < c_hi:
                        (<CountSketch>sk[c + 1]).prefetch_located(
                            &cells[off * depth], indptr[row + 1] - indptr[row])
                    if dl[b * K + c] != 0.0:
                        for p in range(indptr[row], indptr[row + 1]):
                            q = off + p - indptr[row]
                            x = step * dl[b * K + c] * data[p] / root
                            if by_frequency:
                                x *= freq[q]
                            if not (<CountSketch>sk[c]).add_located(
                                    &cells[q * depth], &signs[q * depth], x):
                                # A cell overflowed: the median may hide it, not the sketch.
                                status = PASS_DIVERGED
                    off += indptr[row + 1] - indptr[row]
                if store == SKETCH_AND_HEAP or store == WEIGHT_MEDIAN:
                    off = 0
                    for b in range(stop - start):
                        row = order[start + b]
                        if dl[b * K + c] != 0.0:
                            for p in range(indptr[row], indptr[row + 1]):
                                q = off + p - indptr[row]
                                w = root * (<CountSketch>sk[c]).estimate_located(
                                    &cells[q * depth], &signs[q * depth])
                                if not isfinite(w):
                                    status = PASS_DIVERGED
                                    break
                                # All of the batch's steps are in the sketch, so a key
                                # that was outside the heap and cannot enter it now
                                # needs no map probe (WM scoring does not probe).
                                if (store == WEIGHT_MEDIAN or in_heap[q * K + c]
                                        or (<TopKHeap>hp[c]).accepts(indices[p], w)):
                                    (<TopKHeap>hp[c]).offer(indices[p], w, &evicted_key,
                                                            &evicted_weight)
                        off += indptr[row + 1] - indptr[row]
            if in_team and status != PASS_OK:
                # The others learn it at the next meeting (a last batch: from the caller).
                sks_barrier_raise(&team.barrier, &waiter)
            t += stop - start
            start = stop
            if in_team and going_solo:
                # Lockstep with a thread that is not running costs a scheduler slice a
                # row: the first thread trains every model from the next batch, once
                # the others have finished this one (the same models, bit for bit).
                sks_barrier_wait(&team.barrier, &waiter)
                if sks_barrier_raised(&team.barrier, &waiter):
                    status = PASS_DIVERGED
                if c_lo != 0:
                    break
                in_team = False
                c_hi = K
    if by_frequency and c_lo == 0:
        # Every thread of a team counted every row alike: the first writes them back.
        memcpy(&feature_counts[0], counts, n_counts * sizeof(uint32_t))
    free(sk); free(hp); free(cells); free(signs); free(dl); free(row_norm2); free(own_scores)
    free(own_sketch_scores); free(pairs); free(in_heap); free(row_delta); free(row_flags)
    free(freq); free(counts)
    return t, status, mistakes, (heap_error, sketch_error, log_loss)


def decision_function_kernel(list sketches, list heaps, const int64_t[::1] indptr,
                             const int64_t[::1] indices, const double[::1] data,
                             double[:, ::1] out, bint weight_median=False, int heap_value=0):
    """Add ``X @ w_c`` to ``out[:, c]`` for every model ``c``.

    ``w_c`` of a feature is its weight in heap ``c`` when it is there, else its
    estimate in sketch ``c`` when sketches are given (the median, or with
    ``weight_median`` the WM-Sketch's ``z^T R e``), else 0. A heap entry's model
    weight is its weight (``heap_value`` 0), its weight times its auxiliary value
    (1: probabilistic truncation) or its auxiliary value (2: Space-Saving). ``heaps`` or
    ``sketches`` may be empty lists; the other must hold one entry per column of
    ``out``.
    """
    cdef Py_ssize_t K = out.shape[1], n = indptr.shape[0] - 1, c, i, p
    cdef bint has_heap = len(heaps) > 0, has_sketch = len(sketches) > 0
    if (has_heap and len(heaps) != K) or (has_sketch and len(sketches) != K) or not (
            has_heap or has_sketch):
        raise ValueError("one heap and/or one sketch per model are needed")
    check_models(sketches, heaps)
    cdef PyObject** sk = <PyObject**>malloc(K * sizeof(PyObject*))
    cdef PyObject** hp = <PyObject**>malloc(K * sizeof(PyObject*))
    if not (sk and hp):
        free(sk); free(hp)
        raise MemoryError()
    for c in range(K):
        sk[c] = <PyObject*>sketches[c] if has_sketch else NULL
        hp[c] = <PyObject*>heaps[c] if has_heap else NULL
    cdef double w, aux
    cdef Py_ssize_t cells[MAX_DEPTH]
    cdef double signs[MAX_DEPTH]
    cdef double root = sqrt(<double>(<CountSketch>sketches[0]).depth) if has_sketch else 1.0
    with nogil:
        for c in range(K):
            for i in range(n):
                for p in range(indptr[i], indptr[i + 1]):
                    if has_heap and (<TopKHeap>hp[c]).lookup_aux(indices[p], &w, &aux):
                        if heap_value == 1:
                            w *= aux
                        elif heap_value == 2:
                            w = aux
                    elif has_sketch and weight_median:
                        (<CountSketch>sk[c]).locate(indices[p], cells, signs)
                        w = (<CountSketch>sk[c]).sum_located(cells, signs) / root
                    elif has_sketch:
                        w = (<CountSketch>sk[c]).estimate(indices[p])
                    else:
                        continue
                    out[i, c] += data[p] * w
    free(sk); free(hp)


def rows_repeat_a_column(const int64_t[::1] indptr, const int64_t[::1] indices):
    """Whether some CSR row stores a column twice, whatever the order of its columns.

    One pass without the GIL, cheaper than sorting the rows: each column of a
    row sets a bit of a per-row filter (64 bits per column, cleared per row);
    only a column whose bit is already set is compared with the row's earlier
    columns.

    Parameters
    ----------
    indptr : ndarray of int64, shape (n_rows + 1,)
        Row starts of a CSR matrix.
    indices : ndarray of int64, shape (nnz,)
        Its columns.

    Returns
    -------
    repeats : bool
        True when a row holds a column more than once.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_sketch._sgd_fast import rows_repeat_a_column
    >>> indptr = np.array([0, 3, 5])
    >>> rows_repeat_a_column(indptr, np.array([9, 2, 5, 7, 1]))
    False
    >>> rows_repeat_a_column(indptr, np.array([9, 2, 5, 7, 7]))
    True
    """
    cdef Py_ssize_t n_rows = indptr.shape[0] - 1, row, a, b, j, k
    cdef Py_ssize_t n_words, longest = 0
    cdef int shift
    cdef int64_t key
    cdef uint64_t h, bit
    cdef uint64_t* words
    cdef bint repeats = False
    if n_rows < 1:
        return False
    for row in range(n_rows):
        longest = max(longest, indptr[row + 1] - indptr[row])
    n_words = 1
    while n_words < longest:
        n_words *= 2
    words = <uint64_t*>malloc(n_words * sizeof(uint64_t))
    if words == NULL:
        raise MemoryError()
    with nogil:
        for row in range(n_rows):
            a, b = indptr[row], indptr[row + 1]
            if b - a < 2:
                continue
            # One 64-bit word per column (rounded up to a power of two): a
            # column finds its bit set by an earlier one about once per 128.
            n_words = 1
            shift = 58
            while n_words < b - a:
                n_words *= 2
                shift -= 1
            memset(words, 0, n_words * sizeof(uint64_t))
            for j in range(a, b):
                key = indices[j]
                h = (<uint64_t>key * 0x9E3779B97F4A7C15ULL) >> shift
                bit = (<uint64_t>1) << (h & 63)
                if words[h >> 6] & bit:
                    for k in range(a, j):
                        if indices[k] == key:
                            repeats = True
                            break
                    if repeats:
                        break
                words[h >> 6] |= bit
            if repeats:
                break
    free(words)
    return repeats


def rows_hold_more_keys_than(const int64_t[::1] indptr, const int64_t[::1] indices,
                             const int64_t[::1] rows, Py_ssize_t limit):
    """Whether the CSR rows ``rows`` hold more than ``limit`` distinct columns.

    One pass without the GIL over an open-addressing set of at most
    ``limit + 1`` keys, which stops once it holds that many: exact, and on
    the step probe's 1.9M non-zeros of DNA reads a tenth of the time of
    counting the keys after a sort (which also copies them).

    Parameters
    ----------
    indptr : ndarray of int64, shape (n_rows + 1,)
        Row starts of a CSR matrix.
    indices : ndarray of int64, shape (nnz,)
        Its columns.
    rows : ndarray of int64
        The rows to read.
    limit : int
        The number of distinct columns to compare with (>= 0).

    Returns
    -------
    more : bool
        True when the rows hold more than ``limit`` distinct columns.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_sketch._sgd_fast import rows_hold_more_keys_than
    >>> indptr, indices = np.array([0, 3, 5]), np.array([9, 2, 5, 9, 7])
    >>> rows_hold_more_keys_than(indptr, indices, np.array([0, 1]), 3)
    True
    >>> rows_hold_more_keys_than(indptr, indices, np.array([0, 1]), 4)
    False
    >>> rows_hold_more_keys_than(indptr, indices, np.array([1]), 1)
    True
    """
    cdef Py_ssize_t i, j, nnz = 0, size = 2, held = 0
    cdef int64_t row, key
    cdef uint64_t slot, mask
    cdef int64_t* table
    cdef unsigned char* used
    cdef bint more = False
    if limit < 0:
        raise ValueError(f"limit must be >= 0, got {limit}")
    for i in range(rows.shape[0]):
        row = rows[i]
        if row < 0 or row >= indptr.shape[0] - 1:
            raise IndexError(f"row {row} is outside the matrix's {indptr.shape[0] - 1} rows")
        nnz += indptr[row + 1] - indptr[row]
    if nnz <= limit:  # no more distinct columns than non-zeros
        return False
    # At most half full: linear probing stays short.
    while size < 2 * (limit + 1):
        size *= 2
    mask = size - 1
    table = <int64_t*>malloc(size * sizeof(int64_t))
    used = <unsigned char*>malloc(size)
    if table == NULL or used == NULL:
        free(table)
        free(used)
        raise MemoryError()
    memset(used, 0, size)
    with nogil:
        for i in range(rows.shape[0]):
            row = rows[i]
            for j in range(indptr[row], indptr[row + 1]):
                key = indices[j]
                slot = _fmix64(<uint64_t>key) & mask
                while used[slot] and table[slot] != key:
                    slot = (slot + 1) & mask
                if used[slot]:
                    continue
                used[slot] = 1
                table[slot] = key
                held += 1
                if held > limit:
                    more = True
                    break
            if more:
                break
    free(table)
    free(used)
    return more
