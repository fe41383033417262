"""The command line on CSV files of categorical attributes, crossed."""
import json
import os
import re
import sys

import numpy as np
import pandas as pd
import pytest

from sklearn_sketch import load
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
    (["--csv", "{train}"], "--csv needs --label, the column of the labels: "
                           "{train} has carrier, dest, hour, status"),
    (["--csv", "{train}", "--label", "status", "--columns", "carrier,gate"],
     "unknown column(s) ['gate']"),
    (["--csv", "{train}", "--label", "Status"],
     "unknown column(s) ['Status'] in ", ),
    (["--csv", "{train}", "--label", "Status"], "(did you mean 'status' for 'Status'?)"),
    (["--csv", "{train}", "--label", "status", "--cross", "carrier,dest", "--max-order", "2"],
     "--cross or --max-order, not both"),
    (["--csv", "{train}", "--label", "status", "--cross", "carrier"], "2 or 3 distinct fields"),
    (["--csv", "{train}", "--label", "carrier", "--columns", "carrier,dest"],
     "cannot be an attribute too"),
    (["--sample", "--max-order", "2"], "--max-order applies to --csv input only"),
    (["--sample", "--bins", "8"], "--bins applies to --csv input only"),
])
def test_bad_csv_options_are_one_line_errors(files, capsys, argv, message):
    folder, _ = files
    out = folder / "m.skm"
    argv = [a.format(train=folder / "train.csv") for a in argv]
    assert main(["fit", *argv, "--quiet", "--output", str(out)]) == 2
    err = capsys.readouterr().err
    assert message.format(train=folder / "train.csv") in err and err.count("\n") == 1
    assert not out.exists()


def test_csv_input_without_pandas_is_a_one_line_error(files, capsys, monkeypatch):
    folder, _ = files
    monkeypatch.setitem(sys.modules, "pandas", None)  # import pandas raises ImportError
    out = folder / "m.skm"
    assert main(["fit", "--csv", str(folder / "train.csv"), "--label", "status", "--quiet",
                 "--output", str(out)]) == 2
    err = capsys.readouterr().err
    assert "read with pandas, which is not installed" in err and err.count("\n") == 1
    assert not out.exists()


def test_number_labels_of_a_csv_are_checked_as_numbers(tmp_path, capsys):
    # A CSV's labels are read as text; a column of amounts or minutes is still one.
    rng = np.random.default_rng(0)
    frame = pd.DataFrame({"carrier": rng.choice(list("ABCD"), 400)})
    frame["delay"] = np.round(rng.normal(size=400) * 10, 2)
    path, out = tmp_path / "delays.csv", tmp_path / "m.skm"
    frame.to_csv(path, index=False)
    fit = ["fit", "--csv", str(path), "--label", "delay", "--output", str(out)]
    assert main(fit + ["--task", "classification"]) == 2
    err = capsys.readouterr().err
    assert "the labels are real numbers" in err and "--task regression" in err
    assert err.count("\n") == 1 and not out.exists()
    assert main(fit) == 0  # a quantity: a regression
    assert "real numbers, from" in capsys.readouterr().err
    assert type(load(out)).__name__ == "MissionRegressor"
    # Whole numbers are classes when few, or up to a hundred class codes (0 or 1 up, at
    # least 90% of those in between present); others are a quantity.
    small = ["--param", "sketch_width=64", "--param", "n_features_to_select=4"]
    cases = [(np.arange(20) - 20, False),           # few: classes, whatever they are
             (np.arange(21) - 20, True),            # more, not from 0 or 1
             (np.arange(100) + 1, False),           # codes 1 to 100
             (np.arange(101), True),                # more than a hundred
             (np.delete(np.arange(31), [5, 9, 17]), False),  # 28 of 0..30: 90% present
             (np.delete(np.arange(31), [5, 9, 17, 20]), True),  # 27: fewer
             (np.arange(30) * 10 + 2700, True)]     # grams
    for values, regression in cases:
        frame["delay"] = values[np.arange(400) % values.size]
        frame.to_csv(path, index=False)
        assert main(fit + small) == 0
        err = capsys.readouterr().err
        assert (f"the labels are {values.size} distinct whole numbers, from {values.min()} to "
                f"{values.max()}" in err) == regression
        assert ("a quantity, so fit trains a regressor" in err) == regression
        estimator = load(out)
        assert type(estimator).__name__ == ("MissionRegressor" if regression
                                            else "AWMSketchClassifier")
        assert regression or len(estimator.classes_) == values.size


def test_a_few_words_among_numbers_are_skipped_in_a_regression(tmp_path, capsys):
    # A "?" for unknown, or two lines run together, in a column of prices: the rows are
    # skipped and counted (not a classifier of a class a price), and evaluate does not
    # score them.
    rng = np.random.default_rng(0)
    frame = pd.DataFrame({"carrier": rng.choice(list("ABCD"), 400)})
    frame["price"] = np.round(rng.normal(size=400) * 10 + (frame["carrier"] == "A") * 20, 2)
    frame["price"] = frame["price"].astype(str)
    frame.loc[[3, 50], "price"] = "?"
    frame.loc[70, "price"] = "12.5AAPL"
    path, out = tmp_path / "prices.csv", tmp_path / "m.skm"
    frame.to_csv(path, index=False)
    fit = ["fit", "--csv", str(path), "--label", "price", "--output", str(out)]
    assert main(fit) == 0
    err = capsys.readouterr().err
    assert "3 of 400 rows, whose label is not a number ('12.5AAPL', '?'), are skipped" in err
    estimator = load(out)
    assert type(estimator).__name__ == "MissionRegressor"
    # The same model as one trained on the file without those rows.
    clean = tmp_path / "clean.csv"
    frame.drop(index=[3, 50, 70]).to_csv(clean, index=False)
    assert main(fit[:2] + [str(clean)] + fit[3:-1] + [str(tmp_path / "c.skm")]) == 0
    assert "skipped" not in capsys.readouterr().err
    predictions = []
    for model in (out, tmp_path / "c.skm"):
        assert main(["predict", "--csv", str(clean), "--model", str(model)]) == 0
        predictions.append(capsys.readouterr().out)
    assert predictions[0] == predictions[1] and predictions[0].count("\n") == 397
    assert main(["evaluate", "--csv", str(path), "--model", str(out)]) == 0
    captured = capsys.readouterr()
    assert "3 of 400 examples have no label that is a number: they are not scored" in captured.err
    assert "examples\t397" in captured.out
    # Explicitly a regression: the same rows skipped; a classification keeps them as classes.
    assert main(fit + ["--task", "regression"]) == 0
    assert "3 of 400 rows" in capsys.readouterr().err
    assert main(fit + ["--task", "classification"]) == 0
    capsys.readouterr()
    assert "?" in load(out).classes_.tolist()
    # Beside few classes, or one number, a rare word is one more class.
    for numbers in (["0", "1"], ["1"]):
        frame["price"] = np.array(numbers)[np.arange(400) % len(numbers)]
        frame.loc[7, "price"] = "?"
        frame.to_csv(path, index=False)
        assert main(fit) == 0
        assert "skipped" not in capsys.readouterr().err
        assert sorted(load(out).classes_.tolist()) == sorted([*numbers, "?"])
    # Many words are not stray: no regression skips a third of its rows.
    frame.loc[:150, "price"] = "n.a."
    frame.loc[:3, "price"] = ["x", "y", "z", "w"]
    frame.to_csv(path, index=False)
    assert main(fit + ["--task", "regression"]) == 2
    assert "--task regression needs numeric labels, got 'n.a.', 'w', 'x', ..." in (
        capsys.readouterr().err)


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


def test_a_compressed_csv_trains_as_the_csv(files, capsys):
    # The compression is told by the first bytes (a gzip file named .csv), and bzip2
    # and xz are read as gzip is.
    import bz2
    import gzip
    import lzma
    import zipfile

    folder, _ = files
    with zipfile.ZipFile(folder / "train.zip", "w") as archive:
        archive.write(folder / "train.csv", "train.csv")
    text = (folder / "train.csv").read_bytes()
    for name, module in (("gzipped.csv", gzip), ("train.csv.bz2", bz2), ("train.csv.xz", lzma)):
        (folder / name).write_bytes(module.compress(text))
    (folder / "plain.csv.gz").write_bytes(text)   # a name that says gzip over plain text
    selected = []
    for path in (folder / "train.csv", folder / "train.zip", folder / "gzipped.csv",
                 folder / "train.csv.bz2", folder / "train.csv.xz", folder / "plain.csv.gz"):
        model = folder / "model.skm"
        assert main(["fit", "--csv", str(path), "--label", "status", "--cross",
                     "carrier,dest", "--param", "random_state=0", "--quiet",
                     "--output", str(model)]) == 0
        assert main(["select", "--model", str(model), "--format", "json"]) == 0
        selected.append(json.loads(capsys.readouterr().out))
    assert all(one == selected[0] for one in selected)
    assert selected[0][0]["name"] == "carrier=B^dest=Z"


# ------------------------------------------------------------ numeric columns
def write_measurements(path, n, seed, shift=0.0):
    """Late exactly when the delay (a continuous column) exceeds 30 minutes; the hour
    (18 integers) and the carrier are noise."""
    rng = np.random.default_rng(seed)
    delay = rng.normal(20, 25, n) + shift
    frame = pd.DataFrame({"carrier": rng.choice(list("ABCD"), n), "delay": delay.round(3),
                          "hour": rng.integers(5, 23, n)})
    frame["status"] = np.where(frame.delay > 30, "late", "on_time")
    frame.to_csv(path, index=False)
    return frame


def _metrics(capsys, argv):
    capsys.readouterr()
    assert main(argv + ["--format", "json"]) == 0
    return json.loads(capsys.readouterr().out)


def _accuracy_by_bins(folder, capsys, label):
    """Test accuracy of a model of ``folder``'s train.csv on its test.csv, by ``--bins``
    16 (numeric columns read as intervals and numbers) and 0 (categories only); the
    models are ``m16.skm`` and ``m0.skm`` there."""
    accuracy = {}
    for bins in ("16", "0"):
        model = str(folder / f"m{bins}.skm")
        assert main(["fit", "--csv", str(folder / "train.csv"), "--label", label,
                     "--bins", bins, "--quiet", "--output", model]) == 0
        accuracy[bins] = _metrics(capsys, ["evaluate", "--model", model, "--csv",
                                           str(folder / "test.csv")])["accuracy"]
    return accuracy


