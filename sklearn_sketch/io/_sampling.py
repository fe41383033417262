"""Reads of a fixed length sampled from long sequences such as genomes.

:func:`sample_reads` cuts reads from sequences in memory; :class:`ReadSampler`
wraps a FASTA or FASTQ reader and yields chunks of reads cut from its records.
Counts, start positions and strands are drawn as NumPy arrays and the reads of
a batch are cut by one fancy index into a sliding-window view of the records
joined back to back, so no Python code runs per read.
"""
import math
import numbers
import re
from itertools import compress
from typing import NamedTuple

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

from ._readers import ReadChunk

_DEFAULT_CHUNK_READS = 10000
# A header's first word is the record's identifier: drop from the first blank on.
_AFTER_IDENTIFIER = re.compile(r"[^\S\n][^\n]*")


def _complement_table():
    """Byte translation table: A<->T, C<->G, U->A in either case, other bytes kept."""
    table = np.arange(256, dtype=np.uint8)
    for base, complement in zip(b"ACGTUacgtu", b"TGCAAtgcaa"):
        table[base] = complement
    return table


_COMPLEMENT = _complement_table()


# ------------------------------------------------------------------ checks
def _check_positive_int(name, value):
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < 1:
        raise ValueError(f"{name} must be a positive integer, got {value!r}")
    return int(value)


def _check_amount(n_reads, coverage):
    """Validate that exactly one of ``n_reads`` and ``coverage`` is given."""
    if (n_reads is None) == (coverage is None):
        raise ValueError("give exactly one of n_reads and coverage, got "
                         f"n_reads={n_reads!r} and coverage={coverage!r}")
    if n_reads is not None:
        return _check_positive_int("n_reads", n_reads), None
    if (isinstance(coverage, bool) or not isinstance(coverage, numbers.Real)
            or not 0 < coverage < math.inf):
        raise ValueError(f"coverage must be a positive finite number, got {coverage!r}")
    return None, float(coverage)


def _base_seed(random_state):
    """A non-negative integer seed from ``random_state``; None draws fresh entropy."""
    if random_state is None:
        return np.random.SeedSequence().entropy
    if isinstance(random_state, numbers.Integral) and not isinstance(random_state, bool):
        if random_state < 0:
            raise ValueError(f"random_state must be non-negative, got {random_state}")
        return int(random_state)
    if isinstance(random_state, np.random.Generator):
        return int(random_state.integers(2**63 - 1))
    if isinstance(random_state, np.random.RandomState):
        return int(random_state.randint(2**63 - 1, dtype=np.int64))
    raise ValueError("random_state must be None, a non-negative int, a numpy Generator "
                     f"or RandomState, got {random_state!r}")


def _as_bytes(sequence, index):
    if isinstance(sequence, bytes):
        return sequence
    if isinstance(sequence, str):
        return sequence.encode("ascii", "replace")
    if isinstance(sequence, (bytearray, memoryview)):
        return bytes(sequence)
    raise TypeError(f"each sequence must be bytes or str; sequence {index} is "
                    f"{type(sequence).__name__}")


# ------------------------------------------------------------------ drawing
def _lengths(sequences):
    return np.fromiter(map(len, sequences), dtype=np.int64, count=len(sequences))


def _n_starts(lengths, read_length):
    """Start positions of each sequence; 0 for one kept whole (not longer than a read)."""
    return np.where(lengths > read_length, lengths - read_length + 1, 0)


def _coverage_counts(lengths, read_length, coverage):
    return np.rint(coverage * lengths / read_length).astype(np.int64)


def _split_reads(n_reads, n_starts, n_starts_left, rng):
    """Reads per sequence among ``n_reads`` drawn uniformly over ``n_starts_left`` starts.

    The sequences hold ``n_starts`` of these starts, later sequences the rest:
    a binomial draw of the reads falling here, then a multinomial draw over
    the sequences, which over all batches is one multinomial draw.
    """
    here = int(n_starts.sum())
    if here > n_starts_left:
        raise RuntimeError("the records changed between the counting pass and the "
                           "sampling pass")
    if here == 0:
        return np.zeros(n_starts.size, dtype=np.int64)
    n_here = n_reads if here == n_starts_left else rng.binomial(n_reads, here / n_starts_left)
    return rng.multinomial(n_here, n_starts / here)


