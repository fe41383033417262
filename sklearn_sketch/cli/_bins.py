"""Numeric CSV columns read as intervals too: a continuous column's every value is not
only a category of its own.

A CSV column is an attribute whose values are categories (``carrier=WN``). A
column of measurements (a delay in minutes, a temperature) holds hundreds of
distinct numbers, and a category per number learns nothing about a value it has
not seen. A numeric column is therefore read twice: its interval among the
quantiles of the first rows (``dep_delay=[40,79)``, crossed as the column is)
and its exact value (``dep_delay==57``: an identifier such as a flight number
is numeric too, and its values are what it says). On the flights out of New
York (is an arrival more than 15 minutes late, from carrier, airports, month,
hour and seven numeric columns; 80/20 split, AWM-Sketch with defaults) values
alone scored 0.843 (ROC AUC 0.909), intervals alone 0.893 (0.929), both 0.903
(0.937); with a flight number and a scheduled time for numeric columns,
values alone gave ROC AUC 0.684, intervals alone 0.677, both 0.684. The
edges are kept in the model so that ``predict`` and ``evaluate`` cut their
files alike.

A numeric column is read a third time as a number: its value divided by the
first rows' standard deviation, a feature named by the column alone
(``dep_delay``), so that a model can follow a quantity past the intervals, as a
linear model does. Held-out flights (80/20 split, the command line's
defaults, one pass; carrier, airports, hour and month with four numeric
columns: departure delay, distance, scheduled departure, air time): the
arrival delay as a regression (MISSION), R^2 .796 without the value and .867
with it (.892 since the estimator scales it by the root mean square of its
values, not its largest); arrivals late by 15 minutes .9040 -> .9044
(AWM-Sketch) and .9085 -> .9098 (MISSION). Held-out weather hours (origin, month, hour and six numeric
columns): the temperature .975 -> .988; a wet hour .9516 -> .9506 (AWM) and
.9470 -> .9472 (MISSION); ROC AUC up 0.001-0.003 in the four classifications.
The scales are kept in the model as the edges are.

A column of fewer than :data:`MIN_DISTINCT` distinct numbers is read as a
number too (not cut) when they are at least a tenth of its values and more
than two: a small table's measurements (iris's lengths: 35 distinct values in
112 rows), whose held-out values training never saw as categories. A month, an
hour or a flag among thousands of rows stays categories only: read as numbers
too they cost the weather's temperature 0.7 points of R^2 (.988 -> .981, one
pass; .996 -> .991 in five) and the flights' classifications 0.02-0.13 points.
Over five splits of scikit-learn's tables (CSV, five passes), the numbers of
such columns moved iris 0.926/0.932/0.910 -> 0.926/0.937/0.921 (MISSION, AWM,
BEAR), wine -0.4/0/0, and diabetes' R^2 0.389/0.376 -> 0.400/0.388 (MISSION, BEAR).
"""
import math

import numpy as np

#: Rows whose values decide which columns are numeric, and cut them; intervals a
#: numeric column is cut into by default (``--bins``).
BIN_ROWS, DEFAULT_BINS = 10_000, 16
#: A numeric column of fewer distinct values (month, hour, a count) stays categories.
MIN_DISTINCT = 64


def numeric_bins(frame, columns, n_bins):
    """``{column: edges}`` of the numeric columns of ``frame`` (text, as read).

    A column is numeric when every value it holds reads as a finite number and
    it holds at least :data:`MIN_DISTINCT` distinct ones; its edges are the
    distinct quantiles of its values at ``1/n_bins, ..., (n_bins-1)/n_bins``.
    None for ``n_bins`` 0 or 1 (every column categories).

    Examples
    --------
    >>> import pandas as pd
    >>> frame = pd.DataFrame({"delay": [str(v) for v in range(100)],
    ...                       "carrier": ["AA", "UA"] * 50})
    >>> numeric_bins(frame, ["delay", "carrier"], 4)
    {'delay': [24.75, 49.5, 74.25]}
    """
    if n_bins < 2:
        return {}
    bins = {}
    for column in columns:
        text = frame[column].dropna()
        values = np.asarray(_numbers(text), dtype=np.float64)
        if (not values.size or not np.isfinite(values).all()
                or np.unique(values).size < MIN_DISTINCT):
            continue
        edges = np.unique(np.quantile(values, np.arange(1, n_bins) / n_bins))
        bins[column] = [float(e) for e in edges]
    return bins


def numeric_scales(frame, columns):
    """``{column: scale}``: the standard deviation of the values in ``frame`` (text,
    as read) of each of ``columns`` that holds quantities: every value reads as a
    finite number, and the distinct values are at least :data:`MIN_DISTINCT` or at
    least a tenth of the values (and more than two). A column of few values
    among many rows (a month, an hour, a flag) stays categories only.

    Examples
    --------
    >>> import pandas as pd
    >>> numeric_scales(pd.DataFrame({"delay": ["1", "3", "5"], "carrier": ["AA"] * 3}),
    ...                ["delay", "carrier"])
    {'delay': 2.0}
    """
    scales = {}
    for column in columns:
        values = _numbers(frame[column].dropna())
        if not values.size or not np.isfinite(values).all():
            continue
        distinct = np.unique(values).size
        if distinct < MIN_DISTINCT and (distinct < 3 or distinct < values.size / 10):
            continue
        scale = float(values.std(ddof=1))
        if math.isfinite(scale) and scale > 0.0:
            scales[column] = scale
    return scales


def check_scales(scales, columns):
    """Whether ``scales`` is ``{column: scale}`` over ``columns`` with finite positive
    scales (the model file's CSV metadata)."""
    return isinstance(scales, dict) and all(
        column in columns and isinstance(scale, float) and math.isfinite(scale) and scale > 0
        for column, scale in scales.items())


def _numbers(text):
    """The values of a text Series as floats (NaN where one is not a number)."""
    import pandas as pd

    return pd.to_numeric(text, errors="coerce").to_numpy(dtype=np.float64)


def interval_names(edges):
    """The names of the ``len(edges) + 1`` intervals cut by ``edges``.

    Examples
    --------
    >>> interval_names([10.0, 25.0])
    ['[-inf,10)', '[10,25)', '[25,inf)']
    """
    text = ["-inf", *(format(e, ".6g") for e in edges), "inf"]
    return [f"[{a},{b})" for a, b in zip(text, text[1:])]


def binned(values, edges):
    """The interval names of a text Series ``values`` (object array; a missing or
    non-numeric value stays missing, as a category column's missing value does).

    Examples
    --------
    >>> import pandas as pd
    >>> binned(pd.Series(["3", "10", "40", None, "n/a"]), [10.0, 25.0]).tolist()
    ['[-inf,10)', '[10,25)', '[25,inf)', nan, nan]
    """
    return intervals(_numbers(values), edges)


def intervals(numbers, edges):
    """The interval names of float ``numbers`` (NaN: missing), as :func:`binned`."""
    names = np.array(interval_names(edges) + [math.nan], dtype=object)
    index = np.searchsorted(np.asarray(edges, dtype=np.float64), numbers, side="right")
    index[~np.isfinite(numbers)] = len(edges) + 1
    return names[index]


def check_bins(bins, columns):
    """Whether ``bins`` is ``{column: edges}`` over ``columns`` with increasing finite
    edges (the model file's CSV metadata)."""
    return isinstance(bins, dict) and all(
        column in columns and isinstance(edges, list) and 1 <= len(edges) <= 1000
        and all(isinstance(e, float) and math.isfinite(e) for e in edges)
        and all(a < b for a, b in zip(edges, edges[1:]))
        for column, edges in bins.items())
