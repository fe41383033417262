"""
The features a sketch selects, by name: k-mers and words
=========================================================

The Active-Set Weight-Median Sketch keeps its heaviest features by name in a
fixed memory. On DNA reads, the heaviest k-mers of each species; on 20
Newsgroups posts given as raw word lists (no vocabulary is built: words are
hashed on the fly and only the names of heap entries are kept), the words
that most raise each group's score. The 20 Newsgroups part runs when the data
is found (``../shared/data`` or ``SKLEARN_SKETCH_DATA``) and is skipped with
a message otherwise.
"""

# %%
import os
import re
import tarfile
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np

from sklearn_sketch import AWMSketchClassifier, KmerVectorizer
from sklearn_sketch.datasets import load_dna_sample


def heaviest(model, class_index, n, decode=None):
    """Names and weights of the heap features that most raise one class's score.

    Names are those the model kept (raw tokens), else ``decode(keys)`` (k-mers).
    """
    selected = model.selected_features_
    weights = selected.weights[:, class_index]
    order = np.argsort(-weights)[:n]
    names = decode(selected.keys[order]) if decode else selected.names[order]
    return names, weights[order]


def plot_top(axes, model, class_names, n, decode=None):
    for ax, (index, name) in zip(axes, enumerate(class_names)):
        labels, weights = heaviest(model, index, n, decode)
        ax.barh(np.arange(n)[::-1], weights, color="tab:blue")
        ax.set_yticks(np.arange(n)[::-1], labels, fontsize="small", family="monospace")
        ax.set_title(name, fontsize="medium")
        ax.tick_params(axis="x", labelsize="small")


# %%
# k-mers of four species
# ----------------------
reads, species = load_dna_sample(n_reads_per_class=1500, read_length=150, return_X_y=True)
kmers = KmerVectorizer(k=12)
dna_model = AWMSketchClassifier(memory_budget="1MB", random_state=0).fit(
    kmers.fit_transform(reads), species)
species_names = load_dna_sample(n_reads_per_class=1).target_names
fig, axes = plt.subplots(1, 4, figsize=(11, 3.8))
plot_top(axes, dna_model, species_names, 8, decode=kmers.decode)
fig.suptitle(f"Heaviest 12-mers per species, AWM-Sketch in {dna_model.memory_bytes_:,} bytes")
fig.tight_layout()
print("heap of", dna_model.n_features_to_select_, "k-mers per species;",
      dna_model.memory_bytes_, "bytes")


# %%
# Words of four newsgroups
# ------------------------
def find_twenty_news():
    """The 20 Newsgroups tarball of the shared data folder, or None."""
    candidates = []
    if os.environ.get("SKLEARN_SKETCH_DATA"):
        candidates.append(Path(os.environ["SKLEARN_SKETCH_DATA"]))
    here = Path(globals().get("__file__", "plot_selected_features.py")).resolve()
    candidates += [parent / "shared" / "data" for parent in here.parents]
    for folder in candidates:
        if (folder / "20news-bydate.tar.xz").is_file():
            return folder / "20news-bydate.tar.xz"
    return None


def read_groups(tarball, groups):
    """Word lists and labels of the training posts of ``groups``."""
    docs, labels = [], []
    with tarfile.open(tarball) as tar:
        for member in tar:
            parts = member.name.split("/")[-3:]  # split folder, group, post
            if member.isfile() and parts[0] == "20news-bydate-train" and parts[1] in groups:
                text = tar.extractfile(member).read().decode("latin-1").lower()
                text = text.split("\n\n", 1)[-1]  # drop the headers
                docs.append(re.findall(r"[a-z][a-z']{2,}", text))
                labels.append(groups.index(parts[1]))
    return docs, np.array(labels)


GROUPS = ["comp.graphics", "rec.autos", "sci.space", "talk.politics.guns"]
tarball = find_twenty_news()
if tarball is None:
    print("20 Newsgroups not found (../shared/data/20news-bydate.tar.xz or "
          "SKLEARN_SKETCH_DATA): the words part is skipped.")
else:
    docs, groups = read_groups(tarball, GROUPS)
    text_model = AWMSketchClassifier(memory_budget="1MB", random_state=0).fit(docs, groups)
    print(f"{len(docs)} posts; heap of {text_model.n_features_to_select_} words per group; "
          f"{text_model.memory_bytes_:,} bytes, names included")
    fig, axes = plt.subplots(1, 4, figsize=(11, 3.8))
    plot_top(axes, text_model, GROUPS, 10)
    fig.suptitle(f"Heaviest words per group, AWM-Sketch in {text_model.memory_bytes_:,} bytes")
    fig.tight_layout()
plt.show()
