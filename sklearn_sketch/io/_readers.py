"""Streaming readers: files in chunks of CSR rows or reads, in bounded memory.

A reader opens its file (plain, gzip, bzip2, xz or a zip archive of one file,
told apart by the magic bytes, whatever the name) each time it is iterated,
reads it in blocks of ``block_size`` bytes and hands each block to a compiled
parser (``_parsers.pyx``), which parses the complete lines
or records and leaves the cut-off tail for the next block. Only one block and
one chunk are held at a time, whatever the file size; a line or record longer
than a block makes the next reads grow geometrically until it fits, up to
``max_line_bytes`` (256 MiB by default): a longer one raises ``ParseError``, so a
small compressed file that expands to one huge line cannot fill the memory.
"""
import bz2
import gzip
import locale
import lzma
import numbers
import re
import zipfile
import zlib
from contextlib import contextmanager
from os import PathLike, fspath
from typing import NamedTuple

import numpy as np
import scipy.sparse as sp

from ._key_names import KeyNames, _VowpalWabbitNames
from ._label_order import LabelOrderCounter
from ._parsers import (
    FastaParser,
    FastqParser,
    LabelParser,
    SvmlightParser,
    VowpalWabbitParser,
)

MAX_FEATURES = 2**63 - 1
#: Magic bytes of the compressions read. bzip2's "BZh" is followed by a block size
#: digit and a block's (or the end of stream's) magic, which a text line never is.
_COMPRESSIONS = {b"\x1f\x8b": "gzip", b"\xfd7zXZ\x00": "xz", b"PK\x03\x04": "zip"}
_BZIP2 = re.compile(rb"BZh[1-9](1AY&SY|\x17rE8P\x90)")
_BASES = {True: 0, False: 1, "auto": 2}
#: Bytes of an svmlight file at least that ``zero_based="auto"`` judges the base on
#: (the default ``block_size``).
AUTO_BASE_BYTES = 2**20
#: Default longest line (svmlight, Vowpal Wabbit) or record (FASTA, FASTQ) in bytes.
MAX_LINE_BYTES = 2**28


class ParseError(ValueError):
    """A malformed line or record, named by its file and 1-based line number.

    Parameters
    ----------
    path : str
        The file.
    line : int
        1-based line number of the error.
    reason : str
        What is wrong.

    Examples
    --------
    >>> from sklearn_sketch.io import ParseError
    >>> err = ParseError("train.svm", 3, "bad label 'x': not a number")
    >>> print(err)
    train.svm, line 3: bad label 'x': not a number
    >>> isinstance(err, ValueError), err.line
    (True, 3)
    """

    def __init__(self, path, line, reason):
        super().__init__(f"{path}, line {line}: {reason}")
        self.path = path
        self.line = line
        self.reason = reason

    def __reduce__(self):
        return type(self), (self.path, self.line, self.reason)


class RecordTooLong(ParseError):
    r"""A line or record longer than the reader's ``max_line_bytes``.

    The file may be right (a genome's chromosome is one FASTA record) and the
    cap too small for it.

    Parameters
    ----------
    path : str
        The file.
    line : int
        1-based line number where the line or record starts.
    reason : str
        What is wrong.

    Examples
    --------
    >>> import os, tempfile
    >>> from sklearn_sketch.io import FastaReader, ParseError, RecordTooLong
    >>> path = os.path.join(tempfile.mkdtemp(), "genome.fa")
    >>> _ = open(path, "w").write(">chr1\n" + "ACGT" * 1000 + "\n")
    >>> try:
    ...     next(iter(FastaReader(path, max_line_bytes=1000)))
    ... except RecordTooLong as exc:
    ...     print(isinstance(exc, ParseError), exc.line)
    True 1
    """


class Chunk(NamedTuple):
    """Consecutive rows of a svmlight or Vowpal Wabbit file.

    Parameters
    ----------
    X : scipy.sparse.csr_matrix of shape (n_rows, n_features)
        Features: float64 data, int64 indices, no repeated column within a row
        (svmlight: columns increase; Vowpal Wabbit: in the order of the line,
        no stored zero); every chunk of a stream has the same ``n_features``.
    y : ndarray of float64, shape (n_rows,)
        Labels (NaN for a Vowpal Wabbit example without a label).
    sample_weight : ndarray of float64, shape (n_rows,) or None
        Importance weights (Vowpal Wabbit), None for svmlight.
    first_line : int
        1-based line number of the first row in the file.
    qid : ndarray of int64, shape (n_rows,) or None
        Query ids (-1 where a row has none) when asked for, else None.
    feature_names : KeyNames or None
        The names of the chunk's columns (Vowpal Wabbit with ``keep_names=True``;
        any object with ``lookup(keys) -> {key: name}``), else None.
    row_names : list of str or None
        The name of each row where rows have one (the reads of FASTA and FASTQ
        files, as the command line counts them), else None.

    Examples
    --------
    >>> import os, tempfile
    >>> from sklearn_sketch.io import SvmlightReader
    >>> path = os.path.join(tempfile.mkdtemp(), "rows.svm")
    >>> with open(path, "w") as f:
    ...     _ = f.write("1 3:1.5\\n-1 2:1 7:2\\n1 5:1\\n")
    >>> chunk = next(iter(SvmlightReader(path, chunk_rows=2, n_features=10)))
    >>> chunk.X.shape, chunk.y.tolist(), chunk.first_line, chunk.sample_weight
    ((2, 10), [1.0, -1.0], 1, None)
    """

    X: sp.csr_matrix
    y: np.ndarray
    sample_weight: np.ndarray | None
    first_line: int
    qid: np.ndarray | None = None
    feature_names: KeyNames | None = None
    row_names: list | None = None


