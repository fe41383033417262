"""
Raw numeric columns, standardized by the estimator
==================================================

The columns of scikit-learn's breast cancer table run from about 0.001
(smoothness) to 4,000 (worst area). With the default
``learning_rate="normalized"``, every classifier here standardizes the columns
of dense input by the first data's mean and standard deviation
(``feature_mean_``, ``feature_scale_``), as ``StandardScaler`` in front would.
Read as given (the same table as a sparse matrix), the step follows the largest
columns and the model stays near the majority class; standardized, it scores
as ``StandardScaler`` with ``SGDClassifier`` does, and its weights, per
standard deviation of their column, name the columns that matter.
"""

# %%
import warnings

import matplotlib.pyplot as plt
import numpy as np
import scipy.sparse as sp
from sklearn.datasets import load_breast_cancer
from sklearn.exceptions import ConvergenceWarning
from sklearn.linear_model import SGDClassifier
from sklearn.model_selection import StratifiedKFold, cross_val_score
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from sklearn_sketch import AWMSketchClassifier, MissionClassifier

data = load_breast_cancer(as_frame=True)
X, y = data.data, data.target
print(f"{X.shape[0]} rows, {X.shape[1]} columns ranging over "
      f"{np.ptp(X.to_numpy(), axis=0).min():.3g} to {np.ptp(X.to_numpy(), axis=0).max():.3g}")

# %%
# 5-fold cross-validation with default parameters: the table as given (sparse)
# and as the estimator standardizes it (dense), beside scikit-learn.
cv = StratifiedKFold(5, shuffle=True, random_state=0)
scores = {}
with warnings.catch_warnings():
    warnings.simplefilter("ignore", ConvergenceWarning)  # "learned next to nothing"
    for make in (AWMSketchClassifier, MissionClassifier):
        name = make.__name__.replace("Classifier", "")
        scores[f"{name}, as given"] = cross_val_score(
            make(random_state=0), sp.csr_matrix(X.to_numpy()), y, cv=cv).mean()
        scores[f"{name}, standardized"] = cross_val_score(make(random_state=0), X, y,
                                                          cv=cv).mean()
scores["SGDClassifier, raw"] = cross_val_score(SGDClassifier(random_state=0), X, y,
                                               cv=cv).mean()
scores["StandardScaler + SGDClassifier"] = cross_val_score(
    make_pipeline(StandardScaler(), SGDClassifier(random_state=0)), X, y, cv=cv).mean()
for label, score in scores.items():
    print(f"{label:32s} {score:.3f}")

fig, ax = plt.subplots(figsize=(7, 3.5))
ax.barh(list(scores), list(scores.values()), color=["0.6", "C0", "0.6", "C0", "0.8", "C2"])
ax.set_xlim(0.5, 1.0)
ax.set_xlabel("accuracy, 5-fold CV")
ax.invert_yaxis()
fig.tight_layout()

# %%
# The selected columns, by name, with their weights per standard deviation.
model = AWMSketchClassifier(memory_budget="64KB", n_features_to_select=8,
                            random_state=0).fit(X, y)
selected = model.selected_features_  # heaviest first; keys are column indices
for column, weight in zip(selected.keys, selected.weights[:, 0]):
    print(f"{X.columns[column]:24s} {weight:+.3f}")
