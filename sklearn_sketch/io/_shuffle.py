"""Mixing several streams: a bounded shuffle buffer filled round-robin."""
import numbers

import numpy as np
import scipy.sparse as sp

# Takes that a row may stay in the shuffle buffer through; it leaves at the next.
MAX_STAY = 2
# Fields that are not one value per row: how a mixed chunk sets them.
_MIXED_FIELD_VALUES = {"first_line": 0, "path": None}


def _check_positive(name, value):
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < 1:
        raise ValueError(f"{name} must be a positive integer, got {value!r}")
    return int(value)


def _random_state(seed):
    """``seed`` as a ``RandomState``, read as scikit-learn's ``check_random_state`` reads it.

    NumPy only: the command line reads in a thread while its main thread
    imports scikit-learn, and a second import of it from the reading thread
    raced that one and failed as a circular import.
    """
    if seed is None or seed is np.random:
        return np.random.mtrand._rand
    if isinstance(seed, numbers.Integral):
        return np.random.RandomState(seed)
    if isinstance(seed, np.random.RandomState):
        return seed
    raise ValueError(f"{seed!r} cannot be used to seed a numpy.random.RandomState instance")


class ShuffledReader:
    """Mix the chunks of several readers through a shuffle buffer of bounded size.

    Training on several files one after the other teaches a model the last
    file; this reader interleaves them. It takes a chunk from each reader in
    turn (round-robin) into a buffer; once the buffer holds ``buffer_rows``
    rows it is permuted and whole chunks of ``chunk_rows`` rows are handed out until
    about half of ``buffer_rows`` rows are left to mix with what comes next; a
    row that stayed through ``MAX_STAY`` (2) such takes leaves at the next one,
    so that a chunk's names table, kept while any of its rows is in the
    buffer, goes with it. When every reader is exhausted the remaining rows
    come out permuted. A buffer at least as large as the data is a full
    shuffle; memory stays at about ``buffer_rows`` rows plus one chunk of
    each reader (and the names tables of the chunks that entered in the last
    three takes) whatever the sizes of the files.

    Works on any chunks that are named tuples of per-row fields (sparse
    matrices, arrays or lists) such as :class:`Chunk` and :class:`ReadChunk`;
    every reader must give the same kind. In a mixed chunk ``first_line`` is 0
    and ``path`` None (its rows come from several places). A ``feature_names``
    table, if the chunks carry one, becomes one that looks keys up in the
    tables of every chunk the mixed rows came from.

    Parameters
    ----------
    readers : list of iterable
        Re-iterable readers (such as :class:`SvmlightReader` or
        :class:`FastaReader`, one per file) or any iterables of chunks; a
        one-shot iterator supports only one iteration.
    buffer_rows : int, default=100000
        Rows held for shuffling.
    chunk_rows : int, default=None
        Rows per chunk handed out; default the number of rows of the first
        chunk read.
    random_state : int, RandomState instance or None, default=None
        Seed of the permutations. Iteration ``i`` (epoch ``i``) draws from the
        seed ``(random_state, i)``: each epoch is mixed anew, reproducibly.

    Examples
    --------
    >>> import numpy as np
    >>> import scipy.sparse as sp
    >>> from sklearn_sketch.io import Chunk, ShuffledReader
    >>> def stream(label, n_rows):
    ...     X = sp.csr_matrix(np.full((n_rows, 1), label, dtype=float))
    ...     return [Chunk(X[i:i + 2], np.full(min(2, n_rows - i), label), None, 1 + i)
    ...             for i in range(0, n_rows, 2)]
    >>> mixed = ShuffledReader([stream(0.0, 6), stream(1.0, 6)], buffer_rows=100,
    ...                        chunk_rows=4, random_state=0)
    >>> [chunk.y.tolist() for chunk in mixed]   # a buffer larger than the data: a full shuffle
    [[1.0, 1.0, 0.0, 0.0], [0.0, 0.0, 1.0, 0.0], [1.0, 1.0, 0.0, 1.0]]
    """

    def __init__(self, readers, buffer_rows=100_000, *, chunk_rows=None, random_state=None):
        self.readers = list(readers)
        if not self.readers:
            raise ValueError("ShuffledReader needs at least one reader")
        self.buffer_rows = _check_positive("buffer_rows", buffer_rows)
        self.chunk_rows = None if chunk_rows is None else _check_positive("chunk_rows",
                                                                          chunk_rows)
        self.random_state = random_state
        self._n_iterations = 0

    def _rng(self):
        seed = int(_random_state(self.random_state).randint(2**31 - 1))
        rng = np.random.default_rng([seed, self._n_iterations])
        self._n_iterations += 1
        return rng

    def __iter__(self):
        """Yield mixed chunks until every reader is exhausted.

        Yields
        ------
        chunk : named tuple
            Of the readers' kind, with rows of several readers.
        """
        rng = self._rng()
        buffer = _RowBuffer()
        iterators = [iter(reader) for reader in self.readers]
        chunk_rows = self.chunk_rows
        while iterators:
            for iterator in list(iterators):
                try:
                    chunk = next(iterator)
                except StopIteration:
                    iterators.remove(iterator)
                    continue
                buffer.add(chunk)
                chunk_rows = chunk_rows or max(1, buffer.n_rows)
            if buffer.n_rows >= self.buffer_rows:
                # Whole chunks out, at least half the buffer kept (unless a chunk is larger).
                excess = buffer.n_rows - self.buffer_rows // 2
                n_take = min(buffer.n_rows, max(chunk_rows, excess - excess % chunk_rows))
                yield from buffer.take_shuffled(rng, n_take, chunk_rows)
        yield from buffer.take_shuffled(rng, buffer.n_rows, chunk_rows or 1)


