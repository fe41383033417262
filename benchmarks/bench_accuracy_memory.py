"""Test accuracy against real memory: every classifier here beside its peers, 64 KB to 64 MB.

One process fits, for each data set and each memory budget (``--budgets``):

* every classifier of ``sklearn_sketch`` sized to the budget: through
  ``memory_budget=<bytes>`` when its ``get_params()`` has that parameter, otherwise through
  :func:`shape_for_budget`, which measures the estimator's bytes per heap entry and per
  sketch column on a small probe fit and solves for the largest shape that fits (half of the
  budget to the heap, half to the sketch, as the WM-Sketch paper's cost model splits it).
  Every row reports the fitted estimator's own ``memory_bytes_`` (the honest number) beside
  the budget, and flags with ``!`` the rows where ``memory_bytes_ > budget``;
* ``SGDClassifier()`` on all features (once per data set; real bytes ``coef_ + intercept_``);
* ``SGDClassifier()`` on the features hashed once more into ``m`` signed buckets
  (``FeatureHasher``-style), ``m`` the largest with ``coef_`` (``n_classes x m`` float64, or
  ``1 x m`` for binary) plus ``intercept_`` inside the budget;
* Vowpal Wabbit at the same bytes: ``-b`` the largest number of bits with
  ``2**b * stride * 4`` bytes inside the budget. ``stride`` is read from VW itself
  (``Workspace.get_stride()``: 4 with its default adaptive, normalised updates: a weight, its
  AdaGrad sum and its normaliser, rounded up to a power of two). ``--oaa N`` does not grow the
  table: the N classes share the ``2**b`` weights (class ``i`` reads index ``h + i``; checked
  with ``--readable_model``, whose indices all stay below ``2**b``). VW runs as many passes as
  our estimators run epochs (``--passes E -c --holdout_off``), one-against-all with logistic
  loss for multiclass, logistic loss for binary.

Data sets (built once and cached as ``.npz`` under ``--cache``):

* ``ng-tokens``: 20 Newsgroups, all 20 classes, by-date split, word uni+bi-grams as raw
  tokens (``sklearn_sketch._raw_features.hash_raw``: names hashed to 64-bit keys, exactly
  what the estimators do with lists of tokens), training rows shuffled once (seed 0);
* ``ng-hashing``: the same posts as ``HashingVectorizer(ngram_range=(1, 2))`` output (its
  defaults: 2**20 columns, alternate signs, L2-normalised rows);
* ``dna``: reads of 200 bp from both strands of four species, ``--dna-reads`` per training
  strain (``sklearn_sketch.io.ReadSampler``), canonical 12-mers
  (``KmerVectorizer(k=12, canonical=True)``), tested on held-out strains. The default
  20,000 reads per strain keep the run short but starve the task: ``SGDClassifier`` on
  all 16.7M features reaches 0.947 there, and 0.980 with ``--dna-reads 100000`` (where the
  sketches reach 0.96-0.98 in 4-16 MB; that is the setting of the DNA target).

Then, at ``--grid-budget``, each estimator with default parameters beside its best over a
small grid of step sizes (the best is read on the test set: an optimistic upper bound), and a
summary that checks the targets of issue 13 (PASS/FAIL with the numbers).

Epochs: each estimator's default ``max_iter`` unless ``--max-iter`` is given (VW's passes
follow it; ``SGDClassifier()`` keeps its own default, ``max_iter=1000, tol=1e-3``).

Run::

    python benchmarks/bench_accuracy_memory.py --quick                # smoke run, < 2 minutes
    python benchmarks/bench_accuracy_memory.py --datasets dna --json out.json --figure out.png
    python benchmarks/bench_accuracy_memory.py --budgets 64KB,1MB,16MB --estimators mission,awm
"""
import argparse
import functools
import json
import math
import subprocess
import sys
import tarfile
import tempfile
import time
import warnings
from pathlib import Path

import numpy as np
import scipy.sparse as sp
from joblib import Parallel, delayed
from sklearn.base import clone
from sklearn.linear_model import SGDClassifier

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _provenance import provenance  # noqa: E402
from dna_task import resolve_data_dir  # noqa: E402
from peers import _import_vowpalwabbit, _vw_command  # noqa: E402

import sklearn_sketch as sk  # noqa: E402
from sklearn_sketch.weight_median import parse_memory_budget  # noqa: E402

DEFAULT_BUDGETS = "64KB,256KB,1MB,4MB,16MB,64MB"
QUICK_BUDGETS = "64KB,1MB"
QUICK_ESTIMATORS = "mission,awm,hashing"
QUICK_ROWS = 1000  # training and test rows kept by --quick
QUICK_GRID_BUDGET = "64KB"
DEFAULT_MAX_BYTES = "2GB"  # skip a fit predicted to allocate more (see allocation_guard)
GUARD_PROBE_BUDGET = 2**20  # budget of the probe fit of allocation_guard
DATASETS = ("ng-tokens", "ng-hashing", "dna")

#: id -> (display name, class, fixed parameters, where the bytes go when sized by hand).
ESTIMATORS = {
    "mission": ("MISSION", sk.MissionClassifier, {}, "heap+sketch"),
    "bear": ("BEAR", sk.BearClassifier, {}, "heap+sketch"),
    "wm": ("WM-Sketch", sk.WMSketchClassifier, {}, "heap+sketch"),
    "awm": ("AWM-Sketch", sk.AWMSketchClassifier, {}, "heap+sketch"),
    "hashing": ("FeatureHashing", sk.FeatureHashingClassifier, {}, "sketch"),
    "iht": ("IHT", sk.IHTClassifier, {}, "heap"),
    "trunc": ("Truncation simple", sk.TruncationClassifier, {"truncation": "simple"}, "heap"),
    "trunc-prob": ("Truncation prob.", sk.TruncationClassifier,
                   {"truncation": "probabilistic"}, "heap"),
    "spacesaving": ("SpaceSaving", sk.SpaceSavingClassifier, {}, "heap"),
    "perceptron": ("SparsePerceptron", sk.SparsePerceptronClassifier, {}, "heap"),
}
#: The estimators that select features (all but feature hashing), for the selector targets.
SELECTORS = tuple(e for e in ESTIMATORS if e != "hashing")

