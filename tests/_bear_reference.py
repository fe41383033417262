"""Dense NumPy BEAR (online L-BFGS on mini-batch active sets) for exact comparisons.

It follows the kernel's rules (see ``sklearn_sketch.bear``) with a dense weight
vector in place of the sketch and heap, so without collisions and with a heap
that holds every feature the two must agree to float32 precision. Like the
kernel, it keeps the pairs' ``s`` and ``r`` in float32: a step is rounded to
float32 before it is taken, ``r`` is the gradients' difference rounded once,
and adding the damping rounds it again.
"""
import numpy as np
from scipy.special import softmax


#: BearClassifier's bound on how far a step moves a score of its batch.
CLASSIFIER_MARGIN_TRUST = 10.0


def _scores(X, W, b):
    return X @ W.T + b


def _dloss(loss, scores, y):
    """Per-sample loss derivatives, shape (n, K)."""
    if loss == "squared_error":
        return np.clip(scores - y[:, None], -1e12, 1e12)
    if scores.shape[1] == 1:
        z = scores[:, 0] * y
        with np.errstate(over="ignore"):  # np.where computes the branches it drops too
            d = np.where(z > 18, -y * np.exp(-np.minimum(z, 700)),
                         np.where(z < -18, -y, -y / (np.exp(np.clip(z, -700, 700)) + 1.0)))
        return d[:, None]
    p = softmax(scores, axis=1)
    p[np.arange(len(y)), y.astype(int)] -= 1.0
    return p


def _gradient(loss, X, y, sw, W, b, active, alpha):
    """Mean gradient on the active features and the intercept: (gW (K, |A|), gb (K,))."""
    d = _dloss(loss, _scores(X, W, b), y) * sw[:, None]
    n = X.shape[0]
    gW = (d.T @ X[:, active]) / n + alpha * W[:, active]
    return gW, d.sum(axis=0) / n


def dense_bear(X, y, *, loss, n_models=1, eta0=1.0, batch_size=4, history_size=5, alpha=0.0,
               fit_intercept=True, sample_weight=None, order=None, n_passes=1,
               damping=0.0, eps=1e-10, normalized=False, adaptive=False, batch_nnz_cap=None,
               margin_trust=None, intercept_start=None):
    """Run BEAR with dense weights; returns ``(W (K, p), b (K,), pairs)``.

    ``normalized``: the 'normalized' schedule, where a model without a usable
    pair steps by ``eta0 / mean ||x||**2`` (over the batch) and ``damping`` is
    multiplied by the same mean, and the intercept is a feature of value
    ``unit``, the mean ``|x|`` of the batch's non-zeros: its gradient is
    multiplied by ``unit``, its coordinate of ``s`` and ``r`` is in those units
    and it moves by ``unit`` times its step.

    ``adaptive``: the 'adaptive' schedule, 'normalized' in the variables
    ``u_j = w_j / scale_j``, ``scale_j = Q_j ** -1/4`` and ``Q_j`` feature ``j``'s
    sum of squared values up to this batch (a float32 sum, as the kernel's
    table): gradients are ``scale`` times those in ``w``, the pairs are in
    ``u``, and a step ``s`` moves the weights by ``scale * s``.

    A step that goes past the minimum of the batch's loss along it (``(g +
    g')^T s > 0``, ``g'`` the gradient after the step) is cut to the secant
    minimum ``theta s``, ``theta = -g^T s / (g' - g)^T s``, and ``r`` to ``theta
    (g' - g)``.

    ``margin_trust`` (0: none; None: the estimators' defaults, 10 for the log
    loss and none for the squared error): a step that would move a score of
    the batch's rows by more than this is scaled down until none moves
    further, before it is taken (and before the secant check).

    ``batch_nnz_cap``: a batch also ends before the row that would take its
    non-zeros past this many (as under a memory budget). A batch of fewer than
    ``batch_size`` rows (capped, or the pass's last) steps by its share of a full
    batch's step, ``eta0 * rows / batch_size``. A row that alone holds more
    non-zeros than the cap is a batch of its own with a first-order step (the
    gradient, as without a usable pair, cut back as every step is) and stores
    no pair.

    ``intercept_start`` (None: as ``BearRegressor`` starts, the weighted mean of
    ``y`` for the squared error with ``fit_intercept``, else 0): the intercepts'
    first value.

    ``y`` is encoded as the kernel sees it: a real target, +1/-1, or class index.
    ``pairs`` is the final window: a list of (active features, s, r, valid) with
    ``s`` and ``r`` of shape (K, n_coordinates) and the intercept coordinate first.
    """
    if margin_trust is None:
        margin_trust = 0.0 if loss == "squared_error" else CLASSIFIER_MARGIN_TRUST
    X = np.asarray(X, dtype=np.float64)
    n, p = X.shape
    K = n_models
    W = np.zeros((K, p))
    sw = np.ones(n) if sample_weight is None else np.asarray(sample_weight, dtype=float)
    if intercept_start is None:
        intercept_start = (np.average(y, weights=sw)
                           if loss == "squared_error" and fit_intercept and sw.sum() > 0 else 0.0)
    b = np.full(K, float(intercept_start))
    order = np.arange(n) if order is None else np.asarray(order)
    window = []  # (active, s (K, m), r (K, m), valid (K,)), oldest first
    squares = np.zeros(p, dtype=np.float32)  # 'adaptive': each feature's sum of x**2
    for _ in range(n_passes):
        for rows in _batches(X, order, batch_size, batch_nnz_cap):
            Xb, yb, swb = X[rows], y[rows], sw[rows]
            active = np.flatnonzero((Xb != 0).any(axis=0))
            first_order = batch_nnz_cap is not None and active.size > batch_nnz_cap
            scale = np.ones(active.size)
            if adaptive:
                squares[active] += (Xb[:, active] ** 2).sum(axis=0).astype(np.float32)
                scale = squares[active].astype(np.float64) ** -0.25
            # 'normalized': the batch's metric, and the intercept's value as a feature
            # ('adaptive': of the values in u).
            Xu = Xb[:, active] * scale
            norm2, unit = 1.0, 1.0
            if (normalized or adaptive) and (Xu != 0).any():
                norm2 = (Xu ** 2).sum() / len(rows)
                unit = np.abs(Xu[Xu != 0]).mean()
            gW, gb = _gradient(loss, Xb, yb, swb, W, b, active, alpha)
            gW, gb = gW * scale, gb * unit
            step_W = np.zeros((K, active.size))
            step_b = np.zeros(K)
            for c in range(K):
                g = _vector(gW[c], gb[c], active, fit_intercept)
                z = g if first_order else _two_loop(g, active, c, window, fit_intercept)
                has_pair = not first_order and any(v[c] for _, _, _, v in window)
                eta = eta0 * (len(rows) / min(batch_size, n))
                step = _f32(-eta * z / (1.0 if has_pair else norm2))
                if fit_intercept:
                    step_b[c], step_W[c] = step[0], step[1:]
                else:
                    step_W[c] = step
            moved = np.abs(Xu @ step_W.T + unit * step_b).max()
            if not first_order and margin_trust > 0 and moved > margin_trust:
                step_W, step_b = _f32(margin_trust / moved * step_W), _f32(margin_trust / moved * step_b)
            W[:, active] += scale * step_W
            b += unit * step_b
            gW2, gb2 = _gradient(loss, Xb, yb, swb, W, b, active, alpha)
            gW2, gb2 = gW2 * scale, gb2 * unit
            s = np.stack([_vector(step_W[c], step_b[c], active, fit_intercept)
                          for c in range(K)])
            g_old = np.stack([_vector(gW[c], gb[c], active, fit_intercept) for c in range(K)])
            g_new = np.stack([_vector(gW2[c], gb2[c], active, fit_intercept) for c in range(K)])
            # Past the minimum along s ((g + g')^T s > 0): cut to the secant minimum.
            gs, gps = (g_old * s).sum(), (g_new * s).sum()
            theta = -gs / (gps - gs) if gs < 0 and gs + gps > 0 else 1.0
            r = _f32(theta * (g_new - g_old))
            if theta != 1.0:
                cut = _f32(theta * s)
                if fit_intercept:
                    b += unit * (cut[:, 0] - s[:, 0])
                W[:, active] += scale * (cut[:, fit_intercept:] - s[:, fit_intercept:])
                s = cut
            if first_order:
                continue
            r = _f32(r + damping * norm2 * s)
            rs = (r * s).sum(axis=1)
            valid = rs > eps * np.linalg.norm(r, axis=1) * np.linalg.norm(s, axis=1)
            window.append((active, s, r, valid))
            window = window[-history_size:]
    return W, b, window


