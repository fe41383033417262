"""The Weight-Median Sketch and its Active-Set variant (Tai et al., SIGMOD 2018).

``WMSketchClassifier`` (Algorithm 1) runs online gradient descent on a sketched
classifier ``z`` through the scaled Count-Sketch projection ``R = A / sqrt(s)``;
a weight is recovered as the median over rows of ``sqrt(s) * sign * z``, and a
heap passively tracks the largest. ``AWMSketchClassifier`` (Algorithm 2) keeps
the heaviest weights exactly in the heap and only the tail in the sketch.
"""
import re
from numbers import Integral

from sklearn.base import ClassifierMixin
from sklearn.utils._param_validation import Interval, StrOptions

from ._base import (
    _CLASSIFIER_LOSSES,
    _BaseSketchSGD,
    _init_sgd_params,
    _SketchClassifierMixin,
    _SketchSelectorMixin,
)
from ._sgd_fast import WeightStore

_UNITS = {"": 1, "B": 1, "KB": 2**10, "KIB": 2**10, "MB": 2**20, "MIB": 2**20,
          "GB": 2**30, "GIB": 2**30}
# The paper's cost model: 4 bytes per feature identifier, weight or auxiliary value.
_BYTES_PER_VALUE = 4


def parse_memory_budget(budget):
    """Bytes of a memory budget given as an int or a string such as ``"8KB"``.

    Units are binary, as in the paper's budgets (``"2KB"`` is 2048 bytes).

    Parameters
    ----------
    budget : int or str
        Bytes, or a number followed by B, KB, MB or GB (KiB, MiB, GiB accepted).

    Returns
    -------
    n_bytes : int

    Examples
    --------
    >>> from sklearn_sketch.weight_median import parse_memory_budget
    >>> parse_memory_budget("8KB"), parse_memory_budget("1.5 MiB"), parse_memory_budget(4096)
    (8192, 1572864, 4096)
    """
    if isinstance(budget, bool):
        raise TypeError("memory_budget must be a number of bytes or a string like '8KB'")
    if isinstance(budget, Integral):
        if budget < 1:
            raise ValueError(f"memory_budget must be positive, got {budget}")
        return int(budget)
    match = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([A-Za-z]*)\s*", str(budget))
    if not match or match.group(2).upper() not in _UNITS:
        raise ValueError(
            f"memory_budget must be a number of bytes or a string like '8KB' or '2MB', "
            f"got {budget!r}")
    return int(float(match.group(1)) * _UNITS[match.group(2).upper()])


def resolve_budget(budget, n_features_to_select, sketch_width, sketch_depth, default_depth):
    """Heap capacity and sketch shape from a budget, under the paper's cost model.

    Half of the budget goes to the heap (an identifier and a weight per entry),
    the rest to the sketch (one value per cell); any explicit value overrides.

    Returns
    -------
    width, depth, capacity : int
    """
    if budget is None:
        if None in (n_features_to_select, sketch_width, sketch_depth):
            raise ValueError("give memory_budget, or all of n_features_to_select, "
                             "sketch_width and sketch_depth")
        return sketch_width, sketch_depth, n_features_to_select
    n_bytes = parse_memory_budget(budget)
    capacity = n_features_to_select or n_bytes // (4 * _BYTES_PER_VALUE)
    depth = sketch_depth or default_depth
    width = sketch_width or (n_bytes - 2 * _BYTES_PER_VALUE * capacity) // (
        _BYTES_PER_VALUE * depth)
    if capacity < 1 or width < 1:
        raise ValueError(
            f"memory_budget={budget!r} ({n_bytes} bytes) leaves no room for a heap of "
            f"{capacity} entries and a sketch of depth {depth}: give a larger budget")
    return int(width), int(depth), int(capacity)


_WM_PARAMS_DOC = """
    memory_budget : int or str, default='64KB'
        Model size under the paper's cost model (4 bytes per identifier, weight
        or cell): half to the heap, half to the sketch. ``None`` requires the
        three values below.
    n_features_to_select : int, default=None
        Heap capacity (``k``): overrides the budget's share.
    sketch_width : int, default=None
        Cells per sketch row: overrides the budget's share.
    sketch_depth : int, default=None
        Sketch rows ``s``: overrides the default ({default_depth}).
    loss : {{'log_loss', 'hinge', 'modified_huber'}}, default='log_loss'
        Loss minimized (the paper uses the logistic loss).
    learning_rate : {{'normalized', 'invscaling', 'constant', 'optimal'}}, \
default='normalized'
        Step size schedule. 'normalized' steps by ``eta0 / ||x||**2`` (the
        intercept by ``eta0 / (nnz(x) + 1)``): an update moves the sample's
        margin by the same amount whatever the scale of the features, so the
        default needs no tuning (the paper's 'invscaling' with its ``eta0=0.1``
        scored 0.21 on L2-normalized 20 Newsgroups). The others:
        ``eta0 / t**power_t``, ``eta0``, or ``1 / (alpha * (t0 + t))``.
    eta0 : float, default=1.0
        Step size (the first one for 'invscaling'; the paper's ``eta_0``).
    power_t : float, default=0.5
        Exponent of the 'invscaling' schedule.
    alpha : float, default=1e-6
        L2 penalty ``lambda``, applied through the global scale in O(1) per update.
    fit_intercept : bool, default=True
        Learn an (unsketched) intercept.
    batch_size : int, default=1
        Samples per update.
    max_iter : int, default=5
        Passes over the data in :meth:`fit` (the paper makes one).
    shuffle : bool, default=True
        Shuffle the samples before each pass.
    random_state : int, RandomState instance or None, default=None
        Seeds the hashes and the shuffling.
    warm_start : bool, default=False
        Continue from the previous model in :meth:`fit`.
    verbose : int, default=0
        Print a line per pass."""

