"""Mixing several streams: a bounded shuffle buffer filled round-robin."""
import numbers

import numpy as np
import scipy.sparse as sp

from .._sorted_keys import unique_keys

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
    shuffle. Rows are not copied into the buffer: it holds the chunks as
    read, each until its last row has left, so memory stays at the chunks
    that entered in the last three takes (about 1.5 ``buffer_rows`` rows,
    with their names tables) whatever the sizes of the files.

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
    sizes : list of float, default=None
        About how many rows each reader holds (in any unit: its file's bytes,
        say). Given, the next chunk is taken from the reader furthest behind its
        share, so that readers of different sizes are mixed to their ends and end
        together; by turns, a small file ran out early and the last stretch of a
        pass held only the largest (reads of 12 genomes of four species, 1.6 to
        4.6 Mbp, at 2x coverage: held-out strains scored 0.919 / 0.842 / 0.894 by
        feature hashing, the AWM-Sketch and MISSION mixed by turns, 0.982 / 0.957
        / 0.904 in proportion). None takes a chunk of each in turn.

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

    def __init__(self, readers, buffer_rows=100_000, *, chunk_rows=None, random_state=None,
                 sizes=None):
        self.readers = list(readers)
        if not self.readers:
            raise ValueError("ShuffledReader needs at least one reader")
        if sizes is not None:
            sizes = np.asarray(sizes, dtype=np.float64)
            if sizes.shape != (len(self.readers),) or not np.all(sizes > 0) or not np.all(
                    np.isfinite(sizes)):
                raise ValueError("sizes must be one positive finite number per reader, got "
                                 f"{sizes.tolist()!r}")
        self.sizes = sizes
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
        for chunks in self._rounds(iterators):
            for chunk in chunks:
                buffer.add(chunk)
                chunk_rows = chunk_rows or max(1, buffer.n_rows)
            if buffer.n_rows >= self.buffer_rows:
                # Whole chunks out, at least half the buffer kept (unless a chunk is larger).
                excess = buffer.n_rows - self.buffer_rows // 2
                n_take = min(buffer.n_rows, max(chunk_rows, excess - excess % chunk_rows))
                yield from buffer.take_shuffled(rng, n_take, chunk_rows)
        yield from buffer.take_shuffled(rng, buffer.n_rows, chunk_rows or 1)

    def _rounds(self, iterators):
        """The chunks read between two looks at the buffer: one of each reader in
        turn, or with ``sizes`` one of the reader whose rows taken are the smallest
        share of its size."""
        active = list(range(len(iterators)))
        taken = np.zeros(len(iterators))
        while active:
            if self.sizes is None:
                order = list(active)
            else:
                order = [min(active, key=lambda i: (taken[i] / self.sizes[i], i))]
            chunks = []
            for i in order:
                try:
                    chunk = next(iterators[i])
                except StopIteration:
                    active.remove(i)
                    continue
                taken[i] += _n_rows(chunk)
                chunks.append(chunk)
            yield chunks


