"""Binary text in one pass from the command line, beside Vowpal Wabbit's logistic regression.

Two tasks of 20 Newsgroups posts written as Vowpal Wabbit text (``label |w word word
...``, a post a line, raw counts, training lines shuffled once), by-date split:
computing and science posts against the rest (11,314 training posts), and
alt.atheism against soc.religion.christian (1,079). Each runs as a user runs it:
``sklearn-sketch fit --vw`` (one pass, defaults but ``learning_rate``) then
``evaluate``, for 'auto' (the default), 'frequency' and 'adaptive' (BEAR: 'auto',
'normalized' and 'adaptive'); and
``vw --loss_function logistic --binary`` with its defaults (adaptive, normalized
and invariant updates, 18 bits) and with ``--normalized --invariant`` alone (no
adaptive steps: what 'adaptive' adds). Accuracy on the test posts after one pass,
for each of ``--shuffles`` orders of the training lines (Vowpal Wabbit's one pass
moved by 5 points with the order: 0.893 to 0.948 on the first task), and the mean.
With ``--length`` each line also carries the post's length in words in a namespace
of its own (``|n len:412``): a measurement beside counted words.

    python benchmarks/bench_binary_text.py [--estimators mission,wm,awm,hashing,bear]
        [--shuffles 3] [--length] [--json out.json] [--rest-from EARLIER.json]
"""
import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bench_accuracy_memory as bam  # noqa: E402
from _provenance import join_earlier_run, provenance  # noqa: E402
from dna_task import resolve_data_dir  # noqa: E402
from bench_schedules import WORD  # noqa: E402  (CountVectorizer's default tokens)
from peers import _vw_command  # noqa: E402

ESTIMATORS = ("mission", "wm", "awm", "hashing")
SCHEDULES = ("auto", "frequency", "adaptive")
#: BEAR has no 'frequency' schedule: its 'auto' chooses between these two.
BEAR_SCHEDULES = ("auto", "normalized", "adaptive")
VW_RUNS = {"vw, its defaults": [], "vw --normalized --invariant": ["--normalized", "--invariant"]}


def tasks(root):
    """``{task: (train docs, train labels +-1, test docs, test labels)}``."""
    names = sorted(p.name for p in (root / "20news-bydate-train").iterdir())
    (train, y_train), (test, y_test) = (bam._read_posts(root, s) for s in ("train", "test"))
    science = [i for i, n in enumerate(names) if n.startswith(("comp", "sci"))]
    pair = [names.index("alt.atheism"), names.index("soc.religion.christian")]
    out = {}
    for task, positive, kept in (("computing and science against the rest", science, None),
                                 ("atheism against christian", pair[1:], pair)):
        split = []
        for docs, y in ((train, y_train), (test, y_test)):
            rows = np.arange(len(docs)) if kept is None else np.flatnonzero(np.isin(y, kept))
            split += [[docs[i] for i in rows], np.where(np.isin(y[rows], positive), 1, -1)]
        out[task] = tuple(split)
    return out


def write_vw(docs, labels, path, seed, length):
    """The posts as VW text, in the order of ``seed`` (None: as given)."""
    order = range(len(docs)) if seed is None else np.random.default_rng(seed).permutation(
        len(docs))
    with open(path, "w") as f:
        for i in order:
            words = WORD.findall(docs[i].lower()) or ["empty"]
            extra = f" |n len:{len(words)}" if length else ""
            f.write(f"{labels[i]} |w {' '.join(words)}{extra}\n")


def sketch_one_pass(train, test, estimator, learning_rate, folder):
    model = folder / f"{estimator}-{learning_rate}.skm"
    sketch = [sys.executable, "-m", "sklearn_sketch"]
    subprocess.run([*sketch, "fit", "--vw", str(train), "--estimator", estimator,
                    "--param", f"learning_rate='{learning_rate}'", "--quiet",
                    "--output", str(model)], check=True, capture_output=True)
    out = subprocess.run([*sketch, "evaluate", "--vw", str(test), "--model", str(model),
                          "--format", "json"], check=True, capture_output=True,
                         text=True).stdout
    return json.loads(out.strip().splitlines()[-1])["accuracy"]


def vw_one_pass(train, test, options, folder):
    model, predictions = folder / "vw.model", folder / "vw.pred"
    subprocess.run([*_vw_command(), "--loss_function", "logistic", "--binary", *options,
                    "-d", str(train), "-f", str(model), "--quiet"], check=True)
    subprocess.run([*_vw_command(), "-t", "-i", str(model), "-d", str(test), "-p",
                    str(predictions), "--quiet", "--binary"], check=True)
    predicted = np.array([float(line.split()[0]) for line in open(predictions)])
    truth = np.array([int(line.split(" ", 1)[0]) for line in open(test)])
    return float(np.mean(np.sign(predicted) == truth))


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--estimators", default=",".join(ESTIMATORS))
    parser.add_argument("--shuffles", type=int, default=3,
                        help="orders of the training lines (seeds 0, 1, ...)")
    parser.add_argument("--length", action="store_true",
                        help="add each post's length in words as a feature of its own")
    parser.add_argument("--data", default=None, help="shared data folder (default: found "
                                                     "next to the project)")
    parser.add_argument("--cache", default=str(Path(tempfile.gettempdir())
                                               / "sklearn_sketch_bench_cache"))
    parser.add_argument("--json", help="write every number to this file")
    parser.add_argument("--rest-from", help="an earlier --json file: its rows that this run "
                        "does not measure join the tables (the provenance then names that "
                        "file's)")
    args = parser.parse_args(argv)
    data_dir = Path(args.data) if args.data else resolve_data_dir().parent
    cache = Path(args.cache)
    cache.mkdir(parents=True, exist_ok=True)
    root = bam._twenty_news_root(data_dir, cache)
    record = {"provenance": provenance(argv), "tables": []}
    for task, (train_docs, y_train, test_docs, y_test) in tasks(root).items():
        print(f"== {task}: {len(train_docs):,} training posts ==", flush=True)
        runs = [(f"sklearn-sketch fit --estimator {e}", lr) for e in args.estimators.split(",")
                for lr in (BEAR_SCHEDULES if e == "bear" else SCHEDULES)]
        runs += [(name, "-") for name in VW_RUNS]
        scores = {run: [] for run in runs}
        with tempfile.TemporaryDirectory() as tmp:
            folder = Path(tmp)
            test = folder / "test.vw"
            write_vw(test_docs, y_test, test, None, args.length)
            for seed in range(args.shuffles):
                train = folder / "train.vw"
                write_vw(train_docs, y_train, train, seed, args.length)
                for run in runs:
                    name, learning_rate = run
                    if name in VW_RUNS:
                        accuracy = vw_one_pass(train, test, VW_RUNS[name], folder)
                    else:
                        accuracy = sketch_one_pass(train, test, name.rsplit(" ", 1)[1],
                                                   learning_rate, folder)
                    scores[run].append(accuracy)
                    print(f"  order {seed}: {name} {learning_rate}: {accuracy:.4f}", flush=True)
        record["tables"].append({
            "title": f"One pass over 20 Newsgroups posts as VW text, {task}"
                     + (", each with its length" if args.length else ""),
            "columns": ["run", "learning_rate", *[f"order {s}" for s in range(args.shuffles)],
                        "mean"],
            "rows": [[*run, *scores[run], float(np.mean(scores[run]))] for run in runs]})
    if args.rest_from:
        join_earlier_run(json.loads(Path(args.rest_from).read_text()), record)
    if args.json:
        Path(args.json).write_text(json.dumps(record, indent=1) + "\n")


if __name__ == "__main__":
    main()