class ReadChunk(NamedTuple):
    """Consecutive records of a FASTA or FASTQ file.

    Parameters
    ----------
    names : list of str
        Header lines without the leading '>' or '@' and trailing whitespace.
    sequences : list of bytes
        Sequences as in the file (case kept), line breaks removed.
    qualities : list of bytes or None
        FASTQ quality strings, None for FASTA.
    labels : ndarray of shape (n_reads,) or None
        One label per read, None when the reader has no labels.
    path : str
        The file the reads come from (a chunk never spans two files).
    first_line : int
        1-based line number of the first record's header.

    Examples
    --------
    >>> import os, tempfile
    >>> from sklearn_sketch.io import FastaReader
    >>> path = os.path.join(tempfile.mkdtemp(), "reads.fa")
    >>> with open(path, "w") as f:
    ...     _ = f.write(">r1 first\\nACGT\\nAC\\n>r2\\nGGTA\\n")
    >>> chunk = next(iter(FastaReader({path: "ecoli"})))
    >>> chunk.names, chunk.sequences, chunk.labels.tolist(), chunk.qualities
    (['r1 first', 'r2'], [b'ACGTAC', b'GGTA'], ['ecoli', 'ecoli'], None)
    """

    names: list
    sequences: list
    qualities: list | None
    labels: np.ndarray | None
    path: str
    first_line: int


# ------------------------------------------------------------------ helpers
def _check_int(name, value, low, high=None):
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{name} must be an integer, got {type(value).__name__}")
    if value < low or high is not None and value > high:
        bound = f"[{low}, {high}]" if high is not None else f">= {low}"
        raise ValueError(f"{name} must be {bound}, got {value}")
    return int(value)


def _check_options(on_error, block_size, max_line_bytes):
    """Checked ``(block_size, max_line_bytes)``."""
    if on_error not in ("raise", "skip"):
        raise ValueError(f"on_error must be 'raise' or 'skip', got {on_error!r}")
    return (_check_int("block_size", block_size, 1),
            _check_int("max_line_bytes", max_line_bytes, 1))


def compression(path):
    """``"gzip"``, ``"bzip2"``, ``"xz"``, ``"zip"`` or ``None``: the compression that
    ``path``'s first bytes say, whatever its name."""
    with open(path, "rb") as f:
        head = f.read(10)
    if _BZIP2.match(head):
        return "bzip2"
    return next((name for magic, name in _COMPRESSIONS.items() if head.startswith(magic)),
                None)


def is_compressed(path):
    """Whether ``path`` starts with the magic bytes of a compression read here."""
    return compression(path) is not None


def _zip_member(archive, path):
    """The one file of a zip archive (folders and macOS' ``__MACOSX/`` left out), open;
    ``ValueError`` for an archive of several files or a spreadsheet workbook (an
    ``.xlsx`` or ``.ods`` is a zip archive of XML parts)."""
    names = archive.namelist()
    if "xl/workbook.xml" in names or "content.xml" in names and "mimetype" in names:
        raise ValueError(f"{path} is a spreadsheet workbook, not a table of text: save "
                         "its sheet as CSV (or Parquet) and train on that")
    files = [info.filename for info in archive.infolist()
             if not info.is_dir() and not info.filename.startswith("__MACOSX/")]
    if len(files) != 1:
        raise ValueError(f"{path} is a zip archive of {len(files)} files, {files[:5]}: one "
                         "file is read from a zip archive; extract the one to read")
    return archive.open(files[0])


@contextmanager
def open_stream(path):
    """``(stream, compression)``: the file as a binary stream, decompressed if its
    first bytes are a compression's magic (``compression`` is then its name)."""
    kind = compression(path)
    if kind is None:
        with open(path, "rb") as raw:
            yield raw, None
    elif kind == "zip":
        try:
            archive = zipfile.ZipFile(path)
        except zipfile.BadZipFile as exc:
            raise ParseError(path, 1, f"corrupt zip data ({exc})") from exc
        with archive, _zip_member(archive, path) as member:
            yield member, kind
    else:
        with open(path, "rb") as raw:
            if kind == "gzip":
                stream = gzip.GzipFile(fileobj=raw, mode="rb")
            else:
                stream = {"bzip2": bz2.BZ2File, "xz": lzma.LZMAFile}[kind](raw, mode="rb")
            with stream:
                yield stream, kind


