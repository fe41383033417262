"""Where a model keeps its weights: one small object per weight store.

The compiled pass (``_sgd_fast.sgd_pass``) dispatches on a
:class:`~sklearn_sketch._sgd_fast.WeightStore` code; everything the Python
side decides per store (which structures to allocate, what a heap entry
holds, what predictions read, how copies average) lives here, as
scikit-learn's losses are objects rather than flags in the estimator.
"""
import numpy as np

from ._sgd_fast import WeightStore


class _Store:
    """Sketch and heap, the heap holding sketch estimates (MISSION, BEAR).

    Attributes
    ----------
    code : WeightStore
        The compiled pass's store.
    uses_sketch, uses_heap : bool
        Which structures the model has.
    heap_value : {0, 1, 2}
        How a heap entry holds its model weight: 0 its weight, 1 weight times
        its second value, 2 its second value (the kernel's convention).
    averaged : str or None
        None when copies average; otherwise what has no average.
    standardizes : bool
        Whether dense columns are standardized under 'normalized' steps: the
        model learns weights, which do not care where a column's zero is (a
        store that counts occurrences does).
    """

    code = WeightStore.SKETCH_AND_HEAP
    uses_sketch = True
    uses_heap = True
    heap_value = 0
    averaged = None
    standardizes = True

    @property
    def heap_aux(self):
        """Whether a heap entry carries a second value."""
        return self.heap_value != 0

    def heap_share(self, share):
        """The share of a budget for the heap: ``share`` when both structures exist."""
        return 0 if not self.uses_heap else 1 if not self.uses_sketch else share

    def heap_items(self, heap):
        """Keys and model weights of a heap, heaviest entry first."""
        keys, weights = heap.items()
        if self.heap_value == 1:
            weights = weights * heap.aux_items()
        elif self.heap_value == 2:
            weights = heap.aux_items()
        return keys, weights

    def prediction_reads(self, estimator):
        """``(sketches, heaps, weight_median)`` that predictions read (see the kernel)."""
        if estimator.predict_with_ == "sketch":
            return estimator.sketches_, estimator.heaps_, False
        return [], estimator.heaps_, False

    def sketch_root(self, sketch):
        """What a sketch query is multiplied by to give a weight."""
        return 1.0

    def averaged_heap_weights(self, keys, heaps, sketches, merged_sketch, lam):
        """The averaged model weights of ``keys`` (the union of the copies' heap keys)."""
        return self.sketch_root(merged_sketch) * merged_sketch.query(keys)

    def after_heap_average(self, keys, weights, merged_sketch):
        """Hook for the keys an averaged heap did not keep (AWM writes them back)."""


class _HeapOnly(_Store):
    """Heap only: hard thresholding, simple truncation."""

    code = WeightStore.HEAP_ONLY
    uses_sketch = False

    def prediction_reads(self, estimator):
        return [], estimator.heaps_, False

    def averaged_heap_weights(self, keys, heaps, sketches, merged_sketch, lam):
        """Each copy's heap weight, or 0 where its heap does not hold the key."""
        weights = np.zeros(keys.size)
        for heap, sketch, w in zip(heaps, sketches or [None] * len(heaps), lam):
            own = (np.zeros(keys.size) if sketch is None
                   else self.sketch_root(sketch) * sketch.query(keys))
            heap_keys, heap_weights = heap.items()
            own[np.searchsorted(keys, heap_keys)] = heap_weights
            weights += w * own
        return weights


class _SketchOnly(_Store):
    """Sketch only: feature hashing."""

    code = WeightStore.SKETCH_ONLY
    uses_heap = False

    def prediction_reads(self, estimator):
        return estimator.sketches_, estimator.heaps_, False


class _WeightMedian(_Store):
    """WM-Sketch: the heap tracks the top estimates; predictions read the sketch."""

    code = WeightStore.WEIGHT_MEDIAN

    def prediction_reads(self, estimator):
        return estimator.sketches_, [], True

    def sketch_root(self, sketch):
        return float(np.sqrt(sketch.depth))


class _ActiveSet(_HeapOnly):
    """AWM-Sketch: exact heavy weights in the heap, the tail in the sketch."""

    code = WeightStore.ACTIVE_SET
    uses_sketch = True

    def prediction_reads(self, estimator):
        return estimator.sketches_, estimator.heaps_, True

    def sketch_root(self, sketch):
        return float(np.sqrt(sketch.depth))

    def after_heap_average(self, keys, weights, merged_sketch):
        # As the kernel does on an eviction, the sketch is moved to read the
        # averaged weight of each key that is not kept (the sketch holds the tail).
        root = self.sketch_root(merged_sketch)
        merged_sketch.update(keys, (weights - root * merged_sketch.query(keys)) / root)


class _ProbabilisticTruncation(_HeapOnly):
    """Probabilistic truncation: a heap entry holds a reservoir key and its weight."""

    code = WeightStore.PROB_TRUNCATION
    heap_value = 1
    averaged = "probabilistic truncation's reservoir keys"


class _SpaceSaving(_HeapOnly):
    """Space-Saving: a heap entry holds a count and its weight."""

    code = WeightStore.SPACE_SAVING
    heap_value = 2
    averaged = "Space-Saving's counts"
    standardizes = False  # it counts the rows a column is non-zero in


class _SoftThreshold(_HeapOnly):
    """The sparse perceptron's soft-thresholded heap."""

    code = WeightStore.SOFT_THRESHOLD


SKETCH_AND_HEAP = _Store()
HEAP_ONLY = _HeapOnly()
SKETCH_ONLY = _SketchOnly()
WEIGHT_MEDIAN = _WeightMedian()
ACTIVE_SET = _ActiveSet()
PROBABILISTIC_TRUNCATION = _ProbabilisticTruncation()
SPACE_SAVING = _SpaceSaving()
SOFT_THRESHOLD = _SoftThreshold()
