import json
import re
import warnings

import numpy as np
import pandas as pd
import pytest

from sklearn_sketch import average_estimators, load
from sklearn_sketch.cli import main

ESTIMATORS = ["MissionClassifier", "BearClassifier", "AWMSketchClassifier",
              "FeatureHashingClassifier"]


@pytest.fixture
def svmlight(tmp_path):
    """A binary svmlight file where feature 5 (column 4) marks the positive class."""
    rng = np.random.default_rng(0)
    lines = []
    for _ in range(400):
        y = int(rng.integers(2))
        columns = set((rng.choice(1000, 8, replace=False) + 10).tolist())
        if y:
            columns.add(5)
        lines.append(f"{2 * y - 1} " + " ".join(f"{j}:1" for j in sorted(columns)))
    path = tmp_path / "train.svm"
    path.write_text("\n".join(lines) + "\n")
    return path


def test_demo_compares_the_four_estimators(capsys):
    assert main(["demo", "--n-reads", "2000"]) == 0
    out = capsys.readouterr().out
    accuracy = {}
    for name in ESTIMATORS:
        match = re.search(rf"^{name}\s+([0-9.]+)\s+([0-9.]+) MiB", out, re.MULTILINE)
        assert match, name
        accuracy[name] = float(match.group(1))
        assert 0 <= accuracy[name] <= 1
    # Chance is 0.25; measured 0.91-0.92 (MISSION) and 0.83-0.84 (BEAR) over seeds 0-2.
    assert accuracy["MissionClassifier"] > 0.7 and accuracy["BearClassifier"] > 0.7
    # Top k-mers are decoded 12-mers with signed weights, for each species.
    assert len(re.findall(r"E\.Coli\s+[ACGT]{12} [+-]\d", out)) == 2


def test_heavy_hitters_demo_stays_reachable(capsys):
    assert main(["demo", "--heavy-hitters", "--items", "20000", "--top", "5"]) == 0
    assert "Recall of the exact top 5" in capsys.readouterr().out


def test_svmlight_round_trip(svmlight, tmp_path, capsys):
    model = tmp_path / "model.skm"
    assert main(["fit", "--svmlight", str(svmlight), "--estimator", "mission",
                 "--param", "n_features_to_select=20", "--param", "sketch_width=512",
                 "--param", "learning_rate=constant", "--param", "eta0=0.1",
                 "--epochs", "3", "--chunk-rows", "100", "--output", str(model)]) == 0
    assert re.search("MissionClassifier trained on 400 examples x 3 epoch.*, 2 classes",
                     capsys.readouterr().out)

    assert main(["select", "--model", str(model), "--top", "3"]) == 0
    rows = [line.split("\t") for line in capsys.readouterr().out.splitlines()]
    assert rows[0] == ["key", "name", "weight_1"] and len(rows) == 4
    # The one-based feature 5 is column 4, the heaviest and positive.
    assert rows[1][:2] == ["4", "4"] and float(rows[1][2]) > 0

    out_json = tmp_path / "top.json"
    assert main(["select", "--model", str(model), "--top", "2", "--format", "json",
                 "--output", str(out_json)]) == 0
    top = json.loads(out_json.read_text())
    assert [f["key"] for f in top][0] == 4 and list(top[0]["weights"]) == ["1"]

    predictions = tmp_path / "pred.txt"
    assert main(["predict", "--model", str(model), "--svmlight", str(svmlight),
                 "--output", str(predictions)]) == 0
    labels = [line.split()[0] for line in svmlight.read_text().splitlines()]
    predicted = predictions.read_text().splitlines()
    assert len(predicted) == 400 and set(predicted) <= {"1", "-1"}
    assert np.mean(np.array(predicted) == np.array(labels)) > 0.95

    assert main(["evaluate", "--model", str(model), "--svmlight", str(svmlight)]) == 0
    metrics = dict(line.split("\t") for line in capsys.readouterr().out.splitlines())
    assert metrics["examples"] == "400"
    assert float(metrics["accuracy"]) > 0.95 and float(metrics["roc_auc"]) > 0.95
    assert int(metrics["memory_bytes"]) > 0 and float(metrics["predict_seconds"]) >= 0


def test_sample_round_trip_decodes_kmers(tmp_path, capsys):
    model = tmp_path / "dna.skm"
    assert main(["fit", "--sample", "--n-reads", "300", "--k", "8", "--estimator", "awm",
                 "--output", str(model)]) == 0
    capsys.readouterr()
    assert main(["select", "--model", str(model), "--top", "5"]) == 0
    rows = [line.split("\t") for line in capsys.readouterr().out.splitlines()]
    assert rows[0][2:] == ["weight_E.Coli", "weight_H.Pylori", "weight_S.Aureus",
                           "weight_V.Cholerae"]
    for key, name, *_ in rows[1:]:
        assert re.fullmatch("[ACGT]{8}", name)
        assert int(key) == int(name.translate(str.maketrans("ACGT", "0123")), 4)

    assert main(["predict", "--model", str(model), "--sample", "--n-reads", "10"]) == 0
    predicted = capsys.readouterr().out.splitlines()
    assert len(predicted) == 40 and set(predicted) <= {"E.Coli", "H.Pylori", "S.Aureus",
                                                       "V.Cholerae"}
    assert main(["evaluate", "--model", str(model), "--sample", "--n-reads", "100"]) == 0
    metrics = dict(line.split("\t") for line in capsys.readouterr().out.splitlines())
    assert metrics["examples"] == "400"
    assert float(metrics["accuracy"]) > 0.4 and 0.5 < float(metrics["roc_auc"]) <= 1


