"""KmerVectorizer: exact agreement with a plain-Python k-mer counter, decoding,
edge cases, input errors and use in a pipeline."""
import gzip
import os
import pickle
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.base import clone
from sklearn.linear_model import SGDClassifier
from sklearn.pipeline import make_pipeline
from sklearn.utils._param_validation import InvalidParameterError
from sklearn.utils.estimator_checks import check_param_validation

from sklearn_sketch import KmerVectorizer, MissionClassifier
from sklearn_sketch.feature_extraction import _kmer

CODE = {base: code for code, bases in enumerate(["Aa", "Cc", "Gg", "TtUu"]) for base in bases}
COMPLEMENT = str.maketrans("ACGT", "TGCA")
# Bases, then characters that must split a read: N, IUPAC codes, gap, blanks, non-ASCII.
ALPHABET = list("ACGTUacgtu") + list("NnRYK-. \t") + ["é", "\u2603"]
WEIGHTS = np.array([8.0] * 10 + [1.0] * 9 + [0.5] * 2)


def reference_counts(read, k, canonical=False, binary=False):
    """k-mer counts of one read by its packed code, one base at a time."""
    if isinstance(read, bytes):
        read = read.decode("latin-1")  # one character per byte; non-ASCII bytes split reads
    counts = {}
    for start in range(len(read) - k + 1):
        kmer = read[start : start + k]
        if not all(base in CODE for base in kmer):
            continue
        digits = [CODE[base] for base in kmer]
        code = 0
        for digit in digits:
            code = 4 * code + digit
        if canonical:
            reverse = 0
            for digit in reversed(digits):
                reverse = 4 * reverse + 3 - digit
            code = min(code, reverse)
        counts[code] = 1 if binary else counts.get(code, 0) + 1
    return counts


def index_dtype(k):
    """int32 while the keys fit (the small test inputs always fit in nnz)."""
    return np.int32 if 4**k <= 2**31 - 1 else np.int64


def assert_matches_reference(X, reads, k, canonical=False, binary=False):
    assert sp.issparse(X) and X.format == "csr"
    assert X.shape == (len(reads), 4**k)
    assert X.indptr.dtype == X.indices.dtype == index_dtype(k) and X.dtype == np.float64
    indptr, indices, data = [0], [], []
    for read in reads:
        counts = sorted(reference_counts(read, k, canonical, binary).items())
        indices.extend(code for code, _ in counts)
        data.extend(float(count) for _, count in counts)
        indptr.append(len(indices))
    np.testing.assert_array_equal(X.indptr, indptr)
    np.testing.assert_array_equal(X.indices, np.array(indices, dtype=np.int64))
    np.testing.assert_array_equal(X.data, data)


def random_reads(rng, n_reads=40, max_length=80):
    """str and bytes reads mixing bases of both cases, U, N and splitting characters."""
    reads = []
    for i in range(n_reads):
        length = rng.integers(0, max_length + 1)
        read = "".join(rng.choice(ALPHABET, size=length, p=WEIGHTS / WEIGHTS.sum()))
        reads.append(read.encode("utf-8") if i % 2 else read)
    return reads


def reverse_complement(kmer):
    return kmer.translate(COMPLEMENT)[::-1]


# ------------------------------------------------------------- agreement
@pytest.mark.parametrize("k", range(1, 32))
@pytest.mark.parametrize("canonical", [False, True])
@pytest.mark.parametrize("binary", [False, True])
def test_matches_python_reference(k, canonical, binary):
    reads = random_reads(np.random.default_rng(k))
    X = KmerVectorizer(k, canonical=canonical, binary=binary).transform(reads)
    assert_matches_reference(X, reads, k, canonical, binary)


@settings(max_examples=60, deadline=None)
@given(
    reads=st.lists(st.one_of(st.text(alphabet="ACGTUacgtNn-é", max_size=40),
                             st.binary(max_size=40)), max_size=8),
    k=st.integers(1, 31),
    canonical=st.booleans(),
)
def test_matches_python_reference_hypothesis(reads, k, canonical):
    X = KmerVectorizer(k, canonical=canonical).transform(reads)
    assert_matches_reference(X, reads, k, canonical)


@pytest.mark.parametrize("k", [5, 12, 31])
def test_reads_longer_than_2_to_16(k):
    rng = np.random.default_rng(k)
    uniform = "".join(rng.choice(list("ACGTN"), size=70_000, p=[0.245] * 4 + [0.02]))
    # Mostly A: the keys share their leading bases, so the row's buckets are large.
    skewed = "".join(rng.choice(list("ACGT"), size=70_000, p=[0.94, 0.02, 0.02, 0.02]))
    reads = [uniform, "ACG", skewed.encode()]
    for canonical in (False, True):
        X = KmerVectorizer(k, canonical=canonical).transform(reads)
        assert_matches_reference(X, reads, k, canonical)


