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

A number is read from the first rows' mean, ``(value - mean) / scale``
(:func:`numeric_means`; a missing value is then the mean). Read from 0,
a column whose values lie far from 0 for their spread (a fuel's share of costs,
0.6 give or take 0.05) moves as the intercept does, and squared-error steps on
the two fight. Measured on 68 regressions the package index ships (R's data
sets, ISLP, river, causaldata, plotly, pingouin; 70/30 random splits, the
command line's defaults, one seed): R^2 up on 29 by more than 0.005, down on
11; the fuel's share .28 -> .82 (``Ridge`` .99), heating costs .62 -> .97,
Nerlove's .67 -> .93, traffic deaths .66 -> .83, ISLP's car seats .70 -> .80;
the largest losses .07 (labour, wages of 400 firms, as --epochs auto chose 5
passes for 50) and .04. On the flights' and weather's regressions of above R^2
moved +0.001 to +0.004. A classification read from 0 until the mean was measured
on 398 classifications (R's tables by their last column and by another at
random, statsmodels', vega_datasets' and palmerpenguins' tables by each column;
70/30 splits): accuracy up on 91 by more than 0.005, down on 57, mean +0.0016
(on the 256 of at least 100 held-out rows 61 and 26, +0.0020; R's 180 by their
last column on two more splits 42 and 35, 46 and 33); R's ``car90``
0.32 -> 0.47 (``LogisticRegression`` 0.47), Palmer's penguins' species 0.952 ->
0.981 (0.990); held-out flights late by 15 minutes and wet weather hours, MISSION,
AWM and BEAR, accuracy -0.0006 to +0.0029, ROC AUC within 0.0008.

A column without a name whose values are whole numbers, each once, is the row
number an export writes first (R's ``write.csv``, pandas' ``to_csv`` unless told
not to) and is not read (:func:`row_numbers`): in a file sorted by a column it
says the label, and a model that learned it predicts nothing of new rows. On
R's data sets split at random it made a third of them look better than they
are: R's ``titanic``, sorted by class, age, sex and survival, 0.904 with it and
0.757 without (``LogisticRegression`` without it 0.757); Galton's heights R^2
0.995 and 0.18 (``Ridge`` 0.21).

A numeric column whose values in the first rows are each distinct (a
measurement of many digits, an identifier) is read by interval and as a
number, not by exact value (:func:`distinct_columns`): no other row shares the
value, so its category could only learn a training row by heart. With the
cross-validated passes' rule of this change, on 107 of the tables above: no
classification moved, R^2 up on 8 (ISLP's cars .81 -> .85, the fuel's share
.84 -> .89) and down on 3 (by at most .02). In a classification, a column whose
values are mostly distinct (at least :data:`DISTINCT_SHARE` of them) loses its
values' categories too: yeast's 103 measurements, 99.4-99.9% distinct in 1,691
rows, gave each row a hundred categories seen about once, which drowned the
thirteen other labels that tell a gene's class (accuracy .880 -> .905, .923 ->
.939; ``LogisticRegression`` .941, .974). Over 174 classifications of river's,
lifelines', mlxtend's, R's and statsmodels' tables (70/30 splits, defaults):
accuracy up on 24 by more than 0.005, down on 11 (the mean +0.0018; Stanford's
heart transplants .923 -> .981, a lymph node's grade .636 -> .694; the most lost
.032, a mode of travel). A regression keeps them: the same rule lowered R^2 on
40 of 327 and raised it on 24 (the prices of eight stocks, 98-100% distinct,
predicting a ninth's: .260 -> .235), as if a category per row took up the noise
the shared features would otherwise chase; whether a file is a regression is
read off its first labels (:func:`~sklearn_sketch.cli._inputs.likely_regression`).

A few words among a numeric column's numbers (UCI's ``?``) are missing numbers,
not a reason to read the column as categories only (:func:`_measured`): ISLP's
``Auto.data``, R^2 0.838 -> 0.842 (``Ridge`` .80).
"""
import math
import re

import numpy as np

from .._intervals import intervals

#: Rows whose values decide which columns are numeric, and cut them; intervals a
#: numeric column is cut into by default (``--bins``).
BIN_ROWS, DEFAULT_BINS = 10_000, 16
#: A numeric column of fewer distinct values (month, hour, a count) stays categories.
MIN_DISTINCT = 64
#: In a classification, a numeric column of at least this share of distinct values
#: among its first rows has no category per value (:func:`distinct_columns`).
DISTINCT_SHARE = 0.5
#: A numeric column may hold up to MISSING_WORDS distinct other values in at most
#: MISSING_SHARE of its values, read as missing numbers (UCI's "?").
MISSING_WORDS, MISSING_SHARE = 3, 0.05


def numeric_bins(frame, columns, n_bins):
    """``{column: edges}`` of the numeric columns of ``frame`` (text, as read).

    A column is numeric when its values read as finite numbers (:func:`_measured`) and
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
        values = _measured(frame[column].dropna())
        if values is None or not values.size or np.unique(values).size < MIN_DISTINCT:
            continue
        edges = np.unique(np.quantile(values, np.arange(1, n_bins) / n_bins))
        bins[column] = [float(e) for e in edges]
    return bins


