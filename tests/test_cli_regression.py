"""Regression from the command line: numeric targets train MISSION's, BEAR's or IHT's regressor.

Vowpal Wabbit's default task is regression; a column of minutes or prices given as
the label is a quantity, not a hundred classes (a model each: 678 MB for scikit-learn's
442 diabetes rows before ``--task``).
"""
import json
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from sklearn.datasets import dump_svmlight_file
from sklearn.metrics import mean_absolute_error, mean_squared_error, r2_score

from sklearn_sketch import load
from sklearn_sketch.cli import main
from sklearn_sketch.io import SvmlightReader

sys.path.insert(0, str(Path(__file__).parent))
from test_cli import one_line_error as cli_one_line_error  # noqa: E402


def linear_task(n=3000, p=8, noise=0.1, seed=0):
    """Dense rows and a linear target in whole numbers (a quantity: many distinct values)."""
    rng = np.random.default_rng(seed)
    X = rng.uniform(size=(n, p))
    y = np.round(100 * (X @ np.linspace(-2, 3, p) + noise * rng.normal(size=n)))
    return X, y


@pytest.fixture
def svmlight_files(tmp_path):
    X, y = linear_task()
    train, test = tmp_path / "train.svm", tmp_path / "test.svm"
    dump_svmlight_file(X[:2400], y[:2400], str(train), zero_based=False)
    dump_svmlight_file(X[2400:], y[2400:], str(test), zero_based=False)
    return train, test, y[2400:]


def run(capsys, argv):
    assert main(argv) == 0, capsys.readouterr().err
    return capsys.readouterr()


@pytest.mark.parametrize("estimator, regressor", [
    ("mission", "MissionRegressor"), ("bear", "BearRegressor"), ("iht", "IHTRegressor")])
def test_a_quantity_trains_a_regressor_and_evaluate_reports_its_errors(
        svmlight_files, tmp_path, capsys, estimator, regressor):
    train, test, y_test = svmlight_files
    model = tmp_path / "m.skm"
    err = run(capsys, ["fit", "--svmlight", str(train), "--estimator", estimator,
                       "--epochs", "3", "--output", str(model)]).err
    assert "whole numbers" in err and "a quantity, so fit trains a regressor" in err
    assert "learned next to nothing" not in err
    fitted = load(model)
    assert type(fitted).__name__ == regressor and not hasattr(fitted, "classes_")
    # predict writes the model's values, one a line; evaluate scores them with the
    # errors scikit-learn's metrics give.
    out = tmp_path / "predicted.txt"
    run(capsys, ["predict", "--model", str(model), "--svmlight", str(test),
                 "--output", str(out)])
    predicted = np.loadtxt(out)
    (chunk,) = SvmlightReader(test, 10_000, zero_based=False, n_features=1000)
    np.testing.assert_allclose(predicted, fitted.predict(chunk.X), rtol=1e-5)
    metrics = json.loads(run(capsys, ["evaluate", "--model", str(model), "--svmlight",
                                      str(test), "--format", "json"]).out)
    exact = fitted.predict(chunk.X)
    assert metrics["examples"] == y_test.size
    assert metrics["r2"] == pytest.approx(r2_score(y_test, exact))
    assert metrics["rmse"] == pytest.approx(np.sqrt(mean_squared_error(y_test, exact)))
    assert metrics["mae"] == pytest.approx(mean_absolute_error(y_test, exact))
    assert metrics["r2"] > 0.9
    assert "accuracy" not in metrics
    # select names the one weight vector.
    header = run(capsys, ["select", "--model", str(model), "--top", "3"]).out.splitlines()[0]
    assert header.split("\t") == ["key", "name", "weight_target"]


def test_a_target_the_features_do_not_explain_is_warned_about(tmp_path, capsys):
    X, _ = linear_task()
    noise = np.round(100 * np.random.default_rng(5).normal(size=len(X)))
    path, model = tmp_path / "noise.svm", tmp_path / "m.skm"
    dump_svmlight_file(X, noise, str(path))
    err = run(capsys, ["fit", "--svmlight", str(path), "--quiet", "--output", str(model)]).err
    assert "learned next to nothing" in err and "(their variance)" in err
    assert model.exists()


