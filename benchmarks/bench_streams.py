"""Two streams compared and word pairs scored: relative deltoids and streaming PMI.

The WM-Sketch paper's sections 8.2 and 8.3 on 20 Newsgroups (``../shared/data``):

* deltoids: the words of comp.graphics against rec.autos (training posts,
  ``CountVectorizer``'s tokens). ``RelativeDeltoids`` beside the paired
  Count-Min baseline (``CountMinDeltoids``) at the same real bytes and at 8x,
  scikit-learn's unconstrained ``LogisticRegression`` on the same 1-sparse
  examples retrieving as many items by ``|weight|``, and the exact counts:
  the recall, among the items each retrieves, of the
  items whose exact frequency ratio exceeds 2, 4, 8 and 16 either way (seen at
  least ``MIN_COUNT`` times in both streams together);
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
THRESHOLDS = (2, 4, 8, 16)
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


def deltoid_rows(words_a, words_b):
    exact = ExactDeltoids(min_count=1).fit(words_a, words_b).deltoids_.set_index("item")
    seen = exact[(exact.count_a + exact.count_b) >= MIN_COUNT]
    targets = {t: set(seen.index[np.abs(seen.log_ratio) >= np.log(t)]) for t in THRESHOLDS}

    def recall(model):
        items = set(model.deltoids_["item"])
        return [round(len(items & targets[t]) / max(len(targets[t]), 1), 3) for t in THRESHOLDS]

    rows = []
    lr_recall = logistic_regression_recall(words_a, words_b, targets)
    for budget in BUDGETS:
        for name, model in (("RelativeDeltoids (AWM)", RelativeDeltoids(budget, random_state=0)),
                            ("paired Count-Min", CountMinDeltoids(budget, random_state=0)),
                            ("paired Count-Min, 8x bytes",
                             CountMinDeltoids(8 * budget, random_state=0))):
            started = time.perf_counter()
            model.fit(words_a, words_b)
            rows.append([f"{budget // 1024}KB", name, model.memory_bytes_,
                         len(model.deltoids_["item"]), *recall(model),
                         round(time.perf_counter() - started, 2)])
            if name.startswith("RelativeDeltoids"):
                top, seconds, n_bytes = lr_recall(len(model.deltoids_["item"]))
                rows.append([f"{budget // 1024}KB", "LogisticRegression, same number retrieved",
                             n_bytes, len(model.deltoids_["item"]), *top, round(seconds, 2)])
    counts = [len(targets[t]) for t in THRESHOLDS]
    return rows, counts


def logistic_regression_recall(words_a, words_b, targets):
    """scikit-learn's unconstrained LogisticRegression on the same 1-sparse examples (one
    per occurrence, one-hot, A = 1): a function of how many items to retrieve by |weight|."""
    import scipy.sparse as sp
    from sklearn.linear_model import LogisticRegression

    words = np.array(words_a + words_b, dtype=object)
    vocabulary, columns = np.unique(words, return_inverse=True)
    X = sp.csr_matrix((np.ones(words.size), columns, np.arange(words.size + 1)),
                      shape=(words.size, vocabulary.size))
    y = np.r_[np.ones(len(words_a)), np.zeros(len(words_b))]
    started = time.perf_counter()
    model = LogisticRegression(C=1e4, max_iter=1000).fit(X, y)
    seconds = time.perf_counter() - started
    order = np.argsort(-np.abs(model.coef_[0]), kind="stable")

    def recall(k):
        items = set(vocabulary[order[:k]].tolist())
        return ([round(len(items & targets[t]) / max(len(targets[t]), 1), 3)
                 for t in THRESHOLDS], seconds, model.coef_.nbytes)
    return recall


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


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", help="folder of 20news-bydate.tar.xz (default: the shared data)")
    parser.add_argument("--json", help="write every number to this file")
    args = parser.parse_args(argv)
    folder = Path(args.data) if args.data else resolve_data_dir().parent
    posts, groups = read_posts(folder / "20news-bydate.tar.xz")
    words_a, words_b = ([t for post in groups[g] for t in TOKEN.findall(post.lower())]
                        for g in GROUPS)
    print(f"deltoids: {GROUPS[0]} ({len(words_a):,} words) against {GROUPS[1]} "
          f"({len(words_b):,})")
    deltoid_table, counts = deltoid_rows(words_a, words_b)
    columns = ["budget", "method", "bytes", "retrieved",
               *(f"recall ratio>={t} ({n})" for t, n in zip(THRESHOLDS, counts)), "seconds"]
    print("  ".join(columns))
    for row in deltoid_table:
        print("  ".join(str(v) for v in row))
    print(f"\nPMI: {len(posts):,} posts, window 5, {PMI_BUDGET}")
    pmi_table, model, exact = pmi_rows(posts)
    pmi_columns = ["method", "bytes", "pairs", "Spearman (reported PMI, exact)",
                   "Spearman (weight, exact)", "recall of exact top 1024 (count>=50)",
                   "tokens/s", "seconds"]
    print("  ".join(pmi_columns))
    for row in pmi_table:
        print("  ".join("-" if v is None else str(v) for v in row))
    first = {row[1]: row[4:8] for row in deltoid_table if row[0] == deltoid_table[0][0]}
    summary = [
        f"deltoids at {deltoid_table[0][0]}: recall {first['RelativeDeltoids (AWM)']} against "
        f"paired Count-Min's {first['paired Count-Min']} (target 4x), "
        f"{first['paired Count-Min, 8x bytes']} at 8x bytes, and LogisticRegression's "
        f"{first['LogisticRegression, same number retrieved']} (target: within 10 points)",
        f"PMI: Spearman {pmi_table[0][3]} (target 0.6), recall {pmi_table[0][5]} (target 0.6), "
        f"{pmi_table[0][1]:,} bytes (target 1.5 MB), {pmi_table[0][6]:,} tokens/s against exact "
        f"{pmi_table[1][6]:,} ({pmi_table[0][6] / pmi_table[1][6]:.2f}x, target 0.4x)",
    ]
    print("\n" + "\n".join(summary))
    if args.json:
        Path(args.json).write_text(json.dumps({
            "provenance": provenance(), "summary": summary,
            "tables": [{"title": f"Relative deltoids, 20 Newsgroups words, {GROUPS[0]} against "
                                 f"{GROUPS[1]} (items seen >= {MIN_COUNT} times)",
                        "columns": columns, "rows": deltoid_table},
                       {"title": "Streaming PMI, 20 Newsgroups training posts, window 5",
                        "columns": pmi_columns, "rows": pmi_table}],
        }, indent=1))


if __name__ == "__main__":
    main()
