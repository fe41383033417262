import numpy as np
import pytest

from sklearn_sketch.datasets import load_dna_sample
from sklearn_sketch.datasets._dna import _manifest, _segment

SPECIES = ["E.Coli", "H.Pylori", "S.Aureus", "V.Cholerae"]
COMPLEMENT = str.maketrans("ACGT", "TGCA")


def test_same_seed_same_reads_other_seed_other_reads():
    a = load_dna_sample(20, random_state=3)
    b = load_dna_sample(20, random_state=3)
    c = load_dna_sample(20, random_state=4)
    assert a.reads == b.reads and np.array_equal(a.target, b.target)
    assert a.reads != c.reads


def test_train_and_test_strains_are_disjoint_per_species():
    train = load_dna_sample(50)
    test = load_dna_sample(50, split="test")
    assert train.target_names == test.target_names == SPECIES
    for label in range(len(SPECIES)):
        train_strains = set(train.strains[train.target == label])
        test_strains = set(test.strains[test.target == label])
        assert train_strains and test_strains and not train_strains & test_strains


@pytest.mark.parametrize("split", ["train", "test"])
def test_reads_come_from_their_strain_on_both_strands(split):
    data = load_dna_sample(40, read_length=60, split=split, random_state=1)
    files = {s["strain"]: s["file"] for s in _manifest()["segments"]}
    n_reverse = 0
    for read, strain in zip(data.reads, data.strains):
        forward = _segment(files[strain]).decode()
        on_forward = read in forward
        on_reverse = read.translate(COMPLEMENT)[::-1] in forward
        assert on_forward or on_reverse
        n_reverse += not on_forward
    # Exactly half of each class is reverse-complemented (a palindrome-free 60-mer
    # is found on one strand only).
    assert n_reverse == len(data.reads) // 2


def test_classes_are_balanced_and_shuffled():
    data = load_dna_sample(30, species=["S.Aureus", "E.Coli"])
    assert data.target_names == ["S.Aureus", "E.Coli"]
    assert np.bincount(data.target).tolist() == [30, 30]
    assert set(data.strains[data.target == 0]) == {"COL"}
    assert not np.all(np.diff(data.target) >= 0)
    assert all(len(read) == 200 for read in data.reads)


def test_kmer_matrix_and_return_X_y():
    data = load_dna_sample(10, read_length=30, k=5)
    assert data.X.shape == (40, 4**5)
    # Each 30-base read of A/C/G/T only has 26 5-mers.
    assert data.X.sum(axis=1).A1.tolist() == [26.0] * 40
    X, y = load_dna_sample(10, read_length=30, k=5, return_X_y=True)
    assert (X != data.X).nnz == 0 and np.array_equal(y, data.target)
    reads, y = load_dna_sample(10, return_X_y=True)
    assert isinstance(reads[0], str) and "X" not in load_dna_sample(10)


def test_manifest_records_the_source_of_each_segment():
    segments = _manifest()["segments"]
    assert {s["species"] for s in segments} == set(SPECIES)
    for s in segments:
        assert s["end"] - s["start"] == len(_segment(s["file"]))
        assert s["split"] in ("train", "test") and s["strand"] in "+-"


@pytest.mark.parametrize("kwargs, match", [
    ({"n_reads_per_class": 0}, "n_reads_per_class"),
    ({"n_reads_per_class": 2.5}, "n_reads_per_class"),
    ({"read_length": 10**6}, "read_length must be at most"),
    ({"split": "validation"}, "split"),
    ({"species": ["E.Coli", "Yeast"]}, "species"),
    ({"species": "E.Coli"}, "list of names"),
    ({"species": []}, "species"),
    ({"k": 0}, "k must be"),
])
def test_bad_arguments_raise(kwargs, match):
    with pytest.raises(ValueError, match=match):
        load_dna_sample(**kwargs)
