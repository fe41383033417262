"""Model files that execute nothing: NumPy arrays in an ``.npz`` and a JSON header.

A file is a ZIP archive of ``.npy`` members (stored, not compressed), read
with ``allow_pickle=False``: the member ``header`` holds UTF-8 JSON (format
version, library version, estimator class from an allow-list, its
parameters, fitted attributes, feature names and the scalars of the model
state) and the other members the arrays of the model state (sketch tables
and seeds, heap layouts, intercepts, BEAR's curvature pairs, numeric class
labels). Loading checks every member, type, shape, size and invariant before
it builds anything, and builds the sketches, heaps and history through their
checked constructors. ``est.save(path)`` and ``type(est).load(path)`` wrap
:func:`save` and :func:`load` (the latter refusing a file of another class).

What skops (``skops.io``) would need: skops stores an object through its
``__dict__`` and, on load, refuses every type outside its defaults unless the
caller lists it in ``trusted=`` (``skops.io.get_untrusted_types`` shows them).
An estimator here would pass that audit with its own class and
``sklearn_sketch._base._ModelState`` trusted, but its ``CountSketch``,
``TopKHeap`` and ``LBFGSHistory`` are extension types without a ``__dict__``:
they reduce (``__reduce__``) to ``_rebuild_count_sketch``,
``_rebuild_topk_heap`` and ``_rebuild_history``, which check every size and
value before they allocate, with arguments that are only arrays, ints and
floats. skops never calls the function a ``__reduce__`` names; it supports such
types (scikit-learn's ``Tree``, the Cython losses) by a node per type whose
constructor is fixed in skops. Supporting ours would take the same in skops
itself (a module like its ``_quantile_forest.py``, listed among the modules it
registers: it has no public registration API), with our checked rebuilds as
the fixed constructors and the three types trusted by default. Until then
these files give the same guarantee without a new dependency.
"""
import io
import json
import math
import os
import tempfile
import zipfile

import numpy as np

from ._names import PackedNames

#: Version of the layout written by :func:`save`; :func:`load` reads this one and older.
FORMAT_VERSION = 1
_FORMAT_NAME = "sklearn-sketch model"

#: Estimators a model file may hold (class name -> module).
ESTIMATORS = {
    "AWMSketchClassifier": "weight_median", "BearClassifier": "bear",
    "BearRegressor": "bear", "FeatureHashingClassifier": "mission",
    "IHTClassifier": "mission", "IHTRegressor": "mission", "MissionClassifier": "mission",
    "MissionRegressor": "mission", "SpaceSavingClassifier": "baselines",
    "SparsePerceptronClassifier": "baselines", "TruncationClassifier": "baselines",
    "WMSketchClassifier": "weight_median",
}

# Dtypes of the arrays a file may hold (little-endian, no objects).
_DTYPES = {"<f4", "<f8", "<i4", "<i8", "<u4", "<u8", "|u1", "|b1"}
_MAX_INT64 = 2**63 - 1


class ModelFileError(ValueError):
    """A file that is not a model file, or one that fails a check of :func:`load`.

    Examples
    --------
    >>> import os, pickle, tempfile
    >>> from sklearn_sketch import ModelFileError, load
    >>> path = os.path.join(tempfile.mkdtemp(), "model.pkl")
    >>> with open(path, "wb") as f:
    ...     pickle.dump({"not": "a model"}, f)
    >>> try:
    ...     load(path)
    ... except ModelFileError as error:
    ...     print(type(error).__name__, isinstance(error, ValueError))
    ModelFileError True
    """


