"""The Weight-Median Sketch and its Active-Set variant (Tai et al., SIGMOD 2018).

``WMSketchClassifier`` (Algorithm 1) runs online gradient descent on a sketched
classifier ``z`` through the scaled Count-Sketch projection ``R = A / sqrt(s)``;
a weight is recovered as the median over rows of ``sqrt(s) * sign * z``, and a
heap passively tracks the largest. ``AWMSketchClassifier`` (Algorithm 2) keeps
the heaviest weights exactly in the heap and only the tail in the sketch.
"""
from numbers import Integral

from sklearn.base import ClassifierMixin
from sklearn.utils._param_validation import Interval, StrOptions

from ._base import (
    N_JOBS_DOC,
    _CLASSIFIER_LOSSES,
    _BaseSketchSGD,
    _budget_less,
    _init_sgd_params,
    _SketchClassifierMixin,
    _SketchSelectorMixin,
    budget_shape,
    parse_memory_budget,
)
from . import _stores
from .mission import (
    AUTO_OTHER_SCHEDULE,
    AUTO_SCHEDULE_NOTE,
    ETA0_AUTO_NOTE,
    LARGER_STEP_NOTE,
    NORM_FLOOR_DOC,
    STANDARDIZE_ATTRIBUTES_DOC,
    STANDARDIZE_NOTE,
    _CAPACITY_OR_BUDGET_CONSTRAINTS,
)

__all__ = ["AWMSketchClassifier", "WMSketchClassifier", "parse_memory_budget",
           "resolve_budget"]


def resolve_budget(budget, n_features_to_select, sketch_width, sketch_depth, default_depth,
                   n_models=1, heap_share=0.05, name_bytes=0):
    """Sketch shape and heap capacity of ``n_models`` models in ``budget`` real bytes.

    See :func:`sklearn_sketch._base.budget_shape`; any explicit value
    overrides its share, and without a budget all three are required.

    Returns
    -------
    width, depth, capacity : int
    """
    if budget is None:
        if None in (n_features_to_select, sketch_width, sketch_depth):
            raise ValueError("give memory_budget, or all of n_features_to_select, "
                             "sketch_width and sketch_depth")
        return sketch_width, sketch_depth, n_features_to_select
    return budget_shape(budget, n_models, heap_share=heap_share,
                        depth=sketch_depth or default_depth, capacity=n_features_to_select,
                        width=sketch_width, name_bytes=name_bytes)


