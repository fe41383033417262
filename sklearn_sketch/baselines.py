"""The streaming baselines of the Weight-Median Sketch paper, and a sparse perceptron.

``TruncationClassifier``: SGD keeping a budget of K weights, truncated after
every update to the K largest (``truncation='simple'``, Algorithm 3, the same
update as :class:`IHTClassifier`) or to the K of largest weighted-reservoir key
(``'probabilistic'``, Algorithm 4). ``SpaceSavingClassifier``: learns weights
only for the K most frequent features, tracked by the Space-Saving counter.
``SparsePerceptronClassifier``: the soft-thresholded margin perceptron of Xie et
al. (Algorithm 1), an exact sparse model of at most K weights.
"""
from numbers import Integral, Real

from sklearn.base import ClassifierMixin
from sklearn.utils._param_validation import Interval, StrOptions

from ._base import (
    N_JOBS_DOC,
    _BaseSketchSGD,
    _init_sgd_params,
    _SketchClassifierMixin,
    _SketchSelectorMixin,
)
from . import _stores
from ._sgd_fast import Loss, Schedule, SGDParams
from .mission import (ETA0_AUTO_DOC, HEAP_ONLY_AUTO_ETA0, HEAP_ONLY_RACE_Z, NORM_FLOOR_DOC,
                      STANDARDIZE_ATTRIBUTES_DOC, _CapacityOrBudget)
from .weight_median import _BUDGET_CONSTRAINTS

_SGD_PARAMS_DOC = """
    loss : {'log_loss', 'hinge', 'modified_huber'}, default='log_loss'
        Loss minimized.
    learning_rate : {'normalized', 'frequency', 'adaptive', 'invscaling', 'constant', \
'optimal'}, default='normalized'
        Step size schedule; 'normalized' steps by
        ``eta0 / max(||x||**2, norm_floor_)``, whatever the scale of the
        features, and standardizes dense columns, whatever their ranges (see
        :class:`WMSketchClassifier`; not Space-Saving, which counts where a
        column is non-zero); 'frequency' also scales each feature's share by
        ``1 / sqrt(its count so far)``, 'adaptive' by ``1 / sqrt(its squared
        gradients so far)`` (see :class:`WMSketchClassifier`).
    eta0 : float, default=@ETA0@
        Step size (the first one for 'invscaling').@ETA0_NOTE@
    power_t : float, default=0.5
        Exponent of the 'invscaling' schedule.
    alpha : float, default=1e-6
        L2 penalty.
    fit_intercept : bool, default=True
        Learn an intercept.
    batch_size : int, default=1
        Samples per update.
    max_iter : int, default=5
        Passes over the data in :meth:`fit`.
    shuffle : bool, default=True
        Shuffle the samples before each pass.
    random_state : int, RandomState instance or None, default=None
        Seeds the shuffling (and the reservoir keys).
    warm_start : bool, default=False
        Continue from the previous model in :meth:`fit`.
    verbose : int, default=0
        Print a line per pass."""

_TRUNCATION_SGD_PARAMS_DOC = _SGD_PARAMS_DOC.replace(
    "    eta0 : float, default=@ETA0@\n"
    "        Step size (the first one for 'invscaling').@ETA0_NOTE@",
    ETA0_AUTO_DOC.strip("\n").replace(
        "on L2-normalized 20 Newsgroups; 'auto' chose 10 on both (0.661 and\n        0.782).",
        "on L2-normalized 20 Newsgroups (hard thresholding; simple\n"
        "        truncation: 10 scored 0.730 on DNA, 3 0.781 on 20 Newsgroups, and\n"
        "        'auto' chose 10 on both, 0.730 and 0.760)."))
_SPACE_SAVING_SGD_PARAMS_DOC = _SGD_PARAMS_DOC.replace("@ETA0@", "1.0").replace(
    "@ETA0_NOTE@", "")

_ATTRIBUTES_DOC = """
    classes_ : ndarray of shape (n_classes,)
        Class labels.
    eta0_ : float
        With ``eta0='auto'``, the step chosen by the first fit.
    coef_ : scipy.sparse.csr_matrix of shape (n_models, n_features)
        The kept weights (one model per class for multi-class, else one).
    intercept_ : ndarray of shape (n_models,)
        Intercepts.
    selected_features_ : SelectedFeatures
        Keys and weights of the selected features, most important first.
    heaps_ : list of TopKHeap
        The kept entries of each model.
    memory_bytes_ : int
        Bytes held by everything that grows with the model (heaps, intercepts,
        kept feature names); at most ``memory_budget``.
    n_features_to_select_ : int
        Heap capacity of each model.
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


class _BudgetedBaseline(_CapacityOrBudget, _SketchSelectorMixin, ClassifierMixin,
                        _SketchClassifierMixin, _BaseSketchSGD):
    """Heap-only baselines sized by ``memory_budget`` under the paper's cost model."""

    _parameter_constraints = _BUDGET_CONSTRAINTS


