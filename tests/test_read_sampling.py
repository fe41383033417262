"""Reads sampled from long records: lengths, counts, strands, reproducibility,
pass-through of short records, labels, FASTQ qualities, errors, a real genome."""
import gzip
import time
from collections import Counter
from pathlib import Path

import numpy as np
import pytest

from sklearn_sketch.io import FastaReader, FastqReader, ReadChunk, ReadSampler, sample_reads

GENOMES = Path(__file__).resolve().parents[1] / ".." / "shared" / "data" / "genomes"
# An independent reverse complement: bytes.translate, then a slice.
COMPLEMENT = bytes.maketrans(b"ACGTUacgtu", b"TGCAAtgcaa")


def reverse_complement(read):
    return read.translate(COMPLEMENT)[::-1]


def random_genome(rng, length, alphabet=b"ACGT"):
    return rng.choice(np.frombuffer(alphabet, dtype=np.uint8), size=length).tobytes()


def write_fasta(path, records, gzipped=False):
    """Records ``{header: sequence}``, sequence lines of 60 bases."""
    lines = []
    for header, sequence in records.items():
        lines.append(b">" + header.encode())
        lines += [sequence[i:i + 60] for i in range(0, len(sequence), 60)]
    text = b"\n".join(lines) + b"\n"
    path.write_bytes(gzip.compress(text) if gzipped else text)
    return path


def parse_name(name):
    """``(identifier, start, reverse)`` of a sampled read's name ``id:start+``."""
    identifier, _, position = name.rpartition(":")
    return identifier, int(position[:-1]), position[-1] == "-"


def expected_read(record, start, length, reverse):
    read = record[start:start + length]
    return reverse_complement(read) if reverse else read


def all_reads(sampler):
    return [(name, read) for chunk in sampler for name, read in zip(chunk.names,
                                                                    chunk.sequences)]


@pytest.fixture
def two_files(tmp_path):
    """Two FASTA files of random records (one short record in the first)."""
    rng = np.random.default_rng(0)
    first = {"chr1 first chromosome": random_genome(rng, 3000),
             "plasmid1": random_genome(rng, 40),
             "chr2": random_genome(rng, 1000)}
    second = {"contig7 the only one": random_genome(rng, 5000)}
    paths = [write_fasta(tmp_path / "first.fa", first),
             write_fasta(tmp_path / "second.fa.gz", second, gzipped=True)]
    return paths, [first, second]


# ------------------------------------------------------------- sample_reads
def test_sample_reads_lengths_counts_and_substrings():
    rng = np.random.default_rng(1)
    genomes = [random_genome(rng, 2000), random_genome(rng, 700)]
    reads = sample_reads(genomes, 150, n_reads=500, random_state=0)
    assert len(reads) == 500 and all(isinstance(read, bytes) for read in reads)
    assert {len(read) for read in reads} == {150}
    assert all(any(read in genome or reverse_complement(read) in genome for genome in genomes)
               for read in reads)


def test_sample_reads_proportional_to_starts_and_uniform_starts():
    # Sequences of A's and of C's: a read's sequence and offset show in its bases.
    n_reads, length = 40_000, 10
    first = b"A" * 1009
    second = b"C" * 3009
    reads = sample_reads([first, second, b"G" * length], length, n_reads=n_reads,
                         both_strands=False, random_state=3)
    counts = Counter(read[:1] for read in reads)
    assert counts[b"G"] == 1 and counts[b"A"] + counts[b"C"] == n_reads
    p = 1000 / 4000
    assert abs(counts[b"A"] / n_reads - p) < 5 * np.sqrt(p * (1 - p) / n_reads)
    # Uniform starts: mark positions with a ramp of letters and bin the first byte.
    ramp = np.repeat(np.frombuffer(b"abcdefghij", dtype=np.uint8), 100).tobytes()
    reads = sample_reads([ramp + b"k" * (length - 1)], length, n_reads=n_reads,
                         both_strands=False, random_state=4)
    bins = np.array([Counter(read[:1] for read in reads)[bytes([c])] for c in b"abcdefghij"])
    assert bins.sum() == n_reads
    assert np.all(np.abs(bins - n_reads / 10) < 5 * np.sqrt(n_reads * 0.1 * 0.9))


def test_every_start_is_drawn_including_the_last():
    sequence = bytes(range(ord("A"), ord("A") + 20))  # distinct bytes: a read shows its start
    reads = sample_reads([sequence], 5, n_reads=2000, both_strands=False, random_state=0)
    assert {read[0] - ord("A") for read in reads} == set(range(16))


