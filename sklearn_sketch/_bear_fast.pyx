"""BEAR (Aghazadeh et al., Algorithm 2): online L-BFGS steps sketched into a Count-Sketch.

Each mini-batch ``Theta_t`` with active set ``A_t`` (the features present in it):

1. read the weights of ``A_t`` from the sketch where the feature is in the
   top-k heap (0 elsewhere); gradient ``g_t`` of the batch's mean loss;
2. direction ``z_t`` by the L-BFGS two-loop recursion (Algorithm 1) over the
   last ``history_size`` curvature pairs ``(s_i, r_i)``;
3. add ``s = -eta z_t`` on ``A_t`` to the sketch; read ``A_t`` again and
   offer the estimates to the heap;
4. gradient ``g'`` on the same batch at ``w + s``; store the pair ``(s,
   r = g' - g_t)`` on ``A_t`` (never as length-p vectors).

Step 4 departs from the paper's box, which takes ``g'`` at the re-read
weights (masked by the heap; the authors' code reads them unmasked). Either
way ``r`` then mixes the step with collisions and heap changes, so it is not
the curvature along ``s``, and on the paper's own sparse-recovery simulation
(section 6) both recovered the support far less often than this consistent
secant pair did (see ``sklearn_sketch.bear``). For a convex loss with one
model ``r^T s >= 0`` then holds; a softmax model's own pair can still bend the
wrong way, since the other classes' steps move its probabilities.

As in online L-BFGS (Schraudolph et al. 2007), ``r`` gets ``damping * s``
added: with one model (binary or squared loss) every pair then has curvature at
least ``damping``, which bounds the direction by ``1 / damping`` times the
gradient. Without it a pair measured on
a batch the model already fits (log loss: curvature near 0) would blow up the
step on the next batch it does not fit.

The intercept is one more coordinate of every vector (kept exactly, not in the
sketch). A pair with ``r^T s <= 1e-10 ||r|| ||s||`` (no positive curvature
along ``s``) is kept in the window but not used. With ``K`` models (softmax)
every model has its own sketch, heap and two-loop; the pairs share their
coordinates.

Pairs live on a slot map: every feature key referenced by a stored pair or by
the current batch has a slot, so the two-loop is a few passes over int32 slot
lists into one dense workspace. A slot is retired when the last pair using it
leaves the window and freed by the next compaction of the map (when no slot
is left), so memory is ``O(history_size * batch non-zeros)``.
"""
import numpy as np

from cpython.ref cimport PyObject
from libc.math cimport isfinite, sqrt
from libc.stdint cimport int32_t, int64_t, uint8_t, uint64_t
from libc.stdlib cimport calloc, free, malloc
from libc.string cimport memcpy

from ._core._count_sketch cimport CountSketch
from ._core._murmurhash cimport _fmix64
from ._core._topk_heap cimport TopKHeap
from ._sgd_fast cimport PASS_DIVERGED, PASS_OK, SGDParams, learning_rate, sample_dloss

cdef extern from *:
    void __builtin_prefetch(const void* address, int rw, int locality) nogil

# A pair is used when r^T s > CURVATURE_EPS * ||r|| * ||s||.
cdef double CURVATURE_EPS = 1e-10
# The intercept's coordinate: slot 0 of the map, position 0 of the active set.
cdef int32_t INTERCEPT_SLOT = 0
# Keys ahead whose map entries are prefetched while mapping a row.
cdef Py_ssize_t MAP_PREFETCH = 16
# Stamps of the slots no pair and no batch uses: still mapped, or free.
cdef int64_t STAMP_RETIRED = -1
cdef int64_t STAMP_FREE = -2


