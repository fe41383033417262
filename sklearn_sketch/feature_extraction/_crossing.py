"""Categorical attributes and their crosses as 64-bit keys, named only on demand."""
from itertools import combinations, repeat
from numbers import Integral, Real

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator, TransformerMixin
from sklearn.utils._param_validation import Interval
from sklearn.utils.validation import check_is_fitted

from .._intervals import intervals
from .._raw_features import RAW_N_FEATURES, NamedRows, name_keys
from ..io._parsers import first_rows
from ._crosses import cross_keys

#: Between the parts of a cross's name, as Vowpal Wabbit joins crossed features.
CROSS_SEPARATOR = "^"
#: Values of a column of dicts read to tell whether it holds numbers.
NUMBER_TYPE_ROWS = 1000


def _columns(X, fields):
    """Each field's values: a pandas Series, or an object array (None: no value)."""
    if hasattr(X, "columns") and hasattr(X, "iloc"):  # a pandas DataFrame
        missing = [f for f in fields if f not in X.columns]
        if missing:
            raise ValueError(f"unknown column(s) {missing}; the data has {list(X.columns)}")
        return [X[field] for field in fields]
    if not isinstance(X, (list, tuple)) or not all(isinstance(row, dict) for row in X[:1]):
        raise TypeError("FeatureCrosser takes a pandas DataFrame or a list of {field: value} "
                        f"dicts, got {type(X).__name__}")
    # map(dict.get, ...) runs in C: no Python loop per row.
    return [np.array(list(map(dict.get, X, repeat(field))), dtype=object) for field in fields]


def column_numbers(values):
    """A column's values (a pandas Series, or an object array of dict values) as
    float64: NaN where one is missing or not a number."""
    if hasattr(values, "dtype") and values.dtype != object and hasattr(values, "to_numpy"):
        if values.dtype.kind in "biuf":  # NumPy numbers, and pandas' nullable ones
            return values.to_numpy(dtype=np.float64, na_value=np.nan)
    values = np.asarray(values, dtype=object)
    try:  # one cast in C when every value is a number or missing
        return np.where(values == None, np.nan, values).astype(np.float64)  # noqa: E711
    except (TypeError, ValueError):
        return np.frompyfunc(_number_or_nan, 1, 1)(values).astype(np.float64)


def holds_numbers(values):
    """Whether a column (a pandas Series, or an object array of dict values) holds
    numbers, missing values aside, and not text or booleans (its first
    ``NUMBER_TYPE_ROWS`` values tell)."""
    if hasattr(values, "dtype") and values.dtype != object:
        return values.dtype.kind in "iuf"
    present = [v for v in np.asarray(values, dtype=object)[:NUMBER_TYPE_ROWS].tolist()
               if v is not None and v == v]
    return bool(present) and all(map(_is_number, present))


def _is_number(value):
    return isinstance(value, (Real, np.number)) and not isinstance(value, (bool, np.bool_))


def _number_or_nan(value):
    return float(value) if _is_number(value) else np.nan


def _factorize(values):
    """Distinct values (as str) and the code of each row (-1: missing)."""
    if hasattr(values, "factorize"):  # a pandas Series: hashed, NaN and None coded -1
        codes, uniques = values.factorize()
        return np.asarray(uniques.astype(str), dtype=object), codes.astype(np.int64)
    # Elementwise in C: None and NaN (which differs from itself) are missing.
    present = np.asarray((values != None) & (values == values), dtype=bool)  # noqa: E711
    codes = np.full(values.size, -1, dtype=np.int64)
    if not present.any():
        return np.zeros(0, dtype=object), codes
    text = values[present].astype(str)
    uniques, inverse = np.unique(text, return_inverse=True)
    codes[present] = inverse
    return uniques.astype(object), codes