def test_sample_reads_coverage_rounds_half_to_even_per_sequence():
    # coverage * len / read_length: 2.5 -> 2, 3.5 -> 4, 0.4 -> 0 (A's, C's, G's).
    sequences = [b"A" * 250, b"C" * 350, b"G" * 40]
    reads = sample_reads(sequences, 100, coverage=1.0, random_state=0, both_strands=False)
    assert Counter(read[:1] for read in reads) == {b"A": 2, b"C": 4, b"G": 1}
    reads = sample_reads(sequences[:2], 100, coverage=3.0, random_state=0, both_strands=False)
    # 7.5 -> 8 and 10.5 -> 10.
    assert Counter(read[:1] for read in reads) == {b"A": 8, b"C": 10}


def test_sample_reads_reverse_complement_fraction_and_case():
    rng = np.random.default_rng(5)
    genome = random_genome(rng, 20_000, b"ACGTacgtN")
    windows = {genome[i:i + 40] for i in range(len(genome) - 39)}
    reads = sample_reads([genome], 40, n_reads=20_000, random_state=1)
    forward = np.array([read in windows for read in reads])
    reverse = np.array([reverse_complement(read) in windows for read in reads])
    assert np.all(forward | reverse)
    # 40 random bases are on one strand only: the fraction is that of reverse reads.
    assert not np.any(forward & reverse)
    assert abs(reverse.mean() - 0.5) < 5 * np.sqrt(0.25 / len(reads))
    assert any(b"N" in read for read in reads) and any(b"a" in read for read in reads)

    only_forward = sample_reads([genome], 40, n_reads=2000, both_strands=False,
                                random_state=1)
    assert all(read in windows for read in only_forward)


def test_sample_reads_reproducible_and_seeds_differ():
    rng = np.random.default_rng(6)
    genomes = [random_genome(rng, 5000), random_genome(rng, 3000)]
    first = sample_reads(genomes, 100, n_reads=200, random_state=42)
    assert first == sample_reads(genomes, 100, n_reads=200, random_state=42)
    from_instance = sample_reads(genomes, 100, n_reads=200,
                                 random_state=np.random.RandomState(7))
    assert from_instance == sample_reads(genomes, 100, n_reads=200,
                                         random_state=np.random.RandomState(7))
    assert first != sample_reads(genomes, 100, n_reads=200, random_state=43)
    assert first != sample_reads(genomes, 100, n_reads=200)
    generator = np.random.default_rng(0)
    assert (sample_reads(genomes, 100, n_reads=50, random_state=generator)
            != sample_reads(genomes, 100, n_reads=50, random_state=generator))


def test_sample_reads_short_sequences_pass_through_uncounted():
    rng = np.random.default_rng(7)
    long_one = random_genome(rng, 500)
    sequences = ["ACGTN", long_one, b"T" * 50, bytearray(b"GG")]
    reads = sample_reads(sequences, 50, n_reads=30, random_state=0)
    assert len(reads) == 30 + 3
    # Grouped by sequence in input order; short ones unchanged, as bytes.
    assert reads[0] == b"ACGTN" and reads[-2:] == [b"T" * 50, b"GG"]
    assert all(read in long_one or reverse_complement(read) in long_one
               for read in reads[1:31])
    assert sample_reads([b"ACG"], 3, n_reads=10, random_state=0) == [b"ACG"]


def test_sample_reads_str_input_and_nul_bytes():
    reads = sample_reads(["ACGTACGTAC"], 4, n_reads=20, both_strands=False, random_state=0)
    assert all(isinstance(read, bytes) and read in b"ACGTACGTAC" for read in reads)
    # A read ending in NUL must keep it (a fixed-width bytes view would drop it).
    reads = sample_reads([b"\x00" * 20], 5, n_reads=10, random_state=0)
    assert reads == [b"\x00" * 5] * 10


@pytest.mark.parametrize("kwargs, name", [
    ({"read_length": 0, "n_reads": 5}, "read_length"),
    ({"read_length": -3, "n_reads": 5}, "read_length"),
    ({"read_length": 2.5, "n_reads": 5}, "read_length"),
    ({"read_length": True, "n_reads": 5}, "read_length"),
    ({"read_length": 4, "n_reads": 0}, "n_reads"),
    ({"read_length": 4, "n_reads": 1.5}, "n_reads"),
    ({"read_length": 4, "coverage": 0}, "coverage"),
    ({"read_length": 4, "coverage": -1.0}, "coverage"),
    ({"read_length": 4, "coverage": float("nan")}, "coverage"),
    ({"read_length": 4, "coverage": float("inf")}, "coverage"),
    ({"read_length": 4, "coverage": "2"}, "coverage"),
    ({"read_length": 4}, "n_reads and coverage"),
    ({"read_length": 4, "n_reads": 5, "coverage": 1.0}, "n_reads and coverage"),
    ({"read_length": 4, "n_reads": 5, "random_state": -1}, "random_state"),
    ({"read_length": 4, "n_reads": 5, "random_state": "seed"}, "random_state"),
])
def test_bad_arguments_raise_value_error_naming_them(kwargs, name, tmp_path):
    with pytest.raises(ValueError, match=name):
        sample_reads([b"ACGTACGT"], **kwargs)
    reader = FastaReader(write_fasta(tmp_path / "x.fa", {"r": b"ACGTACGT"}))
    with pytest.raises(ValueError, match=name):
        ReadSampler(reader, **kwargs)