def test_fasta_round_trip(tmp_path, capsys):
    rng = np.random.default_rng(0)
    paths = []
    for label, alphabet in (("at", "AT"), ("gc", "GC")):
        path = tmp_path / f"{label}.fa"
        path.write_text("".join(f">r{i}\n{''.join(rng.choice(list(alphabet), 50))}\n"
                                for i in range(30)))
        paths.append(f"{path}:{label}")
    model = tmp_path / "fa.skm"
    assert main(["fit", "--fasta", paths[0], "--fasta", paths[1], "--k", "4",
                 "--estimator", "hashing", "--output", str(model)]) == 0
    assert main(["evaluate", "--model", str(model), "--fasta", paths[0],
                 "--fasta", paths[1]]) == 0
    metrics = dict(line.split("\t") for line in capsys.readouterr().out.splitlines()[1:])
    assert float(metrics["accuracy"]) == 1.0
    # Several files after one option are the same input as each after its own.
    together = tmp_path / "together.skm"
    assert main(["fit", "--fasta", *paths, "--k", "4", "--estimator", "hashing",
                 "--output", str(together)]) == 0
    assert together.read_bytes() == model.read_bytes()
    # Feature hashing keeps no feature identities.
    assert main(["select", "--model", str(model)]) == 2
    assert "nothing to select" in capsys.readouterr().err


def one_line_error(capsys, argv):
    assert main(argv) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and "Traceback" not in captured.err
    assert len(captured.err.strip().splitlines()) == 1
    return captured.err


def test_errors_exit_2_with_one_line(svmlight, tmp_path, capsys):
    out = str(tmp_path / "m.skm")
    assert "No such file" in one_line_error(
        capsys, ["fit", "--svmlight", str(tmp_path / "missing.svm"), "--output", out])
    bad = tmp_path / "bad.svm"
    bad.write_text("1 3:1\n-1 4:x\n")
    assert "bad.svm, line 2" in one_line_error(
        capsys, ["fit", "--svmlight", str(bad), "--output", out])
    assert "invalid choice: 'lasso'" in one_line_error(
        capsys, ["fit", "--sample", "--estimator", "lasso", "--output", out])
    assert "Invalid parameter 'depth'" in one_line_error(
        capsys, ["fit", "--svmlight", str(svmlight), "--param", "depth=3", "--output", out])
    assert "key=value" in one_line_error(
        capsys, ["fit", "--svmlight", str(svmlight), "--param", "eta0", "--output", out])
    assert "'eta0' parameter" in one_line_error(
        capsys, ["fit", "--svmlight", str(svmlight), "--param", "eta0=-1", "--output", out])
    assert "PATH:LABEL" in one_line_error(
        capsys, ["fit", "--fasta", "reads.fa", "--output", out])
    assert "given twice with different labels" in one_line_error(
        capsys, ["fit", "--fasta", "a.fa:x", "--fasta", "a.fa:y", "--output", out])
    assert "positive integer" in one_line_error(
        capsys, ["fit", "--svmlight", str(svmlight), "--epochs", "0", "--output", out])
    assert "--read-length" in one_line_error(
        capsys, ["fit", "--svmlight", str(svmlight), "--read-length", "100", "--output", out])
    assert "need --read-length" in one_line_error(
        capsys, ["fit", "--fasta", "a.fa:x", "--n-reads", "10", "--output", out])
    assert "is not a sklearn-sketch model file" in one_line_error(
        capsys, ["select", "--model", str(svmlight)])
    assert not (tmp_path / "m.skm").exists()
    assert main(["fit", "--svmlight", str(svmlight), "--output", out]) == 0
    capsys.readouterr()
    assert "trained on svmlight" in one_line_error(
        capsys, ["predict", "--model", out, "--sample"])
    assert "no input" in one_line_error(capsys, ["predict", "--model", out])


class _Payload:
    """Unpickling this runs ``open(path, 'w')``: the file shows whether code ran."""

    def __init__(self, path):
        self.path = str(path)

    def __reduce__(self):
        return (exec, (f"open({self.path!r}, 'w').write('ran')",))


def test_model_commands_refuse_a_pickle_without_running_it(svmlight, tmp_path, capsys):
    import pickle

    marker = tmp_path / "PWNED"
    evil = tmp_path / "evil.pkl"
    evil.write_bytes(pickle.dumps({"estimator": _Payload(marker)}))
    for command in (["select"], ["predict", "--svmlight", str(svmlight)],
                    ["evaluate", "--svmlight", str(svmlight)]):
        err = one_line_error(capsys, command + ["--model", str(evil)])
        assert "evil.pkl is not a sklearn-sketch model file" in err and "pickle" in err
    assert not marker.exists()


