"""Reproduce the Weight-Median Sketch paper's recovery-error figures (Tai et al., SIGMOD 2018).

Fig. 3 (relative L2 error of the top-K weights at 8KB, across data sets) and
Fig. 4 (the same error on one data set as the budget grows from 2KB to 32KB)
compare the AWM-Sketch, the WM-Sketch, simple and probabilistic truncation,
Space-Saving frequent features and feature hashing. The error (section 7.2) is

    RelErr(w^K, w*) = ||w^K - w*||_2 / ||w*^K - w*||_2   (>= 1; 1 is the true top-K)

where ``w^K`` holds the K weights a method returns, ``w*`` the weights of the
uncompressed model and ``w*^K`` its K largest. As in the paper (and its released
code, method ``logistic``), ``w*`` is memory-unconstrained logistic regression
trained by the same single pass of online gradient descent; a second table uses
the batch optimum of the same L2-regularised objective (scikit-learn's
``LogisticRegression``), the ``w*`` of the paper's theory.

The paper's data sets (RCV1, URL, KDDA) are not available here. We use:

* 20 Newsgroups (``shared/data/20news-bydate.tar.xz``, train + test posts, one
  stream shuffled once): comp.* and sci.* posts against the rest (47% positive,
  like RCV1's 47%), word unigrams, sublinear TF-IDF rows of unit L2 norm (RCV1
  is cosine-normalised log TF-IDF);
* a synthetic stream: binary features of Zipf frequencies (rows of unit L2
  norm) and Laplace true weights independent of frequency, so the frequent
  features are not the discriminative ones (the paper's explanation of URL).

Settings from section 7.1: K = 128, one pass, eta0 = 0.1, lambda = 1e-6 (Fig. 4),
budgets 2KB to 32KB in the paper's cost model (4 bytes per feature identifier,
weight and auxiliary number), AWM/WM shapes from the paper's Table 2. The
released code steps by ``eta0 / (1 + eta0 * lambda * t)``; we step by the constant
``eta0`` (the library has no such schedule): over our stream the two differ by
less than 0.2% at lambda = 1e-6 and 19% at lambda = 1e-4. Each setting runs with
several random seeds (hashes, reservoir keys); the data order is fixed.

    python benchmarks/reproduce_wm_sketch.py              # full run, 2-3 minutes
    python benchmarks/reproduce_wm_sketch.py --quick      # a small version, seconds
    python benchmarks/reproduce_wm_sketch.py --json out.json --data-dir ../shared/data
"""
import argparse
import json
import os
import sys
import tarfile
import time
from pathlib import Path

import numpy as np
import scipy.sparse as sp
from scipy.special import expit

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _provenance import provenance  # noqa: E402

from sklearn_sketch import (  # noqa: E402
    AWMSketchClassifier,
    FeatureHashingClassifier,
    SpaceSavingClassifier,
    TruncationClassifier,
    WMSketchClassifier,
)

DEFAULT_JSON = Path(__file__).resolve().parent / "results" / "reproduce_wm_sketch.json"
TARBALL = "20news-bydate.tar.xz"
POSITIVE_GROUPS = ("comp.", "sci.")

K = 128  # top-K of section 7.2 (the paper's K = 128, section 7.4 and Table 2's heaps)
ETA0 = 0.1
PAPER_LAMBDA = 1e-6  # Fig. 4
SECOND_LAMBDA = 1e-4  # Fig. 5 varies lambda; also where one pass is nearer the batch optimum
KB = 1024
BUDGETS = (2 * KB, 4 * KB, 8 * KB, 16 * KB, 32 * KB)
FIG3_BUDGET = 8 * KB

# Table 2 of the paper: (heap capacity |S|, sketch width, depth) minimising RelErr on RCV1.
TABLE2 = {
    "WM": {2 * KB: (128, 128, 2), 4 * KB: (256, 256, 2), 8 * KB: (128, 128, 14),
           16 * KB: (128, 128, 30), 32 * KB: (128, 256, 31)},
    "AWM": {2 * KB: (128, 256, 1), 4 * KB: (256, 512, 1), 8 * KB: (512, 1024, 1),
            16 * KB: (1024, 2048, 1), 32 * KB: (2048, 4096, 1)},
}
METHODS = ("AWM", "WM", "Trun", "PTrun", "SS", "Hash")
METHOD_NAMES = {"AWM": "AWM-Sketch", "WM": "WM-Sketch", "Trun": "simple truncation",
                "PTrun": "probabilistic truncation", "SS": "Space-Saving",
                "Hash": "feature hashing"}
# What the text of section 7.2 / the introduction says of each method (RCV1, URL, KDDA).
# The figures themselves are images absent from the text version, so no values are read
# off them; the only numbers stated are the RCV1 ratios of the introduction.
PAPER_SAYS = {
    "AWM": "lowest RelErr on RCV1, URL and KDDA (Fig. 3); lowest at every budget (7.2)",
    "WM": "above AWM (Sec. 5.2: the active set 'significantly improves' recovery)",
    "Trun": "RCV1: AWM's error is 10x better than truncation's (Sec. 1)",
    "PTrun": "URL: below Space-Saving (Sec. 7.2)",
    "SS": "RCV1: AWM 4x better (Sec. 1); competitive on RCV1, worse than PTrun on URL",
    "Hash": "'poor recovery error: colliding features cannot be disambiguated'",
}
PAPER_RATIO_TO_AWM = {"Trun": 10.0, "SS": 4.0}
RCV1_EXAMPLES = 677_000  # Table 1


