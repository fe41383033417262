"""
The heap's weights against the exact model's
=============================================

A sketched model keeps the weights of its heaviest features in a heap. How
close are they to the weights of the model trained without a memory limit?
A synthetic sparse stream, as in the WM-Sketch paper's section 7: 20,000
binary features of Zipf-like frequency, 30 per sample, 5% of them with
heavy-tailed true weights, and logistic labels. The exact model is
scikit-learn's ``LogisticRegression`` with the same L2 penalty, trained to
convergence on every feature. Each point is a feature of a heap: its weight in
the exact model (x) against the sketched model's (y). The Active-Set
WM-Sketch holds its heap's weights exactly and updates them as the exact
model would, so its points follow the diagonal; the WM-Sketch and MISSION read
weights from Count-Sketch cells shared with other features, and scatter
more. ``benchmarks/reproduce_wm_sketch.py`` measures the same error against
memory for every method of the paper.
"""

# %%
import matplotlib.pyplot as plt
import numpy as np
import scipy.sparse as sp
from sklearn.linear_model import LogisticRegression

from sklearn_sketch import AWMSketchClassifier, MissionClassifier, WMSketchClassifier

N_SAMPLES, N_FEATURES, PER_SAMPLE = 10_000, 20_000, 30
ALPHA = 1e-3  # the L2 penalty of every model, per sample as in SGDClassifier
BUDGET = "128KB"

rng = np.random.default_rng(0)
frequency = 1.0 / np.arange(1, N_FEATURES + 1) ** 1.1
columns = rng.choice(N_FEATURES, size=(N_SAMPLES, PER_SAMPLE), p=frequency / frequency.sum())
X = sp.csr_matrix((np.ones(columns.size), columns.ravel(),
                   np.arange(0, columns.size + 1, PER_SAMPLE)), shape=(N_SAMPLES, N_FEATURES))
X.sum_duplicates()
X.data[:] = 1.0
true_weights = rng.standard_t(2, size=N_FEATURES) * (rng.random(N_FEATURES) < 0.05)
y = (rng.random(N_SAMPLES) < 1 / (1 + np.exp(-(X @ true_weights)))).astype(int)

# LogisticRegression's C is the inverse of the penalty summed over samples.
exact = LogisticRegression(C=1 / (N_SAMPLES * ALPHA), max_iter=3000, tol=1e-6).fit(X, y)
exact_weights = exact.coef_[0]
print(f"exact model: {N_FEATURES:,} weights, {exact.coef_.nbytes:,} bytes")

# %%
models = {
    "AWM-Sketch": AWMSketchClassifier(memory_budget=BUDGET, alpha=ALPHA, random_state=0),
    "WM-Sketch": WMSketchClassifier(memory_budget=BUDGET, alpha=ALPHA, random_state=0),
    "MISSION": MissionClassifier(memory_budget=BUDGET, alpha=ALPHA, random_state=0),
}
fig, axes = plt.subplots(1, len(models), figsize=(12, 4.2), sharex=True, sharey=True)
low, high = exact_weights.min(), exact_weights.max()
for ax, (name, model) in zip(axes, models.items()):
    model.fit(X, y)
    selected = model.selected_features_
    sketched, reference = selected.weights[:, 0], exact_weights[selected.keys]
    r = np.corrcoef(sketched, reference)[0, 1]
    error = np.linalg.norm(sketched - reference) / np.linalg.norm(reference)
    print(f"{name:11} heap of {selected.keys.size:4} features in {model.memory_bytes_:,} "
          f"bytes: Pearson r {r:.2f}, relative L2 error {error:.2f}")
    ax.scatter(reference, sketched, s=8, alpha=0.6)
    ax.plot([low, high], [low, high], color="grey", linestyle="--", linewidth=1)
    ax.set_title(f"{name}: {selected.keys.size} heap features, r = {r:.2f}", fontsize="medium")
    ax.set_xlabel("weight in the exact model")
axes[0].set_ylabel("weight in the heap")
fig.suptitle(f"Heap weights against LogisticRegression's, memory_budget={BUDGET}")
fig.tight_layout()
plt.show()