@pytest.mark.parametrize("epochs, param, expected", [
    ("1", None, 1), ("3", None, 3), ("1", "max_iter=2", 2),
    # auto on this small input: the estimator's max_iter, its default (5) or the one given
    ("auto", None, 5), ("auto", "max_iter=2", 2), (None, None, 5)])
def test_epochs_are_the_models_max_iter(svmlight, tmp_path, capsys, epochs, param, expected):
    # The passes a model trains for are its max_iter; --param max_iter overrides it.
    model = tmp_path / "m.skm"
    extra = ([] if param is None else ["--param", param]) + (
        [] if epochs is None else ["--epochs", epochs])
    assert main(["fit", "--svmlight", str(svmlight), "--estimator", "bear", "--quiet",
                 *extra, "--output", str(model)]) == 0
    estimator = load(model)
    assert estimator.max_iter == expected


def test_epochs_auto_trains_a_small_input_as_fit_does_and_a_large_one_once(
        svmlight, tmp_path, capsys, monkeypatch):
    from sklearn.datasets import load_svmlight_file

    from sklearn_sketch.cli import _commands

    def fitted(*options):
        model = tmp_path / "m.skm"
        assert main(["fit", "--svmlight", str(svmlight), "--estimator", "hashing",
                     *options, "--output", str(model)]) == 0
        captured = capsys.readouterr()
        return load(model), captured.err + captured.out

    # 400 rows of 8 or 9 non-zeros: small, so auto trains 5 passes (with no room to
    # cross-validate the passes: see the test below) and keeps the average of the models
    # of --epochs 3, 4 and 5.
    monkeypatch.setattr(_commands, "AUTO_WORK", 0)
    auto, err = fitted()
    last = [fitted("--epochs", str(n))[0].set_params(max_iter=5) for n in (3, 4, 5)]
    five = last[-1]
    once, _ = fitted("--epochs", "1")
    X, y = load_svmlight_file(str(svmlight), n_features=1011)
    assert auto.max_iter == auto.get_params()["max_iter"] == 5 and auto.t_ == five.t_
    np.testing.assert_allclose(auto.decision_function(X),
                               average_estimators(last).decision_function(X), rtol=1e-6)
    assert not np.allclose(auto.decision_function(X), five.decision_function(X))
    # The last pass's mistakes are the last model's.
    assert auto.online_error_rate_ == five.online_error_rate_
    assert auto.t_ == 1 + 5 * 400 and once.t_ == 1 + 400
    assert (f"note: a small input ({X.nnz:,} non-zero values): 4 more passes, 5 in all, as "
            "fit in Python trains; the model is the average of the models after the last 3 "
            "(--epochs N for another number, the last model kept)") in err
    assert "x 5 epoch(s)" in err
    # One non-zero past the limit: one pass, said nowhere.
    monkeypatch.setattr(_commands, "SMALL_INPUT_NNZ", X.nnz - 1)
    large, err = fitted()
    assert large.max_iter == 1 and "small input" not in err and "x 1 epoch(s)" in err
    np.testing.assert_array_equal(large.decision_function(X), once.decision_function(X))
    assert not np.array_equal(once.decision_function(X), five.decision_function(X))


@pytest.mark.parametrize("estimator, n_rows", [("mission", 300), ("bear", 300),
                                               ("mission", 40)])
def test_epochs_auto_cross_validates_the_passes_of_a_small_table(tmp_path, capsys, estimator,
                                                                 n_rows):
    # A linear target far from 0 in 300 rows, or in 40 (at least AUTO_MIN_ROWS): five
    # passes under-fit it.
    rng = np.random.default_rng(0)
    frame = pd.DataFrame(rng.uniform(size=(n_rows, 4)), columns=["a", "b", "c", "d"])
    frame["y"] = 1000 + 300 * frame.a - 200 * frame.b + rng.normal(size=n_rows)
    path, model = tmp_path / "t.csv", tmp_path / "m.skm"
    frame.to_csv(path, index=False)
    fit = ["fit", "--csv", str(path), "--label", "y", "--estimator", estimator, "--output"]
    assert main(fit + [str(model)]) == 0
    err = capsys.readouterr().err
    chosen = load(model).max_iter
    assert chosen > 5 and (f"{chosen - 1} more passes, {chosen} in all, the least held-out "
                           "squared error of 3-fold cross-validation of 1, 2, 3, 5") in err
    # The model is the average of those of the last three passes.
    last = []
    for n in (chosen - 2, chosen - 1, chosen):
        assert main(fit + [str(tmp_path / "n.skm"), "--epochs", str(n), "--quiet"]) == 0
        last.append(load(tmp_path / "n.skm").set_params(max_iter=chosen))
    rows = frame.drop(columns="y").to_dict("records")
    np.testing.assert_allclose(load(model).predict(rows),
                               average_estimators(last).predict(rows), rtol=1e-6)


