"""Run the Examples of every public docstring as doctests.

The modules come from the public API (``sklearn_sketch``, ``sklearn_sketch.io``,
``sklearn_sketch.datasets``, ``sklearn_sketch.dask``), so a new public class or
function is tested without editing this list, and every one must have an
example.
"""
import doctest
import importlib
import inspect

import pytest

PACKAGES = ["sklearn_sketch", "sklearn_sketch.io", "sklearn_sketch.datasets",
            "sklearn_sketch.feature_extraction", "sklearn_sketch.dask", "sklearn_sketch.explain",
            "sklearn_sketch.deltoids", "sklearn_sketch.pmi"]
#: Modules whose examples are not reached through a public name's module.
EXTRA_MODULES = ["sklearn_sketch._core._murmurhash", "sklearn_sketch._core._heavy_hitters",
                 "sklearn_sketch._examples_fast", "sklearn_sketch.cli._csv",
                 "sklearn_sketch.cli._bins", "sklearn_sketch.cli._text",
                 "sklearn_sketch.cli._detect", "sklearn_sketch.cli._commands",
                 "sklearn_sketch._raw_features",
                 "sklearn_sketch._bear_fast", "sklearn_sketch.weight_median"]


def public_objects():
    """``(qualified name, object)`` of every public class and function."""
    found = {}
    for package in PACKAGES:
        module = importlib.import_module(package)
        names = getattr(module, "__all__", None)
        if names is None:  # a module whose public names are its functions
            names = [name for name, value in vars(module).items()
                     if not name.startswith("_") and inspect.isfunction(value)
                     and value.__module__ == module.__name__]
        for name in names:
            value = getattr(module, name)
            if inspect.isclass(value) or callable(value):
                found[f"{package}.{name}"] = value
    return found


PUBLIC = public_objects()
MODULES = sorted({obj.__module__ for obj in PUBLIC.values()} | set(EXTRA_MODULES))


@pytest.mark.parametrize("name", sorted(PUBLIC))
def test_public_name_has_an_example(name):
    assert ">>>" in (inspect.getdoc(PUBLIC[name]) or ""), f"{name} has no runnable example"


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name):
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.attempted > 0, f"{name} has no examples"
    assert result.failed == 0


def test_the_public_api_is_found():
    assert {"sklearn_sketch.MissionClassifier", "sklearn_sketch.io.partial_fit_stream",
            "sklearn_sketch.datasets.load_dna_sample", "sklearn_sketch.dask.fit"} <= set(PUBLIC)
