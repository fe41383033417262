"""DNA reads sampled from the bacterial genome segments embedded in the package.

``data/`` holds, per species, a 40 kb segment of a train strain and the
homologous 40 kb segment of a held-out test strain, cut by
``tools/cut_dna_sample.py`` from NCBI RefSeq genomes; ``data/manifest.json``
records the strains, accessions, coordinates and source.
"""
import json
from functools import lru_cache
from importlib import resources
from numbers import Integral

import numpy as np
from sklearn.utils import Bunch

from ..feature_extraction import KmerVectorizer
from ..io import FastaReader

_COMPLEMENT = bytes.maketrans(b"ACGT", b"TGCA")
_SPLITS = ("train", "test")


def _data_dir():
    return resources.files(__package__) / "data"


@lru_cache(maxsize=1)
def _manifest():
    return json.loads((_data_dir() / "manifest.json").read_text())


@lru_cache(maxsize=None)
def _segment(file_name):
    """Sequence of an embedded segment, as upper-case bytes."""
    with resources.as_file(_data_dir() / file_name) as path:
        return b"".join(seq for chunk in FastaReader(path) for seq in chunk.sequences).upper()


def sample_species(split="train"):
    """The species of the embedded sample's ``split``, in their order (the manifest
    alone: no genome is read)."""
    return list(dict.fromkeys(s["species"] for s in _manifest()["segments"]
                              if s["split"] == split))


def _check_positive_int(name, value):
    if isinstance(value, bool) or not isinstance(value, Integral) or value < 1:
        raise ValueError(f"{name} must be a positive integer, got {value!r}")
    return int(value)


def _sample_reads(segments, n_reads, read_length, rng):
    """Reads drawn uniformly over the positions of ``segments``, half reverse-complemented.

    Returns the reads (bytes) and the index of the segment of each read.
    """
    n_starts = np.array([len(s) - read_length + 1 for s in segments], dtype=np.float64)
    per_segment = rng.multinomial(n_reads, n_starts / n_starts.sum())
    source = np.repeat(np.arange(len(segments)), per_segment)
    starts = np.concatenate([rng.integers(0, n, size=c)
                             for n, c in zip(n_starts.astype(np.int64), per_segment)])
    reverse = rng.permutation(n_reads) < n_reads // 2
    reads = []
    for segment_index, start, rc in zip(source.tolist(), starts.tolist(), reverse.tolist()):
        read = segments[segment_index][start:start + read_length]
        reads.append(read.translate(_COMPLEMENT)[::-1] if rc else read)
    return reads, source


def load_dna_sample(n_reads_per_class=1000, read_length=200, k=None, species=None,
                    split="train", random_state=0, return_X_y=False):
    """Sample DNA reads of bacterial species from the embedded genome segments.

    Reads are drawn uniformly over the positions of each species' segment(s)
    of the chosen split, and exactly half of each species' reads are
    reverse-complemented (reads from both strands). Train reads come from one
    strain per species and test reads from another, held-out strain (a
    homologous segment), so a classifier is judged across strains. The reads
    are shuffled; the same arguments always give the same reads.

    Parameters
    ----------
    n_reads_per_class : int, default=1000
        Reads per species.
    read_length : int, default=200
        Length of each read, at most the segment length (40,000).
    k : int, default=None
        If given, also count the reads' k-mers with ``KmerVectorizer(k=k)``.
    species : list of str, default=None
        Species to include, e.g. ``["E.Coli", "S.Aureus"]``; default all four
        (E.Coli, H.Pylori, S.Aureus, V.Cholerae). Labels follow this order.
    split : {"train", "test"}, default="train"
        Strains to sample from.
    random_state : int, default=0
        Seed of the sampling.
    return_X_y : bool, default=False
        Return ``(X, target)`` (or ``(reads, target)`` when ``k`` is None)
        instead of a Bunch.

    Returns
    -------
    data : sklearn.utils.Bunch
        ``reads`` (list of str), ``target`` (ndarray of int, index into
        ``target_names``), ``target_names`` (list of species), ``strains``
        (ndarray of str: the strain of each read), ``X``
        (scipy.sparse.csr_matrix of shape ``(n_reads, 4**k)``, only when ``k``
        is given) and ``DESCR``.
    (X, target) : tuple
        If ``return_X_y`` is True.

    Raises
    ------
    ValueError
        If an argument is out of range or names an unknown species or split.

    Examples
    --------
    >>> from sklearn_sketch.datasets import load_dna_sample
    >>> train = load_dna_sample(n_reads_per_class=5, read_length=50, k=4)
    >>> len(train.reads), train.X.shape, train.target_names
    (20, (20, 256), ['E.Coli', 'H.Pylori', 'S.Aureus', 'V.Cholerae'])
    >>> test = load_dna_sample(n_reads_per_class=5, split="test", species=["S.Aureus"])
    >>> sorted(set(test.strains.tolist())), len(test.reads[0])
    (['JKD6008'], 200)
    """
    n_reads_per_class = _check_positive_int("n_reads_per_class", n_reads_per_class)
    read_length = _check_positive_int("read_length", read_length)
    if split not in _SPLITS:
        raise ValueError(f"split must be 'train' or 'test', got {split!r}")
    if k is not None:
        _check_positive_int("k", k)
    segments = [s for s in _manifest()["segments"] if s["split"] == split]
    available = sample_species(split)
    if species is None:
        species = available
    elif isinstance(species, str):
        raise ValueError(f"species must be a list of names, got the string {species!r}")
    else:
        species = list(species)
        unknown = [name for name in species if name not in available]
        if unknown or not species or len(set(species)) != len(species):
            raise ValueError(f"species must be distinct names among {available}, got {species}")
    shortest = min(s["end"] - s["start"] for s in segments)
    if read_length > shortest:
        raise ValueError(f"read_length must be at most {shortest}, got {read_length}")

    rng = np.random.default_rng(random_state)
    reads, target, strains = [], [], []
    for label, name in enumerate(species):
        entries = [s for s in segments if s["species"] == name]
        class_reads, source = _sample_reads([_segment(s["file"]) for s in entries],
                                            n_reads_per_class, read_length, rng)
        reads += class_reads
        target.append(np.full(n_reads_per_class, label))
        strains.append(np.array([s["strain"] for s in entries])[source])
    order = rng.permutation(len(reads))
    reads = [reads[i].decode("ascii") for i in order]
    target = np.concatenate(target)[order]
    data = Bunch(reads=reads, target=target, target_names=species,
                 strains=np.concatenate(strains)[order],
                 DESCR=f"{split} reads of {', '.join(species)}; source: {_manifest()['source']}")
    if k is not None:
        data.X = KmerVectorizer(k=k).transform(reads)
    if return_X_y:
        return (data.X if k is not None else reads), target
    return data
