"""Metagenomics benchmark of the MISSION and BEAR papers: classify DNA reads by species.

Reads of fixed length are sampled from both strands of complete bacterial genomes and
featurized by their k-mer counts (after Vervier et al. 2016). The binary task separates
*E. coli* (label 0) from *S. aureus* (label 1); training reads come from some strains and
test reads from held-out strains, so the task measures generalization across strains.

The genomes are read from ``shared/data/genomes`` (see ``shared/data/README.md``); nothing is
cached on disk. Run this file as a script to self-check the featurizer and print the size and
build time of the default task::

    python benchmarks/dna_task.py
"""

import gzip
import os
import time
from pathlib import Path

import numpy as np
import scipy.sparse as sp

__all__ = ["kmer_csr", "load_dna_task", "read_genome", "resolve_data_dir", "sample_reads"]

DATA_ENV_VAR = "SKLEARN_SKETCH_DATA"

#: Training and held-out test strains of each class, as ``(species folder, strains)``.
TRAIN_STRAINS = (
    ("E.Coli", ("MG1655-K12",)),
    ("S.Aureus", ("COL", "N315", "RF122", "USA300_FPR3757")),
)
TEST_STRAINS = (
    ("E.Coli", ("DH1",)),
    ("S.Aureus", ("JKD6008",)),
)

_COMPLEMENT = np.arange(256, dtype=np.uint8)
_COMPLEMENT[np.frombuffer(b"ACGT", dtype=np.uint8)] = np.frombuffer(b"TGCA", dtype=np.uint8)

_BASE_CODE = np.full(256, -1, dtype=np.int8)
_BASE_CODE[np.frombuffer(b"ACGT", dtype=np.uint8)] = np.arange(4, dtype=np.int8)

#: Number of reads whose k-mers :func:`kmer_csr` counts at once.
_BLOCK_READS = 2048


def read_genome(path):
    """Read the concatenated sequence of all records of a gzipped FASTA file.

    Parameters
    ----------
    path : str or path-like
        Gzipped FASTA file.

    Returns
    -------
    genome : bytes
        Sequences of all records, in file order and without separators, upper-cased.
        Characters other than ``ACGT`` (e.g. ``N`` or IUPAC codes) are kept as they are.
    """
    with gzip.open(path, "rb") as f:
        lines = f.read().splitlines()
    return b"".join(line for line in lines if not line.startswith(b">")).upper()


def sample_reads(genome_bytes, n_reads, read_length=200, rng=None):
    """Sample reads uniformly from both strands of a genome.

    Start positions are drawn uniformly among the ``len(genome) - read_length + 1`` possible
    ones; exactly ``n_reads // 2`` randomly chosen reads are then reverse-complemented.

    Parameters
    ----------
    genome_bytes : bytes
        Genome sequence, as returned by :func:`read_genome`.
    n_reads : int
        Number of reads.
    read_length : int, default=200
        Length of each read.
    rng : None, int or numpy.random.Generator, default=None
        Random generator, or a seed for :func:`numpy.random.default_rng`.

    Returns
    -------
    reads : ndarray of shape (n_reads, read_length), dtype=uint8
        ASCII codes of the reads. Only ``A``, ``C``, ``G`` and ``T`` are complemented;
        other characters keep their code on the reverse strand.
    """
    rng = np.random.default_rng(rng)
    genome = np.frombuffer(genome_bytes, dtype=np.uint8)
    if genome.size < read_length:
        raise ValueError(
            f"genome of length {genome.size} is shorter than read_length={read_length}"
        )
    starts = rng.integers(0, genome.size - read_length + 1, size=n_reads)
    reads = np.lib.stride_tricks.sliding_window_view(genome, read_length)[starts]
    reverse = rng.permutation(n_reads) < n_reads // 2
    reads[reverse] = _COMPLEMENT[reads[reverse, ::-1]]
    return reads


def _block_kmer_codes(reads, k):
    """Return the valid k-mer codes of a block of reads, sorted within each read.

    Parameters
    ----------
    reads : ndarray of shape (n_reads, read_length), dtype=uint8
        Block of reads.
    k : int
        k-mer length.

    Returns
    -------
    codes : ndarray of shape (n_valid,)
        Codes of the k-mers without a non-ACGT base, read after read, sorted within a read.
    row_nnz : ndarray of shape (n_reads,)
        Number of such k-mers in each read.
    """
    n_reads, read_length = reads.shape
    n_windows = read_length - k + 1
    base = _BASE_CODE[reads]
    # Number of non-ACGT bases before each position, to find the k-mers holding one.
    n_invalid = np.zeros((n_reads, read_length + 1), dtype=np.int32)
    np.cumsum(base < 0, axis=1, out=n_invalid[:, 1:])
    valid = n_invalid[:, k:] == n_invalid[:, :n_windows]

    # The largest key of the dtype marks dropped windows: it exceeds every valid code.
    code_dtype = np.uint32 if 2 * k < 32 else np.uint64
    dropped = np.iinfo(code_dtype).max
    base = base.astype(code_dtype)  # an invalid base wraps around; its windows are masked out
    codes = np.zeros((n_reads, n_windows), dtype=code_dtype)
    for j in range(k):
        codes <<= 2
        codes |= base[:, j : j + n_windows]
    codes[~valid] = dropped
    codes.sort(axis=1)  # groups equal k-mers and moves dropped windows to the end of rows
    return codes[codes != dropped], valid.sum(axis=1)


