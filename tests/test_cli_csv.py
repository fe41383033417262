"""The command line on CSV files of categorical attributes, crossed."""
import json

import numpy as np
import pandas as pd
import pytest

from sklearn_sketch.cli import main


def write_rows(path, n, seed):
    """Late exactly when carrier=B and dest=Z."""
    rng = np.random.default_rng(seed)
    frame = pd.DataFrame({"carrier": rng.choice(list("ABCD"), n),
                          "dest": rng.choice(list("WXYZ"), n),
                          "hour": rng.integers(5, 23, n)})
    frame["status"] = np.where((frame.carrier == "B") & (frame.dest == "Z"), "late", "on_time")
    frame.to_csv(path, index=False)
    return frame


@pytest.fixture
def files(tmp_path):
    write_rows(tmp_path / "train.csv", 4000, 0)
    test = write_rows(tmp_path / "test.csv.gz", 1000, 1)
    test.drop(columns="status").to_csv(tmp_path / "unlabelled.csv", index=False)
    return tmp_path, test


@pytest.mark.parametrize("estimator", ["awm", "mission", "bear", "wm"])
def test_crossed_csv_round_trip(files, capsys, estimator):
    folder, test = files
    model = folder / f"{estimator}.skm"
    assert main(["fit", "--csv", str(folder / "train.csv"), "--label", "status",
                 "--cross", "carrier,dest", "--estimator", estimator, "--epochs", "2",
                 "--param", "random_state=0",
                 "--quiet", "--output", str(model)]) == 0
    assert main(["select", "--model", str(model), "--top", "1", "--format", "json"]) == 0
    top = json.loads(capsys.readouterr().out)
    assert top[0]["name"] == "carrier=B^dest=Z"
    assert main(["evaluate", "--model", str(model), "--csv", str(folder / "test.csv.gz"),
                 "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out)["accuracy"] == 1.0
    assert main(["predict", "--model", str(model), "--csv", str(folder / "unlabelled.csv")]) == 0
    assert capsys.readouterr().out.split() == test.status.tolist()


@pytest.mark.parametrize("argv, message", [
    (["--csv", "{train}"], "--csv needs --label"),
    (["--csv", "{train}", "--label", "status", "--columns", "carrier,gate"],
     "unknown column(s) ['gate']"),
    (["--csv", "{train}", "--label", "status", "--cross", "carrier,dest", "--max-order", "2"],
     "--cross or --max-order, not both"),
    (["--csv", "{train}", "--label", "status", "--cross", "carrier"], "2 or 3 distinct fields"),
    (["--csv", "{train}", "--label", "carrier", "--columns", "carrier,dest"],
     "cannot be an attribute too"),
    (["--sample", "--max-order", "2"], "--max-order applies to --csv input only"),
])
def test_bad_csv_options_are_one_line_errors(files, capsys, argv, message):
    folder, _ = files
    out = folder / "m.skm"
    argv = [a.format(train=folder / "train.csv") for a in argv]
    assert main(["fit", *argv, "--quiet", "--output", str(out)]) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1
    assert not out.exists()


def test_a_csv_model_reads_csv_only(files, capsys):
    folder, _ = files
    model = folder / "m.skm"
    assert main(["fit", "--csv", str(folder / "train.csv"), "--label", "status", "--quiet",
                 "--output", str(model)]) == 0
    assert main(["evaluate", "--model", str(model), "--sample"]) == 2
    assert "trained on csv input" in capsys.readouterr().err
    assert main(["evaluate", "--model", str(model), "--csv",
                 str(folder / "unlabelled.csv")]) == 2
    assert "no label column 'status'" in capsys.readouterr().err


def test_a_zipped_csv_trains_as_the_csv(files, capsys):
    import zipfile

    folder, _ = files
    with zipfile.ZipFile(folder / "train.zip", "w") as archive:
        archive.write(folder / "train.csv", "train.csv")
    selected = []
    for path in (folder / "train.csv", folder / "train.zip"):
        model = folder / "model.skm"
        assert main(["fit", "--csv", str(path), "--label", "status", "--cross",
                     "carrier,dest", "--param", "random_state=0", "--quiet",
                     "--output", str(model)]) == 0
        assert main(["select", "--model", str(model), "--format", "json"]) == 0
        selected.append(json.loads(capsys.readouterr().out))
    assert selected[0] == selected[1] and selected[0][0]["name"] == "carrier=B^dest=Z"