_WM_ATTRIBUTES_DOC = """
    classes_ : ndarray of shape (n_classes,)
        Class labels.
    coef_ : scipy.sparse.csr_matrix of shape (n_models, n_features_in_)
        The heap weights (one model per class for multi-class, else one).
    intercept_ : ndarray of shape (n_models,)
        Intercepts.
    selected_features_ : SelectedFeatures
        Keys and weights of the selected features, most important first.
    sketches_, heaps_ : list of CountSketch, list of TopKHeap
        One of each per model.
    memory_bytes_ : int
        Bytes actually held (float32 cells, 8-byte keys and weights, the heap's
        key map): independent of ``n_features`` and ``n_samples``.
    online_error_rate_ : float
        Fraction of the last pass's samples misclassified just before their update.
    n_features_in_ : int
        Number of columns seen in fit.
    n_iter_ : int
        Passes run by the last call to fit or partial_fit.
    t_ : float
        Samples seen plus one."""

# Estimators sized by memory_budget (here and in baselines.py).
_BUDGET_CONSTRAINTS = {
    **_BaseSketchSGD._parameter_constraints,
    "memory_budget": [Interval(Integral, 16, None, closed="left"), str, None],
    "n_features_to_select": [Interval(Integral, 1, None, closed="left"), None],
    "loss": [StrOptions(_CLASSIFIER_LOSSES)],
}
_WM_CONSTRAINTS = {
    **_BUDGET_CONSTRAINTS,
    "sketch_width": [Interval(Integral, 1, 2**31, closed="both"), None],
    "sketch_depth": [Interval(Integral, 1, 64, closed="both"), None],
}


class _WeightMedianBase(_SketchSelectorMixin, ClassifierMixin, _SketchClassifierMixin,
                        _BaseSketchSGD):
    _default_depth = 1
    _parameter_constraints = _WM_CONSTRAINTS

    def __init__(self, memory_budget="64KB", *, n_features_to_select=None, sketch_width=None,
                 sketch_depth=None, loss="log_loss", learning_rate="normalized", eta0=1.0,
                 power_t=0.5, alpha=1e-6, fit_intercept=True, batch_size=1, max_iter=5,
                 shuffle=True, random_state=None, warm_start=False, verbose=0):
        self.memory_budget = memory_budget
        self.n_features_to_select = n_features_to_select
        self.sketch_width = sketch_width
        self.sketch_depth = sketch_depth
        self.loss = loss
        _init_sgd_params(self, learning_rate, eta0, power_t, alpha, fit_intercept, batch_size,
                         max_iter, shuffle, random_state, warm_start, verbose)

    def _model_shape(self):
        return resolve_budget(self.memory_budget, self.n_features_to_select,
                              self.sketch_width, self.sketch_depth, self._default_depth)


class WMSketchClassifier(_WeightMedianBase):
    __doc__ = f"""Weight-Median Sketch: online learning on a Count-Sketch of the weights.

    Online gradient descent on the sketched classifier ``z`` with the scaled
    Count-Sketch projection ``R = A / sqrt(s)``: the prediction is
    ``z^T R x``, a step adds ``-eta * dloss * R x``, and the weight of feature
    ``i`` is recovered as the median over rows of ``sqrt(s) * sign_j(i) * z``.
    L2 is a global scale, so an update costs ``O(s * nnz(x))``. A heap keeps the
    features of largest recovered weight: they are the selected features.

    Parameters
    ----------{_WM_PARAMS_DOC.format(default_depth=3)}

    Attributes
    ----------{_WM_ATTRIBUTES_DOC}

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_sketch import WMSketchClassifier
    >>> rng = np.random.RandomState(0)
    >>> X = rng.normal(size=(2000, 100))
    >>> y = (X[:, 3] - 2 * X[:, 17] > 0).astype(int)
    >>> clf = WMSketchClassifier("4KB", n_features_to_select=2, random_state=0).fit(X, y)
    >>> clf.get_support(indices=True)
    array([ 3, 17])
    """

    _store = WeightStore.WEIGHT_MEDIAN
    _default_depth = 3

    def _prediction_reads(self):
        return self.sketches_, [], True


class AWMSketchClassifier(_WeightMedianBase):
    __doc__ = f"""Active-Set Weight-Median Sketch: exact heavy weights, sketched tail.

    The heap holds the heaviest weights exactly and they are not in the sketch;
    predictions read the heap for its features and the sketch (``z^T R x``) for
    the others. After a step, a feature outside the heap enters it when its
    updated estimate beats the heap minimum, and the evicted weight is written
    back into the sketch. The paper's best configuration (half the memory to the
    heap, a depth-1 sketch) is what ``memory_budget`` alone gives.

    Parameters
    ----------{_WM_PARAMS_DOC.format(default_depth=1)}

    Attributes
    ----------{_WM_ATTRIBUTES_DOC}

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_sketch import AWMSketchClassifier
    >>> rng = np.random.RandomState(0)
    >>> X = rng.normal(size=(2000, 100))
    >>> y = (X[:, 3] - 2 * X[:, 17] > 0).astype(int)
    >>> clf = AWMSketchClassifier("2KB", random_state=0).fit(X, y)
    >>> clf.heaps_[0].capacity, clf.sketches_[0].width, clf.sketches_[0].depth
    (128, 256, 1)
    >>> set(clf.selected_features_.keys[:2].tolist()) == {{3, 17}}
    True
    """

    _store = WeightStore.ACTIVE_SET

    def _prediction_reads(self):
        return self.sketches_, self.heaps_, True