@pytest.mark.parametrize("classification", [False, True])
def test_cross_validated_errors_equal_fresh_fits(classification):
    # Each fold's model trains on from one number of passes to the next; fits of that
    # many passes from scratch err alike.
    import scipy.sparse as sp
    from sklearn.base import clone

    from sklearn_sketch import MissionClassifier, MissionRegressor
    from sklearn_sketch.cli._commands import (AUTO_FOLDS, _cross_validated_errors,
                                              cross_validation_folds)

    rng = np.random.RandomState(0)
    X = sp.random(150, 40, density=0.2, random_state=0, format="csr")
    y = X @ rng.normal(size=40) + 3
    weight = rng.uniform(0.5, 2, size=150)
    estimator = MissionRegressor(random_state=0, sketch_width=256)
    if classification:
        y = np.where(y > np.median(y), "up", "down")
        estimator = MissionClassifier(random_state=0, sketch_width=256)
    chunks = [(X[:100], y[:100], weight[:100]), (X[100:], y[100:], weight[100:])]
    passes = [1, 2, 5, 8]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        errors = _cross_validated_errors(estimator, chunks, np.unique(y) if classification
                                         else None, passes, random_state=3)
        folds = cross_validation_folds(y, classification, 3)
        for fold in range(AUTO_FOLDS):
            train, test = folds != fold, folds == fold
            for i, n in enumerate(passes):
                model = clone(estimator).set_params(max_iter=n).fit(
                    X[train], y[train], sample_weight=weight[train])
                wrong = (model.predict(X[test]) != y[test] if classification
                         else (model.predict(X[test]) - y[test]) ** 2)
                assert errors[fold, i] == pytest.approx(float(wrong @ weight[test]))
    assert errors.shape == (AUTO_FOLDS, len(passes)) and errors.min() < errors.max()


def test_cross_validation_folds_spread_each_class():
    from sklearn_sketch.cli._commands import AUTO_FOLDS, cross_validation_folds

    y = np.array(["a"] * 95 + ["b"] * 3 + ["c"] * 2)
    folds = cross_validation_folds(y, True, 0)
    for label, n in (("a", 95), ("b", 3), ("c", 2)):
        sizes = np.bincount(folds[y == label], minlength=AUTO_FOLDS)
        assert sizes.max() - sizes.min() <= 1 and sizes.sum() == n
    assert np.bincount(folds).max() - np.bincount(folds).min() <= 1
    # Each row once, at random: another seed, other folds; a regression's alike in size.
    assert not np.array_equal(folds, cross_validation_folds(y, True, 1))
    plain = cross_validation_folds(np.arange(100.0), False, 0)
    assert np.bincount(plain).tolist() == [34, 33, 33]


def test_fit_writes_a_model_file_with_its_input_options(svmlight, tmp_path, capsys):
    from sklearn_sketch import load
    from sklearn_sketch._model_files import read_model

    model = tmp_path / "m.skm"
    assert main(["fit", "--svmlight", str(svmlight), "--estimator", "bear", "--quiet",
                 "--zero-based", "0", "--output", str(model)]) == 0
    assert model.read_bytes()[:4] == b"PK\x03\x04"
    estimator, metadata = read_model(model)
    assert metadata == {"vectorizer": None,
                        "input": {"format": "svmlight", "zero_based": True}}
    assert type(load(model)).__name__ == "BearClassifier"
    # A model file whose metadata is not the command line's is refused.
    from sklearn_sketch import save
    save(estimator, model)
    assert "metadata" in one_line_error(capsys, ["select", "--model", str(model)])


def _run_console(args, tmp_path):
    """``python -m sklearn_sketch ARGS`` in a fresh interpreter on the package under test."""
    import os
    import subprocess
    import sys

    import sklearn_sketch
    parent = os.path.dirname(os.path.dirname(os.path.abspath(sklearn_sketch.__file__)))
    env = dict(os.environ, PYTHONPATH=parent + os.pathsep + os.environ.get("PYTHONPATH", ""))
    env.pop("PYTHONUNBUFFERED", None)  # buffered output, as most users have
    return subprocess.run([sys.executable, "-m", "sklearn_sketch", *args], capture_output=True,
                          text=True, env=env, cwd=parent, timeout=300)


def test_console_script_flushes_its_output_and_returns_the_status(tmp_path, svmlight):
    # run() leaves with os._exit: what the command printed must still arrive whole,
    # and a user error must still give status 2.
    model = tmp_path / "model.skm"
    fitted = _run_console(["fit", "--svmlight", str(svmlight), "--output", str(model)],
                          tmp_path)
    assert fitted.returncode == 0, fitted.stderr
    assert "saved to" in fitted.stdout and model.exists()
    selected = _run_console(["select", "--model", str(model), "--top", "5", "--format",
                             "json"], tmp_path)
    assert selected.returncode == 0, selected.stderr
    assert len(json.loads(selected.stdout)) == 5  # the whole JSON document arrived
    missing = _run_console(["select", "--model", str(tmp_path / "absent.skm")], tmp_path)
    assert missing.returncode == 2
    assert missing.stderr.startswith("sklearn-sketch: error:")