def numeric_scales(frame, columns):
    """``{column: scale}``: the standard deviation of the values in ``frame`` (text,
    as read) of each of ``columns`` that holds quantities: its values read as
    finite numbers (:func:`_measured`), and the distinct values are at least
    :data:`MIN_DISTINCT` or at least a tenth of the values (and more than two). A
    column of few values among many rows (a month, an hour, a flag) stays
    categories only.

    Examples
    --------
    >>> import pandas as pd
    >>> numeric_scales(pd.DataFrame({"delay": ["1", "3", "5"], "carrier": ["AA"] * 3}),
    ...                ["delay", "carrier"])
    {'delay': 2.0}
    """
    scales = {}
    for column in columns:
        values = _measured(frame[column].dropna())
        if values is None or not values.size:
            continue
        distinct = np.unique(values).size
        if distinct < MIN_DISTINCT and (distinct < 3 or distinct < values.size / 10):
            continue
        scale = float(values.std(ddof=1))
        if math.isfinite(scale) and scale > 0.0:
            scales[column] = scale
    return scales


def numeric_means(frame, scales):
    """``{column: mean}`` of the values in ``frame`` (text, as read) of each column of
    ``scales`` (:func:`numeric_scales`), the centre a value is read from.

    Examples
    --------
    >>> import pandas as pd
    >>> numeric_means(pd.DataFrame({"delay": ["1", "3", "5"]}), {"delay": 2.0})
    {'delay': 3.0}
    """
    return {column: float(np.mean(_measured(frame[column].dropna()))) for column in scales}


def row_numbers(frame):
    """The columns of ``frame`` (text, as read) without a name (pandas reads an empty
    one as ``Unnamed: 0``) whose values are whole numbers, each once: the row
    numbers an export writes first (R's ``write.csv``, pandas' ``to_csv``).

    Examples
    --------
    >>> import pandas as pd
    >>> row_numbers(pd.DataFrame({"Unnamed: 0": ["3", "1", "2"], "a": ["x", "y", "x"]}))
    ['Unnamed: 0']
    """
    found = []
    for column in frame.columns:
        if not re.fullmatch(r"(Unnamed: \d+)?", str(column)):
            continue
        text = frame[column]
        values = _numbers(text)
        if (len(text) > 1 and np.isfinite(values).all() and (values == np.round(values)).all()
                and np.unique(values).size == values.size):
            found.append(column)
    return found


def distinct_columns(frame, bins, share=1.0):
    """The numeric columns of ``bins`` whose values in ``frame`` are distinct, at least
    ``share`` of them (all by default): read by interval and as a number, not by
    exact value, which another row shares seldom if ever.

    Examples
    --------
    >>> import pandas as pd
    >>> frame = pd.DataFrame({"a": ["1.5", "2.5", "3.5", "3.5", "4"],
    ...                       "b": ["1", "1", "2", "1", "1"]})
    >>> bins = {"a": [2.0], "b": [1.0]}
    >>> distinct_columns(frame, bins, share=0.5), distinct_columns(frame, bins)
    (['a'], [])
    """
    found = []
    for column in bins:
        values = _numbers(frame[column].dropna())
        if np.unique(values).size >= share * values.size:
            found.append(column)
    return found


def check_means(means, scales):
    """Whether ``means`` is ``{column: mean}`` over columns of ``scales`` with finite
    means (the model file's CSV metadata)."""
    return isinstance(means, dict) and all(
        column in scales and isinstance(mean, float) and math.isfinite(mean)
        for column, mean in means.items())


def check_scales(scales, columns):
    """Whether ``scales`` is ``{column: scale}`` over ``columns`` with finite positive
    scales (the model file's CSV metadata)."""
    return isinstance(scales, dict) and all(
        column in columns and isinstance(scale, float) and math.isfinite(scale) and scale > 0
        for column, scale in scales.items())


def _measured(text):
    """The numbers of a text Series without missing values, or None where it is not a
    column of numbers: more than :data:`MISSING_WORDS` distinct other values, or
    more than :data:`MISSING_SHARE` of its values not numbers. The few others are
    read as missing numbers (their category stays a feature).

    Examples
    --------
    >>> import pandas as pd
    >>> _measured(pd.Series(["130", "?", "95.5"] + ["88"] * 30)).size
    32
    >>> print(_measured(pd.Series(["130", "fast", "slow", "95"])))
    None
    """
    values = _numbers(text)
    words = ~np.isfinite(values)
    if words.any():
        if (words.mean() > MISSING_SHARE
                or np.unique(text.to_numpy(dtype=str)[words]).size > MISSING_WORDS):
            return None
        values = values[~words]
    return values


def _numbers(text):
    """The values of a text Series as floats (NaN where one is not a number)."""
    numbers = _arrow_numbers(text)
    if numbers is not None:
        return numbers
    import pandas as pd

    return pd.to_numeric(text, errors="coerce").to_numpy(dtype=np.float64)


def _arrow_numbers(text):
    """The values of a Series of pyarrow strings (pandas' strings when pyarrow is
    installed) as floats when each is a number or missing, else None.

    pyarrow's cast reads 784 columns of 3,500 pixels in 0.08 s where
    ``pandas.to_numeric`` takes 1.3 s, and to the same numbers (both round
    correctly); it refuses what ``to_numeric`` reads as NaN, spaces around a
    number included, so a column holding any such value is left to it.
    """
    if getattr(text.dtype, "storage", None) != "pyarrow":
        return None
    import pyarrow as pa
    import pyarrow.compute as pc

    try:
        cast = pc.cast(pa.array(text.array), pa.float64())
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        return None
    return cast.to_numpy(zero_copy_only=False)


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


def check_bins(bins, columns):
    """Whether ``bins`` is ``{column: edges}`` over ``columns`` with increasing finite
    edges (the model file's CSV metadata)."""
    return isinstance(bins, dict) and all(
        column in columns and isinstance(edges, list) and 1 <= len(edges) <= 1000
        and all(isinstance(e, float) and math.isfinite(e) for e in edges)
        and all(a < b for a, b in zip(edges, edges[1:]))
        for column, edges in bins.items())
