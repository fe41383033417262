"""sklearn-sketch explain: a CSV file in, the outliers' attribute combinations out."""
import json
import sys

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


def test_a_column_of_one_value_is_named_and_left_out(flights, tmp_path, capsys):
    frame = pd.read_csv(flights)
    frame["year"] = 2013
    path = tmp_path / "year.csv"
    frame.to_csv(path, index=False)
    assert main(["explain", str(path), "--outlier", "dep_delay > 30", "--format", "json",
                 "--chunk-rows", "1000"]) == 0
    captured = capsys.readouterr()
    report = json.loads(captured.out)
    assert report["constant_columns"] == {"year": "2013"}
    assert "note: year=2013: one value in every row, left out" in captured.err
    assert report["explanations"][0]["feature"] == "carrier=B^dest=Z"
    assert not any("year=" in e["feature"] for e in report["explanations"])


@pytest.mark.parametrize("rule", ["dep_delay > q0.9", "dep_delay > 30"])
def test_a_few_words_among_the_metric_numbers_are_missing_values(flights, tmp_path, capsys,
                                                                  rule):
    # "?" for unknown in one row of 200: skipped and counted, as fit reads a label column;
    # in one row of 30 the column is text, an error, whether or not a first pass reads it.
    frame = pd.read_csv(flights)
    unknown = frame.index[::200]
    frame["dep_delay"] = frame.dep_delay.astype(object)
    frame.loc[unknown, "dep_delay"] = "?"
    path = tmp_path / "unknown.csv"
    frame.to_csv(path, index=False)
    assert main(["explain", str(path), "--outlier", rule, "--format", "json"]) == 0
    captured = capsys.readouterr()
    report = json.loads(captured.out)
    assert f"note: '?' ({len(unknown)} rows): not numbers among the dep_delay values" \
        in captured.err
    missing = frame.dep_delay.isna() | frame.index.isin(unknown)
    assert report["skipped_missing_metric"] == missing.sum()
    assert report["rows"] == len(frame) - missing.sum()
    assert report["explanations"][0]["feature"] == "carrier=B^dest=Z"
    frame.loc[::30, "dep_delay"] = "?"
    frame.to_csv(path, index=False)
    out = tmp_path / "why.json"
    assert main(["explain", str(path), "--outlier", rule, "--output", str(out)]) == 2
    err = capsys.readouterr().err
    assert "metric 'dep_delay' must be numeric" in err and "'?' in" in err
    assert err.count("\n") == 1 and not out.exists()


def test_identifiers_are_left_out_unless_listed(flights, tmp_path, capsys):
    # A row's id is a different value in every row: no combination of it explains more
    # than one row. Left out when the columns are every column; kept when named.
    frame = pd.read_csv(flights)
    frame.insert(0, "id", [f"r{i}" for i in range(len(frame))])
    path = tmp_path / "ids.csv"
    frame.to_csv(path, index=False)
    argv = ["explain", str(path), "--outlier", "dep_delay > 30", "--format", "json"]
    assert main(argv) == 0
    captured = capsys.readouterr()
    report = json.loads(captured.out)
    assert "note: id: a different value in each of the first 6,000 rows" in captured.err
    assert report["explanations"][0]["feature"] == "carrier=B^dest=Z"
    assert not any("id=" in e["feature"] for e in report["explanations"])
    assert main(argv + ["--columns", "id,carrier,dest", "--min-support", "0",
                        "--quiet"]) == 0
    captured = capsys.readouterr()
    assert captured.err == ""
    assert any("id=" in e["feature"] for e in json.loads(captured.out)["explanations"])
    # Nothing but identifiers: a one-line error.
    frame[["id", "dep_delay"]].to_csv(path, index=False)
    assert main(argv) == 2
    assert "holds only identifiers (id" in capsys.readouterr().err