def test_fit_warns_when_the_model_learned_next_to_nothing(svmlight, tmp_path, capsys):
    # The fixture's labels are learnable: no warning.
    model = tmp_path / "m.skm"
    argv = ["fit", "--estimator", "awm", "--quiet", "--param", "random_state=0",
            "--output", str(model)]
    assert main([*argv, "--svmlight", str(svmlight)]) == 0
    assert "warning" not in capsys.readouterr().err
    # Labels drawn independently of the features: the model errs as often as
    # predicting the majority label, and fit says so. 20,000 rows, so that the
    # progressive error (0.497 to 0.508 over 20 seeds) stays far above 0.95 x 0.5.
    rng = np.random.default_rng(1)
    noise = tmp_path / "noise.svm"
    noise.write_text("".join(
        f"{rng.choice(['-1', '1'])} " + " ".join(f"{j}:1" for j in sorted(
            set((rng.choice(1000, 8, replace=False) + 1).tolist()))) + "\n"
        for _ in range(20_000)))
    assert main([*argv, "--svmlight", str(noise)]) == 0
    err = capsys.readouterr().err
    assert "warning: the model learned next to nothing" in err
    assert "most frequent label errs on" in err
    assert "features of very different ranges on one scale" in err


def test_fit_warns_when_the_trained_model_predicts_next_to_nothing(svmlight, tmp_path, capsys,
                                                                    monkeypatch):
    # The pass learns, but the model it ends on predicts one label (as a late step
    # can leave BEAR): the command line checks the first training rows, as fit does.
    from sklearn_sketch import AWMSketchClassifier

    model = tmp_path / "m.skm"
    argv = ["fit", "--estimator", "awm", "--quiet", "--svmlight", str(svmlight),
            "--output", str(model)]
    monkeypatch.setattr(AWMSketchClassifier, "decision_function",
                        lambda self, X: np.zeros(X.shape[0]))
    monkeypatch.setattr(AWMSketchClassifier, "predict",
                        lambda self, X: np.full(X.shape[0], self.classes_[0]))
    assert main(argv) == 0
    err = capsys.readouterr().err
    assert "warning: the model learned next to nothing in the end: the trained model errs" in err
    assert "A late step can undo what a pass learned" in err
    monkeypatch.undo()
    assert main(argv) == 0
    assert "warning" not in capsys.readouterr().err


def test_a_reader_that_stops_early_is_not_an_error(tmp_path):
    # `sklearn-sketch predict ... | head -1`: the pipe closes under a long output.
    import os
    import subprocess
    import sys

    import sklearn_sketch
    model = tmp_path / "model.skm"
    assert main(["fit", "--sample", "--n-reads", "200", "--quiet", "--output", str(model)]) == 0
    parent = os.path.dirname(os.path.dirname(os.path.abspath(sklearn_sketch.__file__)))
    env = dict(os.environ, PYTHONPATH=parent + os.pathsep + os.environ.get("PYTHONPATH", ""))
    process = subprocess.Popen([sys.executable, "-m", "sklearn_sketch", "predict", "--model",
                                str(model), "--sample", "--n-reads", "30000"],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, cwd=parent)
    assert process.stdout.readline().strip()
    process.stdout.close()
    stderr = process.stderr.read().decode()
    assert process.wait(timeout=300) == 0, stderr
    assert "error" not in stderr


@pytest.mark.parametrize("estimator", ["mission", "awm", "bear"])
def test_the_same_command_gives_the_same_model(svmlight, tmp_path, estimator):
    # --random-state (default 0) seeds the estimator's hashes and shuffles as well as
    # the reading: models differed from run to run when only the reading was seeded.
    from sklearn_sketch import load

    def fit(name, *extra):
        path = tmp_path / name
        assert main(["fit", "--svmlight", str(svmlight), "--estimator", estimator, "--quiet",
                     "--output", str(path), *extra]) == 0
        return load(path)

    first, again, other = fit("a.skm"), fit("b.skm"), fit("c.skm", "--random-state", "1")
    for model in (again, other):
        assert model.random_state == int(model is other)
    np.testing.assert_array_equal(first.intercept_, again.intercept_)
    assert (first.coef_ != again.coef_).nnz == 0  # sparse: the columns are 64-bit keys
    for a, b in zip(first.sketches_, again.sketches_):
        np.testing.assert_array_equal(a.table, b.table)
    assert (first.coef_ != other.coef_).nnz > 0
    seeded = fit("d.skm", "--param", "random_state=7")
    assert seeded.random_state == 7