#: What a corrupt compressed stream raises on reading.
_CORRUPT = (OSError, EOFError, zlib.error, lzma.LZMAError, zipfile.BadZipFile)


class _FlatFileAsFasta:
    """A GenBank or EMBL file's records as FASTA text, read by ``read(size)``.

    A record runs to its ``//`` line; its name is its accession (GenBank's
    ``VERSION``, with the version; EMBL's ``ID``) and the first line of its
    description, its sequence the letters of its ``ORIGIN`` (``SQ``) section,
    the numbers and spaces dropped by one ``bytes.translate`` a record (a record
    without one, a contig's, has no letters). A record is held whole while it is
    converted, up to ``max_line_bytes``; the last may lack its ``//``.
    """

    def __init__(self, stream, path, max_line_bytes, genbank):
        self.stream, self.path, self.limit = stream, path, max_line_bytes
        self.genbank = genbank
        self.pending = bytearray()  # source bytes not converted yet
        self.ready = bytearray()    # FASTA bytes not handed over yet
        self.done = False
        self.records = 0
        self.scanned = 0  # pending's bytes searched for a record's end already

    def read(self, size):
        while len(self.ready) < size and not self.done:
            data = self.stream.read(max(size, 1 << 20))
            self.done = not data
            self.pending += data
            self._convert(final=self.done)
        out = bytes(self.ready[:size])
        del self.ready[:size]
        return out

    def _convert(self, final):
        # A long record arrives a block at a time: only its new bytes are searched.
        ends = [m.end() for m in _RECORD_END.finditer(self.pending, max(0, self.scanned - 8))]
        self.scanned = len(self.pending)
        if final and self.pending[ends[-1] if ends else 0:].strip():
            ends.append(len(self.pending))  # the last record without its '//', as Biopython
        cut = ends[-1] if ends else 0
        if not ends:
            if len(self.pending) > self.limit:
                raise RecordTooLong(self.path, 1, f"a record longer than max_line_bytes="
                                 f"{self.limit} bytes")
            return
        start = 0
        for end in ends:
            self.ready += self._record(bytes(self.pending[start:end]))
            start = end
            self.records += 1
        del self.pending[:cut]
        self.scanned = len(self.pending)

    def _record(self, text):
        if not text.strip(b" \t\r\n/"):
            return b""
        fields = _GENBANK_FIELDS if self.genbank else _EMBL_FIELDS
        name = b""
        for pattern in fields:
            match = pattern.search(text)
            if match is not None:
                name += (b" " if name else b"") + match.group(1).strip()
        sequence = _SEQUENCE_START[self.genbank].search(text)
        end = text.rfind(b"\n//")
        letters = (text[sequence.end():end if end >= 0 else len(text)].translate(
            None, _NOT_SEQUENCE) if sequence is not None else b"")
        return b">" + (name or b"record %d" % (self.records + 1)) + b"\n" + letters + b"\n"


#: What a GenBank or EMBL file starts with, and what its records' parts look like.
_FLAT_FILE_START = re.compile(rb"\s*(LOCUS\s|ID   \S|GB\w+\.SEQ\s)")
_RECORD_END = re.compile(rb"^//[ \t]*\r?$\n?", re.MULTILINE)
_GENBANK_FIELDS = (re.compile(rb"^VERSION\s+(\S+)", re.MULTILINE),
                   re.compile(rb"^DEFINITION\s+([^\r\n]*)", re.MULTILINE))
_EMBL_FIELDS = (re.compile(rb"^ID   ([^;\s]+)", re.MULTILINE),
                re.compile(rb"^DE   ([^\r\n]*)", re.MULTILINE))
_SEQUENCE_START = {True: re.compile(rb"^ORIGIN[^\n]*\n", re.MULTILINE),
                   False: re.compile(rb"^SQ   [^\n]*\n", re.MULTILINE)}
_NOT_SEQUENCE = b"0123456789 \t\r\n\x0b\x0c"


