"""The command line on files as users have them: several files, genomes, VW weights, index bases.

Each case reproduces a way the command line once returned a model that looked
trained and was not (see the command-line issue), and checks the fix against
the Python API's answer.
"""
import gzip
import importlib
import json
import os
import re
import subprocess
import sys
import zipfile
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from sklearn.datasets import dump_svmlight_file, load_svmlight_file

from sklearn_sketch import FeatureHashingClassifier, MissionClassifier, load
from sklearn_sketch.cli import main
from sklearn_sketch.cli._commands import ESTIMATORS
from sklearn_sketch.io import VowpalWabbitReader

GENOMES = Path(__file__).resolve().parents[1] / ".." / "shared" / "data" / "genomes"
# One strain per species to train on, another to test on.
STRAINS = {
    "E.Coli": ("MG1655-K12", "DH1"),
    "S.Aureus": ("COL", "JKD6008"),
    "H.Pylori": ("G27", "ELS37"),
    "V.Cholerae": ("O395", "O1_biovar"),
}


def metrics_of(capsys, argv):
    assert main(argv + ["--format", "json"]) == 0, capsys.readouterr().err
    return json.loads(capsys.readouterr().out.strip().splitlines()[-1])


def write_genome(path, rng, n_records=2, length=15_000):
    """A random genome of several records (chromosome, plasmid), 60 bases a line."""
    with gzip.open(path, "wt") as f:
        for r in range(n_records):
            sequence = "".join(rng.choice(list("ACGT"), length))
            lines = "\n".join(sequence[i:i + 60] for i in range(0, length, 60))
            f.write(f">record{r} synthetic species\n{lines}\n")
    return path


def labelled_genomes(folder, seed, names, **shape):
    """``PATH:LABEL`` of a random genome per name (``shape``: of :func:`write_genome`)."""
    rng = np.random.default_rng(seed)
    return [f"{write_genome(folder / f'{name}.fa.gz', rng, **shape)}:{name}" for name in names]


@pytest.fixture
def two_genomes(tmp_path):
    return labelled_genomes(tmp_path, 0, ("alpha", "beta"))


@pytest.mark.parametrize("order", [1, -1], ids=["alpha-first", "beta-first"])
def test_reads_from_several_genomes_are_mixed_whatever_the_order(two_genomes, tmp_path,
                                                                 capsys, order):
    model = str(tmp_path / "model.skm")
    inputs = [arg for spec in two_genomes[::order] for arg in ("--fasta", spec)]
    assert main(["fit", "--estimator", "hashing", "--k", "8", "--read-length", "100",
                 "--n-reads", "2000", *inputs, "--output", model]) == 0
    assert "4,000 examples" in capsys.readouterr().out
    # Held-out reads of the same genomes (another seed): both classes are predicted.
    metrics = metrics_of(capsys, ["evaluate", "--model", model, "--read-length", "100",
                                  "--n-reads", "500", "--random-state", "7", *inputs])
    assert metrics["examples"] == 1000
    assert metrics["accuracy"] >= 0.95


def test_labels_from_record_headers(tmp_path, capsys):
    rng = np.random.default_rng(1)
    path = tmp_path / "both.fa"
    with open(path, "w") as f:
        for species in ("alpha", "beta"):
            for r in range(2):
                f.write(f">{species}_{r} chromosome\n{''.join(rng.choice(list('ACGT'), 8000))}\n")
    model = str(tmp_path / "model.skm")
    assert main(["fit", "--estimator", "hashing", "--k", "8", "--fasta", str(path),
                 "--label-pattern", "^([a-z]+)_", "--read-length", "100", "--coverage", "10",
                 "--output", model]) == 0
    metrics = metrics_of(capsys, ["evaluate", "--model", model, "--fasta", str(path),
                                  "--label-pattern", "^([a-z]+)_", "--read-length", "100",
                                  "--coverage", "2", "--random-state", "3"])
    assert metrics["examples"] == 4 * round(2 * 8000 / 100)
    assert metrics["accuracy"] >= 0.95


def test_reads_without_a_kmer_are_counted_and_warned_about(tmp_path, capsys):
    # Reads shorter than k, or broken by N, have no k-mer: nothing but the intercept
    # can learn from them or score them.
    rng = np.random.default_rng(2)
    paths, clean = [], []
    for name in ("alpha", "beta"):
        genome = "".join(rng.choice(list("ACGT"), 5000))
        reads = [genome[i:i + 60] for i in range(0, 4800, 40)]  # 120 reads
        for kept, extra in ((paths, ["ACGTAC", "ACGTNACGTNACGTNACGTN", "NNNNNNNNNNNNNNNN"]),
                            (clean, [])):
            path = tmp_path / f"{name}{len(extra)}.fa"
            path.write_text("".join(f">r{i}\n{read}\n" for i, read in enumerate(reads + extra)))
            kept.append(f"{path}:{name}")
    inputs = [arg for spec in paths for arg in ("--fasta", spec)]
    model = str(tmp_path / "model.skm")
    assert main(["fit", "--estimator", "hashing", "--k", "8", *inputs, "--quiet",
                 "--output", model]) == 0
    err = capsys.readouterr().err
    assert ("6 of 246 examples have no feature (reads shorter than k=8 bases, or without "
            "8 A, C, G or T in a row): only the model's intercept learned from them") in err
    assert main(["evaluate", "--model", model, *inputs]) == 0
    assert "6 of 246 examples have no feature" in capsys.readouterr().err
    assert main(["predict", "--model", model, *inputs]) == 0
    captured = capsys.readouterr()
    assert len(captured.out.splitlines()) == 246
    assert ("6 of 246 examples have no feature (reads shorter than k=8 bases, or without "
            "8 A, C, G or T in a row): the model predicted them by its intercept alone"
            in captured.err)
    # Reads that all hold a k-mer: no such warning.
    assert main(["evaluate", "--model", model,
                 *[arg for spec in clean for arg in ("--fasta", spec)]]) == 0
    assert "no feature" not in capsys.readouterr().err


def test_protein_sequences_are_refused_by_name(tmp_path, capsys):
    # Amino-acid records have no k-mer of bases: a model of them learned its intercept
    # alone, and the warning blamed short reads.
    rng = np.random.default_rng(3)
    paths = []
    for name in ("alpha", "beta"):
        path = tmp_path / f"{name}.faa"
        path.write_text("".join(f">p{i}\n{''.join(rng.choice(list('ACDEFGHIKLMNPQRSTVWY'), 300))}\n"
                                for i in range(30)))
        paths.append(f"{path}:{name}")
    model = str(tmp_path / "model.skm")
    assert main(["fit", "--fasta", *paths, "--quiet", "--output", model]) == 2
    err = capsys.readouterr().err
    assert "protein sequences, not DNA or RNA" in err and "alpha.faa" in err
    assert not os.path.exists(model)
    # Mixed with DNA reads, the protein reads are found among those without a k-mer.
    dna = [str(write_genome(tmp_path / f"dna{i}.fa.gz", rng)) for i in range(2)]
    assert main(["fit", "--fasta", f"{dna[0]}:x", paths[1], "--read-length", "100",
                 "--n-reads", "900", "--quiet", "--output", model]) == 2
    assert "amino acids" in capsys.readouterr().err
    assert main(["fit", "--fasta", f"{dna[0]}:x", f"{dna[1]}:y", "--read-length", "100",
                 "--quiet", "--output", model]) == 0
    assert main(["predict", "--model", model, "--fasta", paths[0].split(":")[0]]) == 2
    assert re.search(r"letters in \S*alpha\.faa \(records from line 1 on\) are amino acids",
                     capsys.readouterr().err)
    # compare --fasta said "stream A holds no item" of them.
    assert main(["compare", "--fasta", "--a", paths[0].split(":")[0], "--b", dna[0],
                 "--quiet"]) == 2
    assert re.search(r"letters in \S*alpha\.faa \(records from line 1 on\) are amino acids",
                     capsys.readouterr().err)
    assert main(["compare", "--fasta", "--a", dna[1], "--b", dna[0], "--quiet"]) == 0


def test_a_label_typo_at_evaluate_is_an_error(two_genomes, tmp_path, capsys):
    model = str(tmp_path / "model.skm")
    assert main(["fit", "--estimator", "hashing", "--k", "6", "--read-length", "50",
                 "--n-reads", "200", "--fasta", two_genomes[0], "--fasta", two_genomes[1],
                 "--quiet", "--output", model]) == 0
    typo = two_genomes[0].replace(":alpha", ":alpah")
    assert main(["evaluate", "--model", model, "--read-length", "50", "--fasta", typo]) == 2
    err = capsys.readouterr().err
    assert "'alpah'" in err and "alpha, beta" in err and len(err.strip().splitlines()) == 1


