"""Relative deltoids: the items much more frequent in one stream than in another.

The WM-Sketch paper's section 8.2: a classifier of stream A against stream B,
trained with one 1-sparse update per item occurrence, puts its heaviest
weights on the items whose frequency ratio between the streams is largest,
either way, in memory that does not grow with the number of distinct items.
"""
import math
from collections.abc import Iterator

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator
from sklearn.utils.validation import check_is_fitted

from ._base import largest_heap, largest_sketch_width, parse_memory_budget
from ._core import CountSketch
from ._heap_counts import HeapCounts, heap_keys, significant_counts
from ._names import NAME_OVERHEAD, lookup_names, mean_name_bytes, reserved_name_bytes
from ._raw_features import NamedRows, hash_raw, one_sparse_batches
from ._sorted_keys import unique_keys
from ._tables import (COUNT, MEMORY_BUDGET, PENALTY, POSITIVE_INT, SEED, SHARE, STEP,
                      FittedTable, result_table)

__all__ = ["CountMinDeltoids", "ExactDeltoids", "RelativeDeltoids", "item_occurrences"]

#: Columns of ``deltoids_``.
DELTOID_COLUMNS = ("item", "weight", "log_ratio", "count_a", "count_b")

#: Least bytes reserved for an item's name (see RelativeDeltoids._start).
_SHORTEST_ITEM_NAME = 8
#: Examples built and trained at a time (24 MiB of 1-sparse rows): a chunk's
#: occurrences are shuffled whole, and trained on in this many at a time.
TRAINING_BATCH = 2**20

#: Step of the default classifier. An item seen in one stream only is separable:
#: its weight grows like log(1 + eta0 * count), so a small step ranks the rare
#: items of large ratio under the frequent ones of ratio 2 (see RelativeDeltoids).
DEFAULT_ETA0 = 0.3


def item_occurrences(items):
    """The keys of every item occurrence of ``items``, and ``{key: name}`` where known.

    Parameters
    ----------
    items : list of str, list of list of str, ndarray of int, sparse matrix or NamedRows
        Tokens, documents of tokens, integer keys, or a matrix of counts
        (``KmerVectorizer`` output: one occurrence per count).

    Returns
    -------
    keys : ndarray of int64
        One key per occurrence.
    names : dict or object or None
        Names of the keys (tokens), a name lookup (``NamedRows``), or None.

    Examples
    --------
    >>> from sklearn_sketch.deltoids import item_occurrences
    >>> keys, names = item_occurrences(["a", "b", "a"])
    >>> keys.size, sorted(names.values())
    (3, ['a', 'b'])
    """
    if isinstance(items, NamedRows):
        matrix, names = items.X, items.names
    elif sp.issparse(items):
        matrix, names = sp.csr_matrix(items), None
    elif isinstance(items, np.ndarray) and items.dtype.kind in "iu":
        return items.astype(np.int64).ravel(), None
    else:
        items = list(items)
        if not items:
            return np.zeros(0, dtype=np.int64), {}
        documents = items if isinstance(items[0], (list, tuple)) else [items]
        if not all(isinstance(t, (str, bytes)) for doc in documents[:100] for t in doc[:100]):
            raise TypeError("items must be tokens (str), lists of tokens, integer keys or a "
                            "matrix of counts")
        matrix, names = hash_raw([list(doc) for doc in documents])
    counts = matrix.data
    if (counts < 0).any() or not np.array_equal(counts, np.round(counts)):
        raise ValueError("a matrix of items must hold non-negative whole counts")
    return np.repeat(matrix.indices.astype(np.int64), counts.astype(np.int64)), names


def _log_ratio(count_a, count_b, n_a, n_b):
    """Log of the ratio of the two relative frequencies, half a count added to each."""
    return np.log((count_a + 0.5) / max(n_a, 1.0)) - np.log((count_b + 0.5) / max(n_b, 1.0))


