"""Command line of sklearn-sketch: demo, fit, select, predict, evaluate."""
import argparse
import ast
import json
import pickle
import sys
import time

import numpy as np
from sklearn.metrics import roc_auc_score

from . import __version__
from ._cli_inputs import add_input_arguments, is_dna_input, iter_chunks
from ._core import CountSketch, TopKHeap, track_heavy_hitters
from ._dna_demo import run_dna_demo
from .bear import BearClassifier
from .datasets import load_dna_sample
from .feature_extraction import KmerVectorizer
from .mission import FeatureHashingClassifier, IHTClassifier, MissionClassifier
from .weight_median import AWMSketchClassifier, WMSketchClassifier

ESTIMATORS = {
    "mission": MissionClassifier,
    "bear": BearClassifier,
    "awm": AWMSketchClassifier,
    "wm": WMSketchClassifier,
    "hashing": FeatureHashingClassifier,
    "iht": IHTClassifier,
}


def _zipf_stream(n_items, n_distinct, exponent, rng):
    """A stream of 64-bit keys whose frequencies follow a Zipf law."""
    universe = rng.integers(-(2**62), 2**62, size=n_distinct, dtype=np.int64)
    ranks = np.arange(1, n_distinct + 1, dtype=np.float64)
    probabilities = ranks**-exponent
    probabilities /= probabilities.sum()
    return universe[rng.choice(n_distinct, size=n_items, p=probabilities)]


def run_heavy_hitters_demo(n_items=2_000_000, n_distinct=200_000, top=20, width=2**12,
                           depth=5, random_state=0, out=None):
    """Recover the heaviest keys of a Zipf stream with a Count-Sketch and a heap.

    Prints the true and estimated counts of the top keys, the recall of the
    exact top ``top`` and the memory of the sketch against an exact counter.

    Returns
    -------
    recall : float
        Fraction of the exact top ``top`` keys found in the heap.
    """
    out = sys.stdout if out is None else out
    rng = np.random.default_rng(random_state)
    stream = _zipf_stream(n_items, n_distinct, 1.1, rng)
    sketch = CountSketch(width, depth, random_state=random_state)
    heap = TopKHeap(top)
    start = time.perf_counter()
    track_heavy_hitters(sketch, heap, stream)
    seconds = time.perf_counter() - start

    distinct, counts = np.unique(stream, return_counts=True)
    order = np.argsort(-counts, kind="stable")[:top]
    true_top = dict(zip(distinct[order].tolist(), counts[order].tolist()))
    keys, estimates = heap.items()
    recall = len(set(keys.tolist()) & set(true_top)) / top

    print(f"Stream: {n_items:,} items, {len(distinct):,} distinct 64-bit keys (Zipf 1.1)", file=out)
    print(f"Sketch: depth {depth} x width {width:,} + heap of {top}: "
          f"{(sketch.memory_bytes + heap.memory_bytes) / 1024:,.0f} KiB "
          f"(an exact counter needs >= {len(distinct) * 16 / 1024:,.0f} KiB); "
          f"{n_items / seconds / 1e6:,.1f} M items/s", file=out)
    print(f"\n{'key':>22} {'true count':>11} {'estimate':>10}", file=out)
    for key, estimate in zip(keys[:10].tolist(), estimates[:10].tolist()):
        true = int(counts[np.searchsorted(distinct, key)])
        print(f"{key:>22} {true:>11,} {estimate:>10,.0f}", file=out)
    print(f"\nRecall of the exact top {top}: {recall:.0%}", file=out)
    return recall



class CommandError(Exception):
    """A user error: reported on one line, exit status 2."""


class _Parser(argparse.ArgumentParser):
    def error(self, message):
        raise CommandError(message)


def _parse_params(pairs):
    """``key=value`` pairs as a dict; a value that is no Python literal stays a string."""
    params = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key.isidentifier():
            raise CommandError(f"--param expects key=value, got {pair!r}")
        try:
            params[key] = ast.literal_eval(value)
        except (ValueError, SyntaxError):
            params[key] = value
    return params


def _format_label(label):
    if isinstance(label, (float, np.floating)) and float(label).is_integer():
        return str(int(label))
    return str(label)


def _load_model(path):
    with open(path, "rb") as f:
        try:
            model = pickle.load(f)
        except (pickle.UnpicklingError, EOFError, AttributeError, ImportError) as exc:
            raise CommandError(f"{path} is not a model saved by sklearn-sketch fit ({exc})")
    if not isinstance(model, dict) or "estimator" not in model:
        raise CommandError(f"{path} is not a model saved by sklearn-sketch fit")
    return model