@pytest.mark.parametrize("kind", ["vw", "svmlight"])
def test_real_valued_labels_train_a_regressor(tmp_path, capsys, kind):
    # Vowpal Wabbit's default task is regression: its users may well try one here.
    rng = np.random.default_rng(1)
    x = rng.uniform(size=(50, 3))
    y = 3 * x[:, 0] - 2 * x[:, 1]
    path = tmp_path / f"reg.{kind}"
    if kind == "vw":
        lines = [f"{t:.4f} | " + " ".join(f"f{j}:{v:.3f}" for j, v in enumerate(row))
                 for t, row in zip(y, x)]
    else:
        lines = [f"{t:.4f} " + " ".join(f"{j + 1}:{v:.3f}" for j, v in enumerate(row))
                 for t, row in zip(y, x)]
    path.write_text("\n".join(lines) + "\n")
    model = tmp_path / "m.skm"
    assert main(["fit", f"--{kind}", str(path), "--output", str(model)]) == 0
    assert "real numbers, from" in capsys.readouterr().err
    assert type(load(model)).__name__ == "MissionRegressor"
    # A classification of real numbers is refused, naming the way out.
    model.unlink()
    err = one_line_error(capsys, ["fit", f"--{kind}", str(path), "--task", "classification",
                                  "--output", str(model)])
    assert "real numbers (50 distinct" in err and "--task regression" in err
    assert not model.exists()
    # Integer-valued labels are classes as before.
    path.write_text("\n".join(f"{int(t > 0)} " + line.split(" ", 1)[1]
                              for t, line in zip(y, lines)) + "\n")
    assert main(["fit", f"--{kind}", str(path), "--output", str(model)]) == 0
    # The default estimator of a classification is the AWM-Sketch, of a regression MISSION.
    assert type(load(model)).__name__ == "AWMSketchClassifier"


def test_evaluate_scores_each_chunk_once_and_its_auc_from_those_scores(tmp_path, capsys,
                                                                       monkeypatch):
    # Several classes: the AUC reads probabilities, the softmax of the scores
    # already computed for accuracy, not of a second pass over the sketch.
    from sklearn_sketch._base import _BaseSketchSGD, _SketchClassifierMixin
    from sklearn_sketch.cli import _commands

    model = tmp_path / "dna.skm"
    assert main(["fit", "--sample", "--n-reads", "300", "--k", "8", "--estimator", "awm",
                 "--output", str(model)]) == 0
    calls = {"_decision": 0, "decision_function": 0}
    scored = []
    for name in calls:
        owner = _BaseSketchSGD if name == "_decision" else _SketchClassifierMixin
        method = getattr(owner, name)

        def counted(self, X, _method=method, _name=name):
            calls[_name] += 1
            if _name == "decision_function":
                scored.append(X)
            return _method(self, X)
        monkeypatch.setattr(owner, name, counted)
    given = []
    roc_auc = _commands._roc_auc
    monkeypatch.setattr(_commands, "_roc_auc",
                        lambda *args: given.append(args) or roc_auc(*args))
    capsys.readouterr()
    assert main(["evaluate", "--model", str(model), "--sample", "--n-reads", "100"]) == 0
    metrics = dict(line.split("\t") for line in capsys.readouterr().out.splitlines())
    assert calls["decision_function"] >= 1 and calls["_decision"] == calls["decision_function"]
    (n_classes, codes, chunks), = given
    probas = np.concatenate(chunks)
    assert n_classes == 4 and codes.shape == (400,)
    monkeypatch.undo()
    # The reads it scored, scored again in Python: the same probabilities.
    estimator = load(model)
    np.testing.assert_allclose(
        probas, np.concatenate([estimator.predict_proba(X) for X in scored]), rtol=1e-12)
    assert 0.5 < float(metrics["roc_auc"]) <= 1


def test_roc_auc_a_class_at_a_time_is_roc_auc_score_ovr():
    from scipy.special import softmax
    from sklearn.metrics import roc_auc_score

    from sklearn_sketch.cli._commands import _roc_auc

    rng = np.random.default_rng(0)
    codes = rng.integers(4, size=600).astype(np.int32)
    probas = softmax(rng.normal(size=(600, 4)) + 0.8 * np.eye(4)[codes], axis=1)
    probas[:50] = probas[50:100]  # ties
    chunks = np.array_split(probas, 7)
    assert _roc_auc(4, codes, chunks) == pytest.approx(
        roc_auc_score(codes, probas, multi_class="ovr"), rel=1e-12, abs=0)
    scores = probas[:, 1] - probas[:, 0]
    binary = (codes % 2).astype(np.int32)
    assert _roc_auc(2, binary, np.array_split(scores, 3)) == roc_auc_score(binary, scores)
    assert _roc_auc(4, np.where(codes == 3, -1, codes).astype(np.int32), chunks) is None
    assert _roc_auc(5, codes, chunks) is None  # a class without an example
    assert _roc_auc(4, codes, []) is None      # no probabilities (hinge loss)


def test_probabilities_of_the_scores_are_predict_proba():
    from sklearn_sketch import AWMSketchClassifier
    from sklearn_sketch._base import _SketchClassifierMixin

    rng = np.random.default_rng(0)
    X = rng.normal(size=(300, 10))
    for n_classes in (2, 4):
        y = rng.integers(0, n_classes, 300)
        est = AWMSketchClassifier(random_state=0).fit(X, y)
        scores = est._decision(X)
        assert np.array_equal(_SketchClassifierMixin._probabilities(scores),
                              est.predict_proba(X))


def test_a_model_past_the_machines_memory_is_a_one_line_error(svmlight, tmp_path, capsys,
                                                              monkeypatch):
    from sklearn_sketch import _base

    monkeypatch.setattr(_base, "physical_memory", lambda: 2**20)
    model = tmp_path / "m.skm"
    err = one_line_error(capsys, ["fit", "--svmlight", str(svmlight), "--estimator", "hashing",
                                  "--output", str(model)])
    assert ("FeatureHashingClassifier: a model of 4.0 MiB: more than 75% of this machine's "
            "1.0 MiB of memory. Give a memory_budget (the whole model's bytes) or a smaller "
            "sketch_width.") in err
    assert not model.exists()