def test_a_numeric_column_is_read_as_its_interval_and_its_value(tmp_path, capsys):
    from sklearn_sketch._model_files import read_model
    from sklearn_sketch.cli._bins import numeric_bins

    train = write_measurements(tmp_path / "train.csv", 12_000, 0)
    write_measurements(tmp_path / "test.csv", 2_000, 1)
    accuracy = _accuracy_by_bins(tmp_path, capsys, "status")
    # Every test delay is a value never seen in training: as a category it says nothing
    # (measured 0.66, the majority class), its interval does (0.97).
    assert accuracy["16"] > 0.9 and accuracy["16"] > accuracy["0"] + 0.15, accuracy
    # The edges are the first 10,000 rows' quantiles, kept in the model; the hour (18
    # integers) and the carrier stay categories.
    model = str(tmp_path / "m16.skm")
    _, metadata = read_model(model)
    edges = metadata["input"]["csv"]["bins"]
    assert list(edges) == ["delay"]
    first = train[:10_000].astype(str)
    assert edges == numeric_bins(first, ["carrier", "delay", "hour"], 16)
    np.testing.assert_allclose(edges["delay"], np.quantile(train.delay[:10_000],
                                                           np.arange(1, 16) / 16))
    names = [f["name"] for f in json.loads(_select(capsys, model))]
    assert any(re.fullmatch(r"delay=\[[-\d.e+]+,[-\d.e+inf]+\)", n) for n in names), names
    # predict cuts a file of other values by the model's edges, not its own.
    write_measurements(tmp_path / "late.csv", 500, 2, shift=500)
    assert main(["predict", "--model", model, "--csv", str(tmp_path / "late.csv"),
                 "--output", str(tmp_path / "p.txt")]) == 0
    assert set((tmp_path / "p.txt").read_text().split()) == {"late"}


def test_a_small_table_of_few_distinct_numbers_reads_them_as_numbers(tmp_path, capsys):
    from sklearn_sketch.cli._bins import numeric_scales

    # 150 rows, a length of 40 distinct values (a tenth of the rows or more): a
    # quantity, read as a number; the test rows' lengths are values training never
    # saw, which as categories say nothing. A month among 10,000 rows, and a flag,
    # stay categories only.
    rng = np.random.default_rng(0)
    for name, offset in (("train", 0.0), ("test", 0.05)):
        length = rng.integers(40, size=150) / 10 + offset
        pd.DataFrame({"length": length, "flag": rng.integers(2, size=150),
                      "y": np.where(length > 2.0, "long", "short")}).to_csv(
            tmp_path / f"{name}.csv", index=False)
    train = pd.read_csv(tmp_path / "train.csv", dtype=str)
    scales = numeric_scales(train, ["length", "flag"])
    assert list(scales) == ["length"]
    assert scales["length"] == pytest.approx(train.length.astype(float).std(ddof=1))
    many = pd.DataFrame({"month": rng.integers(1, 13, size=10_000).astype(str)})
    assert numeric_scales(many, ["month"]) == {}
    accuracy = _accuracy_by_bins(tmp_path, capsys, "y")
    # measured: 1.0 as numbers, 0.44 as categories only
    assert accuracy["16"] > 0.85 and accuracy["0"] < 0.7, accuracy


def test_tab_semicolon_and_bar_separated_files_are_read_as_commas_are(tmp_path, capsys):
    # So are a spreadsheet's numbers with a decimal comma (separated by other than
    # commas), a comma followed by a space, and columns between runs of spaces.
    frame = write_measurements(tmp_path / "rows.csv", 600, 0)
    files = {"comma": tmp_path / "rows.csv"}
    for name, sep, path in (("tab", "\t", "rows.tsv"), ("tab, gzip", "\t", "rows.tsv.gz"),
                            ("semicolon", ";", "rows;.csv"), ("bar", "|", "rows.txt"),
                            ("spaces", " ", "rows.dat")):
        files[name] = tmp_path / path
        frame.to_csv(files[name], sep=sep, index=False)
    files["decimal comma"] = tmp_path / "rows_eu.csv"
    frame.to_csv(files["decimal comma"], sep=";", decimal=",", index=False)
    assert "20,9" in files["decimal comma"].read_text()
    files["comma, space"] = tmp_path / "rows_spaced.csv"
    files["comma, space"].write_text(files["comma"].read_text().replace(",", ", "))
    models, predictions = {}, {}
    for name, path in files.items():
        models[name] = str(tmp_path / f"{name}.skm")
        assert main(["fit", "--csv", str(path), "--label", "status", "--quiet",
                     "--output", models[name]]) == 0
        out = tmp_path / f"{name}.txt"
        # Each model predicts the comma file, and the comma model each file, alike.
        assert main(["predict", "--model", models[name], "--csv", str(files["comma"]),
                     "--output", str(out)]) == 0
        predictions[name] = out.read_text()
        assert main(["predict", "--model", models["comma"], "--csv", str(path),
                     "--output", str(out)]) == 0
        assert out.read_text() == predictions["comma"]
    assert len(set(predictions.values())) == 1
    assert set(predictions["tab"].split()) == {"late", "on_time"}


def test_numbers_grouped_by_thousands_read_as_numbers(tmp_path, capsys):
    # A US spreadsheet's export writes "$10,015.47" (quoted) and "45%": as text, a price
    # label was refused as an identifier, and a measurement read as categories. A
    # decimal-comma file's 10.015,47 likewise.
    frame = write_measurements(tmp_path / "plain.csv", 800, 5)
    frame["delay"] = (frame["delay"] * 1000).round(2)
    frame["cost"] = (frame["delay"] * 3 + 2000).round(2)
    frame.to_csv(tmp_path / "plain.csv", index=False)
    us, eu = frame.copy(), frame.copy()
    for column in ("delay", "cost"):
        us[column] = [f"{v:,.2f}" for v in frame[column]]
        eu[column] = [f"{v:,.2f}".replace(",", " ").replace(".", ",").replace(" ", ".")
                      for v in frame[column]]
    us["cost"] = "$" + us["cost"]   # a currency sign, and a share in percent
    us["hour"] = us["hour"].astype(str) + "%"
    us.to_csv(tmp_path / "us.csv", index=False)
    eu.to_csv(tmp_path / "eu.csv", index=False, sep=";")
    assert re.search(r'"\$-?\d{1,3},\d{3}', (tmp_path / "us.csv").read_text())
    assert re.search(r';-?\d{1,3}\.\d{3},\d', (tmp_path / "eu.csv").read_text())
    outputs = []
    for name in ("plain.csv", "us.csv", "eu.csv"):
        model = str(tmp_path / f"{name}.skm")
        # A sketch as wide as the default's: the three files' keys collide alike (none).
        assert main(["fit", "--csv", str(tmp_path / name), "--label", "cost", "--columns",
                     "carrier,delay,hour", "--quiet", "--output", model,
                     "--param", "sketch_width=262144"]) == 0
        assert main(["predict", "--model", model, "--csv", str(tmp_path / name)]) == 0
        outputs.append(capsys.readouterr().out)
    assert outputs[1] == outputs[0] and outputs[2] == outputs[0]
    assert _metrics(capsys, ["evaluate", "--model", str(tmp_path / "us.csv.skm"), "--csv",
                             str(tmp_path / "us.csv")])["r2"] > 0.9


def test_a_header_of_tabs_over_rows_aligned_by_spaces_reads_by_the_rows(tmp_path):
    # ISLP's Auto.data: read by its header's tabs, every row was one value.
    from sklearn_sketch.cli._csv import read_csv

    path = tmp_path / "auto.data"
    path.write_text('mpg\tcylinders\thorsepower weight\tname\n'
                    '18.0   8   130.0      3504.\t"chevrolet chevelle malibu"\n'
                    '15.0   8   ?          3693.\t"buick skylark 320"\n'
                    '31.0   4   65.00      1773.\t"toyota corolla 1200"\n')
    frame = read_csv(path, dtype=str)
    assert frame.columns.tolist() == ["mpg", "cylinders", "horsepower", "weight", "name"]
    assert frame.name.tolist() == ["chevrolet chevelle malibu", "buick skylark 320",
                                   "toyota corolla 1200"]
    assert frame.horsepower.tolist() == ["130.0", "?", "65.00"]
    # A tab-separated file whose rows hold as many tabs as its header stays so.
    path.write_text("a b\tc\n1 2\t3\n4 5\t6\n")
    assert read_csv(path, dtype=str).columns.tolist() == ["a b", "c"]


def test_labels_that_differ_only_in_case_or_spaces_are_warned_of(tmp_path, capsys):
    frame = write_rows(tmp_path / "rows.csv", 900, 7)
    rng = np.random.default_rng(7)
    frame["status"] = np.where(rng.random(900) < 0.5, frame["status"].str.upper() + " ",
                               frame["status"])
    frame.to_csv(tmp_path / "rows.csv", index=False)
    assert main(["fit", "--csv", str(tmp_path / "rows.csv"), "--label", "status", "--quiet",
                 "--output", str(tmp_path / "m.skm")]) == 0
    err = capsys.readouterr().err
    assert ("warning: 2 group(s) of labels differ only in letter case or spaces "
            "('LATE ', 'late'; 'ON_TIME ', 'on_time')") in err
    write_rows(tmp_path / "rows.csv", 900, 7)
    assert main(["fit", "--csv", str(tmp_path / "rows.csv"), "--label", "status", "--quiet",
                 "--output", str(tmp_path / "m.skm")]) == 0
    assert "letter case" not in capsys.readouterr().err