cdef class LBFGSHistory:
    """The last ``history_size`` curvature pairs of online L-BFGS, on their active sets.

    Parameters
    ----------
    history_size : int
        Pairs kept (``tau``).
    n_models : int
        Models sharing the pairs' coordinates (one per class for softmax).
    capacity : int, default=1
        Coordinates one pair can hold (grown by :meth:`reserve`).
    """

    cdef readonly Py_ssize_t history_size, n_models, capacity, n_slots
    cdef readonly Py_ssize_t n_pairs, head
    cdef readonly int64_t n_batches
    cdef Py_ssize_t _n_free
    cdef uint64_t _mask
    cdef dict _arrays
    # Slot map: key -> slot by open addressing (linear probing), entry i at
    # _table[2i] (key) and _table[2i + 1] (slot, -1 where empty). A slot's stamp
    # is the last batch that used it while a stored pair or the current batch
    # uses it; a retired slot (STAMP_RETIRED) keeps its entry, so its key takes
    # it back if it returns, until a compaction frees it (STAMP_FREE).
    cdef int64_t* _table
    cdef int64_t* _slot_key
    cdef int64_t* _slot_stamp
    cdef int32_t* _free
    # Ring of pairs, ``head`` the next one written (the oldest once full).
    cdef int64_t* _pair_stamp
    cdef int32_t* _pair_len
    cdef int32_t* _pair_slots    # (history_size, capacity)
    cdef double* _pair_s         # (history_size, n_models, capacity)
    cdef double* _pair_r
    cdef double* _pair_rho       # (history_size, n_models): 1 / r^T s
    cdef double* _pair_gamma     # r^T s / r^T r
    cdef uint8_t* _pair_valid

    def __init__(self, history_size, n_models, capacity=1):
        if history_size < 1 or n_models < 1 or capacity < 1:
            raise ValueError("history_size, n_models and capacity must be positive")
        self.history_size = history_size
        self.n_models = n_models
        tau, K = history_size, n_models
        arrays = {
            "slot_key": np.zeros(1, dtype=np.int64),
            "slot_stamp": np.zeros(1, dtype=np.int64),
            "pair_stamp": np.full(tau, -1, dtype=np.int64),
            "pair_len": np.zeros(tau, dtype=np.int32),
            "pair_slots": np.zeros((tau, 1), dtype=np.int32),
            "pair_s": np.zeros((tau, K, 1)),
            "pair_r": np.zeros((tau, K, 1)),
            "pair_rho": np.zeros((tau, K)),
            "pair_gamma": np.zeros((tau, K)),
            "pair_valid": np.zeros((tau, K), dtype=np.uint8),
        }
        self._load(arrays, 0, 0, 0)
        self.reserve(capacity)

    cdef _load(self, dict arrays, Py_ssize_t n_pairs, Py_ssize_t head, int64_t n_batches):
        """Take ``arrays`` as the state and rebuild the map and the free list."""
        self._arrays = arrays
        self.n_pairs, self.head, self.n_batches = n_pairs, head, n_batches
        self.capacity = arrays["pair_slots"].shape[1]
        self.n_slots = arrays["slot_key"].shape[0]
        table_size = 1
        while table_size < self.n_slots + self.n_slots // 4:
            table_size *= 2
        arrays["table"] = np.zeros(2 * table_size, dtype=np.int64)
        arrays["free"] = np.zeros(self.n_slots, dtype=np.int32)
        self._mask = table_size - 1
        self._table = _ptr64(arrays["table"])
        self._slot_key = _ptr64(arrays["slot_key"])
        self._slot_stamp = _ptr64(arrays["slot_stamp"])
        self._free = _ptr32(arrays["free"])
        self._pair_stamp = _ptr64(arrays["pair_stamp"])
        self._pair_len = _ptr32(arrays["pair_len"])
        self._pair_slots = _ptr32(arrays["pair_slots"])
        self._pair_s = _ptrf(arrays["pair_s"])
        self._pair_r = _ptrf(arrays["pair_r"])
        self._pair_rho = _ptrf(arrays["pair_rho"])
        self._pair_gamma = _ptrf(arrays["pair_gamma"])
        cdef uint8_t[::1] valid = arrays["pair_valid"].reshape(-1)
        self._pair_valid = &valid[0]
        self._compact()

    def reserve(self, capacity):
        """Make room for pairs of ``capacity`` coordinates (batch non-zeros plus one).

        Parameters
        ----------
        capacity : int
            Coordinates a pair must be able to hold.
        """
        if capacity <= self.capacity and self.n_slots > 1:
            return
        capacity = max(capacity, self.capacity)
        old = self._arrays
        tau, K = self.history_size, self.n_models
        # Twice the live slots (the pairs in the window plus the batch being
        # processed), so a compaction frees at least half of them.
        n_slots = 2 * (tau + 1) * capacity + 1
        arrays = dict(old)
        for name in ("slot_key", "slot_stamp"):
            arrays[name] = np.full(n_slots, STAMP_FREE, dtype=np.int64)
            arrays[name][: old[name].shape[0]] = old[name]
        arrays["slot_stamp"][0] = 0
        arrays["pair_slots"] = np.zeros((tau, capacity), dtype=np.int32)
        arrays["pair_slots"][:, : self.capacity] = old["pair_slots"]
        for name in ("pair_s", "pair_r"):
            arrays[name] = np.zeros((tau, K, capacity))
            arrays[name][:, :, : self.capacity] = old[name]
        self._load(arrays, self.n_pairs, self.head, self.n_batches)

    @property
    def memory_bytes(self):
        """Bytes held by the pairs and the slot map."""
        return int(sum(a.nbytes for a in self._arrays.values()))

    def pairs(self):
        """The stored pairs, oldest first (for inspection and tests).

        Returns
        -------
        pairs : list of dict
            Per pair: ``slots`` (int32, its coordinates; slot 0 is the
            intercept), ``keys`` (int64, the features of those slots; -1 for the
            intercept), ``s`` and ``r`` of shape (n_models, n_coordinates) and
            ``valid`` of shape (n_models,).
        """
        out = []
        a = self._arrays
        for m in range(self.n_pairs):
            idx = (self.head - self.n_pairs + m) % self.history_size
            n = a["pair_len"][idx]
            slots = a["pair_slots"][idx, :n].copy()
            keys = np.where(slots == INTERCEPT_SLOT, -1, a["slot_key"][slots])
            out.append({"slots": slots, "keys": keys, "s": a["pair_s"][idx, :, :n].copy(),
                        "r": a["pair_r"][idx, :, :n].copy(),
                        "valid": a["pair_valid"][idx].astype(bool)})
        return out

    def n_live_slots(self):
        """Slots in use (keys referenced by the stored pairs).

        Returns
        -------
        n : int
        """
        return int((self._arrays["slot_stamp"][1:] >= 0).sum())

    def __reduce__(self):
        state = {name: self._arrays[name].copy() for name in
                 ("slot_key", "slot_stamp", "pair_stamp", "pair_len", "pair_slots", "pair_s",
                  "pair_r", "pair_rho", "pair_gamma", "pair_valid")}
        return (_rebuild_history, (self.history_size, self.n_models, state, self.n_pairs,
                                   self.head, self.n_batches))

    # ------------------------------------------------------------ slot map
    cdef inline uint64_t _probe(self, int64_t key) noexcept nogil:
        """The entry holding ``key``, or the empty entry where it would go."""
        cdef uint64_t i = _fmix64(<uint64_t>key) & self._mask
        while self._table[2 * i + 1] >= 0 and self._table[2 * i] != key:
            i = (i + 1) & self._mask
        return i

    cdef void _compact(self) noexcept nogil:
        """Rebuild the map from the slots in use; every other slot becomes free."""
        cdef Py_ssize_t slot
        cdef uint64_t i
        for i in range(self._mask + 1):
            self._table[2 * i + 1] = -1
        self._n_free = 0
        # Highest slots first, so slots are handed out in increasing order.
        for slot in range(self.n_slots - 1, INTERCEPT_SLOT, -1):
            if self._slot_stamp[slot] >= 0:
                i = self._probe(self._slot_key[slot])
                self._table[2 * i] = self._slot_key[slot]
                self._table[2 * i + 1] = slot
            else:
                self._slot_stamp[slot] = STAMP_FREE
                self._free[self._n_free] = slot
                self._n_free += 1

    cdef inline void prefetch(self, int64_t key) noexcept nogil:
        """Start loading the map entry of ``key`` (looked up a little later)."""
        __builtin_prefetch(&self._table[2 * (_fmix64(<uint64_t>key) & self._mask)], 0, 3)

    cdef inline int32_t slot_of(self, int64_t key) noexcept nogil:
        """The slot of ``key``, taken from the free list if it has none (-1: full)."""
        cdef uint64_t i = self._probe(key)
        cdef int32_t slot
        if self._table[2 * i + 1] >= 0:
            return <int32_t>self._table[2 * i + 1]
        if self._n_free == 0:
            self._compact()
            if self._n_free == 0:
                return -1
            i = self._probe(key)
        self._n_free -= 1
        slot = self._free[self._n_free]
        self._table[2 * i] = key
        self._table[2 * i + 1] = slot
        self._slot_key[slot] = key
        self._slot_stamp[slot] = STAMP_RETIRED
        return slot

    cdef void _retire_head(self) noexcept nogil:
        """Drop the pair at ``head`` (the oldest), retiring the slots only it used."""
        cdef Py_ssize_t l, base = self.head * self.capacity
        cdef int32_t slot
        cdef int64_t stamp = self._pair_stamp[self.head]
        for l in range(self._pair_len[self.head]):
            slot = self._pair_slots[base + l]
            if slot != INTERCEPT_SLOT and self._slot_stamp[slot] == stamp:
                self._slot_stamp[slot] = STAMP_RETIRED

    # ------------------------------------------------------------ two-loop
    cdef double two_loop(self, Py_ssize_t c, const int32_t* active, Py_ssize_t n_active,
                         double* q, const double* g, double* z) noexcept nogil:
        """Algorithm 1 for model ``c``: ``z = H g`` on the active coordinates.

        ``q`` is a zeroed workspace of ``n_slots`` values and is zeroed again
        on return. Returns the initial scaling ``gamma`` (1 without a usable pair).
        """
        cdef Py_ssize_t tau = self.history_size, K = self.n_models, C = self.capacity
        cdef Py_ssize_t m, idx, l, n, j
        cdef double a, b, gamma = 0.0
        cdef double alphas[256]
        cdef const int32_t* sl
        cdef const double* sv
        cdef const double* rv
        for j in range(n_active):
            q[active[j]] = g[j]
        # Newest to oldest: alpha_i = rho_i s_i^T q, q -= alpha_i r_i.
        for m in range(self.n_pairs):
            idx = (self.head - 1 - m + tau) % tau
            if not self._pair_valid[idx * K + c]:
                continue
            n = self._pair_len[idx]
            sl = &self._pair_slots[idx * C]
            sv = &self._pair_s[(idx * K + c) * C]
            rv = &self._pair_r[(idx * K + c) * C]
            a = 0.0
            for l in range(n):
                a += sv[l] * q[sl[l]]
            a *= self._pair_rho[idx * K + c]
            alphas[m] = a
            for l in range(n):
                q[sl[l]] -= a * rv[l]
            if gamma == 0.0:
                gamma = self._pair_gamma[idx * K + c]
        if gamma == 0.0:
            gamma = 1.0
        # Oldest to newest, on u = z / gamma: beta_i = rho_i r_i^T z, z += s_i (alpha_i - beta_i).
        for m in range(self.n_pairs - 1, -1, -1):
            idx = (self.head - 1 - m + tau) % tau
            if not self._pair_valid[idx * K + c]:
                continue
            n = self._pair_len[idx]
            sl = &self._pair_slots[idx * C]
            sv = &self._pair_s[(idx * K + c) * C]
            rv = &self._pair_r[(idx * K + c) * C]
            b = 0.0
            for l in range(n):
                b += rv[l] * q[sl[l]]
            b = (alphas[m] - gamma * self._pair_rho[idx * K + c] * b) / gamma
            for l in range(n):
                q[sl[l]] += b * sv[l]
        for j in range(n_active):
            z[j] = gamma * q[active[j]]
            q[active[j]] = 0.0
        for m in range(self.n_pairs):
            idx = (self.head - 1 - m + tau) % tau
            sl = &self._pair_slots[idx * C]
            for l in range(self._pair_len[idx]):
                q[sl[l]] = 0.0
        return gamma


