"""sklearn-sketch: feature selection and linear learning in sketched feature spaces.

The public names load on first use (PEP 562), so ``import sklearn_sketch`` and
the command line's ``--help`` and ``--version`` do not pay for importing
scikit-learn.
"""
import importlib

__version__ = "0.1.0.dev0"

_SOURCES = {
    "SelectedFeatures": "._base",
    "CountSketch": "._core",
    "TopKHeap": "._core",
    "BearClassifier": ".bear",
    "BearRegressor": ".bear",
    "SparsePerceptronClassifier": ".baselines",
    "SpaceSavingClassifier": ".baselines",
    "TruncationClassifier": ".baselines",
    "KmerVectorizer": ".feature_extraction",
    "ModelFileError": "._model_files",
    "average_estimators": "._merge",
    "load": "._model_files",
    "save": "._model_files",
    "FeatureHashingClassifier": ".mission",
    "IHTClassifier": ".mission",
    "IHTRegressor": ".mission",
    "MissionClassifier": ".mission",
    "MissionRegressor": ".mission",
    "AWMSketchClassifier": ".weight_median",
    "WMSketchClassifier": ".weight_median",
}

__all__ = sorted(_SOURCES) + ["__version__"]


def __getattr__(name):
    if name not in _SOURCES:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(_SOURCES[name], __name__), name)
    globals()[name] = value
    return value


def __dir__():
    return sorted(set(globals()) | set(__all__))
