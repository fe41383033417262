"""Which attributes, and which combinations of them, make a row an outlier.

The Weight-Median Sketch paper's section 8.1: a classifier of outliers against
inliers, trained on the rows' attributes and their crosses in bounded memory,
names the combinations whose presence most raises the odds of an outlier; a
small Count-Sketch of supports gives each its relative risk.
"""
import math
import re
from collections.abc import Iterator
from functools import partial
from itertools import combinations, compress, repeat
from numbers import Integral, Real

import numpy as np
from sklearn.base import BaseEstimator, clone
from sklearn.utils._param_validation import HasMethods, Interval, Options
from sklearn.utils.validation import check_is_fitted

from ._base import largest_heap, largest_sketch_width, parse_memory_budget
from ._names import NAME_OVERHEAD, reserved_name_bytes
from ._core import CountSketch
from ._heap_counts import HeapCounts, heap_keys, significant_counts
from ._intervals import is_quantity, quantile_edges
from ._raw_features import one_sparse_rows
from ._tables import COUNT, MEMORY_BUDGET, POSITIVE_INT, SEED, SHARE, FittedTable, result_table
from .feature_extraction import FeatureCrosser
from .feature_extraction._crossing import (
    CROSS_SEPARATOR,
    _columns,
    column_numbers,
    holds_numbers,
)

_RULE = re.compile(r"^\s*(?P<metric>[^<>=\s]+)\s*(?P<op>>=|<=|>|<)\s*"
                   r"(?P<quantile>q)?(?P<value>[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?)\s*$")

__all__ = ["ExactExplainer", "HeavyHittersExplainer", "OutlierExplainer", "QuantileStream",
           "parse_rule", "quantile_of"]

#: Step of the default classifier. A 1-sparse example moves one weight by about
#: eta0 (its ||x||^2 is 1), so the weight is an average over the attribute's last
#: ~1/eta0 rows. Pearson correlation of the heap's weights with the exact log
#: relative risk (flights out of New York, dep_delay > q0.8, order 1, 128KB):
#: eta0 1.0: 0.70, 0.3: 0.85, 0.1: 0.88, 0.05: 0.90, 0.03: 0.88, 0.01: 0.82.
DEFAULT_ETA0 = 0.05

#: Columns of ``explanations_``.
EXPLANATION_COLUMNS = ("feature", "order", "weight", "relative_risk", "support", "outliers",
                       "rows")


def parse_rule(rule):
    """``(metric, operator, value, is_quantile)`` of a rule such as ``"dep_delay > q0.8"``.

    Parameters
    ----------
    rule : str
        ``METRIC OP VALUE``: OP one of ``>``, ``>=``, ``<``, ``<=``; VALUE a
        number, or ``q`` and a quantile in (0, 1) of the metric.

    Returns
    -------
    metric : str
    op : str
    value : float
    is_quantile : bool

    Examples
    --------
    >>> from sklearn_sketch.explain import parse_rule
    >>> parse_rule("dep_delay > q0.8"), parse_rule("arr_delay<=-5")
    (('dep_delay', '>', 0.8, True), ('arr_delay', '<=', -5.0, False))
    """
    match = _RULE.match(rule) if isinstance(rule, str) else None
    if match is None:
        raise ValueError(f"outlier rule {rule!r} is not METRIC OP VALUE, e.g. "
                         "'dep_delay > q0.8' (a quantile) or 'dep_delay > 30'")
    value, is_quantile = float(match["value"]), match["quantile"] is not None
    if is_quantile and not 0 < value < 1:
        raise ValueError(f"the quantile of rule {rule!r} must be in (0, 1), got {value}")
    return match["metric"], match["op"], value, is_quantile


def _apply(op, values, threshold):
    return {">": np.greater, ">=": np.greater_equal, "<": np.less,
            "<=": np.less_equal}[op](values, threshold)


#: Accuracy parameter of the KLL quantile sketches of outlier rules (rank error ~0.3%).
KLL_K = 1000


#: Values a :class:`QuantileStream` keeps to read its quantiles exactly (8 MiB).
EXACT_QUANTILE_VALUES = 1 << 20


def quantile_of(values, q):
    """The ``q`` quantile of ``values``: the smallest value at least a ``q`` share of
    them are at most (NumPy's ``'inverted_cdf'``, the definition DataSketches' KLL
    sketch estimates), exactly.

    Parameters
    ----------
    values : ndarray of float64
        The metric's values (no NaN).
    q : float
        The quantile, in (0, 1).

    Returns
    -------
    threshold : float

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_sketch.explain import quantile_of
    >>> quantile_of(np.arange(100_001, dtype=float), 0.8)
    80000.0
    """
    return float(_quantiles(values, q))


def _quantiles(values, ranks):
    """:func:`quantile_of` at each of ``ranks``."""
    return np.quantile(np.asarray(values, dtype=np.float64), ranks, method="inverted_cdf")