#: Step-size grid: eta0 under the estimator's default learning_rate, then constant steps.
GRID_ETA0 = (0.1, 0.3, 1.0, 3.0)
GRID_CONSTANT_ETA0 = (0.01, 0.1)
QUICK_GRID_ETA0 = (0.1, 1.0)
QUICK_GRID_CONSTANT_ETA0 = (0.01,)

#: Training and held-out test strains of each species (folder, strain).
DNA_TRAIN = (("E.Coli", "MG1655-K12"), ("S.Aureus", "COL"), ("H.Pylori", "G27"),
             ("V.Cholerae", "O395"))
DNA_TEST = (("E.Coli", "DH1"), ("S.Aureus", "JKD6008"), ("H.Pylori", "ELS37"),
            ("V.Cholerae", "O1_biovar"))
DNA_READ_LENGTH, DNA_K = 200, 12

#: Targets of issue 13, in accuracy points (fractions) and bytes.
DEFAULT_VS_GRID_POINTS = 0.02
PEER_SLACK_POINTS = 0.01
NG_TARGET_ACCURACY, NG_BYTES_FRACTION = 0.80, 0.1
DNA_TARGET_ACCURACY, DNA_TARGET_BYTES = 0.95, 16 * 2**20

SIZE_PROBE_ROWS = 500  # rows of the probe fits of shape_for_budget
SIZE_PROBE_UNIT = 64  # heap entries / sketch columns between the probe shapes


# ----------------------------------------------------------------------------- data
def _twenty_news_root(data_dir, cache):
    """Folder holding 20news-bydate-{train,test}: extracted from the shared tarball once."""
    root = cache / "20news_bydate"
    if not root.is_dir():
        with tarfile.open(data_dir / "20news-bydate.tar.xz") as tar:
            tar.extractall(cache, filter="data")
    return root


def _read_posts(root, split):
    """Texts and class indices of one split, classes in sorted folder order."""
    docs, labels = [], []
    for label, folder in enumerate(sorted((root / f"20news-bydate-{split}").iterdir())):
        for path in sorted(folder.iterdir()):
            docs.append(path.read_bytes().decode("latin-1"))
            labels.append(label)
    return docs, np.array(labels)


def _build_twenty_news(data_dir, cache):
    """Both 20 Newsgroups encodings, train rows shuffled once (the files are class-sorted)."""
    from sklearn.feature_extraction.text import CountVectorizer, HashingVectorizer
    from sklearn_sketch._raw_features import hash_raw

    root = _twenty_news_root(data_dir, cache)
    (train, y_train), (test, y_test) = (_read_posts(root, s) for s in ("train", "test"))
    order = np.random.default_rng(0).permutation(len(train))
    train, y_train = [train[i] for i in order], y_train[order]
    analyzer = CountVectorizer(ngram_range=(1, 2)).build_analyzer()
    hasher = HashingVectorizer(ngram_range=(1, 2))
    out = {}
    for split, docs, y in (("train", train, y_train), ("test", test, y_test)):
        tokens = [analyzer(doc) or ["<empty>"] for doc in docs]
        out["ng-tokens", split] = hash_raw(tokens)[0], y
        out["ng-hashing", split] = hasher.transform(docs), y
    return out


def _dna_split(genomes, strains, n_reads, seed):
    """Canonical 12-mer counts of reads sampled from each strain, rows shuffled."""
    from sklearn_sketch.io import FastaReader, ReadSampler

    vectorizer = sk.KmerVectorizer(k=DNA_K, canonical=True)
    blocks, labels = [], []
    for label, (species, strain) in enumerate(strains):
        reader = FastaReader({str(genomes / species / f"{strain}.fasta.gz"): label})
        for chunk in ReadSampler(reader, DNA_READ_LENGTH, n_reads=n_reads,
                                 random_state=seed + label):
            blocks.append(vectorizer.transform(chunk.sequences))
            labels.append(np.asarray(chunk.labels))
    X, y = sp.vstack(blocks).tocsr(), np.concatenate(labels).astype(np.int64)
    order = np.random.default_rng(seed).permutation(len(y))
    return X[order], y[order]


def _build_dna(data_dir, n_reads):
    genomes = resolve_data_dir(data_dir / "genomes")
    return {("dna", "train"): _dna_split(genomes, DNA_TRAIN, n_reads, 0),
            ("dna", "test"): _dna_split(genomes, DNA_TEST, n_reads, 100)}


def _cache_paths(cache, name, split):
    return cache / f"{name}_{split}_X.npz", cache / f"{name}_{split}_y.npy"


def load_dataset(name, data_dir, cache, dna_reads):
    """``(X_train, y_train, X_test, y_test)`` of one data set, built on first use and cached."""
    cache_name = f"dna{dna_reads}" if name == "dna" else name
    paths = [_cache_paths(cache, cache_name, s) for s in ("train", "test")]
    if not all(p.exists() for pair in paths for p in pair):
        built = (_build_dna(data_dir, dna_reads) if name == "dna"
                 else _build_twenty_news(data_dir, cache))
        for (built_name, split), (X, y) in built.items():
            X_path, y_path = _cache_paths(cache, f"dna{dna_reads}" if built_name == "dna"
                                          else built_name, split)
            sp.save_npz(X_path, X)
            np.save(y_path, y)
    (X_tr, y_tr), (X_te, y_te) = ((sp.load_npz(X), np.load(y)) for X, y in paths)
    return X_tr, y_tr, X_te, y_te


# ----------------------------------------------------------------------- feature maps
def _mix64(keys):
    """splitmix64 finaliser of non-negative integer keys: uniform 64-bit hashes."""
    z = np.asarray(keys).astype(np.uint64)
    with np.errstate(over="ignore"):
        z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return z ^ (z >> np.uint64(31))