# ------------------------------------------------------------------------ data
def locate_tarball(data_dir=None):
    """Path of the 20 Newsgroups tarball: ``data_dir``, $SKLEARN_SKETCH_DATA or shared/data."""
    if data_dir is not None:
        candidates = [Path(data_dir)]
    elif os.environ.get("SKLEARN_SKETCH_DATA"):
        candidates = [Path(os.environ["SKLEARN_SKETCH_DATA"])]
    else:
        candidates = [parent / "shared" / "data" for parent in Path(__file__).resolve().parents]
    for folder in candidates:
        if (folder / TARBALL).is_file():
            return folder / TARBALL
    raise FileNotFoundError(f"{TARBALL} not found in {[str(c) for c in candidates]}; "
                            "pass --data-dir")


def load_twenty_news(tarball, n_docs=None):
    """TF-IDF rows (unit L2 norm) and labels (comp.*/sci.* = 1) of all posts, shuffled once."""
    from sklearn.feature_extraction.text import TfidfVectorizer

    docs, groups = [], []
    with tarfile.open(tarball) as tar:
        for member in tar:
            if member.isfile():
                docs.append(tar.extractfile(member).read().decode("latin-1"))
                groups.append(member.name.split("/")[-2])
    order = np.random.default_rng(0).permutation(len(docs))[:n_docs]
    y = np.array([groups[i].startswith(POSITIVE_GROUPS) for i in order], dtype=np.int64)
    X = TfidfVectorizer(sublinear_tf=True).fit_transform([docs[i] for i in order])
    return X.tocsr(), y


def synthetic_stream(n, d, nnz, seed=0):
    """Zipf-frequency binary features (unit-norm rows), Laplace weights, logistic labels."""
    rng = np.random.default_rng(seed)
    frequency = 1.0 / np.arange(1, d + 1)
    columns = rng.permutation(d)[rng.choice(d, size=(n, nnz), p=frequency / frequency.sum())]
    X = sp.csr_matrix((np.ones(n * nnz), (np.repeat(np.arange(n), nnz), columns.ravel())),
                      shape=(n, d))
    X.data[:] = 1.0  # repeated draws of a feature in a row: presence, not count
    X = sp.diags(1.0 / np.sqrt(np.diff(X.indptr))) @ X
    scores = X @ rng.laplace(0.0, 1.0, d)
    scores = 3.0 * (scores - scores.mean()) / scores.std()
    return X.tocsr(), (rng.random(n) < expit(scores)).astype(np.int64)


# ----------------------------------------------------------------- references
def sgd_params(lam):
    """The single pass of section 7.1, shared by every method and the reference."""
    return dict(learning_rate="constant", eta0=ETA0, alpha=lam, max_iter=1, shuffle=False)


def online_reference(X, y, lam):
    """Uncompressed one-pass OGD: an AWM heap with room for every feature (nothing sketched)."""
    model = AWMSketchClassifier(None, n_features_to_select=X.shape[1], sketch_width=1,
                                sketch_depth=1, random_state=0, **sgd_params(lam)).fit(X, y)
    return model.coef_.toarray().ravel(), model.memory_bytes_


def batch_reference(X, y, lam):
    """Minimiser of mean log-loss + lam/2 ||w||^2 (C = 1 / (lam * n); intercept unpenalised)."""
    from sklearn.linear_model import LogisticRegression

    # newton-cg at a tight tolerance: lbfgs at its default stopped 36% away at lambda=1e-6.
    model = LogisticRegression(C=1.0 / (lam * X.shape[0]), solver="newton-cg", tol=1e-8,
                               max_iter=1000).fit(X, y)
    return model.coef_.ravel()


def sklearn_agreement(X, y, lam, w_online):
    """Cosine between our reference and scikit-learn's SGDClassifier making the same pass."""
    from sklearn.linear_model import SGDClassifier

    w = SGDClassifier(loss="log_loss", alpha=lam, learning_rate="constant", eta0=ETA0,
                      max_iter=1, shuffle=False, tol=None).fit(X, y).coef_.ravel()
    return float(w @ w_online / (np.linalg.norm(w) * np.linalg.norm(w_online)))


