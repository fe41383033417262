"""What the stream analytics (explainers, deltoids, PMI) share: their result tables
and the constraints of their common parameters."""
from numbers import Integral, Real

from sklearn.utils._param_validation import Interval

#: ``_parameter_constraints`` of the parameters several stream estimators have.
SHARE = [Interval(Real, 0, 1, closed="neither")]
MEMORY_BUDGET = [Interval(Integral, 16, None, closed="left"), str]
POSITIVE_INT = [Interval(Integral, 1, None, closed="left")]
COUNT = [Interval(Integral, 0, None, closed="left")]
SEED = [Interval(Integral, 0, 2**31 - 2, closed="both"), None]
STEP = [Interval(Real, 0, None, closed="neither")]
PENALTY = [Interval(Real, 0, None, closed="left")]


def result_table(columns, values):
    """``values`` (one array per name of ``columns``) as a pandas DataFrame, or a dict.

    pandas is optional: without it the caller gets ``{column: array}``, which
    indexes the same way by column name.
    """
    table = dict(zip(columns, values))
    try:
        import pandas as pd
    except ImportError:  # pragma: no cover - pandas is optional
        return table
    return pd.DataFrame(table, columns=list(columns))


class FittedTable:
    """A result table (``pairs_``, ``deltoids_``, ``explanations_``) built when first
    read after training changed the model, not after every chunk: ``partial_fit``
    over 20 Newsgroups' training posts, a line of a post at a time, spent most of
    its time building the table (a name for each heap entry) after each of 6,800
    chunks.

    ``cls.attribute = FittedTable("_method")``; training assigns ``None`` (the table
    is stale), reading calls ``self._method()`` once and keeps its table. Before any
    training reading raises ``AttributeError``, as a fitted attribute not yet set
    does (``check_is_fitted`` relies on it).

    Examples
    --------
    >>> class Counter:
    ...     table_ = FittedTable("_table")
    ...     builds = 0
    ...     def _table(self):
    ...         self.builds += 1
    ...         return {"count": self.count}
    ...     def partial_fit(self, n):
    ...         self.count = getattr(self, "count", 0) + n
    ...         self.table_ = None
    >>> counter = Counter()
    >>> hasattr(counter, "table_")
    False
    >>> for n in range(5):
    ...     counter.partial_fit(n)
    >>> counter.table_, counter.table_, counter.builds
    ({'count': 10}, {'count': 10}, 1)
    """

    def __init__(self, method):
        self.method = method

    def __set_name__(self, owner, name):
        self.name, self.slot = name, f"_{name}"

    def __get__(self, obj, owner=None):
        if obj is None:
            return self
        state = obj.__dict__
        if self.slot not in state:
            raise AttributeError(f"{type(obj).__name__} has no {self.name} before fit or "
                                 "partial_fit")
        if state[self.slot] is None:
            state[self.slot] = getattr(obj, self.method)()
        return state[self.slot]

    def __set__(self, obj, value):
        obj.__dict__[self.slot] = value
