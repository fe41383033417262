"""Streaming pointwise mutual information of word pairs, in bounded memory.

The WM-Sketch paper's section 8.3: skip-gram negative sampling into an
Active-Set WM-Sketch. An observed pair (a word and a word after it within the
window) is a positive example, a pair of the same word with a word drawn from
a reservoir sample of the stream is a negative one; the classifier's weight of
a pair grows with its PMI, so its heap keeps the most associated pairs, by
name. The heap's pairs are counted exactly from the chunk each entered on,
and a Count-Sketch of the words gives the rest of each pair's estimated PMI.
"""
import math
import re
from itertools import chain
from numbers import Integral

import numpy as np
from sklearn.base import BaseEstimator

from ._base import largest_heap, largest_sketch_width, parse_memory_budget
from ._core import CountSketch
from ._heap_counts import HeapCounts, heap_keys, significant_counts
from ._names import NAME_OVERHEAD, reserved_name_bytes
from ._raw_features import name_keys, one_sparse_rows
from ._tables import (COUNT, MEMORY_BUDGET, PENALTY, POSITIVE_INT, SEED, SHARE, STEP,
                      FittedTable, result_table)
from .feature_extraction._crosses import cross_keys
from .feature_extraction._words_fast import word_codes
from .io._parsers import first_rows

__all__ = ["ExactPMI", "StreamingPMI", "window_pairs"]

#: Words as scikit-learn's CountVectorizer finds them by default: 2+ word characters,
#: in lower-cased text. Strings are scanned for them by the compiled ``word_codes``,
#: which finds the same words; the pattern is for token lists made outside.
TOKEN = re.compile(r"(?u)\b\w\w+\b")

#: Columns of ``pairs_``.
PAIR_COLUMNS = ("pair", "weight", "pmi", "count")

#: Share of the count bytes for the pair sketch (the rest counts words): heap pairs
#: are counted apart, so the pair sketch only gives a pair's count before it entered
#: the heap (0.3 and 0.75 recalled alike; 0.3, leaving the words more, gave
#: correlations with the exact PMI higher by 0.005 to 0.025).
PAIR_SKETCH_SHARE = 0.3


def _tokens(documents):
    """Lists of tokens: lists as they are, strings lower-cased and split as CountVectorizer."""
    documents = list(documents)
    texts = [i for i, d in enumerate(documents) if isinstance(d, str)]
    if texts:
        indptr, codes, words = word_codes([documents[i] for i in texts])
        words = np.array(words, dtype=object)
        for j, i in enumerate(texts):
            documents[i] = words[codes[indptr[j]:indptr[j + 1]]].tolist()
    return [list(d) for d in documents]


def _word_keys(documents):
    """The key of every word occurrence, the number of words of each document and
    ``{key: word}``; a list of texts is scanned in one compiled pass."""
    documents = list(documents)
    if all(isinstance(d, str) for d in documents):
        indptr, codes, distinct = word_codes(documents)
        keys = name_keys(distinct) if distinct else np.zeros(0, dtype=np.int64)
        return keys[codes], np.diff(indptr), dict(zip(keys.tolist(), distinct))
    documents = _tokens(documents)
    flat = list(chain.from_iterable(documents))
    distinct = list(dict.fromkeys(flat))
    keys = name_keys(distinct) if distinct else np.zeros(0, dtype=np.int64)
    key_of = dict(zip(distinct, keys.tolist()))
    words = np.fromiter(map(key_of.__getitem__, flat), dtype=np.int64, count=len(flat))
    lengths = np.fromiter(map(len, documents), dtype=np.int64, count=len(documents))
    return words, lengths, dict(zip(keys.tolist(), distinct))