# -------------------------------------------------------------------- methods
def paper_shape(method, budget):
    """``(config text, cost-model bytes, estimator kwargs)`` of a method in ``budget`` bytes."""
    if method in TABLE2:
        heap, width, depth = TABLE2[method][budget]
        return (f"|S|={heap}, {width}x{depth}", 8 * heap + 4 * width * depth,
                dict(n_features_to_select=heap, sketch_width=width, sketch_depth=depth))
    if method == "Hash":
        return f"{budget // 4} cells", 4 * (budget // 4), dict(sketch_width=budget // 4)
    per_entry = 8 if method == "Trun" else 12  # id + weight (+ reservoir key or count)
    capacity = budget // per_entry
    return (f"{capacity} entries", per_entry * capacity,
            dict(n_features_to_select=capacity))


def make_estimator(method, budget, seed, lam):
    """The library estimator of ``method`` shaped by the paper's cost model."""
    shape, params = paper_shape(method, budget)[2], sgd_params(lam)
    if method == "AWM":
        return AWMSketchClassifier(None, random_state=seed, **shape, **params)
    if method == "WM":
        return WMSketchClassifier(None, random_state=seed, **shape, **params)
    if method in ("Trun", "PTrun"):
        truncation = "simple" if method == "Trun" else "probabilistic"
        return TruncationClassifier(None, truncation=truncation, random_state=seed,
                                    **shape, **params)
    if method == "SS":
        return SpaceSavingClassifier(None, random_state=seed, **shape, **params)
    return FeatureHashingClassifier(random_state=seed, **shape, **params)


def top_k(estimator, n_features, k=K):
    """Keys and weights of the ``k`` largest weights a fitted method returns.

    Feature hashing keeps no identities: as in the paper, every feature's
    estimate is the signed weight of its hashed cell, and the largest are taken.
    """
    if isinstance(estimator, FeatureHashingClassifier):
        keys = np.arange(n_features)
        weights = estimator.sketches_[0].query(keys)
    else:
        selected = estimator.selected_features_
        keys, weights = selected.keys, selected.weights[:, 0]
    order = np.argsort(-np.abs(weights), kind="stable")[:k]
    return keys[order], weights[order]


def relative_error(keys, weights, w_star, k=K):
    """Section 7.2: ||w^K - w*|| / ||w*^K - w*||."""
    w_k = np.zeros_like(w_star)
    w_k[keys] = weights
    tail = np.sort(np.abs(w_star))[:-k]
    return float(np.linalg.norm(w_k - w_star) / np.linalg.norm(tail))


def error_parts(keys, weights, w_star, k=K):
    """Why an error is large: recall of the true top-K and shares of ||w^K - w*||^2.

    Shares are of the denominator squared ``||w*^K - w*||^2``: value errors on
    true top-K keys found, errors on keys outside the true top-K (false
    positives) and the squared weight of every feature not returned (missed).
    """
    true_top = np.argsort(-np.abs(w_star))[:k]
    hit = np.isin(keys, true_top)
    floor = np.sum(np.sort(w_star ** 2)[:-k])
    false_w = np.abs(w_star[keys[~hit]])
    return {
        "recall": float(hit.mean()) if keys.size else 0.0,
        "hit_value_share": float(np.sum((weights[hit] - w_star[keys[hit]]) ** 2) / floor),
        "false_positive_share": float(np.sum((weights[~hit] - w_star[keys[~hit]]) ** 2)
                                      / floor),
        "missed_share": float((np.sum(w_star ** 2) - np.sum(w_star[keys] ** 2)) / floor),
        "false_positive_inflation": (float(np.abs(weights[~hit]).mean() / false_w.mean())
                                     if false_w.size and false_w.mean() > 0 else None),
    }


def zero_vector_error(w_star, k=K):
    """RelErr of returning nothing (w^K = 0): ||w*|| / ||w*^K - w*||."""
    return float(np.linalg.norm(w_star) / np.linalg.norm(np.sort(np.abs(w_star))[:-k]))


# ------------------------------------------------------------------ the runs
def run_setting(X, y, lam, budgets, seeds, references, methods=METHODS):
    """Fit every method at every budget and seed; errors against each named reference.

    Returns ``{budget: {method: record}}``; a record holds the per-seed errors
    (``errors[ref]``), the error parts against the first reference, the
    memory (cost model and ``memory_bytes_``) and the mean fit time.
    """
    first = next(iter(references))
    out = {}
    for budget in budgets:
        out[budget] = {}
        for method in methods:
            config, cost_bytes, _ = paper_shape(method, budget)
            errors = {name: [] for name in references}
            parts, seconds, real_bytes = [], [], []
            for seed in seeds:
                start = time.perf_counter()
                estimator = make_estimator(method, budget, seed, lam).fit(X, y)
                seconds.append(time.perf_counter() - start)
                real_bytes.append(int(estimator.memory_bytes_))
                keys, weights = top_k(estimator, X.shape[1])
                for name, w_star in references.items():
                    errors[name].append(relative_error(keys, weights, w_star))
                parts.append(error_parts(keys, weights, references[first]))
            out[budget][method] = {
                "config": config, "cost_model_bytes": cost_bytes,
                "memory_bytes": int(np.median(real_bytes)), "fit_seconds": float(np.mean(seconds)),
                "errors": errors, "parts": median_parts(parts)}
    return out


def median_parts(parts):
    """Median over seeds of each entry of :func:`error_parts`."""
    return {key: (None if any(p[key] is None for p in parts)
                  else float(np.median([p[key] for p in parts]))) for key in parts[0]}


def stats(values):
    return {"median": float(np.median(values)), "min": float(np.min(values)),
            "max": float(np.max(values))}


def fmt(values):
    """``median [min-max]`` over seeds (just the value when they all agree)."""
    s = stats(values)
    if s["max"] - s["min"] < 5e-4:
        return f"{s['median']:.3f}"
    return f"{s['median']:.3f} [{s['min']:.3f}-{s['max']:.3f}]"


def median_error(record, ref="online"):
    return float(np.median(record["errors"][ref]))


# ------------------------------------------------------------------ tables
def fig3_table(runs, zero):
    """RelErr at 8KB on each data set, ours beside what the paper states."""
    names = list(runs)
    columns = (["method", "config (paper cost model)", "cost-model bytes",
                "real bytes (memory_bytes_)"]
               + [f"ours: {n} RelErr" for n in names]
               + [f"ours: {names[0]} ratio to AWM", f"ours: {names[0]} excess ratio to AWM",
                  "paper: RCV1 ratio to AWM (Sec. 1)", "paper (RCV1/URL/KDDA, text)"])
    rows = []
    first = runs[names[0]][FIG3_BUDGET]
    awm = median_error(first["AWM"])
    for method in METHODS:
        rec = first[method]
        ours = median_error(rec)
        rows.append([METHOD_NAMES[method], rec["config"], rec["cost_model_bytes"],
                     rec["memory_bytes"]]
                    + [fmt(runs[n][FIG3_BUDGET][method]["errors"]["online"]) for n in names]
                    + [round(ours / awm, 2), round((ours - 1) / max(awm - 1, 1e-12), 1),
                       PAPER_RATIO_TO_AWM.get(method, "-"), PAPER_SAYS[method]])
    rows.append(["returning nothing (w^K = 0)", "-", 0, 0]
                + [f"{zero[n]:.3f}" for n in names]
                + [round(zero[names[0]] / awm, 2), "-", "-", "-"])
    return {"title": f"Fig. 3: RelErr of the top-{K} weights at 8KB (paper cost model), "
                     f"lambda={PAPER_LAMBDA:g}, median [min-max] over seeds; reference: "
                     "uncompressed one-pass OGD",
            "columns": columns, "rows": rows}


def fig4_table(run, zero):
    """RelErr against the budget on 20 Newsgroups, ours beside the paper's ordering."""
    columns = (["budget (cost model)"] + [f"ours: {m}" for m in METHODS]
               + ["ours: returning nothing", "ours: lowest", "paper (Fig. 4, RCV1): lowest"])
    rows = []
    for budget, records in run.items():
        medians = {m: median_error(records[m]) for m in METHODS}
        rows.append([f"{budget // KB}KB"] + [fmt(records[m]["errors"]["online"]) for m in METHODS]
                    + [f"{zero:.3f}", min(medians, key=medians.get), "AWM"])
    return {"title": f"Fig. 4: RelErr of the top-{K} weights vs memory on 20 Newsgroups, "
                     f"lambda={PAPER_LAMBDA:g}, median [min-max] over seeds "
                     "(the paper's curves are images: only the ordering is in its text)",
            "columns": columns, "rows": rows}


def memory_table(run, reference_bytes, n_features):
    """Bytes in the paper's cost model beside the bytes the fitted estimator holds."""
    rows = [[f"{b // KB}KB", METHOD_NAMES[m], rec["config"], rec["cost_model_bytes"],
             rec["memory_bytes"], round(rec["memory_bytes"] / rec["cost_model_bytes"], 2),
             round(rec["fit_seconds"], 2)]
            for b, records in run.items() for m, rec in records.items()]
    rows.append(["-", "uncompressed OGD (reference)", f"{n_features} weights",
                 8 * n_features, reference_bytes, round(reference_bytes / (8 * n_features), 2),
                 "-"])
    return {"title": "Memory: the paper's cost model (4 bytes per identifier, weight, "
                     "auxiliary number) and the real bytes (memory_bytes_) on 20 Newsgroups",
            "columns": ["budget", "method", "config", "cost-model bytes",
                        "real bytes (memory_bytes_)", "real / cost model", "fit seconds"],
            "rows": rows}


def parts_table(run):
    """Where each method's error comes from (medians over seeds), 20 Newsgroups."""
    rows = []
    for budget, records in run.items():
        for method, rec in records.items():
            p = rec["parts"]
            inflation = p["false_positive_inflation"]
            rows.append([f"{budget // KB}KB", METHOD_NAMES[method], round(p["recall"], 3),
                         round(p["hit_value_share"], 3), round(p["false_positive_share"], 3),
                         round(p["missed_share"], 3),
                         "-" if inflation is None else round(inflation, 2)])
    return {"title": f"Why: recall of the true top-{K} and shares of RelErr^2 "
                     "(hit values + false positives + missed = RelErr^2), 20 Newsgroups, "
                     f"lambda={PAPER_LAMBDA:g}",
            "columns": ["budget", "method", "top-K recall", "hit value share",
                        "false-positive share", "missed share",
                        "false-positive |w^| / |w*|"],
            "rows": rows}


def lambda_table(runs_by_lambda, zeros):
    """RelErr against each lambda's own reference (paper Fig. 5 varies lambda)."""
    lambdas = list(runs_by_lambda)
    budgets = list(runs_by_lambda[lambdas[-1]])
    rows = []
    for budget in budgets:
        for method in METHODS:
            rows.append([f"{budget // KB}KB", METHOD_NAMES[method]]
                        + [fmt(runs_by_lambda[lam][budget][method]["errors"]["online"])
                           for lam in lambdas]
                        + ["lower with larger lambda (Fig. 5, AWM, 8KB)"
                           if method == "AWM" and budget == FIG3_BUDGET else "-"])
    rows.append(["-", "returning nothing"] + [f"{zeros[lam]:.3f}" for lam in lambdas] + ["-"])
    return {"title": "RelErr against lambda on 20 Newsgroups (each lambda against its own "
                     "uncompressed one-pass OGD)",
            "columns": ["budget", "method"] + [f"ours: lambda={lam:g}" for lam in lambdas]
                       + ["paper"],
            "rows": rows}


def batch_table(runs_by_lambda, online_floor, zero_batch):
    """RelErr against the batch optimum (the theory's w*) instead of one-pass OGD."""
    lambdas = list(runs_by_lambda)
    rows = [[METHOD_NAMES[m]] + [fmt(runs_by_lambda[lam][FIG3_BUDGET][m]["errors"]["batch"])
                                 for lam in lambdas] for m in METHODS]
    rows.append(["uncompressed one-pass OGD"] + [f"{online_floor[lam]:.3f}" for lam in lambdas])
    rows.append(["returning nothing"] + [f"{zero_batch[lam]:.3f}" for lam in lambdas])
    return {"title": "RelErr at 8KB against the batch optimum of the same L2-regularised "
                     "objective (LogisticRegression, C = 1/(lambda n)), 20 Newsgroups; the "
                     "paper measures against the uncompressed online model instead",
            "columns": ["method"] + [f"ours: lambda={lam:g}" for lam in lambdas],
            "rows": rows}


# ------------------------------------------------------------------- claims
def judge_claims(fig3_runs, fig4_run, lambda_runs, zeros, n_samples):
    """Agreements and disagreements with the paper's claims, from the measured medians."""
    agree, disagree = [], []
    med = {name: {m: median_error(r[FIG3_BUDGET][m]) for m in METHODS}
           for name, r in fig3_runs.items()}

    for name, m in med.items():
        best = min(m, key=m.get)
        others = ", ".join(f"{k} {v:.3f}" for k, v in m.items() if k != "AWM")
        if best == "AWM":
            agree.append(f"Fig. 3 (AWM lowest at 8KB) holds on {name}: AWM {m['AWM']:.3f} "
                         f"vs {others}.")
        else:
            disagree.append(f"Fig. 3 (AWM lowest at 8KB) fails on {name}: {best} "
                            f"{m[best]:.3f} < AWM {m['AWM']:.3f} ({others}).")

    budgets = list(fig4_run)
    awm_curve = [median_error(fig4_run[b]["AWM"]) for b in budgets]
    losses = []
    for budget in budgets:
        m = {k: median_error(fig4_run[budget][k]) for k in METHODS}
        beaten = {k: v for k, v in m.items() if v < m["AWM"]}
        if beaten:
            losses.append((budget, m, beaten))
    won = [f"{b // KB}KB" for b in budgets if b not in {loss[0] for loss in losses}]
    if won:
        agree.append(f"Fig. 4 (AWM lowest at every budget) holds on 20 Newsgroups at "
                     f"{', '.join(won)}.")
    for budget, m, beaten in losses:
        disagree.append(_small_budget_reason(fig4_run, budget, m, beaten, lambda_runs))

    steps = np.diff(awm_curve)
    curve = ", ".join(f"{b // KB}KB {e:.3f}" for b, e in zip(budgets, awm_curve))
    if np.all(steps <= 1e-3):
        agree.append(f"Fig. 4 caption (AWM's recovery quickly improves with more space) holds "
                     f"on 20 Newsgroups: {curve} (1 is the true top-{K}).")
    else:
        disagree.append(f"Fig. 4 caption (AWM improves with more space) does not hold "
                        f"monotonically: {curve}.")

    _ratio_claims(med, zeros, agree, disagree)
    _ordering_claims(med, fig3_runs, zeros, agree, disagree)
    _lambda_claim(lambda_runs, n_samples, agree, disagree)
    return agree, disagree


def _small_budget_reason(run, budget, m, beaten, lambda_runs):
    """A Fig. 4 loss of AWM, with the error decomposition that explains it."""
    awm = run[budget]["AWM"]["parts"]
    best = min(beaten, key=beaten.get)
    rival = run[budget][best]["parts"]
    width = TABLE2["AWM"][budget][1]
    text = (f"Fig. 4 (AWM lowest at every budget) fails on 20 Newsgroups at {budget // KB}KB: "
            + ", ".join(f"{k} {v:.3f}" for k, v in sorted(beaten.items(), key=lambda kv: kv[1]))
            + f" < AWM {m['AWM']:.3f}. Why: the Table 2 shape leaves AWM a {width}-cell sketch "
            f"for every feature outside its {TABLE2['AWM'][budget][0]}-entry heap, so tail "
            f"features enter the heap on collision noise. AWM finds "
            f"{'more' if awm['recall'] > rival['recall'] else 'no more'} of the true top-{K} "
            f"(recall {awm['recall']:.2f} vs {best} {rival['recall']:.2f}) but its false "
            f"positives carry inflated weights ({awm['false_positive_inflation']:.1f}x their "
            f"true magnitude) that add {awm['false_positive_share']:.2f} times the squared "
            f"error floor, against {rival['false_positive_share']:.2f} for {best}: once in "
            f"the heap an entry changes only by its own gradient steps and the L2 decay, so "
            f"the noise it entered with stays.")
    lam, other = list(lambda_runs.items())[-1]
    if budget in other:
        awm_l2, rival_l2 = median_error(other[budget]["AWM"]), median_error(other[budget][best])
        text += (f" A stronger L2 {'does not close' if awm_l2 > rival_l2 else 'closes'} the "
                 f"gap in one pass: at lambda={lam:g} AWM {awm_l2:.3f}, {best} {rival_l2:.3f}.")
    return text


def _ratio_claims(med, zeros, agree, disagree):
    """Sec. 1: on RCV1 AWM is 4x better than Space-Saving and 10x better than truncation."""
    name = next(iter(med))
    m, zero = med[name], zeros[name]
    awm = m["AWM"]
    ratios = {k: m[k] / awm for k in PAPER_RATIO_TO_AWM}
    excess = {k: (m[k] - 1) / max(awm - 1, 1e-12) for k in PAPER_RATIO_TO_AWM}
    text = (f"Sec. 1 ratios (RCV1: AWM 4x better than Space-Saving, 10x better than "
            f"truncation) at 8KB on {name}: "
            + "; ".join(f"{k}/AWM = {ratios[k]:.2f} in RelErr, {excess[k]:.0f} in excess "
                        f"RelErr-1 (paper: {paper:g}x)" for k, paper in PAPER_RATIO_TO_AWM.items())
            + ". ")
    if all(0.5 * p <= ratios[k] <= 2 * p for k, p in PAPER_RATIO_TO_AWM.items()):
        agree.append(text + "Within a factor 2 of the paper's in RelErr.")
        return
    if all(r > 1 for r in ratios.values()):
        text += "The direction (AWM better) agrees but the RelErr ratios are far smaller. "
    near = [k for k, p in PAPER_RATIO_TO_AWM.items() if 0.5 * p <= excess[k] <= 2 * p]
    far = [k for k in PAPER_RATIO_TO_AWM if k not in near]
    why = (f"Why: here the top-{K} of w* holds only {1 - 1 / zero ** 2:.0%} of ||w*||^2, so "
           f"returning nothing already scores {zero:.3f}; RelErr ratios of 4x-10x need errors "
           f"far worse than returning nothing, which only a method that invents large weights "
           f"reaches (feature hashing, {m['Hash']:.3f}). ")
    if not far:
        agree.append(text + why + "Read as excess error (RelErr-1) both ratios are within a "
                     "factor 2 of the paper's.")
        return
    disagree.append(text + why + "Read as excess error (RelErr-1), "
                    + (f"{' and '.join(near)} is within a factor 2 of the paper's but "
                       if near else "")
                    + f"{' and '.join(far)} {'is' if len(far) == 1 else 'are'} not.")


def _ordering_claims(med, fig3_runs, zeros, agree, disagree):
    """Sec. 7.2: hashing is poor; Space-Saving vs probabilistic truncation; AWM vs WM."""
    for name, m in med.items():
        rest = {k: v for k, v in m.items() if k != "Hash"}
        if m["Hash"] > max(rest.values()):
            agree.append(f"Feature hashing recovers worst at 8KB on {name} ({m['Hash']:.3f}, "
                         f"above returning nothing, {zeros[name]:.3f}), as Sec. 7.2 says.")
        else:
            disagree.append(f"Feature hashing ({m['Hash']:.3f}) is not the worst at 8KB on "
                            f"{name}: {min(rest, key=rest.get)} is worse.")
        relation = "below" if m["PTrun"] < m["SS"] else "above"
        pt, ss = (fig3_runs[name][FIG3_BUDGET][k]["parts"] for k in ("PTrun", "SS"))
        text = (f"On {name} at 8KB probabilistic truncation ({m['PTrun']:.3f}) is {relation} "
                f"Space-Saving ({m['SS']:.3f}); the paper finds PTrun below SS on URL, where "
                f"frequent features are not the discriminative ones, and SS competitive on RCV1"
                f" (top-{K} recall: PTrun {pt['recall']:.2f}, SS {ss['recall']:.2f}).")
        if relation == "below":
            agree.append(text)
        else:
            disagree.append(
                text + f" Why: here the frequent features hold the top weights well enough "
                f"that Space-Saving's {ss['recall']:.2f} recall "
                f"{'beats' if ss['recall'] > pt['recall'] else 'matches'} PTrun's, the RCV1 "
                f"case of the paper rather than the URL one.")
    fig4_run = next(iter(fig3_runs.values()))
    wm_wins = [b for b, r in fig4_run.items()
               if median_error(r["WM"]) < median_error(r["AWM"])]
    if not wm_wins:
        curve = ", ".join(f"{b // KB}KB {median_error(r['WM']):.3f}/{median_error(r['AWM']):.3f}"
                          for b, r in fig4_run.items())
        agree.append(f"The active set improves on the plain WM-Sketch at every budget "
                     f"(WM/AWM on 20 Newsgroups: {curve}).")
    else:
        disagree.append("WM-Sketch beats AWM on 20 Newsgroups at "
                        + ", ".join(f"{b // KB}KB" for b in wm_wins) + ".")


def _lambda_claim(lambda_runs, n_samples, agree, disagree):
    """Fig. 5: a larger lambda gives AWM a lower recovery error (RCV1, URL, 8KB)."""
    errors = [(lam, r[FIG3_BUDGET]["AWM"]["errors"]["online"]) for lam, r in lambda_runs.items()]
    (_, first), (high, last) = errors[0], errors[-1]
    drop = np.median(first) - np.median(last)
    noise = max(np.ptp(first), 0.005)
    text = ", ".join(f"lambda={lam:g}: {np.median(e):.3f}" for lam, e in errors)
    if drop > noise:
        agree.append(f"Fig. 5 (a larger lambda lowers AWM's error at 8KB) holds on 20 "
                     f"Newsgroups: {text}.")
        return
    ours = np.exp(-ETA0 * high * n_samples)
    # The paper's schedule eta0 / (1 + eta0 lambda t) decays by 1 / (1 + eta0 lambda T) in all.
    theirs = 1.0 / (1.0 + ETA0 * high * RCV1_EXAMPLES)
    disagree.append(
        f"Fig. 5 (a larger lambda lowers AWM's error at 8KB) is not seen on 20 Newsgroups: "
        f"{text}, a change of {-drop:+.3f}, "
        f"{'within' if abs(drop) <= noise else 'beyond'} the seed spread ({noise:.3f}). "
        f"Likely why: over our one pass of {n_samples} posts the L2 decay shrinks a weight "
        f"by {ours:.2f} in all at lambda={high:g}, against {theirs:.2f} over RCV1's "
        f"{RCV1_EXAMPLES} examples with the paper's schedule, so lambda barely acts here "
        f"(the paper's lambda=1e-3 needs that schedule, which the library lacks).")


# --------------------------------------------------------------------- output
def format_table(table):
    """Aligned text of one table."""
    cells = [[str(c) for c in table["columns"]]] + [[str(c) for c in r] for r in table["rows"]]
    widths = [max(len(row[i]) for row in cells) for i in range(len(cells[0]))]
    lines = [table["title"], "-" * min(160, sum(widths) + 2 * len(widths))]
    for i, row in enumerate(cells):
        lines.append("  ".join(c.rjust(w) if i and _numeric(c) else c.ljust(w)
                               for c, w in zip(row, widths)).rstrip())
        if i == 0:
            lines.append("  ".join("-" * w for w in widths))
    return "\n".join(lines)


def _numeric(text):
    try:
        float(text.split(" ")[0])
        return True
    except ValueError:
        return False


def settings(quick):
    """Sizes of the full and the quick run."""
    if quick:
        return dict(n_docs=1500, seeds=(0, 1), budgets=(2 * KB, 8 * KB, 32 * KB),
                    lambda_seeds=(0,), synthetic=dict(n=3000, d=10000, nnz=40))
    return dict(n_docs=None, seeds=tuple(range(5)), budgets=BUDGETS, lambda_seeds=(0, 1, 2),
                synthetic=dict(n=20000, d=50000, nnz=40))


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true",
                        help="small data, 3 budgets, 2 seeds (for the test)")
    parser.add_argument("--json", default=str(DEFAULT_JSON), help="where to write the results")
    parser.add_argument("--data-dir", help=f"folder holding {TARBALL}")
    args = parser.parse_args(argv)
    cfg = settings(args.quick)
    start = time.perf_counter()

    X, y = load_twenty_news(locate_tarball(args.data_dir), cfg["n_docs"])
    X_syn, y_syn = synthetic_stream(**cfg["synthetic"])
    news = f"20 Newsgroups ({X.shape[0]} posts, {X.shape[1]} words)"
    synthetic = f"synthetic Zipf ({X_syn.shape[0]} rows, {X_syn.shape[1]} features)"
    print(f"{news}: {y.mean():.0%} positive (comp.*, sci.*), {X.nnz / X.shape[0]:.0f} "
          f"words a post; {synthetic}; K={K}, eta0={ETA0}, one pass\n")

    lambdas = (PAPER_LAMBDA, SECOND_LAMBDA)
    online, batch, ref_bytes = references(X, y, lambdas)
    zeros_online = {lam: zero_vector_error(w) for lam, w in online.items()}
    zeros_batch = {lam: zero_vector_error(w) for lam, w in batch.items()}
    # The uncompressed one-pass model against the batch optimum: the single pass's own gap.
    floor = {lam: relative_error(*top_k_exact(online[lam]), batch[lam]) for lam in lambdas}
    w_syn, _ = online_reference(X_syn, y_syn, PAPER_LAMBDA)

    fig4_run = run_setting(X, y, PAPER_LAMBDA, cfg["budgets"], cfg["seeds"],
                           {"online": online[PAPER_LAMBDA], "batch": batch[PAPER_LAMBDA]})
    synthetic_run = run_setting(X_syn, y_syn, PAPER_LAMBDA, (FIG3_BUDGET,), cfg["seeds"],
                                {"online": w_syn})
    second_budgets = (cfg["budgets"][0], FIG3_BUDGET)
    second_run = run_setting(X, y, SECOND_LAMBDA, second_budgets, cfg["lambda_seeds"],
                             {"online": online[SECOND_LAMBDA], "batch": batch[SECOND_LAMBDA]})

    fig3_runs = {"20 Newsgroups": fig4_run, "synthetic": synthetic_run}
    zeros = {"20 Newsgroups": zeros_online[PAPER_LAMBDA], "synthetic": zero_vector_error(w_syn)}
    lambda_runs = {PAPER_LAMBDA: {b: fig4_run[b] for b in second_budgets},
                   SECOND_LAMBDA: second_run}
    tables = [fig3_table(fig3_runs, zeros),
              fig4_table(fig4_run, zeros_online[PAPER_LAMBDA]),
              memory_table(fig4_run, ref_bytes, X.shape[1]),
              parts_table(fig4_run),
              lambda_table(lambda_runs, zeros_online),
              batch_table(lambda_runs, floor, zeros_batch)]
    agreements, disagreements = judge_claims(fig3_runs, fig4_run, lambda_runs, zeros,
                                             X.shape[0])
    checks = {
        "sklearn_sgd_cosine": sklearn_agreement(X, y, PAPER_LAMBDA, online[PAPER_LAMBDA]),
        "reference_relerr": relative_error(*top_k_exact(online[PAPER_LAMBDA]),
                                           online[PAPER_LAMBDA]),
        "top_k_share_of_squared_norm": 1.0 - 1.0 / zeros_online[PAPER_LAMBDA] ** 2,
    }
    notes = _notes(news, synthetic, checks, floor, zeros_online, fig4_run)
    seconds = time.perf_counter() - start

    print_report(tables, {"Agreements": agreements, "Disagreements": disagreements,
                          "Notes": notes})
    print(f"total {seconds:.0f} s")

    result = {"provenance": provenance([str(Path(__file__)), *(argv or sys.argv[1:])]),
              "settings": {"K": K, "eta0": ETA0, "lambdas": list(lambdas), "quick": args.quick,
                           "seeds": list(cfg["seeds"]), "budgets": list(cfg["budgets"]),
                           "data": [news, synthetic]},
              "tables": tables, "agreements": agreements, "disagreements": disagreements,
              "notes": notes, "checks": checks, "seconds": seconds,
              "results": _raw_results(fig3_runs, lambda_runs)}
    path = Path(args.json)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(result, indent=1) + "\n")
    print(f"wrote {path}")
    return result


