"""The tables the stream analytics return: a DataFrame when pandas is installed."""


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