def importance_files(tmp_path):
    """VW training rows where the weights decide: zero-weight rows say the opposite."""
    rng = np.random.default_rng(2)
    lines = []
    for _ in range(500):
        word, label = ("a", 1) if rng.random() < 0.5 else ("b", -1)
        lines.append(f"{label} 1 |f {word} noise{rng.integers(50)}")
        lines += [f"{-label} 0 |f {word} noise{rng.integers(50)}"] * 3
    train = tmp_path / "imp.vw"
    train.write_text("\n".join(lines) + "\n")
    test = tmp_path / "imp_test.vw"
    test.write_text("1 |f a\n-1 |f b\n" * 50)
    return train, test


def test_vw_importance_weights_reach_training(tmp_path, capsys):
    train, test = importance_files(tmp_path)
    model = str(tmp_path / "v.skm")
    assert main(["fit", "--vw", str(train), "--param", "random_state=0", "--chunk-rows", "7",
                 "--output", model]) == 0
    capsys.readouterr()
    assert metrics_of(capsys, ["evaluate", "--model", model, "--vw", str(test)])[
        "accuracy"] == 1.0


def test_a_chunk_of_zero_importance_is_skipped(tmp_path, capsys):
    path = tmp_path / "z.vw"
    path.write_text("1 1 |f a\n-1 1 |f b\n" * 5 + "1 0 |f a\n" * 10 + "-1 1 |f b\n")
    model = str(tmp_path / "z.skm")
    assert main(["fit", "--vw", str(path), "--chunk-rows", "10", "--quiet",
                 "--output", model]) == 0
    only_zero = tmp_path / "zero.vw"
    only_zero.write_text("1 0 |f a\n-1 0 |f b\n")
    assert main(["fit", "--vw", str(only_zero), "--output", str(tmp_path / "none.skm")]) == 2
    assert "no example with a non-zero weight" in capsys.readouterr().err
    assert not (tmp_path / "none.skm").exists()


def test_evaluate_scores_only_the_vw_examples_that_have_a_label(tmp_path, capsys):
    # A Vowpal Wabbit line without a label is an example to predict: evaluate leaves it
    # out of the scores and says how many it left out (it once counted as an error, as
    # a label 'nan' of which "0 of N examples" were unknown, and cost the ROC AUC).
    train = tmp_path / "t.vw"
    train.write_text("1 |f a\n-1 |f b\n" * 50)
    model = str(tmp_path / "t.skm")
    assert main(["fit", "--vw", str(train), "--quiet", "--param", "random_state=0",
                 "--output", model]) == 0
    test = tmp_path / "u.vw"
    test.write_text("1 |f a\n|f a\n-1 |f b\n'tag|f b\n" * 5)
    capsys.readouterr()
    assert main(["evaluate", "--model", model, "--vw", str(test), "--format", "json"]) == 0
    out, err = capsys.readouterr()
    metrics = json.loads(out)
    assert metrics["examples"] == 10 and metrics["accuracy"] == 1.0
    assert metrics["roc_auc"] == 1.0
    assert "10 of 20 examples have no label: they are not scored" in err
    unlabeled = tmp_path / "none.vw"
    unlabeled.write_text("|f a\n|f b\n")
    assert main(["evaluate", "--model", model, "--vw", str(unlabeled)]) == 2
    assert "no labeled example to score" in capsys.readouterr().err


def test_a_length_beside_counted_words_of_vw_text_is_scaled(tmp_path, capsys):
    # Posts as Vowpal Wabbit text, words repeated (counts) and a length past a hundred:
    # read as given, the length made every row's norm and the step of its words
    # hundreds of times too small (20 Newsgroups atheism against christian: 0.54-0.56
    # for MISSION, WM, AWM and hashing, 0.92 without the length, Vowpal Wabbit 0.95).
    rng = np.random.default_rng(4)
    words = [f"w{i}" for i in range(5000)]
    # Word frequencies as in text (Zipf): thousands of words repeat within a post.
    frequency = 1.0 / np.arange(1, len(words) - 19)

    def write(path, n, with_length):
        with open(path, "w") as f:
            for _ in range(n):
                label = rng.integers(2)
                body = list(rng.choice(words[20:], rng.integers(100, 300),
                                       p=frequency / frequency.sum()))
                body += list(rng.choice(words[10 * label:10 * label + 10], 6))
                length = f" |n len:{10 * len(body)}" if with_length else ""
                f.write(f"{2 * label - 1} |w {' '.join(body)}{length}\n")

    scores = {}
    for with_length in (True, False):
        train, test = tmp_path / f"train{with_length}.vw", tmp_path / f"test{with_length}.vw"
        write(train, 2000, with_length)
        write(test, 500, with_length)
        model = str(tmp_path / f"m{with_length}.skm")
        assert main(["fit", "--vw", str(train), "--quiet", "--output", model]) == 0
        scores[with_length] = metrics_of(capsys, ["evaluate", "--model", model, "--vw",
                                                  str(test)])["accuracy"]
    assert scores[True] >= scores[False] - 0.03 and scores[False] > 0.9, scores


def test_select_prints_the_words_of_a_vw_model(tmp_path, capsys):
    rng = np.random.default_rng(3)
    lines = []
    for _ in range(3000):
        label = int(rng.integers(2))
        words = [f"w{i}" for i in rng.choice(300, 6, replace=False)]
        words.append("good" if label else "bad")
        lines.append(f"{2 * label - 1} |text {' '.join(words)} |meta len:{len(words)}")
    path = tmp_path / "words.vw"
    path.write_text("\n".join(lines) + "\n")
    model = str(tmp_path / "words.skm")
    assert main(["fit", "--vw", str(path), "--param", "n_features_to_select=50",
                 "--param", "random_state=0", "--chunk-rows", "500", "--quiet",
                 "--output", model]) == 0
    assert main(["select", "--model", model, "--top", "2", "--format", "json"]) == 0
    top = json.loads(capsys.readouterr().out)
    assert {f["name"] for f in top} == {"text^good", "text^bad"}
    signs = {f["name"]: f["weights"]["1"] for f in top}
    assert signs["text^good"] > 0 > signs["text^bad"]
    # Latin-1 words are named as written (they read "caf\ufffd"), keyed by their bytes.
    path.write_bytes("\n".join(lines).replace("good", "café").replace("bad", "thé")
                     .encode("latin-1") + b"\n")
    assert main(["fit", "--vw", str(path), "--param", "n_features_to_select=50",
                 "--param", "random_state=0", "--chunk-rows", "500", "--quiet",
                 "--output", model]) == 0
    assert main(["select", "--model", model, "--top", "2", "--format", "json"]) == 0
    assert {f["name"] for f in json.loads(capsys.readouterr().out)} == {"text^café",
                                                                       "text^thé"}



def test_several_vw_files_train_one_named_model(tmp_path, capsys):
    # Mixed through the shuffle buffer, whose merged names once lacked the mean
    # length that a new model's budget reserves for names (an AttributeError).
    paths = []
    for i, word in enumerate(["good", "fine"]):
        path = tmp_path / f"part{i}.vw"
        path.write_text("".join(f"1 |text {word} w{j % 7}\n-1 |text bad w{j % 5}\n"
                                for j in range(200)))
        paths.append(str(path))
    model = str(tmp_path / "parts.skm")
    assert main(["fit", "--vw", *paths, "--quiet", "--output", model]) == 0
    assert main(["select", "--model", model, "--top", "3", "--format", "json"]) == 0
    top = {f["name"]: f["weights"]["1"] for f in json.loads(capsys.readouterr().out)}
    assert set(top) == {"text^good", "text^fine", "text^bad"}
    assert top["text^good"] > 0 and top["text^fine"] > 0 > top["text^bad"]