def test_fit_transform_and_generator_input():
    reads = random_reads(np.random.default_rng(0))
    vectorizer = KmerVectorizer(4)
    expected = vectorizer.transform(reads)
    for X in (vectorizer.fit_transform(iter(reads)), vectorizer.fit(reads).transform(reads)):
        assert (X != expected).nnz == 0
        np.testing.assert_array_equal(X.indices, expected.indices)


def test_str_and_bytes_and_cases_agree():
    X = KmerVectorizer(3).transform(["ACGUNacgt", b"ACGTNACGT", "acgunAcGt"])
    assert (X[0] != X[1]).nnz == 0 and (X[0] != X[2]).nnz == 0
    assert X[0].sum() == 4 and X[0].nnz == 2


def test_canonical_row_of_a_read_equals_that_of_its_reverse_complement():
    rng = np.random.default_rng(1)
    reads = ["".join(rng.choice(list("ACGTN"), size=150)) for _ in range(20)]
    reverse = [reverse_complement(read) for read in reads]
    vectorizer = KmerVectorizer(9, canonical=True)
    assert (vectorizer.transform(reads) != vectorizer.transform(reverse)).nnz == 0
    assert (KmerVectorizer(9).transform(reads) != KmerVectorizer(9).transform(reverse)).nnz > 0


# ------------------------------------------------------------- decode
@pytest.mark.parametrize("k", [1, 2, 7, 16, 31])
def test_decoded_keys_are_kmers_of_their_read(k):
    reads = random_reads(np.random.default_rng(k), max_length=120)
    vectorizer = KmerVectorizer(k)
    X = vectorizer.transform(reads)
    for i, read in enumerate(reads):
        text = read.decode("latin-1") if isinstance(read, bytes) else read
        text = text.upper().replace("U", "T")
        kmers = vectorizer.decode(X.indices[X.indptr[i] : X.indptr[i + 1]])
        assert all(len(kmer) == k and kmer in text for kmer in kmers)
        assert len(kmers) == len(reference_counts(read, k))


@pytest.mark.parametrize("k", [1, 4, 11, 31])
def test_decoded_canonical_key_is_the_smaller_of_the_pair(k):
    reads = random_reads(np.random.default_rng(k), max_length=120)
    X = KmerVectorizer(k, canonical=True).transform(reads)
    for i, read in enumerate(reads):
        text = read.decode("latin-1") if isinstance(read, bytes) else read
        text = text.upper().replace("U", "T")
        for kmer in KmerVectorizer(k).decode(X.indices[X.indptr[i] : X.indptr[i + 1]]):
            # Code order is the lexicographic order of ACGT.
            assert kmer <= reverse_complement(kmer)
            assert kmer in text or reverse_complement(kmer) in text


@pytest.mark.parametrize("k", range(1, 32))
def test_encode_decode_round_trip(k):
    rng = np.random.default_rng(k)
    vectorizer = KmerVectorizer(k)
    kmers = ["".join(rng.choice(list("ACGT"), size=k)) for _ in range(20)]
    keys = vectorizer.transform(kmers).indices
    assert keys.size == len(kmers)
    assert keys.tolist() == [int(kmer.translate(str.maketrans("ACGT", "0123")), 4)
                             for kmer in kmers]
    assert vectorizer.decode(keys).tolist() == kmers

    random_keys = rng.integers(0, 4**k, size=(3, 5), dtype=np.int64)
    decoded = vectorizer.decode(random_keys)
    assert decoded.shape == (3, 5) and decoded.dtype == np.dtype(f"<U{k}")
    np.testing.assert_array_equal(vectorizer.transform(decoded.ravel()).indices,
                                  random_keys.ravel())


def test_decode_extremes_and_errors():
    vectorizer = KmerVectorizer(31)
    assert vectorizer.decode([0, 4**31 - 1]).tolist() == ["A" * 31, "T" * 31]
    assert vectorizer.decode(np.array([2], dtype=np.uint8)).tolist() == ["A" * 30 + "G"]
    assert vectorizer.decode([]).shape == (0,)
    with pytest.raises(ValueError, match=r"\[0, 4\*\*31\)"):
        vectorizer.decode([4**31])
    with pytest.raises(ValueError, match=r"\[0, 4\*\*3\)"):
        KmerVectorizer(3).decode([-1])
    with pytest.raises(TypeError, match="integers"):
        vectorizer.decode([1.0])
    with pytest.raises(InvalidParameterError):
        KmerVectorizer(32).decode([0])