def window_pairs(documents, window):
    """Every ordered pair of a word and a word at most ``window`` after it, in a document.

    Parameters
    ----------
    documents : list of str or list of list of str
        Documents (strings are tokenized as ``CountVectorizer`` does by
        default: lower case, words of 2+ word characters).
    window : int
        Largest distance between the two words of a pair.

    Returns
    -------
    words : ndarray of int64
        The key of every word occurrence.
    first, second : ndarray of int64
        The keys of the two words of every pair.
    names : dict
        ``{key: word}``.

    Examples
    --------
    >>> from sklearn_sketch.pmi import window_pairs
    >>> words, first, second, names = window_pairs(["New York is new", "York"], window=2)
    >>> [(names[a], names[b]) for a, b in zip(first.tolist(), second.tolist())]
    [('new', 'york'), ('york', 'is'), ('is', 'new'), ('new', 'is'), ('york', 'new')]
    """
    if isinstance(window, bool) or not isinstance(window, Integral) or window < 1:
        raise ValueError(f"window must be a positive integer, got {window!r}")
    words, lengths, names = _word_keys(documents)
    document = np.repeat(np.arange(lengths.size), lengths)
    firsts, seconds = [], []
    for distance in range(1, window + 1):
        same = document[:-distance] == document[distance:] if words.size > distance else \
            np.zeros(0, dtype=bool)
        firsts.append(words[:-distance][same] if same.size else words[:0])
        seconds.append(words[distance:][same] if same.size else words[:0])
    return words, np.concatenate(firsts), np.concatenate(seconds), names


def pair_keys(first, second):
    """Keys of ordered pairs: the crosses of their words' keys (see ``cross_keys``)."""
    parts = np.ascontiguousarray(np.stack([first, second], axis=1), dtype=np.int64)
    return cross_keys(parts, np.array([[0, 1, -1]], dtype=np.int64))[:, 0]


class PairNames:
    """Names (``"new york"``) of pair keys, built only for the keys asked for."""

    def __init__(self, keys, first, second, words):
        self.keys, self.first, self.second, self.words = keys, first, second, words

    def lookup(self, keys):
        found, rows = first_rows(self.keys, np.asarray(keys, dtype=np.int64))
        return {key: f"{self.words[self.first[row]]} {self.words[self.second[row]]}"
                for key, row in zip(found.tolist(), rows.tolist())}

    def mean_name_bytes(self):
        sample = list(self.words.values())[:1000]
        return 2 * float(np.mean([len(w.encode()) for w in sample])) + 1 if sample else 0.0


def _pmi(pair_count, first_count, second_count, n_pairs, n_words):
    """``log P(a, b) / (P(a) P(b))`` from counts (pairs over pairs, words over words)."""
    return (np.log(np.maximum(pair_count, 0.5) / max(n_pairs, 1))
            - np.log(np.maximum(first_count, 0.5) / max(n_words, 1))
            - np.log(np.maximum(second_count, 0.5) / max(n_words, 1)))