def test_a_header_of_names_in_single_quotes_reads_the_names(tmp_path, capsys):
    # statsmodels' anes96.csv: 'popul'<tab>'TVnews'...; --label vote was unknown.
    from sklearn_sketch.cli._csv import read_csv

    frame = write_rows(tmp_path / "rows.csv", 600, 6)
    lines = (tmp_path / "rows.csv").read_text().splitlines()
    quoted = "\t".join(f"'{name}'" for name in lines[0].split(","))
    (tmp_path / "quoted.tsv").write_text(
        "\n".join([quoted] + [line.replace(",", "\t") for line in lines[1:]]) + "\n")
    read = read_csv(tmp_path / "quoted.tsv", dtype=str)
    pd.testing.assert_frame_equal(read, read_csv(tmp_path / "rows.csv", dtype=str))
    assert main(["fit", "--csv", str(tmp_path / "quoted.tsv"), "--label", "status", "--quiet",
                 "--output", str(tmp_path / "m.skm")]) == 0
    assert len(frame) == 600
    # A name quoted among names that are not stays as written.
    (tmp_path / "one.csv").write_text("'a',b\n1,2\n")
    assert read_csv(tmp_path / "one.csv").columns.tolist() == ["'a'", "b"]


def test_a_fixed_width_table_with_spaces_in_its_values_reads_by_its_columns(tmp_path, capsys):
    # lifelines' divorce.dat (Stata's printed table): values such as "12-15 years"
    # split by spaces into more fields than names, and the file was one column.
    from sklearn_sketch.cli._csv import read_csv

    rng = np.random.default_rng(0)
    n = 3000
    frame = pd.DataFrame({"id": np.arange(1, n + 1),
                          "heduc": rng.choice(["< 12 years", "12-15 years", "16+ years"], n),
                          "years": rng.uniform(0, 40, n).round(3)})
    frame["div"] = np.where(frame.heduc == "< 12 years", "Yes", "No")
    lines = ["%8s %13s %9s %5s" % tuple(frame.columns)]
    lines += ["%8d %13s %9.3f %5s" % row for row in frame.itertuples(index=False)]
    (tmp_path / "divorce.dat").write_text("\n".join(lines) + "\n")
    frame.to_csv(tmp_path / "divorce.csv", index=False, float_format="%.3f")
    read = read_csv(tmp_path / "divorce.dat", dtype=str)
    pd.testing.assert_frame_equal(read, read_csv(tmp_path / "divorce.csv", dtype=str))
    chunks = list(read_csv(tmp_path / "divorce.dat", dtype=str, usecols=["heduc", "div"],
                           chunksize=1000))
    assert [len(c) for c in chunks] == [1000, 1000, 1000]
    pd.testing.assert_frame_equal(pd.concat(chunks, ignore_index=True), read[["heduc", "div"]])
    outputs = []
    for name in ("divorce.dat", "divorce.csv"):
        model = str(tmp_path / "m.skm")
        assert main(["fit", "--csv", str(tmp_path / name), "--label", "div", "--columns",
                     "heduc,years", "--quiet", "--output", model]) == 0
        assert main(["predict", "--model", model, "--csv", str(tmp_path / name)]) == 0
        outputs.append(capsys.readouterr().out)
    assert outputs[0] == outputs[1]
    assert outputs[0].split() == frame["div"].tolist()


def test_comment_lines_before_the_header_are_not_read(tmp_path, capsys):
    # A tool's notes above its table: the first was read as the header, one column.
    from sklearn_sketch.cli._csv import read_csv

    frame = write_rows(tmp_path / "rows.csv", 1200, 5)
    text = (tmp_path / "rows.csv").read_text()
    (tmp_path / "noted.csv").write_text("# made by a tool, v2, on a day\n#\n" + text)
    # A header opening with '#' is a header (VCF's #CHROM, a column '#').
    (tmp_path / "hashed.tsv").write_text(
        "##fileformat=made-up\n#carrier\tdest\thour\tstatus\n"
        + frame.to_csv(sep="\t", index=False, header=False))
    pd.testing.assert_frame_equal(read_csv(tmp_path / "noted.csv", dtype=str),
                                  read_csv(tmp_path / "rows.csv", dtype=str))
    hashed = read_csv(tmp_path / "hashed.tsv", dtype=str)
    assert hashed.columns.tolist() == ["#carrier", "dest", "hour", "status"]
    assert len(hashed) == 1200
    outputs = []
    for name in ("rows.csv", "noted.csv"):
        model = str(tmp_path / "m.skm")
        assert main(["fit", "--csv", str(tmp_path / name), "--label", "status", "--max-order",
                     "2", "--quiet", "--output", model]) == 0
        assert main(["predict", "--model", model, "--csv", str(tmp_path / name),
                     "--chunk-rows", "500"]) == 0
        outputs.append((capsys.readouterr().out, _select(capsys, model)))
    assert outputs[1] == outputs[0]


def test_rows_ending_with_a_separator_keep_their_columns(tmp_path, capsys):
    # pandas read a row of one field more than the header as a row name first: a file
    # whose rows end with a comma had every value moved one column left, silently.
    from sklearn_sketch.cli._csv import read_csv

    write_rows(tmp_path / "rows.csv", 900, 8)
    lines = (tmp_path / "rows.csv").read_text().splitlines()
    (tmp_path / "trailing.csv").write_text("\n".join([lines[0]] + [l + "," for l in lines[1:]])
                                           + "\n")
    plain = read_csv(tmp_path / "rows.csv", dtype=str)
    pd.testing.assert_frame_equal(read_csv(tmp_path / "trailing.csv", dtype=str), plain)
    outputs = []
    for name in ("rows.csv", "trailing.csv"):
        assert main(["fit", "--csv", str(tmp_path / name), "--label", "status", "--quiet",
                     "--max-order", "2", "--output", str(tmp_path / "m.skm")]) == 0
        outputs.append(_select(capsys, str(tmp_path / "m.skm")))
    assert outputs[0] == outputs[1]
    # R's write.table: a row's name first in every row, under no name, by spaces or commas.
    (tmp_path / "r.txt").write_text('"carrier" "hour"\n"1" "B" 5\n"2" "A" 7\n')
    (tmp_path / "r.csv").write_text('"carrier","hour"\n"1","B",5\n"2","A",7\n')
    for name in ("r.txt", "r.csv"):
        frame = read_csv(tmp_path / name, dtype=str)
        assert frame.to_dict("list") == {"carrier": ["B", "A"], "hour": ["5", "7"]}
    # A first row of one value too many does not move the others.
    (tmp_path / "long.csv").write_text("a,b\n1,x,9\n2,y\n")
    with pytest.warns(Warning):
        frame = read_csv(tmp_path / "long.csv", dtype=str)
    assert frame.to_dict("list") == {"a": ["1", "2"], "b": ["x", "y"]}


def test_the_row_numbers_of_an_export_are_not_read(tmp_path, capsys):
    # pandas' to_csv writes its index first under no name, as R's write.csv does.
    from sklearn_sketch._model_files import read_model

    frame = write_quantity(tmp_path / "plain.csv", 3000, 0)
    frame.sample(frac=1.0, random_state=0).to_csv(tmp_path / "train.csv")
    assert pd.read_csv(tmp_path / "train.csv").columns[0] == "Unnamed: 0"
    model = str(tmp_path / "m.skm")
    assert main(["fit", "--csv", str(tmp_path / "train.csv"), "--label", "y", "--epochs", "1", "--output", model]) == 0
    err = capsys.readouterr().err
    assert ("note: column 1 has no name and holds whole numbers, each once: the row "
            "numbers of an export") in err
    assert read_model(model)[1]["input"]["csv"]["columns"] == ["carrier", "x"]
    # Named, or asked for, it is read; a column without a name whose numbers repeat
    # is not a row number.
    assert main(["fit", "--csv", str(tmp_path / "train.csv"), "--label", "y", "--epochs", "1", "--columns", "Unnamed: 0,x", "--output", model]) == 0
    assert read_model(model)[1]["input"]["csv"]["columns"] == ["Unnamed: 0", "x"]
    frame.rename(columns={"carrier": ""}).assign(**{"": 7}).to_csv(
        tmp_path / "twice.csv", index=False)
    frame.to_csv(tmp_path / "named.csv", index_label="id")
    for name, kept in (("twice.csv", ["Unnamed: 0", "x"]), ("named.csv", ["id", "carrier", "x"])):
        capsys.readouterr()
        assert main(["fit", "--csv", str(tmp_path / name), "--label", "y", "--epochs", "1", "--output", model]) == 0
        assert "row numbers" not in capsys.readouterr().err
        assert read_model(model)[1]["input"]["csv"]["columns"] == kept


def test_fit_refuses_a_csv_with_no_column_but_the_label(tmp_path, capsys):
    # A single series, as R exports one (row numbers, then the values), or a file of
    # labels alone, leaves nothing to learn from: an intercept is not a model.
    model = str(tmp_path / "m.skm")
    frame = write_quantity(tmp_path / "plain.csv", 300, 0)
    frame[["y"]].to_csv(tmp_path / "series.csv")
    frame[["y"]].to_csv(tmp_path / "labels.csv", index=False)
    for name, why in (("series.csv", "has only 'Unnamed: 0', whole numbers without a name"),
                      ("labels.csv", "has only the label 'y'")):
        capsys.readouterr()
        assert main(["fit", "--csv", str(tmp_path / name), "--label", "y", "--quiet",
                     "--output", model]) == 2
        err = capsys.readouterr().err
        assert "error: no column to learn from" in err and why in err
        assert not (tmp_path / "m.skm").exists()
    # Asked for, the row numbers are a column like any other.
    assert main(["fit", "--csv", str(tmp_path / "series.csv"), "--label", "y", "--quiet",
                 "--epochs", "1", "--columns", "Unnamed: 0", "--output", model]) == 0