# ------------------------------------------------------------- edge cases
@pytest.mark.parametrize("k", [1, 12, 31])
def test_empty_iterable(k):
    X = KmerVectorizer(k).transform([])
    assert X.shape == (0, 4**k) and X.nnz == 0
    assert X.indptr.tolist() == [0]
    assert X.indices.dtype == X.indptr.dtype == index_dtype(k)


def test_reads_without_kmers_give_empty_rows():
    reads = ["", b"", "ACGT", "NNNNNNNNNNNN", "ACGTNACGTNACGTN", "ACGTA"]
    X = KmerVectorizer(5).transform(reads)
    assert X.shape == (6, 4**5)
    assert np.diff(X.indptr).tolist() == [0, 0, 0, 0, 0, 1]


def test_k31_keys_near_2_to_62():
    vectorizer = KmerVectorizer(31)
    X = vectorizer.transform(["T" * 32, "T" * 30 + "G", "A" * 31, "T" * 31 + "N" + "T" * 30])
    assert X.shape == (4, 4**31)
    assert X.indices.tolist() == [2**62 - 1, 2**62 - 2, 0, 2**62 - 1]
    assert X.data.tolist() == [2.0, 1.0, 1.0, 1.0]
    canonical = KmerVectorizer(31, canonical=True).transform(["T" * 31, "A" * 30 + "C"])
    assert canonical.indices.tolist() == [0, 1]


# ------------------------------------------------------------- index dtype
@pytest.mark.parametrize("k, dtype", [(1, np.int32), (12, np.int32), (15, np.int32),
                                      (16, np.int64), (31, np.int64)])
def test_index_dtype_is_int32_while_the_keys_fit(k, dtype):
    reads = random_reads(np.random.default_rng(k), max_length=60)
    X = KmerVectorizer(k).transform(reads)
    assert X.indices.dtype == X.indptr.dtype == dtype
    # scipy keeps the arrays as they are: its own rule gives the same dtype.
    rebuilt = sp.csr_matrix((X.data, X.indices, X.indptr), shape=X.shape)
    assert rebuilt.indices.dtype == dtype
    assert_matches_reference(X, reads, k)


def test_keys_at_the_int32_limit():
    # k=15: the largest key 4**15 - 1 = 2**30 - 1 fits in int32.
    X = KmerVectorizer(15).transform(["T" * 15, "A" * 14 + "C"])
    assert X.indices.dtype == np.int32 and X.indices.tolist() == [4**15 - 1, 1]


def test_large_nnz_bound_is_counted_in_int64_then_narrowed(monkeypatch):
    # Lower the limit to 10: the bound on nnz (every window) exceeds it but the
    # actual nnz does not, so the kernel counts in int64 and the result is narrowed.
    reads = ["ACGTNNNNNNNNNNNNNNNN", "NNNNNNNNNNNNNNNNNNTT"]
    expected = KmerVectorizer(1).transform(reads)
    monkeypatch.setattr(_kmer, "_INT32_MAX", 10)
    X = KmerVectorizer(1).transform(reads)
    assert X.nnz == 5 and X.indices.dtype == X.indptr.dtype == np.int32
    np.testing.assert_array_equal(X.indices, expected.indices)
    np.testing.assert_array_equal(X.indptr, expected.indptr)
    np.testing.assert_array_equal(X.data, expected.data)
    # An actual nnz beyond the limit stays int64, and so do keys beyond it.
    X = KmerVectorizer(1).transform(["ACGT"] * 3)
    assert X.nnz == 12 and X.indices.dtype == X.indptr.dtype == np.int64
    X = KmerVectorizer(2).transform(["AC"])
    assert X.nnz == 1 and X.indices.dtype == X.indptr.dtype == np.int64


def test_sgd_classifier_fits_the_output_directly():
    rng = np.random.default_rng(0)
    genomes = ["".join(rng.choice(list("ACGT"), size=5000)) for _ in range(2)]
    reads, y = two_class_reads(genomes, 50, 100, rng)
    X = KmerVectorizer(k=12).transform(reads)
    classifier = SGDClassifier(random_state=0).fit(X, y)
    assert classifier.score(X, y) > 0.9
    X16 = KmerVectorizer(k=16).transform(reads)
    assert X16.indices.dtype == X16.indptr.dtype == np.int64
    assert MissionClassifier(n_features_to_select=100, sketch_width=2**12,
                             random_state=0).fit(X16, y).score(X16, y) > 0.5


# ------------------------------------------------------------- errors
@pytest.mark.parametrize("single", ["ACGT", b"ACGT"])
@pytest.mark.parametrize("method", ["fit", "transform", "fit_transform"])
def test_single_read_instead_of_iterable(single, method):
    with pytest.raises(ValueError, match="Iterable over reads expected"):
        getattr(KmerVectorizer(3), method)(single)