def _parse_file(path, parser, max_units, block_size, max_line_bytes, prepare=None,
                flat_files=False):
    """Feed ``path`` to ``parser``; yield ``parser.take()`` every ``max_units`` units.

    ``prepare(buf, start, final, c_numeric)`` is called before each new block
    is parsed. A parse error, corrupt compressed data or a unit (line or record)
    longer than ``max_line_bytes`` raises ``ParseError``, with at most
    ``max_line_bytes + block_size`` bytes of it read. With ``flat_files`` a
    GenBank or EMBL file is parsed as the FASTA text of its records
    (:class:`_FlatFileAsFasta`).
    """
    with open_stream(path) as (f, compressed):
        if flat_files:
            start = _FLAT_FILE_START.match(f.peek(64)[:64])
            if start is not None:
                f = _FlatFileAsFasta(f, path, max_line_bytes,
                                     genbank=not start.group(1).startswith(b"ID"))
        buf = bytearray()
        pos = 0
        size = block_size
        final = False
        while not final:
            try:
                data = f.read(size)
            except _CORRUPT as exc:
                if compressed is None:
                    raise
                raise ParseError(path, parser.line + 1,
                                 f"corrupt {compressed} data ({exc})") from exc
            final = not data
            del buf[:pos]
            buf += data
            pos = start = 0
            c_numeric = _c_numeric()
            if prepare is not None:
                prepare(buf, pos, final, c_numeric)
            while True:
                pos = parser.parse(buf, pos, final, max_units, c_numeric)
                error = parser.error_reason(buf)
                if error is not None:
                    raise ParseError(path, *error)
                if parser.n_units < max_units:
                    break
                units = parser.take()
                if pos > block_size:
                    # Not kept while the units are used: the text of a genome's record
                    # (a reader per file mixed with others held each file's twice).
                    # start goes negative: pos > start still says the parse advanced.
                    buf, start, pos = buf[pos:], start - pos, 0
                yield units
            tail = len(buf) - pos
            if tail > max_line_bytes:
                raise RecordTooLong(
                    path, parser.line + 1,
                    f"line or record longer than max_line_bytes={max_line_bytes} bytes "
                    "(raise max_line_bytes if the file is right)")
            # A unit longer than the buffer: read more at a time until it fits, but
            # never more than the cap lets the unit grow to.
            size = block_size if pos > start else min(2 * size, max_line_bytes + 1 - tail)
        del buf
        if parser.n_units:
            yield parser.take()


def _decide_base_early(path, parser):
    """Settle ``parser``'s base on the first :data:`AUTO_BASE_BYTES` of ``path``
    (decompressed), if their complete lines hold a feature. Corrupt data is left
    for the parse proper to report."""
    try:
        with open_stream(path) as (f, _):
            head = f.read(AUTO_BASE_BYTES)
    except _CORRUPT:
        return
    parser.decide_base(bytearray(head), 0, len(head) < AUTO_BASE_BYTES, _c_numeric())


def _c_numeric():
    """Whether the C locale's decimal point is in use (numbers parse without Python)."""
    return locale.localeconv()["decimal_point"] == "."


def _csr(data, indices, indptr, n_features, sorted_unique):
    """CSR of the parsed arrays as they are: int64 indices, no format check, no copy.

    The parsers give valid rows (columns below ``n_features``, no repeated
    column within a row); ``sorted_unique`` says the rows' columns also
    increase, which scipy then knows.
    """
    X = sp.csr_matrix((indptr.size - 1, n_features), dtype=np.float64)
    X.data, X.indices, X.indptr = data, indices, indptr
    if sorted_unique:
        X.has_canonical_format = True
    return X