class _Plan(NamedTuple):
    """One entry per read, grouped by sequence in input order."""

    source: np.ndarray   # index of the read's sequence
    start: np.ndarray    # start of the window, -1 for a sequence kept whole
    reverse: np.ndarray  # reverse-complemented


def _plan(lengths, counts, read_length, both_strands, rng):
    """Draw the starts and strands of ``counts[i]`` reads of each long sequence ``i``."""
    long = lengths > read_length
    source = np.repeat(np.arange(lengths.size), np.where(long, counts, 1))
    windowed = long[source]
    start = np.full(source.size, -1, dtype=np.int64)
    start[windowed] = rng.integers(0, lengths[source[windowed]] - read_length + 1)
    reverse = np.zeros(source.size, dtype=bool)
    if both_strands:
        reverse[windowed] = rng.random(int(windowed.sum())) < 0.5
    return _Plan(source, start, reverse)


# ------------------------------------------------------------------ cutting
class _Joined:
    """The long sequences back to back, as uint8, with each sequence's offset."""

    def __init__(self, sequences, lengths, read_length):
        long = lengths > read_length
        self.buffer = np.frombuffer(b"".join(compress(sequences, long)), dtype=np.uint8)
        self.offsets = np.cumsum(np.where(long, lengths, 0)) - np.where(long, lengths, 0)

    def cut(self, source, start, reverse, read_length, complement):
        """The windows as a C-contiguous ``(n, read_length)`` uint8 matrix."""
        windows = sliding_window_view(self.buffer, read_length)[self.offsets[source] + start]
        if reverse.any():
            flipped = windows[reverse, ::-1]
            windows[reverse] = flipped if complement is None else complement[flipped]
        return windows


def _rows_to_bytes(rows):
    """One bytes object per row of a uint8 matrix, without a Python loop per row."""
    if rows.shape[0] == 0:
        return []
    if not rows[:, -1].all():
        # The fixed-width 'S' view drops trailing NUL bytes; never the case in DNA.
        return [row.tobytes() for row in rows]
    return rows.view(f"S{rows.shape[1]}").ravel().tolist()


def _objects(items):
    array = np.empty(len(items), dtype=object)
    array[:] = items
    return array


def _merge(windowed, window_items, whole_items):
    """Items of the windowed reads and of the sequences kept whole, in plan order."""
    if windowed.all():
        return window_items
    merged = np.empty(windowed.size, dtype=object)
    merged[windowed] = _objects(window_items)
    merged[~windowed] = whole_items
    return merged.tolist()


def _cut_reads(joined, sequences, plan, read_length, complement):
    """The reads of ``plan`` (a slice of a plan): windows, or the sequence kept whole."""
    windowed = plan.start >= 0
    rows = (joined.cut(plan.source[windowed], plan.start[windowed], plan.reverse[windowed],
                       read_length, complement)
            if windowed.any() else np.empty((0, read_length), np.uint8))
    return _merge(windowed, _rows_to_bytes(rows), sequences[plan.source[~windowed]])