def kmer_csr(reads, k=12):
    """Count the k-mers of each read into a sparse matrix.

    Each k-mer is keyed by its 2-bit packed code (``A=0, C=1, G=2, T=3``, first base in the
    most significant bits), so column ``j`` of the result counts the k-mer whose code is ``j``.
    k-mers containing a character other than ``ACGT`` are dropped.

    Parameters
    ----------
    reads : array-like of shape (n_reads, read_length), dtype=uint8
        ASCII codes of the reads, as returned by :func:`sample_reads`.
    k : int, default=12
        k-mer length, from 1 to 31 (keys fit in 62 bits).

    Returns
    -------
    X : scipy.sparse.csr_matrix of shape (n_reads, 4**k), dtype=float64
        k-mer counts in canonical format (sorted indices, no duplicates), with ``int64``
        ``indices`` and ``indptr``.
    """
    reads = np.asarray(reads, dtype=np.uint8)
    if reads.ndim != 2:
        raise ValueError(f"reads must be 2-D, got shape {reads.shape}")
    if not 1 <= k <= 31:
        raise ValueError(f"k must be in [1, 31], got {k}")
    n_reads, read_length = reads.shape
    n_windows = max(read_length - k + 1, 0)

    # Blocks of reads keep the temporaries small and in cache. Pages of `indices` past the
    # final nnz are never touched, so the upper-bound allocation costs no memory.
    indices = np.empty(n_reads * n_windows, dtype=np.int64)
    indptr = np.zeros(n_reads + 1, dtype=np.int64)
    for start in range(0, n_reads if n_windows else 0, _BLOCK_READS):
        stop = min(start + _BLOCK_READS, n_reads)
        codes, row_nnz = _block_kmer_codes(reads[start:stop], k)
        indices[indptr[start] : indptr[start] + codes.size] = codes
        np.cumsum(row_nnz, out=indptr[start + 1 : stop + 1])
        indptr[start + 1 : stop + 1] += indptr[start]
    indices = indices[: indptr[-1]]

    # Set the arrays directly: the csr_matrix constructor would downcast them to int32.
    X = sp.csr_matrix((n_reads, 4**k), dtype=np.float64)
    X.data = np.ones(indices.size, dtype=np.float64)
    X.indices = indices
    X.indptr = indptr
    X.sum_duplicates()
    return X


def resolve_data_dir(data_dir=None):
    """Locate the folder of genomes.

    Parameters
    ----------
    data_dir : str or path-like, default=None
        Folder holding one sub-folder per species. If None, the environment variable
        ``SKLEARN_SKETCH_DATA`` is used (either that folder itself or a folder holding
        ``genomes/``); otherwise the first ``shared/data/genomes`` found walking up from the
        folder of this file.

    Returns
    -------
    path : pathlib.Path
        The genomes folder.

    Raises
    ------
    FileNotFoundError
        If the folder does not exist.
    """
    if data_dir is not None:
        candidates = [Path(data_dir)]
    elif os.environ.get(DATA_ENV_VAR):
        env_dir = Path(os.environ[DATA_ENV_VAR])
        candidates = [env_dir / "genomes", env_dir]
    else:
        here = Path(__file__).resolve().parent
        candidates = [parent / "shared" / "data" / "genomes" for parent in (here, *here.parents)]
    for candidate in candidates:
        if candidate.is_dir():
            return candidate
    searched = ", ".join(str(c) for c in candidates)
    raise FileNotFoundError(f"genomes folder not found; looked for: {searched}")


def _class_reads(data_dir, species, strains, n_reads, read_length, rng):
    """Sample reads uniformly over the pooled positions of several strains of one species."""
    genomes = []
    for strain in strains:
        path = data_dir / species / f"{strain}.fasta.gz"
        if not path.is_file():
            raise FileNotFoundError(f"genome file not found: {path}")
        genomes.append(read_genome(path))
    n_starts = np.array([len(g) - read_length + 1 for g in genomes], dtype=np.float64)
    counts = rng.multinomial(n_reads, n_starts / n_starts.sum())
    return np.concatenate(
        [sample_reads(g, n, read_length, rng) for g, n in zip(genomes, counts, strict=True)], axis=0
    )


