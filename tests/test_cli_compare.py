"""sklearn-sketch compare: two sets of files in, the items that differ most out."""
import json

import numpy as np
import pytest

from sklearn_sketch.cli import main


@pytest.fixture
def texts(tmp_path):
    rng = np.random.default_rng(0)
    words = np.array([f"word{i}" for i in range(300)])
    a = [" ".join(rng.choice(words, 12)) + (" spike" if i % 4 == 0 else "") for i in range(3000)]
    b = [" ".join(rng.choice(words, 12)) + (" Spike" if i % 80 == 0 else "") for i in range(3000)]
    (tmp_path / "a.txt").write_text("\n".join(a))
    (tmp_path / "b.txt").write_text("\n".join(b))
    (tmp_path / "empty.txt").write_text("")
    return tmp_path


def test_compare_finds_the_planted_word(texts, capsys):
    assert main(["compare", "--a", str(texts / "a.txt"), "--b", str(texts / "b.txt"),
                 "--memory-budget", "16KB", "--format", "json", "--quiet",
                 "--chunk-lines", "500"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["more_in_a"][0]["item"] == "spike"  # lower-cased as CountVectorizer does
    assert report["more_in_a"][0]["log_ratio"] > np.log(4)  # 20x; 16KB of counts blur it
    assert report["memory_bytes"] <= 16 * 1024
    assert report["items_a"] == 3000 * 12 + 750


def test_compare_vw_files_names_the_features_of_both_streams(tmp_path, capsys):
    rng = np.random.default_rng(2)
    words = np.array([f"f{i}" for i in range(200)])

    def lines(planted, every):
        return "\n".join(f"{rng.choice([-1, 1])} |w " + " ".join(rng.choice(words, 8, False))
                         + (f" {planted}:0.5" if i % every == 0 else "")
                         for i in range(3000)) + "\n"
    (tmp_path / "a.vw").write_text(lines("spike", 4))
    (tmp_path / "b.vw").write_text(lines("drift", 3))
    assert main(["compare", "--vw", "--a", str(tmp_path / "a.vw"), "--b",
                 str(tmp_path / "b.vw"), "--memory-budget", "32KB", "--format", "json",
                 "--quiet", "--chunk-lines", "500"]) == 0
    report = json.loads(capsys.readouterr().out)
    # Each feature of a line is one occurrence, whatever its value (0.5 here).
    assert report["more_in_a"][0]["item"] == "w^spike"
    assert report["more_in_b"][0]["item"] == "w^drift"  # named from stream B's chunks
    assert report["items_a"] == 3000 * 8 + 750 and report["items_b"] == 3000 * 8 + 1000


def test_a_second_pass_counts_the_listed_words_exactly_unless_one_pass(texts, capsys):
    # 'late' is as frequent in A as in B until the last lines of A: it enters the heap
    # there, and one pass counts it from there.
    for name, tail in (("a.txt", ["late word1"] * 300), ("b.txt", [])):
        lines = (texts / name).read_text().splitlines()
        lines = [line + (" late" if i % 100 == 0 else "") for i, line in enumerate(lines)]
        (texts / name).write_text("\n".join(lines + tail))
    lines = {name: (texts / name).read_text().lower().split() for name in ("a.txt", "b.txt")}
    reports = {}
    for option in ([], ["--one-pass"]):
        assert main(["compare", "--a", str(texts / "a.txt"), "--b", str(texts / "b.txt"),
                     "--memory-budget", "16KB", "--format", "json", "--quiet",
                     "--chunk-lines", "500", "--min-count", "0", *option]) == 0
        reports[bool(option)] = json.loads(capsys.readouterr().out)
    listed = reports[False]["more_in_a"] + reports[False]["more_in_b"]
    for entry in listed:
        assert entry["count_a"] == lines["a.txt"].count(entry["item"])
        assert entry["count_b"] == lines["b.txt"].count(entry["item"])
    ratios = [entry["log_ratio"] for entry in reports[False]["more_in_a"]]
    assert ratios == sorted(ratios, reverse=True) and min(ratios) > 0
    assert [e["item"] for e in reports[False]["more_in_a"][:2]] == ["spike", "late"]
    late = {e["item"]: e for e in reports[True]["more_in_a"] + reports[True]["more_in_b"]}
    assert lines["a.txt"].count("late") == 330
    assert "late" in late and late["late"]["count_a"] < 330  # counted since it entered


@pytest.mark.parametrize("argv, message", [
    (["--a", "{empty}", "--b", "{b}"], "stream A holds no item"),
    (["--a", "{a}", "--b", "{empty}"], "stream B holds no item"),
    (["--a", "{a}", "--b", "{b}", "--memory-budget", "64B"], "too small"),
    (["--a", "{a}", "--b", "{missing}"], "No such file"),
])
def test_bad_input_is_one_line_status_2_and_nothing_written(texts, capsys, argv, message):
    out = texts / "out.txt"
    argv = [a.format(a=texts / "a.txt", b=texts / "b.txt", empty=texts / "empty.txt",
                     missing=texts / "missing.txt") for a in argv]
    assert main(["compare", *argv, "--quiet", "--output", str(out)]) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1
    assert not out.exists()


def test_pmi_lists_the_planted_pair(texts, capsys):
    rng = np.random.default_rng(1)
    words = np.array([f"word{i}" for i in range(200)])
    lines = [" ".join(rng.choice(words, 6)) + " new york " + " ".join(rng.choice(words, 6))
             for _ in range(2000)]
    (texts / "posts.txt").write_text("\n".join(lines))
    assert main(["pmi", str(texts / "posts.txt"), "--memory-budget", "256KB", "--format",
                 "json", "--quiet", "--chunk-lines", "500"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["top"][0]["pair"] == "new york"
    assert report["memory_bytes"] <= 256 * 1024 and report["words"] == 2000 * 14


def test_pmi_reads_latin_1_text_as_its_utf_8_twin(texts, capsys):
    # 20 Newsgroups' posts are Latin-1: read as UTF-8, "café" was cut at its accent.
    rng = np.random.default_rng(2)
    words = np.array([f"mot{i}" for i in range(100)])
    lines = [" ".join(rng.choice(words, 5)) + " café crème " + " ".join(rng.choice(words, 5))
             for _ in range(800)]
    tables = []
    for encoding in ("utf-8", "latin-1"):
        path = texts / f"{encoding}.txt"
        path.write_bytes("\n".join(lines).encode(encoding))
        assert main(["pmi", str(path), "--format", "json", "--quiet"]) == 0
        report = json.loads(capsys.readouterr().out)
        report.pop("seconds"), report.pop("words_per_second")
        tables.append(report)
    assert tables[0] == tables[1] and tables[1]["top"][0]["pair"] == "café crème"


def test_pmi_says_why_its_table_is_empty(texts, capsys):
    # A few sentences (a Russian novel's first lines): no pair reached --min-count, and
    # an empty table said nothing.
    (texts / "short.txt").write_text("В начале июля молодой человек вышел\nна улицу\n")
    assert main(["pmi", str(texts / "short.txt")]) == 0
    captured = capsys.readouterr()
    assert captured.out.splitlines()[-1] == "pmi\tcount\tweight\tpair"
    assert "no pair was estimated at least --min-count=5 times" in captured.err
    assert main(["pmi", str(texts / "short.txt"), "--min-count", "1"]) == 0
    captured = capsys.readouterr()
    assert "начале июля" in captured.out and "no pair" not in captured.err


@pytest.mark.parametrize("argv, message", [
    (["{empty}"], "the files hold no word"),
    (["{a}", "--window", "0"], "expected a positive integer"),
    (["{a}", "--memory-budget", "8KB"], "too small"),
])
def test_pmi_bad_input_is_one_line_status_2(texts, capsys, argv, message):
    out = texts / "out.txt"
    argv = [a.format(a=texts / "a.txt", empty=texts / "empty.txt") for a in argv]
    assert main(["pmi", *argv, "--quiet", "--output", str(out)]) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1
    assert not out.exists()


def _genome(rng, n, planted=b""):
    return rng.choice(list(b"ACGT"), n).astype(np.uint8).tobytes() + planted


def test_windows_hold_each_kmer_once():
    from sklearn_sketch.cli._compare import _windows
    from sklearn_sketch.feature_extraction import KmerVectorizer

    rng = np.random.default_rng(1)
    reads = [_genome(rng, n) for n in (5, 40, 41, 1000)] + [b"ACGNNACGTTA" * 30]
    vectorizer = KmerVectorizer(k=6)
    for bases in (1, 7, 35, 36, 500):
        windows = list(_windows(reads, 6, bases))
        assert all(len(w) <= bases + 5 for w in windows)
        whole = np.asarray(vectorizer.transform(reads).sum(axis=0)).ravel()
        cut = np.asarray(vectorizer.transform(windows).sum(axis=0)).ravel()
        np.testing.assert_array_equal(cut, whole)


def test_the_pool_trains_every_occurrence_once_and_fits_whole_streams_in_one_call():
    from sklearn_sketch.cli._compare import _OccurrencePool

    rng = np.random.default_rng(2)
    chunks = [(rng.integers(0, 99, 70), rng.integers(0, 99, 50)) for _ in range(9)]
    chunks += [(rng.integers(0, 99, 30), None)]
    for capacity, n_calls in ((10**6, 1), (300, None)):
        calls = list(_OccurrencePool(capacity, 0).mixed(iter(chunks)))
        assert n_calls is None and len(calls) > 2 or len(calls) == n_calls
        for stream in (0, 1):
            given = np.concatenate([c[stream] for c in chunks if c[stream] is not None])
            taken = np.concatenate([call[stream] for call in calls])
            np.testing.assert_array_equal(np.sort(taken), np.sort(given))
        # Past the capacity a call takes about half of what the pool holds.
        assert all(sum(map(len, call)) < 300 for call in calls[:-1])


def test_compare_fasta_reads_a_chromosome_in_windows_with_exact_counts(tmp_path, capsys,
                                                                      monkeypatch):
    import sklearn_sketch.cli._compare as compare
    from sklearn_sketch.feature_extraction import KmerVectorizer

    rng = np.random.default_rng(3)
    spike = b"ACGGTCAAGTTC"
    a = _genome(rng, 30_000) + spike * 40 + _genome(rng, 30_000)
    b = _genome(rng, 60_000) + spike
    for name, sequence in (("a.fa", a), ("b.fa", b)):
        (tmp_path / name).write_bytes(b">chromosome\n" + sequence + b"\n")
    reports = []
    for window, pool in ((10**9, 10**9), (5_000, 20_000)):
        monkeypatch.setattr(compare, "WINDOW_BASES", window)
        monkeypatch.setattr(compare, "POOL_OCCURRENCES", pool)
        assert main(["compare", "--fasta", "--k", "8", "--a", str(tmp_path / "a.fa"),
                     "--b", str(tmp_path / "b.fa"), "--memory-budget", "64KB",
                     "--format", "json", "--quiet", "--random-state", "0"]) == 0
        reports.append(json.loads(capsys.readouterr().out))
    vectorizer = KmerVectorizer(k=8)
    counts = [np.asarray(vectorizer.transform([s]).todense()).ravel() for s in (a, b)]
    keys = {kmer: key for key, kmer in zip(range(4**8), vectorizer.decode(np.arange(4**8)))}
    for report in reports:
        assert report["items_a"] == counts[0].sum() and report["items_b"] == counts[1].sum()
        listed = report["more_in_a"] + report["more_in_b"]
        assert listed
        for entry in listed:  # the second pass counts exactly, windows or not
            key = keys[entry["item"]]
            assert (entry["count_a"], entry["count_b"]) == (counts[0][key], counts[1][key])
    # The spike's k-mers lead A's list both ways of reading.
    spiked = set(vectorizer.decode(vectorizer.transform([spike * 2]).indices))
    for report in reports:
        assert {e["item"] for e in report["more_in_a"][:3]} <= spiked


def test_reads_are_told_by_their_files_and_fastq_is_read(tmp_path, capsys):
    rng = np.random.default_rng(4)
    spike = b"ACGGTCAAGTTCAGT"
    genomes = [_genome(rng, 20_000), _genome(rng, 20_000)]
    a_reads = [genomes[0][i:i + 100] for i in range(0, 19_900, 50)] + [spike * 6] * 30
    b_reads = [genomes[1][i:i + 100] for i in range(0, 19_900, 50)]
    fastq = "".join(f"@r{i}\n{r.decode()}\n+\n{'I' * len(r)}\n" for i, r in enumerate(a_reads))
    (tmp_path / "a.fq").write_text(fastq)
    (tmp_path / "b.fa").write_text("".join(f">r{i}\n{r.decode()}\n"
                                           for i, r in enumerate(b_reads)))
    reports = {}
    for option in ([], ["--fasta"], ["--fastq"]):
        assert main(["compare", *option, "--k", "8", "--a", str(tmp_path / "a.fq"), "--b",
                     str(tmp_path / "b.fa"), "--format", "json", "--random-state", "0"]) == 0
        out, err = capsys.readouterr()
        assert ("hold reads: comparing their 8-mers" in err) == (not option)
        reports[tuple(option)] = json.loads(out)
    assert reports[()] == {**reports[("--fasta",)], "seconds": reports[()]["seconds"]}
    report = reports[("--fastq",)]
    assert report["items_a"] == sum(len(r) - 7 for r in a_reads)
    assert report["items_b"] == sum(len(r) - 7 for r in b_reads)
    from sklearn_sketch.feature_extraction import KmerVectorizer
    vectorizer = KmerVectorizer(k=8)  # canonical: the spike's k-mers or their complements
    spiked = set(vectorizer.decode(vectorizer.transform([spike * 2]).indices))
    assert {e["item"] for e in report["more_in_a"][:3]} <= spiked
    # Streams of two kinds: one line, status 2, nothing written.
    (tmp_path / "b.txt").write_text("some words here\n" * 50)
    out = tmp_path / "report.txt"
    assert main(["compare", "--a", str(tmp_path / "a.fq"), "--b", str(tmp_path / "b.txt"),
                 "--output", str(out), "--quiet"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "stream A holds reads" in err and "B text" in err
    assert not out.exists()
    # An empty file tells no kind: it holds no item.
    (tmp_path / "empty.fq").write_text("")
    assert main(["compare", "--a", str(tmp_path / "a.fq"), "--b", str(tmp_path / "empty.fq"),
                 "--output", str(out), "--quiet"]) == 2
    assert "stream B holds no item" in capsys.readouterr().err and not out.exists()


def test_folders_are_read_as_their_files(texts, capsys):
    # `compare --a strains/ --b others/` and `pmi corpus/` stopped with "Is a directory".
    def report(argv):
        assert main([*argv, "--format", "json", "--quiet", "--chunk-lines", "500"]) == 0
        found = json.loads(capsys.readouterr().out)
        found.pop("seconds", None), found.pop("words_per_second", None)
        return found

    for name, folder in (("a.txt", "A/deeper"), ("b.txt", "B")):
        (texts / folder).mkdir(parents=True)
        (texts / folder / name).write_text((texts / name).read_text())
        (texts / folder / ".hidden").write_text("hidden hidden hidden")  # left out
    files = report(["compare", "--a", str(texts / "a.txt"), "--b", str(texts / "b.txt")])
    folders = report(["compare", "--a", str(texts / "A"), "--b", str(texts / "B")])
    assert folders == files and folders["more_in_a"][0]["item"] == "spike"
    assert report(["pmi", str(texts / "A")]) == report(["pmi", str(texts / "a.txt")])
    (texts / "nothing").mkdir()
    assert main(["compare", "--a", str(texts / "nothing"), "--b", str(texts / "B"),
                 "--quiet"]) == 2
    assert "nothing is a folder that holds no file" in capsys.readouterr().err


def test_short_lines_are_read_in_chunks_of_enough_text(tmp_path):
    # pmi over a folder of posts (a line of a post at a time) paid a chunk's fixed cost
    # every 500 short lines: 110,000 words/s where chunks of 256 KiB ran at 263,000.
    from sklearn_sketch.cli._report import read_lines

    (tmp_path / "short.txt").write_text("ab cd\n" * 3000)        # 6 characters a line
    (tmp_path / "long.txt").write_text(("ab " * 100 + "\n") * 30)  # 301
    short, long_ = str(tmp_path / "short.txt"), str(tmp_path / "long.txt")
    assert [len(b) for b in read_lines([short], 500)] == [500] * 6
    assert [len(b) for b in read_lines([short], 500, min_chars=6 * 1200)] == [1200, 1200, 600]
    assert [len(b) for b in read_lines([long_], 10, min_chars=1000)] == [10, 10, 10]
    assert sum(read_lines([short, long_], 7, min_chars=5000), []) == (
        ["ab cd\n"] * 3000 + [("ab " * 100 + "\n")] * 30)