def hash_features(X, n_buckets):
    """``FeatureHasher``-style map of every column to one of ``n_buckets`` with a sign."""
    X = sp.csr_matrix(X)
    h = _mix64(X.indices)
    sign = np.where(h >> np.uint64(63), -1.0, 1.0)
    out = sp.csr_matrix((X.data * sign, (h % np.uint64(n_buckets)).astype(np.int32),
                         X.indptr.astype(np.int64)), shape=(X.shape[0], n_buckets))
    out.sum_duplicates()
    return out


def compact_columns(X_train, X_test):
    """Renumber the columns seen in training 0..n-1 (test columns never seen are dropped).

    Only for column spaces scikit-learn cannot index (the 64-bit keys of raw tokens): there
    it is what a vocabulary (``CountVectorizer``) gives. Smaller spaces (``HashingVectorizer``
    output, 4**12 k-mers) are kept as they are, as a user would fit them.
    """
    if X_train.shape[1] < 2**31:
        return X_train, X_test
    seen = np.unique(X_train.indices)

    def remap(X):
        X = sp.csr_matrix(X)
        pos = np.searchsorted(seen, X.indices).clip(max=len(seen) - 1)
        keep = seen[pos] == X.indices
        rows = np.repeat(np.arange(X.shape[0]), np.diff(X.indptr))[keep]
        return sp.csr_matrix((X.data[keep], (rows, pos[keep].astype(np.int32))),
                             shape=(X.shape[0], len(seen)))

    return remap(X_train), remap(X_test)


# --------------------------------------------------------------------------- peers
def n_weight_rows(n_classes):
    """Rows of a linear model's ``coef_``: one per class, or one for binary."""
    return 1 if n_classes == 2 else n_classes


def sgd_hashed_n_features(budget, n_classes):
    """Largest ``m`` with ``coef_`` (rows x m float64) plus ``intercept_`` inside ``budget``."""
    rows = n_weight_rows(n_classes)
    return (budget - 8 * rows) // (8 * rows)


def sgd_bytes(clf):
    return int(clf.coef_.nbytes + clf.intercept_.nbytes)


def run_sgd(X_train, y_train, X_test, y_test):
    """``SGDClassifier()`` with its defaults: accuracy, real bytes, fit seconds."""
    clf = SGDClassifier(random_state=0)
    start = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        clf.fit(X_train, y_train)
    seconds = time.perf_counter() - start
    return {"accuracy": float(clf.score(X_test, y_test)), "memory_bytes": sgd_bytes(clf),
            "seconds": seconds, "n_features": X_train.shape[1]}


def reporting_errors(function):
    """``function`` returning ``{"error": ...}`` instead of raising: one failure is a cell."""
    @functools.wraps(function)
    def wrapper(*args, **kwargs):
        try:
            return function(*args, **kwargs)
        except Exception as exc:
            return {"error": f"{type(exc).__name__}: {exc}"[:200]}
    return wrapper


@reporting_errors
def run_sgd_hashed(budget, X_train, y_train, X_test, y_test):
    m = sgd_hashed_n_features(budget, len(np.unique(y_train)))
    if m < 1:
        return {"skipped": f"{budget} bytes hold no hashed feature"}
    return run_sgd(hash_features(X_train, m), y_train, hash_features(X_test, m), y_test)


def vw_stride(options):
    """Floats per weight of VW with these options (``Workspace.get_stride()``)."""
    vowpalwabbit = _import_vowpalwabbit()
    workspace = vowpalwabbit.Workspace(arg_list=[*options, "-b", "1", "--quiet"])
    try:
        return int(workspace.get_stride())
    finally:
        workspace.finish()


def vw_bits(budget, stride):
    """Largest ``b`` with VW's table of ``2**b * stride`` 4-byte floats inside ``budget``."""
    return int(math.floor(math.log2(budget / (4 * stride))))


def vw_options(n_classes):
    if n_classes == 2:
        return ["--loss_function", "logistic", "--binary"]
    return ["--oaa", str(n_classes), "--loss_function", "logistic"]


def _vw_label(y, n_classes):
    return np.where(y == 1, "1", "-1") if n_classes == 2 else (y + 1).astype(str)


def write_vw_lines(X, y, n_classes, path):
    """VW text, one line per row: ``label |f name:value ...``.

    Feature names are integers, which VW adds to the namespace hash instead of hashing
    them; they are given as ``_mix64(column) mod 2**32`` so that VW's ``-b`` mask folds
    uniformly random indices, as it would after hashing string names.
    """
    X = sp.csr_matrix(X)
    names = (_mix64(X.indices) & np.uint64(0xFFFFFFFF)).astype(str)
    values = np.char.mod("%.6g", X.data)
    labels = _vw_label(np.asarray(y), n_classes)
    with open(path, "w") as f:
        for i in range(X.shape[0]):
            lo, hi = X.indptr[i], X.indptr[i + 1]
            tokens = " ".join(f"{n}:{v}" for n, v in zip(names[lo:hi], values[lo:hi]))
            f.write(f"{labels[i]} |f {tokens}\n")


@reporting_errors
def run_vw(budget, stride, n_passes, train_path, test_path, y_test, n_classes):
    """Train VW at the budget, score the test file: accuracy, real bytes, fit seconds."""
    bits = vw_bits(budget, stride)
    command = _vw_command()
    options = [*vw_options(n_classes), "-b", str(bits), "--quiet"]
    with tempfile.TemporaryDirectory() as tmp:
        model, predictions, cache = (str(Path(tmp) / n) for n in ("model", "pred", "cache"))
        passes = ["--passes", str(n_passes), "--cache_file", cache, "--holdout_off"]
        start = time.perf_counter()
        subprocess.run([*command, "-d", str(train_path), "-f", model, *options,
                        *(passes if n_passes > 1 else [])], check=True)
        seconds = time.perf_counter() - start
        subprocess.run([*command, "-t", "-i", model, "-d", str(test_path), "-p", predictions,
                        "--quiet"], check=True)
        scores = np.loadtxt(predictions, ndmin=1)
    predicted = (scores > 0).astype(int) if n_classes == 2 else scores.astype(int) - 1
    return {"accuracy": float(np.mean(predicted == y_test)), "bits": bits,
            "memory_bytes": int(2**bits * stride * 4), "seconds": seconds,
            "passes": n_passes}