def _split(data_dir, strains_by_class, n_reads, k, read_length, rng):
    """Build one balanced, shuffled split; return its k-mer matrix and labels."""
    n_classes = len(strains_by_class)
    sizes = [n_reads // n_classes + (c < n_reads % n_classes) for c in range(n_classes)]
    reads = np.concatenate(
        [
            _class_reads(data_dir, species, strains, size, read_length, rng)
            for (species, strains), size in zip(strains_by_class, sizes, strict=True)
        ],
        axis=0,
    )
    y = np.repeat(np.arange(n_classes), sizes)
    order = rng.permutation(n_reads)
    return kmer_csr(reads[order], k=k), y[order]


def load_dna_task(
    n_train=200_000, n_test=20_000, k=12, read_length=200, random_state=0, data_dir=None
):
    """Build the binary *E. coli* vs *S. aureus* read classification task.

    Training reads are sampled from *E. coli* MG1655-K12 and from the pooled *S. aureus*
    strains COL, N315, RF122 and USA300_FPR3757 (uniformly over their positions); test reads
    from the held-out strains *E. coli* DH1 and *S. aureus* JKD6008. Both splits are balanced
    (an odd count gives the extra read to class 0), cover both strands and are shuffled.

    Parameters
    ----------
    n_train : int, default=200_000
        Number of training reads.
    n_test : int, default=20_000
        Number of test reads.
    k : int, default=12
        k-mer length; the feature space has ``4**k`` columns.
    read_length : int, default=200
        Length of each read.
    random_state : None, int or numpy.random.Generator, default=0
        Seed or generator for the sampling.
    data_dir : str or path-like, default=None
        Genomes folder; see :func:`resolve_data_dir`.

    Returns
    -------
    X_train : scipy.sparse.csr_matrix of shape (n_train, 4**k)
        k-mer counts of the training reads, see :func:`kmer_csr`.
    y_train : ndarray of shape (n_train,), dtype=int64
        0 for *E. coli*, 1 for *S. aureus*.
    X_test : scipy.sparse.csr_matrix of shape (n_test, 4**k)
        k-mer counts of the test reads.
    y_test : ndarray of shape (n_test,), dtype=int64
        Labels of the test reads.

    Raises
    ------
    FileNotFoundError
        If the genomes folder or one of the genome files is missing.
    """
    data_dir = resolve_data_dir(data_dir)
    rng = np.random.default_rng(random_state)
    X_train, y_train = _split(data_dir, TRAIN_STRAINS, n_train, k, read_length, rng)
    X_test, y_test = _split(data_dir, TEST_STRAINS, n_test, k, read_length, rng)
    return X_train, y_train, X_test, y_test


def _reference_kmer_counts(read, k):
    """Count the ACGT-only k-mers of one read by their packed code, in plain Python."""
    digits = {"A": "0", "C": "1", "G": "2", "T": "3"}
    counts = {}
    for start in range(len(read) - k + 1):
        kmer = read[start : start + k]
        if all(base in digits for base in kmer):
            code = int("".join(digits[base] for base in kmer), 4)
            counts[code] = counts.get(code, 0) + 1
    return counts


def _self_check(rng):
    """Check kmer_csr against a Python reference and sample_reads against its genome."""
    alphabet = np.frombuffer(b"ACGTN", dtype=np.uint8)
    for k, read_length in [(1, 7), (3, 20), (12, 40)]:
        reads = rng.choice(alphabet, p=[0.24] * 4 + [0.04], size=(50, read_length))
        X = kmer_csr(reads, k=k)
        assert X.shape == (50, 4**k)
        assert X.indices.dtype == X.indptr.dtype == np.int64 and X.has_canonical_format
        for i, read in enumerate(reads):
            row = X.getrow(i)
            got = dict(zip(row.indices.tolist(), row.data.tolist(), strict=True))
            assert got == _reference_kmer_counts(read.tobytes().decode(), k), (k, i)

    genome = rng.choice(alphabet, size=500).tobytes()
    reverse_complement = _COMPLEMENT[np.frombuffer(genome, dtype=np.uint8)[::-1]].tobytes()
    reads = sample_reads(genome, 50, read_length=30, rng=rng)
    on_forward = np.array([read.tobytes() in genome for read in reads])
    on_reverse = np.array([read.tobytes() in reverse_complement for read in reads])
    assert reads.shape == (50, 30) and np.all(on_forward | on_reverse)
    assert on_reverse.sum() >= 25 and on_forward.sum() >= 25


def main():
    """Self-check the featurizer, then build the default task and print its summary."""
    _self_check(np.random.default_rng(0))
    print("self-check passed: kmer_csr matches a Python k-mer counter")

    start = time.perf_counter()
    X_train, y_train, X_test, y_test = load_dna_task()
    seconds = time.perf_counter() - start
    print(f"built in {seconds:.1f} s (read genomes, sample reads, count 12-mers)")
    for name, X, y in [("train", X_train, y_train), ("test", X_test, y_test)]:
        print(
            f"{name}: shape={X.shape}, nnz={X.nnz:,} ({X.nnz / X.shape[0]:.1f} per read), "
            f"class counts={np.bincount(y).tolist()}, "
            f"index dtype={X.indices.dtype}, data dtype={X.dtype}"
        )


if __name__ == "__main__":
    main()
