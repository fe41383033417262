"""BEAR (Aghazadeh et al., Algorithm 2): online L-BFGS steps sketched into a Count-Sketch.

Each mini-batch ``Theta_t`` with active set ``A_t`` (the features present in it):

1. read the weights of ``A_t`` from the sketch where the feature is in the
   top-k heap (0 elsewhere); gradient ``g_t`` of the batch's mean loss;
2. direction ``z_t`` by the L-BFGS two-loop recursion (Algorithm 1) over the
   last ``history_size`` curvature pairs ``(s_i, r_i)``;
3. add ``s = -eta z_t`` on ``A_t`` to the sketch;
4. gradient ``g'`` on the same batch at ``w + s`` (the step is cut back if it
   overshot, below); read ``A_t`` again and offer the estimates to the heap;
   store the pair ``(s, r = g' - g_t)`` on ``A_t`` (never as length-p vectors).

Step 4 departs from the paper's box, which takes ``g'`` at the re-read
weights (masked by the heap; the authors' code reads them unmasked). Either
way ``r`` then mixes the step with collisions and heap changes, so it is not
the curvature along ``s``, and on the paper's own sparse-recovery simulation
(section 6) both recovered the support far less often than this consistent
secant pair did (see ``sklearn_sketch.bear``). For a convex loss with one
model ``r^T s >= 0`` then holds; a softmax model's own pair can still bend the
wrong way, since the other classes' steps move its probabilities.

A step that overshoots its own batch is cut back: with ``g`` and ``g'`` the
batch's gradients before and after the step, ``(g + g')^T s / 2`` estimates the
change of its loss (exactly, for a quadratic); when that is positive the step
and its pair are scaled by ``theta = -g^T s / (g' - g)^T s``, the secant
minimum along ``s``. Two gradients a batch are taken anyway, so the check costs
two inner products. Without it, on one fold of 20 Newsgroups (raw counts, some
rows with ``||x||**2`` in the millions) the softmax intercepts grew to 1e5
within three passes and the model predicted one class.

With ``params.margin_trust`` above 0 (the classifier's default, see
``sklearn_sketch.bear``), a step that would move a score of one of the batch's
rows by more than it is first scaled down until none moves further
(``_trust_fraction``): one more pass over the batch's non-zeros.

As in online L-BFGS (Schraudolph et al. 2007), ``r`` gets ``damping * s``
added: with one model (binary or squared loss) every pair then has curvature at
least ``damping``, which bounds the direction by ``1 / damping`` times the
gradient. Without it a pair measured on
a batch the model already fits (log loss: curvature near 0) would blow up the
step on the next batch it does not fit.

The intercept is one more coordinate of every vector (kept exactly, not in the
sketch), with the key -1. Under 'normalized' it is a feature whose value is
``unit``, the mean ``|x|`` of the batch's non-zeros: its gradient is multiplied
by ``unit``, its steps and pairs are in those units (the intercept moves by
``unit`` times its coordinate) and it shares the features' first step and
damping, both scaled by the batch's mean ``||x||**2``. One scalar initial
Hessian (``gamma``) serves every coordinate of the two-loop, so the intercept
must be on the features' scale: as a feature of value 1 its curvature was a
million times the features' at ``X * 1e-3`` (the features did not learn), and
on raw token counts, damped 2000 times less than the features (batch means of
``||x||**2`` from 800 to 3.6M), the 20 Newsgroups intercepts spread over 16-90
and predictions fell to one class. At 4 MB, seeds 0-2: token counts
.21/.56/.42 before and .58/.65/.63 with it, L2-normalized rows .56/.59/.51 and
.70/.70/.70; DNA reads (binary, ``unit`` 1) .786/.787/.787 both. The mean
``|x|`` and not the root mean square, which outlier counts (one post with
``||x||**2`` of 2.3e8) made vary over batches: tokens fell to .06-.23.

Under 'adaptive' (``_adaptive_scales``) the batch's coordinates are
``u_j = w_j / scale_j``, ``scale_j`` the inverse fourth root of feature ``j``'s
sum of squared values so far (the intercept's: ``unit`` as above, of the
scaled values): gradients are multiplied by ``scale``, the two-loop, the
'normalized' scales, the damping and the pairs are those of ``u``, and a step
``s`` moves the sketch by ``scale * s``. The preconditioner is AdaGrad's
diagonal with the values for the gradients, so rare features move further.

A pair with ``r^T s <= 1e-10 ||r|| ||s||`` (no positive curvature along
``s``) is kept in the window but not used. With ``K``
models (softmax) every model has its own sketch, heap and two-loop; the pairs
share their coordinates.

The two-loop is computed without vectors (as in VL-BFGS, Chen et al. 2014):
every quantity it needs is a linear combination of the inner products of the
pairs with each other and with the gradient, so it runs on a few scalars per
pair. The pairs' inner products with each other are taken once, when a pair
is stored; their inner products with a batch's gradient, and the direction on
the batch, only touch the coordinates the pair shares with the batch. Those are
found by looking every stored key up in a hash map of the batch's keys (behind a
bitmap that answers most misses from L1 cache), so nothing is indexed by the
union of the window's keys and memory is ``O(history_size * batch non-zeros)``.
"""
import numpy as np

from cpython.ref cimport PyObject
from libc.math cimport fabs, isfinite, sqrt
from libc.stdint cimport int32_t, int64_t, uint8_t, uint32_t, uint64_t
from libc.stdlib cimport free
from libc.string cimport memcpy, memset

from ._core._count_sketch cimport CountSketch
from ._core._murmurhash cimport _fmix64
from ._core._topk_heap cimport TopKHeap
from ._sgd_fast import check_models
from ._sorted_keys import unique_keys
from ._sgd_fast cimport (
    ADAPTIVE,
    NORMALIZED,
    PASS_DIVERGED,
    PASS_OK,
    SGDParams,
    feature_cell,
    learning_rate,
    malloc_array,
    read_error,
    sample_dloss,
    sample_log_loss,
)

# A pair is used when r^T s > CURVATURE_EPS * ||r|| * ||s||.
cdef double CURVATURE_EPS = 1e-10
# The intercept's key (feature keys are non-negative).
cdef int64_t INTERCEPT_KEY = -1
# Keys ahead whose cells a batch loop prefetches (a batch holds thousands of keys:
# all of them at once would leave the caches before they are read).
cdef Py_ssize_t PREFETCH_AHEAD = 16
# Largest history_size: the two-loop keeps its scalars on the stack.
cdef enum:
    MAX_HISTORY = 256

# An entry of the batch's key map: the key's hash (fmix64, a bijection, so it
# identifies the key), the batch it was inserted in (an entry of an older batch
# is empty) and the key's position in the batch's active set.
ctypedef struct BatchEntry:
    uint64_t hash
    uint32_t batch
    int32_t pos


cdef inline Py_ssize_t _pow2_at_least(Py_ssize_t n):
    cdef Py_ssize_t size = 1
    while size < n:
        size *= 2
    return size


def history_bytes(history_size, n_models, capacity):
    """``LBFGSHistory(history_size, n_models, capacity).memory_bytes``, without allocating.

    What a memory budget asks before it chooses a capacity: the pairs (float32
    ``s`` and ``r`` per model, the key and its hash per coordinate, the
    per-pair scalars) and the batch's workspace (``LBFGSHistory._load``).
    """
    cdef Py_ssize_t tau = history_size, K = n_models, C = capacity
    pairs = tau * 4 + tau * C * (8 + 8) + 2 * tau * K * C * 4 + tau * K * (8 + 8 + 1) \
        + 2 * K * tau * tau * 8
    workspace = (2 * _pow2_at_least(2 * C) * 8 + _pow2_at_least(max(64, 16 * C)) // 64 * 8
                 + C * (8 + 8) + tau * 4 + 2 * tau * C * 4)
    return int(pairs + workspace)


cdef inline int _ready(LBFGSHistory history) except -1:
    """Raise unless ``history`` went through ``__init__`` (``__new__`` alone leaves no pairs)."""
    if history._arrays is None:
        raise RuntimeError("this LBFGSHistory is not initialised (made by __new__ without "
                           "__init__): create it with LBFGSHistory(history_size, n_models)")
    return 0