def _rebuild_history(history_size, n_models, state, n_pairs, head, n_batches):
    cdef LBFGSHistory history = LBFGSHistory.__new__(LBFGSHistory)
    history.history_size = history_size
    history.n_models = n_models
    # Copies: unpickled arrays may be read-only (memmaps) and training writes them.
    history._load({name: np.array(a) for name, a in state.items()}, n_pairs, head, n_batches)
    return history


cdef int64_t* _ptr64(object a):
    cdef int64_t[::1] v = a.reshape(-1)
    return &v[0]


cdef int32_t* _ptr32(object a):
    cdef int32_t[::1] v = a.reshape(-1)
    return &v[0]


cdef double* _ptrf(object a):
    cdef double[::1] v = a.reshape(-1)
    return &v[0]


cdef bint _batch_gradient(SGDParams params, Py_ssize_t K, Py_ssize_t C, Py_ssize_t n_active,
                          Py_ssize_t first_key, const int64_t[::1] indptr,
                          const double[::1] data, const double[::1] y,
                          const double[::1] sample_weight, const int64_t[::1] order,
                          Py_ssize_t start, Py_ssize_t stop, const int32_t* nnz_pos,
                          const double* w, double* g, double* scores, double* dl,
                          Py_ssize_t* mistakes) noexcept nogil:
    """Mean gradient ``g`` (per model, over the active positions) of the batch at ``w``.

    ``w`` and ``g`` hold model ``c``'s coordinate ``j`` at ``c * C + j``;
    position 0 is the intercept when ``first_key`` is 1. Adds the batch's
    misclassifications to ``mistakes`` when it is not NULL. False if a score
    is not finite.
    """
    cdef Py_ssize_t b, c, j, p, q, row, off, n_rows = stop - start
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
        if params.alpha > 0.0:
            for j in range(first_key, n_active):
                g[c * C + j] += params.alpha * w[c * C + j]
    return True