# --------------------------------------------------------------------- our estimators
def make_estimator(est_id, max_iter=None, **params):
    _, cls, fixed, _ = ESTIMATORS[est_id]
    estimator = cls(**fixed)
    if "random_state" in estimator.get_params():
        params.setdefault("random_state", 0)
    if max_iter is not None:
        params["max_iter"] = max_iter
    return estimator.set_params(**params)


def has_memory_budget(estimator):
    return "memory_budget" in estimator.get_params()


def _probe_bytes(estimator, X_probe, y_probe, **shape):
    probe = clone(estimator).set_params(max_iter=1, **shape)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return probe.fit(X_probe, y_probe).memory_bytes_


def shape_for_budget(est_id, estimator, budget, X_probe, y_probe):
    """Shape (``n_features_to_select``, ``sketch_width``) of an estimator without
    ``memory_budget`` whose ``memory_bytes_`` fits ``budget``, from measured costs.

    Three probe fits (one epoch on a few rows) measure the bytes per heap entry, per sketch
    column (all rows of all classes' sketches) and the fixed bytes (seeds, intercepts,
    BEAR's L-BFGS history); the budget left after the fixed bytes goes half to the heap and
    half to the sketch (all to the one the estimator has). The shape is then shrunk until a
    probe fit of it fits. Returns ``(params, None)`` or ``(None, reason)``.
    """
    kind = ESTIMATORS[est_id][3]
    unit = SIZE_PROBE_UNIT
    base = {"n_features_to_select": unit} if "heap" in kind else {}
    if "sketch" in kind:
        base["sketch_width"] = unit
    bytes0 = _probe_bytes(estimator, X_probe, y_probe, **base)
    per_unit = {name: (_probe_bytes(estimator, X_probe, y_probe,
                                    **{**base, name: 2 * unit}) - bytes0) / unit
                for name in base}
    fixed = bytes0 - sum(cost * unit for cost in per_unit.values())
    available = budget - fixed
    if available <= 0:
        return None, f"its fixed allocations ({fixed:,.0f} B) exceed the budget"
    shape = {name: int(available / len(per_unit) / cost) for name, cost in per_unit.items()}
    for _ in range(8):
        if min(shape.values()) < 1:
            return None, "the budget holds no heap entry or sketch column"
        measured = _probe_bytes(estimator, X_probe, y_probe, **shape)
        if measured <= budget:
            return shape, None
        shape = {n: int(v * 0.95 * budget / measured) for n, v in shape.items()}
    return None, "no shape found under the budget"


def allocation_guard(estimator, budget, max_bytes, X_probe, y_probe):
    """Reason to skip a ``memory_budget`` fit predicted to allocate over ``max_bytes``.

    Estimators whose ``memory_bytes_`` exceeds their budget many times (a per-class budget,
    a cost model of 4 bytes per entry) would exhaust the machine at the top budgets; their
    allocation is predicted from a probe fit at a small budget, linearly.
    """
    if budget <= GUARD_PROBE_BUDGET:
        return None
    try:
        probe = _probe_bytes(estimator, X_probe, y_probe, memory_budget=GUARD_PROBE_BUDGET)
    except ValueError:  # The probe's budget is too small for it (BEAR's pairs): no guess.
        return None
    predicted = probe * budget / GUARD_PROBE_BUDGET
    if predicted > max_bytes:
        return (f"memory_budget={format_bytes(budget)} would allocate about "
                f"{format_bytes(predicted)} ({probe / GUARD_PROBE_BUDGET:.0f}x the budget at "
                f"{format_bytes(GUARD_PROBE_BUDGET)}), over --max-bytes")
    return None


def configure(est_id, budget, X_probe, y_probe, max_iter, max_bytes, **params):
    """The estimator sized to ``budget`` (or a reason to skip) and how it was sized."""
    estimator = make_estimator(est_id, max_iter, **params)
    if has_memory_budget(estimator):
        reason = allocation_guard(estimator, budget, max_bytes, X_probe, y_probe)
        if reason:
            return None, "memory_budget", reason
        return estimator.set_params(memory_budget=int(budget)), "memory_budget", None
    shape, reason = shape_for_budget(est_id, estimator, budget, X_probe, y_probe)
    if shape is None:
        return None, "shape_for_budget", reason
    return estimator.set_params(**shape), f"shape_for_budget {shape}", None


def run_ours(est_id, budget, data, max_iter, max_bytes, **params):
    """Fit one estimator at one budget: accuracy, ``memory_bytes_``, how it was sized."""
    X_train, y_train, X_test, y_test = data
    probe = (X_train[:SIZE_PROBE_ROWS], y_train[:SIZE_PROBE_ROWS])
    try:
        estimator, sized_by, reason = configure(est_id, budget, *probe, max_iter, max_bytes,
                                                   **params)
        if estimator is None:
            return {"skipped": reason, "sized_by": sized_by}
        start = time.perf_counter()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            estimator.fit(X_train, y_train)
        seconds = time.perf_counter() - start
        accuracy = float(estimator.score(X_test, y_test))
    except Exception as exc:  # a benchmark reports errors, it does not stop on them
        return {"error": f"{type(exc).__name__}: {exc}"[:200]}
    memory = int(estimator.memory_bytes_)
    result = {"accuracy": accuracy, "memory_bytes": memory, "over_budget": memory > budget,
              "seconds": seconds, "sized_by": sized_by}
    for chosen in ("learning_rate_", "eta0_"):  # what 'auto' chose
        if hasattr(estimator, chosen):
            result[chosen] = getattr(estimator, chosen)
    return result