# ------------------------------------------------------------------ readers
class SvmlightReader:
    """Stream a svmlight / libsvm file in chunks of CSR rows.

    Lines are ``label [qid:N] index:value ... [# comment]``; comments and blank
    lines are skipped, indices must increase within a line. Stacking the
    chunks gives the ``X`` and ``y`` of :func:`sklearn.datasets.load_svmlight_file`
    called with the same ``zero_based`` and ``n_features`` (numbers are parsed
    as Python's ``float`` does, except that underscores are refused; indices
    may go beyond 2**31). Plain or compressed files; an empty file gives no chunk.

    Parameters
    ----------
    path : str or path-like
        The file.
    chunk_rows : int, default=10000
        Rows per chunk (the last chunk may have fewer).
    n_features : int, default=None
        Number of columns of every chunk; an index at or past it is an error.
        Default :data:`MAX_FEATURES` (``2**63 - 1``): every int64 index fits,
        and the estimators of this package take such shapes (they never build
        an ``n_features``-sized array).
    zero_based : bool or "auto", default="auto"
        Whether indices start at 0 (else at 1, and column = index - 1). A
        stream cannot look at the whole file first, so ``"auto"`` decides on
        the file's first :data:`AUTO_BASE_BYTES`, read ahead, or past them
        on the first block that holds a feature (so that the base, like every
        other result, does not depend on ``block_size``):
        zero-based if an index 0 is in it, else one-based; an index 0 seen
        later in a file so judged one-based raises ``ParseError`` (pass
        ``True``).
    query_id : bool, default=False
        Return the ``qid:N`` values in ``Chunk.qid`` (they are always checked).
    on_error : {"raise", "skip"}, default="raise"
        Raise ``ParseError`` at a malformed line, or skip it and count it in
        ``n_skipped_``.
    block_size : int, default=2**20
        Bytes read at a time.
    max_line_bytes : int, default=2**28
        Longest line in bytes (256 MiB); a longer one raises ``ParseError``
        naming the file and line, before more than that is held in memory.

    Attributes
    ----------
    n_skipped_ : int
        Lines skipped so far by the current or last iteration.
    zero_based_ : bool or None
        The index base in use (None while ``"auto"`` has seen no feature).

    See Also
    --------
    VowpalWabbitReader : Vowpal Wabbit text files.

    Examples
    --------
    >>> import os, tempfile
    >>> from sklearn_sketch.io import SvmlightReader
    >>> path = os.path.join(tempfile.mkdtemp(), "toy.svm")
    >>> with open(path, "w") as f:
    ...     _ = f.write("# two rows\\n1 1:0.5 3:2\\n-1 2:1e-1\\n")
    >>> for chunk in SvmlightReader(path, chunk_rows=1, n_features=3, zero_based=False):
    ...     print(chunk.first_line, chunk.y, chunk.X.toarray())
    2 [1.] [[0.5 0.  2. ]]
    3 [-1.] [[0.  0.1 0. ]]
    """

    def __init__(self, path, chunk_rows=10000, *, n_features=None, zero_based="auto",
                 query_id=False, on_error="raise", block_size=2**20,
                 max_line_bytes=MAX_LINE_BYTES):
        self.path = fspath(path)
        self.chunk_rows = _check_int("chunk_rows", chunk_rows, 1)
        self.n_features = (None if n_features is None
                           else _check_int("n_features", n_features, 1, MAX_FEATURES))
        if zero_based not in (True, False, "auto"):
            raise ValueError(f"zero_based must be True, False or 'auto', got {zero_based!r}")
        self.zero_based = zero_based
        self.query_id = bool(query_id)
        self.block_size, self.max_line_bytes = _check_options(on_error, block_size,
                                                              max_line_bytes)
        self.on_error = on_error

    def __iter__(self):
        """Yield the chunks of the file, from its start.

        Yields
        ------
        chunk : Chunk
            ``Chunk(X, y, None, first_line, qid)``.
        """
        n_features = MAX_FEATURES if self.n_features is None else self.n_features
        parser = SvmlightParser(_BASES[self.zero_based], n_features, self.on_error == "skip")
        self.n_skipped_ = 0
        if self.zero_based == "auto":
            _decide_base_early(self.path, parser)
        self.zero_based_ = parser.zero_based
        for indptr, indices, data, y, qid, first_line in _parse_file(
                self.path, parser, self.chunk_rows, self.block_size, self.max_line_bytes,
                parser.decide_base):
            self.n_skipped_ = parser.n_skipped
            self.zero_based_ = parser.zero_based
            X = _csr(data, indices, indptr, n_features, sorted_unique=True)
            yield Chunk(X, y, None, first_line, qid if self.query_id else None)
        self.n_skipped_ = parser.n_skipped
        self.zero_based_ = parser.zero_based