class RelativeDeltoids(BaseEstimator):
    """Find the items whose frequency differs most between two streams, in bounded memory.

    An Active-Set WM-Sketch classifier of stream A (label 1) against stream
    B (label 0) takes one 1-sparse update per item occurrence, as the
    WM-Sketch paper does: an item's weight grows with the log ratio of its
    frequencies, so the heap keeps the items most frequent in A relative to B
    (positive weights) and in B relative to A (negative weights), by name.
    The heap's items are counted exactly from the chunk each entered on (two
    small Count-Sketches give their counts before it), for their log ratio;
    :meth:`recount` counts them over both streams read again. Everything
    lives inside ``memory_budget`` real bytes, names included.

    Feed both streams at once (``fit(a, b)``, or ``partial_fit(a=..., b=...)``
    per chunk: the occurrences of a chunk are shuffled together, seeded by
    ``random_state``), or one at a time (``partial_fit(items, stream="a")``),
    in chunks small enough that the two streams alternate often: the model
    follows the most recent occurrences.

    Parameters
    ----------
    memory_budget : int or str, default="128KB"
        Real bytes of the whole estimator: classifier, names and counts.
    count_share : float, default=0.02
        Share of the budget for the two count sketches (depth 3). They only
        give the counts of an item before it entered the heap, where those
        stand out of their noise: from the chunk it entered on, a heap item
        is counted exactly (so a stream of one chunk is counted exactly), and
        the bytes serve the heap better than wider sketches would.
    heap_share : float, default=0.85
        Share of the classifier's bytes for its heap, the items' names and
        their counts. A heap entry costs about 50 real bytes (23 the heap, 18
        its name, 8 its two float32 counts, whose key is the heap's; a
        quarter more than the mean name is reserved, at least 8 bytes) and a
        sketch cell 4, so 0.85 keeps about one entry per two and a half
        cells. On 20 Newsgroups words at 128KB (the benchmark's pair of
        groups) the heap holds 2,111 entries and recalls 0.632, 0.794, 0.846
        and 0.838 of the items of ratio 2, 4, 8 and 16 (0.9 and 0.94 recalled
        up to 3 points less when entries cost 62 bytes); with 16 bytes of name
        reserved at least, 8-byte name ends and the counts keeping their own
        keys, it held 1,544 and recalled 0.525, 0.688, 0.760 and 0.758.
    eta0 : float, default=0.3
        Step of the classifier's 1-sparse updates. On 20 Newsgroups words,
        three pairs of groups at 128KB, these defaults recall 0.46-0.53,
        0.59-0.69, 0.67-0.76 and 0.67-0.76 of the items of ratio 2, 4, 8 and
        16 (seen 10 times), against 0.40-0.49, 0.44-0.54, 0.47-0.57 and
        0.46-0.55 with ``eta0=0.05``, sketched counts
        (``count_share=0.2``) and ``heap_share=0.9``; at 32KB 0.13-0.14,
        0.17-0.19, 0.21-0.23 and 0.22-0.24 against 0.11-0.12, 0.12-0.14,
        0.13-0.15 and 0.13-0.15. A step of 0.05 to 0.2 favours ratio 2,
        0.3 the larger ratios.
    alpha : float, default=1e-7
        L2 penalty of the classifier. Each update shrinks every weight by
        ``eta0 * alpha``, so an item's weight fades over about
        ``1 / (eta0 * alpha)`` occurrences after its last one (33 million by
        default): the model forgets what a long stream said early, which
        suits a stream that drifts and hurts two files compared whole. With
        ``alpha=1e-6`` (3.3 million) two bacterial genomes (7 to 19 million
        k-mers) were read mostly by their last stretches: at 128KB, of the
        12-mers of 50,000 reads of E. coli against S. aureus, the top 2048 held
        items of ratio 2 or more at a precision of 0.85 against 0.95 with
        ``1e-7``, and of ratio 8 or more 0.60 against 0.80; on 20 Newsgroups
        words (270,000 occurrences) both recalled the same within 0.006.
    min_count : int, default=5
        Items seen fewer times in both streams together are left out of
        ``deltoids_``.
    chunk_items : int, default=1000000
        Occurrences per stream trained at a time by ``fit``.
    top : int, default=20
        Items of each direction shown by ``repr``.
    random_state : int, default=None
        Seed of the hashes and of the shuffles.

    Attributes
    ----------
    deltoids_ : pandas.DataFrame or dict of ndarray
        The items of the heap seen at least ``min_count`` times: ``item``,
        ``weight`` (positive: more frequent in A), ``log_ratio`` (estimated
        ``log(f_A / f_B)`` of the relative frequencies), ``count_a`` and
        ``count_b`` (occurrences: counted exactly from the chunk the item
        entered the heap on, plus the count sketches' estimates before it
        where they stand out of their noise). By decreasing ``log_ratio``
        when the counts are exact (``exact_counts_``), else by decreasing
        weight: a late entrant's counts cover the occurrences since it
        entered, and its ratio over them is biased by what made it enter
        (on 20 Newsgroups in 20,000-word chunks at 512KB, up to 5% of the
        20 items listed each way would lean the other way).
    exact_counts_ : bool
        Whether every item's counts cover both whole streams: after a fit
        in one chunk, chunks that no item entered the heap on, or
        :meth:`recount`.
    heap_counts_ : HeapCounts
        The heap items' counts.
    estimator_ : AWMSketchClassifier
        The classifier.
    n_a_, n_b_ : int
        Occurrences seen in each stream.
    memory_bytes_ : int
        Real bytes; at most ``memory_budget``.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_sketch.deltoids import RelativeDeltoids
    >>> rng = np.random.default_rng(0)
    >>> common = [f"w{i}" for i in rng.integers(0, 300, 20_000)]
    >>> a = common[:10_000] + ["spike"] * 200
    >>> b = common[10_000:] + ["spike"] * 10
    >>> deltoids = RelativeDeltoids(memory_budget="32KB", random_state=0).fit(a, b)
    >>> deltoids.deltoids_["item"][0]
    'spike'
    """

    deltoids_ = FittedTable("_deltoids")

    _parameter_constraints = {
        "memory_budget": MEMORY_BUDGET,
        "count_share": SHARE,
        "heap_share": SHARE,
        "eta0": STEP,
        "alpha": PENALTY,
        "min_count": COUNT,
        "chunk_items": POSITIVE_INT,
        "top": COUNT,
        "random_state": SEED,
    }

    def __init__(self, memory_budget="128KB", *, count_share=0.02, heap_share=0.85,
                 eta0=DEFAULT_ETA0, alpha=1e-7, min_count=5, chunk_items=1_000_000,
                 top=20, random_state=None):
        self.memory_budget = memory_budget
        self.count_share = count_share
        self.heap_share = heap_share
        self.eta0 = eta0
        self.alpha = alpha
        self.min_count = min_count
        self.chunk_items = chunk_items
        self.top = top
        self.random_state = random_state

    def fit(self, a, b):
        """Train from scratch on two whole streams, in chunks of ``chunk_items``.

        Parameters
        ----------
        a, b : list of str, list of list of str, ndarray of int or matrix of counts
            The items of stream A and of stream B (see :func:`item_occurrences`),
            trained as ``partial_fit(a=..., b=...)`` on the parts that
            ``np.array_split`` cuts them into, enough that a part holds at most
            ``chunk_items`` items (documents, rows) of either stream.

        Returns
        -------
        self : RelativeDeltoids
        """
        self._validate_params()
        self.__dict__.pop("estimator_", None)
        a, b = _as_sequence(a), _as_sequence(b)
        for name, items in (("a", a), ("b", b)):
            if _length(items) == 0:
                raise ValueError(f"stream {name} is empty: there is nothing to compare")
        size = max(_length(a), _length(b))
        n_chunks = max(1, math.ceil(size / self.chunk_items))
        # The chunks partial_fit(a=..., b=...) would get from np.array_split of each stream.
        for part_a, part_b in zip(_split(a, n_chunks), _split(b, n_chunks)):
            self.partial_fit(a=part_a, b=part_b)
        return self

    def partial_fit(self, items=None, stream=None, *, a=None, b=None):
        """Train on one more chunk: ``items`` of ``stream``, or ``a`` and ``b`` together.

        Parameters
        ----------
        items : items, default=None
            The chunk of one stream (with ``stream``).
        stream : {"a", "b"}, default=None
            Which stream ``items`` come from.
        a, b : items, default=None
            Chunks of both streams, trained together (their occurrences shuffled).

        Returns
        -------
        self : RelativeDeltoids
        """
        self._validate_params()
        if items is not None:
            if stream not in ("a", "b") or a is not None or b is not None:
                raise ValueError("give items with stream='a' or 'b', or a= and b=")
            a, b = (items, None) if stream == "a" else (None, items)
        keys_a, names_a = item_occurrences(a) if a is not None else (np.zeros(0, np.int64), None)
        keys_b, names_b = item_occurrences(b) if b is not None else (np.zeros(0, np.int64), None)
        if keys_a.size + keys_b.size == 0:
            raise ValueError("the chunk holds no item: nothing to train on")
        self._train(keys_a, keys_b, _merge_names(names_a, names_b))
        return self

    def recount(self, a, b):
        """Count the heap's items exactly over both streams read again: a second pass.

        One pass counts an item exactly from the chunk it entered the heap on;
        an item that entered late, and whose earlier counts the sketches could
        not tell from their noise, is counted over the rows since. When the
        streams can be read again (a file, a list), this pass counts every
        item of the heap over all of them: ``count_a``, ``count_b`` and
        ``log_ratio`` become exact, and ``deltoids_`` is ordered by
        ``log_ratio`` (``exact_counts_``). The heap and its weights do not
        change. On two strains of H. pylori (12-mers of reads in two chunks
        each, 128KB) the items of exact ratio at least 4 among the 20 listed
        each way went from 0.17 (by weight) to 0.57.

        Parameters
        ----------
        a, b : items or iterator of items
            The streams (usually those the model was fitted on), whole (as
            ``fit`` takes them, counted in chunks of ``chunk_items``) or as an
            iterator of chunks (a generator over a file).

        Returns
        -------
        self : RelativeDeltoids

        Examples
        --------
        >>> from sklearn_sketch.deltoids import RelativeDeltoids
        >>> a = ["x", "y"] * 600 + ["late"] * 60
        >>> b = ["x", "y"] * 600 + ["late"] * 2
        >>> deltoids = RelativeDeltoids(memory_budget="16KB", chunk_items=400, random_state=0)
        >>> deltoids.fit(a, b).exact_counts_
        False
        >>> table = deltoids.recount(a, b).deltoids_
        >>> table["item"][0], int(table["count_a"][0]), int(table["count_b"][0])
        ('late', 60, 2)
        """
        if "heap_counts_" not in self.__dict__:
            check_is_fitted(self, "deltoids_")  # NotFittedError
            raise TypeError(f"{type(self).__name__} has no heap to recount")
        keys = heap_keys(self.estimator_)
        counts, counted = HeapCounts(2), np.zeros(0, dtype=np.int64)
        totals = [0, 0]
        for stream, items in enumerate((a, b)):
            if not isinstance(items, Iterator):
                items = _as_sequence(items)
                items = _split(items, max(1, math.ceil(_length(items) / self.chunk_items)))
            for chunk in items:
                occurrences = [np.zeros(0, dtype=np.int64)] * 2
                occurrences[stream] = item_occurrences(chunk)[0]
                counts.update(counted, keys, occurrences,
                              lambda entering: np.zeros((len(entering), 2)))
                counted = keys
                totals[stream] += occurrences[stream].size
        if 0 in totals:
            raise ValueError(f"stream {'ab'[totals.index(0)]} holds no item: nothing to count")
        self.heap_counts_ = counts
        self.n_a_, self.n_b_ = totals
        self.exact_counts_ = True
        self.deltoids_ = None  # built when read
        return self

    def _start(self, names):
        from .weight_median import AWMSketchClassifier

        budget = parse_memory_budget(self.memory_budget)
        width = max(16, largest_sketch_width(int(budget * self.count_share) // 2, 3))
        seed = 0 if self.random_state is None else self.random_state
        self.counts_a_ = CountSketch(width, 3, random_state=seed + 1)
        self.counts_b_ = CountSketch(width, 3, random_state=seed + 1)
        left = budget - 2 * self.counts_a_.memory_bytes
        mean = mean_name_bytes(names) if names else 0.0
        # Each heap entry also has its counts (HeapCounts), paid from the heap's share.
        self.heap_counts_ = HeapCounts(2)
        tracked = self.heap_counts_.entry_bytes
        # Items are single tokens or k-mers, whose names in the heap run about 1.2x
        # the stream's mean (20 Newsgroups words: 5.8 against 4.9 bytes), so the
        # quarter more that is reserved needs no floor of 16 bytes (the default of
        # estimators whose features can be n-grams or crosses).
        capacity = largest_heap(
            self.heap_share * left,
            name_bytes=reserved_name_bytes(mean, _SHORTEST_ITEM_NAME) + tracked)
        if capacity < 1 or left <= 0:
            raise ValueError(f"memory_budget={self.memory_budget!r} is too small for a heap "
                             "and a sketch; give at least a few kilobytes")
        # learning_rate: what bench_streams measured it with (the classifier's default
        # before 'auto').
        self.estimator_ = AWMSketchClassifier(
            memory_budget=left - tracked * capacity, n_features_to_select=capacity,
            learning_rate="normalized", eta0=self.eta0, alpha=self.alpha, shuffle=False,
            random_state=self.random_state)
        self.estimator_._shortest_name = _SHORTEST_ITEM_NAME
        self._rng = np.random.default_rng(seed)
        self.n_a_ = self.n_b_ = 0

    def _train(self, keys_a, keys_b, names):
        if "estimator_" not in self.__dict__:
            self._start(names)
        previous = heap_keys(self.estimator_)
        for examples, labels in one_sparse_batches(
                np.concatenate([keys_a, keys_b]),
                np.concatenate([np.ones(keys_a.size, np.int64), np.zeros(keys_b.size, np.int64)]),
                names, self._rng, TRAINING_BATCH):
            self.estimator_.partial_fit(examples, labels, classes=[0, 1])
        # Items entering the heap start from the sketches' counts before this chunk: the
        # counts stay exact through the first chunk and the chunks no item enters on.
        entered = self.heap_counts_.update(
            previous, heap_keys(self.estimator_), [keys_a, keys_b],
            lambda keys: np.stack([significant_counts(self.counts_a_, keys),
                                   significant_counts(self.counts_b_, keys)], 1))
        self.exact_counts_ = self.n_a_ + self.n_b_ == 0 or (
            self.exact_counts_ and entered == 0)
        self.counts_a_.update(keys_a, np.ones(keys_a.size))
        self.counts_b_.update(keys_b, np.ones(keys_b.size))
        self.n_a_ += int(keys_a.size)
        self.n_b_ += int(keys_b.size)
        self.memory_bytes_ = (self.estimator_.memory_bytes_ + self.counts_a_.memory_bytes
                              + self.counts_b_.memory_bytes + self.heap_counts_.nbytes)
        self.deltoids_ = None  # built when read

    def _deltoids(self):
        selected = self.estimator_.selected_features_
        keys, weights = selected.keys, selected.weights[:, 0]
        names = np.array([str(k) if n is None else n for k, n in zip(
            keys.tolist(), (selected.names if selected.names is not None
                            else [None] * keys.size))], dtype=object)
        count_a, count_b = self.heap_counts_.query(keys, heap_keys(self.estimator_)).T
        log_ratio = _log_ratio(count_a, count_b, self.n_a_, self.n_b_)
        keep = np.flatnonzero(count_a + count_b >= self.min_count)
        order = log_ratio if self.exact_counts_ else weights
        keep = keep[np.argsort(-order[keep], kind="stable")]
        return result_table(DELTOID_COLUMNS, (names[keep], weights[keep], log_ratio[keep],
                                              count_a[keep], count_b[keep]))

    def __repr__(self, N_CHAR_MAX=700):
        text = super().__repr__(N_CHAR_MAX)
        if "_deltoids_" not in self.__dict__:
            return text
        table = self.deltoids_
        n = len(table["item"])
        shown = list(range(min(self.top, n))) + list(range(max(self.top, n - self.top), n))
        lines = [f"{text}: {self.n_a_:,} and {self.n_b_:,} occurrences, "
                 f"{self.memory_bytes_:,} bytes", f"{'log ratio':>9}  {'weight':>8}  item"]
        lines += [f"{table['log_ratio'][i]:9.2f}  {table['weight'][i]:8.3f}  {table['item'][i]}"
                  for i in shown]
        return "\n".join(lines)


class ExactDeltoids(RelativeDeltoids):
    """The exact reference: every item counted in both streams, memory unbounded.

    The interface of :class:`RelativeDeltoids`; ``deltoids_`` holds every item
    seen at least ``min_count`` times, by decreasing exact log ratio
    (``weight`` is that log ratio), and ``memory_bytes_`` the bytes of the
    counts.

    Parameters
    ----------
    min_count : int, default=5
        Items seen fewer times in both streams together are left out.
    chunk_items : int, default=1000000
        Occurrences per stream counted at a time by ``fit``.
    top : int, default=20
        Items of each direction shown by ``repr``.

    Examples
    --------
    >>> from sklearn_sketch.deltoids import ExactDeltoids
    >>> exact = ExactDeltoids(min_count=1).fit(["x", "x", "x", "y"], ["x", "y", "y", "y"])
    >>> exact.deltoids_["item"].tolist(), exact.deltoids_["count_a"].tolist()
    (['x', 'y'], [3.0, 1.0])
    """

    def __init__(self, *, min_count=5, chunk_items=1_000_000, top=20):
        self.min_count = min_count
        self.chunk_items = chunk_items
        self.top = top

    def _start(self, names):
        self.estimator_ = None
        self.keys_ = np.zeros(0, dtype=np.int64)
        self.count_a_ = np.zeros(0, dtype=np.int64)
        self.count_b_ = np.zeros(0, dtype=np.int64)
        self._names = {}
        self.n_a_ = self.n_b_ = 0

    def _train(self, keys_a, keys_b, names):
        if "estimator_" not in self.__dict__:
            self._start(names)
        keys = np.concatenate([self.keys_, keys_a, keys_b])
        in_a = np.concatenate([self.count_a_, np.ones(keys_a.size, np.int64),
                               np.zeros(keys_b.size, np.int64)])
        in_b = np.concatenate([self.count_b_, np.zeros(keys_a.size, np.int64),
                               np.ones(keys_b.size, np.int64)])
        self.keys_, inverse = np.unique(keys, return_inverse=True)
        self.count_a_ = np.bincount(inverse, weights=in_a).astype(np.int64)
        self.count_b_ = np.bincount(inverse, weights=in_b).astype(np.int64)
        if isinstance(names, dict):
            self._names.update(names)
        self.n_a_ += int(keys_a.size)
        self.n_b_ += int(keys_b.size)
        self.memory_bytes_ = self.keys_.nbytes + self.count_a_.nbytes + self.count_b_.nbytes
        self.deltoids_ = None  # built when read

    def _deltoids(self):
        count_a, count_b = self.count_a_.astype(float), self.count_b_.astype(float)
        ratio = _log_ratio(count_a, count_b, self.n_a_, self.n_b_)
        keep = np.flatnonzero(count_a + count_b >= self.min_count)
        keep = keep[np.argsort(-ratio[keep], kind="stable")]
        names = np.array([self._names.get(k, str(k)) for k in self.keys_[keep].tolist()],
                         dtype=object)
        return result_table(DELTOID_COLUMNS,
                            (names, ratio[keep], ratio[keep], count_a[keep], count_b[keep]))


class CountMinDeltoids(RelativeDeltoids):
    """The paired Count-Min baseline (Cormode and Muthukrishnan), in the same bytes.

    The interface of :class:`RelativeDeltoids`; two Count-Min sketches of
    Apache DataSketches (the peer a user would reach for) count the
    occurrences of each stream, and a heap keeps the items met so far whose
    estimated log ratio is largest either way (among those estimated at
    ``min_count`` or more), with their names. The WM-Sketch paper's baseline
    for relative deltoids. DataSketches' Python API takes one item a call, so
    it loops in Python over the occurrences.

    Parameters
    ----------
    memory_budget : int or str, default="128KB"
        Real bytes: the two sketches (8-byte counters), the heap and the names.
    heap_share : float, default=0.5
        Share of the budget for the heap and the names.
    min_count : int, default=5
        Items estimated fewer times in both streams together are not candidates.
    chunk_items : int, default=1000000
        Occurrences per stream counted at a time by ``fit``.
    top : int, default=20
        Items of each direction shown by ``repr``.
    random_state : int, default=None
        Seed of the sketches' hashes.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_sketch.deltoids import CountMinDeltoids
    >>> rng = np.random.default_rng(0)
    >>> common = [f"w{i}" for i in rng.integers(0, 300, 20_000)]
    >>> model = CountMinDeltoids("64KB", random_state=0).fit(
    ...     common[:10_000] + ["spike"] * 200, common[10_000:] + ["spike"] * 10)
    >>> model.deltoids_["item"][0]
    'spike'
    """

    DEPTH = 3

    def __init__(self, memory_budget="128KB", *, heap_share=0.5, min_count=5,
                 chunk_items=1_000_000, top=20, random_state=None):
        self.memory_budget = memory_budget
        self.heap_share = heap_share
        self.min_count = min_count
        self.chunk_items = chunk_items
        self.top = top
        self.random_state = random_state

    def _start(self, names):
        from datasketches import count_min_sketch

        from ._core import TopKHeap

        budget = parse_memory_budget(self.memory_budget)
        mean = mean_name_bytes(names) if names else 0.0
        capacity = largest_heap(self.heap_share * budget, name_bytes=reserved_name_bytes(mean))
        buckets = int((1 - self.heap_share) * budget) // (2 * 8 * self.DEPTH)
        if capacity < 1 or buckets < 1:
            raise ValueError(f"memory_budget={self.memory_budget!r} is too small for a heap "
                             "and two Count-Min sketches; give at least a few kilobytes")
        seed = 9001 if self.random_state is None else self.random_state
        self.sketch_a_ = count_min_sketch(self.DEPTH, buckets, seed)
        self.sketch_b_ = count_min_sketch(self.DEPTH, buckets, seed)
        self.heap_ = TopKHeap(capacity)
        self._names = {}
        self.estimator_ = None
        self.n_a_ = self.n_b_ = 0

    def _train(self, keys_a, keys_b, names):
        if "estimator_" not in self.__dict__:
            self._start(names)
        for key in keys_a.tolist():
            self.sketch_a_.update(key)
        for key in keys_b.tolist():
            self.sketch_b_.update(key)
        self.n_a_ += int(keys_a.size)
        self.n_b_ += int(keys_b.size)
        candidates = unique_keys(np.concatenate([keys_a, keys_b])).tolist()
        count_a, count_b = self._counts(candidates)
        ratio = _log_ratio(count_a, count_b, self.n_a_, self.n_b_)
        for key, value, total in zip(candidates, ratio.tolist(), (count_a + count_b).tolist()):
            if total >= self.min_count:
                self.heap_.push_or_update(key, value)
        held = set(self.heap_.keys().tolist())
        kept = {k: v for k, v in self._names.items() if k in held}
        if isinstance(names, dict):
            kept.update((k, names[k]) for k in held - kept.keys() if k in names)
        elif names is not None:
            kept.update(names.lookup([k for k in held if k not in kept]))
        self._names = kept
        self.memory_bytes_ = (2 * 8 * self.DEPTH * self.sketch_a_.num_buckets
                              + self.heap_.memory_bytes
                              + sum(NAME_OVERHEAD + len(str(n).encode())
                                    for n in self._names.values()))
        self.deltoids_ = None  # built when read

    def _counts(self, keys):
        return (np.array([self.sketch_a_.get_estimate(k) for k in keys], dtype=np.float64),
                np.array([self.sketch_b_.get_estimate(k) for k in keys], dtype=np.float64))

    def _deltoids(self):
        keys = self.heap_.keys()
        count_a, count_b = self._counts(keys.tolist())
        ratio = _log_ratio(count_a, count_b, self.n_a_, self.n_b_)
        order = np.argsort(-ratio, kind="stable")
        names = np.array([self._names.get(k, str(k)) for k in keys[order].tolist()],
                         dtype=object)
        return result_table(DELTOID_COLUMNS,
                            (names, ratio[order], ratio[order], count_a[order], count_b[order]))


def _as_sequence(items):
    """Items as something ``_split`` can cut: a list, an array or a sparse matrix."""
    if isinstance(items, NamedRows) or sp.issparse(items) or isinstance(items, np.ndarray):
        return items
    return list(items)


def _length(items):
    return items.shape[0] if hasattr(items, "shape") else len(items)


def _split(items, n_chunks):
    """``n_chunks`` consecutive parts, as ``np.array_split`` cuts them."""
    sizes = np.full(n_chunks, _length(items) // n_chunks)
    sizes[:_length(items) % n_chunks] += 1
    bounds = np.concatenate([[0], np.cumsum(sizes)])
    return [items[start:stop] for start, stop in zip(bounds[:-1], bounds[1:])]


def _merge_names(first, second):
    """One name source for the keys of two streams' chunks."""
    if first is None or second is None:
        return first if second is None else second
    if isinstance(first, dict) and isinstance(second, dict):
        return {**second, **first}
    return _EitherNames(first, second)


class _EitherNames:
    """The names of the keys of two chunks (``{key: name}`` or ``lookup`` objects): the
    first chunk's name where both name a key."""

    def __init__(self, first, second):
        self.first, self.second = first, second

    def lookup(self, keys):
        found = lookup_names(self.second, keys)
        found.update(lookup_names(self.first, keys))
        return found

    def mean_name_bytes(self):
        return max(mean_name_bytes(self.first), mean_name_bytes(self.second))