# ----------------------------------------------------------------- saving
def save(estimator, path, *, metadata=None):
    """Write ``estimator`` to ``path`` as a model file that executes nothing on load.

    The file is written atomically (a failed write leaves no partial file).
    Parameters must be None, booleans, numbers or strings (a ``RandomState``
    instance as ``random_state`` is refused).

    Parameters
    ----------
    estimator : estimator
        One of the estimators of :data:`ESTIMATORS`, fitted or not.
    path : str or path-like
        File to write (no suffix is added; ``.skm`` is customary).
    metadata : dict, default=None
        JSON-able data stored with the model (the command line keeps how it
        read its input there); :func:`read_model` returns it.

    Examples
    --------
    >>> import os, tempfile
    >>> import numpy as np
    >>> from sklearn_sketch import MissionClassifier, load, save
    >>> X = np.random.RandomState(0).normal(size=(60, 8)); y = (X[:, 2] > 0).astype(int)
    >>> clf = MissionClassifier(3, sketch_width=64, random_state=0).fit(X, y)
    >>> path = os.path.join(tempfile.mkdtemp(), "model.skm")
    >>> save(clf, path)
    >>> bool((load(path).predict(X) == clf.predict(X)).all())
    True
    """
    header, arrays = _encode(estimator)
    header["metadata"] = metadata
    try:
        text = json.dumps(header, allow_nan=False)
    except (TypeError, ValueError) as exc:
        raise ModelFileError(f"cannot save the model: metadata is not JSON ({exc})") from exc
    arrays["header"] = np.frombuffer(text.encode("utf-8"), dtype=np.uint8)
    path = os.fspath(path)
    handle, temporary = tempfile.mkstemp(dir=os.path.dirname(os.path.abspath(path)),
                                         prefix=".sklearn-sketch-")
    try:
        with os.fdopen(handle, "wb") as f:
            np.savez(f, allow_pickle=False, **arrays)
        os.replace(temporary, path)
    except BaseException:
        os.unlink(temporary)
        raise


def _json_param(name, value):
    if isinstance(value, np.generic) and value.dtype.kind in "biuf":
        value = value.item()
    if value is None or isinstance(value, (bool, int, str)):
        return value
    if isinstance(value, float) and math.isfinite(value):
        return value
    raise ModelFileError(
        f"cannot save the parameter {name}={value!r}: a model file holds only None, "
        "booleans, finite numbers and strings")


def _encode(estimator):
    name = type(estimator).__name__
    if name not in ESTIMATORS or _estimator_class(name) is not type(estimator):
        raise ModelFileError(f"cannot save a {type(estimator).__qualname__}: model files "
                             f"hold one of {', '.join(sorted(ESTIMATORS))}")
    from ._base import _estimator_lock

    # Not while another thread trains it: the file holds the model between two calls.
    with _estimator_lock(estimator):
        return _encode_unlocked(estimator, name)


def _encode_unlocked(estimator, name):
    from . import __version__
    params = {key: _json_param(key, value)
              for key, value in estimator.get_params(deep=False).items()}
    header = {"format": _FORMAT_NAME, "format_version": FORMAT_VERSION,
              "library_version": __version__, "estimator": name, "params": params,
              "fitted": None}
    arrays = {}
    if "_state" in estimator.__dict__:
        header["fitted"] = _encode_fitted(estimator, arrays)
    return header, arrays