def _model_vectorizer(model, args):
    """The model's k-mer vectorizer, checked against the kind of input."""
    vectorizer = model["vectorizer"]
    if is_dna_input(args) and vectorizer is None:
        raise CommandError("this model was trained on svmlight/VW features, not on reads")
    if not is_dna_input(args) and vectorizer is not None:
        raise CommandError("this model was trained on reads: give --fasta, --fastq or --sample")
    return vectorizer


# ------------------------------------------------------------------ commands
def _cmd_demo(args):
    if args.heavy_hitters:
        run_heavy_hitters_demo(n_items=args.items, top=args.top, width=args.width,
                               depth=args.depth, random_state=args.random_state)
    else:
        start = time.perf_counter()
        run_dna_demo(n_reads_per_class=args.n_reads, k=args.k, random_state=args.random_state)
        print(f"\nDemo ran in {time.perf_counter() - start:.1f} s.")


def _cmd_fit(args):
    estimator = ESTIMATORS[args.estimator]()
    params = _parse_params(args.param or [])
    try:
        estimator.set_params(**params)
    except ValueError as exc:
        raise CommandError(f"bad --param for {args.estimator}: {exc}") from exc
    vectorizer = KmerVectorizer(k=args.k) if is_dna_input(args) else None
    classes = _classes(args, vectorizer)
    for _ in range(args.epochs):
        for X, y in iter_chunks(args, vectorizer, "train"):
            estimator.partial_fit(X, y, classes=classes)
    with open(args.output, "wb") as f:
        pickle.dump({"estimator": estimator, "vectorizer": vectorizer,
                     "version": __version__}, f)
    print(f"{type(estimator).__name__} trained on {len(classes)} classes, "
          f"{estimator.memory_bytes_:,} bytes, saved to {args.output}")


def _classes(args, vectorizer):
    """Every class of the input (``partial_fit`` needs them on its first call)."""
    if args.fasta or args.fastq:
        return np.unique([spec.rpartition(":")[2] for spec in args.fasta or args.fastq])
    if args.sample:
        return np.array(load_dna_sample(1).target_names)
    # svmlight / VW: one pass over the labels before training.
    labels = np.unique(np.concatenate([np.asarray(y) for _, y in
                                       iter_chunks(args, vectorizer, "train")]))
    if labels.dtype.kind == "f" and np.isnan(labels).any():
        raise CommandError("the training file has examples without a label")
    if labels.size < 2:
        raise CommandError(f"need at least 2 classes to train, found {labels.tolist()}")
    return labels


def _cmd_select(args):
    model = _load_model(args.model)
    estimator = model["estimator"]
    if not hasattr(estimator, "selected_features_"):
        raise CommandError(f"{type(estimator).__name__} keeps no feature identities: "
                           "nothing to select")
    selected = estimator.selected_features_
    keys, weights = selected.keys[:args.top], selected.weights[:args.top]
    vectorizer = model["vectorizer"]
    names = (vectorizer.decode(keys) if vectorizer is not None else keys.astype(str)).tolist()
    classes = estimator.classes_
    # A binary model has one weight vector, that of the positive class.
    columns = [_format_label(c) for c in (classes[1:] if len(classes) == 2 else classes)]
    if args.format == "json":
        text = json.dumps([{"key": int(key), "name": name,
                            "weights": dict(zip(columns, row.tolist()))}
                           for key, name, row in zip(keys, names, weights)], indent=1) + "\n"
    else:
        lines = ["\t".join(["key", "name"] + [f"weight_{c}" for c in columns])]
        lines += ["\t".join([str(key), name] + [f"{w:.6g}" for w in row])
                  for key, name, row in zip(keys.tolist(), names, weights)]
        text = "\n".join(lines) + "\n"
    _write(text, args.output)


def _write(text, path):
    if path is None:
        sys.stdout.write(text)
    else:
        with open(path, "w") as f:
            f.write(text)


def _cmd_predict(args):
    model = _load_model(args.model)
    vectorizer = _model_vectorizer(model, args)
    predictions = [model["estimator"].predict(X) for X, _ in iter_chunks(args, vectorizer, "test")]
    labels = [_format_label(label) for chunk in predictions for label in chunk]
    _write("".join(f"{label}\n" for label in labels), args.output)