@pytest.mark.parametrize("n_classes", [2, 3])
def test_predict_proba_writes_the_models_probabilities(tmp_path, capsys, n_classes):
    from sklearn.datasets import load_svmlight_file

    rng = np.random.default_rng(n_classes)
    lines = []
    for _ in range(300):
        y = int(rng.integers(n_classes))
        columns = sorted(set((rng.choice(1000, 8, replace=False) + 10).tolist()) | {y + 1})
        lines.append(f"{y} " + " ".join(f"{j}:1" for j in columns))
    data = tmp_path / "d.svm"
    data.write_text("\n".join(lines) + "\n")
    model = tmp_path / "m.skm"
    assert main(["fit", "--svmlight", str(data), "--quiet", "--output", str(model)]) == 0
    capsys.readouterr()
    assert main(["predict", "--svmlight", str(data), "--model", str(model), "--proba"]) == 0
    header, *rows = capsys.readouterr().out.splitlines()
    assert header.split("\t") == ["label", *map(str, range(n_classes))]
    labels = [row.split("\t")[0] for row in rows]
    written = np.array([[float(v) for v in row.split("\t")[1:]] for row in rows])
    # The probabilities the model gives the same rows (written to 6 digits), their labels
    # those predict writes without --proba.
    estimator = load(model)
    X, _ = load_svmlight_file(str(data), n_features=estimator.n_features_in_)
    np.testing.assert_allclose(written, estimator.predict_proba(X), rtol=1e-5, atol=1e-6)
    assert main(["predict", "--svmlight", str(data), "--model", str(model)]) == 0
    assert labels == capsys.readouterr().out.splitlines()
    # A model without probabilities, or a regressor, is refused by name.
    for options, error in ((["--param", "loss='hinge'"], "loss='hinge'"),
                           (["--task", "regression"], "regressor")):
        assert main(["fit", "--svmlight", str(data), "--quiet", "--output", str(model),
                     *options]) == 0
        capsys.readouterr()
        assert main(["predict", "--svmlight", str(data), "--model", str(model),
                     "--proba"]) == 2
        assert error in capsys.readouterr().err


def test_a_default_model_of_many_classes_is_narrowed_to_the_cap(tmp_path, capsys, monkeypatch):
    from sklearn_sketch._base import largest_sketch_width
    from sklearn_sketch.cli import _commands

    rng = np.random.default_rng(0)
    lines = []
    for _ in range(300):
        y = int(rng.integers(5))
        columns = sorted(set((rng.choice(1000, 8, replace=False) + 10).tolist()) | {y + 1})
        lines.append(f"{y} " + " ".join(f"{j}:1" for j in columns))
    data = tmp_path / "d.svm"
    data.write_text("\n".join(lines) + "\n")
    model = tmp_path / "m.skm"
    cap = 2**23  # five classes of feature hashing's 4 MiB, or MISSION's 3, pass it
    monkeypatch.setattr(_commands, "DEFAULT_MODEL_BYTES", cap)
    # Not read whole first: the narrowing of a small input's sketch is tested apart.
    monkeypatch.setattr(_commands, "SMALL_TABLE_ROWS", 0)

    def fit(estimator, *options):
        assert main(["fit", "--svmlight", str(data), "--estimator", estimator, "--epochs", "1",
                     "--output", str(model), *options]) == 0
        return load(model), capsys.readouterr().err

    for name in ("hashing", "mission"):
        default = _commands._new_estimator(name, "classification")
        est, err = fit(name)
        depth = est.sketch_depth_
        heap = est._planned_bytes(5)[1] - 4 * depth * (est.sketch_width_ + 1)
        # The widest sketch that, beside the default heap, keeps the 5 models in the cap.
        assert est.sketch_width_ == largest_sketch_width(cap / 5 - heap, depth)
        assert est._planned_bytes(5)[0] <= cap < default._planned_bytes(5)[0]
        if name == "mission":  # the heap keeps its default capacity
            assert est.n_features_to_select_ == default.n_features_to_select
        assert (f"5 classes: the default model, {default._planned_bytes(5)[1] / 2**20:,.1f} "
                f"MiB a class, would take") in err and "narrows each class's sketch" in err
        # A size given, or a budget: as given, said nothing.
        for option in ("sketch_width=4096", "memory_budget='1MB'"):
            given, err = fit(name, "--param", option)
            assert "narrows" not in err
            assert given.get_params()["sketch_width"] == (4096 if "width" in option
                                                          else default.sketch_width)
    # So many classes that the heaps alone fill the cap: each sketch is narrowed to the
    # least capped width, not left at its default (5 x 3 MiB where the cap is 64 KiB).
    monkeypatch.setattr(_commands, "DEFAULT_MODEL_BYTES", 2**16)
    est, err = fit("mission")
    default = _commands._new_estimator("mission", "classification")
    assert est.sketch_width_ == _commands.MIN_CAPPED_WIDTH < default.sketch_width
    assert f"narrows each class's sketch to {_commands.MIN_CAPPED_WIDTH:,} cells" in err
    monkeypatch.setattr(_commands, "DEFAULT_MODEL_BYTES", cap)
    # Two classes (one model) of the default: under the cap, untouched.
    binary = tmp_path / "b.svm"
    binary.write_text("".join(line.replace(line[0], str(int(line[0]) % 2), 1) + "\n"
                              for line in lines))
    assert main(["fit", "--svmlight", str(binary), "--estimator", "hashing", "--epochs", "1",
                 "--output", str(model)]) == 0
    assert "narrows" not in capsys.readouterr().err
    assert load(model).sketch_width_ == 2**20

    # The AWM-Sketch's budget is the whole model's: grown to MIN_BUDGET_PER_MODEL a
    # class where its default gives each less, up to the cap.
    est, err = fit("awm")
    assert est.memory_budget == "4MB" and "grown" not in err  # 5 x 128 KiB: under 4 MiB
    for per_model, grown in ((2**20, 5 * 2**20), (2**21, cap)):
        monkeypatch.setattr(_commands, "MIN_BUDGET_PER_MODEL", per_model)
        est, err = fit("awm")
        assert est.memory_budget == grown and est.memory_bytes_ <= grown
        assert est.memory_bytes_ > 2**22  # the sketch widened with it
        assert (f"5 classes: the model's memory budget grown from 4.0 MiB to "
                f"{grown / 2**20:.1f} MiB, {grown // 5 // 1024:,} KiB a class") in err
        given, err = fit("awm", "--param", "memory_budget='1MB'")
        assert given.memory_budget == "1MB" and "grown" not in err
    assert main(["fit", "--svmlight", str(binary), "--estimator", "awm", "--epochs", "1",
                 "--output", str(model)]) == 0  # one model of two classes
    assert "grown" not in capsys.readouterr().err and load(model).memory_budget == "4MB"


