"""sklearn-sketch: feature selection and linear learning in sketched feature spaces."""
from ._core import CountSketch, TopKHeap

__version__ = "0.1.0.dev0"

__all__ = ["CountSketch", "TopKHeap", "__version__"]