class QuantileStream:
    """Quantiles of numbers that come in chunks, in bounded memory.

    The first ``exact_values`` numbers are kept, and while the stream holds no
    more its quantiles are exact (:func:`quantile_of`) and the same on every
    run; past them, every number goes to Apache DataSketches' KLL sketch
    (``k``: a few kilobytes, rank error about 0.3% at ``k=1000``), whose
    compactions flip coins that cannot be seeded, so two runs may pick
    neighbouring values. Read alone, the KLL sketch of a 5,000-row file's
    delays gave a 0.9 quantile of 14.2 in one run of three, 14.3 in the others.

    Parameters
    ----------
    exact_values : int, default=1048576
        Numbers kept exactly (8 bytes each).
    k : int, default=1000
        The KLL sketch's accuracy parameter.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_sketch.explain import QuantileStream
    >>> stream = QuantileStream()
    >>> for start in range(0, 100_001, 25_000):
    ...     stream.update(np.arange(start, min(start + 25_000, 100_001), dtype=float))
    >>> stream.quantiles([0.5, 0.8]).tolist()
    [50000.0, 80000.0]
    """

    def __init__(self, exact_values=EXACT_QUANTILE_VALUES, k=KLL_K):
        self.exact_values = exact_values
        self.k = k
        self._kept, self.n_values, self._sketch = [], 0, None

    def update(self, values):
        """Add ``values`` (float64, no NaN) to the stream."""
        values = np.asarray(values, dtype=np.float64)
        self.n_values += values.size
        if self._sketch is None and self.n_values <= self.exact_values:
            self._kept.append(values.copy())
            return
        if self._sketch is None:
            try:
                from datasketches import kll_doubles_sketch
            except ImportError:  # pragma: no cover - the explain extra installs it
                raise ImportError("a quantile of a long stream needs Apache DataSketches: "
                                  "pip install 'sklearn-sketch[explain]'") from None
            self._sketch = kll_doubles_sketch(self.k)
            for kept in self._kept:
                self._sketch.update(kept)
            self._kept = []
        self._sketch.update(np.ascontiguousarray(values))

    def is_empty(self):
        """Whether no number came."""
        return self.n_values == 0

    def quantiles(self, ranks):
        """The quantiles at ``ranks`` (each in [0, 1]), as :func:`quantile_of` reads them."""
        ranks = np.asarray(ranks, dtype=np.float64)
        if self._sketch is not None:
            return np.array([self._sketch.get_quantile(r) for r in ranks.tolist()])
        return _quantiles(np.concatenate(self._kept), ranks)


def _risk(outliers, support, n_outliers, n_rows):
    """Relative risk ``P(outlier | in) / P(outlier | out)`` from counts, each side's
    outliers counted half an outlier more over one row more (Haldane and Anscombe's
    correction, finite when a side has no outlier).

    Uncorrected, a combination of nearly every row whose few other rows hold no
    outlier read a risk capped at the number of rows: of 3,322 planes, the 3,292
    "Fixed wing multi engine" ones held the 295 of more than 200 seats, and the 30
    others none, a risk of 298 that ranked first; corrected, 5.5. No row outside
    (a constant column) makes it 1: nothing to compare with.
    """
    inside = (outliers + 0.5) / (support + 1.0)
    outside = (n_outliers - outliers + 0.5) / (n_rows - support + 1.0)
    return np.where(n_rows - support > 0, inside / outside, 1.0)


def _kept_rows(X, kept):
    """The rows of ``X`` (a DataFrame or a list of dicts) where ``kept`` is True."""
    if kept.all():
        return X
    return X[kept] if hasattr(X, "iloc") else list(compress(X, kept))


def _redundant(names, support, outliers, rows):
    """Mask of the crosses that cover the same rows as one of their parts in the table.

    A cross's rows are a subset of each part's; equal counts over the same window
    make them the same rows (``tailnum=N1^carrier=UA`` when every flight of N1 is
    UA's, or any cross with a constant column), so the part alone explains as much.
    """
    counts = {name: (s, o, r) for name, s, o, r in zip(names, support, outliers, rows)}
    redundant = np.zeros(len(names), dtype=bool)
    for i, name in enumerate(names):
        parts = name.split(CROSS_SEPARATOR)
        redundant[i] = any(counts.get(CROSS_SEPARATOR.join(sub)) == counts[name]
                           for size in range(1, len(parts))
                           for sub in combinations(parts, size))
    return redundant


def _quantity_edges(X, columns, n_bins):
    """``{column: edges}`` of the ``columns`` of quantities in rows ``X`` (numbers:
    :func:`~sklearn_sketch._intervals.is_quantity`), cut at their ``1/n_bins``, ...
    quantiles there."""
    edges = {}
    for column, values in zip(columns, _columns(X, columns)):
        if not holds_numbers(values):
            continue
        numbers = column_numbers(values)
        numbers = numbers[np.isfinite(numbers)]
        if numbers.size and is_quantity(numbers, n_bins):
            edges[column] = quantile_edges(partial(_quantiles, numbers), n_bins)
    return edges


def _constant_values(names):
    """``{field: value}`` of the fields with one value in every row of a block of
    crossed rows (a :class:`~sklearn_sketch.feature_extraction.CrossNames`)."""
    return {field: values[0] for field, values, codes in zip(names.fields, names.uniques,
                                                            names.codes.T)
            if len(values) == 1 and codes.size and (codes >= 0).all()}


def _with_constant_part(names, constant):
    """Mask of the features with a part ``field=value`` of a field in ``constant``."""
    parts = {f"{field}={value}" for field, value in constant.items()}
    return np.array([any(part in parts for part in name.split(CROSS_SEPARATOR))
                     for name in names.tolist()], dtype=bool)


def _table(names, weights, risk, support, outliers, rows):
    """``explanations_``: a DataFrame when pandas is installed, else a dict of arrays."""
    order = np.array([name.count(CROSS_SEPARATOR) + 1 for name in names.tolist()],
                     dtype=np.int64)
    rows = np.broadcast_to(np.asarray(rows, dtype=np.float64), support.shape).copy()
    return result_table(EXPLANATION_COLUMNS,
                        (names, order, weights, risk, support, outliers, rows))


