"""Occurrence counts of the items in a heap, exact from the chunk each item entered on."""
import numpy as np

#: Bytes an item costs: its int64 key and a float32 count per stream.
KEY_BYTES, COUNT_BYTES = 8, 4
#: Bits of the filter that drops a chunk's occurrences of items outside the heap.
FILTER_SIZE = 1 << 16


class HeapCounts:
    """Counts of the items a heap holds, for the estimators that learn from item streams.

    A sketch of all items counts a rare item badly: its collisions outweigh it.
    The items of a heap are few, so they are counted apart: when an item
    enters, its count so far is read from the sketch (an estimate, floored at
    0); from the chunk it entered on, each of its occurrences is counted
    exactly (in NumPy, over the chunk's keys); when it leaves the heap its
    count is dropped. An item that stays in the heap from its first chunk on
    is counted exactly, so a short stream (one chunk) is counted exactly.

    Parameters
    ----------
    n_streams : int
        Streams counted apart (2 for relative deltoids).

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_sketch._heap_counts import HeapCounts
    >>> counts = HeapCounts(1)
    >>> counts.update([5, 7], [np.array([5, 5, 7, 9])], lambda keys: np.zeros((len(keys), 1)))
    >>> counts.query([7, 5]).ravel().tolist()
    [1.0, 2.0]
    """

    def __init__(self, n_streams):
        self.keys = np.zeros(0, dtype=np.int64)
        self.counts = np.zeros((0, n_streams), dtype=np.float32)

    @staticmethod
    def entry_bytes(n_streams):
        """Bytes an item of the heap costs here."""
        return KEY_BYTES + COUNT_BYTES * n_streams

    @property
    def nbytes(self):
        return self.keys.nbytes + self.counts.nbytes

    def update(self, heap_keys, chunk_keys, estimate):
        """Follow the heap after a chunk, and count the chunk's occurrences of its items.

        Parameters
        ----------
        heap_keys : array-like of int64
            The keys in the heap after the chunk was trained.
        chunk_keys : list of ndarray of int64
            The chunk's item occurrences, one array per stream.
        estimate : callable
            ``estimate(keys)`` gives the counts of items entering the heap,
            before this chunk (shape ``(len(keys), n_streams)``).
        """
        heap = np.unique(np.asarray(heap_keys, dtype=np.int64))
        counts = np.zeros((heap.size, self.counts.shape[1]), dtype=np.float64)
        if heap.size:
            row = np.minimum(np.searchsorted(self.keys, heap), max(self.keys.size - 1, 0))
            known = (self.keys[row] == heap) if self.keys.size else np.zeros(heap.size, bool)
            counts[known] = self.counts[row[known]]
            if not known.all():
                counts[~known] = np.maximum(estimate(heap[~known]), 0.0)
            # A bitmap of the heap keys' low bits drops most occurrences before the
            # binary search (keys are hashes, so their low bits are uniform).
            bitmap = np.zeros(FILTER_SIZE, dtype=bool)
            bitmap[heap & (FILTER_SIZE - 1)] = True
            for stream, keys in enumerate(chunk_keys):
                keys = np.asarray(keys, dtype=np.int64)
                keys = keys[bitmap[keys & (FILTER_SIZE - 1)]]
                row = np.minimum(np.searchsorted(heap, keys), heap.size - 1)
                hit = heap[row] == keys
                counts[:, stream] += np.bincount(row[hit], minlength=heap.size)
        self.keys, self.counts = heap, counts.astype(np.float32)

    def query(self, keys):
        """Counts of ``keys`` (all in the heap), shape ``(len(keys), n_streams)``."""
        keys = np.asarray(keys, dtype=np.int64)
        row = np.searchsorted(self.keys, keys)
        if keys.size and (row.max() >= self.keys.size or (self.keys[row] != keys).any()):
            raise KeyError("some keys are not in the heap")
        return self.counts[row].astype(np.float64)
