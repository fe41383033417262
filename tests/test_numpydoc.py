"""Every public estimator, structure and function has a valid numpydoc docstring."""
import inspect

import pytest

import sklearn_sketch

validate = pytest.importorskip("numpydoc.validate").validate

# Checks not applied: See Also / extended summary / examples on every method
# (class docstrings carry the examples), and the summary-verb and wrapping rules.
IGNORED = {"GL08", "SA01", "EX01", "ES01", "RT02", "PR02", "GL02", "SS05"}
METHODS = ["fit", "partial_fit", "predict", "predict_proba", "decision_function",
           "transform", "get_support", "get_feature_names_out", "update", "query",
           "merge", "scale", "push_or_update", "push_many", "decode", "remember_feature_names"]


def public_objects():
    for name in sklearn_sketch.__all__:
        obj = getattr(sklearn_sketch, name)
        if name.startswith("_") or not (inspect.isclass(obj) or inspect.isfunction(obj)):
            continue
        yield f"sklearn_sketch.{name}"
        if inspect.isclass(obj):
            for method in METHODS:
                if callable(getattr(obj, method, None)):
                    yield f"sklearn_sketch.{name}.{method}"


@pytest.mark.parametrize("path", sorted(set(public_objects())))
def test_docstring_is_valid_numpydoc(path):
    errors = [(code, message) for code, message in validate(path)["errors"]
              if code not in IGNORED]
    assert not errors, errors
