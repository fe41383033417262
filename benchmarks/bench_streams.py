"""Two streams compared and word pairs scored: relative deltoids and streaming PMI.

The WM-Sketch paper's sections 8.2 and 8.3 on 20 Newsgroups (``../shared/data``):

* deltoids: the words of comp.graphics against rec.autos (training posts,
  ``CountVectorizer``'s tokens). ``RelativeDeltoids`` beside the paired
  Count-Min baseline (``CountMinDeltoids``) at the same real bytes and at 8x,
  scikit-learn's unconstrained ``LogisticRegression`` on the same 1-sparse
  examples, and the exact counts. As in the paper, each method retrieves its
  top ``RETRIEVED`` items (by ``|weight|``, by ``|estimated log ratio|`` for
  Count-Min; fewer where it holds fewer): the recall among them of the
  items whose exact frequency ratio exceeds 2, 4, 8 and 16 either way (seen at
  least ``MIN_COUNT`` times in both streams together);
* the same on canonical 12-mers of DNA reads (``DNA_READS`` reads of 200 bp from
  both strands of each genome, ``../shared/data/genomes``): two strains of E. coli,
  and E. coli against S. aureus, items seen at least ``DNA_MIN_COUNT`` times. There
  hundreds of thousands of k-mers pass each ratio, so any top 2048 recalls a few in a
  thousand and only precision tells the methods apart; each pair is scored again at
  the smallest power-of-two minimum count at which the items of ratio 2 or more are
  no more than the 2048 retrieved (as the words' 2285 at ``MIN_COUNT``), where recall
  means what it does on words. LogisticRegression is fitted on one row per item and
  stream weighted by its count, the same objective as one row per occurrence;
* PMI: every training post as one line, window 5, ordered pairs.
  ``StreamingPMI`` at 1.5 MB beside the exact count (``ExactPMI``, NumPy
  ``unique``) in the same run: Spearman correlation of the reported PMI with
  the exact PMI over the retrieved pairs seen at least 5 times, recall of the
  exact top 1024 pairs by PMI among those seen at least 50 times, bytes and
  tokens per second.

    python benchmarks/bench_streams.py [--json out.json]
"""
import argparse
import json
import sys
import tarfile
import time
from pathlib import Path

import numpy as np
from scipy.stats import spearmanr

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _provenance import provenance  # noqa: E402
from dna_task import resolve_data_dir  # noqa: E402

from sklearn_sketch.deltoids import CountMinDeltoids, ExactDeltoids, RelativeDeltoids  # noqa: E402
from sklearn_sketch.pmi import TOKEN, ExactPMI, StreamingPMI  # noqa: E402

GROUPS = ("comp.graphics", "rec.autos")
MIN_COUNT = 10
#: (label, genome A, genome B) under ../shared/data/genomes.
DNA_PAIRS = (("two E. coli strains", "E.Coli/MG1655-K12", "E.Coli/DH1"),
             ("E. coli against S. aureus", "E.Coli/MG1655-K12", "S.Aureus/COL"))
DNA_READS, DNA_READ_LENGTH, DNA_K = 50_000, 200, 12
DNA_MIN_COUNT = 8
THRESHOLDS = (2, 4, 8, 16)
#: Items each deltoid method retrieves (the paper's top 2048).
RETRIEVED = 2048
BUDGETS = (32 * 1024, 128 * 1024)
PMI_BUDGET = "1536KB"


def read_posts(tarball):
    """Training posts (as one line each) and the posts of each of GROUPS."""
    posts, groups = [], {g: [] for g in GROUPS}
    with tarfile.open(tarball) as tar:
        for member in tar:
            parts = member.name.split("/")[-3:]
            if member.isfile() and parts[0] == "20news-bydate-train":
                text = tar.extractfile(member).read().decode("latin-1").replace("\n", " ")
                posts.append(text)
                if parts[1] in groups:
                    groups[parts[1]].append(text)
    return posts, groups


def kmer_counts(genome, seed):
    """Canonical 12-mer counts of ``DNA_READS`` reads sampled from one genome (one row)."""
    import scipy.sparse as sp

    from sklearn_sketch import KmerVectorizer
    from sklearn_sketch.io import FastaReader, ReadSampler

    vectorizer = KmerVectorizer(k=DNA_K, canonical=True)
    reader = FastaReader({str(genome): 0})
    counts = sp.vstack([vectorizer.transform(chunk.sequences) for chunk in
                        ReadSampler(reader, DNA_READ_LENGTH, n_reads=DNA_READS,
                                    random_state=seed)])
    return sp.csr_matrix(counts.sum(axis=0))