def test_bad_sequences_and_chunk_reads(tmp_path):
    with pytest.raises(ValueError, match="list of sequences"):
        sample_reads(b"ACGTACGT", 4, n_reads=2)
    with pytest.raises(TypeError, match="sequence 1 is int"):
        sample_reads([b"ACGT", 5], 2, n_reads=2)
    reader = FastaReader(write_fasta(tmp_path / "x.fa", {"r": b"ACGTACGT"}))
    with pytest.raises(ValueError, match="chunk_reads"):
        ReadSampler(reader, 4, n_reads=2, chunk_reads=0)


# ------------------------------------------------------------- ReadSampler
@pytest.mark.parametrize("reader_chunk", [1, 2, 10000])
def test_sampler_n_reads_per_file_and_reads_match_their_names(two_files, reader_chunk):
    paths, records = two_files
    sampler = ReadSampler(FastaReader(paths, chunk_reads=reader_chunk), 100, n_reads=777,
                          random_state=0, chunk_reads=100)
    per_file = Counter()
    for chunk in sampler:
        assert len(chunk.sequences) <= 100 and chunk.qualities is None
        assert chunk.labels is None
        file_records = records[[str(p) for p in paths].index(chunk.path)]
        by_id = {header.split()[0]: seq for header, seq in file_records.items()}
        for name, read in zip(chunk.names, chunk.sequences):
            if name == "plasmid1":
                assert read == file_records["plasmid1"]
                continue
            identifier, start, reverse = parse_name(name)
            assert len(read) == 100
            assert read == expected_read(by_id[identifier], start, 100, reverse)
            per_file[chunk.path] += 1
    assert per_file == {str(paths[0]): 777, str(paths[1]): 777}


def test_sampler_spreads_reads_over_records_by_their_starts(two_files):
    paths, _ = two_files
    sampler = ReadSampler(FastaReader(paths[0], chunk_reads=1), 100, n_reads=30_000,
                          random_state=1)
    # Default chunks of 10000 reads, cut per reader chunk (one record here).
    sizes = [len(chunk.sequences) for chunk in sampler]
    assert max(sizes) == 10_000 and sum(sizes) == 30_001 and sizes.count(1) == 1
    counts = Counter(parse_name(name)[0] for name, _ in all_reads(sampler)
                     if name != "plasmid1")
    p = 2901 / (2901 + 901)
    assert counts["chr1"] + counts["chr2"] == 30_000
    assert abs(counts["chr1"] / 30_000 - p) < 5 * np.sqrt(p * (1 - p) / 30_000)


def test_sampler_coverage_counts_per_record(two_files):
    paths, records = two_files
    sampler = ReadSampler(FastaReader(paths), 100, coverage=2.5, random_state=0)
    counts = Counter(name if ":" not in name else parse_name(name)[0]
                     for name, _ in all_reads(sampler))
    # round(2.5 * len / 100): 75, 25 and 125; the 40-base plasmid passes through.
    assert counts == {"chr1": 75, "chr2": 25, "contig7": 125, "plasmid1": 1}


def test_sampler_strand_fraction_and_forward_only(two_files):
    paths, _ = two_files
    reads = all_reads(ReadSampler(FastaReader(paths), 50, n_reads=10_000, random_state=2))
    reverse = np.array([parse_name(name)[2] for name, _ in reads if name != "plasmid1"])
    assert reverse.size == 20_000
    assert abs(reverse.mean() - 0.5) < 5 * np.sqrt(0.25 / reverse.size)
    forward = all_reads(ReadSampler(FastaReader(paths), 50, n_reads=1000,
                                    both_strands=False, random_state=2))
    assert all(name.endswith("+") for name, _ in forward if name != "plasmid1")