@pytest.mark.parametrize("kind", ["--vw", "--svmlight"])
def test_reading_the_training_files_imports_no_scikit_learn(kind, tmp_path):
    # The command line reads in a thread while its main thread imports scikit-learn:
    # an import of it from the reading thread raced that one and failed as a
    # circular import (one run in two with two VW files).
    line = "1 |f a b\n-1 |f c\n" if kind == "--vw" else "1 1:1 2:1\n-1 3:1\n"
    paths = []
    for i in range(2):
        paths.append(tmp_path / f"part{i}")
        paths[-1].write_text(line * 20)
    script = f"""
import sys
from sklearn_sketch.cli._inputs import InputStream, decide_svmlight_layout
from sklearn_sketch.cli._main import build_parser
args = build_parser().parse_args(["fit", "{kind}", *{[str(p) for p in paths]!r},
                                  "--output", "unused.skm"])
stream = InputStream(args, None, "train", zero_based=decide_svmlight_layout(args)[0],
                     shuffle_buffer=100, keep_names={kind == "--vw"}, csv=None,
                     interactions=[])
stream.classes()
rows = sum(chunk.X.shape[0] for chunk in stream)
assert rows == 80, rows
assert "sklearn" not in sys.modules, sorted(m for m in sys.modules if "sklearn." in m)
"""
    # A fresh interpreter on the package under test (installed or in place).
    import sklearn_sketch
    parent = str(Path(sklearn_sketch.__file__).resolve().parent.parent)
    env = dict(os.environ, PYTHONPATH=parent + os.pathsep + os.environ.get("PYTHONPATH", ""))
    subprocess.run([sys.executable, "-c", script], check=True, env=env, cwd=tmp_path)


@pytest.mark.parametrize("n_files, buffer, per_file", [(8, 80, 5), (8, 0, 20), (1, 80, 20),
                                                       (2, 400, 20)])
def test_many_files_are_read_in_smaller_chunks_to_stay_within_the_buffer(
        n_files, buffer, per_file, tmp_path):
    # The buffer takes one chunk of every file a round: with many files those rounds
    # alone outgrew it (memory grew with the number of files).
    from sklearn_sketch.cli._inputs import InputStream, decide_svmlight_layout
    from sklearn_sketch.cli._main import build_parser

    paths = []
    for i in range(n_files):
        paths.append(str(tmp_path / f"part{i}.vw"))
        Path(paths[-1]).write_text(f"1 |f a{i}\n-1 |f b{i}\n" * 30)
    args = build_parser().parse_args(["fit", "--vw", *paths, "--chunk-rows", "20",
                                      "--output", "unused.skm"])
    stream = InputStream(args, None, "train", zero_based=decide_svmlight_layout(args)[0],
                         shuffle_buffer=buffer)
    assert [reader.chunk_rows for reader in stream._file_readers()] == [per_file] * n_files
    chunks = list(stream)
    assert sum(chunk.X.shape[0] for chunk in chunks) == 60 * n_files
    assert max(chunk.X.shape[0] for chunk in chunks) == 20  # the mixed chunks keep their size


def test_vw_namespace_interactions_learn_a_cross_and_name_it(tmp_path, capsys):
    # The label is the XOR of a user's and an ad's feature: no weight of either alone
    # predicts it, the crosses do.
    rng = np.random.default_rng(5)

    def write(name, n):
        lines = []
        for _ in range(n):
            user, ad = rng.integers(2, size=2)
            lines.append(f"{1 if user ^ ad else -1} |user u{user} |ad a{ad} |other o{rng.integers(9)}")
        (tmp_path / name).write_text("\n".join(lines) + "\n")
        return str(tmp_path / name)

    train, test = write("train.vw", 4000), write("test.vw", 1000)
    accuracy = {}
    for option in ([], ["--interactions", "ua"]):
        model = str(tmp_path / f"m{len(option)}.skm")
        assert main(["fit", "--vw", train, "--estimator", "awm", *option, "--quiet",
                     "--output", model]) == 0
        accuracy[bool(option)] = metrics_of(capsys, ["evaluate", "--model", model,
                                                     "--vw", test])["accuracy"]
    assert accuracy[False] < 0.8 and accuracy[True] > 0.95  # 3 of 4 cells at best alone
    assert main(["select", "--model", model, "--top", "4", "--format", "json"]) == 0
    names = {f["name"] for f in json.loads(capsys.readouterr().out)}
    assert names == {"user^u0*ad^a0", "user^u0*ad^a1", "user^u1*ad^a0", "user^u1*ad^a1"}
    # The model file keeps the crosses for predict and evaluate, checked when read.
    from sklearn_sketch import save
    from sklearn_sketch._model_files import read_model
    estimator, metadata = read_model(model)
    assert metadata["input"] == {"format": "vw", "zero_based": None, "interactions": ["ua"]}
    metadata["input"]["interactions"] = ["uabc"]
    save(estimator, model, metadata=metadata)
    assert main(["select", "--model", model]) == 2
    assert "bad interactions metadata" in capsys.readouterr().err
    for argv, message in (
            (["--interactions", "u"], "2 or 3 namespace letters"),
            (["--interactions", "ua", "--svmlight", train], "--interactions applies to --vw")):
        if "--svmlight" in argv:
            full = ["fit", *argv, "--output", str(tmp_path / "x.skm")]
        else:
            full = ["fit", "--vw", train, *argv, "--output", str(tmp_path / "x.skm")]
        assert main(full) == 2
        assert message in capsys.readouterr().err


@pytest.mark.parametrize("name", sorted(ESTIMATORS))
def test_fit_keeps_vw_names_exactly_for_estimators_with_a_heap(name, tmp_path, monkeypatch):
    # The table says so before importing the estimator; the class agrees.
    module, cls, keeps_names = ESTIMATORS[name]
    estimator = getattr(importlib.import_module(f"sklearn_sketch.{module}"), cls)()
    assert keeps_names == estimator._store.uses_heap
    seen = []
    original = VowpalWabbitReader.__init__

    def spy(self, *args, **kwargs):
        original(self, *args, **kwargs)
        seen.append(self.keep_names)

    monkeypatch.setattr(VowpalWabbitReader, "__init__", spy)
    path = tmp_path / "few.vw"
    path.write_text("".join(f"{1 if i % 2 else -1} |t w{i % 7} x\n" for i in range(60)))
    assert main(["fit", "--vw", str(path), "--estimator", name, "--quiet", "--chunk-rows",
                 "20", "--output", str(tmp_path / "m.skm")]) == 0
    assert seen and set(seen) == {keeps_names}

def zero_based_files(tmp_path):
    """Zero-based files; column 0 is a bias present in training only."""
    rng = np.random.default_rng(4)

    def rows(n, with_bias):
        X = rng.uniform(-1, 1, size=(n, 10))
        y = np.where(X[:, 1] - X[:, 2] > 0, 1, -1)
        lines = []
        for label, row in zip(y, X):
            start = 0 if with_bias else 1
            lines.append(f"{label} " + " ".join(f"{j}:{row[j] if j else 1:.3f}"
                                                 for j in range(start, 10)))
        return "\n".join(lines) + "\n"

    train, test = tmp_path / "zb_train.svm", tmp_path / "zb_test.svm"
    train.write_text(rows(3000, True))
    test.write_text(rows(1000, False))
    return train, test


def test_svmlight_index_base_is_the_models(tmp_path, capsys):
    train, test = zero_based_files(tmp_path)
    model = str(tmp_path / "zb.skm")
    params = ["--param", "n_features_to_select=3", "--param", "sketch_width=256",
              "--param", "random_state=0"]
    assert main(["fit", "--svmlight", str(train), *params, "--epochs", "1", "--quiet",
                 "--output", model]) == 0
    cli = metrics_of(capsys, ["evaluate", "--model", model, "--svmlight", str(test)])
    X, y = load_svmlight_file(str(train), zero_based=True)
    api = MissionClassifier(3, sketch_width=256, random_state=0, max_iter=1, shuffle=False)
    api.fit(X, y)
    X_test, y_test = load_svmlight_file(str(test), zero_based=True, n_features=X.shape[1])
    assert cli["accuracy"] == pytest.approx(api.score(X_test, y_test), abs=0.01)
    assert cli["accuracy"] > 0.9
    # Read one-based on purpose, every column shifts and the answer is poor.
    shifted = metrics_of(capsys, ["evaluate", "--model", model, "--svmlight", str(test),
                                  "--zero-based", "1"])
    assert shifted["accuracy"] < 0.75


@pytest.mark.parametrize("option", ["auto", "0", "1"])
def test_svmlight_layout_is_read_once_per_file_and_agrees_with_the_files(tmp_path, option):
    from sklearn_sketch.cli._inputs import decide_svmlight_layout
    from sklearn_sketch.cli._main import build_parser

    # a: one-based-looking for more than a block, then an index 0 (zero-based after
    # all); b: an index 0 in its first row; c: the largest index 1000 (column 999
    # zero-based, 1000 one-based... past a table's width only when zero-based).
    padding = " ".join(f"{j}:1" for j in range(1, 60))
    a = tmp_path / "a.svm"
    a.write_text(f"1 {padding}\n" * 5000 + "-1 0:1 5:1\n")
    assert a.stat().st_size > 2**20
    b = tmp_path / "b.svm"
    b.write_text("1 0:1 3:1\n-1 2:1\n")
    c = tmp_path / "c.svm"
    c.write_text("1 1:1 1000:2\n-1 2:1\n")

    def layout(*paths):
        args = build_parser().parse_args(["fit", "--svmlight", *map(str, paths),
                                          "--zero-based", option, "--output", "unused.skm"])
        return decide_svmlight_layout(args)

    if option == "1":
        with pytest.raises(ValueError, match="0"):
            layout(a, b)
        assert layout(c) == (False, 1000)  # columns 0..999
        return
    # b decides zero-based, and a is read so.
    assert layout(a, b) == (True, 1000)
    assert layout(b, c) == (True, None)  # column 1000: past a table's width
    if option == "auto":
        assert layout(c) == (False, 1000)
        # An index 0 in a file's first rows: zero-based (past the reader's first
        # block, AUTO_BASE_BYTES, its own auto would stop at that line).
        assert layout(a) == (True, 1000)