class TruncationClassifier(_BudgetedBaseline):
    __doc__ = f"""SGD on a budget of K weights, truncated after every update.

    ``truncation='simple'`` (WM-Sketch paper, Algorithm 3) keeps the K weights
    of largest magnitude; ``'probabilistic'`` (Algorithm 4) keeps the K of
    largest weighted-reservoir key ``r**(1/|w|)``, ``r`` uniform and drawn once
    per feature entry, so small weights survive with a chance. A dropped weight
    is forgotten.

    Parameters
    ----------
    memory_budget : int or str, default='4MB'
        Bytes of the whole fitted estimator, all classes together: the
        intercepts, then equal heaps, about 22.7 bytes an entry (key, weight,
        key map, presence filter), 30.7 for probabilistic truncation (plus
        the reservoir key).
        The capacity chosen is ``n_features_to_select_``.
    truncation : {{'simple', 'probabilistic'}}, default='simple'
        Which weights survive a truncation.
    n_features_to_select : int, default=None
        K, overriding the budget.{_TRUNCATION_SGD_PARAMS_DOC}{N_JOBS_DOC}

    Attributes
    ----------{_ATTRIBUTES_DOC}{NORM_FLOOR_DOC}{STANDARDIZE_ATTRIBUTES_DOC}

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_sketch import TruncationClassifier
    >>> rng = np.random.RandomState(0)
    >>> X = rng.normal(size=(2000, 100))
    >>> y = (X[:, 3] - 2 * X[:, 17] > 0).astype(int)
    >>> clf = TruncationClassifier("1KB", random_state=0).fit(X, y)
    >>> clf.n_features_to_select_, clf.memory_bytes_ <= 1024, bool(clf.score(X, y) > 0.9)
    (46, True, True)
    """

    _AUTO_ETA0, _AUTO_Z, _AUTO_PROBE_NNZ, _AUTO_PROBE_TENTH = HEAP_ONLY_AUTO_ETA0, 0.0, 0, None
    _AUTO_RACE_Z = HEAP_ONLY_RACE_Z
    _parameter_constraints = {**_BUDGET_CONSTRAINTS,
                              "truncation": [StrOptions({"simple", "probabilistic"})]}

    def __init__(self, memory_budget="4MB", *, truncation="simple", n_features_to_select=None,
                 loss="log_loss", learning_rate="normalized", eta0="auto", power_t=0.5,
                 alpha=1e-6, fit_intercept=True, batch_size=1, max_iter=5, shuffle=True,
                 random_state=None, warm_start=False, verbose=0, n_jobs=None):
        self.n_jobs = n_jobs
        self.memory_budget = memory_budget
        self.truncation = truncation
        self.n_features_to_select = n_features_to_select
        self.loss = loss
        _init_sgd_params(self, learning_rate, eta0, power_t, alpha, fit_intercept, batch_size,
                         max_iter, shuffle, random_state, warm_start, verbose)

    @property
    def _store(self):
        if self.truncation == "probabilistic":
            return _stores.PROBABILISTIC_TRUNCATION
        return _stores.HEAP_ONLY


class SpaceSavingClassifier(_BudgetedBaseline):
    __doc__ = f"""SGD on the weights of the K most frequent features (Space-Saving).

    The Space-Saving counter tracks K features: a tracked feature's count grows
    with each occurrence; an untracked one replaces the least counted, with that
    count plus one, and the replaced feature's weight is forgotten. Only tracked
    features have weights. The frequent-features baseline of the WM-Sketch paper.

    Parameters
    ----------
    memory_budget : int or str, default='4MB'
        Bytes of the whole fitted estimator, all classes together: the
        intercepts, then equal heaps, about 30.7 bytes an entry (key, count,
        weight, key map, presence filter). The capacity chosen is ``n_features_to_select_``.
    n_features_to_select : int, default=None
        K, overriding the budget.{_SPACE_SAVING_SGD_PARAMS_DOC}{N_JOBS_DOC}

    Attributes
    ----------{_ATTRIBUTES_DOC}{NORM_FLOOR_DOC}

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_sketch import SpaceSavingClassifier
    >>> rng = np.random.RandomState(0)
    >>> X = rng.binomial(1, 0.02, size=(3000, 200)).astype(float)
    >>> X[:, :5] = rng.binomial(1, 0.9, size=(3000, 5))    # five frequent features
    >>> y = (X[:, 0] + X[:, 1] > X[:, 2]).astype(int)
    >>> clf = SpaceSavingClassifier(n_features_to_select=20, random_state=0).fit(X, y)
    >>> {{0, 1, 2, 3, 4}} <= set(clf.heaps_[0].keys().tolist())  # above N / K: always kept
    True
    """

    _store = _stores.SPACE_SAVING

    def __init__(self, memory_budget="4MB", *, n_features_to_select=None, loss="log_loss",
                 learning_rate="normalized", eta0=1.0, power_t=0.5, alpha=1e-6,
                 fit_intercept=True, batch_size=1, max_iter=5, shuffle=True, random_state=None,
                 warm_start=False, verbose=0, n_jobs=None):
        self.n_jobs = n_jobs
        self.memory_budget = memory_budget
        self.n_features_to_select = n_features_to_select
        self.loss = loss
        _init_sgd_params(self, learning_rate, eta0, power_t, alpha, fit_intercept, batch_size,
                         max_iter, shuffle, random_state, warm_start, verbose)