def test_a_column_of_quantities_is_explained_by_its_intervals(tmp_path, capsys):
    # Delayed exactly when the temperature is above 30 (a tenth of the hours, each
    # value a category of one or two rows); the hour, whole numbers, stays a category,
    # and so do flight numbers and codes with -1 for none; a signed whole quantity
    # (minutes early or late) is read by intervals too.
    rng = np.random.default_rng(1)
    n = 8_000
    frame = pd.DataFrame({"temp": np.round(rng.uniform(0, 33.3, n), 2),
                          "hour": rng.integers(0, 24, n),
                          "flight": rng.integers(1, 5000, n),
                          "code": np.where(rng.random(n) < 0.1, -1, rng.integers(0, 100, n)),
                          "early": rng.integers(-60, 200, n),
                          "carrier": rng.choice(list("ABCD"), n)})
    frame["delay"] = np.where(frame.temp > 30, 60.0, rng.uniform(0, 20, n))
    path = tmp_path / "hours.csv"
    frame.to_csv(path, index=False)
    argv = ["explain", str(path), "--outlier", "delay > 30", "--format", "json",
            "--chunk-rows", "2000"]
    assert main(argv) == 0
    captured = capsys.readouterr()
    report = json.loads(captured.out)
    assert "note: temp, early: quantities (numbers with fractions or signs), read as 10 " \
        "intervals" in captured.err
    assert len(report["binned_columns"].pop("early")) == 9
    edges = np.array(report["binned_columns"].pop("temp"))
    assert report["binned_columns"] == {} and edges.size == 9
    # The deciles of the column, to the KLL sketch's rank error and four digits.
    ranks = (frame.temp.to_numpy()[:, None] < edges).mean(axis=0)
    np.testing.assert_allclose(ranks, np.arange(1, 10) / 10, atol=0.01)
    top = report["explanations"][0]
    assert top["feature"] == f"temp=[{edges[-1]:.6g},inf)", report["explanations"][:3]
    assert top["support"] == (frame.temp >= edges[-1]).sum() and top["rows"] == n
    assert not any(e["feature"].startswith(("hour=[", "flight=[", "code=["))
                   for e in report["explanations"])
    # --bins 0: every temperature its own category, none an interval.
    assert main(argv + ["--bins", "0", "--quiet"]) == 0
    captured = capsys.readouterr()
    report = json.loads(captured.out)
    assert captured.err == "" and report["binned_columns"] == {}
    assert not any("temp=[" in e["feature"]
                   for e in report["explanations"])


def test_a_value_that_holds_most_rows_is_an_interval_of_its_own(tmp_path, capsys):
    # Rain is 0 in 92% of the hours, so its nine deciles are 0: one edge put every
    # hour in [0,inf) and the column was left out as one value. Delays follow rain.
    rng = np.random.default_rng(5)
    n = 10_000
    rain = np.where(rng.random(n) < 0.92, 0.0, np.round(rng.uniform(0.01, 2, n), 2))
    frame = pd.DataFrame({"rain": rain, "carrier": rng.choice(list("ABCD"), n)})
    frame["delay"] = np.where(rain > 0, 60.0, rng.uniform(0, 20, n))
    path = tmp_path / "hours.csv"
    frame.to_csv(path, index=False)
    assert main(["explain", str(path), "--outlier", "delay > 30", "--format", "json",
                 "--quiet"]) == 0
    report = json.loads(capsys.readouterr().out)
    dry, wet = report["binned_columns"]["rain"]  # wet: the first value above 0 (1/1000)
    assert dry == 0 and 0 < wet <= np.quantile(rain[rain > 0], 0.02)
    top = report["explanations"][0]
    assert top["feature"] == f"rain=[{wet:.6g},inf)" and top["support"] == (rain >= wet).sum()
    assert "rain" not in report.get("constant_columns", {})


@pytest.mark.parametrize("argv, message", [
    (["--outlier", "dep_delay > 30", "--columns", "carrier,gate"], "unknown column(s) ['gate']"),
    (["--outlier", "speed > 30"], "metric 'speed' is not a column"),
    (["--outlier", "carrier > q0.5"], "metric 'carrier' must be numeric"),
    (["--outlier", "dep_delay > 500"], "makes none of the first"),
    (["--outlier", "dep_delay > 30", "--max-order", "4"], "invalid choice: 4"),
    (["--outlier", "dep_delay >> 30"], "is not METRIC OP VALUE"),
    (["--outlier", "dep_delay > 30", "--bins", "1"], "--bins must be 0"),
])
def test_bad_input_is_one_line_status_2_and_nothing_written(flights, tmp_path, capsys, argv,
                                                           message):
    out = tmp_path / "why.txt"
    assert main(["explain", str(flights), *argv, "--output", str(out), "--quiet"]) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1
    assert not out.exists()


def test_explain_without_pandas_is_a_one_line_error(flights, tmp_path, capsys, monkeypatch):
    monkeypatch.setitem(sys.modules, "pandas", None)  # import pandas raises ImportError
    out = tmp_path / "report.txt"
    assert main(["explain", str(flights), "--outlier", "delay > 30", "--output", str(out)]) == 2
    err = capsys.readouterr().err
    assert "explain reads CSV files with pandas" in err and err.count("\n") == 1
    assert not out.exists()