cdef class LBFGSHistory:
    """The last ``history_size`` curvature pairs of online L-BFGS, on their active sets.

    A pair is stored on the keys of the batch it was measured on, with its
    inner products with the other pairs of the window. The two-loop direction
    for a new batch only reads the coordinates the pairs share with it.

    Parameters
    ----------
    history_size : int
        Pairs kept (``tau``), from 1 to 256.
    n_models : int
        Models sharing the pairs' coordinates (one per class for softmax).
    capacity : int, default=1
        Coordinates one pair can hold (grown by :meth:`reserve`).

    Examples
    --------
    Curvature 4 along key 7, then 0.5 along key 8: the direction inverts
    both, and scales a key no pair has seen by the newest pair's
    ``r^T s / r^T r``.

    >>> from sklearn_sketch._bear_fast import LBFGSHistory
    >>> history = LBFGSHistory(history_size=2, n_models=1)
    >>> history.push([7], s=[[1.0]], r=[[4.0]])
    >>> history.push([8], s=[[1.0]], r=[[0.5]])
    >>> history.direction(0, [7, 8, 9], [1.0, 1.0, 1.0])
    array([0.25, 2.  , 2.  ])
    """

    cdef readonly Py_ssize_t history_size, n_models, capacity
    cdef readonly Py_ssize_t n_pairs, head
    cdef readonly int64_t n_batches
    cdef dict _arrays
    # Ring of pairs, ``head`` the next one written (the oldest once full).
    cdef int32_t* _pair_len
    cdef int64_t* _pair_key      # (history_size, capacity)
    cdef uint64_t* _pair_hash    # (history_size, capacity): fmix64 of the keys
    # float32, as the sketch cells: a pair coordinate costs half the bytes.
    cdef float* _pair_s          # (history_size, n_models, capacity)
    cdef float* _pair_r
    cdef double* _pair_rho       # (history_size, n_models): 1 / r^T s
    cdef double* _pair_gamma     # r^T s / r^T r
    cdef uint8_t* _pair_valid
    cdef double* _pair_sr        # (n_models, history_size, history_size): s_i^T r_j
    cdef double* _pair_rr        # r_i^T r_j
    # The batch being processed: its keys in order of first appearance, a map
    # from their hashes to their positions, and a bitmap of hash bits.
    cdef readonly Py_ssize_t n_active
    cdef int64_t* _active_key
    cdef uint64_t* _active_hash
    cdef BatchEntry* _map
    cdef uint64_t _map_mask
    cdef uint32_t _batch
    cdef uint64_t* _bits
    cdef uint64_t _bits_mask
    # Per pair of the window: the positions (in the pair, in the batch) of the
    # keys it shares with the batch.
    cdef int32_t* _shared_len    # (history_size,)
    cdef int32_t* _shared_pair   # (history_size, capacity)
    cdef int32_t* _shared_batch

    def __init__(self, history_size, n_models, capacity=1):
        if not 1 <= history_size <= MAX_HISTORY:
            raise ValueError(f"history_size must be in [1, {MAX_HISTORY}], got {history_size}")
        if n_models < 1 or capacity < 1:
            raise ValueError("n_models and capacity must be positive")
        self.history_size = history_size
        self.n_models = n_models
        tau, K = history_size, n_models
        arrays = {
            "pair_len": np.zeros(tau, dtype=np.int32),
            "pair_key": np.zeros((tau, 1), dtype=np.int64),
            "pair_hash": np.zeros((tau, 1), dtype=np.uint64),
            "pair_s": np.zeros((tau, K, 1), dtype=np.float32),
            "pair_r": np.zeros((tau, K, 1), dtype=np.float32),
            "pair_rho": np.zeros((tau, K)),
            "pair_gamma": np.zeros((tau, K)),
            "pair_valid": np.zeros((tau, K), dtype=np.uint8),
            "pair_sr": np.zeros((K, tau, tau)),
            "pair_rr": np.zeros((K, tau, tau)),
        }
        self._load(arrays, 0, 0, 0)
        self.reserve(capacity)

    cdef _load(self, dict arrays, Py_ssize_t n_pairs, Py_ssize_t head, int64_t n_batches):
        """Take ``arrays`` as the state and allocate the batch's workspace."""
        self._arrays = arrays
        self.n_pairs, self.head, self.n_batches = n_pairs, head, n_batches
        cdef Py_ssize_t C = arrays["pair_key"].shape[1]
        self.capacity = C
        # Load factor at most 1/2; 16 bits per key make 1 in 16 misses a false hit.
        map_size = _pow2_at_least(2 * C)
        n_bits = _pow2_at_least(max(64, 16 * C))
        arrays["batch_map"] = np.zeros(2 * map_size, dtype=np.uint64)
        arrays["batch_bits"] = np.zeros(n_bits // 64, dtype=np.uint64)
        arrays["active_key"] = np.zeros(C, dtype=np.int64)
        arrays["active_hash"] = np.zeros(C, dtype=np.uint64)
        arrays["shared_len"] = np.zeros(self.history_size, dtype=np.int32)
        arrays["shared_pair"] = np.zeros((self.history_size, C), dtype=np.int32)
        arrays["shared_batch"] = np.zeros((self.history_size, C), dtype=np.int32)
        self._pair_len = _ptr32(arrays["pair_len"])
        self._pair_key = _ptr64(arrays["pair_key"])
        self._pair_hash = _ptru64(arrays["pair_hash"])
        self._pair_s = _ptrf32(arrays["pair_s"])
        self._pair_r = _ptrf32(arrays["pair_r"])
        self._pair_rho = _ptrf(arrays["pair_rho"])
        self._pair_gamma = _ptrf(arrays["pair_gamma"])
        cdef uint8_t[::1] valid = arrays["pair_valid"].reshape(-1)
        self._pair_valid = &valid[0]
        self._pair_sr = _ptrf(arrays["pair_sr"])
        self._pair_rr = _ptrf(arrays["pair_rr"])
        self._map = <BatchEntry*>_ptru64(arrays["batch_map"])
        self._map_mask = map_size - 1
        self._batch = 0
        self._bits = _ptru64(arrays["batch_bits"])
        self._bits_mask = n_bits - 1
        self._active_key = _ptr64(arrays["active_key"])
        self._active_hash = _ptru64(arrays["active_hash"])
        self._shared_len = _ptr32(arrays["shared_len"])
        self._shared_pair = _ptr32(arrays["shared_pair"])
        self._shared_batch = _ptr32(arrays["shared_batch"])
        self.n_active = 0

    def reserve(self, capacity):
        """Make room for pairs of ``capacity`` coordinates (batch non-zeros plus one).

        Parameters
        ----------
        capacity : int
            Coordinates a pair must be able to hold.
        """
        _ready(self)
        if capacity <= self.capacity:
            return
        old = self._arrays
        tau, K, C = self.history_size, self.n_models, self.capacity
        arrays = {name: old[name] for name in _STATE}
        for name in ("pair_key", "pair_hash"):
            arrays[name] = np.zeros((tau, capacity), dtype=old[name].dtype)
            arrays[name][:, :C] = old[name]
        for name in ("pair_s", "pair_r"):
            arrays[name] = np.zeros((tau, K, capacity), dtype=np.float32)
            arrays[name][:, :, :C] = old[name]
        self._load(arrays, self.n_pairs, self.head, self.n_batches)

    @property
    def memory_bytes(self):
        """Bytes held by the pairs and the batch's workspace."""
        _ready(self)
        return int(sum(a.nbytes for a in self._arrays.values()))

    def pairs(self):
        """The stored pairs, oldest first (for inspection and tests).

        Returns
        -------
        pairs : list of dict
            Per pair: ``keys`` (int64, its coordinates in the order they
            appeared in its batch; -1 is the intercept), ``s`` and ``r`` of
            shape (n_models, n_coordinates) and ``valid`` of shape (n_models,).
        """
        _ready(self)
        out = []
        a = self._arrays
        for m in range(self.n_pairs):
            idx = (self.head - self.n_pairs + m) % self.history_size
            n = a["pair_len"][idx]
            out.append({"keys": a["pair_key"][idx, :n].copy(),
                        "s": a["pair_s"][idx, :, :n].copy(),
                        "r": a["pair_r"][idx, :, :n].copy(),
                        "valid": a["pair_valid"][idx].astype(bool)})
        return out

    def push(self, keys, s, r):
        """Store the pair ``(s, r)`` measured on ``keys`` (the oldest leaves a full window).

        Parameters
        ----------
        keys : array-like of int64, shape (n,)
            Distinct keys (-1 is the intercept).
        s, r : array-like of shape (n_models, n)
            The step and the change of the gradient.
        """
        _ready(self)
        keys = np.ascontiguousarray(keys, dtype=np.int64)
        s = np.asarray(s, dtype=np.float64).reshape(self.n_models, -1)
        r = np.asarray(r, dtype=np.float64).reshape(self.n_models, -1)
        if s.shape[1] != keys.size or r.shape[1] != keys.size:
            raise ValueError("s and r need one value per key and model")
        self._start_batch_checked(keys)
        for c in range(self.n_models):
            self._arrays["pair_s"][self.head, c, :keys.size] = s[c]
            self._arrays["pair_r"][self.head, c, :keys.size] = r[c]
        self.push_batch(0.0)

    def direction(self, Py_ssize_t model, keys, g):
        """The two-loop direction ``H g`` of ``model`` for a gradient on ``keys``.

        Parameters
        ----------
        model : int
            Which model's pairs to use.
        keys : array-like of int64, shape (n,)
            Distinct keys of the gradient's coordinates (-1 is the intercept).
        g : array-like of float64, shape (n,)

        Returns
        -------
        z : ndarray of float64, shape (n,)
        """
        _ready(self)
        if not 0 <= model < self.n_models:
            raise ValueError(f"model must be in [0, {self.n_models}), got {model}")
        keys = np.ascontiguousarray(keys, dtype=np.int64)
        cdef double[::1] gv = np.ascontiguousarray(g, dtype=np.float64)
        if gv.shape[0] != keys.size:
            raise ValueError("g needs one value per key")
        self._start_batch_checked(keys)
        z = np.zeros(keys.size)
        cdef double[::1] zv = z
        if keys.size:
            self.direction_on_batch(model, &gv[0], &zv[0])
        return z

    def _start_batch_checked(self, keys):
        _ready(self)
        if keys.ndim != 1 or unique_keys(keys).size != keys.size:
            raise ValueError("keys must be distinct")
        if keys.size > 0 and keys.min() < INTERCEPT_KEY:
            raise ValueError("keys must be non-negative (or -1, the intercept)")
        self.reserve(keys.size)
        cdef int64_t[::1] kv = keys
        cdef Py_ssize_t j
        self.start_batch()
        for j in range(keys.size):
            self.add_key(kv[j])
        self.find_shared()

    def copy(self):
        """An independent copy of the pairs (the batch's workspace is allocated anew).

        Returns
        -------
        history : LBFGSHistory
            Equal to this history: the same pairs, window position and count.
        """
        _ready(self)
        cdef LBFGSHistory out = LBFGSHistory.__new__(LBFGSHistory)
        out.history_size = self.history_size
        out.n_models = self.n_models
        out._load({name: self._arrays[name].copy() for name in _STATE}, self.n_pairs,
                  self.head, self.n_batches)
        return out

    def __deepcopy__(self, memo):
        return self.copy()

    def __reduce__(self):
        state = {name: self._arrays[name].copy() for name in _STATE}
        return (_rebuild_history, (self.history_size, self.n_models, state, self.n_pairs,
                                   self.head, self.n_batches))

    # ------------------------------------------------------------ the batch's keys
    cdef inline void start_batch(self) noexcept nogil:
        """Empty the batch's key map (the pairs stay)."""
        self._batch += 1
        if self._batch == 0:  # wrapped around: entries of 2**32 batches ago look current
            memset(self._map, 0, (self._map_mask + 1) * sizeof(BatchEntry))
            self._batch = 1
        memset(self._bits, 0, ((self._bits_mask + 1) // 64) * sizeof(uint64_t))
        self.n_active = 0

    cdef inline int32_t add_key(self, int64_t key) noexcept nogil:
        """The position of ``key`` in the batch's active set, appended if new.

        The caller keeps the number of distinct keys of a batch within ``capacity``.
        """
        cdef uint64_t h = _fmix64(<uint64_t>key)
        cdef uint64_t i = h & self._map_mask, bit
        cdef BatchEntry* e = &self._map[i]
        while e.batch == self._batch:
            if e.hash == h:
                return e.pos
            i = (i + 1) & self._map_mask
            e = &self._map[i]
        e.hash = h
        e.batch = self._batch
        e.pos = <int32_t>self.n_active
        self._active_key[self.n_active] = key
        self._active_hash[self.n_active] = h
        bit = (h >> 32) & self._bits_mask
        self._bits[bit >> 6] |= (<uint64_t>1) << (bit & 63)
        self.n_active += 1
        return e.pos

    cdef inline int32_t _position(self, uint64_t h) noexcept nogil:
        """The batch position of the key hashed to ``h``, or -1."""
        cdef uint64_t bit = (h >> 32) & self._bits_mask
        if not (self._bits[bit >> 6] >> (bit & 63)) & 1:
            return -1
        cdef uint64_t i = h & self._map_mask
        while self._map[i].batch == self._batch:
            if self._map[i].hash == h:
                return self._map[i].pos
            i = (i + 1) & self._map_mask
        return -1

    cdef void find_shared(self) noexcept nogil:
        """For every pair of the window, the coordinates it shares with the batch."""
        cdef Py_ssize_t m, idx, l, n, C = self.capacity, tau = self.history_size
        cdef int32_t pos
        cdef const uint64_t* hashes
        for m in range(self.n_pairs):
            idx = (self.head - 1 - m + tau) % tau
            hashes = &self._pair_hash[idx * C]
            n = 0
            for l in range(self._pair_len[idx]):
                pos = self._position(hashes[l])
                if pos >= 0:
                    self._shared_pair[idx * C + n] = <int32_t>l
                    self._shared_batch[idx * C + n] = pos
                    n += 1
            self._shared_len[idx] = <int32_t>n

    # ------------------------------------------------------------ two-loop
    cdef double direction_on_batch(self, Py_ssize_t c, const double* g,
                                   double* z) noexcept nogil:
        """Algorithm 1 for model ``c``: ``z = H g`` on the batch's active set.

        ``find_shared`` must have run for this batch. Returns the initial
        scaling ``gamma``, or 0 without a usable pair (then ``z = g``).

        With ``q = g - sum_j alpha_j r_j`` (the first loop's vector) and ``z =
        gamma q + sum_j coef_j s_j`` (the second loop's), every inner product the
        loops take is one with ``g`` or between two pairs, so the loops run on
        scalars and only the final ``z`` is formed, on the batch's coordinates.
        """
        cdef Py_ssize_t tau = self.history_size, K = self.n_models, C = self.capacity
        cdef Py_ssize_t m, a, b, i, j, t, n_valid = 0
        cdef double gamma, sg, rg, acc, ga, ca
        cdef Py_ssize_t pairs[MAX_HISTORY]  # valid pairs, newest first
        cdef double alpha[MAX_HISTORY]
        cdef double coef[MAX_HISTORY]
        cdef double rq[MAX_HISTORY]         # r_i^T q
        cdef const double* sr = &self._pair_sr[c * tau * tau]
        cdef const double* rr = &self._pair_rr[c * tau * tau]
        cdef const float* sv
        cdef const float* rv
        cdef const int32_t* sp
        cdef const int32_t* sb
        for m in range(self.n_pairs):
            i = (self.head - 1 - m + tau) % tau
            if self._pair_valid[i * K + c]:
                pairs[n_valid] = i
                n_valid += 1
        for j in range(self.n_active):
            z[j] = g[j]
        if n_valid == 0:
            return 0.0
        gamma = self._pair_gamma[pairs[0] * K + c]
        # Newest to oldest: alpha_a = rho_a s_a^T q, q = g - sum over newer b of alpha_b r_b.
        for a in range(n_valid):
            i = pairs[a]
            sv = &self._pair_s[(i * K + c) * C]
            rv = &self._pair_r[(i * K + c) * C]
            sp = &self._shared_pair[i * C]
            sb = &self._shared_batch[i * C]
            sg = 0.0
            rg = 0.0
            for t in range(self._shared_len[i]):
                sg += sv[sp[t]] * g[sb[t]]
                rg += rv[sp[t]] * g[sb[t]]
            for b in range(a):
                sg -= alpha[b] * sr[i * tau + pairs[b]]
            alpha[a] = self._pair_rho[i * K + c] * sg
            rq[a] = rg
        # Oldest to newest: beta_a = rho_a r_a^T z, z = gamma q + sum over older b of coef_b s_b.
        for a in range(n_valid - 1, -1, -1):
            i = pairs[a]
            acc = rq[a]
            for b in range(n_valid):
                acc -= alpha[b] * rr[i * tau + pairs[b]]
            acc *= gamma
            for b in range(a + 1, n_valid):
                acc += coef[b] * sr[pairs[b] * tau + i]
            coef[a] = alpha[a] - self._pair_rho[i * K + c] * acc
        for j in range(self.n_active):
            z[j] *= gamma
        for a in range(n_valid):
            i = pairs[a]
            sv = &self._pair_s[(i * K + c) * C]
            rv = &self._pair_r[(i * K + c) * C]
            sp = &self._shared_pair[i * C]
            sb = &self._shared_batch[i * C]
            ca = coef[a]
            ga = gamma * alpha[a]
            for t in range(self._shared_len[i]):
                z[sb[t]] += ca * sv[sp[t]] - ga * rv[sp[t]]
        return gamma

    cdef void push_batch(self, double damping) noexcept nogil:
        """Store the pair written at ``head`` on the batch's active set.

        ``s`` and ``r`` (``r`` before ``damping * s`` is added) are in the
        ``head`` rows of the pair arrays; ``find_shared`` has run for this
        batch. Computes the pair's curvature and its inner products with the
        other pairs of the window, then moves ``head``.
        """
        cdef Py_ssize_t tau = self.history_size, K = self.n_models, C = self.capacity
        cdef Py_ssize_t h = self.head, n = self.n_active, c, j, m, i, t
        cdef double rs, rr, ss, a, b, d
        cdef float* s
        cdef float* r
        cdef const float* si
        cdef const float* ri
        cdef const int32_t* sp
        cdef const int32_t* sb
        for c in range(K):
            s = &self._pair_s[(h * K + c) * C]
            r = &self._pair_r[(h * K + c) * C]
            rs = 0.0
            rr = 0.0
            ss = 0.0
            for j in range(n):
                r[j] += damping * s[j]
                # In double: a float product of two small values underflows.
                rs += <double>r[j] * s[j]
                rr += <double>r[j] * r[j]
                ss += <double>s[j] * s[j]
            self._pair_valid[h * K + c] = (
                isfinite(rs) and isfinite(rr) and isfinite(ss)
                and rs > CURVATURE_EPS * sqrt(rr) * sqrt(ss))
            self._pair_rho[h * K + c] = 1.0 / rs if rs != 0.0 else 0.0
            self._pair_gamma[h * K + c] = rs / rr if rr != 0.0 else 0.0
            self._pair_sr[(c * tau + h) * tau + h] = rs
            self._pair_rr[(c * tau + h) * tau + h] = rr
            # The other pairs of the window (the one at head, the oldest, leaves it).
            for m in range(min(self.n_pairs, tau - 1)):
                i = (h - 1 - m + tau) % tau
                si = &self._pair_s[(i * K + c) * C]
                ri = &self._pair_r[(i * K + c) * C]
                sp = &self._shared_pair[i * C]
                sb = &self._shared_batch[i * C]
                a = 0.0
                b = 0.0
                d = 0.0
                for t in range(self._shared_len[i]):
                    a += <double>s[sb[t]] * ri[sp[t]]
                    b += <double>si[sp[t]] * r[sb[t]]
                    d += <double>r[sb[t]] * ri[sp[t]]
                self._pair_sr[(c * tau + h) * tau + i] = a
                self._pair_sr[(c * tau + i) * tau + h] = b
                self._pair_rr[(c * tau + h) * tau + i] = d
                self._pair_rr[(c * tau + i) * tau + h] = d
        memcpy(&self._pair_key[h * C], self._active_key, n * sizeof(int64_t))
        memcpy(&self._pair_hash[h * C], self._active_hash, n * sizeof(uint64_t))
        self._pair_len[h] = <int32_t>n
        self.head = (h + 1) % tau
        self.n_pairs = min(self.n_pairs + 1, tau)
        self.n_batches += 1


# The arrays a history is (the others are the batch's workspace).
_STATE = ("pair_len", "pair_key", "pair_hash", "pair_s", "pair_r", "pair_rho", "pair_gamma",
          "pair_valid", "pair_sr", "pair_rr")


def _rebuild_history(history_size, n_models, state, n_pairs, head, n_batches):
    """Unpickle (or load) a history, checking every size and value before using it.

    A forged state raises ``ValueError`` instead of reading out of bounds.
    """
    for name, value, low, high in (("history_size", history_size, 1, MAX_HISTORY),
                                   ("n_models", n_models, 1, 2**31 - 1)):
        if not isinstance(value, (int, np.integer)) or isinstance(value, (bool, np.bool_)) \
                or not low <= value <= high:
            raise ValueError(f"{name} must be an integer in [{low}, {high}], got {value!r}")
    if not isinstance(state, dict) or set(state) != set(_STATE):
        raise ValueError(f"the state of a history holds the arrays {', '.join(_STATE)}")
    arrays = {name: np.asarray(state[name]) for name in _STATE}
    for name in ("pair_s", "pair_r"):
        if arrays[name].dtype == np.float64:  # model files of 0.1.0.dev0 before float32 pairs
            arrays[name] = arrays[name].astype(np.float32)
    key = arrays["pair_key"]
    if key.ndim != 2 or key.shape[0] != history_size or key.shape[1] < 1:
        raise ValueError(f"pair_key must have shape ({history_size}, capacity), got {key.shape}")
    tau, K, C = history_size, n_models, key.shape[1]
    expected = {"pair_len": ((tau,), np.int32), "pair_key": ((tau, C), np.int64),
                "pair_hash": ((tau, C), np.uint64), "pair_s": ((tau, K, C), np.float32),
                "pair_r": ((tau, K, C), np.float32), "pair_rho": ((tau, K), np.float64),
                "pair_gamma": ((tau, K), np.float64), "pair_valid": ((tau, K), np.uint8),
                "pair_sr": ((K, tau, tau), np.float64), "pair_rr": ((K, tau, tau), np.float64)}
    for name, (shape, dtype) in expected.items():
        if arrays[name].shape != shape or arrays[name].dtype != dtype:
            raise ValueError(f"{name} must be {np.dtype(dtype)} of shape {shape}, "
                             f"got {arrays[name].dtype} {arrays[name].shape}")
        if arrays[name].dtype.kind == "f" and not np.isfinite(arrays[name]).all():
            raise ValueError(f"{name} must be finite")
    if arrays["pair_len"].min() < 0 or arrays["pair_len"].max() > C:
        raise ValueError(f"pair lengths must be in [0, {C}]")
    if arrays["pair_valid"].max() > 1:
        raise ValueError("pair_valid must hold 0 or 1")
    for name, value, high in (("n_pairs", n_pairs, tau), ("head", head, tau - 1),
                              ("n_batches", n_batches, 2**63 - 1)):
        if not isinstance(value, (int, np.integer)) or isinstance(value, (bool, np.bool_)) \
                or not 0 <= value <= high:
            raise ValueError(f"{name} must be an integer in [0, {high}], got {value!r}")
    # Copies: unpickled arrays may be read-only (memmaps) and training writes them.
    arrays = {name: np.array(a, order="C") for name, a in arrays.items()}
    cdef const int64_t[::1] keys = arrays["pair_key"].reshape(-1)
    cdef const uint64_t[::1] hashes = arrays["pair_hash"].reshape(-1)
    cdef Py_ssize_t i
    for i in range(keys.shape[0]):
        if hashes[i] != _fmix64(<uint64_t>keys[i]):
            raise ValueError("pair_hash does not hold the hashes of pair_key")
    cdef LBFGSHistory history = LBFGSHistory.__new__(LBFGSHistory)
    history.history_size = history_size
    history.n_models = n_models
    history._load(arrays, n_pairs, head, n_batches)
    return history


cdef int64_t* _ptr64(object a):
    cdef int64_t[::1] v = a.reshape(-1)
    return &v[0]


cdef uint64_t* _ptru64(object a):
    cdef uint64_t[::1] v = a.reshape(-1)
    return &v[0]


cdef int32_t* _ptr32(object a):
    cdef int32_t[::1] v = a.reshape(-1)
    return &v[0]


cdef double* _ptrf(object a):
    cdef double[::1] v = a.reshape(-1)
    return &v[0]


cdef float* _ptrf32(object a):
    cdef float[::1] v = a.reshape(-1)
    return &v[0]


cdef bint _batch_gradient(SGDParams params, Py_ssize_t K, Py_ssize_t C, Py_ssize_t n_active,
                          Py_ssize_t first_key, const int64_t[::1] indptr,
                          const double[::1] data, const double[::1] y,
                          const double[::1] sample_weight, const int64_t[::1] order,
                          Py_ssize_t start, Py_ssize_t stop, const int32_t* nnz_pos,
                          const double* w, double unit, double* g, double* scores,
                          double* dl, Py_ssize_t* mistakes,
                          double* log_loss) noexcept nogil:
    """Mean gradient ``g`` (per model, over the active positions) of the batch at ``w``.

    ``w`` and ``g`` hold model ``c``'s coordinate ``j`` at ``c * C + j``;
    position 0 is the intercept when ``first_key`` is 1, a feature of value
    ``unit`` (its gradient in those units; ``w`` holds the intercept). Adds the batch's
    misclassifications to ``mistakes`` and its binary log loss to ``log_loss``
    when they are not NULL. False if a score
    is not finite.
    """
    cdef Py_ssize_t b, c, j, p, row, off, n_rows = stop - start
    cdef double s, inv_n = 1.0 / n_rows
    for c in range(K):
        for j in range(n_active):
            g[c * C + j] = 0.0
    off = 0
    for b in range(n_rows):
        row = order[start + b]
        for c in range(K):
            s = w[c * C] if first_key else 0.0
            for p in range(indptr[row], indptr[row + 1]):
                s += data[p] * w[c * C + nnz_pos[off + p - indptr[row]]]
            if not isfinite(s):
                return False
            scores[c] = s
        if log_loss != NULL:
            log_loss[0] += sample_log_loss(params.loss, K, scores[0], y[row])
        if sample_dloss(params.loss, K, scores, y[row], sample_weight[row], params.margin, dl):
            if mistakes != NULL:
                mistakes[0] += 1
        for c in range(K):
            if dl[c] == 0.0:
                continue
            if first_key:
                g[c * C] += dl[c]
            for p in range(indptr[row], indptr[row + 1]):
                g[c * C + nnz_pos[off + p - indptr[row]]] += dl[c] * data[p]
        off += indptr[row + 1] - indptr[row]
    for c in range(K):
        for j in range(n_active):
            g[c * C + j] *= inv_n
        if first_key:
            g[c * C] *= unit
        if params.alpha > 0.0:
            for j in range(first_key, n_active):
                g[c * C + j] += params.alpha * w[c * C + j]
    return True



cdef void _read_errors(int loss, Py_ssize_t K, Py_ssize_t C, Py_ssize_t first_key,
                       const int64_t[::1] indptr, const double[::1] data, const double[::1] y,
                       const int64_t[::1] order, Py_ssize_t start, Py_ssize_t stop,
                       const int32_t* nnz_pos, const double* w_heap, const double* w_sketch,
                       double* scores, double* heap_error, double* sketch_error) noexcept nogil:
    """Add the batch's errors predicting from ``w_heap`` and from ``w_sketch``."""
    cdef Py_ssize_t b, c, p, row, off = 0, n
    cdef const double* w
    cdef double* total
    for b in range(stop - start):
        row = order[start + b]
        for n in range(2):
            w = w_heap if n == 0 else w_sketch
            total = heap_error if n == 0 else sketch_error
            for c in range(K):
                scores[c] = w[c * C] if first_key else 0.0
                for p in range(indptr[row], indptr[row + 1]):
                    scores[c] += data[p] * w[c * C + nnz_pos[off + p - indptr[row]]]
            total[0] += read_error(loss, K, scores, y[row])
        off += indptr[row + 1] - indptr[row]



cdef inline double _secant_fraction(double gs, double gps) noexcept nogil:
    """Share ``theta`` of a step ``s`` to keep, from ``gs = g^T s`` at its start and
    ``gps = g'^T s`` at its end: the loss changes by about ``(gs + gps) / 2`` along
    ``s`` (exactly, for a quadratic); when that is positive the step went past the
    minimum along ``s``, and ``theta = -gs / (gps - gs)`` is the secant minimum."""
    return -gs / (gps - gs) if gs < 0.0 and gs + gps > 0.0 else 1.0


cdef double _trust_fraction(double trust, Py_ssize_t K, Py_ssize_t C, Py_ssize_t first_key,
                            const double* scale, const int64_t[::1] indptr,
                            const double[::1] data, const int64_t[::1] order,
                            Py_ssize_t start, Py_ssize_t stop, const int32_t* nnz_pos,
                            const float* s) noexcept nogil:
    """Share of the step ``s`` (model ``c``'s coordinate ``j`` at ``c * C + j``,
    which moves the weight by ``scale[j]`` times it) to take so that no score of
    the batch's rows moves by more than ``trust``."""
    cdef Py_ssize_t b, c, p, row, j, off = 0
    cdef double moved, most = 0.0
    for b in range(stop - start):
        row = order[start + b]
        for c in range(K):
            moved = scale[0] * s[c * C] if first_key else 0.0
            for p in range(indptr[row], indptr[row + 1]):
                j = nnz_pos[off + p - indptr[row]]
                moved += data[p] * scale[j] * s[c * C + j]
            most = max(most, fabs(moved))
        off += indptr[row + 1] - indptr[row]
    return trust / most if most > trust else 1.0


cdef bint _heap_takes_estimates(Py_ssize_t K, PyObject** sk, PyObject** hp,
                                const int64_t* keys, Py_ssize_t n, const Py_ssize_t* cells,
                                const double* signs, Py_ssize_t depth,
                                const uint8_t* in_heap) noexcept nogil:
    """Offer each model's heap the sketch's new estimates of ``n`` stepped keys.

    ``cells`` and ``signs`` hold key ``q``'s located cells at ``q * depth``;
    ``in_heap[q * K + c]`` whether it was in model ``c``'s heap (a member is
    always updated; another enters only if the heap accepts it). False if an
    estimate is not finite.
    """
    cdef Py_ssize_t c, q
    cdef double hw, evicted_weight
    cdef int64_t evicted_key
    for c in range(K):
        for q in range(n):
            hw = (<CountSketch>sk[c]).estimate_located(&cells[q * depth], &signs[q * depth])
            if not isfinite(hw):
                return False
            if in_heap[q * K + c] or (<TopKHeap>hp[c]).accepts(keys[q], hw):
                (<TopKHeap>hp[c]).offer(keys[q], hw, &evicted_key, &evicted_weight)
    return True


cdef inline void _normalized_scales(SGDParams params, double sq_sum, double abs_sum,
                                    Py_ssize_t n_rows, Py_ssize_t nnz, double* norm2,
                                    double* unit) noexcept nogil:
    """'normalized''s scales of ``n_rows`` rows holding ``nnz`` non-zeros whose
    squares sum to ``sq_sum`` and absolute values to ``abs_sum``: ``norm2`` the
    mean ``||x||**2`` of the rows and ``unit`` the mean ``|x|`` of the non-zeros
    (the intercept's value as a feature); under 'adaptive', of the values scaled
    by ``_adaptive_scales``. Both 1 under another schedule, or when either is not
    positive and finite."""
    norm2[0] = sq_sum / n_rows
    unit[0] = abs_sum / nnz if nnz > 0 else 0.0
    if ((params.schedule != NORMALIZED and params.schedule != ADAPTIVE)
            or not (norm2[0] > 0.0 and isfinite(norm2[0])
                    and unit[0] > 0.0 and isfinite(unit[0]))):
        norm2[0] = 1.0
        unit[0] = 1.0


cdef inline double _adaptive_scale(float* squares, Py_ssize_t n_squares, int64_t key,
                                   double added) noexcept nogil:
    """Add ``added`` to the sum of squared values of ``key``'s cell of ``squares``
    (``feature_cell``, the cells of SGD's feature tables) and return
    the coordinate's scale, the inverse fourth root of the sum (0 for a sum of 0)."""
    cdef Py_ssize_t slot = feature_cell(key, n_squares)
    cdef double v
    squares[slot] += <float>added
    v = <double>squares[slot]
    return 1.0 / sqrt(sqrt(v)) if v > 0.0 and isfinite(v) else 0.0


cdef void _adaptive_scales(SGDParams params, Py_ssize_t first_key, Py_ssize_t n_active,
                           const int64_t* keys,
                           float* squares, Py_ssize_t n_squares, const int64_t[::1] indptr,
                           const double[::1] data, const int64_t[::1] order,
                           Py_ssize_t start, Py_ssize_t stop, const int32_t* nnz_pos,
                           double* scale, double* norm2, double* unit) noexcept nogil:
    """'adaptive': the scales of the batch's coordinates, ``u_j = w_j / scale[j]``.

    The batch's squared values of each feature are added to ``squares``, and
    ``scale[j]`` becomes ``Q_j ** -1/4``, ``Q_j`` the feature's sum of squared
    values so far: a step in ``u`` is one in ``w`` preconditioned by
    ``Q ** -1/2``, AdaGrad's diagonal with the values in place of the
    gradients (a rare feature moves further than a frequent one; the diagonal
    of the gradients' squares did not learn, see ``sklearn_sketch.bear``).
    'normalized''s scales are then those of the rows in ``u``
    (values ``x_j * scale[j]``): ``norm2`` their mean ``||.||**2``, ``unit`` their
    non-zeros' mean ``|.|`` (the intercept's scale, ``scale[0]``)."""
    cdef Py_ssize_t b, j, p, row, off = 0
    cdef double x, sq_sum = 0.0, abs_sum = 0.0
    for j in range(n_active):
        scale[j] = 0.0
    for b in range(stop - start):
        row = order[start + b]
        for p in range(indptr[row], indptr[row + 1]):
            scale[nnz_pos[off + p - indptr[row]]] += data[p] * data[p]
        off += indptr[row + 1] - indptr[row]
    for j in range(first_key, n_active):
        scale[j] = _adaptive_scale(squares, n_squares, keys[j], scale[j])
    off = 0
    for b in range(stop - start):
        row = order[start + b]
        for p in range(indptr[row], indptr[row + 1]):
            x = data[p] * scale[nnz_pos[off + p - indptr[row]]]
            sq_sum += x * x
            abs_sum += fabs(x)
        off += indptr[row + 1] - indptr[row]
    _normalized_scales(params, sq_sum, abs_sum, stop - start, off, norm2, unit)
    if first_key:
        scale[0] = unit[0]


cdef inline void _scale_gradient(Py_ssize_t K, Py_ssize_t C, Py_ssize_t first_key,
                                 Py_ssize_t n_active, const double* scale,
                                 double* g) noexcept nogil:
    """The features' coordinates of ``g`` (model ``c``'s coordinate ``j`` at
    ``c * C + j``) times ``scale[j]``: a gradient in ``w`` made one in ``u``."""
    cdef Py_ssize_t c, j
    for c in range(K):
        for j in range(first_key, n_active):
            g[c * C + j] *= scale[j]


cdef int _single_row_step(SGDParams params, Py_ssize_t K, Py_ssize_t depth, bint first_key,
                          PyObject** sk, PyObject** hp, double[::1] intercept,
                          CountSketch sketch0, const int64_t[::1] indptr,
                          const int64_t[::1] indices, const double[::1] data,
                          const double[::1] y, const double[::1] sample_weight,
                          Py_ssize_t row, double eta, Py_ssize_t* cells, double* signs,
                          double* w, double* s, uint8_t* in_heap, double* scores,
                          double* moved, double* s0, double* dl, Py_ssize_t* mistakes,
                          double* log_loss, bint compare, double* heap_error,
                          double* sketch_error, float* squares, Py_ssize_t n_squares,
                          double* scale) noexcept nogil:
    """A first-order step on one row too long for the curvature pairs' room.

    The row is a batch of its own whose coordinates the pairs cannot hold: its
    direction is the gradient, scaled as for a batch without a usable pair
    (``eta / ||x||**2`` under 'normalized', the intercept a feature of value
    the row's mean ``|x|``, as in a batch); the step is cut
    back to the secant minimum along it as every step is, and no pair is
    stored. Under 'adaptive' the row is scaled as a batch is (``_adaptive_scales``:
    the step is ``scale**2`` times the gradient, over the row's
    ``||x * scale||**2``). The buffers hold the row's ``n`` non-zeros:
    ``cells`` and ``signs`` ``n * depth``; ``w``, ``s`` and ``in_heap`` ``K * n``;
    ``scale`` ``n``; ``scores``, ``moved``, ``s0`` and ``dl`` ``K``. Returns
    ``PASS_OK`` or ``PASS_DIVERGED``.
    """
    cdef Py_ssize_t c, q, p0 = indptr[row], n = indptr[row + 1] - indptr[row]
    cdef double sq_sum = 0.0, abs_sum = 0.0, norm2, unit
    cdef double hw, x, g, gs = 0.0, gps = 0.0, theta, delta
    cdef bint read_sketch = params.read_sketch
    for q in range(n):
        x = data[p0 + q]
        scale[q] = 1.0
        if params.schedule == ADAPTIVE:
            scale[q] = _adaptive_scale(squares, n_squares, indices[p0 + q], x * x)
            x *= scale[q]
        sq_sum += x * x
        abs_sum += fabs(x)
        sketch0.locate_prefetch(indices[p0 + q], &cells[q * depth], &signs[q * depth])
    _normalized_scales(params, sq_sum, abs_sum, 1, n, &norm2, &unit)
    # Scores at the weights training reads (moved: at the other read, when compared).
    for c in range(K):
        scores[c] = intercept[c] if first_key else 0.0
        moved[c] = scores[c]
        for q in range(n):
            in_heap[q * K + c] = (<TopKHeap>hp[c]).lookup(indices[p0 + q], &hw)
            if in_heap[q * K + c] or compare or read_sketch:
                hw = (<CountSketch>sk[c]).estimate_located(&cells[q * depth], &signs[q * depth])
            w[c * n + q] = hw if in_heap[q * K + c] or read_sketch else 0.0
            scores[c] += data[p0 + q] * w[c * n + q]
            moved[c] += data[p0 + q] * (hw if in_heap[q * K + c] or not read_sketch else 0.0)
        if not isfinite(scores[c]):
            return PASS_DIVERGED
    if compare:
        heap_error[0] += read_error(params.loss, K, moved if read_sketch else scores, y[row])
        sketch_error[0] += read_error(params.loss, K, scores if read_sketch else moved, y[row])
    memcpy(moved, scores, K * sizeof(double))  # sample_dloss overwrites softmax scores
    log_loss[0] += sample_log_loss(params.loss, K, scores[0], y[row])
    if sample_dloss(params.loss, K, scores, y[row], sample_weight[row], params.margin, dl):
        mistakes[0] += 1
    # The step s = -eta g, rounded as a stored step is; moved becomes the scores at w + s.
    # The intercept's coordinate s0 is in its units: it moves by unit * s0.
    for c in range(K):
        s0[c] = <float>(-eta * unit * dl[c] / norm2) if first_key else 0.0
        gs += s0[c] * unit * dl[c]
        moved[c] += unit * s0[c]
        for q in range(n):
            x = data[p0 + q]
            g = dl[c] * x + params.alpha * w[c * n + q]
            delta = <float>(-eta * scale[q] * scale[q] * g / norm2)
            if not isfinite(delta):
                return PASS_DIVERGED
            s[c * n + q] = delta
            gs += delta * g
            moved[c] += x * delta
    # Secant check along s with the gradient g' at w + s (_secant_fraction).
    for c in range(K):
        if not isfinite(moved[c]):
            return PASS_DIVERGED
    sample_dloss(params.loss, K, moved, y[row], sample_weight[row], params.margin, dl)
    for c in range(K):
        gps += s0[c] * unit * dl[c]
        for q in range(n):
            g = dl[c] * data[p0 + q] + params.alpha * (w[c * n + q] + s[c * n + q])
            gps += s[c * n + q] * g
    theta = _secant_fraction(gs, gps)
    for c in range(K):
        if first_key:
            intercept[c] += unit * (<float>(theta * s0[c]) if theta != 1.0 else s0[c])
        for q in range(n):
            delta = <float>(theta * s[c * n + q]) if theta != 1.0 else s[c * n + q]
            if not (<CountSketch>sk[c]).add_located(&cells[q * depth], &signs[q * depth],
                                                    delta):
                return PASS_DIVERGED
    if not _heap_takes_estimates(K, sk, hp, &indices[p0], n, cells, signs, depth, in_heap):
        return PASS_DIVERGED
    return PASS_OK

cdef inline Py_ssize_t _batch_stop(const int64_t* indptr, const int64_t* order,
                                   Py_ssize_t start, Py_ssize_t stop,
                                   Py_ssize_t batch_nnz_cap) noexcept nogil:
    """Where the batch of rows ``order[start:stop]`` ends: at ``stop``, or at the
    first row whose non-zeros would take the batch's past ``batch_nnz_cap`` (when
    it is not negative); a first row longer than the cap is a batch of its own."""
    cdef Py_ssize_t i, nnz, row_nnz
    if batch_nnz_cap < 0:
        return stop
    nnz = indptr[order[start] + 1] - indptr[order[start]]
    if nnz > batch_nnz_cap:
        return start + 1
    for i in range(start + 1, stop):
        row_nnz = indptr[order[i] + 1] - indptr[order[i]]
        if nnz + row_nnz > batch_nnz_cap:
            return i
        nnz += row_nnz
    return stop


def batch_starts(const int64_t[::1] indptr, const int64_t[::1] order, Py_ssize_t batch_size,
                 Py_ssize_t batch_nnz_cap=-1):
    """Where :func:`bear_pass`'s batches over ``order`` start, and ``len(order)``.

    The same rule as the pass (``_batch_stop``): ``batch_size`` rows, fewer when
    their non-zeros would outgrow ``batch_nnz_cap`` (when it is not negative),
    and a row of more non-zeros than that a batch of its own. A pass cut at
    these positions trains the same batches as one call.

    Returns
    -------
    starts : ndarray of int64
        Increasing positions in ``order``, from 0 to ``len(order)``.
    """
    cdef Py_ssize_t n = order.shape[0], start = 0, m = 0
    cdef Py_ssize_t bs = max(1, min(batch_size, n))
    out = np.empty(n + 1, dtype=np.int64)
    cdef int64_t[::1] starts = out
    with nogil:
        while start < n:
            starts[m] = start
            m += 1
            start = _batch_stop(&indptr[0], &order[0], start, min(start + bs, n),
                                batch_nnz_cap)
        starts[m] = n
        m += 1
    return out[:m]


def bear_pass(SGDParams params not None, list sketches, list heaps, double[::1] intercept,
              LBFGSHistory history not None, const int64_t[::1] indptr,
              const int64_t[::1] indices, const double[::1] data, const double[::1] y,
              const double[::1] sample_weight, const int64_t[::1] order, double t,
              Py_ssize_t max_batch_nnz, Py_ssize_t batch_nnz_cap=-1,
              feature_squares=None):
    """Train the ``K = len(intercept)`` models on the rows ``order`` with BEAR steps.

    Parameters
    ----------
    params : SGDParams
        Loss (squared error, log loss or softmax), schedule, step, L2, batch size.
    sketches, heaps : list of CountSketch, list of TopKHeap
        One per model; the sketches share width, depth and seeds.
    intercept : ndarray of float64, shape (K,)
        Updated in place (when ``params.fit_intercept``).
    history : LBFGSHistory
        The curvature pairs, updated in place; its capacity must be at least
        ``max_batch_nnz + 1``.
    indptr, indices, data : CSR arrays (int64 indices, canonical: no duplicates)
    y : ndarray of float64
        Target, binary target in {-1, +1}, or class index for ``K > 1``.
    sample_weight : ndarray of float64
    order : ndarray of int64
        Rows in the order they are visited.
    t : float
        Samples seen so far plus one (the schedule's clock).
    max_batch_nnz : int
        Largest number of non-zeros in one mini-batch.
    batch_nnz_cap : int, default=-1
        If not negative, a batch also ends before the row that would take its
        non-zeros past this many: how a memory budget bounds the pairs. A row
        that alone holds more is a batch of its own with a first-order step
        and no pair (its coordinates do not fit the pairs' room).
        ``max_batch_nnz`` must then be at least this cap.
    feature_squares : ndarray of float32, default=None
        With ``ADAPTIVE`` (required then): the sum of the squared values of the
        features hashed to each cell (``fmix64(key) % size``) so far, added to in
        place. Each batch's coordinates are scaled by the inverse fourth root of
        these sums (``_adaptive_scales``): the quasi-Newton steps are
        preconditioned by AdaGrad's diagonal of the values.

    Returns
    -------
    t : float
        The clock after the pass.
    status : PassStatus
        ``PASS_DIVERGED`` when a score, weight or direction became non-finite.
    mistakes : int
        Samples misclassified by the model before their batch's update.
    read_errors : tuple of float
        With ``params.compare_reads``: the summed errors (squared error for
        regression, else misclassifications) before each batch's update of the
        heap-masked weights training reads and of the sketch's estimates of
        every feature; zeros otherwise.
    """
    cdef Py_ssize_t K = intercept.shape[0], n_rows = order.shape[0]
    _ready(history)
    if len(sketches) != K or len(heaps) != K or history.n_models != K:
        raise ValueError("one sketch, one heap and one history model per model are needed")
    check_models(sketches, heaps)
    for sketch in sketches:
        if not (<CountSketch>sketches[0]).same_configuration(sketch):
            raise ValueError("the sketches of the models must share their configuration")
    if history.capacity < max_batch_nnz + 1:
        raise ValueError("the history's capacity is below the batch size in non-zeros")
    cdef Py_ssize_t i, row_nnz, long_nnz = 0
    if batch_nnz_cap >= 0:
        if max_batch_nnz < batch_nnz_cap:
            raise ValueError("max_batch_nnz must be at least batch_nnz_cap")
        for i in range(n_rows):
            row_nnz = indptr[order[i] + 1] - indptr[order[i]]
            if row_nnz > batch_nnz_cap:
                long_nnz = max(long_nnz, row_nnz)
    cdef bint adaptive = params.schedule == ADAPTIVE
    cdef float[::1] squares_view
    cdef float* squares = NULL
    cdef Py_ssize_t n_squares = 0
    if adaptive:
        if feature_squares is None or len(feature_squares) == 0:
            raise ValueError("the 'adaptive' schedule needs a non-empty feature_squares array")
        squares_view = feature_squares
        squares = &squares_view[0]
        n_squares = squares_view.shape[0]
    cdef Py_ssize_t C = history.capacity, depth = (<CountSketch>sketches[0]).depth
    # A batch holds at most every row (this also keeps ``start + bs`` from overflowing).
    cdef Py_ssize_t bs = max(1, min(params.batch_size, n_rows))
    # Per-coordinate buffers: a batch's active set (stride C), or a row longer than
    # the cap, which takes a first-order step in them between batches
    # (_single_row_step: cells, signs, w, in_heap, and g for its step); the pairs'
    # room stays what the budget gave them.
    cdef Py_ssize_t slots = max(C, long_nnz)
    cdef PyObject** sk = <PyObject**>malloc_array(K, 1, sizeof(PyObject*))
    cdef PyObject** hp = <PyObject**>malloc_array(K, 1, sizeof(PyObject*))
    cdef int32_t* nnz_pos = <int32_t*>malloc_array(max_batch_nnz, 1, sizeof(int32_t))
    cdef Py_ssize_t* cells = <Py_ssize_t*>malloc_array(slots, depth, sizeof(Py_ssize_t))
    cdef double* signs = <double*>malloc_array(slots, depth, sizeof(double))
    cdef uint8_t* in_heap = <uint8_t*>malloc_array(slots, K, sizeof(uint8_t))
    cdef double* w = <double*>malloc_array(slots, K, sizeof(double))
    # The read of the active set that training does not take (the sketch's
    # estimates, or with params.read_sketch the heap-masked weights), compared
    # with the one it takes when asked; after the step, g before it.
    cdef double* w_other = <double*>malloc_array(C, K, sizeof(double))
    cdef double* g = <double*>malloc_array(slots, K, sizeof(double))
    cdef double* z = <double*>malloc_array(C, 1, sizeof(double))
    cdef double* scores = <double*>malloc_array(K, 1, sizeof(double))
    cdef double* dl = <double*>malloc_array(K, 1, sizeof(double))
    cdef double* moved = <double*>malloc_array(K, 1, sizeof(double))
    cdef double* s0 = <double*>malloc_array(K, 1, sizeof(double))
    # How far a unit of each coordinate moves its weight: the intercept's
    # ``unit``, and 1 for a feature but under 'adaptive' (_adaptive_scales).
    cdef double* scale = <double*>malloc_array(slots, 1, sizeof(double))
    if not (sk and hp and nnz_pos and cells and signs and in_heap and w and w_other and g and z
            and scores and dl and moved and s0 and scale):
        free(sk); free(hp); free(nnz_pos); free(cells); free(signs); free(in_heap); free(w)
        free(w_other); free(g); free(z); free(scores); free(dl); free(moved); free(s0)
        free(scale)
        raise MemoryError(f"cannot allocate the buffers of a batch of "
                          f"{max(max_batch_nnz, long_nnz)} non-zeros for {K} model(s)")
    cdef Py_ssize_t c
    for c in range(K):
        sk[c] = <PyObject*>sketches[c]
        hp[c] = <PyObject*>heaps[c]

    cdef CountSketch sketch0 = sketches[0]
    cdef Py_ssize_t start, stop, b, row, p, j, n_active, off, first_key = params.fit_intercept
    cdef Py_ssize_t idx, mistakes = 0
    cdef double eta, delta, hw, norm2, unit, sq_sum, abs_sum, gs, gps, theta
    cdef bint no_pair
    cdef float* s_out
    cdef float* r_out
    cdef const int64_t* keys = history._active_key
    cdef int status = PASS_OK
    cdef bint compare = params.compare_reads, read_sketch = params.read_sketch
    cdef double heap_error = 0.0, sketch_error = 0.0, log_loss = 0.0
    with nogil:
        start = 0
        while start < n_rows and status == PASS_OK:
            stop = _batch_stop(&indptr[0], &order[0], start, min(start + bs, n_rows),
                               batch_nnz_cap)
            if batch_nnz_cap >= 0:
                if indptr[order[start] + 1] - indptr[order[start]] > batch_nnz_cap:
                    # A batch of this row alone, by its share of a full batch's step.
                    status = _single_row_step(
                        params, K, depth, first_key, sk, hp, intercept, sketch0, indptr,
                        indices, data, y, sample_weight, order[start],
                        learning_rate(params, t) / bs, cells, signs, w, g, in_heap,
                        scores, moved, s0, dl, &mistakes, &log_loss, compare,
                        &heap_error, &sketch_error, squares, n_squares, scale)
                    t += 1
                    start += 1
                    continue
            # Active set: a position per distinct key, the intercept first.
            history.start_batch()
            if first_key:
                history.add_key(INTERCEPT_KEY)
            # 'normalized': the batch's mean ||x||^2 is the scale of curvature
            # that the pairs cannot give (the first step, damping), and the
            # intercept is a feature of value ``unit``, the mean |x| of the
            # batch's non-zeros (see the module docstring). Steps then do not
            # depend on the scale of the features.
            sq_sum = 0.0
            abs_sum = 0.0
            off = 0
            for b in range(stop - start):
                row = order[start + b]
                for p in range(indptr[row], indptr[row + 1]):
                    nnz_pos[off + p - indptr[row]] = history.add_key(indices[p])
                    sq_sum += data[p] * data[p]
                    abs_sum += fabs(data[p])
                off += indptr[row + 1] - indptr[row]
            n_active = history.n_active
            history.find_shared()
            if adaptive:
                _adaptive_scales(params, first_key, n_active, keys, squares, n_squares,
                                 indptr, data, order, start, stop, nnz_pos, scale, &norm2,
                                 &unit)
            else:
                _normalized_scales(params, sq_sum, abs_sum, stop - start, off, &norm2,
                                   &unit)
                if first_key:
                    scale[0] = unit
                for j in range(first_key, n_active):
                    scale[j] = 1.0

            # Weights: the sketch's estimate for heap members, 0 for the rest (the
            # paper's box), or with read_sketch the estimate of every feature.
            for j in range(first_key, n_active):
                sketch0.locate_prefetch(keys[j], &cells[j * depth], &signs[j * depth])
            for c in range(K):
                if first_key:
                    w[c * C] = intercept[c]
                    w_other[c * C] = intercept[c]
                for j in range(first_key, n_active):
                    if j + PREFETCH_AHEAD < n_active:
                        (<CountSketch>sk[c]).prefetch_located(
                            &cells[(j + PREFETCH_AHEAD) * depth], 1)
                    in_heap[j * K + c] = (<TopKHeap>hp[c]).lookup(keys[j], &hw)
                    if in_heap[j * K + c] or compare or read_sketch:
                        hw = (<CountSketch>sk[c]).estimate_located(&cells[j * depth],
                                                                   &signs[j * depth])
                    if read_sketch:
                        w[c * C + j] = hw
                        w_other[c * C + j] = hw if in_heap[j * K + c] else 0.0
                    else:
                        w[c * C + j] = hw if in_heap[j * K + c] else 0.0
                        w_other[c * C + j] = hw
            if compare:
                _read_errors(params.loss, K, C, first_key, indptr, data, y, order, start, stop,
                             nnz_pos, w_other if read_sketch else w,
                             w if read_sketch else w_other, scores, &heap_error, &sketch_error)
            if not _batch_gradient(params, K, C, n_active, first_key, indptr, data, y,
                                   sample_weight, order, start, stop, nnz_pos, w,
                                   unit, g, scores, dl, &mistakes, &log_loss):
                status = PASS_DIVERGED
                break
            if adaptive:
                _scale_gradient(K, C, first_key, n_active, scale, g)

            # The direction and the step, model by model; s is written in place
            # of the oldest pair once its two-loop no longer needs it.
            eta = learning_rate(params, t)
            # A batch that ends early (the cap, or the pass's last rows) takes the
            # share of a full batch's step that its rows are. A quasi-Newton step
            # fits its batch whatever the batch's size, so without this a batch of
            # one long row moved the model as far as 64 rows: under a 16 MB budget
            # on 20 Newsgroups tokens (batches capped at 16,384 non-zeros, 1 to
            # 64 rows) seeds scored .38-.53, and .60-.62 with it.
            eta *= <double>(stop - start) / bs
            idx = history.head
            for c in range(K):
                # Without a usable pair the direction is the gradient, scaled by
                # the metric when normalized (the intercept's too, in its units).
                no_pair = history.direction_on_batch(c, &g[c * C], z) == 0.0
                s_out = &history._pair_s[(idx * K + c) * C]
                for j in range(n_active):
                    delta = -eta * z[j]
                    if no_pair:
                        delta /= norm2
                    s_out[j] = <float>delta
            theta = 1.0
            if params.margin_trust > 0.0:
                theta = _trust_fraction(params.margin_trust, K, C, first_key, scale, indptr,
                                        data, order, start, stop, nnz_pos,
                                        &history._pair_s[idx * K * C])
            for c in range(K):
                s_out = &history._pair_s[(idx * K + c) * C]
                for j in range(n_active):
                    if first_key <= j + PREFETCH_AHEAD < n_active:
                        (<CountSketch>sk[c]).prefetch_located(
                            &cells[(j + PREFETCH_AHEAD) * depth], 1)
                    # The step taken is the step stored: w + s is the new weights.
                    delta = <float>(theta * s_out[j]) if theta != 1.0 else s_out[j]
                    if not isfinite(delta):
                        status = PASS_DIVERGED
                    s_out[j] = <float>delta
                    if j < first_key:
                        intercept[c] += unit * delta
                    elif not (<CountSketch>sk[c]).add_located(&cells[j * depth],
                                                               &signs[j * depth],
                                                               scale[j] * delta):
                        status = PASS_DIVERGED
            if status != PASS_OK:
                break

            # The curvature pair is measured at the weights the step moved to,
            # w + s: r = g(w + s) - g(w) on the same batch, taken in double
            # (w_other is free by now) and rounded once.
            for c in range(K):
                s_out = &history._pair_s[(idx * K + c) * C]
                for j in range(n_active):
                    w[c * C + j] += scale[j] * s_out[j]
            memcpy(w_other, g, K * C * sizeof(double))
            if not _batch_gradient(params, K, C, n_active, first_key, indptr, data, y,
                                   sample_weight, order, start, stop, nnz_pos, w,
                                   unit, g, scores, dl, NULL, NULL):
                status = PASS_DIVERGED
                break
            if adaptive:
                _scale_gradient(K, C, first_key, n_active, scale, g)
            # Secant check along s (_secant_fraction): a step past the batch's
            # minimum along s is cut back to it, and the pair with it.
            gs = 0.0
            gps = 0.0
            for c in range(K):
                s_out = &history._pair_s[(idx * K + c) * C]
                for j in range(n_active):
                    gs += w_other[c * C + j] * s_out[j]
                    gps += g[c * C + j] * s_out[j]
            theta = _secant_fraction(gs, gps)
            for c in range(K):
                s_out = &history._pair_s[(idx * K + c) * C]
                r_out = &history._pair_r[(idx * K + c) * C]
                for j in range(n_active):
                    r_out[j] = <float>(theta * (g[c * C + j] - w_other[c * C + j]))
                    if theta != 1.0:
                        delta = <float>(theta * s_out[j])
                        if j < first_key:
                            intercept[c] += unit * (delta - s_out[j])
                        else:
                            (<CountSketch>sk[c]).add_located(&cells[j * depth],
                                                             &signs[j * depth],
                                                             scale[j] * (delta - s_out[j]))
                        s_out[j] = <float>delta
            if not _heap_takes_estimates(K, sk, hp, &keys[first_key], n_active - first_key,
                                         &cells[first_key * depth], &signs[first_key * depth],
                                         depth, &in_heap[first_key * K]):
                status = PASS_DIVERGED
                break
            history.push_batch(params.damping * norm2)
            t += stop - start
            start = stop
    free(sk); free(hp); free(nnz_pos); free(cells); free(signs); free(in_heap); free(w)
    free(w_other); free(g); free(z); free(scores); free(dl); free(moved); free(s0)
    free(scale)
    return t, status, mistakes, (heap_error, sketch_error, log_loss)
