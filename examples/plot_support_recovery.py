"""
Support recovery against compression: BEAR, MISSION and hard thresholding
=========================================================================

The BEAR paper's synthetic problem: a Gaussian design of 1,000 standardised
features, 8 of which carry weights in [0.8, 1.2], and noiseless targets. Each
estimator keeps its weights in a Count-Sketch of 5 rows and a heap of 8
features; the narrower the sketch, the more features share a cell
(compression factor ``p / (depth * width)``). A problem counts as solved when
the heap holds exactly the 8 planted features. BEAR's second-order steps keep
recovering the support at compression factors where MISSION's first-order
steps stop. Iterative hard thresholding (IHT), which holds 8 exact weights
and no sketch, is the uncompressed reference: on this well-conditioned problem
it always succeeds (the MISSION paper's Table 1 shows where it does not:
attenuated features, reproduced in ``benchmarks/reproduce_mission.py``).
"""

# %%
import matplotlib.pyplot as plt
import numpy as np

from sklearn_sketch import BearRegressor, IHTRegressor, MissionRegressor

N_SAMPLES, N_FEATURES, N_PLANTED, DEPTH = 900, 1000, 8, 5


def planted_problem(seed):
    rng = np.random.RandomState(seed)
    X = rng.normal(size=(N_SAMPLES, N_FEATURES))
    support = np.sort(rng.choice(N_FEATURES, N_PLANTED, replace=False))
    coef = np.zeros(N_FEATURES)
    coef[support] = rng.uniform(0.8, 1.2, N_PLANTED)
    return X, X @ coef, support


def contenders(width, seed):
    shape = dict(n_features_to_select=N_PLANTED, learning_rate="constant",
                 fit_intercept=False, random_state=seed)
    sketch = dict(sketch_width=width, sketch_depth=DEPTH, **shape)
    return {
        # MISSION is best with small batches; BEAR's curvature pairs are least
        # noisy on full ones (the steps are the best of 0.1, 0.03, 0.01 here).
        "MISSION": MissionRegressor(batch_size=32, max_iter=10, eta0=0.03, **sketch),
        "BEAR": BearRegressor(batch_size=N_SAMPLES, max_iter=50, eta0=0.1, **sketch),
    }


def recovers(model, X, y, support):
    try:
        return np.array_equal(model.fit(X, y).get_support(indices=True), support)
    except (ValueError, FloatingPointError):  # a diverging step fails the problem
        return False


# %%
widths = [200, 100, 50, 34]
compression = [N_FEATURES / (DEPTH * w) for w in widths]
seeds = range(4)
success = {name: np.zeros(len(widths)) for name in contenders(widths[0], 0)}
iht_success = 0
for seed in seeds:
    X, y, support = planted_problem(seed)
    iht = IHTRegressor(N_PLANTED, batch_size=32, max_iter=10, eta0=0.03,
                       learning_rate="constant", fit_intercept=False, random_state=seed)
    iht_success += recovers(iht, X, y, support)
    for i, width in enumerate(widths):
        for name, model in contenders(width, seed).items():
            success[name][i] += recovers(model, X, y, support)
for name, counts in success.items():
    print(f"{name:8}", " ".join(f"CF {cf:4.1f}: {c / len(seeds):.2f}"
                                for cf, c in zip(compression, counts)))
print(f"IHT, no sketch: {iht_success / len(seeds):.2f}")

# %%
fig, ax = plt.subplots(figsize=(7, 4.5))
for (name, counts), marker in zip(success.items(), "os"):
    ax.plot(compression, counts / len(seeds), marker=marker, label=name)
ax.axhline(iht_success / len(seeds), color="grey", linestyle="--",
           label="IHT, 8 exact weights, no sketch")
ax.set_xlabel("compression factor p / (depth x width)")
ax.set_ylabel(f"exact support recovered ({len(seeds)} problems)")
ax.set_ylim(-0.05, 1.05)
ax.set_title("8 planted features among 1,000, noiseless")
ax.legend()
fig.tight_layout()
plt.show()