def _encode_fitted(est, arrays):
    state = est._state
    arrays["intercept"] = np.asarray(state.intercept, dtype=np.float64)
    arrays["read_errors"] = np.asarray(state.read_errors, dtype=np.float64)
    sketches = []
    for i, sketch in enumerate(state.sketches):
        arrays[f"sketch_{i}_table"] = sketch.table
        arrays[f"sketch_{i}_seeds"] = sketch.seeds
        sketches.append({"scale": float(sketch.scale_factor)})
    heaps = []
    for i, heap in enumerate(state.heaps):
        capacity, keys, weights, scale, aux, aux_scale, _ = heap.__reduce__()[1]
        arrays[f"heap_{i}_keys"] = keys
        arrays[f"heap_{i}_weights"] = weights
        if aux is not None:
            arrays[f"heap_{i}_aux"] = aux
        heaps.append({"capacity": int(capacity), "scale": float(scale),
                      "aux_scale": float(aux_scale)})
    if state.feature_counts is not None:
        if state.feature_counts.dtype == np.float32:  # learning_rate='adaptive'
            arrays["feature_squares"] = state.feature_counts
        else:  # learning_rate='frequency'
            arrays["feature_counts"] = np.asarray(state.feature_counts, dtype=np.uint32)
    history = None
    if state.history is not None:
        size, n_models, pairs, n_pairs, head, n_batches = state.history.__reduce__()[1]
        arrays.update((f"history_{key}", value) for key, value in pairs.items())
        history = {"history_size": int(size), "n_pairs": int(n_pairs), "head": int(head),
                   "n_batches": int(n_batches)}
    fitted = {
        "n_features_in_": int(est.n_features_in_), "n_iter_": int(est.n_iter_),
        "feature_names_in_": (None if not hasattr(est, "feature_names_in_")
                              else [str(n) for n in est.feature_names_in_]),
        "feature_names": [[int(k), v] for k, v in est._feature_names.items()],
        "classes": None,
        "state": {"t": float(state.t), "n_passes": int(state.n_passes),
                  "shuffle_seed": int(state.shuffle_seed), "mistakes": int(state.mistakes),
                  "last_pass_samples": int(state.last_pass_samples),
                  "sketches": sketches, "heaps": heaps, "history": history},
    }
    if math.isfinite(state.log_loss):
        fitted["state"]["log_loss"] = float(state.log_loss)
    if hasattr(est, "eta0_"):  # eta0='auto': the step chosen at the first fit
        fitted["eta0_"] = float(est.eta0_)
    if hasattr(est, "learning_rate_"):  # the schedule trained under ('auto' chooses it)
        fitted["learning_rate_"] = str(est.learning_rate_)
    if hasattr(est, "norm_floor_"):  # 'normalized': the first data's median ||x||**2
        fitted["norm_floor_"] = float(est.norm_floor_)
    if "_norm_sample" in est.__dict__:  # the rows' norms, while too few fix the floor
        fitted["norm_sample"] = [float(v) for v in est._norm_sample]
    if "feature_scale_" in est.__dict__:  # dense columns standardized by the first data
        arrays["feature_mean"] = np.asarray(est.feature_mean_, dtype=np.float64)
        arrays["feature_scale"] = np.asarray(est.feature_scale_, dtype=np.float64)
        fitted["standardized"] = True
    if "key_scales_" in est.__dict__:  # measured features of wide input, scaled
        arrays["scaled_keys"] = np.asarray(est.scaled_keys_, dtype=np.int64)
        arrays["key_scales"] = np.asarray(est.key_scales_, dtype=np.float64)
        fitted["key_scaled"] = True
    if hasattr(est, "classes_"):
        classes = est.classes_
        if classes.dtype.kind in "biuf":
            arrays["classes"] = classes
            fitted["classes"] = {"dtype": classes.dtype.str, "values": None}
        elif all(isinstance(c, str) for c in classes.tolist()):
            fitted["classes"] = {"dtype": classes.dtype.str, "values": classes.tolist()}
        else:
            raise ModelFileError(f"cannot save class labels of dtype {classes.dtype}: "
                                 "labels must be numbers or strings")
    return fitted


# ---------------------------------------------------------------- loading
def load(path):
    """The estimator of a model file written by :func:`save`.

    Nothing in the file is executed: the arrays are read with
    ``allow_pickle=False`` and every type, shape, size and invariant is
    checked before the model is built.

    Parameters
    ----------
    path : str or path-like
        A file written by :func:`save`.

    Returns
    -------
    estimator : estimator
        The estimator, fitted as it was saved: it predicts the same and
        continues ``partial_fit`` exactly as the saved one would.

    Raises
    ------
    ModelFileError
        The file is not a model file (a pickle, say), was written by a newer
        format version, or fails a check.

    Examples
    --------
    >>> import os, tempfile
    >>> import numpy as np
    >>> from sklearn_sketch import BearRegressor, load, save
    >>> X = np.random.RandomState(0).normal(size=(60, 8)); y = X[:, 1] * 2
    >>> reg = BearRegressor(3, sketch_width=64, random_state=0).fit(X, y)
    >>> path = os.path.join(tempfile.mkdtemp(), "model.skm")
    >>> save(reg, path)
    >>> bool((load(path).predict(X) == reg.predict(X)).all())
    True
    """
    return read_model(path)[0]


