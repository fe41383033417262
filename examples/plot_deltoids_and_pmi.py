"""
Two streams compared, word pairs scored: deltoids and PMI in bounded memory
===========================================================================

The WM-Sketch paper's sections 8.2 and 8.3 on 20 Newsgroups.

Left, relative deltoids (the paper's Fig. 10): the words of comp.graphics
against rec.autos. :class:`~sklearn_sketch.deltoids.RelativeDeltoids` (an
Active-Set WM-Sketch of stream A against stream B, one 1-sparse update per
word) and the paired Count-Min baseline
(:class:`~sklearn_sketch.deltoids.CountMinDeltoids`, Apache DataSketches) each
get 128 KB of real bytes, names included; Count-Min also gets eight times as
much. Each curve is the recall, among the words a method retrieves, of the
words whose exact frequency ratio between the groups is at least the
threshold, either way (words seen at least 10 times).

Right, streaming PMI: :class:`~sklearn_sketch.pmi.StreamingPMI` reads 3,000
posts (window 5) in 512 KB and reports its pairs with a PMI estimated from
small count sketches, drawn against the exact PMI
(:class:`~sklearn_sketch.pmi.ExactPMI`) of the pairs seen at least 5 times.

The posts are read from ``../shared/data/20news-bydate.tar.xz`` (or
``SKLEARN_SKETCH_DATA``); without them the example says so and stops.
"""

# %%
import os
import tarfile
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np
from scipy.stats import spearmanr

from sklearn_sketch.deltoids import CountMinDeltoids, ExactDeltoids, RelativeDeltoids
from sklearn_sketch.pmi import TOKEN, ExactPMI, StreamingPMI

GROUPS = ("comp.graphics", "rec.autos")
THRESHOLDS = np.array([2, 4, 8, 16])
BUDGET = 128 * 1024


def find_posts():
    """The 20 Newsgroups archive of the shared data folder, or None."""
    candidates = [Path(os.environ["SKLEARN_SKETCH_DATA"])] if os.environ.get(
        "SKLEARN_SKETCH_DATA") else []
    here = Path(globals().get("__file__", "plot_deltoids_and_pmi.py")).resolve()
    candidates += [parent / "shared" / "data" for parent in here.parents]
    for folder in candidates:
        if (folder / "20news-bydate.tar.xz").is_file():
            return folder / "20news-bydate.tar.xz"
    return None


def read_posts(path):
    """The training posts, one line each, and the posts of each of GROUPS."""
    posts, groups = [], {group: [] for group in GROUPS}
    with tarfile.open(path) as archive:
        for member in archive:
            parts = member.name.split("/")[-3:]
            if member.isfile() and parts[0] == "20news-bydate-train":
                text = archive.extractfile(member).read().decode("latin-1").replace("\n", " ")
                posts.append(text)
                if parts[1] in groups:
                    groups[parts[1]].append(text)
    return posts, groups


path = find_posts()
if path is None:
    print("20news-bydate.tar.xz not found (../shared/data or SKLEARN_SKETCH_DATA): "
          "nothing to compare.")
else:
    posts, groups = read_posts(path)
    words_a, words_b = ([word for post in groups[g] for word in TOKEN.findall(post.lower())]
                        for g in GROUPS)
    exact = ExactDeltoids(min_count=1).fit(words_a, words_b).deltoids_.set_index("item")
    seen = exact[(exact.count_a + exact.count_b) >= 10]
    fig, (left, right) = plt.subplots(1, 2, figsize=(11, 4.2))
    for label, model in (
            ("RelativeDeltoids (AWM), 128 KB", RelativeDeltoids(BUDGET, random_state=0)),
            ("paired Count-Min, 128 KB", CountMinDeltoids(BUDGET, random_state=0)),
            ("paired Count-Min, 1 MB", CountMinDeltoids(8 * BUDGET, random_state=0))):
        table = model.fit(words_a, words_b).deltoids_
        # As in the paper, each method retrieves its top 2048 items by |weight|.
        top = np.argsort(-np.abs(np.asarray(table["weight"], dtype=float)))[:2048]
        retrieved = set(np.asarray(table["item"], dtype=object)[top].tolist())
        recall = [np.isin(seen.index[np.abs(seen.log_ratio) >= np.log(t)],
                          list(retrieved)).mean() for t in THRESHOLDS]
        left.plot(THRESHOLDS, recall, marker="o",
                  label=f"{label} ({len(retrieved):,} words)")
        print(f"{label}: recall {np.round(recall, 3)}, {model.memory_bytes_:,} bytes")
    left.set(xscale="log", xticks=THRESHOLDS, xticklabels=THRESHOLDS, ylim=(0, 1.05),
             xlabel="exact frequency ratio at least", ylabel="recall",
             title=f"{GROUPS[0]} against {GROUPS[1]}")
    left.minorticks_off()
    left.legend(fontsize=8, loc="upper right", bbox_to_anchor=(1, 0.94))

    sample = posts[:3000]
    pmi = StreamingPMI(5, memory_budget="512KB", random_state=0).fit(sample)
    truth = ExactPMI(5, min_count=5).fit(sample).pairs_.set_index("pair")["pmi"]
    found = pmi.pairs_[pmi.pairs_["pair"].isin(truth.index)]
    rho = spearmanr(found["pmi"], truth[found["pair"]]).correlation
    right.scatter(truth[found["pair"]], found["pmi"], s=4, alpha=0.4)
    lims = [truth.min(), truth.max()]
    right.plot(lims, lims, color="gray", linewidth=1)
    right.set(xlabel="exact PMI", ylabel="StreamingPMI's estimate",
              title=f"{len(found):,} retrieved pairs, Spearman {rho:.2f}, "
                    f"{pmi.memory_bytes_ // 1024} KB")
    print(f"StreamingPMI: {len(pmi.pairs_):,} pairs, Spearman {rho:.3f}, "
          f"{pmi.memory_bytes_:,} bytes")
    fig.tight_layout()
    plt.show()
