"""Shared base of the sketched linear estimators.

Input validation, feature keys, learning-rate schedules, the training loop over
passes (one compiled call per pass), the fitted attributes and the selection
API live here; each algorithm family only says where its weights live.
"""
import contextlib
import math
import os
import re
import threading
import warnings
import weakref
from dataclasses import dataclass
from numbers import Integral, Real

import numpy as np
import scipy.sparse as sp
from scipy.special import expit, softmax
from sklearn.base import BaseEstimator, _fit_context
from sklearn.exceptions import ConvergenceWarning
from sklearn.feature_selection import SelectorMixin
from sklearn.utils import check_random_state
from sklearn.utils._available_if import available_if
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.multiclass import check_classification_targets, unique_labels
from sklearn.utils.validation import (
    _check_feature_names_in,
    _check_sample_weight,
    _num_samples,
    check_is_fitted,
    validate_data,
)

from ._columns import (
    STANDARDIZE_BUDGET_SHARE,
    first_call_reading,
    read_columns,
    read_keyed,
    standardization_bytes,
)
from ._core import CountSketch, TopKHeap
from ._names import PackedNames, mean_name_bytes, reserved_name_bytes
from ._raw_features import CATEGORIES_HINT, hash_raw, is_raw_input
from ._sgd_fast import ClassTeam, Loss, PassStatus, Schedule, SGDParams, sgd_pass
from ._sgd_fast import decision_function_kernel, rows_hold_more_keys_than, rows_repeat_a_column
from ._sorted_keys import keys_in_heaps
from ._step_probe import StepProbe, choose_step

CONSTANT, OPTIMAL, INVSCALING = Schedule.CONSTANT, Schedule.OPTIMAL, Schedule.INVSCALING
NORMALIZED, FREQUENCY, ADAPTIVE = Schedule.NORMALIZED, Schedule.FREQUENCY, Schedule.ADAPTIVE
PASS_DIVERGED, PASS_OK = PassStatus.PASS_DIVERGED, PassStatus.PASS_OK

#: Columns of a model trained on 64-bit keys (hashed names, stream chunks).
KEY_SPACE = 2**63 - 1

_CLASSIFIER_LOSSES = {"log_loss", "hinge", "modified_huber"}
_SCHEDULES = {"constant": CONSTANT, "optimal": OPTIMAL, "invscaling": INVSCALING,
              "normalized": NORMALIZED, "frequency": FREQUENCY, "adaptive": ADAPTIVE}
#: Schedules that step by a row's norm (and floor it, and scale dense columns);
#: 'auto' chooses between 'normalized' and an estimator's _AUTO_OTHER_SCHEDULE.
_NORMALIZED_SCHEDULES = ("normalized", "frequency", "adaptive", "auto")
#: The schedules that keep a table of the features' counts (uint32) or of their
#: squared gradients (float32), and that table's dtype.
_FEATURE_TABLES = {"frequency": np.uint32, "adaptive": np.float32}
#: Cells of that table (4 bytes each), shared by the classes: at most this many, and
#: at most a sixteenth of a memory_budget.
FEATURE_COUNT_CELLS, MIN_FEATURE_COUNT_CELLS = 2**16, 256
_BINARY_LOSSES = {"log_loss": Loss.LOG_LOSS, "hinge": Loss.HINGE,
                  "modified_huber": Loss.MODIFIED_HUBER}


def _kernel_table(table):
    """The feature table as the compiled pass takes it: uint32 (the float32 squared
    gradients of 'adaptive' as their bits), or None."""
    return None if table is None else table.view(np.uint32)


@dataclass(frozen=True)
class SelectedFeatures:
    """The selected features, most important first.

    Parameters
    ----------
    keys : ndarray of int64, shape (k,)
        Feature keys (column indices for numeric input).
    weights : ndarray of float64, shape (k, n_models)
        Weight of each feature in each model (one model per class for
        multi-class, else one).
    names : ndarray of object or None
        Feature names where known.

    Examples
    --------
    >>> from sklearn_sketch import MissionClassifier
    >>> docs = [["cheap", "pills"], ["meeting", "noon"], ["cheap", "now"], ["noon", "call"]]
    >>> clf = MissionClassifier(n_features_to_select=2, random_state=0)
    >>> selected = clf.fit(docs, [1, 0, 1, 0]).selected_features_
    >>> sorted(selected.names.tolist()), selected.weights.shape
    (['cheap', 'noon'], (2, 1))
    """

    keys: np.ndarray
    weights: np.ndarray
    names: np.ndarray = None


_UNITS = {"": 1, "B": 1, "KB": 2**10, "KIB": 2**10, "MB": 2**20, "MIB": 2**20,
          "GB": 2**30, "GIB": 2**30}


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


