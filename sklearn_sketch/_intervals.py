"""Quantities read as intervals between their quantiles, named alike everywhere.

A column of temperatures or delays holds hundreds of distinct numbers; as
categories, each is a feature of a few rows that explains nothing about the
next value. The command line's readers (``fit``'s numeric columns, ``explain``'s
attributes) and :class:`~sklearn_sketch.explain.OutlierExplainer` cut such a
column at its quantiles and name each value by its interval (``temp=[32.1,35)``).
"""
import math

import numpy as np

#: Distinct negative values that make a column of whole numbers a signed quantity
#: (a delay in minutes), not labels with a sentinel or two (-1 for none).
SIGNED_VALUES = 3
#: Ranks at which a value is looked for above one that holds several quantiles.
FINE_RANKS = np.arange(1, 1000) / 1000


def interval_names(edges):
    """The names of the ``len(edges) + 1`` intervals cut by ``edges``.

    Examples
    --------
    >>> interval_names([10.0, 25.0])
    ['[-inf,10)', '[10,25)', '[25,inf)']
    """
    text = ["-inf", *(format(e, ".6g") for e in edges), "inf"]
    return [f"[{a},{b})" for a, b in zip(text, text[1:])]


def intervals(numbers, edges):
    """The interval names of float ``numbers`` (NaN or infinite: missing, NaN).

    Examples
    --------
    >>> import numpy as np
    >>> intervals(np.array([3.0, 10.0, 40.0, np.nan]), [10.0, 25.0]).tolist()
    ['[-inf,10)', '[10,25)', '[25,inf)', nan]
    """
    names = np.array(interval_names(edges) + [math.nan], dtype=object)
    index = np.searchsorted(np.asarray(edges, dtype=np.float64), numbers, side="right")
    index[~np.isfinite(numbers)] = len(edges) + 1
    return names[index]


def is_quantity(numbers, n_bins):
    """Whether finite ``numbers`` (a column's, float64) read as a quantity: more than
    ``2 * n_bins`` distinct ones, some with a fraction or at least ``SIGNED_VALUES``
    distinct ones negative. Whole numbers never negative (flight numbers, hours,
    codes with -1 for none) are labels.

    Examples
    --------
    >>> import numpy as np
    >>> is_quantity(np.arange(100.0) / 4, 10), is_quantity(np.arange(-5.0, 95.0), 10)
    (True, True)
    >>> is_quantity(np.arange(100.0), 10), is_quantity(np.arange(5.0) / 4, 10)
    (False, False)
    """
    distinct = np.unique(numbers)
    if distinct.size <= 2 * n_bins:
        return False
    return bool(np.count_nonzero(distinct < 0) >= SIGNED_VALUES
                or (distinct != np.round(distinct)).any())


def interval_edges(quantiles):
    """Edges from a column's quantiles: four significant digits (an interval reads
    ``[14.96,17.1)``, not ``[14.96014,17.1032)``), each once, in order.

    Examples
    --------
    >>> interval_edges([14.96014, 17.10321, 17.10329]).tolist()
    [14.96, 17.1]
    """
    return np.unique(_four_digits(quantiles))


def _four_digits(values):
    return [float(f"{value:.4g}") for value in values]


def quantile_edges(quantiles, n_bins):
    """Edges of about ``n_bins`` intervals of a column, from ``quantiles(ranks)``
    (its values at ``ranks``): its ``1/n_bins, ..., (n_bins - 1)/n_bins``
    quantiles (:func:`interval_edges`), and above a value that holds two or
    more of them, the next value (at ``FINE_RANKS``), so that it is an interval
    of its own.

    Hourly precipitation is 0 in nine hours of ten: its nine deciles are 0, and
    the one edge left put every hour in ``[0,inf)``, a column of one value,
    where ``[0,0.01)`` and ``[0.01,inf)`` tell dry hours from wet ones.

    Examples
    --------
    >>> import numpy as np
    >>> rain = np.r_[np.zeros(920), np.linspace(0.01, 1.2, 80)]
    >>> quantile_edges(lambda ranks: np.quantile(rain, ranks, method="inverted_cdf"),
    ...                10).tolist()
    [0.0, 0.01]
    >>> quantile_edges(lambda ranks: np.quantile(np.arange(100.0), ranks), 4).tolist()
    [24.75, 49.5, 74.25]
    """
    coarse = _four_digits(quantiles(np.arange(1, n_bins) / n_bins))
    atoms = {value for value in coarse if coarse.count(value) > 1}
    edges = set(coarse)
    if atoms:
        fine = interval_edges(quantiles(FINE_RANKS))
        for atom in atoms:
            above = fine[fine > atom]
            if above.size:
                edges.add(float(above[0]))
    return np.array(sorted(edges))
