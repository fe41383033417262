"""Streaming a svmlight file: throughput and peak memory at two file sizes.

Writes svmlight files of the given sizes (random rows of ~40 features with
indices below 2^24, values with 4 decimals by default, or 17 significant digits
with ``--value-format repr``; a generated block is repeated to reach the size),
then, each in a fresh process so that the peak resident set size
(``ru_maxrss``) is its own, streams every file with ``SvmlightReader`` and
loads the smallest one with ``sklearn.datasets.load_svmlight_file``. Prints MB/s,
rows/s, the RSS after the imports and the peak RSS: the reader's peak stays
near one block plus one chunk whatever the file size, while the loader's grows
with the file. Files are read from the page cache just after being written, so
this times parsing, not the disk.

With ``--fit`` a ``MissionClassifier`` (k = 2^14, depth 3, width 2^18) is also
trained by ``partial_fit`` on every file in chunks of ``--fit-chunk-rows``
(1,000) rows, and once by ``fit`` (one pass) over all the rows of the smallest
file, read into memory first. A second table shows, per file, the number of
chunks, the peak RSS after 10 chunks and at the end (the same whatever the
number of chunks: partial_fit holds the model, one chunk and what it touches,
and never copies the model), and the seconds spent in ``partial_fit`` against
``fit`` over the same rows (ratio; parsing excluded from both).

    python benchmarks/bench_io.py [--size-gb 0.2 1] [--chunk-rows 10000] [--fit]
                                  [--fit-chunk-rows 1000] [--json out.json]
"""
import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

BASE_BLOCK_BYTES = 32 * 2**20


def peak_rss_mb():
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak / 2**20 if sys.platform == "darwin" else peak / 2**10


def svmlight_block(rng, n_bytes, value_format):
    """About ``n_bytes`` of svmlight rows (one-based indices, labels -1/1)."""
    lines, size = [], 0
    while size < n_bytes:
        n = int(rng.integers(20, 60))
        columns = np.unique(rng.integers(1, 2**24, n))
        values = rng.random(columns.size)
        if value_format == "short":
            pairs = " ".join(f"{c}:{v:.4f}" for c, v in zip(columns, values))
        else:
            pairs = " ".join(f"{c}:{v!r}" for c, v in zip(columns.tolist(), values.tolist()))
        line = f"{rng.choice(['-1', '1'])} {pairs}\n"
        lines.append(line)
        size += len(line)
    return "".join(lines).encode()


def write_file(path, size_bytes, value_format):
    """A generated block repeated, the last copy cut after a line, to ~``size_bytes``."""
    block = svmlight_block(np.random.default_rng(0), min(BASE_BLOCK_BYTES, size_bytes),
                           value_format)
    with open(path, "wb") as f:
        left = size_bytes
        while left >= len(block):
            f.write(block)
            left -= len(block)
        f.write(block[:block.rfind(b"\n", 0, left) + 1])


def make_model():
    from sklearn_sketch import MissionClassifier

    return MissionClassifier(2**14, sketch_width=2**18, learning_rate="constant", eta0=0.01,
                             max_iter=1, random_state=0)


def worker(kind, path, chunk_rows):
    """Run in a fresh process: stream, train on or load ``path`` and print one JSON line."""
    import scipy.sparse as sp
    from sklearn.datasets import load_svmlight_file

    from sklearn_sketch.io import SvmlightReader

    rss_after_imports = peak_rss_mb()
    start = time.perf_counter()
    extra = {}
    if kind == "fit":
        model = make_model()
        rows = nnz = chunks = 0
        train_seconds = 0.0
        early_peak = None
        for chunk in SvmlightReader(path, chunk_rows, zero_based=False):
            begin = time.perf_counter()
            model.partial_fit(chunk.X, chunk.y, classes=[-1.0, 1.0])
            train_seconds += time.perf_counter() - begin
            rows += chunk.X.shape[0]
            nnz += chunk.X.nnz
            chunks += 1
            if chunks == 10:
                early_peak = peak_rss_mb()
        extra = {"model_mb": model.memory_bytes_ / 2**20, "chunks": chunks,
                 "chunk_rows": chunk_rows, "train_seconds": train_seconds,
                 "peak_rss_after_10_chunks_mb": early_peak}
    elif kind == "fit-once":
        parts = list(SvmlightReader(path, 100_000, zero_based=False))
        X = sp.vstack([part.X for part in parts], format="csr")
        y = np.concatenate([part.y for part in parts])
        del parts
        model = make_model()
        begin = time.perf_counter()
        model.fit(X, y)
        extra = {"model_mb": model.memory_bytes_ / 2**20,
                 "train_seconds": time.perf_counter() - begin}
        rows, nnz = X.shape[0], X.nnz
    elif kind == "stream":
        rows = nnz = 0
        for chunk in SvmlightReader(path, chunk_rows, zero_based=False):
            rows += chunk.X.shape[0]
            nnz += chunk.X.nnz
    else:
        X, y = load_svmlight_file(path, zero_based=False)
        rows, nnz = X.shape[0], X.nnz
    seconds = time.perf_counter() - start
    print(json.dumps({"rows": rows, "nnz": nnz, "seconds": seconds,
                      "rss_after_imports_mb": rss_after_imports, "peak_rss_mb": peak_rss_mb(),
                      **extra}))