def read_model(path, *, expected_class=None):
    """The estimator of a model file and the metadata saved with it.

    Parameters
    ----------
    path : str or path-like
        A file written by :func:`save`.
    expected_class : type, default=None
        Refuse (before building anything) a file whose estimator is not this
        class or a subclass of it.

    Returns
    -------
    estimator : estimator
        As :func:`load` returns it.
    metadata : dict or None
        The ``metadata`` given to :func:`save`.

    Examples
    --------
    >>> import os, tempfile
    >>> from sklearn_sketch import IHTClassifier, save
    >>> from sklearn_sketch._model_files import read_model
    >>> path = os.path.join(tempfile.mkdtemp(), "model.skm")
    >>> save(IHTClassifier(5), path, metadata={"run": 3})
    >>> read_model(path)
    (IHTClassifier(n_features_to_select=5), {'run': 3})
    """
    members = _read_members(path)
    try:
        header = _decode_header(members.pop("header", None))
        if expected_class is not None and not issubclass(
                _estimator_class(header["estimator"]), expected_class):
            raise ModelFileError(f"the file holds {header['estimator']}, not "
                                 f"{expected_class.__name__}")
        return _decode(header, members), header["metadata"]
    except ModelFileError as exc:
        raise ModelFileError(f"{os.fspath(path)}: {exc}") from None


def _read_members(path):
    """The arrays of the archive, each checked against its own header before reading."""
    name = os.fspath(path)
    try:
        size = os.path.getsize(name)
        with open(name, "rb") as f:
            magic = f.read(4)
    except OSError as exc:
        raise ModelFileError(f"cannot read {name}: {exc.strerror or exc}") from None
    if magic != b"PK\x03\x04":
        raise ModelFileError(f"{name} is not a sklearn-sketch model file (not a NumPy .npz "
                             "archive; pickles are not read)")
    try:
        with zipfile.ZipFile(name) as archive:
            members = {}
            for info in archive.infolist():
                key = info.filename[:-4]
                if (not info.filename.endswith(".npy") or key in members
                        or info.compress_type != zipfile.ZIP_STORED
                        or info.file_size != info.compress_size or info.file_size > size):
                    raise ModelFileError(f"unexpected archive member {info.filename!r}")
                members[key] = _parse_npy(archive.read(info), info.filename)
            return members
    except ModelFileError as exc:
        raise ModelFileError(f"{name}: {exc}") from None
    except (zipfile.BadZipFile, zipfile.LargeZipFile, OSError, EOFError, ValueError,
            NotImplementedError, UnicodeDecodeError) as exc:
        raise ModelFileError(f"{name} is not a readable model file ({exc})") from None


def _parse_npy(data, member):
    buffer = io.BytesIO(data)
    try:
        version = np.lib.format.read_magic(buffer)
        if version not in ((1, 0), (2, 0)):
            raise ValueError(f"unsupported .npy version {version}")
        read_header = (np.lib.format.read_array_header_1_0 if version == (1, 0)
                       else np.lib.format.read_array_header_2_0)
        shape, fortran_order, dtype = read_header(buffer)
    except (ValueError, TypeError, SyntaxError) as exc:
        raise ModelFileError(f"member {member!r} is not a NumPy array ({exc})") from None
    if dtype.str not in _DTYPES or fortran_order:
        raise ModelFileError(f"member {member!r} has an unsupported layout ({dtype.str}, "
                             f"fortran_order={fortran_order})")
    n_bytes = math.prod(shape) * dtype.itemsize
    if len(data) - buffer.tell() != n_bytes:
        raise ModelFileError(f"member {member!r} holds {len(data) - buffer.tell()} bytes "
                             f"for shape {shape}")
    return np.frombuffer(data, dtype=dtype, count=math.prod(shape),
                         offset=buffer.tell()).reshape(shape).copy()


def _refuse_constant(name):
    raise ValueError(f"{name} is not a JSON number")


def _unique_keys(pairs):
    keys = [k for k, _ in pairs]
    if len(set(keys)) != len(keys):
        raise ValueError("repeated key in a JSON object")
    return dict(pairs)


def _decode_header(member):
    if member is None or member.ndim != 1 or member.dtype != np.uint8:
        raise ModelFileError("the file has no header: not a sklearn-sketch model file")
    try:
        header = json.loads(member.tobytes().decode("utf-8"), parse_constant=_refuse_constant,
                            object_pairs_hook=_unique_keys)
    except (ValueError, RecursionError) as exc:
        raise ModelFileError(f"the header is not valid JSON ({exc})") from None
    if not isinstance(header, dict) or header.get("format") != _FORMAT_NAME:
        raise ModelFileError("not a sklearn-sketch model file")
    version = _int(header.get("format_version"), "format_version", 1, _MAX_INT64)
    if version > FORMAT_VERSION:
        raise ModelFileError(
            f"the file has model format version {version}, newer than version "
            f"{FORMAT_VERSION} that this sklearn-sketch reads: upgrade sklearn-sketch "
            f"(the file was written by version {header.get('library_version')!r})")
    _check_dict(header, "header", ("format", "format_version", "library_version", "estimator",
                                   "params", "fitted", "metadata"))
    _str(header["library_version"], "library_version")
    if _str(header["estimator"], "estimator") not in ESTIMATORS:
        raise ModelFileError(f"unknown estimator {header['estimator']!r}: model files hold "
                             f"one of {', '.join(sorted(ESTIMATORS))}")
    if header["metadata"] is not None and not isinstance(header["metadata"], dict):
        raise ModelFileError("metadata must be an object or null")
    return header