_WM_PARAMS_DOC = """
    memory_budget : int or str, default='4MB'
        Bytes of the whole fitted estimator, all classes together (the
        default is about MissionClassifier's default size)
        (``memory_bytes_ <= memory_budget``): after the intercepts, each
        model (one per class for multi-class) gets an equal part, split
        between its heap (about 22.7 bytes an entry) and its sketch (4 bytes
        a cell): {heap_share}. The chosen shape is in ``sketch_width_``,
        ``sketch_depth_`` and ``n_features_to_select_``. ``None`` requires
        the three values below.
    n_features_to_select : int, default=None
        Heap capacity (``k``): overrides the budget's share.
    sketch_width : int, default=None
        Cells per sketch row: overrides the budget's share.
    sketch_depth : int, default=None
        Sketch rows ``s``: overrides the default ({default_depth}).
    loss : {{'log_loss', 'hinge', 'modified_huber'}}, default='log_loss'
        Loss minimized (the paper uses the logistic loss).
    learning_rate : {{'auto', 'normalized', 'frequency', 'adaptive', 'invscaling', \
'constant', 'optimal'}}, default='auto'
        Step size schedule. {auto_schedule}
        'normalized' steps by
        ``eta0 / max(||x||**2, norm_floor_)`` (the intercept by
        ``eta0 / (nnz(x) + 1)``; ``norm_floor_``, the median ``||x||**2`` of the
        first data's rows, keeps a row near the origin from throwing the
        weights far): an update moves the sample's margin by the same amount
        whatever the scale of the features, so the default needs no tuning
        (the paper's 'invscaling' with its ``eta0=0.1`` scored 0.21 on
        L2-normalized 20 Newsgroups).{standardize_note} 'frequency' also scales
        each feature's share by ``1 / sqrt(its count so far)``, so rare
        features learn faster (see :class:`~sklearn_sketch.MissionClassifier`;
        one pass over 20 Newsgroups words as Vowpal Wabbit text from the
        command line: the WM-Sketch 0.702 -> 0.808, the AWM-Sketch 0.711 ->
        0.808); 'adaptive' by ``1 / sqrt(its squared gradients so far)``
        (AdaGrad's step; see :class:`~sklearn_sketch.MissionClassifier`). The
        others:
        ``eta0 / t**power_t``, ``eta0``, or ``1 / (alpha * (t0 + t))``.
    eta0 : float or 'auto', default={default_eta0}
        Step size (the first one for 'invscaling'; the paper's ``eta_0``).
        {eta0_note} {eta0_auto}
    power_t : float, default=0.5
        Exponent of the 'invscaling' schedule.
    alpha : float, default=0.0
        L2 penalty ``lambda``, applied through the global scale in O(1) per
        update. No penalty by default, as in feature hashing, MISSION and
        BEAR (the paper picks lambda per data set, from 1e-6 to 1e-3): on DNA
        reads, 100,000 a strain, ``alpha=1e-6`` cost both sketches 0.7 points
        at 1MB, and was at most 0.06 points better anywhere in the accuracy
        benchmark (DNA and 20 Newsgroups, 64KB to 64MB).
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
    coef_ : scipy.sparse.csr_matrix of shape (n_models, n_features)
        The heap weights (one model per class for multi-class, else one).
    intercept_ : ndarray of shape (n_models,)
        Intercepts.
    learning_rate_ : str
        The schedule trained under: ``learning_rate``, or for 'auto' the one
        the first fit chose ('normalized' or 'frequency').
    selected_features_ : SelectedFeatures
        Keys and weights of the selected features, most important first.
    sketches_, heaps_ : list of CountSketch, list of TopKHeap
        One of each per model.
    memory_bytes_ : int
        Bytes held by everything that grows with the model: sketches (float32
        cells), heaps (keys, weights, key map), intercepts and kept feature
        names; independent of ``n_features`` and ``n_samples``.
    sketch_width_, sketch_depth_, n_features_to_select_ : int
        The shape chosen (by the budget or the explicit values).
    online_error_rate_ : float
        Fraction of the last pass's samples misclassified just before their update.
    online_log_loss_ : float
        Binary ``loss='log_loss'`` models: the last pass's mean log loss just
        before each update; below the labels' entropy when the model learned
        something, though it errs about as often as predicting the majority.
    n_features_in_ : int
        Number of columns seen in fit.
    n_iter_ : int
        Passes run by the last call to fit or partial_fit.
    t_ : float
        Samples seen plus one."""

# Estimators sized by memory_budget (here and in baselines.py).
_BUDGET_CONSTRAINTS = {
    **_BaseSketchSGD._parameter_constraints, **_CAPACITY_OR_BUDGET_CONSTRAINTS,
    "loss": [StrOptions(_CLASSIFIER_LOSSES)],
}
_WM_CONSTRAINTS = {
    **_BUDGET_CONSTRAINTS,
    "sketch_width": [Interval(Integral, 1, 2**31, closed="both"), None],
    "sketch_depth": [Interval(Integral, 1, 64, closed="both"), None],
}
_AWM_CONSTRAINTS = {**_WM_CONSTRAINTS, "heap_order": [StrOptions({"magnitude", "value"})]}

_HEAP_ORDER_DOC = """
    heap_order : {'magnitude', 'value'}, default='magnitude'
        Which weights the heap keeps exactly: the largest ``|weight|``, or the
        largest weights. 'value' keeps the features of class 1 of a binary
        model: negative weights stay in the sketch, so the whole heap holds
        features for that class, and selection follows. (On the flights'
        outlier explanation it retrieved no more of the high-risk combinations
        than 'magnitude', 0.080 against 0.093 of them, nor more of the top PMI
        pairs of 20 Newsgroups with StreamingPMI's shares at 0.5, 0.198 against
        0.278: the explainers keep 'magnitude'.)"""


# Measured with benchmarks/bench_accuracy_memory.py (5 epochs, 256KB to 16MB): at
# equal real bytes, sketch cells predict better than more heap entries. The hundredth
# against a twentieth: the benchmark's data sets (20,000 DNA reads a strain), one fit
# each at 64KB, 256KB, 1MB and 4MB, defaults otherwise.
_WM_SHARE = ("a hundredth to the heap, which only lists the top\n"
             "        features (predictions and weight estimates read the sketch\n"
             "        alone), the rest to the sketch: every heap byte is sketch width\n"
             "        lost. Against a twentieth, a hundredth scored better in 9 of 12\n"
             "        fits (up to 1.1 points) and at most 0.2 under in the others (64KB\n"
             "        to 4MB on DNA 12-mers and on 20 Newsgroups as tokens and as\n"
             "        L2-normalized hashed rows); a quarter scored up to 4 points\n"
             "        lower. Give ``n_features_to_select`` for a longer list of\n"
             "        features")