def deltoid_rows(stream_a, stream_b, min_counts):
    """For one pair of streams, fit each method once and score its top items against the
    exact counts at each minimum count: ``{min_count: (rows, size of each target)}``.
    ``None`` in ``min_counts`` stands for :func:`fitting_min_count`."""
    exact = ExactDeltoids(min_count=1).fit(stream_a, stream_b).deltoids_.set_index("item")
    total = exact.count_a + exact.count_b
    min_counts = [fitting_min_count(exact) if m is None else m for m in min_counts]
    scorers = {}
    for min_count in min_counts:
        seen = exact[total >= min_count]
        targets = {t: set(seen.index[np.abs(seen.log_ratio) >= np.log(t)]) for t in THRESHOLDS}
        scorers[min_count] = (targets, set(seen.index))

    def scores(items, min_count):
        """Recall of each target, then precision: the share of the retrieved items seen
        ``min_count`` times that meet each ratio (recall is capped by how many are
        retrieved where the targets outnumber them)."""
        targets, seen_items = scorers[min_count]
        items = set(items)
        known = max(len(items & seen_items), 1)
        return ([round(len(items & targets[t]) / max(len(targets[t]), 1), 3)
                 for t in THRESHOLDS]
                + [round(len(items & targets[t]) / known, 3) for t in THRESHOLDS])

    rows = {m: [] for m in min_counts}
    lr_top = logistic_regression_top(exact)
    for budget in BUDGETS:
        for name, model in (("RelativeDeltoids (AWM)", RelativeDeltoids(budget, random_state=0)),
                            ("paired Count-Min", CountMinDeltoids(budget, random_state=0)),
                            ("paired Count-Min, 8x bytes",
                             CountMinDeltoids(8 * budget, random_state=0))):
            started = time.perf_counter()
            model.fit(stream_a, stream_b)
            items = top_items(model.deltoids_)
            seconds = round(time.perf_counter() - started, 2)
            for m in min_counts:
                rows[m].append([f"{budget // 1024}KB", name, model.memory_bytes_, len(items),
                                *scores(items, m), seconds])
                if name.startswith("RelativeDeltoids"):
                    items_lr, seconds_lr, n_bytes = lr_top
                    rows[m].append([f"{budget // 1024}KB", "LogisticRegression (unconstrained)",
                                    n_bytes, len(items_lr), *scores(items_lr, m),
                                    round(seconds_lr, 2)])
    return {m: (rows[m], [len(scorers[m][0][t]) for t in THRESHOLDS]) for m in min_counts}


def fitting_min_count(exact):
    """The smallest power of two at least ``DNA_MIN_COUNT`` at which the items of ratio
    2 or more (either way) are no more than the ``RETRIEVED``: where they outnumber
    the retrieved items many times over, recall measures only that ratio."""
    total = (exact.count_a + exact.count_b).to_numpy()
    deltoid = np.abs(exact.log_ratio.to_numpy()) >= np.log(THRESHOLDS[0])
    min_count = DNA_MIN_COUNT
    while np.count_nonzero(deltoid & (total >= min_count)) > RETRIEVED:
        min_count *= 2
    return min_count


def top_items(table):
    """The ``RETRIEVED`` items of a deltoid table of largest ``|weight|``."""
    order = np.argsort(-np.abs(np.asarray(table["weight"], dtype=float)), kind="stable")
    return np.asarray(table["item"], dtype=object)[order[:RETRIEVED]].tolist()


def logistic_regression_top(exact):
    """scikit-learn's unconstrained LogisticRegression on the same 1-sparse examples (one
    per occurrence, one-hot, A = 1), given as one row per item and stream weighted by its
    count (the same objective as a row per occurrence, and small enough for millions of
    k-mers): its ``RETRIEVED`` items of largest |weight|, seconds and bytes."""
    import scipy.sparse as sp
    from sklearn.linear_model import LogisticRegression

    counts = np.r_[exact.count_a.to_numpy(float), exact.count_b.to_numpy(float)]
    n_items = len(exact)
    columns = np.r_[np.arange(n_items), np.arange(n_items)]
    kept = counts > 0
    X = sp.csr_matrix((np.ones(kept.sum()), columns[kept], np.arange(kept.sum() + 1)),
                      shape=(int(kept.sum()), n_items))
    y = np.r_[np.ones(n_items), np.zeros(n_items)][kept]
    started = time.perf_counter()
    model = LogisticRegression(C=1e4, max_iter=1000).fit(X, y, sample_weight=counts[kept])
    seconds = time.perf_counter() - started
    order = np.argsort(-np.abs(model.coef_[0]), kind="stable")[:RETRIEVED]
    return exact.index.to_numpy(dtype=object)[order].tolist(), seconds, model.coef_.nbytes


def pmi_rows(posts):
    started = time.perf_counter()
    exact = ExactPMI(5, min_count=5).fit(posts)
    exact_seconds = time.perf_counter() - started
    table = exact.pairs_.set_index("pair")
    top = set(table[table["count"] >= 50].sort_values("pmi", ascending=False).index[:1024])
    started = time.perf_counter()
    model = StreamingPMI(5, memory_budget=PMI_BUDGET, random_state=0).fit(posts)
    seconds = time.perf_counter() - started
    pairs = model.pairs_
    known = pairs[pairs.pair.isin(table.index)]
    rho_pmi = spearmanr(known.pmi, table.loc[known.pair, "pmi"]).correlation
    rho_weight = spearmanr(known.weight, table.loc[known.pair, "pmi"]).correlation
    recall = len(set(pairs.pair) & top) / len(top)
    rows = [["StreamingPMI (AWM + counts)", model.memory_bytes_, len(pairs), round(rho_pmi, 3),
             round(rho_weight, 3), round(recall, 3), round(model.n_words_ / seconds),
             round(seconds, 1)],
            ["exact counts (NumPy unique)", exact.memory_bytes_, len(table), 1.0, None, 1.0,
             round(exact.n_words_ / exact_seconds), round(exact_seconds, 1)]]
    return rows, model, exact


