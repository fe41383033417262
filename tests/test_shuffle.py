"""ShuffledReader: every row once per pass, mixed across readers, in bounded memory."""
import numpy as np
import pytest
import scipy.sparse as sp

from sklearn_sketch.io import Chunk, ReadChunk, ShuffledReader, SvmlightReader, scan_labels
from sklearn_sketch.io._shuffle import MAX_STAY, _random_state, _RowBuffer


def chunks_of(reader_id, n_rows, chunk_rows, n_features=1000):
    """Chunks whose rows carry their identity: column = row id, y = reader, weight = row."""
    ids = np.arange(n_rows) + 1000 * reader_id
    out = []
    for start in range(0, n_rows, chunk_rows):
        rows = ids[start:start + chunk_rows]
        X = sp.csr_matrix((np.ones(rows.size), (np.arange(rows.size), rows % n_features)),
                          shape=(rows.size, n_features))
        out.append(Chunk(X, np.full(rows.size, float(reader_id)), rows.astype(float),
                         start + 1))
    return out


def test_every_row_once_with_its_own_fields():
    readers = [chunks_of(0, 230, 20), chunks_of(1, 95, 7), chunks_of(2, 10, 10)]
    mixed = list(ShuffledReader(readers, buffer_rows=64, chunk_rows=16, random_state=0))
    weights = np.concatenate([c.sample_weight for c in mixed])
    assert sorted(weights.tolist()) == sorted(
        float(r) for reader in readers for c in reader for r in c.sample_weight)
    for chunk in mixed:
        # Each row keeps its own X and y: the fields are permuted together.
        np.testing.assert_array_equal(chunk.X.indices, chunk.sample_weight % 1000)
        np.testing.assert_array_equal(chunk.y, chunk.sample_weight // 1000)
        assert chunk.first_line == 0 and chunk.X.shape[1] == 1000
    assert all(c.X.shape[0] == 16 for c in mixed[:-1]) and 0 < mixed[-1].X.shape[0] <= 16


def test_files_are_mixed_from_the_first_chunk():
    readers = [chunks_of(0, 500, 50), chunks_of(1, 500, 50)]
    mixed = list(ShuffledReader(readers, buffer_rows=200, chunk_rows=50, random_state=1))
    for chunk in mixed:
        share = chunk.y.mean()
        assert 0.2 < share < 0.8, share
    # One reader after the other, as without the shuffle, would fail that test.
    sequential = [c for reader in readers for c in reader]
    assert sequential[0].y.mean() == 0.0


def test_readers_of_different_sizes_are_mixed_to_their_ends_given_their_sizes():
    # Round-robin: a reader of a fifth of the rows runs out a third of the way through
    # and the pass ends on the large one alone. Given their sizes, each stretch of the
    # pass holds the readers in their shares.
    readers = [chunks_of(0, 200, 10), chunks_of(1, 800, 10)]

    def small_share_of_the_last_fifth(sizes):
        mixed = list(ShuffledReader(readers, buffer_rows=60, chunk_rows=10, random_state=3,
                                    sizes=sizes))
        y = np.concatenate([chunk.y for chunk in mixed])
        assert y.size == 1000 and np.count_nonzero(y == 0) == 200   # every row once
        return np.mean(y[-200:] == 0)

    assert small_share_of_the_last_fifth(None) == 0.0
    assert 0.12 < small_share_of_the_last_fifth([1.0, 4.0]) < 0.28
    with pytest.raises(ValueError, match="sizes must be one positive finite number per"):
        ShuffledReader(readers, sizes=[1.0, 0.0])


def test_memory_is_bounded_by_the_buffer(monkeypatch):
    held = []
    take = _RowBuffer.take_shuffled

    def spy(self, rng, n_take, chunk_rows):
        self._merge_pending()
        held.append(self.source.size)
        return take(self, rng, n_take, chunk_rows)

    monkeypatch.setattr(_RowBuffer, "take_shuffled", spy)
    readers = [chunks_of(r, 2000, 25) for r in range(3)]
    assert sum(c.X.shape[0] for c in ShuffledReader(readers, buffer_rows=300,
                                                    random_state=0)) == 6000
    # Buffer plus one chunk of each reader, never the data.
    assert max(held) <= 300 + 3 * 25


def test_reproducible_and_new_each_pass():
    readers = [chunks_of(0, 100, 10), chunks_of(1, 100, 10)]

    def order(reader):
        return np.concatenate([c.sample_weight for c in reader])

    first, second = ShuffledReader(readers, 50, random_state=3), ShuffledReader(readers, 50,
                                                                                random_state=3)
    epoch1, epoch2 = order(first), order(first)
    np.testing.assert_array_equal(epoch1, order(second))
    assert not np.array_equal(epoch1, epoch2)
    np.testing.assert_array_equal(np.sort(epoch1), np.sort(epoch2))
    assert not np.array_equal(epoch1, order(ShuffledReader(readers, 50, random_state=4)))


def test_read_chunks_keep_sequences_with_their_labels():
    def reads(label, n):
        names = [f"{label}{i}" for i in range(n)]
        return [ReadChunk(names, [name.encode() for name in names], None,
                          np.array([label] * n), f"{label}.fa", 1)]

    mixed = list(ShuffledReader([reads("a", 30), reads("b", 20)], buffer_rows=10,
                                chunk_rows=8, random_state=0))
    names = [name for c in mixed for name in c.names]
    assert sorted(names) == sorted([f"a{i}" for i in range(30)] + [f"b{i}" for i in range(20)])
    for chunk in mixed:
        assert isinstance(chunk.sequences, list) and chunk.path is None
        assert [s.decode() for s in chunk.sequences] == chunk.names
        assert [name[0] for name in chunk.names] == chunk.labels.tolist()


def test_feature_name_tables_follow_their_rows():
    class Table:
        def __init__(self, names):
            self.names = names

        def lookup(self, keys):
            return {k: self.names[k] for k in keys if k in self.names}

    X = sp.csr_matrix(np.eye(2))
    readers = [[Chunk(X, np.zeros(2), None, 1, None, Table({0: "zero"}))],
               [Chunk(X, np.ones(2), None, 1, None, Table({1: "one"}))]]
    mixed = list(ShuffledReader(readers, buffer_rows=100, chunk_rows=4, random_state=0))
    assert len(mixed) == 1
    assert mixed[0].feature_names.lookup([0, 1, 2]) == {0: "zero", 1: "one"}


def test_a_row_leaves_the_buffer_after_max_stay_takes_and_its_names_with_it():
    # Drawn at random only, a few rows of every chunk stayed take after take, and
    # with them the chunk's names table (the text of all its lines).
    buffer, rng = _RowBuffer(), np.random.default_rng(0)
    X = sp.csr_matrix(np.ones((100, 2)))
    buffer.add(Chunk(X, np.zeros(100), None, 1, None, {0: "first"}))
    for take in range(MAX_STAY + 1):
        buffer.add(Chunk(X, np.full(100, take + 1.0), None, 1, None, {0: "later"}))
        out = np.concatenate([chunk.y for chunk in buffer.take_shuffled(rng, 100, 10)])
        assert out.size == 100 and buffer.source.size == 100
        left = buffer.values("y")
        # Until its stay is over, the first chunk's rows leave at random, as others do.
        assert (0 in left) == (take < MAX_STAY)
    assert 0 not in buffer.tables


def test_bad_arguments_and_mixtures():
    with pytest.raises(ValueError, match="at least one reader"):
        ShuffledReader([])
    with pytest.raises(ValueError, match="buffer_rows"):
        ShuffledReader([[]], buffer_rows=0)
    X = sp.csr_matrix(np.eye(2))
    wide = sp.csr_matrix(np.eye(2, 3))
    with pytest.raises(ValueError, match="different numbers of columns"):
        list(ShuffledReader([[Chunk(X, np.zeros(2), None, 1)],
                             [Chunk(wide, np.zeros(2), None, 1)]], random_state=0))
    with pytest.raises(ValueError, match="sample_weight"):
        list(ShuffledReader([[Chunk(X, np.zeros(2), None, 1)],
                             [Chunk(X, np.zeros(2), np.ones(2), 1)]], random_state=0))


def test_shuffled_svmlight_files_hold_the_files_rows(tmp_path):
    paths = []
    for i in range(2):
        path = tmp_path / f"{i}.svm"
        path.write_text("".join(f"{i} {j + 1}:{j}\n" for j in range(1, 40)))
        paths.append(path)
    readers = [SvmlightReader(p, 7, zero_based=False) for p in paths]
    mixed = list(ShuffledReader(readers, buffer_rows=20, random_state=0))
    rows = sorted((float(c.y[r]), float(c.X[r].data[0])) for c in mixed for r in range(c.X.shape[0]))
    assert rows == sorted((float(i), float(j)) for i in range(2) for j in range(1, 40))


# ----------------------------------------------------------- scan_labels
def test_scan_labels_equals_the_parsed_labels(tmp_path):
    vw = tmp_path / "f.vw"
    vw.write_text("2 |f a\n\n1 0.5 'id|f b\n  3 tag|f c\n| d\n-1.5e0 1 1 x|ns z\n'q|f e\n")
    assert np.array_equal(scan_labels(vw, "vw"), [-1.5, 1, 2, 3, np.nan], equal_nan=True)
    svm = tmp_path / "f.svm"
    svm.write_text("# comment\n1 1:2\n\n-1 qid:3 2:1 # tail\n 7\n1 4:1\n")
    np.testing.assert_array_equal(scan_labels(svm, "svmlight"), [-1, 1, 7])
    np.testing.assert_array_equal(
        scan_labels(svm, "svmlight", block_size=3),
        np.unique(np.concatenate([c.y for c in SvmlightReader(svm, zero_based=False)])))


def test_label_order_counts_changes_across_blocks_against_every_order():
    import itertools

    from sklearn_sketch.io._label_order import label_order

    labels = np.array([2, 0, 0, 1, 2, 2, 0])
    whole = label_order([labels])
    assert whole.n_rows == 7 and whole.n_changes == 4
    for cut in itertools.combinations(range(1, 7), 2):  # any blocks, even empty ones
        blocks = np.split(labels, cut) + [labels[:0]]
        assert label_order(blocks) == whole
    # The expected changes are the mean over every order of the same labels.
    changes = [np.count_nonzero(np.diff(p)) for p in itertools.permutations(labels)]
    assert whole.expected_changes == pytest.approx(np.mean(changes))
    assert label_order([]).n_rows == 0 and label_order([[5]]).expected_changes == 0


def test_label_order_measures_how_alike_neighbouring_labels_are():
    from sklearn_sketch.io._label_order import combined, label_order

    rng = np.random.default_rng(0)
    # 60 "days" of 50 rows that share an offset: a file in time order.
    days = np.repeat(rng.normal(0, 2, 60), 50) + rng.normal(0, 1, 3000)
    centred = days - days.mean()
    direct = centred[1:] @ centred[:-1] / (centred @ centred)
    for cut in ([], [1], [7, 7, 1500], [2999]):  # any blocks, even empty ones
        order = label_order(np.split(days, cut))
        assert order.serial_correlation == pytest.approx(direct, rel=1e-9)
    assert order.neighbours_alike and not order.sorted_by_label
    # Numbers that drift, each seldom repeated: alike by their correlation only.
    assert order.numbers_alike and not order.changes_alike
    shuffled = label_order([rng.permutation(days)])
    assert abs(shuffled.serial_correlation) < 4 / np.sqrt(3000)
    assert not shuffled.neighbours_alike
    # Labels that are words: changes of label only. Days of mostly one class.
    late = np.where(rng.random(3000) < np.repeat(rng.choice([0.1, 0.9], 60), 50), "late", "on time")
    assert np.isnan(label_order([late]).serial_correlation)
    assert label_order([late]).neighbours_alike and label_order([late]).changes_alike
    assert not label_order([rng.permutation(late)]).neighbours_alike
    # A few rows, however alike, decide nothing; equal numbers have no correlation.
    assert not label_order([days[:40]]).neighbours_alike
    assert np.isnan(label_order([np.ones(100)]).serial_correlation)
    # Several files: their correlations weighted by rows.
    other = label_order([rng.permutation(days)[:1000]])
    both = combined([label_order([days]), other, label_order([late])])
    assert both.serial_correlation == pytest.approx(
        (3000 * direct + 1000 * other.serial_correlation) / 4000)


@pytest.mark.parametrize("format", ["svmlight", "vw"])
def test_scan_labels_tells_a_sorted_file_from_a_shuffled_one(tmp_path, format):
    rng = np.random.default_rng(0)
    y = np.repeat([-1, 1, 3], 40)
    line = "{} 1:1\n" if format == "svmlight" else "{} |f a\n"
    for name, labels in (("sorted", y), ("shuffled", rng.permutation(y)),
                         ("few rows", y[38:44])):
        path = tmp_path / f"{name}.{format}"
        path.write_text("".join(line.format(v) for v in labels))
        distinct, order = scan_labels(path, format, return_order=True)
        np.testing.assert_array_equal(distinct, np.unique(labels))
        assert order.n_changes == np.count_nonzero(np.diff(labels))
        # A random order changes label (n - 1) - sum(c (c - 1)) / n times on average.
        counts = np.unique(labels, return_counts=True)[1]
        n = labels.size
        assert order.expected_changes == pytest.approx(n - 1 - np.sum(counts * (counts - 1)) / n)
        # 2 of 79 expected: sorted; a random order is near 79; 6 rows say nothing.
        assert order.sorted_by_label == (name == "sorted"), (name, order)


def test_scan_labels_errors_name_the_line(tmp_path):
    from sklearn_sketch.io import ParseError
    bad = tmp_path / "bad.vw"
    bad.write_text("1 |f a\nx |f b\n")
    with pytest.raises(ParseError, match="bad.vw, line 2: bad label 'x'"):
        scan_labels(bad, "vw")
    with pytest.raises(ValueError, match="format"):
        scan_labels(bad, "csv")


def test_seeds_are_read_as_scikit_learn_reads_them():
    # NumPy only (the command line's reading thread must not import scikit-learn),
    # with check_random_state's meaning.
    from sklearn.utils import check_random_state

    for seed in (0, 7, 2**31 - 1):
        assert _random_state(seed).randint(10**9) == check_random_state(seed).randint(10**9)
    state = np.random.RandomState(3)
    assert _random_state(state) is state
    assert _random_state(None) is check_random_state(None)
    with pytest.raises(ValueError, match="cannot be used to seed"):
        _random_state("seven")


def test_rows_stay_in_their_chunks_until_the_last_one_leaves():
    # The buffer holds the chunks as read (no copy of their rows on the way in, nor of
    # the rows kept at a take), and lets a chunk go with its last row.
    buffer, rng = _RowBuffer(), np.random.default_rng(0)
    chunks = chunks_of(0, 100, 25)
    for chunk in chunks:
        buffer.add(chunk)
    buffer._merge_pending()
    assert all(buffer.chunks[i]["X"] is chunk.X for i, chunk in enumerate(chunks))
    out = list(buffer.take_shuffled(rng, 60, 20))
    assert sorted(buffer.chunks) == np.unique(buffer.source).tolist()
    held = buffer.values("sample_weight")
    # The rows out and the rows held are the 100 rows, each once, with their own fields.
    weights = np.concatenate([c.sample_weight for c in out] + [held])
    np.testing.assert_array_equal(np.sort(weights), np.arange(100.0))
    np.testing.assert_array_equal(buffer.values("X").indices, held % 1000)
    list(buffer.take_shuffled(rng, 40, 20))
    assert buffer.chunks == {} and buffer.source.size == 0


def test_merged_names_ask_each_table_for_the_keys_not_found_before():
    from sklearn_sketch.io._shuffle import _MergedNames

    class Table:
        def __init__(self, names):
            self.names, self.asked = names, []

        def lookup(self, keys):
            self.asked.append(sorted(int(k) for k in keys))
            return {int(k): self.names[k] for k in keys if k in self.names}

    first, second, third = Table({1: "a", 2: "b"}), Table({2: "other", 3: "c"}), Table({9: "z"})
    merged = _MergedNames([first, second, third])
    assert merged.lookup([3, 2, 1, 7]) == {1: "a", 2: "b", 3: "c"}  # the first table wins
    assert first.asked == [[1, 2, 3, 7]] and second.asked == [[3, 7]] and third.asked == [[7]]
    assert merged.lookup([1]) == {1: "a"} and len(second.asked) == 1  # found: no more asked
