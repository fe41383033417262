"""sklearn-sketch explain: a CSV file in, the outliers' attribute combinations out."""
import json

import numpy as np
import pandas as pd
import pytest

from sklearn_sketch.cli import main


@pytest.fixture
def flights(tmp_path):
    """Delayed exactly when carrier=B and dest=Z; a tenth of the rows lack the delay."""
    rng = np.random.default_rng(0)
    n = 6_000
    frame = pd.DataFrame({"carrier": rng.choice(list("ABCD"), n),
                          "dest": rng.choice(list("WXYZ"), n),
                          "hour": rng.integers(5, 23, n)})
    frame["dep_delay"] = np.where((frame.carrier == "B") & (frame.dest == "Z"), 95.0,
                                  rng.uniform(-5, 15, n))
    frame.loc[::10, "dep_delay"] = np.nan
    path = tmp_path / "flights.csv.gz"
    frame.to_csv(path, index=False)
    return path


def test_explain_names_the_planted_combination(flights, tmp_path, capsys):
    out = tmp_path / "why.json"
    assert main(["explain", str(flights), "--outlier", "dep_delay > q0.9", "--columns",
                 "carrier,dest,hour", "--format", "json", "--output", str(out), "--quiet",
                 "--chunk-rows", "1000"]) == 0
    report = json.loads(out.read_text())
    assert report["explanations"][0]["feature"] == "carrier=B^dest=Z"
    assert report["rows"] == 5_400 and report["skipped_missing_metric"] == 600
    assert report["memory_bytes"] <= 128 * 1024
    frame = pd.read_csv(flights)
    assert report["threshold"] == pytest.approx(frame.dep_delay.quantile(0.9), abs=2.0)
    assert report["outliers"] == int((frame.dep_delay > report["threshold"]).sum())
    assert main(["explain", str(flights), "--outlier", "dep_delay > 30", "--quiet"]) == 0
    text = capsys.readouterr().out.splitlines()
    assert text[1].split("\t")[-1] == "feature" and text[2].endswith("carrier=B^dest=Z")


@pytest.mark.parametrize("argv, message", [
    (["--outlier", "dep_delay > 30", "--columns", "carrier,gate"], "unknown column(s) ['gate']"),
    (["--outlier", "speed > 30"], "metric 'speed' is not a column"),
    (["--outlier", "carrier > q0.5"], "metric 'carrier' must be numeric"),
    (["--outlier", "dep_delay > 500"], "makes none of the first"),
    (["--outlier", "dep_delay > 30", "--max-order", "4"], "invalid choice: 4"),
    (["--outlier", "dep_delay >> 30"], "is not METRIC OP VALUE"),
])
def test_bad_input_is_one_line_status_2_and_nothing_written(flights, tmp_path, capsys, argv,
                                                           message):
    out = tmp_path / "why.txt"
    assert main(["explain", str(flights), *argv, "--output", str(out), "--quiet"]) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1
    assert not out.exists()