class CrossNames:
    """Names of the attribute and cross keys of one block of rows, built on request.

    Only the keys asked for (an estimator asks for the keys that entered its
    heaps) get a name, so memory does not grow with the number of distinct
    crosses. Has the ``lookup(keys)`` interface of
    :class:`~sklearn_sketch.io.KeyNames`.

    Parameters
    ----------
    fields : list of str
        The attribute fields, in the order of ``codes``' columns.
    uniques : list of ndarray of object
        The distinct values of each field.
    codes : ndarray of int64, shape (n_rows, n_fields)
        Each row's value of each field, as an index into ``uniques`` (-1: none).
    combos : ndarray of int64, shape (n_crosses, 3)
        The fields of each cross (a pair ends with -1).
    keys : ndarray of int64, shape (n_rows, n_fields + n_crosses)
        Each row's attribute keys, then its cross keys (-1: none).

    Examples
    --------
    >>> from sklearn_sketch.feature_extraction import FeatureCrosser
    >>> rows = FeatureCrosser(crosses=[("carrier", "dest")]).fit_transform(
    ...     [{"carrier": "WN", "dest": "HOU"}, {"carrier": "AA", "dest": "HOU"}])
    >>> sorted(rows.names.lookup(rows.X.indices[:3]).values())
    ['carrier=WN', 'carrier=WN^dest=HOU', 'dest=HOU']
    """

    def __init__(self, fields, uniques, codes, combos, keys):
        self.fields = fields
        self.uniques = uniques
        self.codes = codes
        self.combos = combos
        self.keys = keys

    def _name(self, row, column):
        n_fields = len(self.fields)
        parts = [column] if column < n_fields else [
            f for f in self.combos[column - n_fields].tolist() if f >= 0]
        return CROSS_SEPARATOR.join(
            f"{self.fields[f]}={self.uniques[f][self.codes[row, f]]}" for f in parts)

    def lookup(self, keys):
        """``{key: name}`` for the requested keys found in these rows."""
        # One compiled pass over the rows' keys (absent ones are -1, never requested).
        found, first = first_rows(self.keys.ravel(), np.asarray(keys, dtype=np.int64))
        rows, columns = np.divmod(first, self.keys.shape[1])
        return {key: self._name(row, column)
                for key, row, column in zip(found.tolist(), rows.tolist(), columns.tolist())}

    def mean_name_bytes(self):
        """Mean UTF-8 length of a feature's name (an attribute or a cross), estimated."""
        per_field = np.array([np.mean([len(f"{field}={u}".encode()) for u in values[:256]])
                              if len(values) else 0.0
                              for field, values in zip(self.fields, self.uniques)])
        lengths = list(per_field)
        for combo in self.combos.tolist():
            parts = [f for f in combo if f >= 0]
            lengths.append(per_field[parts].sum() + len(CROSS_SEPARATOR) * (len(parts) - 1))
        return float(np.mean(lengths)) if lengths else 0.0