def test_a_numeric_column_of_distinct_values_has_no_value_categories(tmp_path):
    # Another row seldom if ever shares a value of a column whose values mostly differ:
    # a category per value could only learn training rows by heart.
    from sklearn_sketch.cli._inputs import _CsvReader
    from sklearn_sketch.cli._bins import (DISTINCT_SHARE, distinct_columns, numeric_bins,
                                          numeric_scales)

    rng = np.random.default_rng(0)
    # 300 distinct values in 500 rows (0.6); 240 (0.48).
    mostly = np.concatenate([np.arange(300), rng.choice(300, 200)]) + 0.25
    frame = pd.DataFrame({"unique": rng.permutation(500) + 0.5,
                          "mostly": rng.permutation(mostly),
                          "half": rng.permutation(np.concatenate([np.arange(240)] * 2
                                                                 + [np.arange(20)])),
                          "shared": rng.integers(100, size=500), "y": rng.normal(size=500)})
    frame.to_csv(tmp_path / "q.csv", index=False)
    text = pd.read_csv(tmp_path / "q.csv", dtype=str)
    columns = ["unique", "mostly", "half", "shared"]
    bins = numeric_bins(text, columns, 8)
    assert list(bins) == columns
    shares = {c: frame[c].nunique() / len(frame) for c in columns}
    assert shares["mostly"] == 0.6 and shares["half"] == 0.48
    assert distinct_columns(text, bins, DISTINCT_SHARE) == [
        c for c in columns if shares[c] >= DISTINCT_SHARE] == ["unique", "mostly"]
    assert distinct_columns(text, bins) == ["unique"]
    csv = {"label": "y", "columns": ["unique", "shared"], "crosses": [],
           "bins": {c: bins[c] for c in ("unique", "shared")},
           "scales": numeric_scales(text, ["unique", "shared"]), "distinct": ["unique"]}
    (chunk,) = list(_CsvReader(str(tmp_path / "q.csv"), 1000, csv))
    names = set(chunk.feature_names.lookup(np.unique(chunk.X.indices)).values())
    assert not any(n.startswith("unique==") for n in names)
    assert any(n.startswith("shared==") for n in names)
    assert any(n.startswith("unique=[") for n in names) and "unique" in names
    # A model of before reads every numeric column's values as categories too.
    (old,) = list(_CsvReader(str(tmp_path / "q.csv"), 1000, {**csv, "distinct": []}))
    names = set(old.feature_names.lookup(np.unique(old.X.indices)).values())
    assert any(n.startswith("unique==") for n in names)


@pytest.mark.parametrize("task", ["auto", "classification", "regression", "classes"])
def test_a_classification_reads_mostly_distinct_numbers_without_their_values(
        tmp_path, capsys, task):
    # A classification's category per value of a column whose values mostly differ
    # learns training rows by heart; a regression's kept it (sp500's prices, R^2 .26 with
    # it, .24 without), so only a column of all-distinct values loses it there.
    from sklearn_sketch._model_files import read_model
    from sklearn_sketch.cli._bins import DISTINCT_SHARE

    rng = np.random.default_rng(0)
    n = 600
    mostly = rng.permutation(np.concatenate([np.arange(400), rng.choice(400, 200)])) / 7
    frame = pd.DataFrame({"mostly": mostly.round(4), "unique": rng.permutation(n) + 0.5,
                          "shared": rng.integers(50, size=n)})
    assert DISTINCT_SHARE <= frame.mostly.nunique() / n < 1
    frame["y"] = (frame.mostly + rng.normal(0, 5, n)).round(3)
    options = [] if task == "auto" else ["--task", task]
    if task == "classification":
        frame["y"] = np.where(frame.y > frame.y.median(), "high", "low")
    if task == "classes":
        # 30 whole numbers with gaps: a quantity to --task auto, classes when named.
        frame["y"] = 10 * pd.qcut(frame.y, 30, labels=False) + 10
        options = ["--classes", ",".join(str(v) for v in range(10, 310, 10))]
    frame.to_csv(tmp_path / "t.csv", index=False)
    model = str(tmp_path / "m.skm")
    assert main(["fit", "--csv", str(tmp_path / "t.csv"), "--label", "y", "--quiet",
                 "--output", model] + options) == 0
    _, metadata = read_model(model)
    regression = task in ("auto", "regression")
    assert metadata["input"]["csv"]["distinct"] == (
        ["unique"] if regression else ["mostly", "unique"])


def test_a_few_words_in_a_numeric_column_are_missing_numbers(tmp_path):
    from sklearn_sketch.cli._bins import numeric_bins, numeric_means, numeric_scales

    rng = np.random.default_rng(0)
    values = rng.normal(100, 15, 200).round(1).astype(str)
    values[[3, 50, 77]] = ["?", "?", "n.a."]   # 1.5%, two words
    frame = pd.DataFrame({"x": values})
    numbers = pd.to_numeric(frame.x, errors="coerce").dropna()
    assert numeric_scales(frame, ["x"]) == {"x": pytest.approx(numbers.std(ddof=1))}
    assert numeric_means(frame, {"x": 1.0}) == {"x": pytest.approx(numbers.mean())}
    assert list(numeric_bins(frame, ["x"], 4)) == ["x"]
    # Words in more than 5% of the values, or more than three distinct, are a column
    # of categories.
    many = values.copy()
    many[:12] = "?"
    kinds = values.copy()
    kinds[:4] = ["?", "-", "n.a.", "unknown"]
    for other in (many, kinds):
        assert numeric_scales(pd.DataFrame({"x": other}), ["x"]) == {}
        assert numeric_bins(pd.DataFrame({"x": other}), ["x"], 4) == {}


def test_a_label_column_without_a_value_is_a_one_line_error(tmp_path, capsys):
    path = tmp_path / "rows.csv"
    path.write_text("carrier,delay\nA,\nB,\n")
    assert main(["fit", "--csv", str(path), "--label", "delay", "--quiet", "--output",
                 str(tmp_path / "m.skm")]) == 2
    err = capsys.readouterr().err
    assert "no row of the training input has a label in column 'delay'" in err
    assert err.count("\n") == 1