# Checks of JSON values: each raises ModelFileError naming the field.
def _check_dict(value, what, keys, optional=()):
    if not isinstance(value, dict) or not set(keys) <= set(value) <= set(keys) | set(optional):
        raise ModelFileError(f"{what} must be an object with the fields {', '.join(keys)}"
                             + (f" (and optionally {', '.join(optional)})" if optional else ""))
    return value


def _int(value, what, low, high):
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise ModelFileError(f"{what} must be an integer in [{low}, {high}], got {value!r}")
    return value


def _float(value, what):
    if not isinstance(value, float):
        raise ModelFileError(f"{what} must be a number, got {value!r}")
    return value


def _str(value, what):
    if not isinstance(value, str):
        raise ModelFileError(f"{what} must be a string, got {value!r}")
    return value


def _list(value, what, length=None):
    if not isinstance(value, list) or (length is not None and len(value) != length):
        raise ModelFileError(f"{what} must be a list"
                             + ("" if length is None else f" of {length} items"))
    return value


#: Columns of a standardized model a file may hold: its mean and scale take 16
#: bytes a column, within the memory the file was saved with (1 GiB at most).
_MAX_STANDARDIZED_COLUMNS = 2**26


def _array(members, name, dtype, shape):
    """The member ``name``, of exactly ``dtype`` and ``shape`` (None: any length there)."""
    if name not in members:
        raise ModelFileError(f"the array {name!r} is missing")
    arr = members.pop(name)
    fits = arr.ndim == len(shape) and all(s is None or s == a for s, a in zip(shape, arr.shape))
    if arr.dtype != dtype or not fits:
        raise ModelFileError(f"the array {name!r} must be {np.dtype(dtype)} of shape "
                             f"{tuple('n' if s is None else s for s in shape)}, got "
                             f"{arr.dtype} {arr.shape}")
    if arr.dtype.kind == "f" and not np.isfinite(arr).all():
        raise ModelFileError(f"the array {name!r} holds NaN or infinity")
    return arr


def _estimator_class(name):
    import importlib

    return getattr(importlib.import_module(f".{ESTIMATORS[name]}", __package__), name)


def _decode(header, members):
    from sklearn.utils._param_validation import InvalidParameterError

    estimator = _estimator_class(header["estimator"])()
    params = header["params"]
    expected = estimator.get_params(deep=False)
    if not isinstance(params, dict) or set(params) != set(expected):
        raise ModelFileError(f"params must be an object with the parameters of "
                             f"{header['estimator']}: {', '.join(sorted(expected))}")
    for key, value in params.items():
        if isinstance(value, (list, dict)):
            raise ModelFileError(f"parameter {key} must be None, a boolean, number or string")
    estimator.set_params(**params)
    try:
        estimator._validate_params()
    except (InvalidParameterError, ValueError, TypeError) as exc:
        raise ModelFileError(f"invalid parameter: {exc}") from None
    if header["fitted"] is not None:
        _decode_fitted(estimator, header["fitted"], members)
    if members:
        raise ModelFileError(f"unexpected arrays {', '.join(sorted(members))}")
    return estimator


