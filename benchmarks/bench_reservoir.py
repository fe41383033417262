"""StreamingPMI's unigram reservoir against Apache DataSketches' ``var_opt_sketch``.

The words of the 20 Newsgroups training posts (``../shared/data``), tokenized
and chunked as :class:`~sklearn_sketch.pmi.StreamingPMI` reads them (2,000
posts a chunk), go through:

* ours: Algorithm R vectorized over each chunk in NumPy (``StreamingPMI._sample``);
* DataSketches' ``var_opt_sketch`` of the same size, the peer the issue names,
  whose Python interface takes one item a call.

Both keep 4,096 words. Prints the seconds and words per second of each, and
their ratio.

    python benchmarks/bench_reservoir.py [--json out.json]
"""
import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _provenance import provenance  # noqa: E402
from bench_streams import read_posts  # noqa: E402
from dna_task import resolve_data_dir  # noqa: E402

from sklearn_sketch.pmi import StreamingPMI, window_pairs  # noqa: E402

SIZE, CHUNK_POSTS = 4096, 2000


def ours(chunks):
    model = StreamingPMI(reservoir_size=SIZE, random_state=0)
    model.reservoir_, model.n_words_ = np.zeros(0, dtype=np.int64), 0
    model._rng = np.random.default_rng(0)
    started = time.perf_counter()
    for words in chunks:
        model._sample(words)
        model.n_words_ += words.size
    return time.perf_counter() - started, model.reservoir_.size


def datasketches(chunks):
    from datasketches import var_opt_sketch

    sketch = var_opt_sketch(SIZE)
    started = time.perf_counter()
    for words in chunks:
        for word in words.tolist():
            sketch.update(word)
    return time.perf_counter() - started, sketch.num_samples


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", help="the shared data folder (default: found like "
                        "benchmarks/dna_task.py finds it)")
    parser.add_argument("--json", help="write every number to this file")
    args = parser.parse_args(argv)
    folder = Path(args.data) if args.data else resolve_data_dir().parent
    posts, _ = read_posts(folder / "20news-bydate.tar.xz")
    chunks = [window_pairs(posts[i:i + CHUNK_POSTS], 5)[0]
              for i in range(0, len(posts), CHUNK_POSTS)]
    n_words = int(sum(words.size for words in chunks))
    rows = []
    for name, run in (("ours: Algorithm R, vectorized per chunk", ours),
                      ("DataSketches var_opt_sketch, one update a word", datasketches)):
        seconds, kept = run(chunks)
        rows.append([name, kept, round(seconds, 3), round(n_words / seconds)])
    columns = ["reservoir", "words kept", "seconds", "words/s"]
    print(f"{n_words:,} words of {len(posts):,} posts, {len(chunks)} chunks")
    print("  ".join(columns))
    for row in rows:
        print("  ".join(str(v) for v in row))
    summary = [f"ours {rows[0][2]} s against DataSketches' {rows[1][2]} s "
               f"({rows[1][2] / rows[0][2]:.0f}x faster) over {n_words:,} words"]
    print(summary[0])
    if args.json:
        Path(args.json).write_text(json.dumps({
            "provenance": provenance(), "summary": summary,
            "tables": [{"title": f"StreamingPMI's reservoir of {SIZE:,} words, 20 Newsgroups "
                                 "training posts", "columns": columns, "rows": rows}]},
            indent=1))


if __name__ == "__main__":
    main()