class VowpalWabbitReader:
    """Stream a Vowpal Wabbit text file in chunks of CSR rows with hashed keys.

    Lines are ``[label [importance [base]]] [tag]|namespace feature[:value] ...``
    with any number of ``|namespace`` sections (``|ns:2 f`` scales the section's
    values by 2; ``| f`` is the default namespace). The tag is the field glued
    to the first ``|`` or starting with a quote; the base is checked and unused.
    A missing label is NaN, a missing importance 1, a missing value 1. Blank
    lines are skipped. Plain or compressed files; an empty file gives no chunk.

    A feature's column is its key: the unsigned 64-bit MurmurHash3 (first half
    of x64_128, seed 0, the hash of
    :func:`~sklearn_sketch._core.murmurhash3_64`) of the bytes
    ``namespace + b"^" + name``, or of ``name`` alone in the default
    namespace; names are bytes, never decoded. The hash is reduced modulo
    ``2**63 - 1`` (``n_bits=None``) or masked to its low ``n_bits`` bits.
    Keys that collide within a row are summed (a key whose sum is 0 is
    dropped), and a row keeps its keys in the order of the line, unsorted
    (scipy sorts them on demand). With ``keep_names=True`` each
    chunk also carries those bytes for each of its columns, in a
    :class:`KeyNames` table (``Chunk.feature_names``) that
    :func:`partial_fit_stream` hands to the estimator, so that a model trained
    on the file names its selected features.

    Parameters
    ----------
    path : str or path-like
        The file.
    chunk_rows : int, default=10000
        Rows per chunk (the last chunk may have fewer).
    n_bits : int, default=None
        Keep the low ``n_bits`` bits of the hash (like VW's ``-b``), in
        ``[1, 62]``; chunks then have ``2**n_bits`` columns, else
        :data:`MAX_FEATURES`.
    on_error : {"raise", "skip"}, default="raise"
        Raise ``ParseError`` at a malformed line, or skip it and count it in
        ``n_skipped_``.
    block_size : int, default=2**20
        Bytes read at a time.
    keep_names : bool, default=False
        Give each chunk the names of its columns in ``feature_names`` (the
        first name seen in the chunk when names collide on a key). The chunk
        keeps its lines' text and where each entry's feature starts; a name
        is only rebuilt when looked up.
    max_line_bytes : int, default=2**28
        Longest line in bytes (256 MiB); a longer one raises ``ParseError``
        naming the file and line, before more than that is held in memory.
    interactions : list of str, default=None
        Crosses of namespaces, as Vowpal Wabbit's ``-q ab`` and ``--cubic
        abc``: each 2 or 3 letters, a namespace's first character (a space
        for the default namespace). Each feature of a namespace of the first
        letter is crossed, in compiled code, with each of one of the second
        (and third): its key is derived from the parts' keys (no string is
        built), its value is the product of theirs, and its name, built only
        when looked up, joins the parts' names with ``*``
        (``user^u7*ad^a3``), as VW's audit writes it. Where letters repeat,
        each combination of distinct features is crossed once.

    Attributes
    ----------
    n_skipped_ : int
        Lines skipped so far by the current or last iteration.

    See Also
    --------
    SvmlightReader : Files in svmlight / libsvm format.
    KeyNames : The names of a chunk's columns.

    Examples
    --------
    >>> import os, tempfile
    >>> import mmh3
    >>> from sklearn_sketch.io import VowpalWabbitReader
    >>> path = os.path.join(tempfile.mkdtemp(), "toy.vw")
    >>> with open(path, "w") as f:
    ...     _ = f.write("1 2.0 'first|words hello:3\\n-1 |words bye\\n")
    >>> chunk = next(iter(VowpalWabbitReader(path, n_bits=20)))
    >>> chunk.y, chunk.sample_weight, chunk.X.shape
    (array([ 1., -1.]), array([2., 1.]), (2, 1048576))
    >>> key = mmh3.hash64(b"words^hello", 0, signed=False)[0] % 2**20
    >>> float(chunk.X[0, key])
    3.0
    >>> chunk = next(iter(VowpalWabbitReader(path, n_bits=20, keep_names=True)))
    >>> chunk.feature_names.lookup([key])[key]
    'words^hello'
    >>> with open(path, "w") as f:
    ...     _ = f.write("1 |user u7 |ad a3 a4:2\\n")
    >>> chunk = next(iter(VowpalWabbitReader(path, keep_names=True, interactions=["ua"])))
    >>> chunk.X.nnz  # three features and two crosses
    5
    >>> sorted(chunk.feature_names.lookup(chunk.X.indices).values())[:2]
    ['ad^a3', 'ad^a4']
    >>> sorted(chunk.feature_names.lookup(chunk.X.indices).values())[3:]
    ['user^u7*ad^a3', 'user^u7*ad^a4']
    """

    def __init__(self, path, chunk_rows=10000, *, n_bits=None, on_error="raise",
                 block_size=2**20, keep_names=False, max_line_bytes=MAX_LINE_BYTES,
                 interactions=None):
        self.path = fspath(path)
        self.chunk_rows = _check_int("chunk_rows", chunk_rows, 1)
        self.n_bits = None if n_bits is None else _check_int("n_bits", n_bits, 1, 62)
        self.block_size, self.max_line_bytes = _check_options(on_error, block_size,
                                                              max_line_bytes)
        self.on_error = on_error
        self.keep_names = bool(keep_names)
        self.interactions = check_interactions(interactions)

    def __iter__(self):
        """Yield the chunks of the file, from its start.

        Yields
        ------
        chunk : Chunk
            ``Chunk(X, y, sample_weight, first_line, None, feature_names)``,
            ``feature_names`` None unless ``keep_names``.
        """
        n_features = MAX_FEATURES if self.n_bits is None else 2**self.n_bits
        parser = VowpalWabbitParser(self.n_bits or 0, self.on_error == "skip", self.keep_names,
                                    [spec.encode() for spec in self.interactions])
        self.n_skipped_ = 0
        for parsed in _parse_file(self.path, parser, self.chunk_rows, self.block_size,
                                  self.max_line_bytes):
            indptr, indices, data, y, weight, first_line = parsed[:6]
            self.n_skipped_ = parser.n_skipped
            X = _csr(data, indices, indptr, n_features, sorted_unique=False)
            names = _VowpalWabbitNames(indices, *parsed[6:]) if self.keep_names else None
            yield Chunk(X, y, weight, first_line, None, names)
        self.n_skipped_ = parser.n_skipped


def check_interactions(interactions):
    """Namespace crosses as a tuple of strings of 2 or 3 letters (VW's ``-q ab``,
    ``--cubic abc``), checked; ``()`` for None."""
    if interactions is None:
        return ()
    if isinstance(interactions, str):
        interactions = [interactions]
    specs = tuple(interactions)
    for spec in specs:
        if not isinstance(spec, str) or not 2 <= len(spec) <= 3 or not spec.isascii() \
                or "|" in spec or ":" in spec:
            raise ValueError(f"an interaction is 2 or 3 namespace letters (ASCII, a space for "
                             f"the default namespace), like 'ab' or 'abc'; got {spec!r}")
    if len(specs) > 16:
        raise ValueError(f"at most 16 interactions, got {len(specs)}")
    return specs


