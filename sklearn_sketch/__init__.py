"""sklearn-sketch: feature selection and linear learning in sketched feature spaces."""
from ._base import SelectedFeatures
from ._core import CountSketch, TopKHeap
from .mission import (
    FeatureHashingClassifier,
    IHTClassifier,
    IHTRegressor,
    MissionClassifier,
    MissionRegressor,
)

__version__ = "0.1.0.dev0"

__all__ = [
    "CountSketch",
    "FeatureHashingClassifier",
    "IHTClassifier",
    "IHTRegressor",
    "MissionClassifier",
    "MissionRegressor",
    "SelectedFeatures",
    "TopKHeap",
    "__version__",
]