class OutlierExplainer(BaseEstimator):
    """Name the attribute combinations that make rows outliers, in bounded memory.

    Each row's attributes and their crosses (:class:`FeatureCrosser`, up to
    ``max_order`` fields) train a classifier of outliers against inliers: by
    default an Active-Set WM-Sketch, with one 1-sparse example per attribute
    or cross, as the WM-Sketch paper does (its footnote 4: a whole row as one
    example lets the combinations of a row share its credit, and the weights
    stop tracking each one's own risk). The heaviest positive weights name
    the combinations that most raise the odds of an outlier; two Count-Sketch
    tables of the same keys count their rows and their outlier rows, for the
    relative risk ``P(outlier | combination) / P(outlier | not combination)``
    (each side's outliers counted half an outlier more over one row more, so
    that a side without outliers gives a finite risk) and the support.
    Everything lives inside ``memory_budget`` real bytes.

    Outliers are given as labels (``y``, 1 for an outlier) or by a rule on a
    metric column: ``"dep_delay > q0.8"`` marks the rows above the metric's
    0.8 quantile on the data of the first ``fit`` or ``partial_fit`` call
    (exactly, :func:`quantile_of`), then kept (``threshold_``), so a stream
    is judged by one threshold; ``"dep_delay > 30"`` is a fixed
    threshold. Rows whose metric is missing are skipped and counted.

    Parameters
    ----------
    outlier : str, default=None
        The outlier rule (``METRIC OP VALUE``, VALUE a number or ``q`` and a
        quantile); None: pass ``y``.
    columns : list of str, default=None
        The attribute columns; default every column but the metric.
    max_order : {1, 2, 3}, default=2
        Crosses of up to this many attributes.
    crosses : list of tuple of str, default=None
        The crosses to add instead of every combination up to ``max_order``.
    estimator : classifier, default=None
        A classifier of this package with a heap; default
        ``AWMSketchClassifier(learning_rate='normalized', eta0=0.05)``: a
        1-sparse example moves one
        weight by about ``eta0``, and a smaller step than the classifier's
        default averages each weight over more rows (on the flights out of New
        York the correlation of the weights with the exact log relative risk
        went from 0.70 at the default 1.0 to 0.90 at 0.05). It is given the
        budget left by the counts when it has a ``memory_budget`` parameter.
    memory_budget : int or str, default="128KB"
        Real bytes of the whole explainer: the classifier (names included),
        the heap features' counts and the two count sketches.
    count_share : float, default=0.1
        Share of the budget for the two count sketches (depth 3). The heap's
        combinations are counted exactly from the chunk they entered on
        (``heap_counts_``); the sketches give their counts before it where
        those stand out of the sketches' noise (else a combination's counts,
        and its relative risk, cover the rows since it entered). On the
        flights out of New York at 128KB (``benchmarks/bench_explain.py``),
        the median error of the log relative risk of the 20 riskiest order-2
        combinations fell from 0.80 to 0.26 (0.82 to 0.04 in chunks of
        100,000 rows) against sketches of 0.2 of the budget counting
        everything; the weights' correlation with the exact log relative
        risk went from 0.891 and 0.854 to 0.894 and 0.877 (orders 1 and 2),
        the order-2 recall from 0.093 to 0.087.
    heap_share : float, default=0.5
        Share of the classifier's bytes for its heap and the names of its
        features, when the classifier sizes itself by ``memory_budget`` and
        no ``n_features_to_select`` is given (the WM-Sketch paper's explanation
        shape spends half its cost model on the heap).
    one_sparse : bool, default=True
        One example per attribute or cross (the paper's setting); False
        trains on each row as one example.
    min_support : float, default=0.001
        Combinations in fewer than this share of the rows are left out of
        ``explanations_`` (their relative risk is noise).
    top : int, default=20
        Rows of ``explanations_`` shown by ``repr``.
    bins : int, default=10
        An attribute column of quantities (numbers, more than ``2 * bins``
        distinct ones on the rows of the first ``fit`` or ``partial_fit``
        call, some with a fraction or at least three distinct ones negative:
        temperatures, prices, delays in minutes) is read as ``bins``
        intervals between its quantiles there (``temp=[32.1,35)``), as the
        command line reads them (``bin_edges_``); 0 reads every value as a
        category. Whole numbers never negative (flight numbers, hours, codes)
        and text always are.
    chunk_rows : int, default=50000
        Rows crossed at a time by ``fit`` (memory grows with it).
    random_state : int, default=None
        Seed of the classifier's and count sketches' hashes.

    Attributes
    ----------
    explanations_ : pandas.DataFrame or dict of ndarray
        One row per combination of the classifier's heap with a positive
        weight and at least ``min_support``: ``feature`` (its name),
        ``order``, ``weight``, ``relative_risk``, ``support`` (rows),
        ``outliers`` (outlier rows) and ``rows`` (the rows these cover), by
        decreasing relative risk; a cross with the same counts as one of its
        parts in the table covers the same rows and is left out (the part
        says as much, e.g. ``tailnum=N1^carrier=UA`` when N1 flies for UA
        alone). Counts are exact from the chunk the combination entered the
        heap on, plus the count sketches' estimates before it where they
        stand out of their noise (``rows`` is then every row); otherwise
        over the rows since it entered (see :meth:`recount`). A dict of
        arrays when pandas is not installed.
    estimator_ : classifier
        The fitted classifier.
    heap_counts_ : HeapCounts
        The heap features' rows and outlier rows, and the rows and outlier
        rows of the window they cover.
    threshold_ : float or None
        The metric's threshold of the rule (None with labels).
    bin_edges_ : dict
        ``{column: edges}`` of the columns read by intervals (see ``bins``).
    constant_fields_ : dict
        ``{field: value}`` of the attribute fields with that one value in every
        row so far (``year=2013`` in a year's flights). Such an attribute
        tells no row from another, and a cross with it covers the same rows
        as its other parts: they are left out of ``explanations_`` (in the
        flights out of New York without ``columns``, 18 crosses with
        ``year=2013`` among the 87 explanations).
    n_rows_, n_outliers_, n_skipped_ : int
        Rows seen, outlier rows among them, rows skipped for a missing metric.
    memory_bytes_ : int
        Real bytes of the classifier and the count sketches; at most
        ``memory_budget``.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_sketch.explain import OutlierExplainer
    >>> rng = np.random.default_rng(0)
    >>> rows = [{"carrier": c, "dest": d, "delay": 0.0}
    ...         for c, d in zip(rng.choice(list("ABCD"), 4000), rng.choice(list("WXYZ"), 4000))]
    >>> for row in rows:
    ...     row["delay"] = 60.0 if row["carrier"] == "B" and row["dest"] == "Z" else 1.0
    >>> explainer = OutlierExplainer("delay > 30", random_state=0).fit(rows)
    >>> explainer.explanations_["feature"][0]
    'carrier=B^dest=Z'
    """

    explanations_ = FittedTable("_explain")

    _parameter_constraints = {
        "outlier": [str, None],
        "columns": ["array-like", None],
        "max_order": [Interval(Integral, 1, 3, closed="both")],
        "crosses": ["array-like", None],
        "estimator": [HasMethods(["partial_fit"]), None],
        "memory_budget": MEMORY_BUDGET,
        "count_share": SHARE,
        "heap_share": SHARE,
        "one_sparse": ["boolean"],
        "min_support": [Interval(Real, 0, 1, closed="both")],
        "top": COUNT,
        "bins": [Options(Integral, {0}), Interval(Integral, 2, None, closed="left")],
        "chunk_rows": POSITIVE_INT,
        "random_state": SEED,
    }

    def __init__(self, outlier=None, *, columns=None, max_order=2, crosses=None, estimator=None,
                 memory_budget="128KB", count_share=0.1, heap_share=0.5, one_sparse=True,
                 min_support=0.001, top=20, bins=10, chunk_rows=50_000, random_state=None):
        self.outlier = outlier
        self.columns = columns
        self.max_order = max_order
        self.crosses = crosses
        self.estimator = estimator
        self.memory_budget = memory_budget
        self.count_share = count_share
        self.heap_share = heap_share
        self.one_sparse = one_sparse
        self.min_support = min_support
        self.top = top
        self.bins = bins
        self.chunk_rows = chunk_rows
        self.random_state = random_state

    # ------------------------------------------------------------------ fitting
    def fit(self, X, y=None):
        """Train on every row of ``X`` (in chunks of ``chunk_rows``), from scratch.

        Parameters
        ----------
        X : pandas.DataFrame or list of dict
            Rows of attributes (and the rule's metric).
        y : array-like of shape (n_rows,), default=None
            1 for an outlier, 0 for an inlier; required without ``outlier``.

        Returns
        -------
        self : OutlierExplainer
        """
        self._check_params()
        for attribute in ("crosser_", "threshold_"):
            self.__dict__.pop(attribute, None)
        threshold = self._rule_threshold(X) if self.outlier is not None else None
        for rows, part_y in self._chunks(X, y):
            self._partial_fit(rows, part_y, threshold, edges_from=X)
        return self

    def _chunks(self, X, y):
        """``(rows, labels)`` of each chunk of ``chunk_rows`` rows of ``X`` (one chunk
        for empty data, whose error comes from the fit)."""
        for start in range(0, max(len(X), 1), self.chunk_rows):
            rows = X.iloc[start:start + self.chunk_rows] if hasattr(X, "iloc") \
                else X[start:start + self.chunk_rows]
            yield rows, None if y is None else np.asarray(y)[start:start + self.chunk_rows]

    def partial_fit(self, X, y=None):
        """Train on one more chunk of rows (one pass); the first call sizes the model.

        Parameters
        ----------
        X : pandas.DataFrame or list of dict
            Rows of attributes (and the rule's metric).
        y : array-like of shape (n_rows,), default=None
            1 for an outlier, 0 for an inlier; required without ``outlier``.

        Returns
        -------
        self : OutlierExplainer
        """
        self._check_params()
        threshold = getattr(self, "threshold_", None)
        if self.outlier is not None and threshold is None:
            threshold = self._rule_threshold(X)
        return self._partial_fit(X, y, threshold)

    def recount(self, X, y=None):
        """Count the heap's combinations exactly over rows read again: a second pass.

        One pass counts a combination exactly from the chunk it entered the
        heap on; a late entrant whose earlier counts the sketches cannot tell
        from their noise has counts, and a relative risk, over the rows since
        then only (``rows`` in ``explanations_``). On rows sorted by time that
        window is a biased sample: on the flights out of New York, ``day=2``
        entered in the last chunk and read a relative risk of 3.1 over the
        2nd of September alone. When the rows can be read again (a DataFrame
        in memory, a file), this pass counts every combination of the heap
        over all of them, so every relative risk and support in
        ``explanations_`` is exact over the same rows. The heap and its
        weights do not change; the counts use the bytes they already had.

        Parameters
        ----------
        X : pandas.DataFrame, list of dict, or iterator of them
            The rows to count over (usually those the explainer was fitted
            on), or an iterator of chunks of them, e.g.
            ``pandas.read_csv(path, chunksize=100_000)``.
        y : array-like of shape (n_rows,), default=None
            1 for an outlier, 0 for an inlier, with ``X`` whole; required
            without ``outlier``.

        Returns
        -------
        self : OutlierExplainer

        Examples
        --------
        >>> from sklearn_sketch.explain import OutlierExplainer
        >>> rows = [{"hour": h % 24, "day": h // 24, "delay": float(h // 24 == 9 or h % 24 == 20)}
        ...         for h in range(24 * 10)]
        >>> explainer = OutlierExplainer("delay > 0.5", chunk_rows=48, random_state=0)
        >>> int(explainer.fit(rows).explanations_["rows"].min())  # late entrants' windows
        48
        >>> int(explainer.recount(rows).explanations_["rows"].min())  # every row
        240
        """
        check_is_fitted(self, "heap_counts_")
        if isinstance(X, Iterator) and y is not None:
            raise ValueError("recount takes y only with the rows whole, not in chunks")
        chunks = ((rows, None) for rows in X) if isinstance(X, Iterator) else self._chunks(X, y)
        keys = heap_keys(self.estimator_)
        counts, counted = HeapCounts(2, n_totals=2), np.zeros(0, dtype=np.int64)
        for rows, part_y in chunks:
            labels, kept = self._labels(rows, part_y, self.threshold_)
            matrix = self.crosser_.transform(_kept_rows(rows, kept)).X
            is_outlier = np.repeat(labels, np.diff(matrix.indptr)).astype(bool)
            counts.update(counted, keys, [matrix.indices, matrix.indices[is_outlier]],
                          lambda entering: np.zeros((len(entering), 4)),
                          totals=(labels.size, labels.sum()))
            counted = keys
        self.heap_counts_ = counts
        self.explanations_ = None  # built when read
        return self

    def _metric(self, X):
        metric = parse_rule(self.outlier)[0]
        if hasattr(X, "columns"):
            if metric not in X.columns:
                raise ValueError(f"the rule's metric {metric!r} is not a column; the data has "
                                 f"{list(X.columns)}")
            values = X[metric].to_numpy()
        else:
            values = np.array(list(map(dict.get, X, repeat(metric))), dtype=object)
        if values.dtype == object:
            values = values.copy()
            values[values == None] = np.nan  # noqa: E711 - elementwise
        try:
            return values.astype(np.float64)
        except (TypeError, ValueError):
            raise ValueError(f"the rule's metric {metric!r} must be numeric") from None

    def _rule_threshold(self, X):
        _, op, value, is_quantile = parse_rule(self.outlier)
        if not is_quantile:
            return value
        metric = self._metric(X)
        known = metric[~np.isnan(metric)]
        if known.size == 0:
            raise ValueError(f"the rule {self.outlier!r} has no row with a metric to set "
                             "its quantile from")
        return quantile_of(known, value)

    def _check_params(self):
        self._validate_params()
        if self.outlier is not None:
            parse_rule(self.outlier)

    def _labels(self, X, y, threshold):
        """Labels of the rows kept, and the mask of rows kept (metric known)."""
        if self.outlier is None:
            if y is None:
                raise ValueError("give the outliers: y (1 for an outlier) or an outlier rule")
            y = np.asarray(y)
            if y.shape != (len(X),) or not np.isin(y, (0, 1, False, True)).all():
                raise ValueError(f"y must hold one 0 or 1 per row ({len(X)} rows)")
            return y.astype(np.int64), np.ones(len(X), dtype=bool)
        _, op, _, _ = parse_rule(self.outlier)
        metric = self._metric(X)
        kept = ~np.isnan(metric)
        return _apply(op, metric[kept], threshold).astype(np.int64), kept

    def _start(self, X, labels, threshold, edges_from):
        """Check the first labels, learn the fields and cut the quantities (on the rows
        ``edges_from``), then set up the model."""
        if labels.size and labels.min() == labels.max():
            share = "all" if labels[0] else "none"
            raise ValueError(f"the outlier rule {self.outlier!r} makes {share} of the first "
                             f"{labels.size} rows outliers: nothing to tell apart"
                             if self.outlier else f"y marks {share} of the first "
                             f"{labels.size} rows as outliers: nothing to tell apart")
        metric = parse_rule(self.outlier)[0] if self.outlier is not None else None
        columns = self.columns
        if columns is None:
            fields = list(X.columns) if hasattr(X, "columns") else sorted(set().union(*X[:1000]))
            columns = [str(f) for f in fields if str(f) != metric]
        self.bin_edges_ = _quantity_edges(edges_from, columns, self.bins) if self.bins else {}
        self.crosser_ = FeatureCrosser(crosses=self.crosses, max_order=self.max_order,
                                       fields=columns, bin_edges=self.bin_edges_).fit(X)
        self.threshold_ = threshold
        self.constant_fields_ = None  # set by the first block of rows
        self.n_rows_ = self.n_outliers_ = self.n_skipped_ = 0
        self._start_model(X)

    def _start_model(self, X):
        """Size the classifier and the count sketches from the budget.

        The classifier's heap (entries and names) gets ``heap_share`` of what
        the counts leave, as the paper's shapes split their cost model between
        heap and sketch: the heap is what an explanation reads.
        """
        budget = parse_memory_budget(self.memory_budget)
        width = max(16, largest_sketch_width(int(budget * self.count_share) // 2, 3))
        seed = 0 if self.random_state is None else self.random_state
        self.counts_ = CountSketch(width, 3, random_state=seed + 1)
        self.outlier_counts_ = CountSketch(width, 3, random_state=seed + 1)
        if self.estimator is None:
            from .weight_median import AWMSketchClassifier
            # The step and schedule the explainer was measured with (bench_explain).
            estimator = AWMSketchClassifier(learning_rate="normalized", eta0=DEFAULT_ETA0,
                                            random_state=self.random_state)
        else:
            estimator = clone(self.estimator)
        left = budget - self.counts_.memory_bytes - self.outlier_counts_.memory_bytes
        params = estimator.get_params()
        self._rng = np.random.default_rng(seed)
        if self.one_sparse and params.get("shuffle"):
            estimator.set_params(shuffle=False)  # shuffled here, before the pass
        # Each heap feature also has its two counts and the two totals of their window
        # (HeapCounts), paid from the budget.
        self.heap_counts_ = HeapCounts(2, n_totals=2)
        tracked = self.heap_counts_.entry_bytes
        if "memory_budget" in params:
            capacity = params.get("n_features_to_select", 0)
            if capacity is None:
                sample = X.iloc[:1000] if hasattr(X, "iloc") else X[:1000]
                mean = self.crosser_.transform(sample).names.mean_name_bytes()
                capacity = max(1, largest_heap(self.heap_share * left,
                                               name_bytes=reserved_name_bytes(mean) + tracked))
                estimator.set_params(n_features_to_select=capacity)
            estimator.set_params(memory_budget=left - tracked * capacity)
        self.estimator_ = estimator

    def _partial_fit(self, X, y, threshold, edges_from=None):
        labels, kept = self._labels(X, y, threshold)
        if "crosser_" not in self.__dict__:
            self._start(X, labels, threshold, X if edges_from is None else edges_from)
        rows = self.crosser_.transform(_kept_rows(X, kept))
        self._update(rows, labels)
        if labels.size:
            constant = _constant_values(rows.names)
            self.constant_fields_ = constant if self.constant_fields_ is None else {
                field: value for field, value in self.constant_fields_.items()
                if constant.get(field) == value}
        self.n_rows_ += int(labels.size)
        self.n_outliers_ += int(labels.sum())
        self.n_skipped_ += int((~kept).sum())
        self.memory_bytes_ = self._memory_bytes()
        self.explanations_ = None  # built when read
        return self

    def _update(self, rows, labels):
        """Train the classifier and the counts on one block of crossed rows."""
        matrix = rows.X
        occurrence_labels = np.repeat(labels, np.diff(matrix.indptr))
        if self.one_sparse:
            # Attribute values are categories: every stored value is 1.0.
            examples, example_labels = one_sparse_rows(matrix.indices, occurrence_labels,
                                                       rows.names, self._rng)
        else:
            examples, example_labels = rows, labels
        previous = heap_keys(self.estimator_)
        if example_labels.size:
            self.estimator_.partial_fit(examples, example_labels, classes=[0, 1])
        outlier_keys = matrix.indices[occurrence_labels.astype(bool)]
        if "heaps_" in self.estimator_.__dict__:  # fitted
            # Counted exactly from the block a feature entered the heap on; before it,
            # see _counts_before.
            self.heap_counts_.update(
                previous, heap_keys(self.estimator_), [matrix.indices, outlier_keys],
                self._counts_before, totals=(labels.size, labels.sum()))
        self.counts_.update(matrix.indices, np.ones(matrix.nnz))
        self.outlier_counts_.update(outlier_keys, np.ones(outlier_keys.size))

    def _counts_before(self, keys):
        """Rows, outlier rows and the totals of their window, for features entering the
        heap: the count sketches' estimates over every row seen so far where they
        stand out of the sketches' noise, else nothing (the window starts now)."""
        rows = significant_counts(self.counts_, keys)
        outliers = np.minimum(significant_counts(self.outlier_counts_, keys), rows)
        known = rows > 0
        return np.stack([rows, np.where(known, outliers, 0.0),
                         np.where(known, self.n_rows_, 0.0),
                         np.where(known, self.n_outliers_, 0.0)], axis=1)

    def _memory_bytes(self):
        return (self.estimator_.memory_bytes_ + self.counts_.memory_bytes
                + self.outlier_counts_.memory_bytes + self.heap_counts_.nbytes)

    # ------------------------------------------------------------------ explaining
    def _explain(self):
        selected = self.estimator_.selected_features_
        weights = selected.weights[:, 0]
        positive = weights > 0
        keys, weights = selected.keys[positive], weights[positive]
        names = (selected.names[positive] if selected.names is not None
                 else keys.astype(str).astype(object))
        names = np.array([str(key) if name is None else name
                          for key, name in zip(keys.tolist(), names.tolist())], dtype=object)
        support, outliers, rows, outlier_rows = self.heap_counts_.query(
            keys, heap_keys(self.estimator_)).T
        # Over each feature's window: every row, or the rows since it entered the heap
        # when the sketches could not tell its earlier counts from their noise.
        risk = _risk(outliers, support, outlier_rows, rows)
        # The rows of the longest window: every row seen, or recounted.
        keep = (support >= self.min_support * rows.max(initial=0.0))
        keep[keep] = ~_redundant(names[keep].tolist(), support[keep], outliers[keep],
                                 rows[keep])
        keep = np.flatnonzero(keep)
        keep = keep[np.argsort(-risk[keep], kind="stable")]
        return self._table(names[keep], weights[keep], risk[keep], support[keep],
                           outliers[keep], rows[keep])

    def _table(self, names, *columns):
        """:func:`_table` of the features without a part of a constant field."""
        keep = ~_with_constant_part(names, self.constant_fields_ or {})
        return _table(names[keep], *(np.asarray(c)[keep] if np.ndim(c) else c
                                     for c in columns))

    def __repr__(self, N_CHAR_MAX=700):
        text = super().__repr__(N_CHAR_MAX)
        if "_explanations_" not in self.__dict__:
            return text
        table = self.explanations_
        rows = min(self.top, len(table["feature"]))
        lines = [f"{text}: {self.n_rows_:,} rows, {self.n_outliers_:,} outliers, "
                 f"{self.memory_bytes_:,} bytes",
                 f"{'relative risk':>13}  {'support':>9}  {'weight':>8}  feature"]
        for i in range(rows):
            lines.append(f"{table['relative_risk'][i]:13.2f}  {table['support'][i]:9.0f}  "
                         f"{table['weight'][i]:8.3f}  {table['feature'][i]}")
        return "\n".join(lines)

    def get_explanations(self, top=None):
        """The ``top`` rows of ``explanations_`` (every row by default).

        Parameters
        ----------
        top : int, default=None
            Rows to return.

        Returns
        -------
        explanations : pandas.DataFrame or dict of ndarray
        """
        check_is_fitted(self, "explanations_")
        if top is None:
            return self.explanations_
        if hasattr(self.explanations_, "iloc"):
            return self.explanations_.iloc[:top]
        return {name: column[:top] for name, column in self.explanations_.items()}


class ExactExplainer(OutlierExplainer):
    """The exact reference: every attribute combination counted, memory unbounded.

    The interface and the outlier rule of :class:`OutlierExplainer`; instead of
    a sketched classifier it counts the rows and outlier rows of every
    attribute and cross it meets (NumPy ``unique`` over each chunk's keys,
    merged into sorted arrays), so its memory grows with the number of
    distinct combinations: ``memory_bytes_`` reports it. ``explanations_``
    holds every combination with at least ``min_support``, by decreasing
    relative risk; ``weight`` is its log relative risk.

    Parameters
    ----------
    outlier : str, default=None
        The outlier rule, as for :class:`OutlierExplainer`.
    columns : list of str, default=None
        The attribute columns; default every column but the metric.
    max_order : {1, 2, 3}, default=2
        Crosses of up to this many attributes.
    crosses : list of tuple of str, default=None
        The crosses to add instead of every combination up to ``max_order``.
    min_support : float, default=0.001
        Combinations in fewer than this share of the rows are left out.
    top : int, default=20
        Rows of ``explanations_`` shown by ``repr``.
    bins : int, default=10
        Intervals a column of quantities is read by, as for
        :class:`OutlierExplainer` (0: every value a category).
    chunk_rows : int, default=50000
        Rows crossed at a time by ``fit``.

    Examples
    --------
    >>> from sklearn_sketch.explain import ExactExplainer
    >>> rows = [{"carrier": c, "delay": 60.0 if c == "B" else 1.0} for c in "ABCD" * 50]
    >>> table = ExactExplainer("delay > 30").fit(rows).explanations_
    >>> # 50 outliers of 50 rows against none of 150: (50.5 / 51) / (0.5 / 151)
    >>> table["feature"][0], round(float(table["relative_risk"][0]), 2)
    ('carrier=B', 299.04)
    """

    def __init__(self, outlier=None, *, columns=None, max_order=2, crosses=None,
                 min_support=0.001, top=20, bins=10, chunk_rows=50_000):
        self.outlier = outlier
        self.columns = columns
        self.max_order = max_order
        self.crosses = crosses
        self.min_support = min_support
        self.top = top
        self.bins = bins
        self.chunk_rows = chunk_rows

    def _start_model(self, X):
        self.keys_ = np.zeros(0, dtype=np.int64)
        self.support_ = np.zeros(0, dtype=np.int64)
        self.outlier_support_ = np.zeros(0, dtype=np.int64)
        self._chunk_names = []
        self._names_found = {}

    def _update(self, rows, labels):
        matrix = rows.X
        is_outlier = np.repeat(labels, np.diff(matrix.indptr)).astype(np.int64)
        keys = np.concatenate([self.keys_, matrix.indices])
        support = np.concatenate([self.support_, np.ones(matrix.nnz, dtype=np.int64)])
        outliers = np.concatenate([self.outlier_support_, is_outlier])
        self.keys_, inverse = np.unique(keys, return_inverse=True)
        self.support_ = np.bincount(inverse, weights=support).astype(np.int64)
        self.outlier_support_ = np.bincount(inverse, weights=outliers).astype(np.int64)
        self._chunk_names.append(rows.names)

    def _memory_bytes(self):
        return self.keys_.nbytes + self.support_.nbytes + self.outlier_support_.nbytes

    def _explain(self):
        support = self.support_.astype(np.float64)
        outliers = self.outlier_support_.astype(np.float64)
        risk = _risk(outliers, support, float(self.n_outliers_), float(self.n_rows_))
        keep = np.flatnonzero(support >= max(self.min_support * self.n_rows_, 1.0))
        keep = keep[np.argsort(-risk[keep], kind="stable")]
        # Names found once stay found: each call looks up only the keys new to the table.
        kept, names = self.keys_[keep].tolist(), self._names_found
        missing = [k for k in kept if k not in names]
        for lookup in self._chunk_names:
            if not missing:
                break
            names.update(lookup.lookup(missing))
            missing = [k for k in missing if k not in names]
        labels = np.array([names.get(k, str(k)) for k in kept], dtype=object)
        return self._table(labels, np.log(np.maximum(risk[keep], 1e-12)), risk[keep],
                           support[keep], outliers[keep], float(self.n_rows_))


class HeavyHittersExplainer(OutlierExplainer):
    """The MacroBase baseline: frequent combinations of the outlier rows, in bounded memory.

    The interface and the outlier rule of :class:`OutlierExplainer`; instead
    of a classifier, two frequent-items sketches of Apache DataSketches (a
    Space-Saving family sketch, the peer a user would reach for) count the
    attributes and crosses of the outlier rows and of all rows. It retrieves
    the frequent combinations of the outliers, with the relative risk of
    their two counts: frequent, not necessarily discriminative (the WM-Sketch
    paper's Fig. 8). Memory: 18 bytes a map entry (an 8-byte key, an 8-byte
    count and a state, as its C++ map holds them), two thirds of
    ``memory_budget`` to the outliers' sketch, and the names of the items it
    holds (12 bytes and their UTF-8 bytes each) inside the budget too.
    DataSketches' Python API takes one item a call, so this baseline loops in
    Python over the attribute occurrences.

    Parameters
    ----------
    outlier : str, default=None
        The outlier rule, as for :class:`OutlierExplainer`.
    columns : list of str, default=None
        The attribute columns; default every column but the metric.
    max_order : {1, 2, 3}, default=2
        Crosses of up to this many attributes.
    crosses : list of tuple of str, default=None
        The crosses to add instead of every combination up to ``max_order``.
    memory_budget : int or str, default="128KB"
        Real bytes of both sketches and the names.
    min_support : float, default=0.001
        Combinations in fewer than this share of the rows are left out.
    top : int, default=20
        Rows of ``explanations_`` shown by ``repr``.
    bins : int, default=10
        Intervals a column of quantities is read by, as for
        :class:`OutlierExplainer` (0: every value a category).
    chunk_rows : int, default=50000
        Rows crossed at a time by ``fit``.

    Examples
    --------
    >>> from sklearn_sketch.explain import HeavyHittersExplainer
    >>> rows = [{"carrier": c, "delay": 60.0 if c == "B" else 1.0} for c in "ABCD" * 50]
    >>> HeavyHittersExplainer("delay > 30").fit(rows).explanations_["feature"][0]
    'carrier=B'
    """

    #: Bytes of a map entry of a frequent-items sketch.
    ENTRY_BYTES = 18

    def __init__(self, outlier=None, *, columns=None, max_order=2, crosses=None,
                 memory_budget="128KB", min_support=0.001, top=20, bins=10,
                 chunk_rows=50_000):
        self.outlier = outlier
        self.columns = columns
        self.max_order = max_order
        self.crosses = crosses
        self.memory_budget = memory_budget
        self.min_support = min_support
        self.top = top
        self.bins = bins
        self.chunk_rows = chunk_rows

    def _start_model(self, X):
        from datasketches import frequent_items_sketch

        budget = parse_memory_budget(self.memory_budget)
        sample = X.iloc[:1000] if hasattr(X, "iloc") else X[:1000]
        mean = self.crosser_.transform(sample).names.mean_name_bytes()
        # A sketch of 2**lg entries tracks up to 0.75 * 2**lg items: name those.
        per_entry = self.ENTRY_BYTES + 0.75 * (NAME_OVERHEAD + 1.25 * mean)
        lg_outliers = max(3, int(math.log2(budget * 2 / 3 / per_entry)))
        left = budget - per_entry * 2**lg_outliers
        lg_all = max(3, int(math.log2(max(left, 8 * self.ENTRY_BYTES) / self.ENTRY_BYTES)))
        self.outlier_items_ = frequent_items_sketch(lg_outliers)
        self.all_items_ = frequent_items_sketch(lg_all)
        self._sizes = (2**lg_outliers, 2**lg_all)
        self._names = {}

    def _update(self, rows, labels):
        from datasketches import frequent_items_error_type

        keys = rows.X.indices
        outlier = np.repeat(labels, np.diff(rows.X.indptr)).astype(bool)
        for key in keys.tolist():
            self.all_items_.update(key)
        for key in keys[outlier].tolist():
            self.outlier_items_.update(key)
        held = [item[0] for item in self.outlier_items_.get_frequent_items(
            frequent_items_error_type.NO_FALSE_NEGATIVES)]
        names = {k: self._names[k] for k in held if k in self._names}
        names.update(rows.names.lookup([k for k in held if k not in names]))
        self._names = names

    def _memory_bytes(self):
        names = sum(NAME_OVERHEAD + len(name.encode()) for name in self._names.values())
        return self.ENTRY_BYTES * sum(self._sizes) + names

    def _explain(self):
        from datasketches import frequent_items_error_type

        found = self.outlier_items_.get_frequent_items(
            frequent_items_error_type.NO_FALSE_NEGATIVES)
        keys = [item[0] for item in found]
        outliers = np.array([item[1] for item in found], dtype=np.float64)
        support = np.maximum(np.array([self.all_items_.get_estimate(k) for k in keys],
                                      dtype=np.float64), outliers)
        risk = _risk(outliers, support, float(self.n_outliers_), float(self.n_rows_))
        keep = np.flatnonzero(support >= self.min_support * self.n_rows_)
        keep = keep[np.argsort(-risk[keep], kind="stable")]
        names = np.array([self._names.get(keys[i], str(keys[i])) for i in keep.tolist()],
                         dtype=object)
        return self._table(names, np.log(np.maximum(risk[keep], 1e-12)), risk[keep],
                           support[keep], outliers[keep], float(self.n_rows_))