def scan_labels(path, format, *, return_order=False, block_size=2**20,
                max_line_bytes=MAX_LINE_BYTES):
    """The distinct labels of a svmlight or Vowpal Wabbit file, in one fast pass.

    Only the label of each line is read (the features are skipped), so this
    costs a fraction of a parse: it gives the ``classes`` a first
    ``partial_fit`` needs without reading the file twice in full, and, on
    request, how the labels follow one another (a file sorted by label wants
    a shuffle before one pass learns from it).

    Parameters
    ----------
    path : str or path-like
        The file (plain or compressed).
    format : {"svmlight", "vw"}
        The file's format.
    return_order : bool, default=False
        Also return how the labels follow one another.
    block_size : int, default=2**20
        Bytes read at a time.
    max_line_bytes : int, default=2**28
        Longest line in bytes (256 MiB); a longer one raises ``ParseError``
        naming the file and line, before more than that is held in memory.

    Returns
    -------
    labels : ndarray of float64
        Sorted distinct labels; a trailing NaN when some Vowpal Wabbit line has
        no label.
    order : LabelOrder
        With ``return_order``: the rows, the changes of label between adjacent
        lines and the changes a random order of the same labels would have
        (``order.sorted_by_label`` says whether the labels come in runs).

    Raises
    ------
    ParseError
        At a line whose label is not a number (or a VW line without ``|``).

    Examples
    --------
    >>> import os, tempfile
    >>> from sklearn_sketch.io import scan_labels
    >>> path = os.path.join(tempfile.mkdtemp(), "toy.vw")
    >>> with open(path, "w") as f:
    ...     _ = f.write("2 |f a\\n1 0.5 'id|f b\\n3 tag|f c\\n| d\\n2 |f e\\n")
    >>> scan_labels(path, "vw")
    array([ 1.,  2.,  3., nan])
    >>> labels, order = scan_labels(path, "vw", return_order=True)
    >>> order.n_rows, order.n_changes
    (5, 4)
    """
    if format not in ("svmlight", "vw"):
        raise ValueError(f"format must be 'svmlight' or 'vw', got {format!r}")
    parser = LabelParser(format == "vw", False)
    counter = LabelOrderCounter()
    for labels, _ in _parse_file(fspath(path), parser, 2**20,
                                 _check_int("block_size", block_size, 1),
                                 _check_int("max_line_bytes", max_line_bytes, 1)):
        counter.add(labels)
    distinct = counter.distinct()
    return (distinct, counter.order()) if return_order else distinct


class _ReadsReader:
    """Records of one or several files, with labels by file or by name."""

    _parser = None
    _has_quality = False

    def __init__(self, paths, chunk_reads=10000, *, label=None, on_error="raise",
                 block_size=2**20, max_line_bytes=MAX_LINE_BYTES):
        if isinstance(paths, dict):
            if label is not None:
                raise ValueError("give labels either by file (a dict of paths) or by a "
                                 "label function, not both")
            self._files = [(fspath(path), file_label) for path, file_label in paths.items()]
        elif isinstance(paths, (str, bytes, PathLike)):
            self._files = [(fspath(paths), None)]
        else:
            self._files = [(fspath(path), None) for path in paths]
        if label is not None and not callable(label):
            raise TypeError(f"label must be callable, got {type(label).__name__}")
        self.paths = paths
        self.label = label
        self.chunk_reads = _check_int("chunk_reads", chunk_reads, 1)
        self.block_size, self.max_line_bytes = _check_options(on_error, block_size,
                                                              max_line_bytes)
        self.on_error = on_error

    def __iter__(self):
        """Yield the chunks of every file in turn, from their start.

        Yields
        ------
        chunk : ReadChunk
            ``ReadChunk(names, sequences, qualities, labels, path, first_line)``.
        """
        self.n_skipped_ = 0
        by_file = isinstance(self.paths, dict)
        for path, file_label in self._files:
            parser = self._parser(self.on_error == "skip")
            skipped_before = self.n_skipped_
            for names, sequences, qualities, first_line in _parse_file(
                    path, parser, self.chunk_reads, self.block_size, self.max_line_bytes,
                    flat_files=not self._has_quality):
                self.n_skipped_ = skipped_before + parser.n_skipped
                if by_file:
                    labels = np.asarray([file_label] * len(names))
                elif self.label is not None:
                    labels = np.asarray([self.label(name) for name in names])
                else:
                    labels = None
                yield ReadChunk(names, sequences, qualities if self._has_quality else None,
                                labels, path, first_line)
            self.n_skipped_ = skipped_before + parser.n_skipped