def heap_bytes(capacity, aux=False):
    """``TopKHeap(capacity, aux=aux).memory_bytes`` without building it."""
    filter_bits = min((8 * capacity + 63) // 64 * 64, 2**32) if capacity >= 64 else 0
    return (16 * capacity + 4 * ((10 * capacity + 6) // 7) + filter_bits // 8
            + (8 * capacity if aux else 0))


def sketch_bytes(width, depth):
    """``CountSketch(width, depth).memory_bytes``: float32 cells and a 4-byte seed a row."""
    return 4 * depth * (width + 1)


def largest_sketch_width(n_bytes, depth):
    """Largest width whose sketch of ``depth`` rows fits in ``n_bytes`` (inverse of
    :func:`sketch_bytes`)."""
    return int(n_bytes) // (4 * depth) - 1


def largest_heap(n_bytes, aux=False, name_bytes=0):
    """Largest capacity whose heap (and ``name_bytes`` an entry) fits in ``n_bytes``."""
    def cost(capacity):
        return heap_bytes(capacity, aux) + name_bytes * capacity

    capacity = max(0, int(n_bytes // (cost(7) / 7)))
    while capacity > 0 and cost(capacity) > n_bytes:
        capacity -= 1
    return capacity


def budget_shape(budget, n_models, *, heap_share, depth, aux=False, capacity=None, width=None,
                 name_bytes=0):
    """``(width, depth, capacity)`` of the largest model of ``n_models`` in ``budget``.

    The budget (bytes, for the whole estimator) pays first for the
    ``n_models`` float64 intercepts (kept twice: the model's and
    ``intercept_``); each model gets an equal part, of which
    ``heap_share`` goes to its heap (``TopKHeap`` bytes, :func:`heap_bytes`,
    plus ``name_bytes`` an entry for the names of the heap keys when the
    data carries names) and the rest to its sketch of ``depth`` rows
    (:func:`sketch_bytes`). ``heap_share=0`` means no heap, ``1`` no
    sketch. ``capacity`` or ``width`` fix that part; the other takes what is
    left.
    """
    n_bytes = parse_memory_budget(budget)
    per_model = (n_bytes - 16 * n_models) // n_models

    def heap_cost(capacity):
        return heap_bytes(capacity, aux) + name_bytes * capacity if capacity else 0

    if heap_share == 0:
        capacity = None
    elif capacity is None and width is not None:
        capacity = largest_heap(per_model - sketch_bytes(width, depth), aux, name_bytes)
    elif capacity is None:
        # A selector selects at least one feature, even when its share buys none.
        capacity = max(1, largest_heap(per_model * heap_share, aux, name_bytes))
    if heap_share == 1:
        width = depth = None
    elif width is None:
        rest = per_model - heap_cost(capacity)
        width = largest_sketch_width(rest, depth)
    total = 16 * n_models + n_models * (
        heap_cost(capacity) + (sketch_bytes(width, depth) if width is not None else 0))
    if (capacity is not None and capacity < 1) or (width is not None and width < 1) \
            or total > n_bytes:
        raise ValueError(
            f"memory_budget={budget!r} ({n_bytes} bytes) cannot hold {n_models} model(s) "
            f"of this shape (heap of {capacity} entries, sketch {width} x {depth}): "
            "give a larger budget")
    return (None if width is None else int(width), None if depth is None else int(depth),
            None if capacity is None else int(capacity))


N_JOBS_DOC = """
    n_jobs : int, default=None
        Threads that train at once (scikit-learn's meaning: None is 1, -1
        every core). With one model per class (multi-class), each thread
        trains its share of the classes' models over every row, and the
        threads meet once a row to read every model's score: the model is
        the one ``n_jobs=1`` trains, bit for bit (20 Newsgroups, 20 classes:
        a pass took 0.51 to 0.58 of its time with 2 on two cores,
        ``benchmarks/bench_parallel.py``). A thread waiting for the others
        spins for up to half a millisecond, then naps; on a busy machine
        (waits longer than that) the first thread carries the pass on alone,
        with the same result. At most one thread a core. With one model
        (binary, regression) or BEAR, each pass splits its (shuffled) rows
        into ``n_jobs`` parts, trains a copy of the model on each in its own
        thread (the compiled pass runs without the GIL) and averages the
        copies (parameter mixing, see
        :func:`~sklearn_sketch.average_estimators`), in up to ``n_jobs + 2``
        times the model's memory: the model differs from ``n_jobs=1`` but is
        deterministic for a given ``random_state`` and ``n_jobs``. An average
        of ``n_jobs`` copies moves as one model with an ``n_jobs`` times
        smaller step would, so a classifier's copies (but BEAR's) take
        ``n_jobs`` times the step: two threads score within 0.5 points of
        one thread or above it (binary 20 Newsgroups as words and as
        L2-normalised hashed rows, DNA reads, crossed flight attributes;
        without the larger step up to 2.6 points under). ``eta0='auto'``
        trains its candidate steps in ``n_jobs`` threads."""


def _init_sgd_params(self, learning_rate, eta0, power_t, alpha, fit_intercept, batch_size,
                     max_iter, shuffle, random_state, warm_start, verbose):
    """Store the SGD parameters every estimator shares (``__init__`` only stores)."""
    self.learning_rate = learning_rate
    self.eta0 = eta0
    self.power_t = power_t
    self.alpha = alpha
    self.fit_intercept = fit_intercept
    self.batch_size = batch_size
    self.max_iter = max_iter
    self.shuffle = shuffle
    self.random_state = random_state
    self.warm_start = warm_start
    self.verbose = verbose


# One reentrant lock per estimator, made on first use and dropped with the
# estimator: kept outside the instance so that pickling, clone, get_params and
# the model files never see it.
_LOCKS = weakref.WeakKeyDictionary()
_LOCKS_GUARD = threading.Lock()


def _estimator_lock(estimator):
    """The lock that serializes training (and saving) of ``estimator``."""
    with _LOCKS_GUARD:
        lock = _LOCKS.get(estimator)
        if lock is None:
            lock = _LOCKS[estimator] = threading.RLock()
        return lock


#: What to do with a list of documents (strings), which is no raw input.
DOCUMENTS_HINT = ("X is a list of strings: give each document as the list of its tokens "
                  "(raw input, the names kept, e.g. [doc.lower().split() for doc in docs]) "
                  "or vectorize the documents first (HashingVectorizer, CountVectorizer)")


def physical_memory():
    """Bytes of this machine's memory, or None where the system does not say."""
    try:
        return int(os.sysconf("SC_PAGE_SIZE")) * int(os.sysconf("SC_PHYS_PAGES"))
    except (AttributeError, ValueError, OSError):
        return None


def _in_bytes(n):
    """``n`` bytes as text: ``'4.0 MiB'``, ``'15.6 GiB'``."""
    for unit, size in (("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if n >= size:
            return f"{n / size:.1f} {unit}"
    return f"{int(n)} bytes"


#: The share of the machine's memory past which a new model's tables are refused.
MEMORY_SHARE = 0.75


@contextlib.contextmanager
def _categories_hint(X=None):
    """Say how to feed columns of categories when numeric input holds strings
    (a DataFrame of carriers and airports, say), and documents when ``X`` is a
    list of strings: scikit-learn's error only says that a string is not a
    number."""
    try:
        yield
    except ValueError as error:
        if "could not convert string to float" not in str(error):
            raise
        if isinstance(X, (list, tuple)) and len(X) and isinstance(X[0], str):
            raise ValueError(f"{error}; {DOCUMENTS_HINT}") from error
        raise ValueError(f"{error}; {CATEGORIES_HINT}") from error


class _ModelState:
    """What training changes: sketches, heaps, intercepts and the clock."""

    def __init__(self, sketches, heaps, intercept, t, n_passes, shuffle_seed, history=None,
                 feature_counts=None):
        self.sketches = sketches
        # The 'frequency' schedule's counts of the features (hashed), or None.
        self.feature_counts = feature_counts
        # Second-order state that training carries between batches (BEAR's pairs).
        self.history = history
        self.heaps = heaps
        self.intercept = intercept
        self.t = t
        self.n_passes = n_passes
        self.shuffle_seed = shuffle_seed
        # Mistakes before each update in the last pass, and that pass's size.
        self.mistakes = 0
        self.last_pass_samples = 0
        # Errors of heap-only and sketch-reading predictions before each update
        # (predict_with='auto'), earlier passes weighing half as much each time.
        self.read_errors = np.zeros(2)
        # The last pass's log loss before each update (binary log loss only, else NaN).
        self.log_loss = math.nan
        # (mistakes, samples, log loss) of the first pass of the last training call:
        # fit's check of whether a model learned anything reads it (not copied).
        self.first_pass = None

    def independent_copy(self):
        """A state that shares nothing with this one (sketches copied too)."""
        out = self.training_copy()
        out.sketches = [sketch.copy() for sketch in self.sketches]
        return out

    def training_copy(self):
        """A state to continue training on, leaving this one's small parts untouched.

        The sketches are the same objects (the caller writes them through their
        undo journals); heaps, intercepts, counters and BEAR's history are
        copies, bounded by the heaps' capacity and the history, not by the
        sketches.
        """
        out = _ModelState(list(self.sketches), [heap.copy() for heap in self.heaps],
                          self.intercept.copy(), self.t, self.n_passes, self.shuffle_seed,
                          history=None if self.history is None else self.history.copy(),
                          feature_counts=(None if self.feature_counts is None
                                          else self.feature_counts.copy()))
        out.mistakes = self.mistakes
        out.last_pass_samples = self.last_pass_samples
        out.read_errors = self.read_errors.copy()
        out.log_loss = self.log_loss
        return out


#: The 'normalized' step's floor is the median ||x||**2 of at most NORM_FLOOR_ROWS first
#: rows; while fewer than NORM_FLOOR_MIN_ROWS have been seen (a stream fed a row or a few
#: at a time), later calls add theirs: on 20 Newsgroups fed one row at a time, the first
#: row's floor alone (4.6 times the median) cost 7.5 points.
NORM_FLOOR_ROWS, NORM_FLOOR_MIN_ROWS = 10_000, 256


def row_squared_norms(indptr, data, n_rows=NORM_FLOOR_ROWS):
    """``||x||**2`` of the first ``n_rows`` non-empty rows of a CSR matrix, in their order."""
    n = min(indptr.size - 1, n_rows)
    lengths = np.diff(indptr[:n + 1])
    rows = np.repeat(np.arange(n), lengths)
    squares = np.bincount(rows, weights=np.square(data[indptr[0]:indptr[n]]), minlength=n)
    return squares[lengths > 0]


def _as_csr_int64(X):
    """CSR with float64 data, int64 indices, no duplicate entries and no stored zeros.

    A stored zero is not a feature of the sample (dense input has none), so it
    must not reach the heap. A row is taken in its stored order, sorted or not
    (a Vowpal Wabbit chunk keeps the order of its lines, which the heap sees
    in that order), unless it repeats a column: the repeats are then summed
    into a sorted copy.
    """
    X = sp.csr_matrix(X) if not sp.issparse(X) else X.tocsr()
    indptr = np.ascontiguousarray(X.indptr, dtype=np.int64)
    indices = np.ascontiguousarray(X.indices, dtype=np.int64)
    copied = False
    if not X.has_canonical_format and rows_repeat_a_column(indptr, indices):
        X, copied = X.copy(), True
        X.sum_duplicates()
    if (X.data == 0).any():
        X = X if copied else X.copy()
        copied = True
        X.eliminate_zeros()
    if copied:
        indptr = np.ascontiguousarray(X.indptr, dtype=np.int64)
        indices = np.ascontiguousarray(X.indices, dtype=np.int64)
    data = np.ascontiguousarray(X.data, dtype=np.float64)
    return indptr, indices, data


def _budget_less(budget, reserved):
    """``budget`` less ``reserved`` bytes (the budget as given when nothing is reserved)."""
    return budget if not reserved else parse_memory_budget(budget) - reserved


def row_nnz(X):
    """Entries of each row of ``X`` (stored entries of a sparse ``X``)."""
    return np.diff(X.tocsr().indptr) if sp.issparse(X) else np.count_nonzero(X, axis=1)


def largest_rows_nnz(lengths, n_rows):
    """Most entries any ``n_rows`` rows of the row ``lengths`` (:func:`row_nnz`) hold."""
    if lengths.size == 0:
        return 0
    n_rows = min(n_rows, lengths.size)
    return int(np.partition(lengths, lengths.size - n_rows)[-n_rows:].sum())


def median_rows_nnz(lengths, n_rows):
    """Entries of ``n_rows`` rows of the median of the row ``lengths`` (0 for no rows)."""
    return int(n_rows * np.median(lengths)) if lengths.size else 0


def _max_batch_nnz(indptr, order, batch_size):
    if indptr.size <= 1:
        return 0
    if batch_size == 1:
        return int(np.diff(indptr).max())
    row_nnz = np.diff(indptr)[order]
    return int(np.add.reduceat(row_nnz, np.arange(0, row_nnz.size, batch_size)).max())


#: ``fit`` warns when a classifier's last pass erred on at least this share of the
#: samples that always predicting the most frequent class errs on, and (binary log
#: loss) its log loss was at least this share of the labels' entropy: a model of
#: nothing is at or above the entropy, whatever it predicts (two copies of one
#: genome under two labels: 1.0003 of it, 10,000 reads), a model that ranks a rare
#: label under it (flights late by two hours, 3%: MISSION 0.992, the others 0.94 to
#: 0.95).
NEAR_CHANCE, NEAR_CHANCE_LOG_LOSS = 0.95, 0.995


def majority_error(label_counts):
    """Error rate of always predicting the most frequent label, from the labels'
    counts (0 without labels)."""
    counts = np.asarray(list(label_counts), dtype=np.float64)
    return 1.0 - counts.max() / counts.sum() if counts.size and counts.sum() else 0.0


def label_entropy(label_counts):
    """Log loss (nats) of always predicting the labels' frequencies, from their counts."""
    counts = np.asarray(list(label_counts), dtype=np.float64)
    p = counts[counts > 0] / counts.sum() if counts.sum() else counts[:0]
    return float(-(p * np.log(p)).sum())


def learned_next_to_nothing(error, baseline, log_loss=None, entropy=0.0):
    """Whether a progressive ``error`` is at least ``NEAR_CHANCE`` of the majority
    label's ``baseline`` error (never without an error, or with one label), and
    the progressive ``log_loss`` (a binary log-loss model's; None for others) is
    at least ``NEAR_CHANCE_LOG_LOSS`` of the labels' ``entropy``.

    Where one label is rare, a model that ranks the rare label's samples first
    still errs about as often as predicting the majority (it rarely says the
    rare label): its log loss below the entropy tells it from one that learned
    nothing. Flights 3% of which arrived over two hours late, from carrier,
    airports, hour, month and plane: the models scored a test ROC AUC of 0.68
    to 0.70 and erred on 3.1% (the majority 3.1%), at log losses of 0.94 to
    0.99 times the entropy (BEAR 1.08); with the labels shuffled, 1.03 to 1.13.
    """
    if error is None or not baseline > 0.0 or error < NEAR_CHANCE * baseline:
        return False
    return log_loss is None or not log_loss < NEAR_CHANCE_LOG_LOSS * entropy


def log_loss_note(log_loss, entropy):
    """The warning's sentence on a binary model's log loss ('' without one)."""
    if log_loss is None:
        return ""
    return (f" Its log loss, {log_loss:.4f}, is no better than the {entropy:.4f} of "
            "predicting the labels' frequencies (or within half a percent of it).")


def first_pass_errors(state):
    """``(error, log_loss)`` of the first pass of ``state``'s last training call, each
    sample predicted before its update: ``log_loss`` None where not measured (see
    ``online_log_loss_``); ``(None, None)`` without a pass."""
    if state.first_pass is None:
        return None, None
    mistakes, samples, log_loss = state.first_pass
    samples = max(1.0, samples)
    return mistakes / samples, (log_loss / samples if math.isfinite(log_loss) else None)


def later_passes_note(error, online, rows="samples"):
    """The warning's sentence on the last of several passes (``online``, its error
    rate) when it differs from the first's (``error``); '' otherwise. ``rows``: what
    the rows are called."""
    if online is None or error is None or abs(online - error) < 0.0005:
        return ""
    return (f" Its last pass erred on {online:.1%}, predicting {rows} it had trained on: "
            "a model that learned them by heart, or one that learns slowly; held-out data "
            "tells which.")


def _warn_if_near_chance(estimator, X, y):
    """A ``ConvergenceWarning`` when the fitted classifier learned next to nothing.

    The progressive error of the first pass (each sample predicted just before
    its update, as ``online_error_rate_`` measures the last pass) is compared
    with always predicting the most frequent class, and a binary log-loss
    model's progressive log loss with the labels' entropy
    (:func:`learned_next_to_nothing`), as the command line does after ``fit``;
    if they pass, the fitted model is checked on the first training rows
    (:func:`final_model_near_chance`). The first pass, because each of its
    predictions is of a sample the model has not yet seen: a later pass over
    few wide rows predicts rows the model has learned by heart (300 rows of 289
    random features of 2**24 under random labels: every classifier's fifth pass
    erred on 0.0-44% of them, the first on about half).
    """
    error, log_loss = first_pass_errors(estimator._state)
    counts = np.unique(np.asarray(y), return_counts=True)[1]
    baseline, entropy = majority_error(counts), label_entropy(counts)
    if not learned_next_to_nothing(error, baseline, log_loss, entropy):
        _warn_if_final_model_near_chance(estimator, X, y)
        return
    online = getattr(estimator, "online_error_rate_", None)
    warnings.warn(
        f"{type(estimator).__name__} learned next to nothing: on its first pass it erred on "
        f"{error:.1%} of the samples just before training on each, and always predicting "
        f"the most frequent class errs on {baseline:.1%}.{log_loss_note(log_loss, entropy)}"
        f"{later_passes_note(error, online)} "
        "Try more passes (max_iter), a larger memory_budget or heap, another step (eta0), "
        "features on one scale (the step adapts to a row's norm, not to each feature's "
        "range; sparse input of more than 1,000 columns, raw {name: value} dicts included, "
        "whose first rows hold more than 1,000 features of values other than 1, and "
        "schedules other than 'normalized', read values as given: scale them, with "
        "MaxAbsScaler for sparse input), or check that the labels match the samples.",
        ConvergenceWarning, stacklevel=4)


#: Training rows a fitted regressor is scored on to tell whether it learned anything.
CHECKED_ROWS = 10_000
#: A fitted model's check reads at most this many weights (the rows' stored
#: entries times the models): on 20 Newsgroups (20 classes, rows of about 300 words)
#: 10,000 rows took 0.9 s after a fit of feature hashing of 4.5-6 s; ...
CHECKED_READS = 2**23
#: ... but it reads at least this many rows (a near-chance model errs on nearly as
#: many of them as the majority label does, and the rows' error is within about
#: 3 points of its rate at 1,000).
CHECKED_LEAST_ROWS = 1_000


def _first_rows(X, n_models=1):
    """The first ``CHECKED_ROWS`` rows of training input ``X``, in a form ``predict``
    takes; fewer (down to ``CHECKED_LEAST_ROWS``) where their stored entries (sparse)
    or columns (dense) times ``n_models`` pass ``CHECKED_READS``."""
    if sp.issparse(X):
        rows = sp.csr_matrix(X)[:CHECKED_ROWS]
        reads = np.cumsum(np.diff(rows.indptr)) * n_models
        return rows[:max(CHECKED_LEAST_ROWS,
                         int(np.searchsorted(reads, CHECKED_READS, side="right")))]
    try:
        rows = X[:CHECKED_ROWS]
    except (TypeError, KeyError):  # an array-like that is not sliced as a sequence
        rows = np.asarray(X)[:CHECKED_ROWS]
    shape = getattr(rows, "shape", ())
    if len(shape) == 2 and shape[1]:  # a dense table: every row as long as it is wide
        rows = rows[:max(CHECKED_LEAST_ROWS, CHECKED_READS // (shape[1] * n_models))]
    return rows


def final_model_near_chance(estimator, X, y):
    """``(error, baseline, log_loss, entropy, n_rows)`` when the fitted classifier
    predicts its first training rows (``CHECKED_ROWS``, fewer for wide rows of many
    classes: :func:`_first_rows`) next to nothing, else None.

    The rule of :func:`learned_next_to_nothing`, on the fitted model's mistakes
    on those rows against always predicting their most frequent label, and a
    binary log-loss model's log loss on them (None for others) against their
    labels' entropy. The progressive error measures the models of the pass, one
    sample after another; a fit returns the last of them, and a last step can
    undo what the pass learned. BEAR, one pass over six shuffles of 1,079
    posts (atheism against christian, raw counts): in one shuffle it erred on
    35% of the posts as it trained, yet its fitted model erred on 55% of them,
    predicting one label for all (the majority label errs on 44.5%); with
    batches of 16, two of six (31% and 28% as they trained, 55% and 44%
    fitted). The progressive rule passed all three.
    """
    n_classes = len(getattr(estimator, "classes_", ()))
    rows = _first_rows(X, n_classes if n_classes > 2 else 1)
    y = np.asarray(y)[:_num_samples(rows)]
    counts = np.unique(y, return_counts=True)[1]
    baseline, entropy = majority_error(counts), label_entropy(counts)
    if not baseline > 0.0:
        return None
    log_loss = None
    if getattr(estimator, "online_log_loss_", None) is None:
        predicted = estimator.predict(rows)
    else:  # a binary log-loss model: its predictions follow from the margins, read once
        margin = np.asarray(estimator.decision_function(rows), dtype=np.float64)
        predicted = estimator._labels_of(margin)
        sign = np.where(y == estimator.classes_[1], 1.0, -1.0)
        log_loss = float(np.mean(np.logaddexp(0.0, -sign * margin)))
    error = float(np.mean(predicted != y))
    if not learned_next_to_nothing(error, baseline, log_loss, entropy):
        return None
    return error, baseline, log_loss, entropy, y.size


def _warn_if_final_model_near_chance(estimator, X, y):
    """A ``ConvergenceWarning`` when :func:`final_model_near_chance`."""
    found = final_model_near_chance(estimator, X, y)
    if found is None:
        return
    error, baseline, log_loss, entropy, n_rows = found
    online = getattr(estimator, "online_error_rate_", None)
    during = ("" if online is None else f" Its last pass erred on {online:.1%} of the "
              "samples just before training on each: a late step can undo what a pass "
              "learned.")
    warnings.warn(
        f"{type(estimator).__name__} learned next to nothing in the end: the fitted model "
        f"errs on {error:.1%} of its first {n_rows:,} training samples, and always "
        f"predicting the most frequent class errs on {baseline:.1%}."
        f"{log_loss_note(log_loss, entropy)}{during} Try a smaller step (eta0), more "
        "passes (max_iter), another shuffle (random_state) or another estimator.",
        ConvergenceWarning, stacklevel=5)


def no_better_than_the_mean(estimator, X, y):
    """``(error, variance, n_rows)`` when the fitted regressor predicts its first
    training rows (``CHECKED_ROWS``, fewer of wide dense rows: :func:`_first_rows`)
    no better than their mean does (or diverged), else None.

    A regressor has no progressive error (a classifier's mistakes), so these
    rows are predicted once after training: a squared error of at least
    ``NEAR_CHANCE`` times the targets' variance learned next to nothing.
    """
    rows = _first_rows(X)
    y = np.asarray(y, dtype=np.float64)[:_num_samples(rows)]
    variance = float(y.var()) if y.size > 1 else 0.0
    if not variance > 0.0:
        return None
    predicted = estimator.predict(rows)
    error = (float(np.mean((predicted - y) ** 2)) if np.isfinite(predicted).all()
             else math.inf)
    return (error, variance, y.size) if error >= NEAR_CHANCE * variance else None


def _warn_if_no_better_than_the_mean(estimator, X, y):
    """A ``ConvergenceWarning`` when :func:`no_better_than_the_mean`."""
    found = no_better_than_the_mean(estimator, X, y)
    if found is None:
        return
    error, variance, n_rows = found
    warnings.warn(
        f"{type(estimator).__name__} learned next to nothing: on its first {n_rows:,} "
        f"training samples its squared error is {error:.4g}, and predicting their mean "
        f"errs by {variance:.4g} (their variance). Try another step (eta0; with "
        "learning_rate='normalized', the default, 0.01 to 0.3 suit most data), more "
        "passes (max_iter), a larger memory_budget or heap, features on one scale "
        "(StandardScaler; 'normalized' standardizes dense columns itself), or check that "
        "the targets match the samples.",
        ConvergenceWarning, stacklevel=3)


class _BaseSketchSGD(BaseEstimator):
    """Linear model trained by SGD with its weights in a sketch and/or a top-k heap.

    Subclasses set ``_store`` (one of the weight stores of
    :mod:`sklearn_sketch._stores`, which decides what the model allocates,
    what its heap entries hold and what predictions read) and implement
    ``_encode_targets``.
    """

    _store = None

    # Each estimator adds its own "loss" and model-size constraints.
    _parameter_constraints = {
        "learning_rate": [StrOptions(set(_SCHEDULES) | {"auto"})],
        "eta0": [Interval(Real, 0, None, closed="neither"), StrOptions({"auto"})],
        "power_t": [Interval(Real, None, None, closed="neither")],
        "alpha": [Interval(Real, 0, None, closed="left")],
        "fit_intercept": ["boolean"],
        "batch_size": [Interval(Integral, 1, None, closed="left")],
        "max_iter": [Interval(Integral, 1, None, closed="left")],
        "shuffle": ["boolean"],
        "random_state": ["random_state"],
        "warm_start": ["boolean"],
        "verbose": ["verbose"],
        "n_jobs": [Integral, None],
    }

    # ------------------------------------------------------------ training
    def _loss_code(self, n_models):
        raise NotImplementedError

    def _schedule_name(self):
        """The learning_rate in use: ``learning_rate``, or for 'auto' the schedule the
        first fit chose (``learning_rate_``; 'normalized' before it)."""
        rate = getattr(self, "learning_rate", None)
        if rate != "auto":
            return rate
        return self.__dict__.get("learning_rate_", "normalized")

    def _sgd_params(self, n_models, eta0=None, schedule=None):
        schedule = _SCHEDULES[schedule or self._schedule_name()]
        if schedule == OPTIMAL and self.alpha == 0:
            raise ValueError("learning_rate='optimal' needs alpha > 0 (the step is 1 / (alpha * t))")
        optimal_init = 0.0
        if schedule == OPTIMAL:
            # scikit-learn's heuristic for the first step of the 'optimal' schedule.
            typical_weight = np.sqrt(1.0 / np.sqrt(self.alpha))
            optimal_init = 1.0 / (typical_weight * self.alpha)
        return SGDParams(
            loss=self._loss_code(n_models), schedule=schedule, store=self._store.code,
            eta0=self._eta0() if eta0 is None else float(eta0),
            power_t=float(self.power_t), alpha=float(self.alpha),
            optimal_init=optimal_init, batch_size=int(self.batch_size),
            fit_intercept=bool(self.fit_intercept),
            compare_reads=getattr(self, "predict_with", None) == "auto",
            norm_floor=float(getattr(self, "norm_floor_", 0.0)))

    # eta0='auto' tries these (with the estimator's learning_rate) on a probe. The
    # default step comes first and only smaller ones follow: the probe favours fast
    # early learning, so it is trusted only when a smaller step still makes fewer
    # mistakes, by more than _AUTO_Z times the noise of the first one's count
    # (labels that are mostly noise; where the counts are within their noise, as on
    # DNA reads at 64KB, a smaller step's luck on the probe is not a reason).
    # The probe: a tenth of the rows (at most _AUTO_PROBE_TENTH rows), or more rows
    # until it holds _AUTO_PROBE_NNZ non-zeros (its cost). At 2000 or 5000 rows the
    # flights' clearly noisy labels (5 to 9 features a row, a 10,000-row first chunk
    # from the command line) stayed within the noise of the mistake counts; 10,000
    # rows told them apart. At 2M non-zeros the demo's 16,000 reads of 189 k-mers
    # probed 10,600 of them (AWM's fit 1.6 s -> 4.2 s; 2.4 s at 500,000). A tenth of
    # 200,000 DNA reads made one pass 1.3 to 1.4 times as long as with a fixed step.
    _AUTO_ETA0, _AUTO_Z = (1.0, 0.3, 0.1, 0.03), 2.0
    # A candidate larger than the first is tried only on a lightly loaded sketch: at
    # most _AUTO_LIGHT_LOAD distinct features of the probe per sketch cell (width x
    # depth). A large step learns faster, and on a loaded sketch each one is noise on
    # the features it collides with, which adds up over the later passes (the probe
    # cannot see it). 20 Newsgroups, 20 classes, 5 epochs, step 3 against 1: +0.6 to
    # +1.4 points at 1MB to 64MB (21 to 25 probe features a cell at 1MB), -0.4 to
    # +0.1 at 256KB (82 to 100), -2.1 to -3.3 at 64KB (330 to 1000, WM's too).
    _AUTO_LIGHT_LOAD = 50
    # Another schedule must beat the first's fewest mistakes by this many square
    # roots of them (_auto_choice). The two counts come from the same rows, so their
    # difference is less noisy than either: on DNA reads, where the schedules score
    # alike, 'frequency' was never more than 1.2 roots ahead (at 20,000 reads a
    # strain 0.7); on 20 Newsgroups TF-IDF rows, where it scores 1.4 points higher
    # (AWM, hashing), it was 1.2 to 1.7 ahead (2 kept 'normalized'); on its words 7
    # to 9.
    _AUTO_SCHEDULE_Z = 1.5
    _AUTO_PROBE_ROWS, _AUTO_PROBE_NNZ, _AUTO_PROBE_TENTH = 2000, 500_000, 10_000
    # None: another candidate runs until it reaches the bar (it cannot win); a number
    # z: also until it trails the best candidate trained before it by z sqrt(count)
    # (_step_probe.choose_step; it raced the first alone before the other
    # schedule's candidate trained second: on 20 Newsgroups, where
    # 'adaptive' wins, the smaller 'normalized' steps then stop after a part, 14-15
    # candidate parts of hashing's, WM's and AWM's probes and 11-12 of IHT's fall to
    # 10 and 9; replayed on 156 probes logged with every candidate whole (the
    # defaults of 7 classifiers on DNA reads and both 20 Newsgroups encodings at
    # 256KB to 16MB, the papers' shapes on 200,000 reads, four tables raw and
    # standardised), no choice changed, in one thread or two, and 1,682 parts fell
    # to 1,545). Before that:
    # Measured with every candidate's count after each part: on DNA reads the
    # smaller steps trailed by that much after a quarter or a half (6 to 9 of 22-24
    # candidate parts saved, a third of the probe); on the flights the larger steps
    # and 'frequency' did (6 of 24); on 20 Newsgroups 5 of 16-24; the candidate
    # chosen never trailed so. With a number, the steps under the first's are also
    # tried largest first, and no further once one errs no less than the next larger
    # (_step_probe.smaller_steps_above). Replayed on every candidate's count after
    # each part of 101 probes (DNA reads: the papers' shapes, 20,000 reads a strain
    # at 24 settings, 100,000 at 16; 20 Newsgroups tokens and L2 rows at 24 each; the
    # flights from the command line, 8) no choice changed and 1,708 candidate parts
    # fell to 1,284; nor did one of the probes of bench_dense_columns,
    # bench_vw_interactions, bench_bear_folds and the command line on real files.
    _AUTO_RACE_Z = 2.0

    def _floors_row_norms(self):
        """Whether 'normalized' steps by ``eta0 / max(||x||**2, norm_floor_)``.

        ``norm_floor_`` is the median ``||x||**2`` of the first data's rows
        (:meth:`_update_norm_floor`). Dividing by a row's own squared norm
        alone moves every row's margin by ``eta0``, so a row near the origin
        (centred, standardised features) moves the weights by ``eta0 / ||x||``,
        without bound: on scikit-learn's iris, standardised, feature hashing
        scored .69 (5-fold CV, 3 seeds), the WM-Sketch .62. Rows shorter than
        the median take the median row's step instead, as plain SGD at that
        scale would: iris .95, wine .98, breast cancer .98, digits unchanged,
        20 Newsgroups token counts up to 2 points better (1 to 8 for MISSION
        at 1MB and up, 5 worse at 256KB), DNA reads and L2-normalised rows
        unchanged (their rows have equal norms). The floor scales with the
        data, so the step stays scale-free.
        """
        return getattr(self, "learning_rate", None) in _NORMALIZED_SCHEDULES

    def _update_norm_floor(self, csr, reset):
        """Set ``norm_floor_`` from a training call's rows (``csr``).

        A new model (``reset``) takes the median ``||x||**2`` of the call's
        first ``NORM_FLOOR_ROWS`` rows, or a floor set for it elsewhere
        (``_preset_norm_floor``: the parts of one pass share the whole pass's).
        While fewer than ``NORM_FLOOR_MIN_ROWS`` rows have been seen, their
        norms are kept (``_norm_sample``, replaced, never changed in place, so
        a failed call restores it) and later calls add theirs.
        """
        if reset:
            preset = self.__dict__.pop("_preset_norm_floor", None)
            for name in ("norm_floor_", "_norm_sample"):
                self.__dict__.pop(name, None)
            if not self._floors_row_norms():
                return
            if preset is not None:
                self.norm_floor_ = preset
                return
            sample = np.zeros(0)
        elif "_norm_sample" in self.__dict__:
            sample = self._norm_sample
        else:
            return
        sample = np.concatenate([sample, row_squared_norms(csr[0], csr[2])])
        self.norm_floor_ = float(np.median(sample)) if sample.size else 0.0
        if sample.size < NORM_FLOOR_MIN_ROWS:
            self._norm_sample = sample
        else:
            self.__dict__.pop("_norm_sample", None)

    def _set_standardization(self, X):
        """On a new model: the mean and scale of each column (``feature_mean_``,
        ``feature_scale_``), or the scales of a few measured features
        (``scaled_keys_``, ``key_scales_``), under 'normalized' steps.

        The first call's rows set them (or ``_preset_standardization``: the
        partitions of one Dask fit share the whole data's, decided on it as
        well). The 'normalized'
        step already frees a row's update from the row's norm; a dense column's
        own range still decides how much of that step it takes, and raw
        columns of different ranges (breast cancer: 0.001 to 4,000) leave
        most of them untrained. Centred and scaled, each column steps alike.
        A sparse table is scaled or standardized too, and the few measured
        features of wider sparse input scaled (``scaled_keys_``,
        ``key_scales_``; :func:`~sklearn_sketch._columns.first_call_reading`
        says which rows keep their columns as given). The columns are also used as
        given by a store that counts occurrences (Space-Saving) and when the
        two statistics a column would take more than
        ``STANDARDIZE_BUDGET_SHARE`` of ``memory_budget``.
        """
        preset = self.__dict__.pop("_preset_standardization", None)
        for name in ("feature_mean_", "feature_scale_", "scaled_keys_", "key_scales_"):
            self.__dict__.pop(name, None)
        if not self._scales_columns() or X.shape[1] == 0:
            return
        budget = getattr(self, "memory_budget", None)
        share = (math.inf if budget is None
                 else STANDARDIZE_BUDGET_SHARE * parse_memory_budget(budget))
        if preset is None:
            reading = first_call_reading(X)
            if reading is not None and standardization_bytes(
                    next(iter(reading.values())).size) <= share:
                self.__dict__.update(reading)
            return
        if standardization_bytes(X.shape[1]) > share:
            return
        mean, scale = (np.array(a, dtype=np.float64) for a in preset)
        if mean.shape != (X.shape[1],) or scale.shape != (X.shape[1],):
            raise ValueError(f"the preset standardization has {mean.size} columns, the data "
                             f"{X.shape[1]}")
        self.feature_mean_, self.feature_scale_ = mean, scale

    def _scales_columns(self):
        """Whether this model standardizes or scales its columns at all: under
        'normalized' steps, with a store that learns weights (see
        :meth:`_set_standardization` for the data that is still read as given)."""
        return (getattr(self, "learning_rate", None) in _NORMALIZED_SCHEDULES
                and self._store.standardizes)

    def _standardized(self, X):
        """``X`` in the coordinates the model trains and predicts in: each column
        centred and scaled by ``feature_mean_`` and ``feature_scale_`` when the
        model has them (sparse input is made dense for centring, and stays sparse
        when the means are 0), each of ``scaled_keys_`` divided by its
        ``key_scales_`` when it has those, else ``X``."""
        if "key_scales_" in self.__dict__:
            return read_keyed(X, self.scaled_keys_, self.key_scales_)
        if "feature_scale_" not in self.__dict__:
            return X
        return read_columns(X, self.feature_mean_, self.feature_scale_)

    def _eta0(self):
        """The step in use: ``eta0``, or for 'auto' the one chosen at the first fit."""
        if self.eta0 != "auto":
            return float(self.eta0)
        if not hasattr(self, "eta0_"):
            raise AttributeError("eta0='auto' is chosen by the first fit or partial_fit")
        return float(self.eta0_)

    def _probe_rows(self, csr, order):
        """How many rows of the first pass's ``order`` the eta0='auto' probe trains
        on, before it rounds them up to whole batches."""
        n_samples = order.size
        tenth = n_samples // 10
        if self._AUTO_PROBE_TENTH is not None:
            tenth = min(tenth, self._AUTO_PROBE_TENTH)
        rows = max(self._AUTO_PROBE_ROWS, tenth)
        if self._AUTO_PROBE_NNZ:
            nnz = np.cumsum(np.diff(csr[0])[order])
            rows = max(rows, int(np.searchsorted(nnz, self._AUTO_PROBE_NNZ)) + 1)
        return min(n_samples, rows)

    def _batch_starts(self, state, csr, order):
        """Where the pass's batches over ``order`` start (and ``len(order)``), for a
        probe to cut the pass only there; None when they are every ``batch_size``
        rows."""
        return None

    def _step_probe(self, X, y, classes=None, sample_weight=None, share=1):
        """The eta0='auto' probe of a new model's first ``partial_fit(X, y)``, on a
        ``1/share`` part of its rows, untrained (:class:`~._step_probe.StepProbe`).

        For training spread over ``share`` partitions (:mod:`sklearn_sketch.dask`):
        :func:`~._step_probe.choose_step_over_shares` trains the partitions'
        probes and decides on their summed counts, and a partition goes on from
        its probe's model of the chosen step (``_preset_probe``), as a plain fit
        goes on from its probe. The model may be left with input attributes but
        no trained state, so call it on a copy.
        """
        X, csr, y_encoded, sample_weight, classes_, _ = self._training_inputs(
            X, y, sample_weight, reset=True, partial=True, classes=classes)
        return StepProbe(self, self._n_models(classes_), X, csr, y_encoded, sample_weight,
                         share=share)

    def _probes(self):
        """Whether a new model's first training call probes: ``eta0='auto'`` or
        ``learning_rate='auto'``."""
        return self.eta0 == "auto" or getattr(self, "learning_rate", None) == "auto"

    #: The schedule learning_rate='auto' tries beside 'normalized' (see _probe_candidates).
    _AUTO_OTHER_SCHEDULE = "frequency"

    def _probe_candidates(self):
        """The ``(learning_rate, eta0)`` pairs a new model's probe tries, the first
        first: the steps of ``_AUTO_ETA0`` for eta0='auto', else ``eta0``; under
        learning_rate='auto', each under 'normalized', then the largest under
        ``_AUTO_OTHER_SCHEDULE`` (on 20 Newsgroups and DNA reads, at every budget
        and estimator where it was tried, 'frequency' erred less with step 3
        than with 1; one candidate fewer makes the probe shorter)."""
        steps = list(self._AUTO_ETA0) if self.eta0 == "auto" else [float(self.eta0)]
        rate = self.learning_rate
        if rate != "auto":
            return [(rate, step) for step in steps]
        return ([("normalized", step) for step in steps]
                + [(self._AUTO_OTHER_SCHEDULE, max(steps))])

    def _auto_choice(self, counts, stopped=None):
        """Index of the probe candidate (:meth:`_probe_candidates`) kept, from each
        one's mistakes ``counts``; None when none is finite. ``stopped`` holds,
        for a candidate stopped at the bar (its count inf: it cannot win), the
        mistakes it had made by then, no more than its whole probe's would
        have been: the first schedule's fewest is taken over those too.

        Within each schedule, :meth:`_auto_step_index` chooses a step. Another
        schedule's ('frequency', under learning_rate='auto') is kept only when it
        made fewer mistakes than the first schedule's fewest, by more than
        ``_AUTO_SCHEDULE_Z`` times their square root: on DNA reads the two
        schedules were within 1.2 of that root at every budget and estimator
        (20,000 and 100,000 reads a strain; within 0.2 points of each other
        after 5 passes where 'frequency' is tried); on 20 Newsgroups words
        'frequency' erred on about a fifth fewer of the probe's rows (8
        roots) and scored 0.7 to 4.4 points over after 5 passes from 1MB, and
        on its TF-IDF rows from the command line 1.7 roots fewer (1.4 points
        over).
        """
        candidates = self._probe_candidates()
        picks, fewest = [], None
        for schedule in dict.fromkeys(c[0] for c in candidates):
            group = [i for i, c in enumerate(candidates) if c[0] == schedule]
            pick = self._auto_step_index([counts[i] for i in group])
            picks.append(None if pick is None else group[pick])
            if fewest is None:
                fewest = min(min(counts[i], math.inf if stopped is None else stopped[i])
                             for i in group)
        first, *others = picks
        for pick in others:
            if pick is not None and (
                    first is None
                    or counts[pick] < fewest - self._AUTO_SCHEDULE_Z * math.sqrt(fewest)):
                return pick
        return first

    @classmethod
    def _auto_step_index(cls, counts):
        """Index of the candidate eta0='auto' keeps, from each candidate's mistakes.

        The first is kept unless another made fewer mistakes, by more than
        ``_AUTO_Z`` times the square root of the first's count; then the fewest
        of those wins, ties going to the earlier. None when no candidate is
        finite.
        """
        first = counts[0]
        limit = first - cls._AUTO_Z * math.sqrt(first) if math.isfinite(first) else math.inf
        best = min(range(1, len(counts)), key=lambda i: (counts[i], i), default=None)
        if best is not None and counts[best] < min(limit, first):
            return best
        return 0 if math.isfinite(first) else None

    def _choose_eta0(self, n_models, X, csr, y, sample_weight):
        """eta0='auto' (and learning_rate='auto'): the step (and schedule) of fewest
        mistakes on a probe of the first pass.

        Each candidate of :meth:`_probe_candidates` trains a fresh model (the same hashes
        and order for all) on the first rows of the first pass's order
        (:meth:`_probe_rows`: a tenth, at most ``_AUTO_PROBE_TENTH`` rows, at
        least ``_AUTO_PROBE_ROWS``, and until they hold ``_AUTO_PROBE_NNZ``
        non-zeros; at most all: a stream's first chunk is all a
        ``partial_fit`` probe sees), counting the samples it misclassifies
        just before their update (progressive validation). The first candidate
        is kept unless others made fewer mistakes, by more than ``_AUTO_Z``
        times the square root of its own count; then the fewest of those wins,
        ties going to the earlier (:meth:`_auto_choice` says how a schedule is
        chosen); a candidate stops at the end of a quarter
        of the probe once it has made that many mistakes, or once it trails
        the first on the same rows by ``_AUTO_RACE_Z`` times the square root
        of the first's count there; the steps smaller than the first's are
        tried largest first, and no further once one makes no fewer mistakes
        than the next larger on the same rows (:func:`~._step_probe.choose_step`). With
        ``n_jobs`` the candidates
        train in threads (the compiled pass releases the GIL).

        Returns the candidate ``(learning_rate, eta0)`` and ``(state, rows,
        mistakes, read_errors)``: the
        winner's model after the probe, from which the first pass goes on (so
        the probe costs at most one training on it for each other candidate, and
        with one thread the model equals one trained with that step from the
        start); None when every candidate diverged (the fit then raises).
        ``csr`` is ``X`` as :func:`_as_csr_int64` gives it.
        """
        probe = StepProbe(self, n_models, X, csr, y, sample_weight)
        winner = self._run_probe(probe)[0] or 0
        return probe.candidates[winner], probe.kept(winner)

    def _run_probe(self, probe):
        """:func:`~._step_probe.choose_step` on ``probe``, in as many threads as
        ``n_jobs`` gives its rows (at most one a candidate)."""
        batch = max(1, int(self.batch_size))
        return choose_step(probe, min(len(probe.candidates), self._n_threads(probe.rows, batch)))

    def _probe_is_light(self, state, csr, rows):
        """Whether the probe ``rows`` of ``csr`` hold at most ``_AUTO_LIGHT_LOAD``
        distinct features per cell of ``state``'s sketch (True without one: nothing
        collides in a heap)."""
        if not state.sketches:
            return True
        room = self._AUTO_LIGHT_LOAD * state.sketches[0].width * state.sketches[0].depth
        return not rows_hold_more_keys_than(csr[0], csr[1], rows, math.floor(room))

    # Share of each model's bytes that its heap gets under ``memory_budget``.
    _budget_heap_share = 0.25
    # The read predict_with='auto' takes when heap and sketch erred alike in
    # training: MISSION's training reads the heap (BEAR's, the sketch).
    _read_on_tie = "heap"

    def _sketch_depth(self):
        """Rows of the sketches to build: ``sketch_depth`` (None without a sketch)."""
        return getattr(self, "sketch_depth", None)

    def _model_shape(self, n_models=1, reserved=0):
        """``(sketch_width, sketch_depth, heap_capacity)``; unused entries may be None.

        With ``memory_budget`` (estimators that have it), :func:`budget_shape`
        chooses the sketch width and the heap capacity for ``n_models`` in
        the budget less ``reserved`` bytes (held by the model besides them).
        """
        depth = self._sketch_depth()
        if getattr(self, "memory_budget", None) is not None:
            return budget_shape(_budget_less(self.memory_budget, reserved), n_models,
                                heap_share=self._store.heap_share(self._budget_heap_share),
                                depth=depth, aux=self._store.heap_aux,
                                name_bytes=self._name_bytes_per_entry())
        return (getattr(self, "sketch_width", None), depth,
                getattr(self, "n_features_to_select", None))

    @property
    def predict_with_(self):
        """'heap' or 'sketch': ``predict_with``, or for 'auto' the read that erred less."""
        if not hasattr(self, "predict_with") or "_state" not in self.__dict__:
            raise AttributeError("predict_with_ is available after fit on MISSION and BEAR")
        if self.predict_with != "auto":
            return self.predict_with
        heap_error, sketch_error = self._state.read_errors
        if heap_error == sketch_error:
            return self._read_on_tie
        return "sketch" if sketch_error < heap_error else "heap"

    def _new_state(self, n_models, X=None, reserved=0, schedule=None):
        """A fresh model for ``n_models``, its shape chosen in the budget less ``reserved``.

        ``X``, the first training data, lets a subclass size what it reserves;
        ``schedule`` is the learning_rate it trains under (the one in use by default).
        """
        rng = check_random_state(self.random_state)
        counts = self._new_feature_counts(schedule)
        width, depth, capacity = self._model_shape(
            n_models, reserved + self._standardization_bytes()
            + (0 if counts is None else counts.nbytes))
        sketches, heaps = [], []
        if self._store.uses_sketch:
            seeds = rng.randint(0, 2**32, size=depth, dtype=np.uint64)
            sketches = [CountSketch(width, depth, seeds=seeds) for _ in range(n_models)]
        if self._store.uses_heap:
            heaps = [TopKHeap(capacity, aux=self._store.heap_aux, order=self._heap_order())
                     for _ in range(n_models)]
        return _ModelState(sketches, heaps, np.zeros(n_models), 1.0, 0,
                           int(rng.randint(0, 2**31 - 1)), feature_counts=counts)

    def _new_feature_counts(self, schedule=None):
        """The zeroed table of feature counts ('frequency') or of squared gradients
        ('adaptive'), None under another schedule: ``FEATURE_COUNT_CELLS`` cells, at
        most a sixteenth of ``memory_budget``."""
        dtype = _FEATURE_TABLES.get(schedule or self._schedule_name())
        if dtype is None:
            return None
        cells = FEATURE_COUNT_CELLS
        budget = getattr(self, "memory_budget", None)
        if budget is not None:
            cells = min(cells, max(MIN_FEATURE_COUNT_CELLS,
                                   parse_memory_budget(budget) // (16 * 4)))
        return np.zeros(cells, dtype=dtype)

    def _start_intercept(self, state, y, sample_weight):
        """Set a new model's intercepts from its first call's targets ``y`` (and
        ``sample_weight``): they stay 0."""

    def _heap_order(self):
        """How the heaps order their entries: by ``|weight|`` unless a parameter says."""
        return getattr(self, "heap_order", "magnitude")

    def _n_threads(self, n_samples, batch_size):
        """Threads of a pass: ``n_jobs``, at most one per batch of the rows."""
        n_jobs = getattr(self, "n_jobs", None)
        if n_jobs is None or n_jobs == 1:
            return 1
        # scikit-learn's meaning, counted here: joblib's effective_n_jobs asks its
        # process backend, which gives 1 inside a daemon process (a Dask worker),
        # where these threads run as well as anywhere.
        if n_jobs < 0:
            n_jobs = max(1, (os.cpu_count() or 1) + 1 + n_jobs)
        return max(1, min(n_jobs, n_samples // max(1, batch_size)))

    #: Second-order steps (BEAR's curvature pairs): see _copies_scale_the_step.
    _second_order = False

    def _copies_scale_the_step(self):
        """Whether the copies averaged into this model (the parts of an ``n_jobs``
        pass, the partitions of :func:`sklearn_sketch.dask.fit`) train with as many
        times its step as there are copies.

        While the updates are small, the average of ``w`` copies that each took
        ``1/w`` of the steps moves as one model would with a ``w`` times smaller
        step. Classifiers with first-order steps scale it; not BEAR's
        quasi-Newton steps (0.6 points worse with it), nor a regressor's, whose
        squared loss has no bound on its gradient.
        """
        return self._is_classifier() and not self._second_order

    def _parallel_pass(self, state, params, csr, y, sample_weight, order, n_threads):
        """One pass in ``n_threads`` parts, each on its own copy, averaged into ``state``.

        Returns what :meth:`_train_pass` returns, for the whole pass.
        """
        from concurrent.futures import ThreadPoolExecutor

        from ._merge import average_states

        def train(copy, part):
            return self._train_order(copy, params, csr, y, sample_weight, part)

        parts = np.array_split(order, n_threads)
        copies = [state.independent_copy() for _ in parts]
        if self._copies_scale_the_step():
            # Binary 20 Newsgroups words, two threads, after 1 and 2 passes: 0.7 to
            # 2.2 points under one thread with the step unscaled, 0.1 under to 1.4 over
            # with it.
            seed = params.seed
            params = self._sgd_params(len(state.intercept), eta0=params.eta0 * len(parts))
            params.seed = seed
        with ThreadPoolExecutor(n_threads) as pool:
            results = list(pool.map(train, copies, parts))
        if any(r[1] == PASS_DIVERGED for r in results) or not all(
                self._state_is_finite(c) for c in copies):
            return state.t, PASS_DIVERGED, 0, np.zeros(3)
        t = state.t + order.size
        # An average of copies that took larger steps, not a sum of the copies' steps:
        # summed steps computed from the same start overshoot (20 Newsgroups: 0.67
        # summed, 0.69 averaged, 0.72 on one thread after 2 epochs); averaging more
        # often within a pass did not help.
        average_states(self, copies, [len(part) / order.size for part in parts], into=state)
        if state.history is not None:
            # BEAR: the first part's pairs (secants of the same loss near the average).
            state.history = copies[0].history
        return (t, PASS_OK, sum(r[2] for r in results),
                np.sum([np.asarray(r[3], dtype=float) for r in results], axis=0))

    # Whether the compiled pass can split the models of a multi-class problem among
    # threads (sgd_pass's team); BEAR's two-loop couples them.
    _threads_share_classes = True

    def _class_parallel_order(self, state, params, csr, y, sample_weight, order, n_threads):
        """:meth:`_train_order` with the models split among ``n_threads`` threads.

        Each thread trains its share of the models (classes) over every row,
        meeting the others once a row to read all the scores (``ClassTeam``):
        the result equals one thread's, bit for bit.
        """
        from concurrent.futures import ThreadPoolExecutor

        indptr, indices, data = csr
        n_models = len(state.intercept)
        bounds = np.linspace(0, n_models, n_threads + 1).round().astype(int).tolist()
        team = ClassTeam(n_threads, n_models)
        max_batch_nnz = _max_batch_nnz(indptr, order, params.batch_size)

        def train(i):
            return sgd_pass(params, state.sketches, state.heaps, state.intercept, indptr,
                            indices, data, y, sample_weight, order, state.t, max_batch_nnz,
                            class_start=bounds[i], class_stop=bounds[i + 1], team=team,
                            feature_counts=_kernel_table(state.feature_counts))

        with ThreadPoolExecutor(n_threads) as pool:
            results = list(pool.map(train, range(n_threads)))
        t, _, mistakes, read_errors = results[0]
        diverged = any(r[1] == PASS_DIVERGED for r in results)
        return t, PASS_DIVERGED if diverged else PASS_OK, mistakes, read_errors

    def _measures_log_loss(self, n_models):
        """Whether the kernels sum the progressive log loss: a binary log-loss model."""
        return (self._is_classifier() and n_models == 1
                and getattr(self, "loss", None) == "log_loss")

    def _run_passes(self, state, csr, y, sample_weight, n_passes, resume=None):
        """Train ``state`` in place for ``n_passes`` passes over ``(csr, y)``.

        ``csr`` is the training data as :func:`_as_csr_int64` gives it.
        ``resume``, ``(state, rows, mistakes, read_errors)`` from
        :meth:`_choose_eta0`, says the first pass already trained its first
        ``rows`` rows with those counts.
        """
        params = self._sgd_params(len(state.intercept))
        params.seed = state.shuffle_seed
        n_samples = csr[0].shape[0] - 1
        n_threads = self._n_threads(n_samples, params.batch_size)
        # Models of classes train in threads of their own, exactly; one model, in parts.
        # (no more than the cores: threads in lockstep wait for any that is not running).
        class_threads = (min(n_threads, len(state.intercept), os.cpu_count() or 1)
                         if self._threads_share_classes else 1)
        state.first_pass = None
        for _ in range(n_passes):
            # The kernels' errors: heap-only and sketch reads, and the log loss.
            done, mistakes, read_errors = 0, 0, np.zeros(3)
            if resume is not None:
                _, done, mistakes, read_errors = resume
                resume = None
            order = self._pass_order(state, n_samples)[done:]
            t, status, more, errors = state.t, PASS_OK, 0, np.zeros(3)
            if order.size and class_threads > 1:
                t, status, more, errors = self._class_parallel_order(
                    state, params, csr, y, sample_weight, order, class_threads)
            elif order.size and n_threads > 1:
                t, status, more, errors = self._parallel_pass(
                    state, params, csr, y, sample_weight, order, n_threads)
            elif order.size:
                t, status, more, errors = self._train_order(
                    state, params, csr, y, sample_weight, order)
            mistakes += more
            read_errors = read_errors + np.asarray(errors, dtype=float)
            if status == PASS_DIVERGED or not self._state_is_finite(state):
                if any(sketch.journal_failed for sketch in state.sketches):
                    raise MemoryError(
                        "cannot allocate the undo journal of the sketches; the model is "
                        "left as it was before this call")
                raise ValueError(
                    f"{type(self).__name__} diverged: the weights became infinite or NaN "
                    f"(eta0={self._eta0():g}); use a smaller eta0 or scale the features. The "
                    "model is left as it was before this call.")
            state.t = t
            state.n_passes += 1
            state.mistakes = mistakes
            state.last_pass_samples = n_samples
            state.read_errors = 0.5 * state.read_errors + read_errors[:2]
            state.log_loss = read_errors[2] if self._measures_log_loss(len(state.intercept)) \
                else math.nan
            if state.first_pass is None:
                state.first_pass = (mistakes, n_samples, state.log_loss)
            if self.verbose:
                print(f"-- Pass {state.n_passes}, samples seen {int(t - 1)}")
        return state

    def _pass_order(self, state, n_samples):
        """The order of the next pass of ``state``: shuffled by its seed and pass count."""
        if self.shuffle:
            rng = np.random.default_rng([state.shuffle_seed, state.n_passes])
            return rng.permutation(n_samples).astype(np.int64)
        return np.arange(n_samples, dtype=np.int64)

    def _train_order(self, state, params, csr, y, sample_weight, order):
        """:meth:`_train_pass` over the rows ``order`` of ``csr``."""
        indptr, indices, data = csr
        return self._train_pass(state, params, indptr, indices, data, y, sample_weight, order,
                                _max_batch_nnz(indptr, order, params.batch_size))

    def _train_pass(self, state, params, indptr, indices, data, y, sample_weight, order,
                    max_batch_nnz):
        """One compiled pass over ``order``: ``(t, status, mistakes, read_errors)``."""
        return sgd_pass(params, state.sketches, state.heaps, state.intercept, indptr, indices,
                        data, y, sample_weight, order, state.t, max_batch_nnz,
                        feature_counts=_kernel_table(state.feature_counts))

    @staticmethod
    def _state_is_finite(state):
        """Whether every weight is finite (the kernel only sees the weights it reads).

        A journaled sketch (a fitted model, finite before the call) checks only
        the cells written since its journal began.
        """
        return (np.isfinite(state.intercept).all()
                and all(s.journal_finite() if s.journaling else s.all_finite()
                        for s in state.sketches)
                and all(h.all_finite() for h in state.heaps))

    def _training_inputs(self, X, y, sample_weight, *, reset, partial, classes):
        """``(X, csr, y_encoded, sample_weight, classes_, raw_names)`` of a training call.

        Raw samples are hashed (``raw_names``, their names); a call that starts
        a new model (``reset``) also reserves the names' room in the budget,
        from the raw samples' names or those given to
        :meth:`remember_feature_names` before the first fit.
        """
        raw_names = None
        if is_raw_input(X):
            X, raw_names = hash_raw(X)
        X, y_encoded, sample_weight, classes_ = self._validate_training_data(
            X, y, sample_weight, reset=reset, partial=partial, classes=classes)
        if reset:
            self._set_standardization(X)
        X = self._standardized(X)
        csr = _as_csr_int64(X)
        if reset:
            coming = self.__dict__.pop("_names_to_come", None)
            raw_names = raw_names if raw_names is not None else coming
            self._reserve_names(raw_names)
        self._update_norm_floor(csr, reset)
        return X, csr, y_encoded, sample_weight, classes_, raw_names

    def _fit(self, X, y, sample_weight, *, reset, partial, classes=None, n_passes):
        """Validate, train, and only then set attributes; leave the model as it was on error.

        ``reset`` starts a new model (and new input checks); ``partial`` says the
        call is ``partial_fit`` (classes come from ``classes``, not from ``y``).
        A new model trains a fresh state. A fitted one trains
        :meth:`_ModelState.training_copy`: copies of the heaps, intercepts,
        counters and BEAR's history, and the model's own sketches, whose
        writes go through their undo journals
        (:meth:`~sklearn_sketch.CountSketch.journal_begin`). If anything
        raises, the journals roll the sketches back bit for bit and the copies
        are dropped (``_fit_guarded`` restores the attributes); on success the
        journals are committed. So nothing of the sketches' size is copied: a
        call costs the model, its input and what it touches.
        """
        # A copy that is thrown away on failure (sklearn_sketch.dask's partitions)
        # needs no undo journal: for a loaded sketch the journal copies the table.
        disposable = self.__dict__.pop("_disposable", False)
        X, csr, y_encoded, sample_weight, classes_, raw_names = self._training_inputs(
            X, y, sample_weight, reset=reset, partial=partial, classes=classes)
        n_models = self._n_models(classes_)
        if reset:
            self._check_model_fits_in_memory(n_models)
            probed = None
            # A step chosen elsewhere on the same terms (sklearn_sketch.dask sums the
            # partitions' probes), and this data's probe with it when one was kept;
            # a copy that is one of w averaged copies trains with w times the step
            # (_eta0_scale, see sklearn_sketch.dask.fit), after its probe's rows.
            preset = self.__dict__.pop("_preset_eta0", None)
            preset_probe = self.__dict__.pop("_preset_probe", None)
            scale = self.__dict__.pop("_eta0_scale", 1)
            self.__dict__.pop("learning_rate_", None)
            if self._probes():
                if preset is not None:
                    (schedule, step), probed = preset, preset_probe
                else:
                    (schedule, step), probed = self._choose_eta0(n_models, X, csr, y_encoded,
                                                                 sample_weight)
                self.learning_rate_ = schedule
                if self.eta0 == "auto":
                    self.eta0_ = step * scale
            if probed is not None:
                state = probed[0]
            else:
                state = self._new_state(n_models, X)
                self._start_intercept(state, y_encoded, sample_weight)
            journaled = []
        else:
            table = _FEATURE_TABLES.get(self._schedule_name())
            counts = self._state.feature_counts
            if table is not None and (counts is None or counts.dtype != table):
                # Counting from here would grow the model past the shape its budget chose.
                what = ("feature counts" if self._schedule_name() == "frequency"
                        else "sums of squares")
                raise ValueError(
                    f"learning_rate={self._schedule_name()!r} steps by {what} that this "
                    "model, trained under another learning_rate, does not have: fit it "
                    f"anew (warm_start=False) to change to {self._schedule_name()!r}")
            state, probed = self._state.training_copy(), None
            journaled = [] if disposable else state.sketches
        opened = []
        # Each pass writes at most depth cells per non-zero in every sketch.
        nnz = X.nnz if sp.issparse(X) else X.size
        writes = nnz * n_passes * (journaled[0].depth if journaled else 0)
        try:
            for sketch in journaled:
                sketch.journal_begin(writes)
                opened.append(sketch)
            self._run_passes(state, csr, y_encoded, sample_weight, n_passes,
                             resume=probed)
            if classes_ is not None:
                self.classes_ = classes_
            self._state = state
            self.n_iter_ = n_passes
            if self._schedule_name() is not None:
                self.learning_rate_ = self._schedule_name()
            self._remember_names(raw_names, reset)
            self._set_fitted_attributes()
        except BaseException:
            for sketch in opened:
                sketch.journal_rollback()
            raise
        for sketch in opened:
            sketch.journal_commit()
        return self

    def _reserve_names(self, names):
        """Set the bytes a heap entry's name takes from ``memory_budget`` (0: no names).

        ``names`` (the first data's ``{key: name}``, or None) gives the mean
        length; the budget reserves a quarter more than that an entry (at
        least ``_shortest_name`` bytes, 16 unless a wrapper that knows its
        names says less: the selected features may be longer than the typical
        name), plus :data:`~sklearn_sketch._names.NAME_OVERHEAD`.
        """
        mean = mean_name_bytes(names) if names is not None else 0.0
        budgeted = getattr(self, "memory_budget", None) is not None and self._store.uses_heap
        self._name_bytes = (reserved_name_bytes(mean, getattr(self, "_shortest_name", 16))
                            if budgeted else 0)

    def _name_bytes_per_entry(self):
        return getattr(self, "_name_bytes", 0)

    def _remember_names(self, names, reset):
        """Keep the names of the heap keys (bounded by the heaps, not by the data).

        ``names`` (None, a ``{key: name}`` mapping or an object with
        ``lookup(keys) -> {key: name}``) names the heap keys not named yet: a
        key keeps its first name while it stays in the heaps. Under
        ``memory_budget`` the names take what the model leaves (the share
        reserved for them when the first data carried names): new names that
        do not fit are left out, with a warning.
        """
        known = PackedNames() if reset else getattr(self, "_feature_names", PackedNames())
        if names is None and not known or not self._store.uses_heap:
            self._feature_names = PackedNames()
            return
        # In C over the heaps' key arrays (unsorted): Python touches only the
        # keys that entered the heaps, not every key of a large heap.
        in_heaps = keys_in_heaps(self._state.heaps)
        room = None
        if getattr(self, "memory_budget", None) is not None:
            room = (parse_memory_budget(self.memory_budget) - self._model_bytes()
                    - self._standardization_bytes())
        self._feature_names, dropped = known.updated(in_heaps, names, room)
        if reset:
            self._names_warned = False
        # Once per model: a stream would repeat it at every chunk.
        if dropped and not getattr(self, "_names_warned", False):
            self._names_warned = True
            warnings.warn(
                f"memory_budget={self.memory_budget!r} leaves {room} bytes for the names of "
                f"the selected features: {dropped} name(s) were not kept (their keys still "
                "are; later chunks may leave out more, without another warning). Give a "
                "larger memory_budget, or None to keep every name.",
                UserWarning, stacklevel=3)

    def remember_feature_names(self, names):
        """Name the features in the heaps; ``selected_features_.names`` shows them.

        A model trained on hashed keys (from a Vowpal Wabbit file, say) does
        not know the names behind them. This records the names that ``names``
        gives for the heap keys not named yet, keeps the names of the keys
        still in the heaps and forgets the others (so at most the heaps'
        capacity is kept), then refreshes ``selected_features_``;
        :meth:`get_feature_names_out` shows the names too. A key keeps its
        first name. The names are saved with the model and kept by
        ``partial_fit`` while their keys stay in the heaps;
        :func:`~sklearn_sketch.io.partial_fit_stream` calls this after each
        chunk that carries names. An estimator without a heap
        (``FeatureHashingClassifier``) keeps no names: the call does nothing.

        Called before the model is first fitted, it gives the names of the
        data the first ``fit`` or ``partial_fit`` trains on: that call names
        its heap keys with them, and, under ``memory_budget``, reserves room
        for the names of the heap keys (from the names' mean length). Names
        given only after a budgeted model was fitted get the bytes the model
        leaves; names that do not fit are left out, with a warning.

        Parameters
        ----------
        names : mapping or KeyNames
            ``{key: name}``, or an object such as
            :class:`~sklearn_sketch.io.KeyNames` whose ``lookup(keys)`` returns
            ``{key: name}`` for the requested keys it knows.

        Returns
        -------
        self : object
            The estimator.
        """
        if not self._store.uses_heap:
            return self
        with _estimator_lock(self):
            if "_state" not in self.__dict__:
                self._names_to_come = names
                return self
            self._remember_names(names, reset=False)
            self.memory_bytes_ = self._memory_bytes()
        return self

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y, sample_weight=None):
        """Fit the model with ``max_iter`` passes of sketched SGD.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features) or list
            Training data, or raw samples: a list of token lists or of
            ``{name: value}`` dicts, whose names are hashed to 64-bit keys
            (the names of the selected features are kept).
        y : array-like of shape (n_samples,)
            Class labels (classifiers) or targets (regressors).
        sample_weight : array-like of shape (n_samples,), default=None
            Non-negative weights of the samples.

        Returns
        -------
        self : object
            Fitted estimator.
        """
        self._fit_guarded(X, y, sample_weight, partial=False, n_passes=self.max_iter)
        if self._is_classifier():
            _warn_if_near_chance(self, X, y)
        else:
            _warn_if_no_better_than_the_mean(self, X, y)
        return self

    def _check_warm_start_targets(self, y):
        """Raise if ``y`` cannot continue the current model (classifiers check classes)."""

    def _fit_guarded(self, X, y, sample_weight, *, partial, classes=None, n_passes):
        """``_fit`` under the estimator's lock, restoring every attribute when it raises.

        Concurrent ``fit``/``partial_fit`` calls on one estimator run one after
        the other. Whether the call continues the model is decided under the
        lock: ``partial_fit`` continues a fitted model, ``fit`` one with
        ``warm_start``.
        """
        with _estimator_lock(self):
            fitted = "_state" in self.__dict__
            reset = not fitted if partial else not (self.warm_start and fitted)
            if not (partial or reset):
                self._check_warm_start_targets(y)
            saved = dict(self.__dict__)
            try:
                return self._fit(X, y, sample_weight, reset=reset, partial=partial,
                                 classes=classes, n_passes=n_passes)
            except BaseException:
                self.__dict__.clear()
                self.__dict__.update(saved)
                raise

    def save(self, path, *, metadata=None):
        """Write this estimator to a model file that executes nothing on load.

        A thin wrapper of :func:`sklearn_sketch.save`; read the file back with
        :meth:`load` or :func:`sklearn_sketch.load`.

        Parameters
        ----------
        path : str or path-like
            File to write (``.skm`` is customary).
        metadata : dict, default=None
            JSON-able data stored with the model.

        Examples
        --------
        >>> import os, tempfile
        >>> import numpy as np
        >>> from sklearn_sketch import MissionClassifier
        >>> X = np.random.RandomState(0).normal(size=(60, 8)); y = (X[:, 2] > 0).astype(int)
        >>> clf = MissionClassifier(3, sketch_width=64, random_state=0).fit(X, y)
        >>> path = os.path.join(tempfile.mkdtemp(), "model.skm")
        >>> clf.save(path)
        >>> loaded = MissionClassifier.load(path)
        >>> bool((loaded.predict(X) == clf.predict(X)).all())
        True
        >>> from sklearn_sketch import BearClassifier
        >>> BearClassifier.load(path)  # doctest: +ELLIPSIS
        Traceback (most recent call last):
            ...
        sklearn_sketch._model_files.ModelFileError: ...: the file holds MissionClassifier, not BearClassifier
        """
        from ._model_files import save

        save(self, path, metadata=metadata)

    @classmethod
    def load(cls, path):
        """The estimator of a model file, which must hold this class (or a subclass).

        A thin wrapper of :func:`sklearn_sketch.load` that checks the class
        named in the file before building anything.

        Parameters
        ----------
        path : str or path-like
            A file written by :meth:`save` or :func:`sklearn_sketch.save`.

        Returns
        -------
        estimator : estimator
            An instance of ``cls``, fitted as it was saved.

        Raises
        ------
        ModelFileError
            The file fails a check of :func:`sklearn_sketch.load`, or holds an
            estimator of another class.
        """
        from ._model_files import read_model

        return read_model(path, expected_class=cls)[0]

    def _set_fitted_attributes(self):
        state = self._state
        self.sketches_ = state.sketches
        self.heaps_ = state.heaps
        self.intercept_ = state.intercept.copy()
        self.t_ = state.t
        if self._is_classifier():
            self.online_error_rate_ = state.mistakes / max(1.0, state.last_pass_samples)
            if math.isfinite(state.log_loss):
                self.online_log_loss_ = state.log_loss / max(1.0, state.last_pass_samples)
            else:
                self.__dict__.pop("online_log_loss_", None)
        if state.sketches:
            self.sketch_width_ = state.sketches[0].width
            self.sketch_depth_ = state.sketches[0].depth
        if state.heaps:
            self.n_features_to_select_ = state.heaps[0].capacity
        self.memory_bytes_ = self._memory_bytes()

    def _planned_bytes(self, n_models):
        """``(total, each)``: the bytes of the tables of a new model of ``n_models``
        (one a class for multi-class), and of one of them (None under a
        ``memory_budget``, which is then the total)."""
        budget = getattr(self, "memory_budget", None)
        if budget is not None:
            return parse_memory_budget(budget), None
        width, depth, capacity = self._model_shape(n_models)
        each = (sketch_bytes(width, depth or 1) if self._store.uses_sketch else 0) \
            + (heap_bytes(capacity, self._store.heap_aux) if self._store.uses_heap else 0)
        return each * n_models, each

    def _check_model_fits_in_memory(self, n_models):
        """Refuse a new model of ``n_models`` whose tables take more than
        ``MEMORY_SHARE`` of this machine's memory: it would be killed for memory part
        way (the tables are zeroed lazily, so nothing fails when they are made),
        without a word. A model of 4,000 classes (a label of aircraft tail numbers,
        say) at feature hashing's default width takes 15.6 GiB."""
        memory = physical_memory()
        if memory is None:
            return
        budget = getattr(self, "memory_budget", None)
        total, each = self._planned_bytes(n_models)
        if total <= MEMORY_SHARE * memory:
            return
        what = (f"memory_budget={budget!r}" if each is None else
                f"a model of {_in_bytes(each)}" if n_models == 1 else
                f"{n_models:,} models (one a class) of {_in_bytes(each)} take "
                f"{_in_bytes(total)}")
        raise MemoryError(
            f"{type(self).__name__}: {what}: more than {MEMORY_SHARE:.0%} of this "
            f"machine's {_in_bytes(memory)} of memory. Give a "
            + ("smaller " if budget is not None else "") + "memory_budget (the whole "
            "model's bytes)" + ("." if budget is not None else " or a smaller sketch_width."))

    def _model_bytes(self):
        """Bytes of the arrays that training keeps: sketches, heaps, intercepts, history,
        feature counts.

        ``intercept_`` is a copy of the intercepts, so they count twice.
        """
        state = self._state
        return int(sum(s.memory_bytes for s in state.sketches)
                   + sum(h.memory_bytes for h in state.heaps)
                   + 2 * state.intercept.nbytes
                   + (state.history.memory_bytes if state.history else 0)
                   + (0 if state.feature_counts is None else state.feature_counts.nbytes))

    def _standardization_bytes(self):
        """Bytes of ``feature_mean_`` and ``feature_scale_``, or of ``scaled_keys_`` and
        ``key_scales_`` (0 without them)."""
        scale = self.__dict__.get("feature_scale_", self.__dict__.get("key_scales_"))
        return 0 if scale is None else standardization_bytes(scale.size)

    def _memory_bytes(self):
        """Everything held that grows with the model: :meth:`_model_bytes`, the names
        and the columns' standardization.

        ``coef_`` and ``selected_features_`` are built from the heaps when read,
        not kept.
        """
        names = getattr(self, "_feature_names", None)
        return (self._model_bytes() + (names.nbytes if names is not None else 0)
                + self._standardization_bytes())

    @property
    def coef_(self):
        if not self._store.uses_heap or "_state" not in self.__dict__:
            raise AttributeError("coef_ is available after fit on estimators with a heap")
        return self._heap_coef()

    @property
    def selected_features_(self):
        if not self._store.uses_heap or "_state" not in self.__dict__:
            raise AttributeError(
                "selected_features_ is available after fit on estimators with a heap")
        return self._select()

    # ---------------------------------------------------------- validation
    def _check_X(self, X, reset):
        if is_raw_input(X):
            X = hash_raw(X)[0]
        elif not reset:
            X = self._in_key_space(X)
        with _categories_hint(X):
            return validate_data(self, X, reset=reset, accept_sparse="csr", dtype=np.float64,
                                 accept_large_sparse=True)

    def _in_key_space(self, X):
        """A sparse ``X`` of fewer columns, widened to a model trained on 64-bit keys.

        A model trained on hashed names or stream chunks has ``n_features_in_ =
        2**63 - 1``: its columns are keys, and a matrix whose columns are keys
        too (``load_svmlight_file`` output, ``KmerVectorizer`` counts) is read
        as is, whatever its own width.
        """
        if (getattr(self, "n_features_in_", None) != KEY_SPACE or not sp.issparse(X)
                or X.ndim != 2 or X.shape[1] >= KEY_SPACE):
            return X
        X = X.tocsr()
        widened = sp.csr_matrix((X.shape[0], KEY_SPACE), dtype=X.dtype)
        widened.data = X.data
        widened.indices = X.indices.astype(np.int64, copy=False)
        widened.indptr = X.indptr.astype(np.int64, copy=False)
        widened.has_canonical_format = X.has_canonical_format
        return widened

    def _validate_training_data(self, X, y, sample_weight, *, reset, partial, classes):
        with _categories_hint(X):
            X, y = validate_data(self, X, y, reset=reset, accept_sparse="csr",
                                 dtype=np.float64, accept_large_sparse=True,
                                 y_numeric=not self._is_classifier())
        sample_weight = np.ascontiguousarray(
            _check_sample_weight(sample_weight, X, dtype=np.float64, ensure_non_negative=True))
        y_encoded, classes_ = self._encode_targets(y, partial=partial, classes=classes)
        return X, np.ascontiguousarray(y_encoded, dtype=np.float64), sample_weight, classes_

    def _is_classifier(self):
        return False

    # --------------------------------------------------------- prediction
    def _decision(self, X):
        """Scores ``X @ w_c + intercept_c``, shape (n_samples, n_models)."""
        check_is_fitted(self, "intercept_")
        X = self._standardized(self._check_X(X, reset=False))
        indptr, indices, data = _as_csr_int64(X)
        sketches, heaps, weight_median = self._store.prediction_reads(self)
        out = np.tile(self.intercept_, (indptr.shape[0] - 1, 1))
        decision_function_kernel(sketches, heaps, indptr, indices, data, out, weight_median,
                                 self._store.heap_value)
        return out

    # ---------------------------------------------------------- selection
    def _heap_coef(self):
        rows, cols, vals = [], [], []
        for c, heap in enumerate(self._state.heaps):
            keys, weights = self._store.heap_items(heap)
            inside = (keys >= 0) & (keys < self.n_features_in_)
            rows.append(np.full(inside.sum(), c))
            cols.append(keys[inside])
            vals.append(weights[inside])
        return sp.csr_matrix(
            (np.concatenate(vals), (np.concatenate(rows), np.concatenate(cols))),
            shape=(len(self._state.heaps), self.n_features_in_))

    def _select(self):
        """Top ``n_features_to_select`` keys by the largest |weight| over the models."""
        heaps = self._state.heaps
        all_keys = keys_in_heaps(heaps)
        weights = np.zeros((all_keys.size, len(heaps)))
        for c, heap in enumerate(heaps):
            keys, w = self._store.heap_items(heap)
            weights[np.searchsorted(all_keys, keys), c] = w
        importance = np.abs(weights).max(axis=1) if all_keys.size else np.zeros(0)
        order = np.lexsort((-all_keys, -importance))[: heaps[0].capacity]
        names = None
        if getattr(self, "_feature_names", None):
            names = self._feature_names.names_of(all_keys[order])
        return SelectedFeatures(keys=all_keys[order], weights=weights[order], names=names)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        return tags


# Past this many features a boolean support mask is not built (it would take
# n_features bytes); get_support(indices=True), transform and
# get_feature_names_out never build one.
_MAX_MASK_FEATURES = 2**27


class _SketchSelectorMixin(SelectorMixin):
    """Selection API from the heap keys (placed first among the bases)."""

    def _selected_columns(self):
        """Sorted selected column indices within ``[0, n_features_in_)``."""
        check_is_fitted(self, "heaps_")
        keys = self.selected_features_.keys
        return np.sort(keys[(keys >= 0) & (keys < self.n_features_in_)])

    def _get_support_mask(self):
        check_is_fitted(self, "selected_features_")
        if self.n_features_in_ > _MAX_MASK_FEATURES:
            raise ValueError(
                f"the support mask would hold {self.n_features_in_:,} booleans (more than "
                f"2**27); use get_support(indices=True) for the selected column indices")
        mask = np.zeros(self.n_features_in_, dtype=bool)
        mask[self._selected_columns()] = True
        return mask

    def get_support(self, indices=False):
        """Mask or column indices of the selected features.

        Parameters
        ----------
        indices : bool, default=False
            Return the sorted column indices (O(k)) instead of a boolean mask of
            length ``n_features_in_`` (the mask is refused past 2**27 features).

        Returns
        -------
        support : ndarray
            Boolean mask, or int64 indices.
        """
        if indices:
            return self._selected_columns()
        return super().get_support(indices=False)

    def transform(self, X):
        """Keep the selected columns of ``X``.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features) or list
            Samples, or raw samples as in :meth:`fit`.

        Returns
        -------
        X_selected : ndarray or scipy.sparse.csr_matrix of shape (n_samples, n_selected)
            Sparse input gives CSR output. Sparse and raw input cost O(k + nnz(X)),
            whatever ``n_features_in_``.
        """
        if not (sp.issparse(X) or is_raw_input(X)) and self.n_features_in_ <= _MAX_MASK_FEATURES:
            # Dense input: scikit-learn's path (dtype, output containers); its mask
            # costs no more than one row of X.
            return super().transform(X)
        X = self._check_X(X, reset=False)
        indptr, indices, data = _as_csr_int64(X)
        columns = self._selected_columns()
        position = np.searchsorted(columns, indices)
        keep = position < columns.size
        keep[keep] = columns[position[keep]] == indices[keep]
        rows = np.repeat(np.arange(indptr.size - 1), np.diff(indptr))[keep]
        return sp.csr_matrix((data[keep], (rows, position[keep])),
                             shape=(indptr.size - 1, columns.size))

    def get_feature_names_out(self, input_features=None):
        """Names of the selected features.

        Parameters
        ----------
        input_features : array-like of str, default=None
            Names of the input columns; default ``feature_names_in_`` or ``x0``, ``x1``...

        Returns
        -------
        names : ndarray of str
            Names of the selected columns, in column order. Without
            ``input_features`` or ``feature_names_in_``, a column is named by
            raw input or :meth:`remember_feature_names` where it was, else
            ``x<column>``: O(k), whatever ``n_features_in_``.
        """
        columns = self._selected_columns()
        names_in = _check_feature_names_in(self, input_features, generate_names=False)
        if names_in is not None:
            return np.asarray(names_in, dtype=object)[columns]
        names = getattr(self, "_feature_names", {})
        return np.asarray([names.get(i, f"x{i}") for i in columns.tolist()], dtype=object)


def _check_classification_targets(y):
    """``check_classification_targets`` for a validated 1-D ``y``, cheaper where its dtype settles it.

    Integer, boolean and string labels, and floats that are all whole numbers,
    are class labels; anything else goes through scikit-learn's check (which
    a streaming call would otherwise pay for every chunk).
    """
    kind = y.dtype.kind
    if y.ndim == 1 and (kind in "biuUS" or (kind == "f" and np.array_equal(y, np.floor(y)))):
        return
    check_classification_targets(y)


def _same_labels(classes, classes_):
    """Whether ``unique_labels(classes)`` equals ``classes_`` (without it when possible)."""
    arr = np.asarray(classes)
    if arr.ndim == 1 and arr.dtype.kind in "biufUS":
        return np.array_equal(np.unique(arr), classes_)
    return np.array_equal(unique_labels(classes), classes_)


def _has_log_loss(estimator):
    if estimator.loss != "log_loss":
        raise AttributeError(
            f"probability estimates need loss='log_loss', not {estimator.loss!r}")
    return True


class _SketchClassifierMixin:
    """Targets, fit and prediction of the sketched classifiers."""

    def _is_classifier(self):
        return True

    def _n_models(self, classes):
        return 1 if len(classes) == 2 else len(classes)

    def _loss_code(self, n_models):
        if self.loss == "log_loss" and n_models > 1:
            return Loss.SOFTMAX
        return _BINARY_LOSSES[self.loss]

    def _encode_targets(self, y, *, partial, classes):
        _check_classification_targets(y)
        if not partial:
            classes_ = unique_labels(y)
            if len(classes_) < 2:
                raise ValueError(
                    f"{type(self).__name__} needs samples of at least 2 classes in the data, "
                    f"but the data contains only one class: {classes_[0]!r}")
        elif not hasattr(self, "classes_"):
            if classes is None:
                raise ValueError("classes must be passed on the first call to partial_fit.")
            classes_ = unique_labels(classes)
            if len(classes_) < 2:
                raise ValueError(f"classes must hold at least 2 classes, got {classes_!r}")
        else:
            classes_ = self.classes_
            if classes is not None and not _same_labels(classes, classes_):
                raise ValueError(
                    f"`classes={classes!r}` is not the same as on the first call to "
                    f"partial_fit: {classes_!r}")
        # check_classification_targets has refused mixed label types, so the sorted
        # classes_ locate every label (two classes: two comparisons, 4x faster on
        # the explainers' millions of 1-sparse labels); only the labels not found
        # are sorted (a streaming call would otherwise pay for np.unique over every
        # chunk).
        if len(classes_) == 2:
            positive = y == classes_[1]
            unknown = ~positive & (y != classes_[0])
        else:
            index = np.searchsorted(classes_, y)
            unknown = (index == len(classes_)) | (
                classes_[np.minimum(index, len(classes_) - 1)] != y)
        if unknown.any():
            raise ValueError(
                f"y holds labels not in classes {classes_!r}: {np.unique(y[unknown])!r}")
        if len(classes_) == 2:
            return np.where(positive, 1.0, -1.0), classes_
        return index.astype(np.float64), classes_

    def _check_warm_start_targets(self, y):
        if not np.array_equal(unique_labels(y), self.classes_):
            raise ValueError("warm_start fit needs the classes of the first fit: "
                             f"{self.classes_!r}")

    @_fit_context(prefer_skip_nested_validation=True)
    def partial_fit(self, X, y, classes=None, sample_weight=None):
        """One pass of sketched SGD over ``(X, y)``, continuing the current model.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features) or list
            Training data, or raw samples: a list of token lists or of
            ``{name: value}`` dicts, whose names are hashed to 64-bit keys
            (the names of the selected features are kept).
        y : array-like of shape (n_samples,)
            Class labels, all in ``classes``.
        classes : array-like of shape (n_classes,), default=None
            Every class of the problem; required on the first call.
        sample_weight : array-like of shape (n_samples,), default=None
            Non-negative weights of the samples.

        Returns
        -------
        self : object
            Fitted estimator.
        """
        return self._fit_guarded(X, y, sample_weight, partial=True, classes=classes,
                                 n_passes=1)

    def decision_function(self, X):
        """Signed scores: ``X @ coef_.T + intercept_`` (one column per class).

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features) or list
            Samples, or raw samples as in :meth:`fit`.

        Returns
        -------
        scores : ndarray of shape (n_samples,) or (n_samples, n_classes)
            Scores; 1-D for a binary problem (positive means ``classes_[1]``).
        """
        scores = self._decision(X)
        return scores.ravel() if scores.shape[1] == 1 else scores

    def predict(self, X):
        """Predicted class of each sample.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features) or list
            Samples, or raw samples as in :meth:`fit`.

        Returns
        -------
        y_pred : ndarray of shape (n_samples,)
            Predicted labels.
        """
        return self._labels_of(self.decision_function(X))

    def _labels_of(self, scores):
        """The labels ``decision_function``'s ``scores`` predict."""
        if scores.ndim == 1:
            return self.classes_[(scores > 0).astype(int)]
        return self.classes_[scores.argmax(axis=1)]

    @available_if(_has_log_loss)
    def predict_proba(self, X):
        """Class probabilities (``loss='log_loss'`` only): sigmoid, or softmax for multi-class.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features) or list
            Samples, or raw samples as in :meth:`fit`.

        Returns
        -------
        proba : ndarray of shape (n_samples, n_classes)
            Probabilities in the order of ``classes_``.
        """
        return self._probabilities(self._decision(X))

    @staticmethod
    def _probabilities(scores):
        """:meth:`predict_proba` of scores of shape (n_samples, n_models), for a
        caller that has the scores already (``evaluate`` scores each chunk once)."""
        if scores.shape[1] == 1:
            positive = expit(scores[:, 0])
            return np.column_stack([1.0 - positive, positive])
        return softmax(scores, axis=1)

    def predict_log_proba(self, X):
        """Logarithm of :meth:`predict_proba`.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features) or list
            Samples, or raw samples as in :meth:`fit`.

        Returns
        -------
        log_proba : ndarray of shape (n_samples, n_classes)
        """
        return np.log(self.predict_proba(X))

    predict_log_proba = available_if(_has_log_loss)(predict_log_proba)


class _SketchRegressorMixin:
    """Targets, fit and prediction of the sketched regressors (squared error)."""

    def _n_models(self, classes):
        return 1

    def _loss_code(self, n_models):
        return Loss.SQUARED_ERROR

    def _encode_targets(self, y, *, partial, classes):
        return np.asarray(y, dtype=np.float64), None

    #: A new model's intercept starts at the first call's mean target where that mean
    #: is more than this many of the targets' standard deviations from 0, else at 0
    #: (see _start_intercept).
    _MEAN_START_SPREADS = 10.0

    def _start_intercept(self, state, y, sample_weight):
        """The intercept starts at the mean of the first call's targets (weighted by
        ``sample_weight``) where it lies more than ``_MEAN_START_SPREADS`` of their
        standard deviations from 0, else at 0. From 0, the 'normalized' step moves a
        prediction by a share ``eta0`` of its error, so an intercept hundreds of
        spreads away was not reached in a small table's passes (the latitudes of
        Los Angeles, 34 +- 0.09, 44 rows: test R^2 -850 to -920 over three seeds,
        0.17-0.18 from the mean). Nearer 0 the features learn the offset with the
        slope where a target grows with a feature, and MISSION from the mean scored
        0 to 2 points lower on 12 tables (food budgets, which grow with income, -2.0;
        a penguin's mass, a schools' spending -0.7)."""
        if not self.fit_intercept or not np.sum(sample_weight) > 0:
            return
        mean = np.average(y, weights=sample_weight)
        spread = math.sqrt(np.average((y - mean) ** 2, weights=sample_weight))
        if abs(mean) > self._MEAN_START_SPREADS * spread:
            state.intercept[:] = mean

    @_fit_context(prefer_skip_nested_validation=True)
    def partial_fit(self, X, y, sample_weight=None):
        """One pass of sketched SGD over ``(X, y)``, continuing the current model.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features) or list
            Training data, or raw samples: a list of token lists or of
            ``{name: value}`` dicts, whose names are hashed to 64-bit keys
            (the names of the selected features are kept).
        y : array-like of shape (n_samples,)
            Targets.
        sample_weight : array-like of shape (n_samples,), default=None
            Non-negative weights of the samples.

        Returns
        -------
        self : object
            Fitted estimator.
        """
        return self._fit_guarded(X, y, sample_weight, partial=True, n_passes=1)

    def predict(self, X):
        """Predicted targets: ``X @ coef_.T + intercept_``.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features) or list
            Samples, or raw samples as in :meth:`fit`.

        Returns
        -------
        y_pred : ndarray of shape (n_samples,)
            Predicted targets.
        """
        return self._decision(X).ravel()
