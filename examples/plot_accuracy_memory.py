"""
Accuracy against memory, at equal real bytes
============================================

DNA reads of four bacterial species (the sample shipped with the package),
classified by their canonical 12-mers: 4^12 = 16.7 million possible features.
Each estimator is given the same ``memory_budget`` in real bytes, for all four
class models together, and is scored on reads of held-out strains.
``SGDClassifier`` on all features (a dense weight per column and class) is the
line to reach. The Active-Set Weight-Median Sketch and the WM-Sketch come
within about a point of feature hashing at every budget while naming their
heaviest k-mers; MISSION, whose gradient comes from its heap alone, needs more
memory for the same accuracy.
"""

# %%
import time

import matplotlib.pyplot as plt
import numpy as np
from sklearn.linear_model import SGDClassifier

from sklearn_sketch import (
    AWMSketchClassifier,
    FeatureHashingClassifier,
    MissionClassifier,
    WMSketchClassifier,
)
from sklearn_sketch.datasets import load_dna_sample

train = load_dna_sample(n_reads_per_class=2000, read_length=150, k=12, random_state=0)
test = load_dna_sample(n_reads_per_class=500, read_length=150, k=12, split="test",
                       random_state=1)
print(f"{train.X.shape[0]} training reads, {train.X.shape[1]:,} features, "
      f"{train.X.nnz:,} non-zeros")

# %%
# One fit per estimator and budget; ``memory_bytes_`` is what each really holds.
ESTIMATORS = {
    "AWM-Sketch": AWMSketchClassifier,
    "WM-Sketch": WMSketchClassifier,
    "MISSION": MissionClassifier,
    "feature hashing": FeatureHashingClassifier,
}
budgets = [2**14, 2**16, 2**18, 2**20]
accuracy = {name: [] for name in ESTIMATORS}
started = time.perf_counter()
for name, cls in ESTIMATORS.items():
    for budget in budgets:
        model = cls(memory_budget=budget, random_state=0).fit(train.X, train.target)
        assert model.memory_bytes_ <= budget
        accuracy[name].append(model.score(test.X, test.target))
    print(f"{name:16}", " ".join(f"{a:.3f}" for a in accuracy[name]))

# scikit-learn's model needs a weight per column and class: keep the columns the
# training reads hold (the others would stay 0) so that it fits in memory.
seen = np.unique(train.X.indices)
dense = SGDClassifier(random_state=0).fit(train.X[:, seen], train.target)
dense_accuracy = dense.score(test.X[:, seen], test.target)
dense_bytes = dense.coef_.nbytes
print(f"SGDClassifier on the {seen.size:,} k-mers seen: {dense_accuracy:.3f} in "
      f"{dense_bytes / 2**20:.0f} MiB; sketches fitted in {time.perf_counter() - started:.0f} s")

# %%
fig, ax = plt.subplots(figsize=(7, 4.5))
for (name, values), marker in zip(accuracy.items(), "osD^"):
    ax.plot(budgets, values, marker=marker, label=name)
ax.axhline(dense_accuracy, color="grey", linestyle="--",
           label=f"SGDClassifier, every k-mer seen ({dense_bytes / 2**20:.0f} MiB)")
ax.axhline(np.bincount(test.target).max() / test.target.size, color="grey", linestyle=":",
           label="majority class")
ax.set_xscale("log", base=2)
ax.set_xticks(budgets, [f"{b // 1024} KB" if b < 2**20 else f"{b // 2**20} MB"
                        for b in budgets])
ax.set_xlabel("memory_budget (real bytes, 4 class models)")
ax.set_ylabel("accuracy on held-out strains")
ax.set_title("DNA reads of 4 species, 12-mers")
ax.legend(loc="lower right", fontsize="small")
fig.tight_layout()
plt.show()