class SparsePerceptronClassifier(_SketchSelectorMixin, ClassifierMixin, _SketchClassifierMixin,
                                 _BaseSketchSGD):
    __doc__ = f"""Soft-thresholded margin perceptron with a density cap (Xie et al., Algorithm 1).

    When a sample's margin ``y * w.x`` is at most ``margin``, every weight of
    its features takes the perceptron step ``eta0 * y * x_j`` and is then
    soft-thresholded: ``w_j <- sign(w_j) * max(|w_j| - threshold, 0)`` (a weight
    reaching 0 leaves the model). The model is exact and sparse; once it holds
    ``n_features_to_select`` non-zero weights, new features are not added (the
    paper's loop stops at that density; here the existing weights keep learning,
    so the estimator stays usable on a stream). Multi-class is one-vs-rest.

    Parameters
    ----------
    n_features_to_select : int, default=1000
        Density cap ``s``: the most non-zero weights per model.
    margin : float, default=1.0
        Margin threshold ``tau`` under which a sample updates the model.
    eta0 : float, default=1.0
        Step size ``eta``.
    threshold : float, default=0.01
        Soft-thresholding amount ``lambda``.
    fit_intercept : bool, default=True
        Learn an intercept with the same perceptron step.
    batch_size : int, default=1
        Samples per update.
    max_iter : int, default=5
        Passes over the data in :meth:`fit`.
    shuffle : bool, default=True
        Shuffle the samples before each pass.
    random_state : int, RandomState instance or None, default=None
        Seeds the shuffling.
    warm_start : bool, default=False
        Continue from the previous model in :meth:`fit`.
    verbose : int, default=0
        Print a line per pass.{N_JOBS_DOC}

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
        Class labels.
    coef_ : scipy.sparse.csr_matrix of shape (n_models, n_features)
        The non-zero weights.
    intercept_ : ndarray of shape (n_models,)
        Intercepts.
    selected_features_ : SelectedFeatures
        Keys and weights of the selected features, most important first.
    heaps_ : list of TopKHeap
        The non-zero weights of each model.
    memory_bytes_ : int
        Bytes held: proportional to the density cap.
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
        Samples seen plus one.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_sketch import SparsePerceptronClassifier
    >>> rng = np.random.RandomState(0)
    >>> X = rng.normal(size=(1000, 300))
    >>> y = (X[:, 3] - 2 * X[:, 17] > 0).astype(int)
    >>> clf = SparsePerceptronClassifier(50, threshold=0.01, random_state=0).fit(X, y)
    >>> clf.coef_.nnz <= 50, sorted(clf.selected_features_.keys[:2].tolist())
    (True, [3, 17])
    """

    _store = _stores.SOFT_THRESHOLD
    _parameter_constraints = {
        **{name: _BaseSketchSGD._parameter_constraints[name]
           for name in ("fit_intercept", "batch_size", "max_iter", "shuffle",
                        "random_state", "warm_start", "verbose")},
        "eta0": [Interval(Real, 0, None, closed="neither")],
        "n_jobs": [Integral, None],
        "n_features_to_select": [Interval(Integral, 1, None, closed="left")],
        "margin": [Interval(Real, None, None, closed="neither")],
        "threshold": [Interval(Real, 0, None, closed="left")],
    }

    def __init__(self, n_features_to_select=1000, *, margin=1.0, eta0=1.0, threshold=0.01,
                 fit_intercept=True, batch_size=1, max_iter=5, shuffle=True, random_state=None,
                 warm_start=False, verbose=0, n_jobs=None):
        self.n_jobs = n_jobs
        self.n_features_to_select = n_features_to_select
        self.margin = margin
        self.eta0 = eta0
        self.threshold = threshold
        self.fit_intercept = fit_intercept
        self.batch_size = batch_size
        self.max_iter = max_iter
        self.shuffle = shuffle
        self.random_state = random_state
        self.warm_start = warm_start
        self.verbose = verbose

    def _sgd_params(self, n_models, eta0=None, schedule=None):
        return SGDParams(
            loss=Loss.MARGIN_PERCEPTRON, schedule=Schedule.CONSTANT, store=self._store.code,
            eta0=float(self.eta0 if eta0 is None else eta0), power_t=0.0, alpha=0.0,
            optimal_init=0.0,
            batch_size=int(self.batch_size), fit_intercept=bool(self.fit_intercept),
            margin=float(self.margin), threshold=float(self.threshold))