# -------------------------------------------------------------------------- grid
def grid_settings(estimator, quick):
    """``(label, params)``: the defaults, then the step-size grid the estimator accepts."""
    params = estimator.get_params()
    etas = QUICK_GRID_ETA0 if quick else GRID_ETA0
    constants = QUICK_GRID_CONSTANT_ETA0 if quick else GRID_CONSTANT_ETA0
    settings = [("default", {})]
    default_rate = params.get("learning_rate")
    settings += [(f"{default_rate or 'default'} eta0={e:g}", {"eta0": e}) for e in etas]
    if "learning_rate" in params:
        settings += [(f"constant eta0={e:g}", {"learning_rate": "constant", "eta0": e})
                     for e in constants]
    return settings


# ------------------------------------------------------------------------- output
def format_bytes(n):
    for unit, size in (("GB", 2**30), ("MB", 2**20), ("KB", 2**10)):
        if n >= size:
            value = n / size
            return f"{value:.0f}{unit}" if value >= 100 else f"{value:.3g}{unit}"
    return f"{n}B"


def _cell(result, budget):
    if result is None:
        return "-"
    if "skipped" in result:
        return "skipped"
    if "error" in result:
        return "ERROR"
    flag = "!" if result["memory_bytes"] > budget else " "
    return f"{result['accuracy']:.3f} {format_bytes(result['memory_bytes']):>7}{flag}"


def print_dataset_table(name, results, budgets, row_names):
    print(f"\n== {name}: test accuracy and real bytes per budget "
          "('!' = real bytes over the budget) ==")
    header = f"{'':22}" + "".join(f"{format_bytes(b):>17}" for b in budgets)
    print(header)
    for row in row_names:
        cells = [_cell(results.get((row, b)), b) for b in budgets]
        print(f"{row:22}" + "".join(f"{c:>17}" for c in cells))
    notes = {row: r.get("skipped") or r.get("error") for (row, _), r in results.items()
             if r.get("skipped") or r.get("error")}
    for row, note in notes.items():
        print(f"  {row}: {note}")


def plot(all_results, sgd_all, path):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    names = list(all_results)
    fig, axes = plt.subplots(1, len(names), figsize=(6 * len(names), 4.5), squeeze=False)
    for ax, name in zip(axes[0], names):
        rows = sorted({row for row, _ in all_results[name]})
        for row in rows:
            points = sorted((r["memory_bytes"], r["accuracy"])
                            for (rname, _), r in all_results[name].items()
                            if rname == row and "accuracy" in r)
            if points:
                ax.plot(*zip(*points), marker="o", label=row,
                        linestyle="--" if row.startswith(("VW", "SGD")) else "-")
        ref = sgd_all.get(name)
        if ref and "accuracy" in ref:
            ax.scatter([ref["memory_bytes"]], [ref["accuracy"]], marker="*", s=150, c="k",
                       label="SGDClassifier, all features", zorder=5)
        ax.set_xscale("log")
        ax.set_xlabel("real bytes of the model")
        ax.set_ylabel("test accuracy")
        ax.set_title(name)
        ax.grid(True, alpha=0.3)
    axes[0][-1].legend(fontsize=7, loc="lower right")
    fig.tight_layout()
    fig.savefig(path, dpi=120)


# ------------------------------------------------------------------------ targets
def _verdict(ok):
    return "PASS" if ok else "FAIL"


def check_targets(all_results, grid, sgd_all, budgets, est_ids):
    """Print PASS/FAIL per target of issue 13 with its numbers; return the checks."""
    checks = []

    def report(target, ok, detail):
        checks.append({"target": target, "pass": bool(ok), "detail": detail})
        print(f"{_verdict(ok)}  {target}: {detail}")

    print("\n== Targets of issue 13 ==")
    for (name, est_id), settings in grid.items():
        default = settings.get("default", {}).get("accuracy")
        scores = [r["accuracy"] for r in settings.values() if "accuracy" in r]
        if default is None or not scores:
            # An estimator that cannot fit the grid's budget fails the target, loudly.
            error = settings.get("default", {}).get("error", "no result")
            report(f"{name} {ESTIMATORS[est_id][0]}: default within "
                   f"{DEFAULT_VS_GRID_POINTS * 100:g} points of best grid", False,
                   f"no default result: {error[:160]}")
            continue
        gap = max(scores) - default
        report(f"{name} {ESTIMATORS[est_id][0]}: default within "
               f"{DEFAULT_VS_GRID_POINTS * 100:g} points of best grid",
               gap <= DEFAULT_VS_GRID_POINTS + 1e-12,
               f"default {default:.3f}, best {max(scores):.3f}, gap {gap * 100:+.1f} points"
               f" at {format_bytes(settings['default'].get('budget', 0))}")

    for name, results in all_results.items():
        def acc(row, budget):
            return results.get((row, budget), {}).get("accuracy")

        for est_id in ("mission", "awm", "wm"):
            if est_id not in est_ids:
                continue
            row = ESTIMATORS[est_id][0]
            failures, compared = [], 0
            for budget in budgets:
                ours, hashing, vw = (acc(r, budget) for r in (row, "FeatureHashing", "VW"))
                if ours is None:
                    failures.append(f"{format_bytes(budget)}: no result")
                    continue
                over = results[(row, budget)]["memory_bytes"] > budget
                for peer, value in (("hashing", hashing), ("VW", vw)):
                    if value is None:
                        continue
                    compared += 1
                    if ours < value - PEER_SLACK_POINTS or over:
                        failures.append(f"{format_bytes(budget)}: {ours:.3f} vs {peer} "
                                        f"{value:.3f}{' (over budget)' if over else ''}")
            report(f"{name} {row} >= hashing and VW - {PEER_SLACK_POINTS * 100:g} point "
                   "at every budget, inside the budget", compared and not failures,
                   "; ".join(failures) or f"{compared} comparisons hold")

        if "awm" in est_ids and "hashing" in est_ids:
            pairs = [(acc("AWM-Sketch", b), acc("FeatureHashing", b)) for b in budgets]
            pairs = [(a, h) for a, h in pairs if a is not None and h is not None]
            wins = sum(a >= h for a, h in pairs)
            report(f"{name} AWM >= FeatureHashing in at least half of the budgets",
                   pairs and wins >= len(pairs) / 2, f"{wins} of {len(pairs)} budgets")

    def best_selector(names, max_bytes):
        best = None
        for name in names:
            for (row, budget), r in all_results.get(name, {}).items():
                if (row in {ESTIMATORS[e][0] for e in SELECTORS} and "accuracy" in r
                        and r["memory_bytes"] <= max_bytes
                        and (best is None or r["accuracy"] > best[0])):
                    best = (r["accuracy"], row, name, r["memory_bytes"])
        return best

    ng = [n for n in ("ng-tokens", "ng-hashing") if n in all_results]
    reference = sgd_all.get("ng-hashing", {}).get("memory_bytes")
    if ng and reference:
        limit = NG_BYTES_FRACTION * reference
        best = best_selector(ng, limit)
        report(f"20NG best selector >= {NG_TARGET_ACCURACY} in <= {NG_BYTES_FRACTION:g} of "
               f"SGDClassifier's hashed-feature weights ({format_bytes(reference)})",
               best and best[0] >= NG_TARGET_ACCURACY,
               f"best {best[1]} on {best[2]}: {best[0]:.3f} in {format_bytes(best[3])}"
               if best else f"no selector inside {format_bytes(limit)}")
    if "dna" in all_results:
        best = best_selector(["dna"], DNA_TARGET_BYTES)
        report(f"DNA best selector >= {DNA_TARGET_ACCURACY} in <= "
               f"{format_bytes(DNA_TARGET_BYTES)}", best and best[0] >= DNA_TARGET_ACCURACY,
               f"best {best[1]}: {best[0]:.3f} in {format_bytes(best[3])}"
               if best else "no selector inside the bytes")
    return checks