@pytest.mark.parametrize("task", [[], ["--task", "classification"]])
def test_an_identifier_label_is_refused_before_training(files, capsys, task):
    # A label column whose labels are each on one row (R's gap::mhtdata by SNP name,
    # 111,518 of them) is an identifier: a model per label took 16 GB before it was
    # stopped. Half of the rows' labels once is still a classification, and so is any
    # share that --task classification asks for.
    folder, _ = files
    frame = pd.read_csv(folder / "train.csv").head(400)
    names = np.array([f"rs{i}" for i in range(400)], dtype=object)
    for share, code in ((0.55, 0 if task else 2), (0.5, 0)):
        once = int(share * 400)
        # The first `once` rows' labels once each, the others' twice.
        labels = np.concatenate([names[:once], names[once + np.arange(400 - once) // 2]])
        frame.assign(status=labels).to_csv(folder / "ids.csv", index=False)
        assert main(["fit", "--csv", str(folder / "ids.csv"), "--label", "status",
                     "--epochs", "1", "--quiet", "--output", str(folder / "m.skm"),
                     *task]) == code
        err = capsys.readouterr().err
        assert ("error: column 'status' is not classes to learn: "
                f"{once} of its 400 labelled rows carry a label no other row has" in err) == (
                    code == 2)


def test_a_header_of_numbers_is_warned_about(tmp_path, capsys):
    # statsmodels' E6_jmulti.csv has no header: its first row named the columns.
    rng = np.random.default_rng(0)
    rows = rng.normal(size=(200, 2)).round(4)
    for header, warned in ((False, True), (True, False)):
        pd.DataFrame(rows, columns=["rate", "inflation"]).to_csv(
            tmp_path / "series.csv", index=False, header=header, sep=" ")
        label = "inflation" if header else str(rows[0, 1])
        assert main(["fit", "--csv", str(tmp_path / "series.csv"), "--label", label,
                     "--epochs", "1", "--quiet", "--output", str(tmp_path / "m.skm")]) == 0
        err = capsys.readouterr().err
        assert ("is all numbers (" + f"{rows[0, 0]}, {rows[0, 1]}): a file without a header?"
                in err) == warned, err


def test_a_csv_in_windows_1252_or_utf_16_reads_as_in_utf_8(tmp_path, capsys):
    # A spreadsheet's export on Windows: fit stopped at pandas' "'utf-8' codec can't
    # decode byte 0x97". The same table in three encodings makes the same model.
    frame = write_rows(tmp_path / "rows.csv", 600, 2)
    frame["carrier"] = frame["carrier"].map({"A": "Café", "B": "Zoë—air", "C": "C", "D": "D"})
    outputs = []
    for encoding, sep in (("utf-8", ","), ("cp1252", ","), ("utf-16", "\t")):
        path = tmp_path / f"{encoding}.csv"
        frame.to_csv(path, index=False, encoding=encoding, sep=sep)
        model = str(tmp_path / f"{encoding}.skm")
        assert main(["fit", "--csv", str(path), "--label", "status", "--quiet",
                     "--output", model]) == 0
        assert main(["predict", "--model", model, "--csv", str(path)]) == 0
        outputs.append((capsys.readouterr().out, _select(capsys, model)))
    assert outputs[1] == outputs[0] and outputs[2] == outputs[0]
    assert "carrier=Zo\\u00eb\\u2014air" in outputs[0][1] or "carrier=Zoë—air" in outputs[0][1]


def write_reviews(path, n, seed):
    """A review (free text, words drawn from a vocabulary) and a store; the label is
    'good' when the text holds more of the first 30 words than of the next 30."""
    rng = np.random.default_rng(seed)
    vocabulary = np.array([f"w{i}" for i in range(400)])
    texts, labels = [], []
    for _ in range(n):
        words = vocabulary[rng.integers(400, size=12)].tolist()
        good = rng.random() < 0.5
        words += vocabulary[rng.integers(30, size=3) + (0 if good else 30)].tolist()
        rng.shuffle(words)
        texts.append(" ".join(words).capitalize() + ".")
        labels.append("good" if good else "bad")
    frame = pd.DataFrame({"review": texts, "store": rng.choice(list("ABC"), n),
                          "label": labels})
    frame.to_csv(path, index=False)
    return frame


def test_a_column_of_free_text_is_read_as_its_words(tmp_path, capsys):
    from sklearn.feature_extraction.text import CountVectorizer

    from sklearn_sketch._model_files import read_model
    from sklearn_sketch._raw_features import name_keys
    from sklearn_sketch.cli._text import text_rows

    write_reviews(tmp_path / "train.csv", 2000, 0)
    test = write_reviews(tmp_path / "test.csv", 500, 1)
    model = str(tmp_path / "m.skm")
    assert main(["fit", "--csv", str(tmp_path / "train.csv"), "--label", "label",
                 "--max-order", "2", "--quiet", "--output", model]) == 0
    # Every review is a text of its own: as a category it would say nothing (0.5).
    assert _metrics(capsys, ["evaluate", "--model", model, "--csv",
                             str(tmp_path / "test.csv")])["accuracy"] > 0.9
    csv = read_model(model)[1]["input"]["csv"]
    assert csv["text"] == ["review"] and csv["crosses"] == []   # one other column: no pair
    names = [f["name"] for f in json.loads(_select(capsys, model))]
    assert set(names[:10]) <= {f"review=w{i}" for i in range(60)}, names[:10]
    # The words and counts of CountVectorizer's default analyzer, keyed by their names.
    indptr, keys, counts, named = text_rows(test.review.tolist() + [None], "review")
    analyze = CountVectorizer().build_analyzer()
    for i, text in enumerate(test.review.tolist() + [None]):
        words = {} if text is None else {w: analyze(text).count(w) for w in analyze(text)}
        expected = dict(zip(name_keys([f"review={w}" for w in words]).tolist(),
                            map(float, words.values())))
        row = slice(indptr[i], indptr[i + 1])
        assert dict(zip(keys[row].tolist(), counts[row].tolist())) == expected
        assert all(named[k] == f"review={w}" for k, w in zip(expected, words))
    # The names' mean length, which sizes a budget's room for names, counts the words
    # of a chunk whose only attribute is text.
    from sklearn_sketch.cli._inputs import _CsvReader

    only_text = {**csv, "columns": ["review"], "crosses": []}
    chunk = next(iter(_CsvReader(str(tmp_path / "test.csv"), 100, only_text)))
    words = set(chunk.feature_names.lookup(chunk.X.indices).values())
    assert chunk.feature_names.mean_name_bytes() == pytest.approx(
        np.mean([len(w) for w in words]))
    # A text column is not crossed.
    capsys.readouterr()
    crossed = tmp_path / "crossed.skm"
    assert main(["fit", "--csv", str(tmp_path / "train.csv"), "--label", "label",
                 "--cross", "review,store", "--output", str(crossed)]) == 2
    err = capsys.readouterr().err
    assert "['review'] holds free text, read as its words, which are not crossed" in err
    assert err.count("\n") == 1 and not crossed.exists()


def test_a_fasttext_file_reads_as_its_table_of_label_and_text(tmp_path, capsys):
    # fastText's format ("__label__good w1 w7 ...") was refused as a VW file without
    # a '|'. It trains, scores and predicts as its twin table of two columns.
    frames = {}
    for name, n, seed in (("train", 1500, 0), ("test", 400, 1)):
        frame = write_reviews(tmp_path / f"{name}.csv", n, seed)[["label", "review"]]
        frames[name] = frame.rename(columns={"review": "text"})
        frames[name].to_csv(tmp_path / f"{name}.csv", index=False)
        lines = ("__label__" + frame["label"] + " " + frame["review"]).tolist()
        (tmp_path / f"{name}.txt").write_bytes(("\r\n".join(lines) + "\r\n").encode())
    outputs = []
    for kind, label in (("txt", []), ("csv", ["--label", "label"])):
        model = str(tmp_path / f"{kind}.skm")
        assert main(["fit", "--csv", str(tmp_path / f"train.{kind}"), *label, "--quiet",
                     "--output", model]) == 0
        metrics = _metrics(capsys, ["evaluate", "--model", model, "--csv",
                                    str(tmp_path / f"test.{kind}")])
        assert main(["predict", "--model", model, "--csv",
                     str(tmp_path / f"test.{kind}")]) == 0
        metrics.pop("predict_seconds")
        outputs.append((metrics, capsys.readouterr().out))
    assert outputs[0] == outputs[1] and outputs[0][0]["accuracy"] > 0.9
    assert main(["fit", "--vw", str(tmp_path / "train.txt"), "--quiet", "--output",
                 str(tmp_path / "x.skm")]) == 2
    assert "(fastText's format, '__label__X text': the command line reads it with --csv)" in (
        capsys.readouterr().err)
    # A line without a label is predicted; one of several labels is refused, by line.
    unlabelled = tmp_path / "new.txt"
    unlabelled.write_text("__label__good w1 w2 w3\nw4 w5 w6 w7\n")
    assert main(["predict", "--model", str(tmp_path / "txt.skm"), "--csv",
                 str(unlabelled)]) == 0
    assert len(capsys.readouterr().out.split()) == 2
    several = tmp_path / "several.txt"
    several.write_text("__label__good w1 w2\n__label__good __label__bad w3 w4\n")
    assert main(["fit", "--csv", str(several), "--quiet", "--output",
                 str(tmp_path / "x.skm")]) == 2
    assert "several.txt, line 2: several labels (__label__good __label__bad)" in (
        capsys.readouterr().err)


def test_a_folder_of_documents_reads_as_its_fasttext_twin(tmp_path, capsys):
    # 20 Newsgroups comes as a folder per class, a file per post (scikit-learn's
    # load_files layout): such a folder was "Is a directory".
    import tarfile

    frame = write_reviews(tmp_path / "reviews.csv", 900, 4)
    for i, (label, text) in enumerate(zip(frame["label"], frame["review"])):
        (tmp_path / "docs" / label).mkdir(parents=True, exist_ok=True)
        (tmp_path / "docs" / label / f"{i:04d}.txt").write_bytes(
            (text + " café").encode("latin-1" if i % 2 else "utf-8"))
    order = sorted(zip(frame["label"], [f"{i:04d}" for i in range(900)], frame["review"]))
    (tmp_path / "twin.txt").write_text(
        "".join(f"__label__{label} {text} café\n" for label, _, text in order))
    outputs = []
    for source in ("docs", "twin.txt"):
        model = str(tmp_path / "m.skm")
        assert main(["fit", "--csv", str(tmp_path / source), "--quiet", "--output", model]) == 0
        assert main(["predict", "--model", model, "--csv", str(tmp_path / source)]) == 0
        outputs.append((capsys.readouterr().out, _select(capsys, model)))
    # The folder's predictions are the twin's, each beside its file's name.
    names = [f"{label}/{i}.txt" for label, i, _ in order]
    assert [line.split("\t") for line in outputs[0][0].splitlines()] == [
        [name, label] for name, label in zip(names, outputs[1][0].split())]
    assert outputs[0][1] == outputs[1][1]
    from sklearn_sketch.cli._csv import read_csv   # Latin-1 documents read as UTF-8 ones

    pd.testing.assert_frame_equal(read_csv(tmp_path / "docs", dtype=str),
                                  read_csv(tmp_path / "twin.txt", dtype=str))
    # Documents compressed one by one read as their text (they were their gzip bytes).
    import gzip
    import shutil

    shutil.copytree(tmp_path / "docs", tmp_path / "packed")
    for document in sorted((tmp_path / "packed").glob("*/*.txt")):
        document.with_suffix(".txt.gz").write_bytes(gzip.compress(document.read_bytes()))
        document.unlink()
    pd.testing.assert_series_equal(read_csv(tmp_path / "packed", dtype=str)["text"],
                                  read_csv(tmp_path / "docs", dtype=str)["text"])
    # Files outside the class folders are documents to predict.
    (tmp_path / "new").mkdir()
    (tmp_path / "new" / "b.txt").write_text(frame["review"][0])
    (tmp_path / "new" / "a.txt").write_text(frame["review"][1])
    assert main(["predict", "--model", model, "--csv", str(tmp_path / "new")]) == 0
    # Each beside its file's name (the folder's sorted order said nothing).
    assert capsys.readouterr().out.splitlines() == [f"a.txt\t{frame['label'][1]}",
                                                    f"b.txt\t{frame['label'][0]}"]
    assert main(["predict", "--model", model, "--csv", str(tmp_path / "new"), "--proba"]) == 0
    header, first, _ = capsys.readouterr().out.split("\n", 2)
    assert header.split("\t")[:2] == ["file", "label"]
    assert first.split("\t")[:2] == ["a.txt", frame["label"][1]]
    with tarfile.open(tmp_path / "docs.tar.gz", "w:gz") as archive:
        archive.add(tmp_path / "docs", arcname="docs")
    assert main(["fit", "--csv", str(tmp_path / "docs.tar.gz"), "--quiet", "--output",
                 model]) == 2
    assert "is a tar archive: extract it" in capsys.readouterr().err


@pytest.mark.parametrize("kind", ["parquet", "jsonl"])
def test_parquet_and_json_lines_read_as_their_csv_twin(tmp_path, capsys, kind):
    # Read as text, a Parquet file's first bytes were listed as its column names.
    if kind == "parquet":
        pytest.importorskip("pyarrow")
    frame = write_rows(tmp_path / "rows.csv", 800, 3)
    frame.loc[::7, "hour"] = np.nan   # missing numbers stay missing
    frame["hour"] = frame["hour"].astype("Int64")
    frame.to_csv(tmp_path / "rows.csv", index=False)
    path = tmp_path / f"rows.{kind}"
    if kind == "parquet":
        frame.to_parquet(path)
    else:
        # A key that a line leaves out is a missing value, as a null is.
        text = frame.to_json(orient="records", lines=True)
        assert text.count('"hour":null,') == 115
        path.write_text(text.replace('"hour":null,', ""))
    outputs = []
    for table in (tmp_path / "rows.csv", path):
        model = str(tmp_path / "m.skm")
        assert main(["fit", "--csv", str(table), "--label", "status", "--max-order", "2",
                     "--quiet", "--output", model]) == 0
        assert main(["predict", "--model", model, "--csv", str(table), "--chunk-rows",
                     "300"]) == 0
        outputs.append((capsys.readouterr().out, _select(capsys, model)))
    assert outputs[1] == outputs[0]


def _arff(frame, quote, sparse=False):
    """``frame`` (carrier, dest, hour, status) as ARFF text: nominal, numeric and
    string attributes, comments, '?' for a missing value, dense or sparse rows."""
    lines = ["% written for a test", "% of two lines", "@RELATION flights", "",
             "@ATTRIBUTE carrier {A,B,C,D}", "@ATTRIBUTE 'dest' {W,X,Y,Z}",
             "@attribute hour NUMERIC", "@ATTRIBUTE status STRING", "@DATA", "% rows"]
    for row in frame.itertuples(index=False):
        hour = "?" if pd.isna(row.hour) else str(row.hour)
        if sparse:  # a left-out entry: 0, or a nominal's first value (A, W)
            entries = [f"{i} {v}" for i, (v, dflt) in enumerate(
                [(row.carrier, "A"), (row.dest, "W"), (hour, "0"), (quote + row.status + quote, None)])
                if v != dflt]
            lines.append("{" + ", ".join(entries) + "}")
        else:
            lines.append(f"{row.carrier}, {quote}{row.dest}{quote},{hour},{quote}{row.status}{quote}")
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize("quote, sparse", [("'", False), ('"', False), ("'", True)])
def test_an_arff_file_reads_as_its_csv_twin(tmp_path, capsys, quote, sparse):
    # OpenML's and Weka's files: the @relation line was read as the header.
    from sklearn_sketch.cli._csv import read_csv

    frame = write_rows(tmp_path / "rows.csv", 900, 4)
    frame["hour"] = frame["hour"].astype("Int64")
    frame.loc[::9, "hour"] = pd.NA
    frame.loc[::5, "hour"] = 0
    frame.to_csv(tmp_path / "rows.csv", index=False)
    (tmp_path / "rows.arff").write_text(_arff(frame, quote, sparse))
    pd.testing.assert_frame_equal(read_csv(tmp_path / "rows.arff", dtype=str),
                                  read_csv(tmp_path / "rows.csv", dtype=str), check_dtype=False)
    chunks = list(read_csv(tmp_path / "rows.arff", dtype=str, chunksize=400,
                           usecols=["status", "hour"]))
    # 400 lines a chunk, the comment line after @DATA among the first's.
    assert [len(c) for c in chunks] == [399, 400, 101]
    assert list(chunks[0].columns) == ["status", "hour"]
    outputs = []
    for table in (tmp_path / "rows.csv", tmp_path / "rows.arff"):
        model = str(tmp_path / "m.skm")
        assert main(["fit", "--csv", str(table), "--label", "status", "--max-order", "2",
                     "--quiet", "--output", model]) == 0
        assert main(["predict", "--model", model, "--csv", str(table)]) == 0
        outputs.append((capsys.readouterr().out, _select(capsys, model)))
    assert outputs[1] == outputs[0]


def test_arff_files_read_as_scikit_learns_parser_reads_them(tmp_path, monkeypatch):
    # The OpenML files scikit-learn's tests carry (anneal, adult, titanic, penguins,
    # the sparse australian, ...), against the ARFF parser of fetch_openml.
    import glob
    import gzip

    import sklearn
    from sklearn.externals import _arff

    from sklearn_sketch.cli._csv import read_csv

    folder = os.path.join(os.path.dirname(sklearn.__file__), "datasets", "tests", "data",
                          "openml")
    paths = sorted(glob.glob(os.path.join(folder, "*", "*.arff.gz")))
    if not paths:
        pytest.skip("this scikit-learn carries no OpenML test files")
    for path in paths:
        with gzip.open(path, "rt", encoding="utf-8") as f:
            reference = _arff.loads(f.read(), return_type=_arff.DENSE)
        ours = read_csv(path, dtype=str)
        assert list(ours.columns) == [name for name, _ in reference["attributes"]]
        expected = pd.DataFrame(reference["data"], columns=ours.columns, dtype=object)
        for column in ours.columns:
            got, want = ours[column], expected[column]
            assert (got.isna() == want.isna()).all(), (path, column)
            if want.map(lambda v: isinstance(v, float)).any():
                np.testing.assert_array_equal(got[want.notna()].astype(float),
                                              want[want.notna()].astype(float))
            else:
                assert (got[want.notna()] == want[want.notna()].astype(str)).all(), (path, column)
    (tmp_path / "rel.arff").write_text("@relation r\n@attribute bag relational\n"
                                       "@attribute x numeric\n@end bag\n@data\n")
    with pytest.raises(ValueError, match="attribute 'bag' is relational"):
        read_csv(tmp_path / "rel.arff", dtype=str)
    # A row of more values than attributes is refused (pandas made them an index).
    (tmp_path / "long.arff").write_text("@relation r\n@attribute x numeric\n"
                                        "@attribute y {a,b}\n@data\n1,a\n2,b,7\n")
    with pytest.raises(ValueError, match=r"a row holds more values than its 2 @attribute "
                                         r"lines declare: '2,b,7'"):
        read_csv(tmp_path / "long.arff", dtype=str)
    (tmp_path / "empty.arff").write_text("@relation r\n@attribute x numeric\n@data\n")
    assert list(read_csv(tmp_path / "empty.arff", dtype=str).columns) == ["x"]
    # A sparse file of many attributes is read in chunks of at most ARFF_CELLS cells
    # of the columns asked.
    from sklearn_sketch.cli import _formats

    monkeypatch.setattr(_formats, "ARFF_CELLS", 10_000)
    width = 1000
    (tmp_path / "wide.arff").write_text(
        "@relation r\n" + "".join(f"@attribute a{i} numeric\n" for i in range(width))
        + "@attribute y {no,yes}\n@data\n"
        + "".join(f"{{{i % width} 1, {width} yes}}\n" for i in range(2000)))
    chunks = list(read_csv(tmp_path / "wide.arff", dtype=str, usecols=["a7", "y"],
                           chunksize=10_000))
    assert sum(map(len, chunks)) == 2000 and max(map(len, chunks)) == 9
    whole = pd.concat(chunks, ignore_index=True)
    assert whole["a7"].tolist() == ["1" if i % width == 7 else "0" for i in range(2000)]
    assert set(whole["y"]) == {"yes"}


def test_json_objects_within_a_line_are_spread_into_columns(tmp_path, capsys):
    # A click log's {"route": {"dest": "Z", "hour": 5}} was one category per object.
    from sklearn_sketch.cli._csv import read_csv

    frame = write_rows(tmp_path / "rows.csv", 900, 9)
    records = [{"carrier": c, "route": {"dest": d, "hour": int(h)}, "status": s}
               for c, d, h, s in frame.itertuples(index=False)]
    records[3]["route"] = None   # no object: its keys are missing
    (tmp_path / "log.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    read = read_csv(tmp_path / "log.jsonl", dtype=str)
    assert list(read.columns) == ["carrier", "status", "route.dest", "route.hour"]
    twin = frame.rename(columns={"dest": "route.dest", "hour": "route.hour"}).astype(str)
    twin.loc[3, ["route.dest", "route.hour"]] = np.nan
    pd.testing.assert_frame_equal(read[list(twin.columns)], twin, check_dtype=False)
    assert [len(c) for c in read_csv(tmp_path / "log.jsonl", dtype=str, chunksize=400,
                                     usecols=["route.dest", "status"])] == [400, 400, 100]
    model = str(tmp_path / "m.skm")
    assert main(["fit", "--csv", str(tmp_path / "log.jsonl"), "--label", "status",
                 "--cross", "carrier,route.dest", "--quiet", "--output", model]) == 0
    assert json.loads(_select(capsys, model))[0]["name"] == "carrier=B^route.dest=Z"


def test_a_workbook_or_binary_file_is_refused_by_what_it_is(tmp_path, capsys):
    import zipfile

    with zipfile.ZipFile(tmp_path / "book.xlsx", "w") as book:
        book.writestr("xl/workbook.xml", "<workbook/>")
    (tmp_path / "blob.csv").write_bytes(b"a,b\n\x00\x01\x02")
    for name, message in (("book.xlsx", "is a spreadsheet workbook, not a table of text"),
                          ("blob.csv", "is not a text file (it holds NUL bytes")):
        assert main(["fit", "--csv", str(tmp_path / name), "--label", "b", "--quiet",
                     "--output", str(tmp_path / "m.skm")]) == 2
        err = capsys.readouterr().err
        assert message in err and err.count("\n") == 1


def test_a_file_without_a_header_reads_its_columns_by_position(tmp_path, capsys):
    # UCI's adult.data, Criteo's files: no line of names. Its first row was read as
    # the names, and no --label could name the label column.
    frames = {name: write_rows(tmp_path / f"{name}.csv", n, seed)
              for name, n, seed in (("train", 3000, 0), ("test", 800, 1))}
    for name, frame in frames.items():
        frame.to_csv(tmp_path / f"{name}.data", index=False, header=False, sep=",")
    frames["test"].drop(columns="status").to_csv(tmp_path / "new.data", index=False,
                                                 header=False)
    model = str(tmp_path / "m.skm")
    assert main(["fit", "--csv", str(tmp_path / "train.data"), "--label", "status",
                 "--no-header", "--quiet", "--output", model]) == 2
    assert "with --no-header, columns are named by position, 1 to 4" in (
        capsys.readouterr().err)
    assert main(["fit", "--csv", str(tmp_path / "train.data"), "--label", "4", "--no-header",
                 "--max-order", "2", "--quiet", "--output", model]) == 0
    assert _metrics(capsys, ["evaluate", "--model", model, "--csv",
                             str(tmp_path / "test.data")])["accuracy"] == 1.0
    predictions = []
    for name in ("test.data", "new.data"):   # with its label column, and without it
        assert main(["predict", "--model", model, "--csv", str(tmp_path / name)]) == 0
        predictions.append(capsys.readouterr().out.split())
    assert predictions[0] == predictions[1] == frames["test"]["status"].tolist()
    assert "1=B^2=Z" in _select(capsys, model)
    (tmp_path / "wide.data").write_text("B,Z,5,late,x\n")
    assert main(["predict", "--model", model, "--csv", str(tmp_path / "wide.data")]) == 2
    assert "has 5 columns; the model's training file had 4 (3 without its label, column 4)" in (
        capsys.readouterr().err)


def test_a_text_column_reads_as_tfidf_of_its_first_rows(tmp_path, capsys):
    # Counts let a word said ten times weigh ten times, a word of every text as much
    # as a rare one, and a long text more than a short one: TF-IDF as scikit-learn's
    # TfidfVectorizer(sublinear_tf=True) gives it, document frequencies from the
    # training file's first rows.
    from sklearn.feature_extraction.text import TfidfVectorizer

    from sklearn_sketch._model_files import read_model
    from sklearn_sketch._raw_features import name_keys
    from sklearn_sketch.cli._inputs import _CsvReader

    frame = write_reviews(tmp_path / "train.csv", 600, 0)
    frame.loc[::5, "review"] += " w7 w7 w7"   # counts above one
    frame.to_csv(tmp_path / "train.csv", index=False)
    model = str(tmp_path / "m.skm")
    assert main(["fit", "--csv", str(tmp_path / "train.csv"), "--label", "label", "--quiet",
                 "--output", model]) == 0
    csv = read_model(model)[1]["input"]["csv"]
    assert csv["idf"]["review"]["documents"] == 600
    tfidf = TfidfVectorizer(sublinear_tf=True)
    expected = tfidf.fit_transform(frame.review)
    keys = name_keys([f"review={w}" for w in tfidf.get_feature_names_out()])
    only_text = {**csv, "columns": ["review"], "crosses": []}
    chunk = next(iter(_CsvReader(str(tmp_path / "train.csv"), 600, only_text)))
    for i in range(600):
        row = expected[i]
        ours = chunk.X[i]
        assert dict(zip(ours.indices.tolist(), ours.data.round(12).tolist())) == dict(
            zip(keys[row.indices].tolist(), row.data.round(12).tolist()))
    # A model of before it (no document frequencies) reads counts, as it was trained.
    counts = next(iter(_CsvReader(str(tmp_path / "train.csv"), 600,
                                  {k: v for k, v in only_text.items() if k != "idf"})))
    assert counts.X[0].data.tolist() == [float(round(v)) for v in counts.X[0].data]
    assert counts.X.data.max() >= 3.0


def test_labels_the_model_does_not_know_are_counted_and_named(tmp_path, capsys):
    rng = np.random.default_rng(0)
    classes = [f"c{i:02d}" for i in range(12)]
    train = pd.DataFrame({"a": rng.choice(list("xyz"), 600), "y": rng.choice(classes, 600)})
    train.to_csv(tmp_path / "train.csv", index=False)
    test = train[:50].copy()
    test.loc[[3, 7, 8], "y"] = ["new", "other", "new"]
    test.to_csv(tmp_path / "test.csv", index=False)
    model = str(tmp_path / "m.skm")
    assert main(["fit", "--csv", str(tmp_path / "train.csv"), "--label", "y", "--quiet",
                 "--output", model]) == 0
    capsys.readouterr()
    assert main(["evaluate", "--model", model, "--csv", str(tmp_path / "test.csv")]) == 0
    err = capsys.readouterr().err
    assert ("warning: 3 of 50 examples have labels the model does not know (new, other); "
            "its classes are c00, c01, c02, c03, c04, c05, c06, c07, c08, c09 and 2 more: "
            "they count as errors") in err, err


def _select(capsys, model):
    capsys.readouterr()
    assert main(["select", "--model", model, "--top", "40", "--format", "json"]) == 0
    return capsys.readouterr().out


def test_interval_names_and_values_match_a_reference():
    from sklearn_sketch._intervals import interval_names
    from sklearn_sketch.cli._bins import binned

    rng = np.random.default_rng(0)
    edges = sorted(rng.normal(size=7).round(2).tolist())
    values = np.concatenate([rng.normal(size=200).round(2), edges, [np.nan]])
    text = pd.Series([None if np.isnan(v) else repr(float(v)) for v in values] + ["n/a"])
    names = interval_names(edges)
    got = binned(text, edges)
    for value, name in zip(list(values) + [np.nan], got):
        if np.isnan(value):
            assert name is np.nan or name != name  # missing stays missing
            continue
        below = [i for i, e in enumerate(edges) if value < e]
        expected = names[below[0]] if below else names[-1]  # a value at an edge opens it
        assert name == expected, (value, name, expected)


def test_text_and_few_distinct_numbers_stay_categories():
    from sklearn_sketch.cli._bins import MIN_DISTINCT, numeric_bins

    n = 1000
    frame = pd.DataFrame({"many": np.arange(n).astype(str),
                          "few": (np.arange(n) % (MIN_DISTINCT - 1)).astype(str),
                          "text": [f"{i}" if i % 10 else "x" for i in range(n)],
                          "infinite": [f"{i}" if i % 10 else "inf" for i in range(n)],
                          "a word": [f"{i}" if i else "x" for i in range(n)]})
    # One word in a thousand numbers is a missing number (test_a_few_words_...).
    assert list(numeric_bins(frame, list(frame.columns), 16)) == ["many", "a word"]
    assert numeric_bins(frame, list(frame.columns), 0) == {}


def test_a_model_file_with_bad_interval_edges_is_refused(tmp_path, capsys):
    from sklearn_sketch import save
    from sklearn_sketch._model_files import read_model

    write_measurements(tmp_path / "train.csv", 3000, 0)
    model = str(tmp_path / "m.skm")
    assert main(["fit", "--csv", str(tmp_path / "train.csv"), "--label", "status",
                 "--quiet", "--output", model]) == 0
    estimator, metadata = read_model(model)
    for bad in ({"delay": [3.0, 1.0]}, {"nope": [1.0]}, {"delay": []}):
        metadata["input"]["csv"]["bins"] = bad
        save(estimator, model, metadata=metadata)
        capsys.readouterr()
        assert main(["select", "--model", model]) == 2
        assert "increasing edges" in capsys.readouterr().err


def test_a_csv_sorted_by_its_label_is_shuffled(tmp_path, capsys):
    rng = np.random.default_rng(1)
    frame = pd.DataFrame({"carrier": rng.choice(list("ABCD"), 600)})
    frame["status"] = np.where(frame["carrier"].isin(["A", "B"]), "late", "on time")
    path, out = tmp_path / "flights.csv", tmp_path / "m.skm"
    fit = ["fit", "--csv", str(path), "--label", "status", "--output", str(out),
           "--param", "sketch_width=64", "--param", "n_features_to_select=4"]
    for order, noted in ((frame.sort_values("status"), True), (frame, False)):
        order.to_csv(path, index=False)
        assert main(fit) == 0
        err = capsys.readouterr().err
        assert ("come in runs (1 change of label in 600 rows" in err) == noted, err
        assert ("fit shuffles all 600 rows in memory" in err) == noted


def write_quantity(path, n, seed, low=0.0, high=100.0):
    """A target twice a numeric column, plus noise; the carrier is noise."""
    rng = np.random.default_rng(seed)
    frame = pd.DataFrame({"carrier": rng.choice(list("ABCD"), n),
                          "x": rng.uniform(low, high, n).round(2)})
    frame["y"] = (2 * frame.x + rng.normal(0, 5, n)).round(2)
    frame.to_csv(path, index=False)
    return frame


def test_a_numeric_column_is_read_as_a_number_too(tmp_path, capsys):
    from sklearn_sketch._model_files import read_model

    train = write_quantity(tmp_path / "train.csv", 12_000, 0)
    model = str(tmp_path / "m.skm")
    assert main(["fit", "--csv", str(tmp_path / "train.csv"), "--label", "y", "--epochs", "3",
                 "--quiet", "--output", model]) == 0
    # The scale is the first 10,000 rows' standard deviation, kept in the model.
    _, metadata = read_model(model)
    scales = metadata["input"]["csv"]["scales"]
    assert list(scales) == ["x"]
    assert scales["x"] == pytest.approx(train.x[:10_000].std(ddof=1))
    # A regression reads the number from the first rows' mean, and so does a
    # classification.
    assert metadata["input"]["csv"]["means"] == {"x": pytest.approx(train.x[:10_000].mean())}
    names = [f["name"] for f in json.loads(_select(capsys, model))]
    assert "x" in names
    train.assign(y=np.where(train.y > 100, "high", "low")).to_csv(tmp_path / "c.csv",
                                                                  index=False)
    assert main(["fit", "--csv", str(tmp_path / "c.csv"), "--label", "y", "--epochs", "1",
                 "--quiet", "--output", str(tmp_path / "c.skm")]) == 0
    classified = read_model(str(tmp_path / "c.skm"))[1]["input"]["csv"]
    assert classified["means"] == {"x": pytest.approx(train.x[:10_000].mean())}
    assert list(classified["scales"]) == ["x"]
    # Past the training values the intervals are flat; the value goes on: a quantity
    # of 300 and 400 (the training values end at 100) is predicted far apart.
    write_quantity(tmp_path / "far.csv", 2, 1, 300.0, 300.0)
    frame = pd.read_csv(tmp_path / "far.csv")
    frame.loc[1, "x"] = 400.0
    frame.to_csv(tmp_path / "far.csv", index=False)
    assert main(["predict", "--model", model, "--csv", str(tmp_path / "far.csv"),
                 "--output", str(tmp_path / "p.txt")]) == 0
    low, high = map(float, (tmp_path / "p.txt").read_text().split())
    assert high - low > 100, (low, high)


def test_a_classification_reads_its_numbers_from_their_mean(tmp_path, capsys):
    # Which of two numbers near 1,000 is larger: read from 0 each is about 350 of
    # its standard deviations, and the intercept and the numbers' steps fight (0.96
    # held out); read from their mean, 0.997.
    for name, n, seed in (("train", 600, 0), ("test", 300, 1)):
        rng = np.random.default_rng(seed)
        a, b = rng.uniform(1000, 1010, (2, n)).round(3)
        pd.DataFrame({"a": a, "b": b, "y": np.where(a > b, "high", "low")}).to_csv(
            tmp_path / f"{name}.csv", index=False)
    model = str(tmp_path / "m.skm")
    assert main(["fit", "--csv", str(tmp_path / "train.csv"), "--label", "y", "--quiet",
                 "--output", model]) == 0
    capsys.readouterr()
    assert main(["evaluate", "--model", model, "--csv", str(tmp_path / "test.csv"),
                 "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out)["accuracy"] > 0.985


def test_the_value_feature_matches_a_reference(tmp_path):
    from sklearn_sketch._raw_features import name_keys
    from sklearn_sketch.cli._inputs import _CsvReader
    from sklearn_sketch.cli._bins import numeric_bins, numeric_means, numeric_scales

    frame = write_quantity(tmp_path / "q.csv", 500, 2)
    frame.loc[3, "x"] = 0.0
    frame.to_csv(tmp_path / "q.csv", index=False)
    text = pd.read_csv(tmp_path / "q.csv", dtype=str)
    bins = numeric_bins(text, ["carrier", "x"], 8)
    scales = numeric_scales(text, bins)
    csv = {"label": "y", "columns": ["carrier", "x"], "crosses": [], "bins": bins,
           "scales": scales, "means": numeric_means(text, scales)}
    (with_values,) = list(_CsvReader(str(tmp_path / "q.csv"), 1000, csv))
    (without,) = list(_CsvReader(str(tmp_path / "q.csv"), 1000, {**csv, "scales": {}}))
    # A model of before the means reads a value from 0.
    (from_zero,) = list(_CsvReader(str(tmp_path / "q.csv"), 1000, {**csv, "means": {}}))
    key = int(name_keys(["x"])[0])
    mean, scale = frame.x.mean(), frame.x.std(ddof=1)
    for i in range(len(frame)):
        row = dict(zip(with_values.X[i].indices.tolist(), with_values.X[i].data.tolist()))
        value = row.pop(key, None)
        assert row == dict(zip(without.X[i].indices.tolist(), without.X[i].data.tolist()))
        assert value == pytest.approx((frame.x[i] - mean) / scale)
        old = dict(zip(from_zero.X[i].indices.tolist(), from_zero.X[i].data.tolist()))
        if frame.x[i] == 0:   # a value of 0 is no entry
            assert key not in old
        else:
            assert old[key] == pytest.approx(frame.x[i] / scale)
    assert with_values.feature_names.lookup([key]) == {key: "x"}


def test_a_model_file_with_bad_scales_is_refused_and_one_without_reads_values_not(
        tmp_path, capsys):
    from sklearn_sketch import save
    from sklearn_sketch._model_files import read_model

    write_quantity(tmp_path / "train.csv", 3000, 0)
    model = str(tmp_path / "m.skm")
    assert main(["fit", "--csv", str(tmp_path / "train.csv"), "--label", "y", "--quiet",
                 "--output", model]) == 0
    estimator, metadata = read_model(model)
    good = dict(metadata["input"]["csv"])
    for key, bad in (("scales", {"x": -1.0}), ("scales", {"nowhere": 1.0}),
                     ("scales", {"x": 0.0}), ("scales", {"x": 1}), ("means", {"x": 1}),
                     ("means", {"carrier": 1.0}), ("means", {"x": "1.0"}),
                     ("distinct", ["carrier"]), ("distinct", "x"), ("distinct", [["x"]]),
                     ("text", ["nowhere"]),
                     ("text", "carrier"), ("text", [1]),
                     # Numbers only: a scaled column, not one read by interval too.
                     ("numbers_only", ["carrier"]), ("numbers_only", "x"),
                     ("numbers_only", ["x"])):
        metadata["input"]["csv"] = {**good, key: bad}
        save(estimator, model, metadata=metadata)
        capsys.readouterr()
        assert main(["select", "--model", model]) == 2
        assert "positive scales and finite means, the columns read as numbers only" \
            in capsys.readouterr().err
    metadata["input"]["csv"] = {**good, "crosses": [["carrier", "x"]], "text": ["carrier"]}
    save(estimator, model, metadata=metadata)
    assert main(["select", "--model", model]) == 2
    assert "columns of free text, not crossed" in capsys.readouterr().err
    metadata["input"]["csv"] = good
    # A model of before the scales reads its columns as intervals and categories only.
    del metadata["input"]["csv"]["scales"], metadata["input"]["csv"]["means"]
    save(estimator, model, metadata=metadata)
    assert main(["evaluate", "--model", model, "--csv", str(tmp_path / "train.csv")]) == 0


def test_a_csv_in_time_order_is_shuffled(tmp_path, capsys):
    # Rows in time order: each day's 100 rows share an offset of their target that no
    # column tells (a day's weather on its flights' delays). Neighbours have alike
    # labels, which a count of labels alone does not show; the default trains on the
    # rows shuffled whole, as --shuffle-buffer with every row does.
    rng = np.random.default_rng(0)
    frame = write_quantity(tmp_path / "train.csv", 6000, 0)
    frame["y"] += np.repeat(rng.normal(0, 40, 60), 100).round(2)
    frame.to_csv(tmp_path / "train.csv", index=False)
    model = tmp_path / "m.skm"
    models = {}
    for name, options in (("default", []), ("file order", ["--shuffle-buffer", "0"]),
                          ("whole buffer", ["--shuffle-buffer", "6000"])):
        assert main(["fit", "--csv", str(tmp_path / "train.csv"), "--label", "y", "--epochs",
                     "1", "--output", str(model), *options]) == 0
        err = capsys.readouterr().err
        noted = re.search(r"neighbouring rows of the training input have alike labels \(a "
                          r"correlation of 0\.\d\d between a label and the next", err)
        assert (noted is not None) == (name == "default"), err
        assert ("fit shuffles all 6,000 rows in memory" in err) == (name == "default"), err
        models[name] = model.read_bytes()
    assert models["default"] == models["whole buffer"] != models["file order"]
    # The same rows shuffled: neighbours no more alike than chance, nothing noted.
    frame.sample(frac=1, random_state=0).to_csv(tmp_path / "train.csv", index=False)
    assert main(["fit", "--csv", str(tmp_path / "train.csv"), "--label", "y", "--epochs",
                 "1", "--output", str(model)]) == 0
    assert "alike labels" not in capsys.readouterr().err


def test_a_missing_value_is_a_category_of_its_own(tmp_path, capsys):
    from sklearn_sketch import save
    from sklearn_sketch._model_files import read_model

    # A flight without a tail number was cancelled; the carrier says a little.
    rng = np.random.default_rng(0)
    for name, n in (("train", 3000), ("test", 1000)):
        frame = pd.DataFrame({"carrier": rng.choice(list("ABCD"), n),
                              "tailnum": rng.choice(["N1", "N2", "N3", None], n,
                                                    p=[0.3, 0.3, 0.3, 0.1])})
        cancelled = frame["tailnum"].isna() | (rng.random(n) < 0.02)
        frame["status"] = np.where(cancelled, "cancelled", "flown")
        frame.to_csv(tmp_path / f"{name}.csv", index=False)
    model = str(tmp_path / "m.skm")
    assert main(["fit", "--csv", str(tmp_path / "train.csv"), "--label", "status",
                 "--quiet", "--output", model]) == 0
    capsys.readouterr()
    assert main(["select", "--model", model]) == 0
    assert capsys.readouterr().out.splitlines()[1].split("\t")[1] == "tailnum=NA"
    test = ["evaluate", "--model", model, "--csv", str(tmp_path / "test.csv")]
    accuracy = _metrics(capsys, test)["accuracy"]
    # A model of before the category (no "missing" in its CSV options) reads a missing
    # value as no feature, as it was trained: it cannot tell a cancellation.
    estimator, metadata = read_model(model)
    assert metadata["input"]["csv"].pop("missing") == "NA"
    save(estimator, model, metadata=metadata)
    old = _metrics(capsys, test)["accuracy"]
    majority = float(np.mean(pd.read_csv(tmp_path / "test.csv")["status"] == "flown"))
    assert accuracy > 0.97 and old <= majority + 0.01, (accuracy, old, majority)
    metadata["input"]["csv"]["missing"] = ""
    save(estimator, model, metadata=metadata)
    assert main(["select", "--model", model]) == 2
    assert "the name of a missing value" in capsys.readouterr().err


def test_a_chunk_of_rows_without_labels_is_skipped_whole(files, capsys):
    # A file with chunks of no labelled row (R's exports of a sparse label: 44,274 rows
    # of NA around 81 labelled ones): fit trains the model of the labelled rows alone
    # and evaluate scores them, where both stopped at such a chunk with scikit-learn's
    # "Found array with 0 sample(s)".
    folder, test = files
    frame = pd.read_csv(folder / "train.csv")
    sparse = frame.copy()
    sparse.loc[:1499, "status"] = np.nan
    sparse.loc[2000:2999, "status"] = np.nan
    sparse.to_csv(folder / "sparse.csv", index=False)
    frame[sparse.status.notna()].to_csv(folder / "labelled.csv", index=False)
    predictions = []
    for name in ("sparse", "labelled"):
        model = folder / f"{name}.skm"
        assert main(["fit", "--csv", str(folder / f"{name}.csv"), "--label", "status",
                     "--chunk-rows", "500", "--quiet", "--output", str(model)]) == 0
        assert main(["predict", "--model", str(model), "--csv", str(folder / "test.csv.gz"),
                     "--proba", "--output", str(folder / f"{name}.txt")]) == 0
        predictions.append((folder / f"{name}.txt").read_text())
    assert predictions[0] == predictions[1] and len(predictions[0].splitlines()) == 1001
    capsys.readouterr()
    assert main(["evaluate", "--model", str(folder / "sparse.skm"), "--csv",
                 str(folder / "sparse.csv"), "--chunk-rows", "500", "--format", "json"]) == 0
    metrics = json.loads(capsys.readouterr().out)
    assert metrics["examples"] == int(sparse.status.notna().sum()) == 1500
    assert metrics["accuracy"] > 0.95


@pytest.mark.parametrize("storage", ["pyarrow", "python"])
def test_a_columns_numbers_are_pandas_to_numeric_of_its_text(storage):
    pytest.importorskip("pyarrow")
    from sklearn_sketch.cli._bins import _numbers

    rng = np.random.default_rng(0)
    numbers = [f"{x:.{d}f}" for x, d in zip(rng.normal(0, 1e3, 3000), rng.integers(0, 12, 3000))]
    numbers += [repr(float(x)) for x in rng.random(1000) * 10.0 ** rng.integers(-30, 30, 1000)]
    numbers += ["1e400", "-inf", "NaN", "+.5e+3", "00012", "1.", None]
    for others in ([], [" 12"], ["1_000"], ["?"], ["1,5", "0x10"]):
        text = pd.Series(numbers + others, dtype=pd.StringDtype(storage))
        expected = pd.to_numeric(text.astype(object), errors="coerce").to_numpy(dtype=float)
        np.testing.assert_array_equal(_numbers(text), expected)
