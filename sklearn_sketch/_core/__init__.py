"""Compiled core of sklearn-sketch: hashing, the Count-Sketch and the top-k heap."""
from ._count_sketch import CountSketch
from ._heavy_hitters import track_heavy_hitters
from ._murmurhash import bucket_and_sign_arrays, hash_names, murmurhash3_32, murmurhash3_64
from ._topk_heap import TopKHeap

__all__ = [
    "CountSketch",
    "TopKHeap",
    "bucket_and_sign_arrays",
    "hash_names",
    "murmurhash3_32",
    "murmurhash3_64",
    "track_heavy_hitters",
]