def _decode_classes(spec, members):
    _check_dict(spec, "classes", ("dtype", "values"))
    dtype_str = _str(spec["dtype"], "classes dtype")
    if spec["values"] is None:
        classes = members.pop("classes", None)
        if classes is None or classes.ndim != 1 or classes.dtype.str != dtype_str:
            raise ModelFileError(f"the array 'classes' must be 1-D of dtype {dtype_str}")
        if classes.dtype.kind == "f" and not np.isfinite(classes).all():
            raise ModelFileError("class labels must be finite")
    else:
        labels = _list(spec["values"], "classes")
        if not all(isinstance(c, str) for c in labels):
            raise ModelFileError("string class labels must all be strings")
        natural = max((len(c) for c in labels), default=1) or 1
        width = dtype_str[2:]
        if dtype_str != "|O" and not (dtype_str.startswith("<U") and width.isdigit()
                                      and natural <= int(width) <= max(2 * natural, 64)):
            raise ModelFileError(f"string class labels need dtype |O or <U<n> that fits "
                                 f"them, got {dtype_str!r}")
        classes = np.array(labels, dtype=np.dtype(dtype_str))
        if classes.tolist() != labels:
            raise ModelFileError("class labels do not fit their dtype")
    if classes.size < 2 or not np.array_equal(np.unique(classes), classes):
        raise ModelFileError("classes must be at least 2 sorted, distinct labels")
    return classes


def _decode_fitted(est, fitted, members):
    from ._base import _SCHEDULES, KEY_SPACE, NORM_FLOOR_MIN_ROWS

    _check_dict(fitted, "fitted", ("n_features_in_", "n_iter_", "feature_names_in_",
                                   "feature_names", "classes", "state"),
                optional=("eta0_", "learning_rate_", "norm_floor_", "norm_sample",
                          "standardized", "key_scaled"))
    eta0 = fitted.get("eta0_")
    if eta0 is not None and not (isinstance(eta0, float) and math.isfinite(eta0) and eta0 > 0):
        raise ModelFileError(f"eta0_ must be a positive number, got {eta0!r}")
    schedule = fitted.get("learning_rate_")
    if schedule is not None and schedule not in _SCHEDULES:
        raise ModelFileError(f"learning_rate_ must be one of {sorted(_SCHEDULES)}, "
                             f"got {schedule!r}")
    # A file written before the floor existed trained without one: 0.0 keeps that.
    norm_floor = fitted.get("norm_floor_", 0.0)
    if not (isinstance(norm_floor, float) and math.isfinite(norm_floor) and norm_floor >= 0):
        raise ModelFileError(f"norm_floor_ must be a number >= 0, got {norm_floor!r}")
    norm_sample = fitted.get("norm_sample")
    if norm_sample is not None:
        _list(norm_sample, "norm_sample")
        if not (len(norm_sample) < NORM_FLOOR_MIN_ROWS and all(
                isinstance(v, float) and math.isfinite(v) and v > 0 for v in norm_sample)):
            raise ModelFileError(f"norm_sample must hold fewer than {NORM_FLOOR_MIN_ROWS} "
                                 "positive numbers")
    n_features = _int(fitted["n_features_in_"], "n_features_in_", 1, KEY_SPACE)
    n_iter = _int(fitted["n_iter_"], "n_iter_", 1, _MAX_INT64)
    standardization = None
    if fitted.get("standardized", False) is not False:
        if fitted["standardized"] is not True or not est._scales_columns():
            raise ModelFileError("standardized must be true, and only for a model with "
                                 "'normalized' steps on weights")
        if n_features > _MAX_STANDARDIZED_COLUMNS:
            raise ModelFileError(f"a standardized model has at most "
                                 f"{_MAX_STANDARDIZED_COLUMNS} columns, not {n_features}")
        standardization = (_array(members, "feature_mean", np.float64, (n_features,)),
                           _array(members, "feature_scale", np.float64, (n_features,)))
        if not (standardization[1] > 0).all():
            raise ModelFileError("feature_scale must be positive")
    keyed = None
    if fitted.get("key_scaled", False) is not False:
        if (fitted["key_scaled"] is not True or not est._scales_columns()
                or standardization is not None):
            raise ModelFileError("key_scaled must be true, only for a model with 'normalized' "
                                 "steps on weights and no standardized columns")
        keyed = (_array(members, "scaled_keys", np.int64, (None,)),
                 _array(members, "key_scales", np.float64, (None,)))
        keys, scales = keyed
        if not (0 < keys.size <= _MAX_STANDARDIZED_COLUMNS and keys.size == scales.size
                and (np.diff(keys) > 0).all() and keys[0] >= 0 and keys[-1] < n_features
                and (scales > 0).all()):
            raise ModelFileError("scaled_keys must be increasing column indices of the "
                                 "model, key_scales as many positive numbers")
    names_in = fitted["feature_names_in_"]
    if names_in is not None:
        _list(names_in, "feature_names_in_", n_features)
        if not all(isinstance(n, str) for n in names_in):
            raise ModelFileError("feature_names_in_ must hold strings")
    names = _list(fitted["feature_names"], "feature_names")
    if not all(isinstance(p, list) and len(p) == 2 and isinstance(p[1], str)
               and not isinstance(p[0], bool) and isinstance(p[0], int)
               and -_MAX_INT64 - 1 <= p[0] <= _MAX_INT64 for p in names):
        raise ModelFileError("feature_names must be a list of [int64 key, string name]")
    feature_names = dict((k, v) for k, v in names)
    if len(feature_names) != len(names):
        raise ModelFileError("feature_names repeats a key")
    if est._is_classifier() != (fitted["classes"] is not None):
        raise ModelFileError("classes must be given for a classifier, and only for one")
    classes = None
    n_models = 1
    if fitted["classes"] is not None:
        classes = _decode_classes(fitted["classes"], members)
        n_models = est._n_models(classes)
    state = _decode_state(est, fitted["state"], members, n_models)
    heap_keys = set().union(*(h.keys().tolist() for h in state.heaps))
    if not feature_names.keys() <= heap_keys:
        raise ModelFileError("feature_names names a key that is in no heap")
    if classes is not None:
        est.classes_ = classes
    est.n_features_in_ = n_features
    if names_in is not None:
        est.feature_names_in_ = np.array(names_in, dtype=object)
    for name, member, dtype in (("frequency", "feature_counts", np.uint32),
                                ("adaptive", "feature_squares", np.float32)):
        if schedule == name and (state.feature_counts is None
                                 or state.feature_counts.dtype != dtype):
            raise ModelFileError(f"learning_rate_ {name!r} needs the {member} array")
    est._state = state
    if schedule is None and getattr(est, "learning_rate", None) is not None:
        # A file from before learning_rate_: 'auto' trained under 'frequency' where it
        # kept counts ('adaptive' where it kept squared gradients).
        schedule = est.learning_rate
        if schedule == "auto":
            schedule = ("normalized" if state.feature_counts is None
                        else "adaptive" if state.feature_counts.dtype == np.float32
                        else "frequency")
    if schedule is not None:
        est.learning_rate_ = schedule
    est.n_iter_ = n_iter
    est._feature_names = PackedNames(feature_names)
    if eta0 is not None:
        est.eta0_ = eta0
    if est._floors_row_norms():
        est.norm_floor_ = norm_floor
        if norm_sample is not None:
            est._norm_sample = np.array(norm_sample, dtype=np.float64)
    if standardization is not None:
        est.feature_mean_, est.feature_scale_ = standardization
    if keyed is not None:
        est.scaled_keys_, est.key_scales_ = keyed
    est._set_fitted_attributes()


