"""Cut the DNA sample shipped in ``sklearn_sketch/datasets/data`` from the full genomes.

For each species, a train strain and a held-out test strain. The train segment is
``LENGTH`` bases of the train strain's first record at ``TRAIN_START``; the test
segment is the window of the same length of the test strain (either strand) that
shares the most 16-mers with it, so both segments cover the same genes and the
test reads measure generalization across strains, not across genes. A segment
found on the reverse strand is stored reverse-complemented (``strand: "-"``;
coordinates are always 0-based, half-open, on the forward strand of the record).

Run from the repository root (needs ``../shared/data/genomes``, see
``benchmarks/dna_task.py``)::

    python tools/cut_dna_sample.py
"""
import gzip
import json
import re
from pathlib import Path

import numpy as np

GENOMES = Path(__file__).resolve().parents[2] / "shared" / "data" / "genomes"
OUT = Path(__file__).resolve().parents[1] / "sklearn_sketch" / "datasets" / "data"
LENGTH = 40_000
TRAIN_START = 200_000
ANCHOR_K = 16
#: (species folder, train strain, test strain).
STRAINS = (
    ("E.Coli", "MG1655-K12", "DH1"),
    ("H.Pylori", "G27", "ELS37"),
    ("S.Aureus", "COL", "JKD6008"),
    ("V.Cholerae", "O1_biovar", "O395"),
)
SOURCE = ("NCBI RefSeq/GenBank complete bacterial genomes, as packaged in Debian's "
          "ragout-examples 2.3-4 (public domain, US government work)")

_COMPLEMENT = bytes.maketrans(b"ACGT", b"TGCA")
_CODE = np.full(256, -1, dtype=np.int64)
_CODE[np.frombuffer(b"ACGT", dtype=np.uint8)] = np.arange(4)


def first_record(path):
    """Header (without '>') and upper-cased sequence of the first FASTA record."""
    with gzip.open(path, "rt") as f:
        header = f.readline()[1:].strip()
        lines = []
        for line in f:
            if line.startswith(">"):
                break
            lines.append(line.strip())
    return header, "".join(lines).upper()


# Headers that name no accession, identified by their sequence length instead:
# E. coli K-12 MG1655 of 4,639,675 bp is RefSeq NC_000913.2 (GenBank U00096.2);
# the current NC_000913.3 is 4,641,652 bp.
ACCESSION_BY_LENGTH = {("K-12-MG1655", 4_639_675): "NC_000913.2"}


def accession(header, length):
    """The RefSeq or GenBank accession of a NCBI header, else one known by length, else None."""
    match = re.search(r"\|(?:ref|gb)\|([^|]+)\|", header)
    return match.group(1) if match else ACCESSION_BY_LENGTH.get((header, length))


def kmer_codes(sequence, k=ANCHOR_K):
    """2-bit codes of the k-mers at every position (-1 where a k-mer holds a non-ACGT base)."""
    base = _CODE[np.frombuffer(sequence.encode(), dtype=np.uint8)]
    windows = np.lib.stride_tricks.sliding_window_view(base, k)
    codes = (windows << (2 * np.arange(k - 1, -1, -1))).sum(axis=1)
    codes[(windows < 0).any(axis=1)] = -1
    return codes


def best_window(segment, genome, length=LENGTH):
    """The window of ``genome`` sharing the most 16-mers with ``segment``.

    Returns its forward-strand start, its strand and the fraction of its
    16-mers found in ``segment``.
    """
    wanted = np.unique(kmer_codes(segment))
    wanted = wanted[wanted >= 0]
    best = None
    for strand, sequence in (("+", genome), ("-", genome.translate(_COMPLEMENT)[::-1])):
        hits = np.isin(kmer_codes(sequence), wanted)
        n_windows = length - ANCHOR_K + 1
        cumulative = np.concatenate([[0], np.cumsum(hits)])
        in_window = cumulative[n_windows:] - cumulative[:-n_windows]
        start = int(in_window.argmax())
        if best is None or in_window[start] > best[2]:
            best = (start, strand, int(in_window[start]))
    start, strand, shared = best
    if strand == "-":
        start = len(genome) - start - length
    return start, strand, shared / (length - ANCHOR_K + 1)


def write_fasta(path, header, sequence, width=80):
    lines = [f">{header}"] + [sequence[i:i + width] for i in range(0, len(sequence), width)]
    # mtime=0 keeps the file byte-identical from run to run.
    with gzip.GzipFile(path, "wb", mtime=0) as f:
        f.write(("\n".join(lines) + "\n").encode())


def main():
    OUT.mkdir(parents=True, exist_ok=True)
    entries = []
    for species, train_strain, test_strain in STRAINS:
        _, train_genome = first_record(GENOMES / species / f"{train_strain}.fasta.gz")
        train_segment = train_genome[TRAIN_START:TRAIN_START + LENGTH]
        for split, strain in (("train", train_strain), ("test", test_strain)):
            header, genome = first_record(GENOMES / species / f"{strain}.fasta.gz")
            if split == "train":
                start, strand, shared = TRAIN_START, "+", 1.0
            else:
                start, strand, shared = best_window(train_segment, genome)
            segment = genome[start:start + LENGTH]
            if strand == "-":
                segment = segment.translate(_COMPLEMENT)[::-1]
            file_name = f"{species}_{strain}.fasta.gz"
            write_fasta(OUT / file_name,
                        f"{strain} {species} {start}-{start + LENGTH}({strand}) of {header}",
                        segment)
            entries.append({
                "species": species, "strain": strain, "split": split, "file": file_name,
                "accession": accession(header, len(genome)), "source_header": header,
                "start": start, "end": start + LENGTH, "strand": strand,
                "shared_16mers_with_train": round(shared, 4),
            })
            print(f"{species:11} {strain:12} {split:5} {start:>9,}-{start + LENGTH:<9,} "
                  f"{strand} shared 16-mers {shared:.1%}")
    manifest = {
        "source": SOURCE,
        "produced_by": "tools/cut_dna_sample.py",
        "coordinates": "0-based, half-open, on the forward strand of the first record; "
                       "strand '-' segments are stored reverse-complemented",
        "segments": entries,
    }
    (OUT / "manifest.json").write_text(json.dumps(manifest, indent=1) + "\n")


if __name__ == "__main__":
    main()