def test_task_is_checked_against_the_labels_and_the_estimator(svmlight_files, tmp_path,
                                                              capsys):
    train, _, _ = svmlight_files
    model = tmp_path / "m.skm"

    def one_line_error(argv):  # test_cli's check, and no model written
        err = cli_one_line_error(capsys, argv + ["--output", str(model)])
        assert not model.exists()
        return err

    # The Weight-Median Sketches and feature hashing have no regressor.
    err = one_line_error(["fit", "--svmlight", str(train), "--estimator", "awm"])
    assert "a quantity, so fit trains a regressor" in err
    assert "--estimator awm has no regressor: use bear, iht, mission" in err
    err = one_line_error(["fit", "--svmlight", str(train), "--task", "regression",
                          "--classes", "1,2"])
    assert "--classes" in err
    # Text labels are no quantity.
    frame = pd.DataFrame({"carrier": list("ABAB") * 50, "origin": list("XXYY") * 50})
    csv = tmp_path / "flights.csv"
    frame.to_csv(csv, index=False)
    err = one_line_error(["fit", "--csv", str(csv), "--label", "origin", "--task",
                          "regression"])
    assert "--task regression needs numeric labels" in err
    # Few whole numbers are classes unless --task says otherwise.
    small = tmp_path / "small.svm"
    X, y = linear_task(n=200)
    dump_svmlight_file(X, np.sign(y), str(small))
    run(capsys, ["fit", "--svmlight", str(small), "--quiet", "--output", str(model)])
    assert type(load(model)).__name__ == "AWMSketchClassifier"
    run(capsys, ["fit", "--svmlight", str(small), "--task", "regression", "--quiet",
                 "--output", str(model)])
    assert type(load(model)).__name__ == "MissionRegressor"


def test_csv_rows_without_a_target_are_skipped_and_counted(tmp_path, capsys):
    # A cancelled flight has no delay: a regression learns from the others, evaluate
    # scores the others, and predict still predicts every row.
    rng = np.random.default_rng(0)
    n = 3000
    frame = pd.DataFrame({"dest": rng.choice(["BOS", "ORD", "LAX", "SFO"], n),
                          "carrier": rng.choice(["AA", "UA", "DL"], n)})
    hours = {"BOS": 60, "ORD": 130, "LAX": 330, "SFO": 345}
    frame["air_time"] = frame["dest"].map(hours) + rng.integers(-30, 31, n)
    missing = rng.random(n) < 0.1
    frame.loc[missing, "air_time"] = np.nan
    train, test, model = tmp_path / "train.csv", tmp_path / "test.csv", tmp_path / "m.skm"
    frame[:2000].to_csv(train, index=False)
    frame[2000:].to_csv(test, index=False)
    err = run(capsys, ["fit", "--csv", str(train), "--label", "air_time", "--epochs", "3",
                       "--output", str(model)]).err
    assert f"{int(missing[:2000].sum()):,} rows without a target in column 'air_time'" in err
    metrics = json.loads(run(capsys, ["evaluate", "--model", str(model), "--csv", str(test),
                                      "--format", "json"]).out)
    assert metrics["examples"] == int((~missing[2000:]).sum())
    assert metrics["r2"] > 0.9
    out = run(capsys, ["predict", "--model", str(model), "--csv", str(test)]).out
    assert len(out.splitlines()) == n - 2000
    # A target that is no number is not scored, and said.
    bad = frame[2000:].copy()
    bad["air_time"] = bad["air_time"].astype(object)
    row = int(np.flatnonzero(~missing[2000:])[700])
    bad.iloc[row, bad.columns.get_loc("air_time")] = "n/a?"
    bad.to_csv(test, index=False)
    result = run(capsys, ["evaluate", "--model", str(model), "--csv", str(test), "--format",
                          "json"])
    assert json.loads(result.out)["examples"] == metrics["examples"] - 1
    assert (f"1 of {metrics['examples']:,} examples have no label that is a number: they are "
            "not scored") in result.err
    # A classification skips and counts them too, and evaluate scores the others.
    frame["dest_code"] = frame["dest"]
    frame.loc[missing, "dest_code"] = np.nan
    frame["air_time"] = frame["air_time"].fillna(0)
    frame[:2000].to_csv(train, index=False)
    frame[2000:].to_csv(test, index=False)
    err = run(capsys, ["fit", "--csv", str(train), "--label", "dest_code", "--columns",
                       "air_time", "--output", str(model)]).err
    assert f"{int(missing[:2000].sum()):,} rows without a label in column 'dest_code'" in err
    estimator = load(str(model))
    assert estimator.t_ - 1 == 5 * int((~missing[:2000]).sum())  # five passes: small
    assert sorted(estimator.classes_) == sorted(hours)
    metrics = json.loads(run(capsys, ["evaluate", "--model", str(model), "--csv", str(test),
                                      "--format", "json"]).out)
    # LAX and SFO lie 15 minutes apart in 60 of noise: about 0.8 at best; chance 0.25.
    assert metrics["examples"] == int((~missing[2000:]).sum()) and metrics["accuracy"] > 0.6