class FeatureCrosser(TransformerMixin, BaseEstimator):
    """Categorical attributes and their crosses as hashed, named features.

    Each row (a ``{field: value}`` dict or a DataFrame row) becomes a sparse
    row of 64-bit keys: one per attribute, the key of the name
    ``"field=value"`` (as the estimators hash raw names), and one per cross
    of fields, derived from its parts' keys in compiled code
    (:func:`cross_keys`: no string per cross). Values are categories: numbers
    are read as their text. A missing value (absent key, None, NaN) gives no
    attribute and no cross. The names (``carrier=WN^dest=HOU``) are built only
    for the features that enter an estimator's heap, so memory does not grow
    with the number of distinct crosses. The output feeds any estimator of
    this package, which then names its selected features.

    Parameters
    ----------
    crosses : list of tuple of str, default=None
        The crosses to add, each 2 or 3 field names. None: every combination
        of ``fields`` of orders 2 to ``max_order``.
    max_order : int, default=1
        With ``crosses=None``, the largest number of fields crossed (1: the
        attributes alone, 2: pairs, 3: pairs and triples).
    fields : list of str, default=None
        The attribute fields; default every column of the DataFrame or every
        key of the first 1,000 dicts seen by ``fit``, sorted.
    attributes : bool, default=True
        Keep the attributes themselves beside their crosses.
    bin_edges : dict, default=None
        ``{field: edges}``: fields of numbers read as the interval of each
        value between increasing ``edges`` (``temp=[32.1,35)``), the attribute
        and its crosses alike; a value that is not a number is missing.
        :class:`~sklearn_sketch.explain.OutlierExplainer` sets them for its
        columns of quantities.

    Attributes
    ----------
    fields_ : list of str
        The attribute fields.
    crosses_ : list of tuple of str
        The crosses added.

    Examples
    --------
    >>> from sklearn_sketch import AWMSketchClassifier
    >>> from sklearn_sketch.feature_extraction import FeatureCrosser
    >>> from sklearn.pipeline import make_pipeline
    >>> rows = [{"carrier": c, "dest": d} for c in "ABC" for d in "XYZ"] * 20
    >>> late = [int(r["carrier"] == "B" and r["dest"] == "Z") for r in rows]
    >>> model = make_pipeline(FeatureCrosser(max_order=2),
    ...                       AWMSketchClassifier(memory_budget="64KB", random_state=0))
    >>> model.fit(rows, late)[-1].selected_features_.names[0]
    'carrier=B^dest=Z'
    """

    _parameter_constraints = {
        "crosses": ["array-like", None],
        "max_order": [Interval(Integral, 1, 3, closed="both")],
        "fields": ["array-like", None],
        "attributes": ["boolean"],
        "bin_edges": [dict, None],
    }

    def __init__(self, crosses=None, max_order=1, fields=None, attributes=True,
                 bin_edges=None):
        self.crosses = crosses
        self.max_order = max_order
        self.fields = fields
        self.attributes = attributes
        self.bin_edges = bin_edges

    def fit(self, X, y=None):
        """Learn the fields (when not given) and check the crosses.

        Parameters
        ----------
        X : pandas.DataFrame or list of dict
            Rows of categorical attributes.
        y : None
            Ignored.

        Returns
        -------
        self : FeatureCrosser
        """
        self._validate_params()
        if self.fields is not None:
            fields = [str(f) for f in self.fields]
        elif hasattr(X, "columns"):
            fields = [str(c) for c in X.columns]
        elif isinstance(X, (list, tuple)) and all(isinstance(r, dict) for r in X[:1000]):
            fields = sorted(map(str, set().union(*X[:1000])))
        else:
            raise TypeError("FeatureCrosser takes a pandas DataFrame or a list of "
                            f"{{field: value}} dicts, got {type(X).__name__}")
        if len(set(fields)) != len(fields):
            raise ValueError(f"fields must be distinct, got {fields}")
        if self.crosses is None:
            crosses = [c for order in range(2, self.max_order + 1)
                       for c in combinations(fields, order)]
        else:
            crosses = [tuple(str(f) for f in c) for c in self.crosses]
            for cross in crosses:
                unknown = [f for f in cross if f not in fields]
                if not 2 <= len(cross) <= 3 or unknown or len(set(cross)) != len(cross):
                    raise ValueError(f"a cross is 2 or 3 distinct fields among {fields}, "
                                     f"got {cross}")
        if not crosses and not self.attributes:
            raise ValueError("attributes=False needs crosses: nothing would be left")
        for field, edges in (self.bin_edges or {}).items():
            edges = np.asarray(edges, dtype=np.float64)
            if (field not in fields or edges.ndim != 1 or not edges.size
                    or not np.isfinite(edges).all() or (np.diff(edges) <= 0).any()):
                raise ValueError(f"bin_edges maps fields among {fields} to increasing "
                                 f"finite edges, got {field!r}: {edges.tolist()}")
        self.fields_, self.crosses_ = fields, crosses
        return self

    def transform(self, X):
        """Rows of attribute and cross keys, with their names on request.

        Parameters
        ----------
        X : pandas.DataFrame or list of dict
            Rows of categorical attributes.

        Returns
        -------
        rows : NamedRows
            ``rows.X``, a CSR matrix of ``2**63 - 1`` columns (one 1.0 per
            attribute and cross of a row), and ``rows.names``, a
            :class:`CrossNames`. Every estimator here takes it as ``X``.
        """
        check_is_fitted(self, "fields_")
        fields = self.fields_
        columns = _columns(X, fields)
        n_rows = len(columns[0]) if columns else 0
        uniques, codes = [], np.empty((n_rows, len(fields)), dtype=np.int64)
        parts = np.empty((n_rows, len(fields)), dtype=np.int64)
        bin_edges = self.bin_edges or {}
        for f, (field, values) in enumerate(zip(fields, columns)):
            if field in bin_edges:
                values = intervals(column_numbers(values), bin_edges[field])
            distinct, codes[:, f] = _factorize(values)
            uniques.append(distinct)
            keys = name_keys([f"{field}={value}" for value in distinct.tolist()]) \
                if len(distinct) else np.zeros(0, dtype=np.int64)
            parts[:, f] = np.where(codes[:, f] >= 0, keys[np.maximum(codes[:, f], 0)]
                                   if len(keys) else -1, -1)
        index = {field: f for f, field in enumerate(fields)}
        combos = np.full((len(self.crosses_), 3), -1, dtype=np.int64)
        for j, cross in enumerate(self.crosses_):
            combos[j, :len(cross)] = [index[f] for f in cross]
        crossed = cross_keys(parts, combos)
        # Without attributes their columns stay, marked absent: names index fields first.
        keys = np.hstack([parts if self.attributes else np.full_like(parts, -1), crossed])
        present = keys >= 0
        indptr = np.concatenate([[0], np.cumsum(present.sum(axis=1))])
        matrix = sp.csr_matrix((np.ones(int(indptr[-1])), keys[present], indptr),
                               shape=(n_rows, RAW_N_FEATURES))
        return NamedRows(matrix, CrossNames(fields, uniques, codes, combos, keys))