def measure(kind, path, chunk_rows):
    out = subprocess.run([sys.executable, __file__, "--worker", kind, str(path),
                          "--chunk-rows", str(chunk_rows)],
                         check=True, capture_output=True, text=True).stdout
    result = json.loads(out.strip().splitlines()[-1])
    size = os.path.getsize(path)
    result.update(kind=kind,
                  reader={"stream": "SvmlightReader", "fit": "MISSION partial_fit",
                          "fit-once": "MISSION fit (in memory)",
                          "sklearn": "load_svmlight_file"}[kind],
                  file_mb=size / 2**20, mb_per_s=size / 2**20 / result["seconds"],
                  rows_per_s=result["rows"] / result["seconds"])
    return result


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size-gb", type=float, nargs="+", default=[0.2, 1.0],
                        help="file sizes in GB (2^30 bytes); the smallest is also loaded "
                             "by scikit-learn")
    parser.add_argument("--chunk-rows", type=int, default=10000)
    parser.add_argument("--value-format", choices=["short", "repr"], default="short",
                        help="values with 4 decimals, or Python's repr (17 digits)")
    parser.add_argument("--dir", help="where to write the files (default: a temporary "
                                      "directory, removed afterwards)")
    parser.add_argument("--no-sklearn", action="store_true",
                        help="skip load_svmlight_file (slow, memory-hungry)")
    parser.add_argument("--fit", action="store_true",
                        help="also train MissionClassifier chunk by chunk on every file, "
                             "and once by fit on the smallest")
    parser.add_argument("--fit-chunk-rows", type=int, default=1000,
                        help="rows per partial_fit call with --fit")
    parser.add_argument("--json", help="also write the results to this file")
    parser.add_argument("--worker", nargs=2, metavar=("KIND", "PATH"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        worker(args.worker[0], args.worker[1], args.chunk_rows)
        return

    with tempfile.TemporaryDirectory(dir=args.dir) as folder:
        rows = []
        sizes = sorted(args.size_gb)
        for size_gb in sizes:
            path = Path(folder) / f"bench_{size_gb:g}GB.svm"
            write_file(path, int(size_gb * 2**30), args.value_format)
            rows.append(measure("stream", path, args.chunk_rows))
            if args.fit:
                rows.append(measure("fit", path, args.fit_chunk_rows))
                if size_gb == sizes[0]:
                    rows.append(measure("fit-once", path, args.fit_chunk_rows))
            if size_gb == sizes[0] and not args.no_sklearn:
                rows.append(measure("sklearn", path, args.chunk_rows))
            path.unlink()

    print(f"svmlight, {args.value_format} values, chunk_rows={args.chunk_rows}, "
          f"block 1 MiB, {os.cpu_count()} CPUs")
    print(f"{'reader':24} {'file MB':>8} {'rows':>10} {'s':>7} {'MB/s':>7} {'rows/s':>10} "
          f"{'RSS imports MB':>15} {'peak RSS MB':>12}")
    for row in rows:
        print(f"{row['reader']:24} {row['file_mb']:8.0f} {row['rows']:10,d} "
              f"{row['seconds']:7.2f} {row['mb_per_s']:7.1f} {row['rows_per_s']:10,.0f} "
              f"{row['rss_after_imports_mb']:15.0f} {row['peak_rss_mb']:12.0f}")
    fit_summary = fit_table(rows) if args.fit else None
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"chunk_rows": args.chunk_rows, "value_format": args.value_format,
                       "fit_chunk_rows": args.fit_chunk_rows if args.fit else None,
                       "results": rows, "fit_summary": fit_summary}, f, indent=2)


def fit_table(rows):
    """Print and return the streaming-training summary of ``--fit``."""
    once = next(row for row in rows if row["kind"] == "fit-once")
    streamed = [row for row in rows if row["kind"] == "fit"]
    print(f"\nMISSION partial_fit in {streamed[0]['chunk_rows']:,}-row chunks; one fit over "
          f"the {once['rows']:,} rows of the {once['file_mb']:.0f} MB file took "
          f"{once['train_seconds']:.2f} s (peak RSS {once['peak_rss_mb']:.0f} MB with the "
          f"data in memory); model {once['model_mb']:.1f} MB")
    print(f"{'file MB':>8} {'chunks':>7} {'partial_fit s':>14} {'rows/s':>10} "
          f"{'RSS after 10 chunks MB':>23} {'peak RSS MB':>12} {'vs fit':>7}")
    summary = []
    for row in streamed:
        ratio = None
        if row["rows"] == once["rows"]:
            ratio = row["train_seconds"] / once["train_seconds"]
        summary.append({"file_mb": row["file_mb"], "chunks": row["chunks"],
                        "partial_fit_seconds": row["train_seconds"],
                        "fit_seconds": once["train_seconds"] if ratio else None,
                        "ratio_to_fit": ratio,
                        "peak_rss_after_10_chunks_mb": row["peak_rss_after_10_chunks_mb"],
                        "peak_rss_mb": row["peak_rss_mb"]})
        print(f"{row['file_mb']:8.0f} {row['chunks']:7,d} {row['train_seconds']:14.2f} "
              f"{row['rows'] / row['train_seconds']:10,.0f} "
              f"{row['peak_rss_after_10_chunks_mb'] or float('nan'):23.0f} "
              f"{row['peak_rss_mb']:12.0f} "
              f"{'' if ratio is None else f'{ratio:6.2f}x'}")
    return summary


if __name__ == "__main__":
    main()