class _RowBuffer:
    """Rows of chunks, kept field by field, with the source chunk of each row."""

    def __init__(self):
        self.kind = None
        self.pending = []
        self.fields = None
        self.source = np.zeros(0, dtype=np.int64)
        self.tables = {}
        self.n_chunks = 0
        # The take at which each chunk entered the buffer, and the takes so far.
        self.entered = np.zeros(0, dtype=np.int64)
        self.n_takes = 0

    @property
    def n_rows(self):
        return self.source.size + sum(_n_rows(chunk) for chunk in self.pending)

    def add(self, chunk):
        if self.kind is None:
            self.kind = type(chunk)
        elif type(chunk) is not self.kind:
            raise TypeError(f"readers give different kinds of chunks: {self.kind.__name__} "
                            f"and {type(chunk).__name__}")
        self.pending.append(chunk)

    def _merge_pending(self):
        chunks = self.pending
        if not chunks:
            return
        self.pending = []
        sources = [self.source]
        for chunk in chunks:
            sources.append(np.full(_n_rows(chunk), self.n_chunks, dtype=np.int64))
            table = getattr(chunk, "feature_names", None)
            if table is not None:
                self.tables[self.n_chunks] = table
            self.n_chunks += 1
        self.source = np.concatenate(sources)
        self.entered = np.concatenate([self.entered, np.full(len(chunks), self.n_takes)])
        fields = {}
        for name in self.kind._fields:
            if name == "feature_names" or name in _MIXED_FIELD_VALUES:
                continue
            values = [getattr(chunk, name) for chunk in chunks]
            if self.fields is not None:
                values.insert(0, self.fields[name])
            fields[name] = _concatenate(name, values)
        self.fields = fields

    def take_shuffled(self, rng, n_take, chunk_rows):
        """Permute the buffer, yield ``n_take`` of its rows as chunks, keep the rest."""
        self._merge_pending()
        if self.fields is None or n_take <= 0:
            return
        order = rng.permutation(self.source.size)
        # Rows that stayed through MAX_STAY takes leave now, the rest at random: drawn
        # at random only, a few rows of every chunk stayed take after take, and with
        # them the chunk's names (the text of all its lines): mixing four VW files of
        # DNA reads kept the names of twenty chunks and more, 1 GB.
        due = self.n_takes - self.entered[self.source[order]] >= MAX_STAY
        if due.any():
            order = np.concatenate([order[due], order[~due]])
            n_take = max(n_take, int(due.sum()))
            order[:n_take] = rng.permutation(order[:n_take])
        taken, kept = order[:n_take], order[n_take:]
        self.n_takes += 1
        # Each chunk gathered from the buffer at once (no copy of all taken rows first).
        fields, source = self.fields, self.source
        self.fields = {name: _take(values, kept) for name, values in fields.items()}
        self.source = source[kept]
        for start in range(0, n_take, chunk_rows):
            rows = taken[start:start + chunk_rows]
            yield self._chunk({name: _take(values, rows) for name, values in fields.items()},
                              source[rows])
        del fields
        live = set(np.unique(self.source).tolist())
        self.tables = {i: table for i, table in self.tables.items() if i in live}
        if self.source.size == 0:
            self.fields = None

    def _chunk(self, fields, source):
        values = dict(fields)
        for name in self.kind._fields:
            if name in _MIXED_FIELD_VALUES:
                values[name] = _MIXED_FIELD_VALUES[name]
            elif name == "feature_names":
                tables = [self.tables[i] for i in np.unique(source).tolist() if i in self.tables]
                values[name] = _MergedNames(tables) if tables else None
            elif isinstance(values[name], np.ndarray) and values[name].dtype == object:
                values[name] = values[name].tolist()
        return self.kind(**values)


class _MergedNames:
    """Names looked up in several per-chunk tables (the first that knows a key wins)."""

    def __init__(self, tables):
        self.tables = tables

    def lookup(self, keys):
        """``{key: name}`` for the keys some table knows."""
        found = {}
        for table in reversed(self.tables):
            found.update(table.lookup(keys))
        return found

    def mean_name_bytes(self):
        """Mean length in bytes of the names, over the tables that hold any."""
        means = [mean for mean in (table.mean_name_bytes() for table in self.tables) if mean]
        return float(np.mean(means)) if means else 0.0


def _n_rows(chunk):
    for value in chunk:
        if sp.issparse(value):
            return value.shape[0]
        if isinstance(value, (np.ndarray, list)):
            return len(value)
    raise TypeError(f"{type(chunk).__name__} has no per-row field")


def _concatenate(name, values):
    present = [v is not None for v in values]
    if not any(present):
        return None
    if not all(present):
        raise ValueError(f"some chunks have {name} and others not; they cannot be mixed")
    if sp.issparse(values[0]):
        widths = {v.shape[1] for v in values}
        if len(widths) > 1:
            raise ValueError(f"chunks have different numbers of columns {sorted(widths)}; "
                             "they cannot be mixed")
        return sp.vstack(values, format="csr")
    if isinstance(values[0], list) or (isinstance(values[0], np.ndarray)
                                       and values[0].dtype == object):
        arrays = []
        for v in values:
            if isinstance(v, list):
                array = np.empty(len(v), dtype=object)
                array[:] = v
                v = array
            arrays.append(v)
        return np.concatenate(arrays)
    return np.concatenate(values)


def _take(values, rows):
    if values is None:
        return None
    return values[rows]