def bear_pass(SGDParams params not None, list sketches, list heaps, double[::1] intercept,
              LBFGSHistory history not None, const int64_t[::1] indptr,
              const int64_t[::1] indices, const double[::1] data, const double[::1] y,
              const double[::1] sample_weight, const int64_t[::1] order, double t,
              Py_ssize_t max_batch_nnz):
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

    Returns
    -------
    t : float
        The clock after the pass.
    status : PassStatus
        ``PASS_DIVERGED`` when a score, weight or direction became non-finite.
    mistakes : int
        Samples misclassified by the model before their batch's update.
    """
    cdef Py_ssize_t K = intercept.shape[0], n_rows = order.shape[0]
    if len(sketches) != K or len(heaps) != K or history.n_models != K:
        raise ValueError("one sketch, one heap and one history model per model are needed")
    for sketch in sketches:
        if not (<CountSketch>sketches[0]).same_configuration(sketch):
            raise ValueError("the sketches of the models must share their configuration")
    if history.capacity < max_batch_nnz + 1:
        raise ValueError("the history's capacity is below the batch size in non-zeros")
    cdef Py_ssize_t C = history.capacity, depth = (<CountSketch>sketches[0]).depth
    cdef Py_ssize_t bs = params.batch_size
    cdef PyObject** sk = <PyObject**>malloc(K * sizeof(PyObject*))
    cdef PyObject** hp = <PyObject**>malloc(K * sizeof(PyObject*))
    cdef int32_t* nnz_pos = <int32_t*>malloc(max(1, max_batch_nnz) * sizeof(int32_t))
    cdef int32_t* active = <int32_t*>malloc(C * sizeof(int32_t))
    cdef int32_t* slot_pos = <int32_t*>malloc(history.n_slots * sizeof(int32_t))
    cdef Py_ssize_t* cells = <Py_ssize_t*>malloc(C * depth * sizeof(Py_ssize_t))
    cdef double* signs = <double*>malloc(C * depth * sizeof(double))
    cdef uint8_t* in_heap = <uint8_t*>malloc(C * K * sizeof(uint8_t))
    cdef double* w = <double*>malloc(C * K * sizeof(double))
    cdef double* g = <double*>malloc(C * K * sizeof(double))
    cdef double* z = <double*>malloc(C * sizeof(double))
    cdef double* q = <double*>calloc(history.n_slots, sizeof(double))
    cdef double* scores = <double*>malloc(K * sizeof(double))
    cdef double* dl = <double*>malloc(K * sizeof(double))
    if not (sk and hp and nnz_pos and active and slot_pos and cells and signs and in_heap
            and w and g and z and q and scores and dl):
        free(sk); free(hp); free(nnz_pos); free(active); free(slot_pos); free(cells)
        free(signs); free(in_heap); free(w); free(g); free(z); free(q); free(scores); free(dl)
        raise MemoryError()
    cdef Py_ssize_t c
    for c in range(K):
        sk[c] = <PyObject*>sketches[c]
        hp[c] = <PyObject*>heaps[c]

    cdef CountSketch sketch0 = sketches[0]
    cdef Py_ssize_t start, stop, b, row, p, j, n_active, off, first_key = params.fit_intercept
    cdef Py_ssize_t idx, mistakes = 0
    cdef int32_t slot
    cdef int64_t stamp, evicted_key
    cdef double eta, delta, hw, evicted_weight, rs, rr, ss
    cdef double* s_out
    cdef double* r_out
    cdef int status = PASS_OK
    with nogil:
        start = 0
        while start < n_rows and status == PASS_OK:
            stop = min(start + bs, n_rows)
            stamp = history.n_batches
            # Active set: a slot per distinct key, a position per slot.
            n_active = 0
            if first_key:
                active[0] = INTERCEPT_SLOT
                n_active = 1
            off = 0
            for b in range(stop - start):
                row = order[start + b]
                for p in range(indptr[row], indptr[row + 1]):
                    if p + MAP_PREFETCH < indptr[row + 1]:
                        history.prefetch(indices[p + MAP_PREFETCH])
                    slot = history.slot_of(indices[p])
                    if slot < 0:
                        status = PASS_DIVERGED  # cannot happen with the reserved capacity
                        break
                    if history._slot_stamp[slot] != stamp:
                        history._slot_stamp[slot] = stamp
                        slot_pos[slot] = n_active
                        active[n_active] = slot
                        n_active += 1
                    nnz_pos[off + p - indptr[row]] = slot_pos[slot]
                off += indptr[row + 1] - indptr[row]
            if status != PASS_OK:
                break

            # Weights: the sketch's estimate for heap members, 0 for the rest.
            for j in range(first_key, n_active):
                sketch0.locate_prefetch(history._slot_key[active[j]], &cells[j * depth],
                                        &signs[j * depth])
            for c in range(K):
                if first_key:
                    w[c * C] = intercept[c]
                for j in range(first_key, n_active):
                    in_heap[j * K + c] = (<TopKHeap>hp[c]).lookup(
                        history._slot_key[active[j]], &hw)
                    w[c * C + j] = ((<CountSketch>sk[c]).estimate_located(
                        &cells[j * depth], &signs[j * depth]) if in_heap[j * K + c] else 0.0)
            if not _batch_gradient(params, K, C, n_active, first_key, indptr, data, y,
                                   sample_weight, order, start, stop, nnz_pos, w, g, scores,
                                   dl, &mistakes):
                status = PASS_DIVERGED
                break

            # The direction and the step, model by model; s is written in place
            # of the oldest pair once the two-loops no longer need it.
            eta = learning_rate(params, t)
            if history.n_pairs == history.history_size:
                history._retire_head()
            idx = history.head
            for c in range(K):
                history.two_loop(c, active, n_active, q, &g[c * C], z)
                s_out = &history._pair_s[(idx * K + c) * C]
                for j in range(n_active):
                    delta = -eta * z[j]
                    if not isfinite(delta):
                        status = PASS_DIVERGED
                    s_out[j] = delta
                    if j < first_key:
                        intercept[c] += delta
                    else:
                        (<CountSketch>sk[c]).add_located(&cells[j * depth], &signs[j * depth],
                                                         delta)
            if status != PASS_OK:
                break

            # The heap takes the sketch's new estimates of the active set; the
            # curvature pair is measured at the weights the step moved to, w + s.
            for c in range(K):
                s_out = &history._pair_s[(idx * K + c) * C]
                for j in range(n_active):
                    w[c * C + j] += s_out[j]
                for j in range(first_key, n_active):
                    hw = (<CountSketch>sk[c]).estimate_located(&cells[j * depth],
                                                               &signs[j * depth])
                    if not isfinite(hw):
                        status = PASS_DIVERGED
                    if in_heap[j * K + c] or (<TopKHeap>hp[c]).accepts(
                            history._slot_key[active[j]], hw):
                        (<TopKHeap>hp[c]).offer(history._slot_key[active[j]], hw,
                                                &evicted_key, &evicted_weight)
            if status != PASS_OK:
                break

            # r = g(new weights) - g(old weights) on the same batch, written in place.
            for c in range(K):
                r_out = &history._pair_r[(idx * K + c) * C]
                for j in range(n_active):
                    r_out[j] = -g[c * C + j]
            if not _batch_gradient(params, K, C, n_active, first_key, indptr, data, y,
                                   sample_weight, order, start, stop, nnz_pos, w, g, scores,
                                   dl, NULL):
                status = PASS_DIVERGED
                break
            for c in range(K):
                s_out = &history._pair_s[(idx * K + c) * C]
                r_out = &history._pair_r[(idx * K + c) * C]
                rs = 0.0
                rr = 0.0
                ss = 0.0
                for j in range(n_active):
                    r_out[j] += g[c * C + j] + params.damping * s_out[j]
                    rs += r_out[j] * s_out[j]
                    rr += r_out[j] * r_out[j]
                    ss += s_out[j] * s_out[j]
                history._pair_valid[idx * K + c] = (
                    isfinite(rs) and isfinite(rr) and isfinite(ss)
                    and rs > CURVATURE_EPS * sqrt(rr) * sqrt(ss))
                history._pair_rho[idx * K + c] = 1.0 / rs if rs != 0.0 else 0.0
                history._pair_gamma[idx * K + c] = rs / rr if rr != 0.0 else 0.0
            memcpy(&history._pair_slots[idx * C], active, n_active * sizeof(int32_t))
            history._pair_len[idx] = n_active
            history._pair_stamp[idx] = stamp
            history.head = (idx + 1) % history.history_size
            history.n_pairs = min(history.n_pairs + 1, history.history_size)
            history.n_batches += 1
            t += stop - start
            start = stop
    free(sk); free(hp); free(nnz_pos); free(active); free(slot_pos); free(cells)
    free(signs); free(in_heap); free(w); free(g); free(z); free(q); free(scores); free(dl)
    return t, status, mistakes