_AWM_SHARE = ("a twentieth to the heap, the rest to the sketch. The\n"
              "        WM-Sketch paper gives half to the heap at 8 bytes an entry; at\n"
              "        22.7 real bytes an entry half scored 10 points under feature\n"
              "        hashing on DNA 12-mers at 256KB, a twentieth 0.8 under, and 0.2\n"
              "        to 2 points over it on 20 Newsgroups")


# Depth 2 against 3 at equal bytes: accuracy from benchmarks/bench_accuracy_memory.py
# (DNA, 20 Newsgroups tokens and hashed, 64KB to 16MB); recovery as in
# benchmarks/reproduce_wm_sketch.py (RelErr of the top 128 against the uncompressed
# model trained the same way, normalized eta0=1, 3 seeds).
_WM_DEPTH = ("3 under a budget. At equal bytes depth\n"
             "        2 has half again the width and predicted from 1.0 point worse\n"
             "        (64KB, L2-normalized 20 Newsgroups) to 0.5 better (64KB, token\n"
             "        counts; 0.4 at 256KB on DNA reads; means of 3 seeds), but\n"
             "        recovered the 128 largest weights worse at every budget:\n"
             "        relative L2 error 1.22/1.10/1.03 against 1.12/1.01/1.00 for\n"
             "        depth 3 at 64KB/256KB/1MB (20 Newsgroups TF-IDF, comp.* and\n"
             "        sci.* against the rest, 5 epochs). The WM-Sketch names its\n"
             "        features; for accuracy alone AWMSketchClassifier is the better\n"
             "        choice")


# AWM: benchmarks/bench_accuracy_memory.py at 4MB, one epoch.
_WM_ETA0 = "'auto' starts from 1, as feature hashing's and AWM's."
_AWM_ETA0 = ("With 'normalized', 3 scores up to a point better on DNA and 20\n"
             "        Newsgroups but worse on small dense tasks (scikit-learn's check\n"
             "        that a classifier fits 3 blobs: 0.913 against 0.922, 20 seeds;\n"
             "        before the step's floor it failed that check), so 'auto' starts\n"
             "        from 1.")


class _WeightMedianBase(_SketchSelectorMixin, ClassifierMixin, _SketchClassifierMixin,
                        _BaseSketchSGD):
    _default_depth = 1
    _parameter_constraints = _WM_CONSTRAINTS
    _AUTO_ETA0 = (1.0, 3.0, 0.3, 0.1, 0.03)
    _AUTO_OTHER_SCHEDULE = AUTO_OTHER_SCHEDULE
    _budget_heap_share = 0.05

    def __init__(self, memory_budget="4MB", *, n_features_to_select=None, sketch_width=None,
                 sketch_depth=None, loss="log_loss", learning_rate="auto", eta0="auto",
                 power_t=0.5, alpha=0.0, fit_intercept=True, batch_size=1, max_iter=5,
                 shuffle=True, random_state=None, warm_start=False, verbose=0, n_jobs=None):
        self.n_jobs = n_jobs
        self.memory_budget = memory_budget
        self.n_features_to_select = n_features_to_select
        self.sketch_width = sketch_width
        self.sketch_depth = sketch_depth
        self.loss = loss
        _init_sgd_params(self, learning_rate, eta0, power_t, alpha, fit_intercept, batch_size,
                         max_iter, shuffle, random_state, warm_start, verbose)

    def _model_shape(self, n_models=1, reserved=0):
        budget = None if self.memory_budget is None else _budget_less(self.memory_budget,
                                                                      reserved)
        return resolve_budget(budget, self.n_features_to_select,
                              self.sketch_width, self.sketch_depth, self._default_depth,
                              n_models, self._budget_heap_share,
                              self._name_bytes_per_entry())