def references(X, y, lambdas):
    """One-pass and batch ``w*`` for each lambda, and the one-pass model's real bytes."""
    online, batch, n_bytes = {}, {}, None
    for lam in lambdas:
        online[lam], n_bytes = online_reference(X, y, lam)
        batch[lam] = batch_reference(X, y, lam)
    return online, batch, n_bytes


def print_report(tables, lists):
    """The tables as aligned text, then each list of statements."""
    for table in tables:
        print(format_table(table), end="\n\n")
    for title, items in lists.items():
        print(title + ":")
        for item in items:
            print(f"  - {item}")
        print()


def top_k_exact(w_star, k=K):
    """The true top-K of a dense weight vector, as ``(keys, weights)``."""
    keys = np.argsort(-np.abs(w_star), kind="stable")[:k]
    return keys, w_star[keys]


def _notes(news, synthetic, checks, floor, zeros, run):
    return [
        f"Data: the paper's RCV1, URL and KDDA are not available; we use {news} and a "
        f"{synthetic} stream (see the module docstring).",
        "Paper values: Fig. 3-5 are images absent from the text version, so the paper "
        "columns hold only what its text states (orderings, the RCV1 ratios of Sec. 1, "
        "Table 2 shapes); no curve values were read off the figures.",
        f"Reference check: the uncompressed one-pass OGD has cosine "
        f"{checks['sklearn_sgd_cosine']:.4f} with scikit-learn's SGDClassifier making the "
        f"same pass (which decays its sparse intercept updates), and RelErr "
        f"{checks['reference_relerr']:.3f} against itself.",
        "The brief's normalisation ||w^K - w*|| / ||w*|| equals our RelErr times "
        f"||w* - w*^K|| / ||w*|| = {1 / zeros[PAPER_LAMBDA]:.3f} (20 Newsgroups, "
        f"lambda={PAPER_LAMBDA:g}): the same ordering.",
        "Against the batch optimum the one-pass uncompressed model itself scores "
        + ", ".join(f"{v:.3f} (lambda={lam:g})" for lam, v in floor.items())
        + ": with a single pass the optimisation gap dominates every method's error, so "
        "the methods' differences shrink (batch table).",
        _memory_note(run),
    ]