def _decode_state(est, spec, members, n_models):
    from ._base import _ModelState
    from ._core import CountSketch
    from ._core._topk_heap import _rebuild_topk_heap

    _check_dict(spec, "state", ("t", "n_passes", "shuffle_seed", "mistakes",
                                "last_pass_samples", "sketches", "heaps", "history"),
                optional=("log_loss",))
    t = _float(spec["t"], "t")
    if not 1.0 <= t < math.inf:
        raise ModelFileError(f"t must be at least 1, got {t}")
    intercept = _array(members, "intercept", np.float64, (n_models,))
    read_errors = _array(members, "read_errors", np.float64, (2,))
    sketches, heaps, history = [], [], None
    _list(spec["sketches"], "sketches", n_models if est._store.uses_sketch else 0)
    _list(spec["heaps"], "heaps", n_models if est._store.uses_heap else 0)
    for i, item in enumerate(spec["sketches"]):
        _check_dict(item, f"sketch {i}", ("scale",))
        table = members.get(f"sketch_{i}_table")
        if table is None or table.ndim != 2 or table.dtype.kind != "f" or 0 in table.shape:
            raise ModelFileError(f"the array 'sketch_{i}_table' must be a 2-D float table")
        table = _array(members, f"sketch_{i}_table", table.dtype, table.shape)
        seeds = _array(members, f"sketch_{i}_seeds", np.uint32, (table.shape[0],))
        try:
            sketch = CountSketch(table.shape[1], table.shape[0], dtype=table.dtype, seeds=seeds)
            sketch.set_table(table, _float(item["scale"], f"sketch {i} scale"))
        except (TypeError, ValueError, MemoryError) as exc:
            raise ModelFileError(f"sketch {i}: {exc}") from None
        if sketches and not sketch.same_configuration(sketches[0]):
            raise ModelFileError(f"sketch {i} differs in shape, dtype or seeds from sketch 0")
        sketches.append(sketch)
    aux = est._store.heap_aux
    for i, item in enumerate(spec["heaps"]):
        _check_dict(item, f"heap {i}", ("capacity", "scale", "aux_scale"))
        capacity = _int(item["capacity"], f"heap {i} capacity", 1, 2**31 - 1)
        keys = _array(members, f"heap_{i}_keys", np.int64, (None,))
        weights = _array(members, f"heap_{i}_weights", np.float64, keys.shape)
        values = _array(members, f"heap_{i}_aux", np.float64, keys.shape) if aux else None
        if heaps and capacity != heaps[0].capacity:
            raise ModelFileError(f"heap {i} has capacity {capacity}, heap 0 "
                                 f"{heaps[0].capacity}")
        if keys.size > capacity:
            raise ModelFileError(f"heap {i} holds {keys.size} entries for capacity {capacity}")
        try:
            heaps.append(_rebuild_topk_heap(
                capacity, keys, weights, _float(item["scale"], f"heap {i} scale"), values,
                _float(item["aux_scale"], f"heap {i} aux_scale"), est._heap_order()))
        except (TypeError, ValueError, MemoryError) as exc:
            raise ModelFileError(f"heap {i}: {exc}") from None
    bear = hasattr(est, "history_size")
    if bear != (spec["history"] is not None):
        raise ModelFileError("a BEAR model has a history, and only a BEAR model")
    if bear:
        history = _decode_history(spec["history"], members, n_models)
    counts = None
    # Saved when the state has them: trained under 'frequency' (counts) or 'adaptive'
    # (squares), whatever learning_rate says now (a model may be switched to another
    # schedule, or to it, after training).
    if "feature_counts" in members and "feature_squares" in members:
        raise ModelFileError("a model holds feature_counts or feature_squares, not both")
    if "feature_counts" in members:
        counts = _array(members, "feature_counts", np.uint32, (None,))
        if counts.size == 0:
            raise ModelFileError("the array 'feature_counts' is empty")
    if "feature_squares" in members:  # trained under 'adaptive'
        counts = _array(members, "feature_squares", np.float32, (None,))
        if counts.size == 0:
            raise ModelFileError("the array 'feature_squares' is empty")
        if (counts < 0).any():
            raise ModelFileError("feature_squares must be non-negative")
    state = _ModelState(sketches, heaps, intercept, t,
                        _int(spec["n_passes"], "n_passes", 0, _MAX_INT64),
                        _int(spec["shuffle_seed"], "shuffle_seed", 0, 2**31 - 1),
                        history=history, feature_counts=counts)
    state.mistakes = _int(spec["mistakes"], "mistakes", 0, _MAX_INT64)
    state.last_pass_samples = _int(spec["last_pass_samples"], "last_pass_samples", 0,
                                   _MAX_INT64)
    state.read_errors = read_errors
    if "log_loss" in spec:
        state.log_loss = _float(spec["log_loss"], "log_loss")
        if not 0.0 <= state.log_loss < math.inf:
            raise ModelFileError(f"log_loss must be finite and at least 0, got {state.log_loss}")
    return state


def _decode_history(spec, members, n_models):
    from ._bear_fast import _STATE, _rebuild_history

    _check_dict(spec, "history", ("history_size", "n_pairs", "head", "n_batches"))
    size = _int(spec["history_size"], "history_size", 1, 256)
    pairs = {}
    for name in _STATE:
        if f"history_{name}" not in members:
            raise ModelFileError(f"the array 'history_{name}' is missing")
        pairs[name] = members.pop(f"history_{name}")
    try:
        return _rebuild_history(size, n_models, pairs, spec["n_pairs"], spec["head"],
                                spec["n_batches"])
    except (TypeError, ValueError) as exc:
        raise ModelFileError(f"history: {exc}") from None