class WMSketchClassifier(_WeightMedianBase):
    __doc__ = f"""Weight-Median Sketch: online learning on a Count-Sketch of the weights.

    Online gradient descent on the sketched classifier ``z`` with the scaled
    Count-Sketch projection ``R = A / sqrt(s)``: the prediction is
    ``z^T R x``, a step adds ``-eta * dloss * R x``, and the weight of feature
    ``i`` is recovered as the median over rows of ``sqrt(s) * sign_j(i) * z``.
    L2 is a global scale, so an update costs ``O(s * nnz(x))``. A heap keeps the
    features of largest recovered weight: they are the selected features.

    Parameters
    ----------{_WM_PARAMS_DOC.format(standardize_note=STANDARDIZE_NOTE, default_depth=_WM_DEPTH, heap_share=_WM_SHARE, default_eta0="'auto'", eta0_note=_WM_ETA0, eta0_auto=ETA0_AUTO_NOTE + LARGER_STEP_NOTE, auto_schedule=AUTO_SCHEDULE_NOTE)}{N_JOBS_DOC}

    Attributes
    ----------{_WM_ATTRIBUTES_DOC}{NORM_FLOOR_DOC}{STANDARDIZE_ATTRIBUTES_DOC}

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

    _store = _stores.WEIGHT_MEDIAN
    _default_depth = 3
    _budget_heap_share = 0.01

    def __init__(self, memory_budget="4MB", *, n_features_to_select=None, sketch_width=None,
                 sketch_depth=None, loss="log_loss", learning_rate="auto", eta0="auto",
                 power_t=0.5, alpha=0.0, fit_intercept=True, batch_size=1, max_iter=5,
                 shuffle=True, random_state=None, warm_start=False, verbose=0, n_jobs=None):
        super().__init__(memory_budget, n_features_to_select=n_features_to_select,
                         sketch_width=sketch_width, sketch_depth=sketch_depth, loss=loss,
                         learning_rate=learning_rate, eta0=eta0, power_t=power_t, alpha=alpha,
                         fit_intercept=fit_intercept, batch_size=batch_size,
                         max_iter=max_iter, shuffle=shuffle, random_state=random_state,
                         warm_start=warm_start, verbose=verbose, n_jobs=n_jobs)


class AWMSketchClassifier(_WeightMedianBase):
    __doc__ = f"""Active-Set Weight-Median Sketch: exact heavy weights, sketched tail.

    The heap holds the heaviest weights exactly and they are not in the sketch;
    predictions read the heap for its features and the sketch (``z^T R x``) for
    the others. After a step, a feature outside the heap enters it when its
    updated estimate beats the heap minimum, and the evicted weight is written
    back into the sketch. ``memory_budget`` alone gives the paper's depth-1
    sketch, with a smaller heap share than the paper's half (see
    ``memory_budget``: a heap entry costs nearly three times the paper's
    8 bytes).

    Parameters
    ----------{_WM_PARAMS_DOC.format(standardize_note=STANDARDIZE_NOTE, default_depth=1, heap_share=_AWM_SHARE, default_eta0="'auto'", eta0_note=_AWM_ETA0, eta0_auto=ETA0_AUTO_NOTE + LARGER_STEP_NOTE, auto_schedule=AUTO_SCHEDULE_NOTE)}{N_JOBS_DOC}{_HEAP_ORDER_DOC}

    Attributes
    ----------{_WM_ATTRIBUTES_DOC}{NORM_FLOOR_DOC}{STANDARDIZE_ATTRIBUTES_DOC}

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_sketch import AWMSketchClassifier
    >>> rng = np.random.RandomState(0)
    >>> X = rng.normal(size=(2000, 100))
    >>> y = (X[:, 3] - 2 * X[:, 17] > 0).astype(int)
    >>> clf = AWMSketchClassifier("2KB", random_state=0).fit(X, y)
    >>> clf.n_features_to_select_, clf.sketch_width_, clf.sketch_depth_, clf.memory_bytes_
    (4, 485, 1, 2048)
    >>> set(clf.selected_features_.keys[:2].tolist()) == {{3, 17}}
    True
    """

    _store = _stores.ACTIVE_SET
    _parameter_constraints = _AWM_CONSTRAINTS

    def __init__(self, memory_budget="4MB", *, n_features_to_select=None, sketch_width=None,
                 sketch_depth=None, loss="log_loss", learning_rate="auto", eta0="auto",
                 power_t=0.5, alpha=0.0, fit_intercept=True, batch_size=1, max_iter=5,
                 shuffle=True, random_state=None, warm_start=False, verbose=0, n_jobs=None,
                 heap_order="magnitude"):
        super().__init__(memory_budget, n_features_to_select=n_features_to_select,
                         sketch_width=sketch_width, sketch_depth=sketch_depth, loss=loss,
                         learning_rate=learning_rate, eta0=eta0, power_t=power_t, alpha=alpha,
                         fit_intercept=fit_intercept, batch_size=batch_size, max_iter=max_iter,
                         shuffle=shuffle, random_state=random_state, warm_start=warm_start,
                         verbose=verbose, n_jobs=n_jobs)
        self.heap_order = heap_order