def deltoid_summary(label, table):
    """One line per budget: ours against Count-Min (same bytes, 8x) and LogisticRegression."""
    lines = []
    for budget in dict.fromkeys(row[0] for row in table):
        recall = {row[1]: row[4:8] for row in table if row[0] == budget}
        precision = {row[1]: row[8:12] for row in table if row[0] == budget}
        ours, cm = recall["RelativeDeltoids (AWM)"], recall["paired Count-Min"]
        times = [round(a / b, 1) if b else float("inf") for a, b in zip(ours, cm)]
        line = (f"deltoids, {label}, {budget}: recall {ours}, {times} times paired "
                f"Count-Min's {cm} (target 4x); Count-Min at 8x bytes "
                f"{recall['paired Count-Min, 8x bytes']} (target: below ours); precision "
                f"{precision['RelativeDeltoids (AWM)']} against Count-Min's "
                f"{precision['paired Count-Min']} and, at 8x, "
                f"{precision['paired Count-Min, 8x bytes']}")
        lr = recall.get("LogisticRegression (unconstrained)")
        if lr is not None:
            line += f"; LogisticRegression {lr} (target: within 10 points)"
        lines.append(line)
    return lines


def print_table(columns, rows):
    print("  ".join(columns))
    for row in rows:
        print("  ".join("-" if v is None else str(v) for v in row))


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", help="the shared data folder, holding 20news-bydate.tar.xz "
                        "and genomes/ (default: found like benchmarks/dna_task.py finds it)")
    parser.add_argument("--json", help="write every number to this file")
    args = parser.parse_args(argv)
    folder = Path(args.data) if args.data else resolve_data_dir().parent
    posts, groups = read_posts(folder / "20news-bydate.tar.xz")
    words_a, words_b = ([t for post in groups[g] for t in TOKEN.findall(post.lower())]
                        for g in GROUPS)
    deltoids = [(f"20 Newsgroups words, {GROUPS[0]} against {GROUPS[1]}",
                 f"{len(words_a):,} and {len(words_b):,} words", words_a, words_b, [MIN_COUNT])]
    for label, genome_a, genome_b in DNA_PAIRS:
        a, b = (kmer_counts(folder / "genomes" / f"{g}.fasta.gz", seed)
                for seed, g in enumerate((genome_a, genome_b)))
        deltoids.append((f"12-mers, {label} ({genome_a} against {genome_b})",
                         f"{int(a.sum()):,} and {int(b.sum()):,} k-mers of {DNA_READS:,} reads "
                         "each", a, b, [DNA_MIN_COUNT, None]))
    tables, summary = [], []
    for title, sizes, a, b, min_counts in deltoids:
        print(f"deltoids: {title} ({sizes})")
        for min_count, (rows, counts) in deltoid_rows(a, b, min_counts).items():
            columns = ["budget", "method", "bytes", "retrieved",
                       *(f"recall ratio>={t} ({n})" for t, n in zip(THRESHOLDS, counts)),
                       *(f"precision ratio>={t}" for t in THRESHOLDS), "seconds"]
            print(f"items seen >= {min_count} times")
            print_table(columns, rows)
            print()
            tables.append({"title": f"Relative deltoids, {title}, {sizes} (items seen >= "
                                    f"{min_count} times)", "columns": columns, "rows": rows})
            summary += deltoid_summary(f"{title.split(' (')[0]}, seen >= {min_count}", rows)
    print(f"PMI: {len(posts):,} posts, window 5, {PMI_BUDGET}")
    pmi_table, model, exact = pmi_rows(posts)
    pmi_columns = ["method", "bytes", "pairs", "Spearman (reported PMI, exact)",
                   "Spearman (weight, exact)", "recall of exact top 1024 (count>=50)",
                   "tokens/s", "seconds"]
    print_table(pmi_columns, pmi_table)
    summary.append(
        f"PMI: Spearman {pmi_table[0][3]} (target 0.6), recall {pmi_table[0][5]} (target 0.6), "
        f"{pmi_table[0][1]:,} bytes (target 1.5 MB), {pmi_table[0][6]:,} tokens/s against exact "
        f"{pmi_table[1][6]:,} ({pmi_table[0][6] / pmi_table[1][6]:.2f}x, target 0.4x)")
    tables.append({"title": "Streaming PMI, 20 Newsgroups training posts, window 5",
                   "columns": pmi_columns, "rows": pmi_table})
    print("\n" + "\n".join(summary))
    if args.json:
        Path(args.json).write_text(json.dumps({"provenance": provenance(), "summary": summary,
                                               "tables": tables}, indent=1))


if __name__ == "__main__":
    main()
