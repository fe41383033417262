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