class FastaReader(_ReadsReader):
    """Stream the records of FASTA files in chunks of reads.

    A record is a ``>header`` line and the sequence lines up to the next
    header; the lines are joined (a long genome is gathered block by block,
    never line by line in Python) and whitespace such as ``\\r`` is dropped.
    Sequence characters are letters, ``*``, ``-`` and ``.``; headers must be
    printable UTF-8 (tabs and the ``\\x01`` that separates merged names in
    NCBI's nr and nt databases allowed). Blank lines are skipped; an empty file
    gives no chunk. A GenBank or EMBL file (told by its first line, ``LOCUS`` or
    ``ID``) is read as the FASTA of its records: each named by its accession and
    the first line of its description, its sequence the ``ORIGIN`` (``SQ``)
    section's letters. Plain or compressed files.

    Parameters
    ----------
    paths : str, path-like, list of them, or dict
        The file(s), read in turn; a dict ``{path: label}`` labels every read
        of a file.
    chunk_reads : int, default=10000
        Reads per chunk (the last chunk of each file may have fewer).
    label : callable, default=None
        ``label(name) -> label`` for each read, given its header; not with a dict.
    on_error : {"raise", "skip"}, default="raise"
        Raise ``ParseError`` at a malformed record, or skip it (up to the
        next header line) and count it in ``n_skipped_``.
    block_size : int, default=2**20
        Bytes read at a time.
    max_line_bytes : int, default=2**28
        Longest record in bytes (256 MiB); a longer one raises ``ParseError``
        naming the file and line, before more than that is held in memory.

    Attributes
    ----------
    n_skipped_ : int
        Records skipped so far by the current or last iteration.

    See Also
    --------
    FastqReader : FASTQ files.

    Examples
    --------
    >>> import os, tempfile
    >>> from sklearn_sketch.io import FastaReader
    >>> path = os.path.join(tempfile.mkdtemp(), "toy.fa")
    >>> with open(path, "w") as f:
    ...     _ = f.write(">r1 E. coli\\nACGT\\nAC\\n>r2 S. aureus\\nTTGA\\n")
    >>> chunk = next(iter(FastaReader(path, label=lambda name: name.split(" ", 1)[1])))
    >>> chunk.names, chunk.sequences, chunk.labels.tolist()
    (['r1 E. coli', 'r2 S. aureus'], [b'ACGTAC', b'TTGA'], ['E. coli', 'S. aureus'])
    """

    _parser = FastaParser


class FastqReader(_ReadsReader):
    """Stream the records of FASTQ files in chunks of reads.

    A record is an ``@header`` line, the sequence, a ``+`` line (optionally
    the header again) and the quality string, which must be as long as the
    sequence and in ``'!'..'~'``. Most files hold a record in four lines; the
    sequence and the quality may also wrap over several lines (Sanger-era and
    long-read files; the format's definition, Cock et al. 2010, allows it, and
    Biopython reads them alike): the sequence ends at the line that starts with
    ``+``, the quality once it is as long. Sequence characters are letters,
    ``*``, ``-`` and ``.``; headers must be printable UTF-8; trailing
    whitespace (``\\r``) is dropped. A file that ends inside a record is an
    error. Blank lines between records are skipped; an empty file gives no
    chunk. Plain or compressed files.

    Parameters
    ----------
    paths : str, path-like, list of them, or dict
        The file(s), read in turn; a dict ``{path: label}`` labels every read
        of a file.
    chunk_reads : int, default=10000
        Reads per chunk (the last chunk of each file may have fewer).
    label : callable, default=None
        ``label(name) -> label`` for each read, given its header; not with a dict.
    on_error : {"raise", "skip"}, default="raise"
        Raise ``ParseError`` at a malformed record, or skip it and count it in
        ``n_skipped_`` (a run of lines not starting with '@' counts once).
    block_size : int, default=2**20
        Bytes read at a time.
    max_line_bytes : int, default=2**28
        Longest record in bytes (256 MiB); a longer one raises ``ParseError``
        naming the file and line, before more than that is held in memory.

    Attributes
    ----------
    n_skipped_ : int
        Records skipped so far by the current or last iteration.

    See Also
    --------
    FastaReader : FASTA files.

    Examples
    --------
    >>> import os, tempfile
    >>> from sklearn_sketch.io import FastqReader
    >>> folder = tempfile.mkdtemp()
    >>> paths = {os.path.join(folder, "ecoli.fq"): 0, os.path.join(folder, "saureus.fq"): 1}
    >>> for path, text in zip(paths, ["@a\\nACGT\\n+\\nIIII\\n", "@b\\nTT\\n+b\\nI#\\n"]):
    ...     with open(path, "w") as f:
    ...         _ = f.write(text)
    >>> for chunk in FastqReader(paths):
    ...     print(chunk.names, chunk.sequences, chunk.qualities, chunk.labels)
    ['a'] [b'ACGT'] [b'IIII'] [0]
    ['b'] [b'TT'] [b'I#'] [1]
    """

    _parser = FastqParser
    _has_quality = True