def _cmd_evaluate(args):
    model = _load_model(args.model)
    estimator = model["estimator"]
    vectorizer = _model_vectorizer(model, args)
    with_proba = hasattr(estimator, "predict_proba") and len(estimator.classes_) > 2
    y_true, scores, probas, seconds = [], [], [], 0.0
    for X, y in iter_chunks(args, vectorizer, "test"):
        start = time.perf_counter()
        scores.append(estimator.decision_function(X))
        seconds += time.perf_counter() - start
        if with_proba:
            probas.append(estimator.predict_proba(X))
        y_true.append(np.asarray(y))
    if not y_true:
        raise CommandError("the input holds no example")
    y_true, scores = np.concatenate(y_true), np.concatenate(scores)
    classes = estimator.classes_
    if scores.ndim == 1:
        predicted = classes[(scores > 0).astype(int)]
    else:
        predicted = classes[scores.argmax(axis=1)]
    print(f"examples\t{y_true.size}")
    print(f"accuracy\t{np.mean(predicted == y_true):.4f}")
    print(f"roc_auc\t{_roc_auc(classes, y_true, scores, probas)}")
    print(f"memory_bytes\t{estimator.memory_bytes_}")
    print(f"predict_seconds\t{seconds:.4f}")


def _roc_auc(classes, y_true, scores, probas):
    """Binary AUC of the scores, macro one-vs-rest AUC of the probabilities, or 'n/a'."""
    if not np.isin(classes, y_true).all():
        return "n/a (a class is missing from the labels)"
    if scores.ndim == 1:
        return f"{roc_auc_score(y_true == classes[1], scores):.4f}"
    if not probas:
        return "n/a (no predict_proba for this loss)"
    return f"{roc_auc_score(y_true, np.concatenate(probas), multi_class='ovr', labels=classes):.4f}"


def _build_parser():
    parser = _Parser(prog="sklearn-sketch", description=__doc__)
    commands = parser.add_subparsers(dest="command", required=True)

    demo = commands.add_parser(
        "demo", help="classify DNA reads of 4 species with 4 sketched estimators")
    demo.add_argument("--n-reads", type=int, default=4000, help="training reads per species")
    demo.add_argument("--k", type=int, default=12, help="k-mer length")
    demo.add_argument("--heavy-hitters", action="store_true",
                      help="instead, recover the heavy hitters of a stream with a sketch")
    demo.add_argument("--items", type=int, default=2_000_000, help="--heavy-hitters: stream length")
    demo.add_argument("--top", type=int, default=20, help="--heavy-hitters: heap size")
    demo.add_argument("--width", type=int, default=2**12, help="--heavy-hitters: sketch width")
    demo.add_argument("--depth", type=int, default=5, help="--heavy-hitters: sketch depth")
    demo.add_argument("--random-state", type=int, default=0)

    fit = commands.add_parser("fit", help="train an estimator by streaming partial_fit")
    fit.add_argument("--estimator", choices=sorted(ESTIMATORS), default="mission")
    fit.add_argument("--param", metavar="KEY=VALUE", action="append",
                     help="estimator parameter, value parsed as a Python literal (repeat)")
    add_input_arguments(fit)
    fit.add_argument("--k", type=int, default=12, help="k-mer length for reads (default 12)")
    fit.add_argument("--epochs", type=int, default=1, help="passes over the input")
    fit.add_argument("--output", required=True, help="model file (pickle)")

    select = commands.add_parser("select", help="list the selected features of a model")
    select.add_argument("--model", required=True, help="model file written by fit")
    select.add_argument("--top", type=int, default=20, help="features listed (default 20)")
    select.add_argument("--format", choices=["tsv", "json"], default="tsv")
    select.add_argument("--output", help="file to write (default stdout)")

    predict = commands.add_parser("predict", help="predict a label per example")
    predict.add_argument("--model", required=True, help="model file written by fit")
    add_input_arguments(predict)
    predict.add_argument("--output", help="file to write, one label a line (default stdout)")

    evaluate = commands.add_parser("evaluate", help="accuracy, ROC AUC, memory, time")
    evaluate.add_argument("--model", required=True, help="model file written by fit")
    add_input_arguments(evaluate)
    return parser


_COMMANDS = {"demo": _cmd_demo, "fit": _cmd_fit, "select": _cmd_select,
             "predict": _cmd_predict, "evaluate": _cmd_evaluate}


def main(argv=None):
    """Entry point of the ``sklearn-sketch`` command.

    Parameters
    ----------
    argv : list of str, default=None
        Arguments; default ``sys.argv[1:]``.

    Returns
    -------
    status : int
        0 on success, 2 on a user error (bad arguments, unreadable or malformed
        input), which is reported on one line of stderr.
    """
    try:
        args = _build_parser().parse_args(argv)
        _COMMANDS[args.command](args)
    except (CommandError, OSError, ValueError, TypeError) as exc:
        print(f"sklearn-sketch: error: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
