"""Throughput of KmerVectorizer beside the NumPy k-mer builder of ``dna_task.py``.

Reads of 200 bp are sampled from both strands of one genome (``dna_task.sample_reads``)
and counted into CSR k-mer matrices for k = 12 and 31, canonical off and on. Prints
million bases per second of ``KmerVectorizer.transform`` on a list of ``bytes`` reads and
on a list of ``str`` reads, and of ``dna_task.kmer_csr`` on the 2-D ``uint8`` array
(non-canonical only: it has no canonical mode), with the ratio of the bytes timing to it.
Both give the same matrix, which is checked. Timings are the best of ``--repeats``.

    python benchmarks/bench_kmer.py [--n-reads 100000] [--repeats 3] [--json out.json]
"""
import argparse
import json
import platform
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from dna_task import kmer_csr, read_genome, resolve_data_dir, sample_reads  # noqa: E402

from sklearn_sketch import KmerVectorizer  # noqa: E402


def best_time(function, repeats):
    """Smallest wall time of ``repeats`` calls, and the last result."""
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        result = function()
        times.append(time.perf_counter() - start)
    return min(times), result


def bench(reads, k, canonical, repeats):
    as_bytes = [read.tobytes() for read in reads]
    as_str = [read.decode("ascii") for read in as_bytes]
    vectorizer = KmerVectorizer(k, canonical=canonical)
    bytes_time, X = best_time(lambda: vectorizer.transform(as_bytes), repeats)
    str_time, _ = best_time(lambda: vectorizer.transform(as_str), repeats)
    n_bases = reads.size
    row = {
        "k": k,
        "canonical": canonical,
        "nnz": int(X.nnz),
        "bytes_bases_per_s": n_bases / bytes_time,
        "str_bases_per_s": n_bases / str_time,
        "numpy_bases_per_s": None,
        "speedup_vs_numpy": None,
    }
    if not canonical:
        numpy_time, expected = best_time(lambda: kmer_csr(reads, k=k), repeats)
        same = all(np.array_equal(getattr(X, name), getattr(expected, name))
                   for name in ("indptr", "indices", "data"))
        if not same:
            raise AssertionError(f"KmerVectorizer and kmer_csr disagree for k={k}")
        row["numpy_bases_per_s"] = n_bases / numpy_time
        row["speedup_vs_numpy"] = numpy_time / bytes_time
    return row


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n-reads", type=int, default=100_000)
    parser.add_argument("--read-length", type=int, default=200)
    parser.add_argument("--genome", default="E.Coli/MG1655-K12",
                        help="species/strain under the genomes folder")
    parser.add_argument("--data-dir", help="genomes folder (see dna_task.resolve_data_dir)")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--json", help="also write the results to this file")
    args = parser.parse_args(argv)

    genome = read_genome(resolve_data_dir(args.data_dir) / f"{args.genome}.fasta.gz")
    reads = sample_reads(genome, args.n_reads, args.read_length, rng=0)
    print(f"{args.n_reads:,} reads of {args.read_length} bp from {args.genome}, "
          f"best of {args.repeats}; M bases/s")
    print(f"{'k':>3} {'canonical':>9} {'nnz':>12} {'bytes':>8} {'str':>8} "
          f"{'kmer_csr':>9} {'bytes/kmer_csr':>15}")
    rows = []
    for k in (12, 31):
        for canonical in (False, True):
            row = bench(reads, k, canonical, args.repeats)
            rows.append(row)
            numpy = row["numpy_bases_per_s"]
            print(f"{k:>3} {str(canonical):>9} {row['nnz']:>12,} "
                  f"{row['bytes_bases_per_s'] / 1e6:>8.1f} {row['str_bases_per_s'] / 1e6:>8.1f} "
                  + (f"{numpy / 1e6:>9.1f} {row['speedup_vs_numpy']:>14.2f}x"
                     if numpy else f"{'-':>9} {'-':>15}"))

    if args.json:
        with open(args.json, "w") as f:
            json.dump(
                {
                    "machine": platform.processor() or platform.machine(),
                    "genome": args.genome,
                    "n_reads": args.n_reads,
                    "read_length": args.read_length,
                    "repeats": args.repeats,
                    "results": rows,
                },
                f,
                indent=2,
            )


if __name__ == "__main__":
    main()