# ------------------------------------------------------------------ public
def sample_reads(sequences, read_length, *, n_reads=None, coverage=None, both_strands=True,
                 random_state=None):
    """Sample reads of a fixed length from sequences such as chromosomes.

    Start positions are uniform over each sequence's ``len - read_length + 1``
    possible starts. A sequence not longer than ``read_length`` is returned
    whole, once, unchanged (never reverse-complemented), and is not counted
    in ``n_reads``.

    Parameters
    ----------
    sequences : list of bytes or str
        The sequences; ``str`` is encoded to ASCII (a non-ASCII character
        becomes ``?``, keeping positions).
    read_length : int
        Length of each read, at least 1.
    n_reads : int, default=None
        Total number of reads cut from the sequences longer than
        ``read_length``, spread over them by a multinomial draw in proportion
        to their numbers of starts. When no sequence is longer, only the
        sequences kept whole are returned. Give this or ``coverage``.
    coverage : float, default=None
        Mean coverage: a sequence longer than ``read_length`` gives
        ``round(coverage * len / read_length)`` reads (half to even), so
        possibly none. Give this or ``n_reads``.
    both_strands : bool, default=True
        Reverse-complement each read with probability 1/2: ``A<->T`` and
        ``C<->G`` (``U`` becomes ``A``), case kept; other characters such as
        ``N`` are kept. If False every read is a forward substring.
    random_state : int, numpy Generator or RandomState, default=None
        Seed of the draws: the same seed gives the same reads. An instance
        gives one seed drawn from it; None gives fresh reads at every call.

    Returns
    -------
    reads : list of bytes
        The reads, grouped by sequence in input order (within a sequence, in
        random order): ``n_reads`` (or the coverage counts) cut reads plus one
        per sequence kept whole.

    Raises
    ------
    ValueError
        If an argument is out of range, or neither or both of ``n_reads`` and
        ``coverage`` are given.
    TypeError
        If a sequence is neither bytes nor str.

    See Also
    --------
    ReadSampler : The same sampling over the records of FASTA or FASTQ files.

    Examples
    --------
    >>> from sklearn_sketch.io import sample_reads
    >>> genome = b"ACGTTGCAAGGCTTAA"
    >>> reads = sample_reads([genome, b"GGA"], 5, n_reads=6, random_state=0)
    >>> len(reads), reads[-1]
    (7, b'GGA')
    >>> reverse_complement = genome.translate(bytes.maketrans(b"ACGT", b"TGCA"))[::-1]
    >>> all(read in genome or read in reverse_complement for read in reads[:6])
    True
    >>> forward = sample_reads([genome], 4, coverage=2.0, both_strands=False, random_state=1)
    >>> len(forward), all(read in genome for read in forward)
    (8, True)
    """
    if isinstance(sequences, (str, bytes)):
        raise ValueError("sequences must be a list of sequences, got a single "
                         f"{type(sequences).__name__}")
    read_length = _check_positive_int("read_length", read_length)
    n_reads, coverage = _check_amount(n_reads, coverage)
    rng = np.random.default_rng(_base_seed(random_state))
    sequences = [_as_bytes(sequence, i) for i, sequence in enumerate(sequences)]
    lengths = _lengths(sequences)
    if n_reads is not None:
        n_starts = _n_starts(lengths, read_length)
        counts = _split_reads(n_reads, n_starts, int(n_starts.sum()), rng)
    else:
        counts = _coverage_counts(lengths, read_length, coverage)
    plan = _plan(lengths, counts, read_length, bool(both_strands), rng)
    joined = _Joined(sequences, lengths, read_length)
    return _cut_reads(joined, _objects(sequences), plan, read_length, _COMPLEMENT)


def _new_file(previous, chunk):
    """Whether ``chunk`` starts a file: another path, or the line count starting over."""
    return (previous is None or chunk.path != previous.path
            or chunk.first_line <= previous.first_line)


def read_identifiers(names):
    """The first word of each header, by one regular expression over all of them.

    >>> read_identifiers(["NC_000913.3 Escherichia coli K-12", "r7"]).tolist()
    ['NC_000913.3', 'r7']
    """
    return np.array(_AFTER_IDENTIFIER.sub("", "\n".join(names)).split("\n"))