# ------------------------------------------------------------------------ tables
#: The rows of the README's headline table, in this order, where they ran.
HEADLINE_ROWS = ("AWM-Sketch", "WM-Sketch", "MISSION", "BEAR", "FeatureHashing", "SGD hashed",
                 "VW")


def result_tables(all_results, sgd_all, grid, budgets, dna_reads):
    """The tables of the JSON: accuracy per budget per data set, then defaults against grids."""
    tables = []
    for name, results in all_results.items():
        rows = sorted({row for row, _ in results},
                      key=lambda r: (HEADLINE_ROWS.index(r) if r in HEADLINE_ROWS
                                     else len(HEADLINE_ROWS), r))

        def cell(row, budget):
            r = results.get((row, budget), {})
            return round(r["accuracy"], 3) if "accuracy" in r else None

        ref = sgd_all.get(name, {})
        table = {
            "title": (f"{name}{f' ({dna_reads:,} reads a strain)' if name == 'dna' else ''}: "
                      "test accuracy at equal real bytes (memory_budget)"),
            "columns": ["estimator"] + [format_bytes(b) for b in budgets],
            "rows": [[row] + [cell(row, b) for b in budgets] for row in rows],
            "note": (f"SGDClassifier() on all {ref.get('n_features', 0):,} features: "
                     f"{ref.get('accuracy', float('nan')):.3f} in "
                     f"{format_bytes(ref.get('memory_bytes', 0))}. Every estimator with its "
                     "default parameters; memory_bytes_ <= budget for every row here."),
        }
        table["headline"] = name in ("ng-tokens", "dna")
        tables.append(table)
    if grid:
        rows = []
        for (name, est_id), settings in grid.items():
            scored = {k: v["accuracy"] for k, v in settings.items() if "accuracy" in v}
            if "default" not in scored:
                continue
            best = max(scored, key=scored.get)
            rows.append([name, ESTIMATORS[est_id][0],
                         format_bytes(settings["default"].get("budget", 0)),
                         round(scored["default"], 3), round(scored[best], 3),
                         round((scored[best] - scored["default"]) * 100, 1), best])
        tables.append({"title": "Default parameters against the best step of a small grid "
                                "(read on the test set: an optimistic bound)",
                       "columns": ["data set", "estimator", "budget", "default", "best",
                                   "gap, points", "best setting"],
                       "rows": rows})
    return tables


def join_earlier_run(earlier, all_results, sgd_all, grid, est_ids, record):
    """Add to this run's results the rows and grid settings of ``earlier`` (a loaded
    ``--json`` file) that it did not measure, in place; returns the estimator ids
    of both. ``record`` (this run's provenance) gets ``earlier_run``: the earlier
    file's provenance, and which rows came from it."""
    taken = []
    for name, rows in earlier["results"].items():
        results = all_results.setdefault(name, {})
        for entry in rows:
            key = (entry["row"], entry["budget"])
            if key not in results:
                results[key] = {k: v for k, v in entry.items() if k not in ("row", "budget")}
                taken.append(f"{name} {entry['row']}")
    for name, reference in earlier.get("sgd_all_features", {}).items():
        sgd_all.setdefault(name, reference)
    measured = set(grid)  # a (data set, estimator) grid is taken whole or not at all
    for entry in earlier.get("grid", []):
        pair = (entry["dataset"], entry["estimator"])
        if pair not in measured:
            grid.setdefault(pair, {})[entry["setting"]] = {
                k: v for k, v in entry.items() if k not in ("dataset", "estimator", "setting")}
    record["earlier_run"] = {"provenance": earlier["provenance"],
                             "rows": sorted(set(taken))}
    names = {ESTIMATORS[e][0]: e for e in ESTIMATORS}
    earlier_ids = {names[row] for rows in earlier["results"].values()
                   for row in (entry["row"] for entry in rows) if row in names}
    return list(est_ids) + sorted(earlier_ids - set(est_ids))