def test_a_model_of_stream_chunks_takes_load_svmlight_file_output(tmp_path):
    from sklearn_sketch.cli._model_file import load_model
    train, test = zero_based_files(tmp_path)
    # A wide file (an index of 1,000 or more in its first rows): its columns are keys,
    # and the model takes load_svmlight_file's matrix of any width.
    wide = tmp_path / "wide.svm"
    lines = train.read_text().splitlines()
    wide.write_text("\n".join([lines[0] + " 5000:1"] + lines[1:]) + "\n")
    model = str(tmp_path / "zb.skm")
    assert main(["fit", "--svmlight", str(wide), "--quiet", "--output", model]) == 0
    estimator = load_model(model)["estimator"]
    assert estimator.n_features_in_ == 2**63 - 1
    X_test, y_test = load_svmlight_file(str(test), zero_based=True)
    assert X_test.shape[1] == 10
    assert estimator.score(X_test, y_test) > 0.9
    # A table (every index below 1,000): 1,000 columns, standardized or scaled as the
    # estimators treat a sparse table; load_svmlight_file reads a file to that width.
    assert main(["fit", "--svmlight", str(train), "--quiet", "--output", model]) == 0
    estimator = load_model(model)["estimator"]
    assert estimator.n_features_in_ == 1000 and hasattr(estimator, "feature_scale_")
    X_test, y_test = load_svmlight_file(str(test), zero_based=True, n_features=1000)
    assert estimator.score(X_test, y_test) > 0.9


def test_a_table_of_raw_columns_trains_from_the_command_line(tmp_path, capsys, monkeypatch):
    # Column 3 (noise) in the tens of thousands: read as given, a row's norm is its own
    # and the deciding columns barely train; as a table, each column is scaled, and in
    # a wide file (an index past 1,000) each measured feature.
    from sklearn_sketch import _columns

    rng = np.random.default_rng(5)
    paths = []
    for name, n in (("raw_train.svm", 3000), ("raw_test.svm", 1000)):
        X = rng.uniform(-1, 1, size=(n, 8)) * (rng.random((n, 8)) < 0.4)
        y = np.where(X[:, 1] - X[:, 2] > 0, 1, -1)
        X[:, 3] = rng.uniform(-3e4, 3e4, size=n)
        path = tmp_path / name
        dump_svmlight_file(X, y, str(path), zero_based=True)
        paths.append(str(path))
    model = str(tmp_path / "raw.skm")
    assert main(["fit", "--svmlight", paths[0], "--quiet", "--output", model]) == 0
    table = metrics_of(capsys, ["evaluate", "--model", model, "--svmlight", paths[1]])
    wide = tmp_path / "raw_wide.svm"
    wide.write_text("1 9999:0\n" + Path(paths[0]).read_text())
    accuracy = {}
    for name in ("keys", "given"):
        if name == "given":  # as every file was read before
            monkeypatch.setattr(_columns, "MAX_SCALED_KEYS", 0)
        assert main(["fit", "--svmlight", str(wide), "--quiet", "--output", model]) == 0
        capsys.readouterr()
        accuracy[name] = metrics_of(capsys, ["evaluate", "--model", model, "--svmlight",
                                             paths[1]])["accuracy"]
    # measured: 0.95 and 0.95 against 0.68 (the majority class)
    assert min(table["accuracy"], accuracy["keys"]) > 0.85
    assert table["accuracy"] > accuracy["given"] + 0.1, (table, accuracy)