class ReadSampler:
    """Sample reads of a fixed length from the records of a FASTA or FASTQ reader.

    Each record longer than ``read_length`` (a chromosome, a plasmid, a long
    read) gives reads cut at uniform start positions, as
    :func:`sample_reads` does; a record not longer than ``read_length`` is
    passed through whole and unchanged, with its own name, and is not counted
    in ``n_reads``. The reads of a record keep its label.

    Iterating the sampler twice gives the same reads: each file has its own
    random stream, seeded by ``random_state`` and the file's position in the
    reader, so every epoch sees the same fixed data set (build another sampler
    with another seed to resample). Memory: one chunk of the reader and one
    chunk of reads at a time; ``FastaReader(paths, chunk_reads=1)`` holds one
    record (chromosome) at a time.

    Parameters
    ----------
    reader : FastaReader or FastqReader
        The records, or any re-iterable of :class:`ReadChunk` that never mixes
        two files in a chunk (a file starts where ``path`` changes or
        ``first_line`` does not increase); labels come from its chunks, so
        both a dict of paths and a ``label`` function work.
    read_length : int
        Length of each sampled read, at least 1.
    n_reads : int, default=None
        Reads cut per file, spread over its records longer than
        ``read_length`` by a multinomial draw in proportion to their numbers
        of starts. Cost: each iteration first runs the reader once more to
        count each file's starts (decompressing and parsing every file twice,
        holding one chunk at a time). Give this or ``coverage``.
    coverage : float, default=None
        Mean coverage: a record longer than ``read_length`` gives
        ``round(coverage * len / read_length)`` reads (half to even); needs no
        counting pass. Give this or ``n_reads``.
    both_strands : bool, default=True
        Reverse-complement each sampled read with probability 1/2 (``A<->T``,
        ``C<->G``, ``U`` to ``A``, case kept, other characters such as ``N``
        kept).
    random_state : int, numpy Generator or RandomState, default=None
        Seed of the draws. An instance gives one seed drawn from it at
        construction; None draws a fresh seed at construction, so the sampler
        still gives the same reads at every iteration.
    chunk_reads : int, default=None
        Reads per chunk, default 10000 (the last chunk cut from each reader
        chunk may have fewer: a chunk never mixes reads of two reader chunks).

    Attributes
    ----------
    seed_ : int
        The seed actually used (drawn when ``random_state`` is None or an
        instance).

    See Also
    --------
    sample_reads : Sample reads from sequences in memory.
    FastaReader : FASTA files.

    Notes
    -----
    A sampled read's name is ``"{id}:{start}{strand}"``: ``id`` is the first
    word of the record's header, the read is ``record[start:start +
    read_length]`` (0-based) and ``strand`` is ``+``, or ``-`` when the read
    is its reverse complement. FASTQ qualities are cut at the same positions
    (reversed for ``-`` reads); FASTA chunks have ``qualities=None``. A
    chunk's ``first_line`` is that of the reader chunk its reads come from.
    Reads are grouped by record in file order (within a record, in random
    order): shuffle them before training.

    Examples
    --------
    >>> import os, tempfile
    >>> from sklearn_sketch.io import FastaReader, ReadSampler
    >>> folder = tempfile.mkdtemp()
    >>> paths = {os.path.join(folder, "a.fa"): "A", os.path.join(folder, "b.fa"): "B"}
    >>> for path, text in zip(paths, [">chr1 x\\nACGTTGCAAGGC\\n>p1\\nTTA\\n",
    ...                               ">chr2\\nGGGCCCAAATTT\\nGGGCCC\\n"]):
    ...     with open(path, "w") as f:
    ...         _ = f.write(text)
    >>> sampler = ReadSampler(FastaReader(paths), 5, n_reads=3, random_state=0)
    >>> for chunk in sampler:
    ...     print(len(chunk.sequences), sorted(set(map(len, chunk.sequences))),
    ...           chunk.labels.tolist())
    4 [3, 5] ['A', 'A', 'A', 'A']
    3 [5] ['B', 'B', 'B']
    >>> chunk = next(iter(sampler))
    >>> chunk.names[-1], chunk.sequences[-1]
    ('p1', b'TTA')
    >>> name = chunk.names[0]
    >>> start, strand = int(name[5:-1]), name[-1]
    >>> read = b"ACGTTGCAAGGC"[start:start + 5]
    >>> name[:5], chunk.sequences[0] == (read if strand == "+" else
    ...                                  read.translate(bytes.maketrans(b"ACGT", b"TGCA"))[::-1])
    ('chr1:', True)
    >>> [c.sequences for c in sampler] == [c.sequences for c in sampler]
    True
    """

    def __init__(self, reader, read_length, *, n_reads=None, coverage=None,
                 both_strands=True, random_state=None, chunk_reads=None):
        self.reader = reader
        self.read_length = _check_positive_int("read_length", read_length)
        self.n_reads, self.coverage = _check_amount(n_reads, coverage)
        self.both_strands = bool(both_strands)
        self.random_state = random_state
        self.chunk_reads = (_DEFAULT_CHUNK_READS if chunk_reads is None
                            else _check_positive_int("chunk_reads", chunk_reads))
        self.seed_ = _base_seed(random_state)

    def __iter__(self):
        """Yield chunks of reads, file after file, the same at every iteration.

        Yields
        ------
        chunk : ReadChunk
            ``ReadChunk(names, sequences, qualities, labels, path, first_line)``
            of at most ``chunk_reads`` reads of one file.
        """
        starts_per_file = self._count_starts() if self.n_reads is not None else None
        previous = None
        file_index = -1
        for chunk in self.reader:
            if _new_file(previous, chunk):
                self._check_file_done(starts_per_file, file_index)
                file_index += 1
                if starts_per_file is not None and file_index >= len(starts_per_file):
                    raise RuntimeError("the reader gave more files than in its counting pass")
                rng = np.random.default_rng([self.seed_, file_index])
            previous = chunk
            yield from self._sample_chunk(chunk, starts_per_file, file_index, rng)
        self._check_file_done(starts_per_file, file_index)

    def _count_starts(self):
        """Per file: ``[starts left, reads left]``, by a pass over the reader."""
        totals = []
        previous = None
        for chunk in self.reader:
            if _new_file(previous, chunk):
                totals.append([0, self.n_reads])
            previous = chunk
            totals[-1][0] += int(_n_starts(_lengths(chunk.sequences), self.read_length).sum())
        return totals

    @staticmethod
    def _check_file_done(starts_per_file, file_index):
        if starts_per_file is not None and file_index >= 0 and starts_per_file[file_index][0]:
            raise RuntimeError("the records changed between the counting pass and the "
                               "sampling pass")

    def _sample_chunk(self, chunk, starts_per_file, file_index, rng):
        """The reads of one reader chunk, in chunks of ``chunk_reads``."""
        lengths = _lengths(chunk.sequences)
        if starts_per_file is None:
            counts = _coverage_counts(lengths, self.read_length, self.coverage)
        else:
            left = starts_per_file[file_index]
            n_starts = _n_starts(lengths, self.read_length)
            counts = _split_reads(left[1], n_starts, left[0], rng)
            left[0] -= int(n_starts.sum())
            left[1] -= int(counts.sum())
        plan = _plan(lengths, counts, self.read_length, self.both_strands, rng)
        sequences = _Joined(chunk.sequences, lengths, self.read_length)
        qualities = (None if chunk.qualities is None
                     else _Joined(chunk.qualities, lengths, self.read_length))
        records = _Records(chunk)
        for begin in range(0, plan.source.size, self.chunk_reads):
            part = _Plan(*(array[begin:begin + self.chunk_reads] for array in plan))
            yield ReadChunk(
                records.names(part),
                _cut_reads(sequences, records.sequences, part, self.read_length,
                           _COMPLEMENT),
                (None if qualities is None
                 else _cut_reads(qualities, records.qualities, part, self.read_length, None)),
                None if chunk.labels is None else chunk.labels[part.source],
                chunk.path,
                chunk.first_line,
            )


class _Records:
    """A reader chunk's records as object arrays, gathered by read."""

    def __init__(self, chunk):
        self.sequences = _objects(chunk.sequences)
        self.qualities = None if chunk.qualities is None else _objects(chunk.qualities)
        self._names = _objects(chunk.names)
        self._identifiers = None

    def names(self, plan):
        """``id:start+`` or ``id:start-`` for a cut read, the header for a whole record."""
        windowed = plan.start >= 0
        if not windowed.any():
            return self._names[plan.source].tolist()
        if self._identifiers is None:
            self._identifiers = read_identifiers(self._names.tolist())
        strand = np.where(plan.reverse[windowed], "-", "+")
        cut = np.char.add(np.char.add(self._identifiers[plan.source[windowed]], ":"),
                          np.char.add(plan.start[windowed].astype(str), strand))
        return _merge(windowed, cut.tolist(), self._names[plan.source[~windowed]])