def test_late_entrants_are_counted_over_every_row_unless_one_pass(tmp_path):
    # c=new first appears half way: one pass counts it over the rows since it entered,
    # the default second pass over the whole file.
    rng = np.random.default_rng(1)
    n = 8_000
    frame = pd.DataFrame({"a": rng.choice(list("xyzw"), n), "c": rng.choice(list("pqr"), n)})
    late = (np.arange(n) >= 4_200) & (np.arange(n) % 3 == 0)
    frame.loc[late, "c"] = "new"
    frame["delay"] = np.where(late & (np.arange(n) % 2 == 0), 60.0, rng.uniform(0, 40, n))
    path = tmp_path / "late.csv"
    frame.to_csv(path, index=False)
    reports = {}
    for option in ([], ["--one-pass"]):
        out = tmp_path / "why.json"
        assert main(["explain", str(path), "--outlier", "delay > 30", "--format", "json",
                     "--output", str(out), "--quiet", "--chunk-rows", "1000",
                     "--min-support", "0", *option]) == 0
        reports[bool(option)] = {row["feature"]: row
                                 for row in json.loads(out.read_text())["explanations"]}
    one_pass, recounted = reports[True], reports[False]
    assert one_pass["c=new"]["rows"] < n
    assert {row["rows"] for row in recounted.values()} == {n}
    outlier = frame.delay > 30
    for name, row in recounted.items():
        inside = np.ones(n, dtype=bool)
        for part in name.split("^"):
            field, value = part.split("=")
            inside &= (frame[field].astype(str) == value).to_numpy()
        assert (row["support"], row["outliers"]) == (inside.sum(), (inside & outlier).sum())


def _zipped(source, path, extra=None):
    """``source``'s bytes (gzip) as the one member of a zip archive (and ``extra`` files)."""
    import gzip
    import zipfile

    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("rows.csv", gzip.decompress(source.read_bytes()))
        for name in extra or []:
            archive.writestr(name, "a,b\n1,2\n")
    return path


def test_a_zip_is_streamed_and_explained_as_its_csv(flights, tmp_path, monkeypatch):
    # pandas reads a zip member whole before parsing; ZipFile.read is how it does it.
    import zipfile

    zipped = _zipped(flights, tmp_path / "flights.csv.zip")
    reports = []
    for path in (flights, zipped):
        out = tmp_path / "why.json"
        with monkeypatch.context() as patch:
            patch.setattr(zipfile.ZipFile, "read", lambda *a, **k: pytest.fail("read whole"))
            # A quantile of fewer than 2**20 values: exact, the same threshold every run.
            assert main(["explain", str(path), "--outlier", "dep_delay > q0.9", "--columns",
                         "carrier,dest,hour", "--format", "json", "--output", str(out),
                         "--quiet", "--chunk-rows", "1000"]) == 0
        report = json.loads(out.read_text())
        reports.append({k: v for k, v in report.items() if k not in ("file", "seconds")
                        and not k.endswith("per_second")})
    assert reports[0] == reports[1]


@pytest.mark.parametrize("extra, listed", [(["notes.csv"], "['rows.csv', 'notes.csv']"),
                                           (["__MACOSX/._rows.csv"], None)])
def test_a_zip_holds_one_csv_file(flights, tmp_path, capsys, extra, listed):
    zipped = _zipped(flights, tmp_path / "flights.zip", extra)
    status = main(["explain", str(zipped), "--outlier", "dep_delay > 30", "--quiet",
                   "--output", str(tmp_path / "why.txt")])
    if listed is None:  # macOS metadata beside the file is not a second file
        assert status == 0
        return
    assert status == 2
    err = capsys.readouterr().err
    assert f"flights.zip is a zip archive of 2 files, {listed}: one file is read" in err
    assert err.count("\n") == 1 and not (tmp_path / "why.txt").exists()


def test_progress_is_written_once_in_its_last_state_outside_a_terminal(capsys):
    # A log file or a pipe gets one line, not every rewrite glued together by '\r'.
    from sklearn_sketch.cli._report import Progress

    progress = Progress(quiet=False)
    for rows in (10, 20, 30):
        progress.show(f"{rows} rows")
    progress.end()
    assert capsys.readouterr().err == "30 rows\n"
    quiet = Progress(quiet=True)
    quiet.show("10 rows")
    quiet.end()
    assert capsys.readouterr().err == ""
