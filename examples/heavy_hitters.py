"""
Heavy hitters of a stream with a Count-Sketch and a top-k heap
==============================================================

A stream of 64-bit keys with Zipf frequencies goes through a Count-Sketch; after
each item the key's estimated count is offered to a top-k heap. The heap ends with
the heaviest keys, from memory that does not grow with the number of distinct keys.
"""

# %%
from sklearn_sketch.cli import run_heavy_hitters_demo

recall = run_heavy_hitters_demo(n_items=1_000_000, top=20, width=2**12, depth=5)
