"""
Which attributes make a flight late? Explaining outliers in 128 KB
==================================================================

Every flight out of New York in 2013; the outliers are the 20% most delayed
departures (``dep_delay > q0.8``). :class:`~sklearn_sketch.explain.OutlierExplainer`
trains an Active-Set WM-Sketch of outliers against inliers on the flights'
attributes, one 1-sparse update per attribute as the WM-Sketch paper does,
inside 128 KB of real bytes with the names. Each retrieved attribute's weight
is drawn against its exact log relative risk (counted by
:class:`~sklearn_sketch.explain.ExactExplainer`): the paper's Fig. 9. Heavy
hitters of the outlier rows (Apache DataSketches' frequent-items sketch, the
MacroBase way, in the same bytes:
:class:`~sklearn_sketch.explain.HeavyHittersExplainer`) retrieve the frequent attributes instead:
their risks crowd around 1. The data are read from ``../shared/data/flights``
(or ``SKLEARN_SKETCH_DATA``); without them the example says so and stops.
"""

# %%
import os
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np

from sklearn_sketch.explain import ExactExplainer, HeavyHittersExplainer, OutlierExplainer

COLUMNS = ["carrier", "origin", "dest", "tailnum", "flight", "month", "day", "hour"]
RULE = "dep_delay > q0.8"


def find_flights():
    """The flights file of the shared data folder, or None."""
    candidates = [Path(os.environ["SKLEARN_SKETCH_DATA"])] if os.environ.get(
        "SKLEARN_SKETCH_DATA") else []
    here = Path(globals().get("__file__", "plot_explain_outliers.py")).resolve()
    candidates += [parent / "shared" / "data" for parent in here.parents]
    for folder in candidates:
        if (folder / "flights" / "flights.csv.zip").is_file():
            return folder / "flights" / "flights.csv.zip"
    return None


def log_risk(outliers, support, n_outliers, n_rows):
    """Log relative risk, half a count added so that empty cells stay finite."""
    return np.log(((outliers + 0.5) / (support + 1.0))
                  / ((n_outliers - outliers + 0.5) / (n_rows - support + 1.0)))


path = find_flights()
if path is None:
    print("flights.csv.zip not found (../shared/data/flights or SKLEARN_SKETCH_DATA): "
          "nothing to explain.")
else:
    import pandas as pd

    flights = pd.read_csv(path, usecols=[*COLUMNS, "dep_delay"], dtype={c: str for c in COLUMNS})
    explainer = OutlierExplainer(RULE, columns=COLUMNS, max_order=1, random_state=0).fit(flights)
    exact = ExactExplainer(RULE, columns=COLUMNS, max_order=1, min_support=0.0).fit(flights)
    table = exact.explanations_.set_index("feature")
    table["log_risk"] = log_risk(table.outliers, table.support, exact.n_outliers_, exact.n_rows_)
    print(explainer)

    # %%
    # Heavy hitters of the outlier rows and of all rows, in the same bytes.
    heavy = HeavyHittersExplainer(RULE, columns=COLUMNS, max_order=1,
                                  memory_budget=explainer.memory_budget,
                                  min_support=0.0).fit(flights)
    hh_names = heavy.explanations_.feature.tolist()

    # %%
    selected = explainer.estimator_.selected_features_
    ours = [(name, w) for name, w in zip(selected.names.tolist(), selected.weights[:, 0])
            if name in table.index]
    r = np.corrcoef([w for _, w in ours], table.loc[[n for n, _ in ours], "log_risk"])[0, 1]
    hh_risk = table.loc[[n for n in hh_names if n in table.index], "log_risk"]
    print(f"OutlierExplainer: {len(ours)} attributes, Pearson r with the exact log risk "
          f"{r:.2f}; heavy hitters: {len(hh_risk)} attributes, mean |log risk| "
          f"{np.abs(hh_risk).mean():.2f} against ours "
          f"{np.abs(table.loc[[n for n, _ in ours], 'log_risk']).mean():.2f}")

    fig, axes = plt.subplots(1, 2, figsize=(11, 4.5))
    axes[0].scatter(table.loc[[n for n, _ in ours], "log_risk"], [w for _, w in ours], s=8,
                    alpha=0.6)
    axes[0].set_xlabel("exact log relative risk")
    axes[0].set_ylabel("weight in the explainer's heap")
    axes[0].set_title(f"AWM-Sketch, {explainer.memory_bytes_:,} bytes: r = {r:.2f}")
    axes[1].hist([table.loc[[n for n, _ in ours], "log_risk"], hh_risk], bins=40,
                 label=["OutlierExplainer", "heavy hitters of the outliers"])
    axes[1].set_xlabel("exact log relative risk of the retrieved attributes")
    axes[1].set_ylabel("attributes")
    axes[1].legend()
    fig.suptitle(f"Flights out of New York, 2013: {RULE} ({exact.n_outliers_:,} of "
                 f"{exact.n_rows_:,})")
    fig.tight_layout()
    plt.show()