# --------------------------------------------------------------------------- main
def parse_args(argv):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--budgets", default=None,
                        help=f"comma-separated memory budgets (default {DEFAULT_BUDGETS})")
    parser.add_argument("--datasets", default=",".join(DATASETS),
                        help=f"comma-separated, among {', '.join(DATASETS)}")
    parser.add_argument("--estimators", default=None,
                        help=f"comma-separated, among {', '.join(ESTIMATORS)}")
    parser.add_argument("--grid-budget", default=None,
                        help=f"budget of the step-size grid (default 4MB, {QUICK_GRID_BUDGET} "
                             "with --quick)")
    parser.add_argument("--max-bytes", default=DEFAULT_MAX_BYTES,
                        help="skip fits predicted to allocate more than this")
    parser.add_argument("--no-grid", action="store_true", help="skip the step-size grid")
    parser.add_argument("--max-iter", type=int, default=None,
                        help="epochs of our estimators and VW passes (default: each "
                             "estimator's own max_iter)")
    parser.add_argument("--no-vw", action="store_true", help="skip Vowpal Wabbit")
    parser.add_argument("--dna-reads", type=int, default=20_000,
                        help="reads of 200 bp per training (and test) strain")
    parser.add_argument("--data", default=None, help="shared data folder (default: found "
                        "like benchmarks/dna_task.py finds it)")
    parser.add_argument("--cache", default=str(Path(tempfile.gettempdir())
                                               / "sklearn_sketch_bench_cache"))
    parser.add_argument("--n-jobs", type=int, default=2, help="parallel fits (joblib)")
    parser.add_argument("--quick", action="store_true",
                        help=f"smoke run: budgets {QUICK_BUDGETS}, estimators "
                             f"{QUICK_ESTIMATORS}, {QUICK_ROWS} rows, 1 epoch, small grid")
    parser.add_argument("--json", help="write every number to this file")
    parser.add_argument("--figure", help="write accuracy against real bytes to this PNG")
    parser.add_argument("--rest-from", help="an earlier --json file: its rows and grid "
                        "settings that this run does not measure join the tables, the "
                        "checks and the JSON (whose provenance then names that file's)")
    args = parser.parse_args(argv)
    if args.quick:
        args.budgets = args.budgets or QUICK_BUDGETS
        args.estimators = args.estimators or QUICK_ESTIMATORS
        args.max_iter = args.max_iter or 1
        args.grid_budget = args.grid_budget or QUICK_GRID_BUDGET
    args.grid_budget = args.grid_budget or "4MB"
    args.max_bytes = parse_memory_budget(args.max_bytes)
    args.budgets = [parse_memory_budget(b) for b in (args.budgets or DEFAULT_BUDGETS).split(",")]
    args.estimators = (args.estimators or ",".join(ESTIMATORS)).split(",")
    args.datasets = args.datasets.split(",")
    for value, allowed in ((args.estimators, ESTIMATORS), (args.datasets, DATASETS)):
        unknown = set(value) - set(allowed)
        if unknown:
            parser.error(f"unknown: {', '.join(sorted(unknown))}")
    return args


def quick_subset(X_train, y_train, X_test, y_test):
    """First ``QUICK_ROWS`` training rows (shuffled already), a random set of test rows."""
    test = np.sort(np.random.default_rng(0).permutation(X_test.shape[0])[:QUICK_ROWS])
    return X_train[:QUICK_ROWS], y_train[:QUICK_ROWS], X_test[test], y_test[test]


def epochs_of(est_ids, max_iter):
    """Epochs our estimators run: ``max_iter`` or the largest default among them."""
    if max_iter is not None:
        return max_iter
    return max(make_estimator(e).get_params().get("max_iter", 1) for e in est_ids)


def run_tasks(tasks, n_jobs, labels):
    """Run delayed fits with joblib, printing one progress line per finished fit."""
    outputs = []
    results = Parallel(n_jobs=n_jobs, return_as="generator")(tasks)
    for label, out in zip(labels, results):
        summary = (f"{out['accuracy']:.3f} in {format_bytes(out['memory_bytes'])}"
                   if "accuracy" in out else out.get("skipped") or out.get("error"))
        print(f"  [{len(outputs) + 1}/{len(tasks)}] {label}: {summary}", flush=True)
        outputs.append(out)
    return outputs


def run_dataset(name, data, args, vw_dir):
    """All rows of one data set: SGD on all features, then every budget's fits."""
    X_train, y_train, X_test, y_test = data
    n_classes = len(np.unique(y_train))
    print(f"\n{name}: train {X_train.shape[0]:,} rows, {X_train.nnz:,} non-zeros, test "
          f"{X_test.shape[0]:,} rows, {n_classes} classes", flush=True)

    start = time.perf_counter()
    X_train_all, X_test_all = compact_columns(X_train, X_test)
    sgd_all = run_sgd(X_train_all, y_train, X_test_all, y_test)
    del X_train_all, X_test_all
    print(f"SGDClassifier() on all {sgd_all['n_features']:,} features: accuracy "
          f"{sgd_all['accuracy']:.3f}, coef_ + intercept_ {format_bytes(sgd_all['memory_bytes'])}"
          f", fit {sgd_all['seconds']:.1f} s", flush=True)

    stride = vw_stride(vw_options(n_classes)) if vw_dir is not None else None
    tasks = []
    for budget in args.budgets:
        for est_id in args.estimators:
            tasks.append((ESTIMATORS[est_id][0], budget,
                          delayed(run_ours)(est_id, budget, data, args.max_iter, args.max_bytes)))
        tasks.append(("SGD hashed", budget,
                      delayed(run_sgd_hashed)(budget, X_train, y_train, X_test, y_test)))
        if vw_dir is not None:
            tasks.append(("VW", budget, delayed(run_vw)(
                budget, stride, epochs_of(args.estimators, args.max_iter),
                vw_dir / "train.vw", vw_dir / "test.vw", y_test, n_classes)))
    outputs = run_tasks([task for _, _, task in tasks], args.n_jobs,
                        [f"{name} {row} {format_bytes(budget)}" for row, budget, _ in tasks])
    results = {(row, budget): out for (row, budget, _), out in zip(tasks, outputs)}
    rows = [ESTIMATORS[e][0] for e in args.estimators] + ["SGD hashed"] + (
        ["VW"] if vw_dir is not None else [])
    print_dataset_table(name, results, args.budgets, rows)
    print(f"({name}: {time.perf_counter() - start:.0f} s)", flush=True)
    return results, sgd_all


