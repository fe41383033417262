# Shared by the first-order kernel (_sgd_fast.pyx) and BEAR's (_bear_fast.pyx):
# the codes, the pass settings, the losses and the step-size schedules.
from libc.math cimport exp, log1p, pow
from libc.stdint cimport int64_t, uint64_t
from libc.stdlib cimport malloc

from ._core._murmurhash cimport _fmix64

cdef extern from "Python.h":
    const Py_ssize_t PY_SSIZE_T_MAX


cpdef enum Loss:
    SQUARED_ERROR = 0
    LOG_LOSS = 1
    HINGE = 2
    MODIFIED_HUBER = 3
    SOFTMAX = 4
    MARGIN_PERCEPTRON = 5


cpdef enum Schedule:
    CONSTANT = 0
    OPTIMAL = 1
    INVSCALING = 2
    # eta0 / ||x||^2 for the weights, eta0 for the intercept (see sgd_pass).
    NORMALIZED = 3
    # NORMALIZED with each feature's step scaled by 1 / sqrt(its count so far).
    FREQUENCY = 4
    # NORMALIZED with each feature's step scaled by 1 / sqrt(its squared gradients so
    # far, summed over the models): AdaGrad's per-coordinate step. BEAR's steps in
    # coordinates scaled by its squared values' sum to the -1/4 (_bear_fast.pyx).
    ADAPTIVE = 5


cpdef enum WeightStore:
    SKETCH_AND_HEAP = 0
    HEAP_ONLY = 1
    SKETCH_ONLY = 2
    WEIGHT_MEDIAN = 3
    ACTIVE_SET = 4
    PROB_TRUNCATION = 5
    SPACE_SAVING = 6
    SOFT_THRESHOLD = 7


cpdef enum PassStatus:
    PASS_OK = 0
    PASS_DIVERGED = 1


cdef class SGDParams:
    cdef public int loss, schedule, store
    cdef public double eta0, power_t, alpha, optimal_init, margin, threshold, damping
    cdef public double margin_trust
    cdef public double norm_floor
    cdef public Py_ssize_t batch_size
    cdef public bint fit_intercept, compare_reads, read_sketch
    cdef public uint64_t seed


cdef inline Py_ssize_t feature_cell(int64_t key, Py_ssize_t n_cells) noexcept nogil:
    """The cell of a feature table of ``n_cells`` (FREQUENCY's counts, ADAPTIVE's
    sums of squares, in either kernel) that ``key`` counts in."""
    return <Py_ssize_t>(_fmix64(<uint64_t>key) % <uint64_t>n_cells)


cdef inline void* malloc_array(Py_ssize_t n, Py_ssize_t m, size_t item) noexcept nogil:
    """``malloc`` of ``n * m`` items of ``item`` bytes (at least one byte).

    NULL when the size is negative or its product overflows ``Py_ssize_t``, as
    when the allocation fails: the caller raises ``MemoryError`` for both.
    """
    if n < 0 or m < 0 or item == 0:
        return NULL
    if m != 0 and n > PY_SSIZE_T_MAX // m:
        return NULL
    n *= m
    if n > <Py_ssize_t>(PY_SSIZE_T_MAX // <Py_ssize_t>item):
        return NULL
    return malloc(max(1, n * <Py_ssize_t>item))


cdef inline double dloss(int loss, double p, double y, double margin) noexcept nogil:
    """Derivative of the loss in the score ``p`` (binary targets are +1/-1).

    Clipped to 1e12 in magnitude, as scikit-learn's SGD does, so a large step on
    unscaled data gives large weights rather than an overflow.
    """
    cdef double z
    if loss == SQUARED_ERROR:
        return min(1e12, max(-1e12, p - y))
    z = p * y
    if loss == MARGIN_PERCEPTRON:
        return -y if z <= margin else 0.0
    if loss == LOG_LOSS:
        if z > 18.0:
            return -y * exp(-z)
        if z < -18.0:
            return -y
        return -y / (exp(z) + 1.0)
    if loss == HINGE:
        return -y if z <= 1.0 else 0.0
    # MODIFIED_HUBER
    if z >= 1.0:
        return 0.0
    if z >= -1.0:
        return -2.0 * (1.0 - z) * y
    return -4.0 * y


cdef inline double learning_rate(SGDParams params, double t) noexcept nogil:
    if (params.schedule == CONSTANT or params.schedule == NORMALIZED
            or params.schedule == FREQUENCY or params.schedule == ADAPTIVE):
        return params.eta0
    if params.schedule == OPTIMAL:
        return 1.0 / (params.alpha * (params.optimal_init + t - 1.0))
    return params.eta0 / pow(t, params.power_t)


cdef inline bint sample_dloss(int loss, Py_ssize_t K, double* scores, double y, double weight,
                              double margin, double* out) noexcept nogil:
    """Write the weighted loss derivatives of one sample's ``K`` scores to ``out``.

    ``y`` is the target (K == 1: a real or +1/-1) or the class index (K > 1:
    softmax for ``SOFTMAX``, else one-vs-rest). ``scores`` is overwritten for
    softmax. Returns whether the scores misclassify the sample.
    """
    cdef Py_ssize_t c, best = 0
    cdef double s, total, target
    cdef bint wrong
    if K == 1:
        wrong = (scores[0] > 0.0) != (y > 0.0)
        out[0] = weight * dloss(loss, scores[0], y, margin)
        return wrong
    for c in range(1, K):
        if scores[c] > scores[best]:
            best = c
    wrong = best != <Py_ssize_t>y
    if loss == SOFTMAX:
        s = scores[best]
        total = 0.0
        for c in range(K):
            scores[c] = exp(scores[c] - s)
            total += scores[c]
        for c in range(K):
            out[c] = weight * (scores[c] / total - (1.0 if <Py_ssize_t>y == c else 0.0))
    else:
        for c in range(K):
            target = 1.0 if <Py_ssize_t>y == c else -1.0
            out[c] = weight * dloss(loss, scores[c], target, margin)
    return wrong


cdef inline double sample_log_loss(int loss, Py_ssize_t K, double score,
                                   double y) noexcept nogil:
    """Log loss of a binary ``LOG_LOSS`` sample's score (``y`` +1 or -1), 0 for
    other losses and for several models: the progressive log loss that tells a
    model of rare positives that ranks them from one that learned nothing (both
    err about as often as predicting the majority)."""
    cdef double z
    if K != 1 or loss != LOG_LOSS:
        return 0.0
    z = -score if y > 0.0 else score
    return z + log1p(exp(-z)) if z > 0.0 else log1p(exp(z))


cdef inline double read_error(int loss, Py_ssize_t K, const double* scores,
                              double y) noexcept nogil:
    """Error of one sample's scores: squared error, or 1 for a misclassification
    (as ``sample_dloss`` counts it)."""
    cdef Py_ssize_t c, best = 0
    if loss == SQUARED_ERROR:
        return (scores[0] - y) * (scores[0] - y)
    if K == 1:
        return 1.0 if (scores[0] > 0.0) != (y > 0.0) else 0.0
    for c in range(1, K):
        if scores[c] > scores[best]:
            best = c
    return 0.0 if best == <Py_ssize_t>y else 1.0