def test_version_and_help_show_defaults(capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(["--version"])
    assert exit_info.value.code == 0
    assert re.fullmatch(r"sklearn-sketch \S+\n", capsys.readouterr().out)
    with pytest.raises(SystemExit):
        main(["fit", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "(default: 10000)" in text and "--shuffle-buffer" in text and "--read-length" in text


# ------------------------------------------------------------ real genomes
def genome(species, strain):
    return f"{GENOMES / species / strain}.fasta.gz:{species}"


needs_genomes = pytest.mark.skipif(not GENOMES.is_dir(), reason="shared/data/genomes absent")


@needs_genomes
@pytest.mark.parametrize("order", [1, -1], ids=["ecoli-first", "saureus-first"])
def test_two_species_from_genome_files(tmp_path, capsys, order):
    species = ["E.Coli", "S.Aureus"][::order]
    train = [a for s in species for a in ("--fasta", genome(s, STRAINS[s][0]))]
    test = [a for s in species for a in ("--fasta", genome(s, STRAINS[s][1]))]
    reads = ["--read-length", "200", "--n-reads", "20000"]
    for estimator, params, bar in (("hashing", [], 0.95),
                                   ("mission", ["--param", "predict_with=sketch"], 0.90)):
        model = str(tmp_path / f"{estimator}.skm")
        assert main(["fit", "--estimator", estimator, *params, *reads, *train, "--quiet",
                     "--output", model]) == 0
        metrics = metrics_of(capsys, ["evaluate", "--model", model, *reads, *test])
        assert metrics["examples"] == 40_000
        assert metrics["accuracy"] >= bar, (estimator, metrics)


@needs_genomes
def test_four_species_from_genome_files(tmp_path, capsys):
    train = [a for s, (strain, _) in STRAINS.items() for a in ("--fasta", genome(s, strain))]
    test = [a for s, (_, strain) in STRAINS.items() for a in ("--fasta", genome(s, strain))]
    reads = ["--read-length", "200", "--n-reads", "20000"]
    model = str(tmp_path / "hashing.skm")
    assert main(["fit", "--estimator", "hashing", *reads, *train, "--quiet",
                 "--output", model]) == 0
    metrics = metrics_of(capsys, ["evaluate", "--model", model, *reads, *test])
    assert metrics["examples"] == 80_000
    assert metrics["accuracy"] >= 0.90, metrics


def test_a_file_that_looked_like_a_table_is_trained_again_on_keys(tmp_path, capsys):
    # Its first 10,000 rows hold indices below 1,000 only; a later row does not: the
    # file's columns are keys after all, and fit starts again on the key space.
    from sklearn_sketch.cli._model_file import load_model

    rng = np.random.default_rng(6)
    X = rng.uniform(-1, 1, size=(10_500, 6)) * (rng.random((10_500, 6)) < 0.5)
    y = np.where(X[:, 1] - X[:, 2] > 0, 1, -1)
    path = tmp_path / "late_key.svm"
    dump_svmlight_file(X, y, str(path), zero_based=True)
    lines = path.read_text().splitlines()
    lines[10_200] += " 5000:1"
    path.write_text("\n".join(lines) + "\n")
    model = str(tmp_path / "m.skm")
    assert main(["fit", "--svmlight", str(path), "--output", model]) == 0
    err = capsys.readouterr().err
    assert "line 10201: feature index in '5000:1' is not below n_features=1000" in err
    assert "training again on the whole key space" in err
    estimator = load_model(model)["estimator"]
    assert estimator.n_features_in_ == 2**63 - 1 and not hasattr(estimator, "feature_scale_")
    X_read, y_read = load_svmlight_file(str(path), zero_based=True)
    assert estimator.score(X_read, y_read) > 0.9


def _sorted_task(tmp_path, n_train=3000, n_test=1000, n_classes=4):
    """A svmlight training file sorted by label (as ``dump_svmlight_file`` writes the
    rows of ``load_files``), a shuffled copy of it, and a test file."""
    rng = np.random.default_rng(8)
    paths = {}
    for name, n in (("train", n_train), ("test", n_test)):
        y = rng.integers(n_classes, size=n)
        # Words: 12 a row from a vocabulary of 400, each class favouring its own 20.
        own = rng.random((n, 12)) < 0.3
        words = np.where(own, y[:, None] * 20 + rng.integers(20, size=(n, 12)),
                         rng.integers(400, size=(n, 12)))
        X = np.zeros((n, 400))
        np.put_along_axis(X, words, 1.0, axis=1)
        if name == "train":
            order = np.argsort(y, kind="stable")
            dump_svmlight_file(X[order], y[order], str(tmp_path / "sorted.svm"))
            paths["sorted"] = str(tmp_path / "sorted.svm")
        dump_svmlight_file(X, y, str(tmp_path / f"{name}.svm"))
        paths[name] = str(tmp_path / f"{name}.svm")
    return paths


def test_a_file_sorted_by_label_is_shuffled_and_says_so(tmp_path, capsys):
    paths = _sorted_task(tmp_path)
    model = str(tmp_path / "m.skm")
    results = {}
    for name, train, options in (("default", paths["sorted"], []),
                                 ("whole buffer", paths["sorted"], ["--shuffle-buffer", "3000"]),
                                 ("file order", paths["sorted"], ["--shuffle-buffer", "0"]),
                                 ("unsorted", paths["train"], [])):
        # Chunks of 250 rows: partial_fit shuffles the rows of a chunk, not the file.
        # One pass (this small input would take five): the order shows most in one.
        assert main(["fit", "--svmlight", train, "--estimator", "hashing", "--output", model,
                     "--chunk-rows", "250", "--epochs", "1", *options]) == 0
        err = capsys.readouterr().err
        results[name] = (metrics_of(capsys, ["evaluate", "--model", model, "--svmlight",
                                             paths["test"]])["accuracy"],
                         "come in runs (3 changes of label in 3,000 rows" in err,
                         "fit shuffles all 3,000 rows in memory" in err)
    # The default is a whole shuffle, said once; the other orders are used as they are.
    assert results["default"] == (results["whole buffer"][0], True, True)
    assert results["file order"][1:] == results["whole buffer"][1:] == (False, False)
    assert results["unsorted"][1:] == (False, False)
    # measured: 0.954 shuffled, 0.955 unsorted, 0.293 in file order (the last class)
    assert results["default"][0] > results["file order"][0] + 0.3, results
    assert results["default"][0] > 0.9, results
    assert abs(results["unsorted"][0] - results["default"][0]) < 0.02, results


def test_quiet_keeps_the_notes_back_in_every_command_but_not_the_warnings(tmp_path, capsys):
    paths = _sorted_task(tmp_path)
    model = str(tmp_path / "m.skm")
    # A class the model never saw: evaluate's warning, and a note-free predict.
    unknown = tmp_path / "unknown.svm"
    X, y = load_svmlight_file(paths["test"], n_features=400)
    dump_svmlight_file(X[:50], np.full(50, 9), str(unknown))
    fit = ["fit", paths["sorted"], "--estimator", "hashing", "-o", model, "--epochs", "1"]
    told = {}
    for quiet in ([], ["--quiet"], ["-q"]):
        assert main(fit + quiet) == 0
        fit_err = capsys.readouterr().err
        assert main(["evaluate", "-m", model, str(unknown), *quiet]) == 0
        evaluate_err = capsys.readouterr().err
        assert main(["predict", "-m", model, paths["test"], "-o", str(tmp_path / "p.txt"),
                     *quiet]) == 0
        predict_err = capsys.readouterr().err
        told[" ".join(quiet)] = (fit_err, evaluate_err, predict_err)
    fit_err, evaluate_err, _ = told[""]
    assert "note: the labels of the training input come in runs" in fit_err
    assert "read as --svmlight reads it" in fit_err and "epoch 1/1" in fit_err
    for quiet in ("--quiet", "-q"):
        fit_err, quiet_evaluate_err, predict_err = told[quiet]
        assert fit_err == "" and predict_err == "", quiet
        # The warning stays: 50 labels the model does not know count as errors.
        warning, = quiet_evaluate_err.splitlines()
        assert warning.startswith("sklearn-sketch: warning: 50 of 50 examples have labels "
                                  "the model does not know") and warning in evaluate_err


def test_a_sorted_file_larger_than_the_whole_shuffle_is_mixed_and_warned(tmp_path, capsys,
                                                                         monkeypatch):
    from sklearn_sketch.cli import _inputs

    paths = _sorted_task(tmp_path)
    packed = tmp_path / "sorted.svm.gz"
    packed.write_bytes(gzip.compress(Path(paths["sorted"]).read_bytes()))
    # A compressed file counts COMPRESSED_TEXT_RATIO (4) times its size as text.
    zipped = tmp_path / "sorted.zip"
    with zipfile.ZipFile(zipped, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.write(paths["sorted"], "sorted.svm")
    assert _inputs._text_bytes([paths["sorted"], str(packed), str(zipped)]) == (
        os.path.getsize(paths["sorted"]) + 4 * os.path.getsize(packed)
        + 4 * os.path.getsize(zipped))
    model = str(tmp_path / "m.skm")
    for limit, value, path in (("FULL_SHUFFLE_ROWS", 2999, paths["sorted"]),
                               ("FULL_SHUFFLE_BYTES", 4 * os.path.getsize(packed) - 1, packed)):
        monkeypatch.setattr(_inputs, limit, value)
        assert main(["fit", "--svmlight", str(path), "--output", model]) == 0
        err = capsys.readouterr().err
        assert "come in runs" in err and "mixes them 100,000 rows at a time" in err, limit
        assert "shuf" in err and "shuffles all" not in err
        monkeypatch.undo()
    # Within both limits, the compressed file is shuffled whole.
    assert main(["fit", "--svmlight", str(packed), "--output", model]) == 0
    assert "fit shuffles all 3,000 rows in memory" in capsys.readouterr().err


def test_reads_that_teach_nothing_are_warned_about_with_the_ways_out_for_reads(tmp_path,
                                                                               capsys):
    # One genome under two labels: nothing tells the labels apart.
    genome = write_genome(tmp_path / "same.fa.gz", np.random.default_rng(3))
    copy = tmp_path / "copy.fa.gz"
    copy.write_bytes(genome.read_bytes())
    model = str(tmp_path / "m.skm")
    assert main(["fit", "--fasta", f"{genome}:one", f"{copy}:two", "--read-length", "100",
                 "--n-reads", "3000", "--quiet", "--output", model]) == 0
    err = capsys.readouterr().err
    assert "warning: the model learned next to nothing" in err
    # 600 reads of 100 bases: 8-mers by default, and 6 the shorter k named.
    assert "more reads (--n-reads or --coverage: in one pass over few reads, k-mers of 8" in err
    assert "a shorter --k (--k 6, say)" in err and "numeric features" not in err


def test_fastq_reads_that_teach_nothing_are_told_a_shorter_k_not_to_cut_reads(tmp_path,
                                                                            capsys):
    # A sequencer's reads under two labels that nothing tells apart: FASTQ records are
    # reads already, so cutting reads from them (--read-length) is no way out.
    rng = np.random.default_rng(8)
    genome = rng.choice(list("ACGT"), 60_000)
    for name in ("one", "two"):
        starts = rng.integers(0, 60_000 - 150, 1_500)
        (tmp_path / f"{name}.fq").write_text("".join(
            f"@r{i}\n{''.join(genome[s:s + 150])}\n+\n{'I' * 150}\n"
            for i, s in enumerate(starts)))
    model = str(tmp_path / "m.skm")
    assert main(["fit", f"{tmp_path / 'one.fq'}:one", f"{tmp_path / 'two.fq'}:two",
                 "--quiet", "--output", model]) == 0
    err = capsys.readouterr().err
    assert "warning: the model learned next to nothing" in err
    assert "Try a shorter --k (--k 6, say), more reads (in one pass over few reads" in err
    assert "reads cut from the records" not in err and "--n-reads" not in err


def test_predict_writes_each_fastq_read_beside_its_identifier(tmp_path, capsys):
    rng = np.random.default_rng(9)
    genomes = {name: rng.choice(list("ACGT"), 30_000) for name in ("one", "two")}
    for name, genome in genomes.items():
        starts = rng.integers(0, 30_000 - 150, 400)
        (tmp_path / f"{name}.fq").write_text("".join(
            f"@{name}_{i} run=7 length=150\n{''.join(genome[s:s + 150])}\n+\n{'I' * 150}\n"
            for i, s in enumerate(starts)))
    model = str(tmp_path / "m.skm")
    files = [str(tmp_path / "one.fq"), str(tmp_path / "two.fq")]
    assert main(["fit", f"{files[0]}:one", f"{files[1]}:two", "--k", "8", "--quiet",
                 "--output", model]) == 0
    assert main(["predict", "--model", model, *files]) == 0
    rows = [line.split("\t") for line in capsys.readouterr().out.splitlines()]
    assert [read for read, _ in rows] == [f"{n}_{i}" for n in ("one", "two") for i in range(400)]
    assert sum(read.split("_")[0] == label for read, label in rows) >= 0.95 * len(rows)
    assert main(["predict", "--model", model, "--proba", files[1]]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == "read\tlabel\tone\ttwo" and lines[1].startswith("two_0\t")


def test_the_default_k_follows_the_training_bases(tmp_path, capsys):
    # 8-mers for reads of fewer than 5 Mbp, 12-mers from there; --k as given.
    import argparse

    from sklearn_sketch.cli._commands import SHORT_K_BASES, training_bases
    from sklearn_sketch.cli._model_file import load_model

    specs = labelled_genomes(tmp_path, 7, ("alpha", "beta"), n_records=1, length=20_000)
    model = str(tmp_path / "m.skm")
    reads = ["--read-length", "100", "--n-reads", "300"]
    assert main(["fit", "--fasta", *specs, *reads, "--output", model]) == 0
    assert "note: 8-mers: the training reads hold about 0.1 Mbp" in capsys.readouterr().err
    assert load_model(model)["vectorizer"].k == 8
    assert main(["fit", "--fasta", *specs, *reads, "--k", "12", "--output", model]) == 0
    assert "-mers: the training reads hold" not in capsys.readouterr().err
    assert load_model(model)["vectorizer"].k == 12
    # 2 x 30,000 reads of 100 bases: 6 Mbp, past the 5 of 8-mers.
    assert main(["fit", "--fasta", *specs, "--read-length", "100", "--n-reads", "30000",
                 "--output", model]) == 0
    assert "note: 12-mers: the training reads hold about 6.0 Mbp, more than 5 Mbp" in \
        capsys.readouterr().err
    assert load_model(model)["vectorizer"].k == 12

    def bases(**given):
        options = dict(sample=False, fasta=specs, fastq=None, read_length=None, n_reads=None,
                       coverage=None, random_state=0, label_pattern=None, command="fit")
        return training_bases(argparse.Namespace(**{**options, **given}))
    # --read-length with --n-reads: exact; 100,000 reads of 200 bases of two files: 40 Mbp.
    assert bases(read_length=200, n_reads=100_000) == 40_000_000 > SHORT_K_BASES
    # Whole records, or --coverage: the files' sizes (gzip: 3.4 bases a byte).
    size = sum(os.path.getsize(spec.rsplit(":", 1)[0]) for spec in specs)
    assert bases() == pytest.approx(3.4 * size)
    assert bases(read_length=100, coverage=5) == pytest.approx(5 * 3.4 * size)
    assert 35_000 < bases() < 45_000 * 2  # two genomes of 20,000 bases, about
    assert bases(sample=True, fasta=None, n_reads=10) == 4 * 10 * 200


def test_records_that_teach_nothing_without_read_length_name_read_length_first(tmp_path,
                                                                              capsys):
    # Without --read-length each record is one example: 300 random records of
    # 300 bases under two labels teach nothing, and the way out named first is
    # to cut reads from the records, not "more reads" (an option that needs it).
    files = labelled_genomes(tmp_path, 4, ("one", "two"), n_records=150, length=300)
    model = str(tmp_path / "m.skm")
    assert main(["fit", "--fasta", *files, "--output", model]) == 0
    err = capsys.readouterr().err
    assert "warning: the model learned next to nothing: on the first pass it erred" in err
    # A small input: five passes, the last over records the model has learned by heart.
    assert re.search(r"Its last pass erred on \d+\.\d%, predicting examples it had trained "
                     r"on: a model that learned them by heart", err), err
    assert ("reads cut from the records (--read-length L with --n-reads N or --coverage C: "
            "without --read-length each record is one example, here 300 in all)") in err
    assert "more reads (--n-reads" not in err
    assert "whole genomes?" not in err   # records of 300 bases are no genomes


def predictions(capsys, model, argv):
    """``predict``'s lines for ``argv``."""
    assert main(["predict", "--model", model, *argv]) == 0
    return capsys.readouterr().out.splitlines()


def examples_trained(capsys):
    """How many examples ``fit`` said it trained on."""
    return int(re.search(r"trained on ([\d,]+) examples", "".join(capsys.readouterr()))
               .group(1).replace(",", ""))


def test_fit_cuts_reads_from_whole_genomes_and_scoring_keeps_them_whole(tmp_path, capsys):
    # Each genome whole was one example: 2 here, a model of nothing. fit now cuts
    # reads from records of genomes' length, as --read-length 200 alone does: 4x
    # coverage of the class with the most bases, as many bases of the others.
    files = labelled_genomes(tmp_path, 5, ("one", "two"), n_records=1, length=130_000)
    auto, given = str(tmp_path / "auto.skm"), str(tmp_path / "given.skm")
    assert main(["fit", "--fasta", *files, "--output", auto]) == 0
    err = "".join(capsys.readouterr())
    assert ("one.fa.gz's records are genomes (0.13 Mbp on average): training on reads of "
            "200 bases from both strands, at 4x coverage of the class with the most bases "
            "and as many bases of each other class") in err
    assert re.search(r"trained on 5,20\d examples", err) and "whole genomes?" not in err
    assert main(["fit", "--fasta", *files, "--read-length", "200", "--output", given]) == 0
    assert "note: training on reads at 4x coverage of the class with the most bases" in \
        capsys.readouterr().err
    reads = ["--fasta", *files, "--read-length", "150", "--n-reads", "200"]
    assert predictions(capsys, auto, reads) == predictions(capsys, given, reads)
    # A class of fewer bases is cut deeper, to about as many bases as the largest (its
    # bases told from the files' sizes); --coverage 4 as given cuts every file at 4x.
    (tmp_path / "more").mkdir()
    more = [*files, labelled_genomes(tmp_path / "more", 7, ("one",), n_records=1,
                                     length=130_000)[0]]
    assert main(["fit", "--fasta", *more, "--read-length", "200", "--output", given]) == 0
    assert abs(examples_trained(capsys) - 4 * 2600) <= 20
    assert main(["fit", "--fasta", *more, "--read-length", "200", "--coverage", "4",
                 "--output", given]) == 0
    assert examples_trained(capsys) == 3 * 2600
    # A class of far fewer bases is cut at most 4 times deeper (16x here), not 20 times.
    small = labelled_genomes(tmp_path / "more", 8, ("two",), n_records=1, length=13_000)
    assert main(["fit", "--fasta", more[0], more[2], *small, "--read-length", "200",
                 "--output", given]) == 0
    assert abs(examples_trained(capsys) - (2 * 2600 + 16 * 65)) <= 20
    # Scored or predicted whole, each genome is one example, as asked, and a note
    # says what reads would be for.
    assert main(["evaluate", "--model", auto, "--fasta", *files]) == 0
    assert "each record is one example: 2 here" in capsys.readouterr().err
    assert main(["predict", "--model", auto, "--fasta", *files]) == 0
    assert "(whole genomes?). To predict reads of them" in capsys.readouterr().err
    # Records shorter than genomes (contigs, long reads) stay examples.
    short = labelled_genomes(tmp_path, 6, ("one", "two"), n_records=40, length=20_000)
    assert main(["fit", "--fasta", *short, "--output", auto]) == 0
    err = "".join(capsys.readouterr())
    assert "records are genomes" not in err and "trained on 80 examples" in err


def test_a_folder_of_genomes_is_a_folder_per_class(tmp_path, capsys):
    # genomes/E.Coli/K12.fa.gz, ...: `fit genomes/` read the gzip files as text
    # documents, a "word" a file, and warned that the model learned nothing.
    specs = []
    for i, (label, strain) in enumerate((("alpha", "a1"), ("alpha", "a2"), ("beta", "b1"))):
        (tmp_path / "genomes" / label).mkdir(parents=True, exist_ok=True)
        rng = np.random.default_rng(i)
        path = write_genome(tmp_path / "genomes" / label / f"{strain}.fa.gz", rng)
        specs.append(f"{path}:{label}")
    reads = ["--read-length", "200", "--n-reads", "300"]
    by_folder, by_files = str(tmp_path / "folder.skm"), str(tmp_path / "files.skm")
    assert main(["fit", str(tmp_path / "genomes"), *reads, "--output", by_folder]) == 0
    err = "".join(capsys.readouterr())
    assert "genomes: FASTA in a folder per class, 3 files, read as --fasta reads it" in err
    assert "trained on 900 examples" in err and ", 2 classes," in err
    assert main(["fit", "--fasta", *specs, *reads, "--output", by_files, "--quiet"]) == 0
    test = ["--fasta", specs[0].rsplit(":", 1)[0], *reads]
    assert predictions(capsys, by_folder, test) == predictions(capsys, by_files, test)
    # A label given to a folder labels each of its files; a folder of reads predicts
    # and evaluates as the same files named one by one.
    folder_metrics = metrics_of(capsys, ["evaluate", "--model", by_folder, "--fasta",
                                         f"{tmp_path / 'genomes' / 'alpha'}:alpha", *reads])
    files_metrics = metrics_of(capsys, ["evaluate", "--model", by_folder, *reads,
                                        "--fasta", *specs[:2]])
    assert folder_metrics["examples"] == 600
    assert folder_metrics["accuracy"] == files_metrics["accuracy"]
    # A README and checksums beside the genomes are left out, and named.
    (tmp_path / "genomes" / "README.md").write_text("# Genomes\nTwo species.\n")
    (tmp_path / "genomes" / "alpha" / "0-md5sums.txt").write_text("0123abcd  a1.fa.gz\n")
    assert main(["fit", str(tmp_path / "genomes"), *reads, "--output", by_files]) == 0
    err = "".join(capsys.readouterr())
    assert "left out of the folders, as they hold no reads: " in err and "README.md" in err
    assert "md5sums.txt" in err and "trained on 900 examples" in err
    assert predictions(capsys, by_files, test) == predictions(capsys, by_folder, test)
    (tmp_path / "notes").mkdir()
    (tmp_path / "notes" / "a.txt").write_text("no reads here\n")
    assert main(["fit", "--fasta", str(tmp_path / "notes"), "--output", by_files]) == 2
    assert "notes holds no FASTA or FASTQ file" in capsys.readouterr().err


def test_the_embedded_sample_is_reads_so_its_advice_is_more_reads(tmp_path, capsys,
                                                                  monkeypatch):
    # --sample has no --read-length either, but its records are reads already: a
    # model that learned nothing is told to take more of them, not to cut them.
    import sklearn_sketch._base as base

    monkeypatch.setattr(base, "learned_next_to_nothing", lambda *args: True)
    model = str(tmp_path / "m.skm")
    assert main(["fit", "--sample", "--n-reads", "200", "--k", "8", "--output", model]) == 0
    err = capsys.readouterr().err
    assert "warning: the model learned next to nothing" in err
    assert "more reads (--n-reads or --coverage" in err
    assert "reads cut from the records" not in err and "whole genomes?" not in err


def test_predict_reads_fasta_files_without_labels_and_fit_still_asks_for_them(tmp_path,
                                                                              capsys):
    # Predicting is for reads whose species is unknown: it needs no PATH:LABEL.
    specs = labelled_genomes(tmp_path, 6, ("alpha", "beta"), n_records=1, length=20_000)
    files = {name: path for path, name in (spec.rsplit(":", 1) for spec in specs)}
    reads = ["--read-length", "100", "--n-reads", "300"]
    model = str(tmp_path / "m.skm")
    assert main(["fit", "--estimator", "hashing", *reads, "--quiet", "--output", model,
                 "--fasta", *specs]) == 0
    for name, path in files.items():
        assert main(["predict", "--model", model, *reads, "--fasta", str(path)]) == 0
        reads_named, predicted = zip(*(line.split("\t")
                                       for line in capsys.readouterr().out.splitlines()))
        assert len(predicted) == 300
        # Each read beside its identifier: the record's, where it starts, its strand.
        assert all(re.fullmatch(r"\S+:\d+[+-]", read) for read in reads_named)
        # Reads of a training genome: its label, nearly always.
        assert predicted.count(name) >= 0.95 * len(predicted)
    assert main(["fit", *reads, "--output", model, "--fasta", str(files["alpha"])]) == 2
    assert "no label for" in capsys.readouterr().err
    assert main(["evaluate", "--model", model, *reads, "--fasta", str(files["alpha"])]) == 2
    assert "no label for" in capsys.readouterr().err


def test_a_fasta_file_whose_name_holds_a_colon_is_that_file(tmp_path, capsys):
    # "alpha:v2.fa" exists: predict reads it, not a file "alpha" labelled "v2.fa"; fit
    # takes its label after the last colon, as for any name.
    specs = labelled_genomes(tmp_path, 6, ("alpha", "beta"), n_records=1, length=20_000)
    renamed = []
    for spec in specs:
        path, label = spec.rsplit(":", 1)
        colon = tmp_path / f"{label}:v2.fa"
        os.rename(path, colon)
        renamed.append((colon, label))
    reads = ["--read-length", "100", "--n-reads", "300"]
    model = str(tmp_path / "m.skm")
    assert main(["fit", "--estimator", "hashing", *reads, "--quiet", "--output", model,
                 "--fasta", *(f"{path}:{label}" for path, label in renamed)]) == 0
    path, label = renamed[0]
    assert main(["predict", "--model", model, *reads, "--fasta", str(path)]) == 0
    predicted = [line.split("\t")[1] for line in capsys.readouterr().out.splitlines()]
    assert len(predicted) == 300 and predicted.count(label) >= 0.95 * len(predicted)
    for spec, message in ((":alpha", "expected PATH:LABEL"), (f"{path}x:", "empty label")):
        assert main(["fit", *reads, "--output", model, "--fasta", spec]) == 2
        assert message in capsys.readouterr().err


def _file_of_each_kind(folder, kind):
    """``(inputs, label options)``: two small files of ``kind`` whose label is learnable."""
    rng = np.random.default_rng(3)
    if kind in ("fasta", "fastq"):
        specs = []
        for label, alphabet in (("at", "AT"), ("gc", "GC")):
            reads = ["".join(rng.choice(list(alphabet), 40)) for _ in range(40)]
            path = folder / f"{label}.{kind[:2]}"
            path.write_text("".join(f">r{i}\n{r}\n" if kind == "fasta"
                                    else f"@r{i}\n{r}\n+\n{'I' * len(r)}\n"
                                    for i, r in enumerate(reads)))
            specs.append(f"{path}:{label}")
        return specs, ["--k", "4"]
    labels = rng.integers(2, size=200)
    if kind == "csv":
        lines = ["colour,size,label"] + [f"{'red' if y else 'blue'},{rng.integers(3)},{y}"
                                         for y in labels]
        options = ["--label", "label"]
    elif kind == "svmlight":
        lines = [f"{y} {3 + y}:1 {10 + rng.integers(5)}:0.5" for y in labels]
        options = []
    else:
        lines = [f"{y} |colour {'red' if y else 'blue'} |size s{rng.integers(3)}"
                 for y in labels]
        options = []
    path = folder / f"rows.{kind}.gz"
    with gzip.open(path, "wt") as f:
        f.write("\n".join(lines) + "\n")
    return [str(path)], options


@pytest.mark.parametrize("kind", ["csv", "svmlight", "vw", "fasta", "fastq"])
def test_a_file_named_alone_is_read_as_its_option_reads_it(tmp_path, capsys, kind):
    # 'sklearn-sketch fit flights.csv --label origin -o m.skm' asked for one of the
    # format options; the first lines say which (here compressed, for svmlight and VW).
    inputs, options = _file_of_each_kind(tmp_path, kind)
    flagged, alone = tmp_path / "flagged.skm", tmp_path / "alone.skm"
    assert main(["fit", f"--{kind}", *inputs, *options, "--output", str(flagged)]) == 0
    capsys.readouterr()
    assert main(["fit", *inputs, *options, "-o", str(alone)]) == 0
    assert f"read as --{kind} reads it" in capsys.readouterr().err
    assert alone.read_bytes() == flagged.read_bytes()
    scores = [metrics_of(capsys, ["evaluate", "-m", str(alone), *given])
              for given in (inputs, [f"--{kind}", *inputs])]
    assert scores[0]["accuracy"] == scores[1]["accuracy"] >= 0.9
    # More files after an option of their kind are files of that kind.
    more = tmp_path / "more.skm"
    assert main(["fit", f"--{kind}", inputs[0], *inputs[1:], *options, "-o", str(more),
                 "--quiet"]) == 0
    assert more.read_bytes() == flagged.read_bytes()


def test_files_named_alone_must_be_of_one_kind_and_an_input_is_named(tmp_path, capsys):
    table, _ = _file_of_each_kind(tmp_path, "csv")
    reads, _ = _file_of_each_kind(tmp_path, "fasta")
    out = str(tmp_path / "m.skm")
    for argv, message in (
            (["fit", table[0], reads[0], "-o", out], "of different kinds"),
            (["fit", "-o", out], "no input: name a file"),
            (["fit", str(tmp_path / "none.csv"), "-o", out], "no such file"),
            (["fit", f"{table[0]}:x", "-o", out], "no such file"),
            (["fit", "--sample", table[0], "-o", out], "--sample is the input"),
            # Reads given as a table, or a table as reads: what the file is, not a
            # column or class count that does not say so.
            (["fit", "--csv", reads[0].rpartition(":")[0], "--label", "x", "-o", out],
             "reads as FASTA, not as --csv input: give --fasta"),
            (["fit", "--fasta", f"{table[0]}:a", "-o", out],
             "reads as a table, not as --fasta input: give --csv")):
        assert main(argv) == 2
        captured = capsys.readouterr()
        assert message in captured.err and len(captured.err.strip().splitlines()) == 1
    assert not os.path.exists(out)


@pytest.mark.parametrize("text, kind", [
    ("carrier|dest|delay\nUA|IAH|12\nAA|New York|3\n", "csv"),
    ("1|2|3\n4|5|6\n", "csv"),
    (";a;b\n0;x;1\n", "csv"),  # pandas' to_csv(sep=";") with its index
    ("# measured 2024\nsize,label\n1,a\n", "csv"),
    ("label\n1\n0\n", "csv"),
    ('{"a": 1, "b": "x"}\n', "csv"),
    ("@relation iris\n@attribute a numeric\n@data\n1\n", "csv"),
    ("__label__pos fine film\n", "csv"),
    ("1,3 4:1 7:0.5\n2 qid:1 1:1\n", "svmlight"),
    ("dog |animal tail fur\ncat |animal whiskers\n", "vw"),
    ("1 0.5 'horse|shape:2.5 tall\n|f a\n", "vw"),
    ("LOCUS       NC_000913  4641652 bp    DNA\n", "fasta"),
    ("@read1\nACGT\n+\nIIII\n", "fastq"),
])
def test_input_kind_reads_the_first_lines(tmp_path, text, kind):
    from sklearn_sketch.cli._detect import input_kind

    path = tmp_path / "input"
    path.write_text(text)
    assert input_kind(str(path)) == kind


def _small_table(tmp_path):
    """Train and test CSV files of a small table of three classes."""
    rng = np.random.default_rng(3)
    paths = {}
    for name, n in (("train", 1200), ("test", 600)):
        frame = pd.DataFrame({"color": rng.choice(["red", "green", "blue", "grey"], n),
                              "shop": rng.choice([f"s{i}" for i in range(60)], n),
                              "size": rng.integers(1, 9, n)})
        frame["kind"] = np.where((frame.color == "red") | (frame["size"] > 6), "a",
                                 np.where(frame.shop < "s3", "b", "c"))
        paths[name] = str(tmp_path / f"{name}.csv")
        frame.to_csv(paths[name], index=False)
    return paths


def test_a_small_table_s_default_sketch_is_narrowed_to_its_features(tmp_path, capsys,
                                                                     monkeypatch):
    from sklearn_sketch.cli import _commands

    paths = _small_table(tmp_path)
    model = str(tmp_path / "m.skm")
    fit = ["fit", paths["train"], "--label", "kind", "-o", model, "--epochs", "1",
           "--estimator", "mission"]  # a default shape of three rows of 2**18 cells
    results = {}
    for name, options in (("default", []), ("given", ["--param", "sketch_width=262144"])):
        assert main(fit + options) == 0
        err = capsys.readouterr().err
        noted = re.search(r"note: the input is small \(([\d,]+) distinct features\): each sketch "
                          r"narrowed from 262,144 to ([\d,]+) cells", err)
        width = load(model).sketch_width_
        accuracy = metrics_of(capsys, ["evaluate", "-m", model, paths["test"]])["accuracy"]
        results[name] = (noted, width, accuracy, os.path.getsize(model))
    noted, width, accuracy, size = results["default"]
    distinct = int(noted[1].replace(",", ""))
    # At least each value of the categories (4 colors, 60 shops), 16 cells a feature.
    assert distinct >= 64 and width == int(noted[2].replace(",", ""))
    assert width == max(4096, 1 << (16 * distinct - 1).bit_length()) < 2**18
    assert results["given"][0] is None and results["given"][1] == 2**18
    assert abs(accuracy - results["given"][2]) <= 0.02 and accuracy > 0.8, results
    assert size < results["given"][3] / 8
    # Past SMALL_TABLE_ROWS rows the input is not read whole first: the default shape.
    monkeypatch.setattr(_commands, "SMALL_TABLE_ROWS", 1000)
    assert main(fit) == 0
    assert "the input is small" not in capsys.readouterr().err
    assert load(model).sketch_width_ == 2**18
    # Read ahead only while the features leave room to narrow: here none after the
    # first of four chunks. Every chunk read ahead is trained on, in order: the model
    # is the one of a width given (not read ahead), byte for byte.
    monkeypatch.undo()
    monkeypatch.setattr(_commands, "CELLS_PER_FEATURE", 2**12)
    models = []
    for options in ([], ["--param", "sketch_width=262144"]):
        assert main(fit + ["--chunk-rows", "300", "-q", *options]) == 0
        models.append(Path(model).read_bytes())
    assert models[0] == models[1]
    # Feature hashing's one row keeps every collision: its width stays.
    monkeypatch.undo()
    assert main(fit + ["--estimator", "hashing"]) == 0
    assert "the input is small" not in capsys.readouterr().err
    assert load(model).sketch_width_ == FeatureHashingClassifier().sketch_width


def test_a_small_table_s_default_budget_is_cut_to_its_features(tmp_path, capsys,
                                                                monkeypatch):
    from sklearn_sketch import AWMSketchClassifier
    from sklearn_sketch.cli import _commands

    paths = _small_table(tmp_path)
    model = str(tmp_path / "m.skm")
    fit = ["fit", paths["train"], "--label", "kind", "-o", model, "--epochs", "1"]
    results = {}
    for name, options in (("default", []), ("given", ["--param", "memory_budget='4MB'"])):
        assert main(fit + options) == 0
        err = capsys.readouterr().err
        noted = re.search(r"note: the input is small \(([\d,]+) distinct features\): the "
                          r"model's memory budget cut from 4.0 MiB to ([\d.]+) MiB", err)
        estimator = load(model)
        assert type(estimator) is AWMSketchClassifier
        accuracy = metrics_of(capsys, ["evaluate", "-m", model, paths["test"]])["accuracy"]
        results[name] = (noted, estimator, accuracy, os.path.getsize(model))
    noted, estimator, accuracy, size = results["default"]
    distinct = int(noted[1].replace(",", ""))
    assert distinct >= 64 and float(noted[2]) == 0.25  # 4 colors, 60 shops, 8 sizes
    assert estimator.memory_budget == _commands.MIN_SMALL_BUDGET
    assert estimator.memory_bytes_ <= _commands.MIN_SMALL_BUDGET < size * 1.1
    assert results["given"][0] is None and results["given"][1].memory_budget == "4MB"
    assert abs(accuracy - results["given"][2]) <= 0.02 and accuracy > 0.8, results
    assert size < results["given"][3] / 8

    # The least budget, doubling from MIN_SMALL_BUDGET, whose sketch holds
    # CELLS_PER_FEATURE cells a feature.
    def width(budget):
        return AWMSketchClassifier(budget)._model_shape(3)[0]

    monkeypatch.setattr(_commands, "CELLS_PER_FEATURE", width(2**20) // distinct)
    assert main(fit) == 0
    assert "cut from 4.0 MiB to 1.00 MiB" in capsys.readouterr().err
    assert load(model).memory_budget == 2**20
    assert width(2**19) < _commands.CELLS_PER_FEATURE * distinct <= width(2**20)
    # No budget under the default holds them: the default stays.
    monkeypatch.setattr(_commands, "CELLS_PER_FEATURE", width(2**22) // distinct + 1)
    assert main(fit) == 0
    assert "the input is small" not in capsys.readouterr().err
    assert load(model).memory_budget == "4MB"


def test_a_folder_is_reads_when_most_of_its_first_documents_are(tmp_path):
    from sklearn_sketch.cli._detect import input_kind

    for label in ("pos", "neg"):
        (tmp_path / "posts" / label).mkdir(parents=True)
        for i in range(3):
            (tmp_path / "posts" / label / f"{i}.txt").write_text("From: a reader\nGood post\n")
    # A post that opens with a quoted line looks like FASTA by its first line alone.
    (tmp_path / "posts" / "neg" / "0.txt").write_text("> you wrote\nI disagree\n")
    assert input_kind(str(tmp_path / "posts")) == "csv"
    rng = np.random.default_rng(0)
    for label in ("pos", "neg"):
        for i in range(3):
            write_genome(tmp_path / "posts" / label / f"{i}.txt", rng, n_records=1,
                         length=300)
    assert input_kind(str(tmp_path / "posts")) == "fasta"