def run_grid(name, data, args, budget):
    """Default parameters beside the step-size grid, at one budget.

    An estimator that cannot be built in that budget (BEAR's curvature pairs on 20
    Newsgroups' longest rows need 16 MB) is graded at the next budget, 4x larger, up to
    64 MB, where its defaults fit; ``budget`` in each result says where.
    """
    grid = {}
    pending = list(args.estimators)
    while pending and budget <= parse_memory_budget("64MB"):
        tasks = []
        for est_id in pending:
            for label, params in grid_settings(make_estimator(est_id), args.quick):
                tasks.append((est_id, label,
                              delayed(run_ours)(est_id, budget, data, args.max_iter,
                                                args.max_bytes, **params)))
        outputs = run_tasks([task for _, _, task in tasks], args.n_jobs,
                            [f"{name} grid {est_id} {label} {format_bytes(budget)}"
                             for est_id, label, _ in tasks])
        for (est_id, label, _), out in zip(tasks, outputs):
            grid.setdefault((name, est_id), {})[label] = {**out, "budget": budget}
        pending = [e for e in pending
                   if "cannot hold" in grid[(name, e)]["default"].get("error", "")]
        budget *= 4
    print(f"\n== {name}: default against the best step size, at "
          f"{format_bytes(parse_memory_budget(args.grid_budget))} (or where noted) ==")
    print(f"{'estimator':20} {'default':>8} {'best':>8} {'diff pts':>9}  best setting")
    for est_id in args.estimators:
        settings = grid[(name, est_id)]
        scored = {k: v["accuracy"] for k, v in settings.items() if "accuracy" in v}
        if not scored:
            print(f"{ESTIMATORS[est_id][0]:20} no result: "
                  f"{next(iter(settings.values()))}")
            continue
        best = max(scored, key=scored.get)
        default = scored.get("default", float("nan"))
        where = settings["default"]["budget"]
        note = ("" if where == parse_memory_budget(args.grid_budget)
                else f" (at {format_bytes(where)})")
        print(f"{ESTIMATORS[est_id][0]:20} {default:8.3f} {scored[best]:8.3f} "
              f"{(scored[best] - default) * 100:9.1f}  {best}{note}")
    return grid


def main(argv=None):
    args = parse_args(argv)
    started = time.perf_counter()
    cache = Path(args.cache)
    cache.mkdir(parents=True, exist_ok=True)
    data_dir = Path(args.data) if args.data else resolve_data_dir().parent
    print(f"sklearn_sketch {sk.__version__}; budgets "
          f"{', '.join(format_bytes(b) for b in args.budgets)}; epochs: "
          f"{args.max_iter or 'each estimator default'}; n_jobs={args.n_jobs}")
    for est_id in args.estimators:
        estimator = make_estimator(est_id)
        how = ("memory_budget" if has_memory_budget(estimator)
               else "shape_for_budget (no memory_budget parameter)")
        print(f"  {ESTIMATORS[est_id][0]:20} sized by {how}")

    all_results, sgd_all, grid = {}, {}, {}
    for name in args.datasets:
        data = load_dataset(name, data_dir, cache, args.dna_reads)
        if args.quick:
            data = quick_subset(*data)
        vw_dir = None
        if not args.no_vw:
            vw_dir = cache / f"vw_{name}_{data[0].shape[0]}_{args.dna_reads}"
            if not (vw_dir / "test.vw").exists():
                vw_dir.mkdir(exist_ok=True)
                n_classes = len(np.unique(data[1]))
                write_vw_lines(data[0], data[1], n_classes, vw_dir / "train.vw")
                write_vw_lines(data[2], data[3], n_classes, vw_dir / "test.vw")
        all_results[name], sgd_all[name] = run_dataset(name, data, args, vw_dir)
        if not args.no_grid:
            grid.update(run_grid(name, data, args, parse_memory_budget(args.grid_budget)))

    record = provenance()
    est_ids = args.estimators
    if args.rest_from:
        est_ids = join_earlier_run(json.loads(Path(args.rest_from).read_text()), all_results,
                                   sgd_all, grid, est_ids, record)
    checks = check_targets(all_results, grid, sgd_all, args.budgets, est_ids)
    seconds = time.perf_counter() - started
    print(f"\ntotal {seconds:.0f} s")
    if args.json:
        payload = {
            "provenance": record,
            "tables": result_tables(all_results, sgd_all, grid, args.budgets,
                                    args.dna_reads),
            "summary": [f"{'PASS' if c['pass'] else 'FAIL'} {c['target']}: {c['detail']}"
                        for c in checks],
            "budgets": args.budgets, "max_iter": args.max_iter, "quick": args.quick,
            "seconds": seconds, "sgd_all_features": sgd_all, "checks": checks,
            "results": {name: [{"row": row, "budget": budget, **r}
                               for (row, budget), r in res.items()]
                        for name, res in all_results.items()},
            "grid": [{"dataset": name, "estimator": est_id, "setting": label, **r}
                     for (name, est_id), settings in grid.items()
                     for label, r in settings.items()],
        }
        Path(args.json).write_text(json.dumps(payload, indent=1))
    if args.figure:
        plot(all_results, sgd_all, args.figure)


if __name__ == "__main__":
    main()