def _batches(X, order, batch_size, batch_nnz_cap):
    """The rows of each batch: ``batch_size`` rows, or fewer to stay within the cap."""
    row_nnz = np.count_nonzero(X, axis=1)
    start = 0
    while start < len(order):
        stop = min(start + batch_size, len(order))
        if batch_nnz_cap is not None:
            total = row_nnz[order[start]]
            for i in range(start + 1, stop):
                if total + row_nnz[order[i]] > batch_nnz_cap:
                    stop = i
                    break
                total += row_nnz[order[i]]
        yield order[start:stop]
        start = stop


def _f32(a):
    """``a`` rounded to float32, in float64 (how the kernel stores a pair)."""
    return np.asarray(a, dtype=np.float32).astype(np.float64)


def _vector(w_active, w_intercept, active, fit_intercept):
    return np.concatenate([[w_intercept], w_active]) if fit_intercept else np.asarray(w_active)


def _two_loop(g, active, c, window, fit_intercept):
    """Algorithm 1 over the valid pairs of model ``c``, on the union of supports."""
    keys = _keys_of(active, fit_intercept)
    pairs = [(_keys_of(a, fit_intercept), s[c], r[c]) for a, s, r, v in window if v[c]]
    if not pairs:
        return g.copy()
    union = sorted(set(keys).union(*[set(k) for k, _, _ in pairs]))
    pos = {k: i for i, k in enumerate(union)}

    def dense(k, v):
        out = np.zeros(len(union))
        out[[pos[x] for x in k]] = v
        return out

    S = [dense(k, s) for k, s, _ in pairs]
    R = [dense(k, r) for k, _, r in pairs]
    q = dense(keys, g)
    alphas = []
    for Si, Ri in zip(reversed(S), reversed(R)):
        a = (Si @ q) / (Ri @ Si)
        alphas.append(a)
        q = q - a * Ri
    alphas.reverse()
    gamma = (S[-1] @ R[-1]) / (R[-1] @ R[-1])
    z = gamma * q
    for Si, Ri, a in zip(S, R, alphas):
        beta = (Ri @ z) / (Ri @ Si)
        z = z + Si * (a - beta)
    return z[[pos[k] for k in keys]]


def _keys_of(active, fit_intercept):
    return ([-1] if fit_intercept else []) + list(active)