def test_a_default_model_of_many_classes_trains_on_every_core_as_one_thread_would(
        tmp_path, capsys, monkeypatch):
    from sklearn_sketch.cli import _commands

    monkeypatch.setattr(_commands.os, "cpu_count", lambda: 2)
    monkeypatch.setattr(_commands, "SMALL_TABLE_ROWS", 0)  # the default width kept
    rng = np.random.default_rng(1)
    lines = []
    for _ in range(1500):
        y = int(rng.integers(16))
        columns = sorted(set((rng.choice(500, 6, replace=False) + 20).tolist()) | {y + 1})
        lines.append(f"{y} " + " ".join(f"{j}:1" for j in columns))
    data = tmp_path / "d.svm"
    data.write_text("\n".join(lines) + "\n")

    def fit(*options):
        model = tmp_path / "m.skm"
        assert main(["fit", "--svmlight", str(data), "--quiet", "--output", str(model),
                     *options]) == 0
        capsys.readouterr()
        return load(model)

    for name in ("awm", "mission"):
        threaded, alone = fit("--estimator", name), fit("--estimator", name,
                                                         "--param", "n_jobs=1")
        assert threaded.n_jobs == -1 and alone.n_jobs == 1
        np.testing.assert_array_equal(threaded.coef_.toarray(), alone.coef_.toarray())
        np.testing.assert_array_equal(threaded.intercept_, alone.intercept_)
        for mine, single in zip(threaded._state.sketches, alone._state.sketches):
            np.testing.assert_array_equal(mine.to_array(), single.to_array())
    # Fewer models than MIN_MODELS_FOR_THREADS, or BEAR (its threads split the rows): as
    # the estimator's default.
    few = tmp_path / "few.svm"
    few.write_text("".join(f"{int(line.split()[0]) % 4} {line.split(' ', 1)[1]}\n"
                           for line in lines))
    assert main(["fit", "--svmlight", str(few), "--quiet", "--output",
                 str(tmp_path / "f.skm")]) == 0
    assert load(tmp_path / "f.skm").n_jobs is None
    assert fit("--estimator", "bear").n_jobs is None


def test_a_warning_inside_a_command_is_one_line_of_its_own(tmp_path, capsys, monkeypatch):
    # An estimator's warning (the names left out of a budget, say) read as Python prints
    # it: a file, a line number and a line of source, on three lines.
    import sklearn_sketch.cli._explain as explain

    def warns(args):
        warnings.warn("memory_budget=106832 leaves 32016 bytes\n  for the names", UserWarning)
        print("done")

    monkeypatch.setattr(explain, "cmd_explain", warns)
    path = tmp_path / "rows.csv"
    path.write_text("a,delay\nx,1\n")
    assert main(["explain", str(path), "--outlier", "delay > 0"]) == 0
    captured = capsys.readouterr()
    assert captured.err == ("sklearn-sketch: warning: memory_budget=106832 leaves 32016 bytes "
                            "for the names\n")
    assert captured.out == "done\n"
    # Outside a command, warnings are Python's again.
    with pytest.warns(UserWarning, match="after"):
        warnings.warn("after", UserWarning)