class StreamingPMI(BaseEstimator):
    """The word pairs of a stream that go together more than chance, in bounded memory.

    Skip-gram negative sampling into an Active-Set WM-Sketch, as the
    WM-Sketch paper's section 8.3 does. Each ordered pair of a word and a word
    at most ``window`` after it in a document is a positive example; each is
    matched by ``negatives`` pairs of the same first word with words drawn from
    a reservoir sample of the stream's words (negative examples). One 1-sparse
    update per example: a pair's weight grows with its PMI (shifted by the log
    of the negatives' share), so the heap keeps the most associated pairs,
    named (``"new york"``). Each heap pair is counted exactly from the chunk
    it entered on (a Count-Sketch of pairs gives its count before), and a
    Count-Sketch of words gives the rest of its estimated PMI: ``pairs_``
    reports both, ranked by the classifier's weight. Everything lives inside
    ``memory_budget`` real bytes, names and counts included.

    Parameters
    ----------
    window : int, default=5
        Largest distance between the words of a pair.
    negatives : int, default=2
        Negative pairs per observed pair. Two recalled more of the exact top
        pairs than one at every budget and corpus measured (see
        ``heap_share``), for 1.5x the time; three added little more (0.662
        against 0.650) for 2x.
    reservoir_size : int, default=4096
        Words kept by the reservoir sample the negatives are drawn from
        (Algorithm R, vectorized over each chunk in NumPy. It is ours rather
        than Apache DataSketches' ``var_opt_sketch``, whose Python interface
        takes one item a call: over the 3.37M words of the 20 Newsgroups
        training posts it took 0.027 s against 0.35 s,
        ``benchmarks/bench_reservoir.py``).
    memory_budget : int or str, default="1MB"
        Real bytes of the whole estimator.
    count_share : float, default=0.15
        Share of the budget for the count sketches: 30% of it counts pairs
        (a heap pair's count before it entered, where it stands out of the
        sketch's noise; from the chunk it entered on it is counted exactly),
        the rest words. Smaller sketches leave more heap and estimate PMI
        less well: on the 20 Newsgroups training posts at 1536KB, shares of
        0.2, 0.15, 0.1 and 0.05 recalled 0.757, 0.784, 0.798 and 0.823 of
        the exact top pairs (see ``heap_share``), with Spearman correlations
        of 0.970, 0.970, 0.957 and 0.922.
    heap_share : float, default=0.7
        Share of the classifier's bytes for its heap, the pairs' names and
        their counts. Recall of the exact top 1024 pairs by PMI among those
        seen at least 50 times, and the Spearman correlation of the reported
        PMI with the exact one, with these defaults against those of
        ``alpha=1e-6, negatives=1, heap_share=0.8, count_share=0.3`` and
        sketched pair counts: 0.784 and 0.970 against 0.366 and 0.865 on the
        20 Newsgroups training posts at 1536KB
        (``benchmarks/bench_streams.py``), 0.874 and 0.965 against 0.630 and
        0.864 on the test posts, and 0.360 and 0.910 against 0.207 and 0.717
        on them at 512KB. The word counts that PMI divides by are floored at
        a pair's count over ``window`` (a word occurrence starts at most
        ``window`` pairs), which the word sketch's collisions can otherwise
        undercut.
    eta0 : float, default=0.05
        Step of the classifier's 1-sparse updates.
    alpha : float, default=0.0
        L2 penalty of the classifier (the paper's lambda). Without it a
        pair's weight converges to its PMI (shifted by the log of
        ``negatives``); a penalty shrinks the weights of pairs seen early and
        rarely, which are the associated pairs of modest counts this
        estimator looks for: on the training posts 1e-7, 1e-6 and 1e-5
        recalled 0.521, 0.366 and 0.183 against 0.518 without (one negative).
    min_count : int, default=5
        Pairs estimated fewer times are left out of ``pairs_``.
    chunk_documents : int, default=500
        Documents trained at a time by ``fit`` (as ``partial_fit`` would be
        called on them); memory grows with their words (each word makes up to
        ``2 * window`` pairs and their negatives, one example each). On 20
        Newsgroups' training posts, 2000 and 500: Spearman 0.965 and 0.958,
        recall of the exact top 1024 0.812 and 0.855, 15.7 s and 13.0 s, and
        ``sklearn-sketch pmi`` peaked at 1.3 GB and 0.6 GB; on its 7,532 test
        posts 0.969 and 0.959, 0.892 and 0.933.
    top : int, default=20
        Pairs shown by ``repr``.
    random_state : int, default=None
        Seed of the hashes, the reservoir, the negatives and the shuffles.

    Attributes
    ----------
    pairs_ : pandas.DataFrame or dict of ndarray
        The heap's pairs with a positive weight seen at least ``min_count``
        times: ``pair``, ``weight``, ``pmi`` (estimated from the counts) and
        ``count`` (exact from the chunk the pair entered the heap on, plus
        the pair sketch's estimate before it where that stands out of the
        sketch's noise), by decreasing weight.
    heap_counts_ : HeapCounts
        The heap pairs' counts.
    estimator_ : AWMSketchClassifier
        The classifier.
    n_words_, n_pairs_ : int
        Words and observed pairs seen.
    memory_bytes_ : int
        Real bytes; at most ``memory_budget``.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_sketch.pmi import StreamingPMI
    >>> rng = np.random.default_rng(0)
    >>> words = [f"w{i}" for i in range(200)]
    >>> docs = [list(rng.choice(words, 8)) + ["new", "york"] + list(rng.choice(words, 8))
    ...         for _ in range(300)]
    >>> pmi = StreamingPMI(memory_budget="128KB", random_state=0).fit(docs)
    >>> pmi.pairs_["pair"][0]
    'new york'
    """

    pairs_ = FittedTable("_pairs")

    _parameter_constraints = {
        "window": POSITIVE_INT,
        "negatives": POSITIVE_INT,
        "reservoir_size": POSITIVE_INT,
        "memory_budget": MEMORY_BUDGET,
        "count_share": SHARE,
        "heap_share": SHARE,
        "eta0": STEP,
        "alpha": PENALTY,
        "min_count": COUNT,
        "chunk_documents": POSITIVE_INT,
        "top": COUNT,
        "random_state": SEED,
    }

    def __init__(self, window=5, *, negatives=2, reservoir_size=4096, memory_budget="1MB",
                 count_share=0.15, heap_share=0.7, eta0=0.05, alpha=0.0, min_count=5,
                 chunk_documents=500, top=20, random_state=None):
        self.window = window
        self.negatives = negatives
        self.reservoir_size = reservoir_size
        self.memory_budget = memory_budget
        self.count_share = count_share
        self.heap_share = heap_share
        self.eta0 = eta0
        self.alpha = alpha
        self.min_count = min_count
        self.chunk_documents = chunk_documents
        self.top = top
        self.random_state = random_state

    def fit(self, documents):
        """Train from scratch on ``documents`` (one pass).

        Parameters
        ----------
        documents : list of str or list of list of str
            The stream's documents (or sentences, or lines).

        Returns
        -------
        self : StreamingPMI
        """
        self._validate_params()
        self.__dict__.pop("estimator_", None)
        documents = list(documents)
        if not documents:
            raise ValueError("the stream holds no document: nothing to train on")
        for start in range(0, len(documents), self.chunk_documents):
            self.partial_fit(documents[start:start + self.chunk_documents])
        return self

    def partial_fit(self, documents):
        """Train on one more chunk of documents.

        Parameters
        ----------
        documents : list of str or list of list of str
            The chunk's documents.

        Returns
        -------
        self : StreamingPMI
        """
        self._validate_params()
        words, first, second, names = window_pairs(documents, self.window)
        if words.size == 0:
            raise ValueError("the documents hold no word: nothing to train on")
        if "estimator_" not in self.__dict__:
            self._start(names)
        self._train(words, first, second, names)
        return self

    def _start(self, names):
        from .weight_median import AWMSketchClassifier

        budget = parse_memory_budget(self.memory_budget)
        # A reservoir slot holds a word's key and, for naming negative pairs, its name.
        mean_word = float(np.mean([len(w.encode()) for w in list(names.values())[:1000]]))
        self._slot_bytes = 8 + NAME_OVERHEAD + math.ceil(1.25 * mean_word)
        reservoir_bytes = self._slot_bytes * self.reservoir_size
        count_bytes = int((budget - reservoir_bytes) * self.count_share)
        pair_bytes = int(count_bytes * PAIR_SKETCH_SHARE)
        pair_width = max(16, largest_sketch_width(pair_bytes, 3))
        word_width = max(16, largest_sketch_width(count_bytes - pair_bytes, 3))
        seed = 0 if self.random_state is None else self.random_state
        self.pair_counts_ = CountSketch(pair_width, 3, random_state=seed + 1)
        self.word_counts_ = CountSketch(word_width, 3, random_state=seed + 2)
        left = (budget - reservoir_bytes - self.pair_counts_.memory_bytes
                - self.word_counts_.memory_bytes)
        # Each heap pair also has its count (HeapCounts), paid from the heap's share.
        self.heap_counts_ = HeapCounts(1)
        tracked = self.heap_counts_.entry_bytes
        capacity = largest_heap(self.heap_share * max(left, 0),
                                name_bytes=reserved_name_bytes(2 * mean_word + 1) + tracked)
        if capacity < 1:
            raise ValueError(f"memory_budget={self.memory_budget!r} is too small for the "
                             f"counts, a reservoir of {self.reservoir_size} words and a heap")
        # learning_rate: what bench_streams measured it with (the classifier's default
        # before 'auto'; the step is a given eta0, tuned for it).
        self.estimator_ = AWMSketchClassifier(
            memory_budget=left - tracked * capacity, n_features_to_select=capacity,
            learning_rate="normalized", eta0=self.eta0, alpha=self.alpha, shuffle=False,
            random_state=self.random_state)
        self._rng = np.random.default_rng(seed)
        self.reservoir_ = np.zeros(0, dtype=np.int64)
        self._reservoir_names = {}
        self.n_words_ = self.n_pairs_ = 0

    def _sample(self, words):
        """Reservoir sampling (Algorithm R) of the stream's words, vectorized over a chunk."""
        size, seen = self.reservoir_size, self.n_words_
        fill = min(max(size - self.reservoir_.size, 0), words.size)
        self.reservoir_ = np.concatenate([self.reservoir_, words[:fill]])
        rest = words[fill:]
        if rest.size:
            positions = seen + fill + np.arange(rest.size)
            slots = (self._rng.random(rest.size) * (positions + 1)).astype(np.int64)
            keep = slots < size
            # Later words overwrite earlier ones in the same slot, as in sequence.
            self.reservoir_[slots[keep]] = rest[keep]

    def _train(self, words, first, second, names):
        # Negatives are drawn from the reservoir as it was before this chunk (or from the
        # chunk's own words while the reservoir is still empty).
        pool = self.reservoir_ if self.reservoir_.size else words
        negative_first = np.repeat(first, self.negatives)
        negative_second = pool[self._rng.integers(0, pool.size, negative_first.size)]
        all_first = np.concatenate([first, negative_first])
        all_second = np.concatenate([second, negative_second])
        keys = pair_keys(all_first, all_second)
        labels = np.concatenate([np.ones(first.size, np.int64),
                                 np.zeros(negative_first.size, np.int64)])
        known = {**self._reservoir_names, **names}
        examples, labels = one_sparse_rows(keys, labels,
                                           PairNames(keys, all_first, all_second, known),
                                           self._rng)
        previous = heap_keys(self.estimator_)
        self.estimator_.partial_fit(examples, labels, classes=[0, 1])
        positive_keys = keys[:first.size]
        # Pairs entering the heap start from the pair sketch's count before this chunk.
        self.heap_counts_.update(previous, heap_keys(self.estimator_), [positive_keys],
                                 lambda new: significant_counts(self.pair_counts_, new)[:, None])
        self.pair_counts_.update(positive_keys, np.ones(positive_keys.size))
        self.word_counts_.update(words, np.ones(words.size))
        self._sample(words)
        self._reservoir_names = {k: known[k] for k in np.unique(self.reservoir_).tolist()}
        self.n_words_ += int(words.size)
        self.n_pairs_ += int(first.size)
        self.memory_bytes_ = (self.estimator_.memory_bytes_ + self.pair_counts_.memory_bytes
                              + self.word_counts_.memory_bytes + self.heap_counts_.nbytes
                              + self._slot_bytes * self.reservoir_size)
        self.pairs_ = None  # built when read

    def _pairs(self):
        selected = self.estimator_.selected_features_
        positive = selected.weights[:, 0] > 0
        keys, weights = selected.keys[positive], selected.weights[positive, 0]
        names = selected.names[positive] if selected.names is not None else \
            np.full(keys.size, None, dtype=object)
        # The words of each pair, for their counts: from the names' words' keys.
        words = [n.split(" ", 1) if isinstance(n, str) else ["", ""] for n in names.tolist()]
        first = name_keys([w[0] for w in words]) if words else np.zeros(0, np.int64)
        second = name_keys([w[1] for w in words]) if words else np.zeros(0, np.int64)
        count = self.heap_counts_.query(keys, heap_keys(self.estimator_))[:, 0]
        # A word is the first (or second) word of at most `window` pairs per occurrence,
        # a floor for its count where the word sketch's collisions pull it lower.
        floor = count / self.window
        pmi = _pmi(count, np.maximum(self.word_counts_.query(first), floor),
                   np.maximum(self.word_counts_.query(second), floor),
                   self.n_pairs_, self.n_words_)
        keep = np.flatnonzero(count >= self.min_count)
        keep = keep[np.argsort(-weights[keep], kind="stable")]
        labels = np.array([str(k) if n is None else n for k, n in
                           zip(keys[keep].tolist(), names[keep].tolist())], dtype=object)
        return result_table(PAIR_COLUMNS, (labels, weights[keep], pmi[keep], count[keep]))

    def __repr__(self, N_CHAR_MAX=700):
        text = super().__repr__(N_CHAR_MAX)
        if "_pairs_" not in self.__dict__:
            return text
        table = self.pairs_
        lines = [f"{text}: {self.n_words_:,} words, {self.n_pairs_:,} pairs, "
                 f"{self.memory_bytes_:,} bytes", f"{'pmi':>7}  {'count':>8}  pair"]
        lines += [f"{table['pmi'][i]:7.2f}  {table['count'][i]:8.0f}  {table['pair'][i]}"
                  for i in range(min(self.top, len(table["pair"])))]
        return "\n".join(lines)