def test_sampler_reproducible_each_epoch_and_seeds_differ(two_files):
    paths, _ = two_files
    sampler = ReadSampler(FastaReader(paths), 100, n_reads=50, random_state=5)
    epoch = all_reads(sampler)
    assert epoch == all_reads(sampler)
    assert epoch == all_reads(ReadSampler(FastaReader(paths), 100, n_reads=50,
                                          random_state=5))
    assert epoch != all_reads(ReadSampler(FastaReader(paths), 100, n_reads=50,
                                          random_state=6))
    # The files have their own streams: the second file's reads do not depend on the first.
    alone = all_reads(ReadSampler(FastaReader([paths[0], paths[0]]), 100, n_reads=50,
                                  random_state=5))
    assert alone[:51] == epoch[:51] and alone[51:] != alone[:51]

    fresh = ReadSampler(FastaReader(paths), 100, coverage=1.0)
    assert all_reads(fresh) == all_reads(fresh)
    assert all_reads(fresh) != all_reads(ReadSampler(FastaReader(paths), 100, coverage=1.0))


def test_sampler_labels_by_file_and_by_name(two_files):
    paths, _ = two_files
    by_file = ReadSampler(FastaReader({paths[0]: "first", paths[1]: "second"}), 100,
                          n_reads=20, random_state=0)
    labels = {chunk.path: set(chunk.labels.tolist()) for chunk in by_file}
    assert labels == {str(paths[0]): {"first"}, str(paths[1]): {"second"}}

    by_name = ReadSampler(FastaReader(paths, label=lambda header: header.split()[0].upper()),
                          100, n_reads=200, random_state=0)
    for chunk in by_name:
        for name, label in zip(chunk.names, chunk.labels.tolist()):
            assert label == name.split(":")[0].upper()


def test_sampler_fastq_qualities_cut_at_the_same_positions(tmp_path):
    rng = np.random.default_rng(8)
    sequence = random_genome(rng, 90)
    quality = bytes(range(33, 123))  # a distinct quality character per position
    path = tmp_path / "reads.fq"
    path.write_bytes(b"@long read\n" + sequence + b"\n+\n" + quality + b"\n"
                     + b"@short\nACGT\n+\nIIII\n")
    sampler = ReadSampler(FastqReader({path: 1}), 30, n_reads=200, random_state=0)
    (chunk,) = list(sampler)
    assert len(chunk.sequences) == 201 and chunk.labels.tolist() == [1] * 201
    assert (chunk.names[-1], chunk.sequences[-1], chunk.qualities[-1]) == (
        "short", b"ACGT", b"IIII")
    reverse = []
    for name, read, qual in zip(chunk.names[:-1], chunk.sequences[:-1], chunk.qualities[:-1]):
        identifier, start, is_reverse = parse_name(name)
        assert identifier == "long"
        assert read == expected_read(sequence, start, 30, is_reverse)
        window = quality[start:start + 30]
        assert qual == (window[::-1] if is_reverse else window)
        reverse.append(is_reverse)
    assert 0 < sum(reverse) < 200


def test_sampler_keeps_a_record_equal_to_read_length_whole(tmp_path):
    path = write_fasta(tmp_path / "x.fa", {"exact one": b"ACGTT", "longer": b"ACGTTA"})
    reads = all_reads(ReadSampler(FastaReader(path), 5, n_reads=4, random_state=0))
    assert reads[0] == ("exact one", b"ACGTT")
    assert len(reads) == 5 and all(name.startswith("longer:") for name, _ in reads[1:])


@pytest.mark.parametrize("growth", [10, -10])
def test_sampler_detects_records_changed_between_passes(growth):
    class Changing:
        """A reader whose only record changes length at every iteration."""

        length = 100

        def __iter__(self):
            self.length += growth
            yield ReadChunk(["r"], [b"A" * self.length], None, None, "x.fa", 1)

    with pytest.raises(RuntimeError, match="changed"):
        list(ReadSampler(Changing(), 10, n_reads=5, random_state=0))
    # Coverage needs no counting pass: round((100 + growth) / 10) reads.
    reads = all_reads(ReadSampler(Changing(), 10, coverage=1.0, random_state=0))
    assert len(reads) == (100 + growth) // 10


# ------------------------------------------------------------- real genome
def test_real_genome_20000_reads_quickly():
    path = GENOMES / "E.Coli" / "DH1.fasta.gz"
    if not path.is_file():
        pytest.skip("genomes folder shared/data/genomes not found")
    sampler = ReadSampler(FastaReader(path), 200, n_reads=20_000, random_state=0)
    start = time.perf_counter()
    chunks = list(sampler)
    seconds = time.perf_counter() - start
    reads = [read for chunk in chunks for read in chunk.sequences]
    names = [name for chunk in chunks for name in chunk.names]
    assert len(reads) == 20_000 and {len(read) for read in reads} == {200}
    assert seconds < 2.0, f"{seconds:.2f} s"
    (genome,) = [seq for chunk in FastaReader(path) for seq in chunk.sequences]
    for name, read in list(zip(names, reads))[::500]:
        _, start, reverse = parse_name(name)
        assert read == expected_read(genome, start, 200, reverse)
