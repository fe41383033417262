"""Run the Examples sections of the public docstrings as doctests."""
import doctest
import importlib

import pytest

MODULES = [
    "sklearn_sketch._core._murmurhash",
    "sklearn_sketch._core._count_sketch",
    "sklearn_sketch._core._topk_heap",
    "sklearn_sketch._core._heavy_hitters",
    "sklearn_sketch._base",
    "sklearn_sketch._model_files",
    "sklearn_sketch.mission",
    "sklearn_sketch.bear",
    "sklearn_sketch._bear_fast",
    "sklearn_sketch.weight_median",
    "sklearn_sketch.baselines",
    "sklearn_sketch.feature_extraction._kmer",
    "sklearn_sketch.datasets._dna",
]


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name):
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.attempted > 0, f"{name} has no examples"
    assert result.failed == 0
