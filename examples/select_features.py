"""
Selecting features of a sparse stream in fixed memory
=====================================================

A stream of sparse binary samples over 200,000 features, of which 8 decide the
label. MISSION and the Active-Set Weight-Median Sketch find them from tens of
kilobytes of state; feature hashing with MISSION's sketch memory predicts but
cannot say which features it used.
"""

# %%
import numpy as np
import scipy.sparse as sp

from sklearn_sketch import AWMSketchClassifier, FeatureHashingClassifier, MissionClassifier

rng = np.random.default_rng(0)
n_samples, n_features, per_sample = 20_000, 200_000, 30
planted = rng.choice(n_features, 8, replace=False)
weights = np.zeros(n_features)
weights[planted] = rng.choice([-3.0, 3.0], 8)

columns = rng.integers(0, n_features, size=(n_samples, per_sample))
columns[:, :2] = rng.choice(planted, size=(n_samples, 2))   # each sample holds two planted
X = sp.csr_matrix((np.ones(columns.size), columns.ravel(),
                   np.arange(0, columns.size + 1, per_sample)), shape=(n_samples, n_features))
X.sum_duplicates()
X.data[:] = 1.0
y = (X @ weights + rng.normal(size=n_samples) > 0).astype(int)
X_train, y_train, X_test, y_test = X[:15_000], y[:15_000], X[15_000:], y[15_000:]

# %%
# MISSION and feature hashing get the same sketch memory (3 x 4096 float32 cells).
models = {
    "MISSION": MissionClassifier(16, sketch_width=2**12, sketch_depth=3,
                                 learning_rate="constant", eta0=0.1, max_iter=2, random_state=0),
    "AWM-Sketch": AWMSketchClassifier("16KB", learning_rate="constant", eta0=0.1, max_iter=2,
                                      random_state=0),
    "Feature hashing": FeatureHashingClassifier(sketch_width=3 * 2**12, learning_rate="constant",
                                                eta0=0.1, max_iter=2, random_state=0),
}
for name, model in models.items():
    model.fit(X_train, y_train)
    line = f"{name:16} accuracy {model.score(X_test, y_test):.3f}  memory {model.memory_bytes_:,} B"
    if hasattr(model, "selected_features_"):
        found = np.intersect1d(model.selected_features_.keys[:8], planted).size
        line += f"  planted features among its top 8: {found}/8"
    print(line)