class _RowBuffer:
    """The rows held: each chunk's fields as read, and which chunk and row each row is.

    Rows are not copied into the buffer: a mixed chunk gathers its rows from
    the chunks they came from (scikit-learn's row indexing, in C), once, and a
    chunk is let go when its last row has left. Merging the chunks into one
    matrix copied every row on its way in, and the rows kept again at every
    take: four VW files of DNA reads mixed in 4.8 s and 2.1 GB of memory where
    reading them took 1.5 s.
    """

    def __init__(self):
        self.kind = None
        self.pending = []
        self.chunks = {}
        # Per field, None when the chunks do not have it, else the sparse width (or -1).
        self.shapes = None
        self.source = np.zeros(0, dtype=np.int64)
        self.local = np.zeros(0, dtype=np.int64)
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

    def values(self, name):
        """The field ``name`` of the rows held, in buffer order (for inspection)."""
        self._merge_pending()
        return self._gather(name, self.source, self.local)

    def _merge_pending(self):
        chunks = self.pending
        if not chunks:
            return
        self.pending = []
        sources, locals_ = [self.source], [self.local]
        for chunk in chunks:
            n_rows = _n_rows(chunk)
            sources.append(np.full(n_rows, self.n_chunks, dtype=np.int64))
            locals_.append(np.arange(n_rows, dtype=np.int64))
            table = getattr(chunk, "feature_names", None)
            if table is not None:
                self.tables[self.n_chunks] = table
            self.chunks[self.n_chunks] = self._fields(chunk)
            self.n_chunks += 1
        self.source = np.concatenate(sources)
        self.local = np.concatenate(locals_)
        self.entered = np.concatenate([self.entered, np.full(len(chunks), self.n_takes)])

    def _fields(self, chunk):
        """The chunk's per-row fields (lists as object arrays), checked against the
        first chunk's: the same fields present, sparse ones of one width."""
        fields, shapes = {}, {}
        for name in self.kind._fields:
            if name == "feature_names" or name in _MIXED_FIELD_VALUES:
                continue
            value = getattr(chunk, name)
            if value is None:
                shape = None
            elif sp.issparse(value):
                value, shape = value.tocsr(), value.shape[1]
            else:
                if isinstance(value, list):
                    array = np.empty(len(value), dtype=object)
                    array[:] = value
                    value = array
                shape = -1
            fields[name], shapes[name] = value, shape
        if self.shapes is None:
            self.shapes = shapes
        for name, shape in shapes.items():
            first = self.shapes[name]
            if (first is None) != (shape is None):
                raise ValueError(f"some chunks have {name} and others not; they cannot be mixed")
            if first != shape:
                raise ValueError(f"chunks have different numbers of columns "
                                 f"{sorted({first, shape})}; they cannot be mixed")
        return fields

    def take_shuffled(self, rng, n_take, chunk_rows):
        """Permute the buffer, yield ``n_take`` of its rows as chunks, keep the rest."""
        self._merge_pending()
        if self.source.size == 0 or n_take <= 0:
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
        source, local = self.source, self.local
        self.source, self.local = source[kept], local[kept]
        for start in range(0, n_take, chunk_rows):
            rows = taken[start:start + chunk_rows]
            yield self._chunk(source[rows], local[rows])
        live = set(np.unique(self.source).tolist())
        self.chunks = {i: fields for i, fields in self.chunks.items() if i in live}
        self.tables = {i: table for i, table in self.tables.items() if i in live}

    def _gather(self, name, source, local):
        """Field ``name`` of the rows ``local`` of the chunks ``source``, in that order
        (None when the chunks do not have it, or no row is asked for)."""
        if self.shapes is None or self.shapes[name] is None or not source.size:
            return None
        # Each chunk's rows at once, in the order they are asked for, then put in place.
        order = np.argsort(source, kind="stable")
        ids, starts = np.unique(source[order], return_index=True)
        bounds = np.append(starts, source.size)
        pieces = [self.chunks[i][name][local[order[a:b]]]
                  for i, a, b in zip(ids.tolist(), bounds[:-1], bounds[1:])]
        if len(pieces) == 1:  # one chunk: the stable order is the asked one
            return pieces[0]
        stacked = (sp.vstack(pieces, format="csr") if self.shapes[name] >= 0
                   else np.concatenate(pieces))
        place = np.empty_like(order)
        place[order] = np.arange(order.size)
        return stacked[place]

    def _chunk(self, source, local):
        values = {}
        for name in self.kind._fields:
            if name in _MIXED_FIELD_VALUES:
                values[name] = _MIXED_FIELD_VALUES[name]
            elif name == "feature_names":
                tables = [self.tables[i] for i in np.unique(source).tolist() if i in self.tables]
                values[name] = _MergedNames(tables) if tables else None
            else:
                value = self._gather(name, source, local)
                if isinstance(value, np.ndarray) and value.dtype == object:
                    value = value.tolist()
                values[name] = value
        return self.kind(**values)


class _MergedNames:
    """Names looked up in several per-chunk tables (the first that knows a key wins)."""

    def __init__(self, tables):
        self.tables = tables

    def lookup(self, keys):
        """``{key: name}`` for the keys some table knows.

        Each table is asked only for the keys the tables before it did not
        know (a table's lookup reads all its keys: asking every table for
        every key took 0.6 s of mixing four VW files of DNA reads).
        """
        found = {}
        wanted = unique_keys(np.asarray(keys, dtype=np.int64))
        for table in self.tables:
            if not wanted.size:
                break
            names = table.lookup(wanted)
            if names:
                found.update(names)
                wanted = wanted[~np.isin(wanted, np.fromiter(names, np.int64, len(names)))]
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
