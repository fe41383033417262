"""Vowpal Wabbit parsing with and without the feature names (``keep_names``).

Writes three VW files, then times the compiled parser alone (parse and take,
the cost ``keep_names`` adds to) and the whole ``VowpalWabbitReader`` (which
also wraps each chunk in a CSR matrix and, with names, a lazy name table),
without and with the names:

* ``dna``: the 12-mer counts of 200k reads of 200 bases (189 k-mers each) of
  the package's genome segments (``load_dna_sample``), as ``|k j:count`` lines
  written by ``peers.write_vw_text``;
* ``random``: 200k lines of 190 features ``|k j:count`` with ``j`` uniform
  below 4**12: nearly every feature of a chunk is a new key (a chunk of
  10,000 lines has 1.9M distinct keys);
* ``words``: 200k lines of 60 words drawn from a Zipf vocabulary of 100k in
  two namespaces, the usual text case.

Files are read from the page cache just after being written, so this times
parsing, not the disk. The best of ``--repeat`` runs is shown.

    python benchmarks/bench_vw_names.py [--rows 200000] [--repeat 3] [--chunk-rows 10000]
"""
import argparse
import os
import sys
import tempfile
import time

import numpy as np
import scipy.sparse as sp

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from peers import write_vw_text  # noqa: E402

from sklearn_sketch.datasets import load_dna_sample  # noqa: E402
from sklearn_sketch.io import VowpalWabbitReader  # noqa: E402
from sklearn_sketch.io._parsers import VowpalWabbitParser  # noqa: E402
from sklearn_sketch.io._readers import _parse_file  # noqa: E402


def write_dna(path, n_rows, rng):
    """12-mer counts of ``n_rows`` reads of the four species' genome segments."""
    X, y = load_dna_sample(n_rows // 4, k=12, species=None, random_state=0, return_X_y=True)
    return write_vw_text(X, (y >= 2).astype(int), path)


def write_random(path, n_rows, rng):
    """``n_rows`` lines of 190 distinct columns below 4**12 with counts 1..3."""
    n_features = 190
    indices = rng.integers(0, 4**12, size=(n_rows, n_features))
    indices.sort(axis=1)
    X = sp.csr_matrix((rng.integers(1, 4, indices.size).astype(float), indices.ravel(),
                       np.arange(0, indices.size + 1, n_features)), shape=(n_rows, 4**12))
    X.sum_duplicates()
    return write_vw_text(X, rng.integers(0, 2, n_rows), path)


def write_words(path, n_rows, rng, vocabulary=100_000, per_row=60):
    """``n_rows`` lines of Zipf-distributed words in namespaces ``a`` and ``b``."""
    words = np.array([f"word{i}" for i in range(vocabulary)])
    with open(path, "w") as f:
        for start in range(0, n_rows, 10000):
            n = min(10000, n_rows - start)
            drawn = words[np.minimum(rng.zipf(1.3, size=(n, per_row)), vocabulary) - 1]
            half = per_row // 2
            lines = [f"{'1' if i % 2 else '-1'} |a {' '.join(row[:half])} "
                     f"|b:0.5 {' '.join(row[half:])}\n" for i, row in enumerate(drawn)]
            f.write("".join(lines))
    return os.path.getsize(path)


def time_parser(path, chunk_rows, keep_names):
    """Seconds to parse and take every chunk with the compiled parser alone."""
    parser = (VowpalWabbitParser(0, False, True) if keep_names
              else VowpalWabbitParser(0, False))
    start = time.perf_counter()
    for _ in _parse_file(path, parser, chunk_rows, 2**20):
        pass
    return time.perf_counter() - start


def time_reader(path, chunk_rows, keep_names):
    """Seconds to iterate ``VowpalWabbitReader`` over the file."""
    kwargs = {"keep_names": True} if keep_names else {}
    start = time.perf_counter()
    for _ in VowpalWabbitReader(path, chunk_rows, **kwargs):
        pass
    return time.perf_counter() - start


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=200_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--chunk-rows", type=int, default=10000)
    parser.add_argument("--no-names", action="store_true",
                        help="time only without names (for a build without keep_names)")
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    with tempfile.TemporaryDirectory() as folder:
        writers = {"dna": write_dna, "random": write_random, "words": write_words}
        files = {name: os.path.join(folder, f"{name}.vw") for name in writers}
        sizes = {name: writers[name](files[name], args.rows, rng) for name in writers}
        print(f"{'file':6} {'MB':>6} {'what':7} {'names':6} {'MB/s':>7} {'rows/s':>10}")
        for name, path in files.items():
            mb = sizes[name] / 2**20
            for what, timer in [("parser", time_parser), ("reader", time_reader)]:
                for keep_names in [False] if args.no_names else [False, True]:
                    best = min(timer(path, args.chunk_rows, keep_names)
                               for _ in range(args.repeat))
                    print(f"{name:6} {mb:6.0f} {what:7} {str(keep_names):6} "
                          f"{mb / best:7.1f} {args.rows / best:10,.0f}", flush=True)


if __name__ == "__main__":
    main()