class ExactPMI(StreamingPMI):
    """The exact reference: every pair and word counted, memory unbounded.

    ``pairs_`` holds every pair seen at least ``min_count`` times by
    decreasing exact PMI (``weight`` is the PMI).

    Parameters
    ----------
    window : int, default=5
        Largest distance between the words of a pair.
    min_count : int, default=5
        Pairs seen fewer times are left out.
    chunk_documents : int, default=100000
        Documents counted at a time by ``fit``.
    top : int, default=20
        Pairs shown by ``repr``.

    Examples
    --------
    >>> from sklearn_sketch.pmi import ExactPMI
    >>> exact = ExactPMI(window=1, min_count=1).fit(
    ...     ["new york", "new york", "old york", "old town"])
    >>> exact.pairs_["pair"].tolist(), exact.pairs_["count"].tolist()
    (['old town', 'new york', 'old york'], [1.0, 2.0, 1.0])
    """

    def __init__(self, window=5, *, min_count=5, chunk_documents=100_000, top=20):
        self.window = window
        self.min_count = min_count
        self.chunk_documents = chunk_documents
        self.top = top

    def _start(self, names):
        self.estimator_ = None
        self.pair_keys_ = np.zeros(0, np.int64)
        self.pair_count_ = np.zeros(0, np.int64)
        self.word_keys_ = np.zeros(0, np.int64)
        self.word_count_ = np.zeros(0, np.int64)
        self._pair_words = (np.zeros(0, np.int64), np.zeros(0, np.int64))
        self._names = {}
        self.n_words_ = self.n_pairs_ = 0

    @staticmethod
    def _merge(keys, counts, new):
        merged, inverse = np.unique(np.concatenate([keys, new]), return_inverse=True)
        weights = np.concatenate([counts, np.ones(new.size, np.int64)])
        return merged, np.bincount(inverse, weights=weights).astype(np.int64), inverse

    def _train(self, words, first, second, names):
        keys = pair_keys(first, second)
        old = self.pair_keys_
        self.pair_keys_, self.pair_count_, inverse = self._merge(old, self.pair_count_, keys)
        firsts = np.zeros(self.pair_keys_.size, np.int64)
        seconds = np.zeros(self.pair_keys_.size, np.int64)
        firsts[inverse[:old.size]], seconds[inverse[:old.size]] = self._pair_words
        firsts[inverse[old.size:]], seconds[inverse[old.size:]] = first, second
        self._pair_words = (firsts, seconds)
        self.word_keys_, self.word_count_, _ = self._merge(self.word_keys_, self.word_count_,
                                                           words)
        self._names.update(names)
        self.n_words_ += int(words.size)
        self.n_pairs_ += int(first.size)
        self.memory_bytes_ = sum(a.nbytes for a in (self.pair_keys_, self.pair_count_,
                                                    self.word_keys_, self.word_count_))
        self.pairs_ = None  # built when read

    def _pairs(self):
        firsts, seconds = self._pair_words
        counts = self.word_count_[np.searchsorted(self.word_keys_, firsts)], \
            self.word_count_[np.searchsorted(self.word_keys_, seconds)]
        pmi = _pmi(self.pair_count_.astype(float), counts[0].astype(float),
                   counts[1].astype(float), self.n_pairs_, self.n_words_)
        keep = np.flatnonzero(self.pair_count_ >= self.min_count)
        keep = keep[np.argsort(-pmi[keep], kind="stable")]
        names = np.array([f"{self._names[a]} {self._names[b]}" for a, b in
                          zip(firsts[keep].tolist(), seconds[keep].tolist())], dtype=object)
        return result_table(PAIR_COLUMNS, (names, pmi[keep], pmi[keep],
                                           self.pair_count_[keep].astype(float)))