@pytest.mark.parametrize("item", [5, None, ["ACGT"], np.uint8(65)])
def test_read_of_wrong_type(item):
    name = type(item).__name__
    with pytest.raises(TypeError, match=f"read 2 is {name}"):
        KmerVectorizer(3).transform(["ACGT", b"ACGT", item])


@pytest.mark.parametrize("params", [{"k": 0}, {"k": 32}, {"k": 1.5}, {"k": "3"},
                                    {"canonical": "yes"}, {"binary": None}])
@pytest.mark.parametrize("method", ["fit", "transform"])
def test_invalid_parameters(params, method):
    with pytest.raises(InvalidParameterError, match="must be"):
        getattr(KmerVectorizer(**params), method)(["ACGT"])


def test_sklearn_param_validation():
    check_param_validation("KmerVectorizer", KmerVectorizer())


def test_stateless_tags():
    tags = KmerVectorizer().__sklearn_tags__()
    assert not tags.requires_fit and tags.input_tags.string
    assert not tags.input_tags.two_d_array
    assert not hasattr(KmerVectorizer().fit(["ACGT"]), "n_features_in_")


# ------------------------------------------------------------- pipelines
def sample_reads(genome, n_reads, read_length, rng):
    """Reads from both strands of a genome."""
    starts = rng.integers(0, len(genome) - read_length + 1, size=n_reads)
    reads = [genome[start : start + read_length] for start in starts]
    return [reverse_complement(read) if i % 2 else read for i, read in enumerate(reads)]


def two_class_reads(genomes, n_reads, read_length, rng):
    reads, labels = [], []
    for label, genome in enumerate(genomes):
        reads += sample_reads(genome, n_reads, read_length, rng)
        labels += [label] * n_reads
    order = rng.permutation(len(reads))
    return [reads[i] for i in order], np.array(labels)[order]


def fit_and_score(genomes, k, rng):
    X_train, y_train = two_class_reads(genomes, 300, 150, rng)
    X_test, y_test = two_class_reads(genomes, 100, 150, rng)
    pipeline = make_pipeline(
        KmerVectorizer(k, canonical=True),
        MissionClassifier(n_features_to_select=2000, sketch_width=2**16, random_state=0),
    )
    pipeline.fit(X_train, y_train)
    return pipeline, X_test, pipeline.score(X_test, y_test)


def test_pipeline_on_synthetic_genomes():
    rng = np.random.default_rng(0)
    genomes = ["".join(rng.choice(list("ACGT"), size=20_000)) for _ in range(2)]
    pipeline, X_test, accuracy = fit_and_score(genomes, 10, rng)
    assert accuracy > 0.9

    restored = pickle.loads(pickle.dumps(pipeline))
    np.testing.assert_array_equal(restored.predict(X_test), pipeline.predict(X_test))
    cloned = clone(pipeline)
    assert cloned.get_params()["kmervectorizer__k"] == 10
    assert cloned.get_params()["kmervectorizer__canonical"] is True


def genomes_dir():
    if os.environ.get("SKLEARN_SKETCH_DATA"):
        env_dir = Path(os.environ["SKLEARN_SKETCH_DATA"])
        candidates = [env_dir / "genomes", env_dir]
    else:
        here = Path(__file__).resolve().parent
        candidates = [parent / "shared" / "data" / "genomes" for parent in here.parents]
    return next((path for path in candidates if path.is_dir()), None)


def read_fasta(path):
    with gzip.open(path, "rt") as f:
        return "".join(line.strip() for line in f if not line.startswith(">"))


def test_pipeline_on_real_genomes():
    folder = genomes_dir()
    paths = [folder / "E.Coli" / "MG1655-K12.fasta.gz", folder / "S.Aureus" / "COL.fasta.gz"] \
        if folder else []
    if not paths or not all(path.is_file() for path in paths):
        pytest.skip("genomes folder shared/data/genomes not found")
    # 300 reads cover about 1% of a genome, so test reads share few long k-mers with
    # them; the species differ in base composition (GC content), which short k-mers capture.
    _, _, accuracy = fit_and_score([read_fasta(path) for path in paths], 4,
                                   np.random.default_rng(0))
    assert accuracy > 0.85


def test_clone_and_pickle_of_the_vectorizer():
    vectorizer = KmerVectorizer(7, canonical=True, binary=True)
    assert clone(vectorizer).get_params() == vectorizer.get_params()
    restored = pickle.loads(pickle.dumps(vectorizer))
    reads = random_reads(np.random.default_rng(3))
    assert (restored.transform(reads) != vectorizer.transform(reads)).nnz == 0