def test_labels_are_numbers_as_the_rows_labels_are_read():
    # Whether the labels are numbers was asked of NumPy ("1_000" is 1000) while the
    # rows' labels are read by pandas (NaN): the two now agree.
    from sklearn_sketch.cli._inputs import _finite_numbers, _numeric_labels

    for texts in (["1", "2.5"], ["1_000", "2"], [" 3 ", "4"], ["inf", "1"], ["0x10", "1"],
                  ["1e3", "-2"]):
        labels = np.array(texts)
        values = _numeric_labels(labels)
        assert (values is not None) == bool(np.isfinite(_finite_numbers(labels)).all())
        if values is not None:
            np.testing.assert_array_equal(values, _finite_numbers(labels))


def test_labels_read_without_pandas_as_pandas_reads_them(monkeypatch):
    # Reads, svmlight and VW need no pandas: a fresh 'pip install .' read the labels
    # of 'fit --fasta G.fa:ecoli ...' through pandas and stopped with a traceback.
    import sklearn_sketch.cli._inputs as inputs

    texts = np.array(["1", "2.5", "1_000", " 3 ", "inf", "-inf", "nan", "0x10", "1e3", "-2",
                      "ecoli", "", "1,5", "+4", ".5"])
    with_pandas = inputs._finite_numbers(texts)
    monkeypatch.setattr(inputs, "find_spec", lambda name: None)
    np.testing.assert_array_equal(inputs._finite_numbers(texts), with_pandas)
    assert inputs._numeric_labels(np.array(["ecoli", "saureus"])) is None
    np.testing.assert_array_equal(inputs._numeric_labels(np.array(["2", "10"])), [2.0, 10.0])


def _series(n=300, seed=0):
    """A regression in time order: two trending columns and their sum, rows by time."""
    rng = np.random.default_rng(seed)
    time = np.arange(n) / n
    frame = pd.DataFrame({f"c{j}": (time * (1 + j) + 0.02 * rng.normal(size=n)).round(4)
                          for j in range(2)})
    frame["kind"] = rng.choice(list("ab"), n)
    frame["y"] = (frame.c0 + frame.c1 + 0.05 * rng.normal(size=n)).round(4)
    return frame


def test_a_series_in_time_order_is_read_by_its_numbers_to_follow_its_trend(tmp_path, capsys):
    # Held out at its end, a series' new rows lie past its training range, where
    # intervals held the model to its last level (R's US employment series, split in
    # time order: R^2 -12.6 against Ridge's 0.43; read as numbers 0.19).
    from sklearn_sketch._model_files import read_model

    frame = _series()
    train, test = tmp_path / "train.csv", tmp_path / "test.csv"
    frame[:210].to_csv(train, index=False)
    frame[210:].to_csv(test, index=False)
    bias = {}
    for name, extra in (("numbers", []), ("intervals", ["--bins", "16"])):
        model = str(tmp_path / f"{name}.skm")
        assert main(["fit", str(train), "--label", "y", "-o", model, *extra]) == 0
        err = capsys.readouterr().err
        assert ("are read as numbers only" in err) == (name == "numbers"), err
        csv = read_model(model)[1]["input"]["csv"]
        assert csv.get("numbers_only", []) == (["c0", "c1"] if name == "numbers" else [])
        assert sorted(csv["bins"]) == ([] if name == "numbers" else ["c0", "c1"])
        predicted = np.array(run(capsys, ["predict", "-m", model, str(test)]).out.split(),
                             dtype=float)
        # The last 30 rows, furthest past the training range.
        bias[name] = float(np.mean(predicted[-30:] - frame.y.to_numpy()[-30:]))
    # Measured: numbers -0.002, intervals -0.110 (seeds 1-7: |numbers| <= 0.037,
    # intervals -0.038 to -0.100, below numbers by 0.05 at least).
    assert abs(bias["numbers"]) < 0.035 and bias["intervals"] < bias["numbers"] - 0.03, bias
    # The same rows in a random order are no series: read by interval as before.
    frame.sample(frac=1, random_state=0).to_csv(train, index=False)
    model = str(tmp_path / "shuffled.skm")
    assert main(["fit", str(train), "--label", "y", "-o", model, "--quiet"]) == 0
    csv = read_model(model)[1]["input"]["csv"]
    assert "numbers_only" not in csv and sorted(csv["bins"]) == ["c0", "c1"]


def test_a_series_column_in_a_cross_keeps_its_intervals(tmp_path):
    from sklearn_sketch._model_files import read_model

    train = tmp_path / "train.csv"
    _series().to_csv(train, index=False)
    model = str(tmp_path / "m.skm")
    assert main(["fit", str(train), "--label", "y", "-o", model, "--quiet",
                 "--cross", "kind,c1"]) == 0
    csv = read_model(model)[1]["input"]["csv"]
    assert csv["numbers_only"] == ["c0"] and sorted(csv["bins"]) == ["c1"]
