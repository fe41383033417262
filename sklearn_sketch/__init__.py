"""sklearn-sketch: feature selection and linear learning in sketched feature spaces."""
from ._base import SelectedFeatures
from ._core import CountSketch, TopKHeap
from .bear import BearClassifier, BearRegressor
from .baselines import SparsePerceptronClassifier, SpaceSavingClassifier, TruncationClassifier
from .feature_extraction import KmerVectorizer
from .mission import (
    FeatureHashingClassifier,
    IHTClassifier,
    IHTRegressor,
    MissionClassifier,
    MissionRegressor,
)
from .weight_median import AWMSketchClassifier, WMSketchClassifier

__version__ = "0.1.0.dev0"

__all__ = [
    "AWMSketchClassifier",
    "BearClassifier",
    "BearRegressor",
    "CountSketch",
    "FeatureHashingClassifier",
    "IHTClassifier",
    "IHTRegressor",
    "KmerVectorizer",
    "MissionClassifier",
    "MissionRegressor",
    "SelectedFeatures",
    "SpaceSavingClassifier",
    "SparsePerceptronClassifier",
    "TopKHeap",
    "TruncationClassifier",
    "WMSketchClassifier",
    "__version__",
]
