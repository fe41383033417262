"""PackedNames: the heap keys' names in three arrays, checked against a dict."""
import numpy as np
import pytest

from sklearn_sketch._names import NAME_OVERHEAD, PackedNames, mean_name_bytes


def _nbytes(mapping):
    return sum(NAME_OVERHEAD + len(v.encode("utf-8")) for v in mapping.values())


def test_churn_matches_a_dict_reference():
    rng = np.random.default_rng(0)
    names = {k: f"n{k}" + "é" * (k % 5) for k in range(5000)}
    table, reference = PackedNames(), {}
    for _ in range(30):
        keys = np.unique(rng.choice(5000, size=300))
        offered = {int(k): names[int(k)] for k in rng.choice(5000, size=400)}
        table, dropped = table.updated(keys, offered)
        reference = {k: reference.get(k, offered.get(k)) for k in keys.tolist()}
        reference = {k: v for k, v in reference.items() if v is not None}
        assert dropped == 0
        assert dict(table) == reference
        assert table.nbytes == _nbytes(reference)
        np.testing.assert_array_equal(table.keys_array, sorted(reference))
    assert len(reference) > 10
    probe = np.array(list(reference) + [10**9, -1])
    assert table.names_of(probe).tolist() == list(reference.values()) + [None, None]


def test_a_key_keeps_its_first_name_and_bytes_names_read_as_str():
    table, _ = PackedNames({1: "one"}).updated([1, 2], {1: "uno", 2: b"caf\xc3\xa9"})
    assert dict(table) == {1: "one", 2: "café"}
    assert table.get(3) is None and 2 in table and 3 not in table


@pytest.mark.parametrize("max_bytes", [0, 20, 40, 70, 1000])
def test_max_bytes_keeps_the_shortest_new_names(max_bytes):
    table = PackedNames({5: "kept"})
    new = {1: "a" * 30, 2: "bb", 3: "c" * 10, 4: "dddd"}
    out, dropped = table.updated([1, 2, 3, 4, 5], new, max_bytes=max_bytes + table.nbytes)
    added = {k: v for k, v in out.items() if k != 5}
    assert out[5] == "kept"
    assert out.nbytes <= max_bytes + table.nbytes
    assert dropped == len(new) - len(added)
    # Shortest first: the added names are a prefix of the names by length.
    by_length = sorted(new, key=lambda k: len(new[k]))
    assert sorted(added) == sorted(by_length[:len(added)])
    if dropped:
        next_name = new[by_length[len(added)]]
        assert out.nbytes + NAME_OVERHEAD + len(next_name) > max_bytes + table.nbytes


def test_mean_name_bytes_of_a_mapping_and_of_key_names():
    from sklearn_sketch.io import KeyNames

    assert mean_name_bytes({1: "ab", 2: "cdéf"}) == 3.5
    assert mean_name_bytes({}) == 0.0
    table = KeyNames([7, 8, 9], [0, 2, 5, 9], b"abcdefghi")
    assert table.mean_name_bytes() == 3.0


def test_an_unchanged_table_is_shared_not_rebuilt():
    table = PackedNames({3: "a", 9: "bc"})
    same, dropped = table.updated([9, 3], {3: "other"})
    assert same is table and dropped == 0
    smaller, _ = table.updated([9], None)
    assert smaller is not table and dict(smaller) == {9: "bc"} and dict(table) == {3: "a", 9: "bc"}


def test_a_table_whose_names_outgrow_uint32_ends_raises(monkeypatch):
    """The ends of the names are uint32 (4 bytes a name, not 8): a table may hold at
    most MAX_POOL_BYTES of names, and says so past it."""
    from sklearn_sketch import _names

    table = PackedNames({1: "ab", 2: "cde"})
    assert table._ends.dtype == np.uint32
    assert table.nbytes == 2 * (8 + 4) + 5
    monkeypatch.setattr(_names, "MAX_POOL_BYTES", 4)
    with pytest.raises(ValueError, match="the names take 5 bytes, more than the 4"):
        PackedNames({1: "ab", 2: "cde"})


@pytest.mark.parametrize("n_sorted", [0, 1, 50])
def test_find_sorted_agrees_with_a_dict(n_sorted):
    from sklearn_sketch._sorted_keys import find_sorted
    rng = np.random.RandomState(n_sorted)
    sorted_keys = np.unique(rng.randint(-100, 100, size=n_sorted)).astype(np.int64)
    keys = rng.randint(-120, 120, size=300).astype(np.int64)
    rows, found = find_sorted(sorted_keys, keys)
    where = {int(k): i for i, k in enumerate(sorted_keys)}
    assert found.tolist() == [int(k) in where for k in keys]
    assert rows[found].tolist() == [where[int(k)] for k in keys if int(k) in where]
    assert rows.min(initial=0) >= 0 and rows.max(initial=0) <= max(sorted_keys.size - 1, 0)


@pytest.mark.parametrize("dtype", [np.int64, np.int32, np.uint64, np.uint8, bool, np.float64])
@pytest.mark.parametrize("size", [0, 1, 2, 1000])
def test_unique_keys_agrees_with_a_set(dtype, size):
    from sklearn_sketch._sorted_keys import unique_keys
    rng = np.random.RandomState(size)
    keys = rng.randint(0, max(size // 3, 2), size=size).astype(dtype)
    unique = unique_keys(keys)
    assert unique.dtype == keys.dtype
    assert unique.tolist() == sorted(set(keys.tolist()))