def _memory_note(run):
    """Real bytes against the cost model, from the measured ``memory_bytes_``."""
    ratio = {m: [r[m]["memory_bytes"] / r[m]["cost_model_bytes"] for r in run.values()]
             for m in METHODS}
    span = ", ".join(f"{m} {min(v):.2f}-{max(v):.2f}x" for m, v in ratio.items())
    trun = next(iter(run.values()))["Trun"]
    per_entry = (trun["memory_bytes"] - 16) / (trun["cost_model_bytes"] / 8)
    return (f"Memory: real bytes (memory_bytes_) over the paper's cost model: {span}. A "
            f"simple-truncation heap entry holds {per_entry:.1f} real bytes (key, weight, key "
            f"map, presence filter) against the cost model's 8, so heap-heavy shapes exceed "
            f"their budget in real bytes; sketch cells cost the modelled 4 bytes.")


def _raw_results(fig3_runs, lambda_runs):
    """Per-seed errors and the other measurements, keyed by text for JSON."""
    raw = {}
    for name, run in fig3_runs.items():
        raw[f"{name}, lambda={PAPER_LAMBDA:g}"] = {f"{b // KB}KB": r for b, r in run.items()}
    lam = list(lambda_runs)[-1]
    raw[f"20 Newsgroups, lambda={lam:g}"] = {f"{b // KB}KB": r
                                            for b, r in lambda_runs[lam].items()}
    return raw


if __name__ == "__main__":
    main()
