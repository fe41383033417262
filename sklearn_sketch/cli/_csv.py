"""CSV files read by pandas, a compressed file (gzip, bzip2, xz, a zip archive's
one file; told by its first bytes, as the other readers tell it) as a stream.

pandas decompresses the member of a ``.zip`` whole into memory before it parses a
line, even for ``nrows=0`` or with ``chunksize``: 83 MiB at the peak and 0.12 s
for the header of the 23 MB ``flights.csv.zip``. Read as a stream, the header
takes 0.005 s and a chunked pass stays within its chunk, whatever the size of
the file.

The column separator is read from the header line (a comma, a tab, a semicolon
or a bar, whichever it holds most; runs of spaces when it holds none of them and
they split the first lines alike), and spaces after it are skipped
(``a, b, c``: the names were `` b`` and `` c``). A file separated by other
than commas whose first rows write numbers with a decimal comma and none with a
point (a spreadsheet's export in much of Europe: ``27,8;13,9``) has those
numbers read with a point: as text, a column of temperatures was a
classification of 65 classes. Numbers grouped by thousands (``"10,015.47"``, as
a US spreadsheet exports them, quoted; ``1.234,5`` in a decimal-comma file) have
their groups' separators dropped, and so have numbers their currency or
percent sign (``$12.50``, ``45%``): as text, a price column was refused as an
identifier, and a measurement read as categories.

Files that are not CSV (fastText lines, JSON lines, Parquet) and folders of
documents are read by :mod:`._formats` into the same tables.

The text encoding is read from the file's first MiB: UTF-16 when it opens with a
byte-order mark (a spreadsheet's "Unicode text" export), UTF-8 when it decodes
so, else Windows-1252 (a spreadsheet's CSV export on Windows, a corpus of
Latin-1 text: ``caf\\xe9``). A byte that its encoding cannot read further on
becomes U+FFFD (the same in every file, so training and predicting read it
alike). Read as UTF-8 alone, such a file stopped ``fit`` with pandas' "'utf-8'
codec can't decode byte 0x97 in position 110".
"""
import os
import re
from contextlib import contextmanager

import numpy as np

from ..io._readers import compression, open_stream
from ._formats import UTF16_BOMS, read_table, table_format

#: Column separators a header line is read for, preferred in this order on a tie.
SEPARATORS = (",", "\t", ";", "|")
#: Lines after the header read for how the file writes its numbers.
SAMPLE_LINES = 100
#: Bytes at the start of a file read for its encoding and first lines.
SAMPLE_BYTES = 1 << 20
_DECIMAL_COMMA = r"^\s*([-+]?\d*),(\d+)\s*$"
_DECIMAL_POINT = r"^\s*[-+]?\d*\.\d+\s*$"
# Digits grouped by thousands: 1,234,567.5 (a US spreadsheet's export, quoted in a
# comma file) and 1.234.567,5 (a decimal-comma file's).
_THOUSANDS = r"^\s*[-+]?\d{1,3}(?:,\d{3})+(?:\.\d+)?\s*$"
_THOUSANDS_DOTS = r"^\s*[-+]?\d{1,3}(?:\.\d{3})+,\d+\s*$"
# A number after a currency sign or before a percent sign: the sign and the digits.
_SYMBOLS = r"^\s*([-+]?)\s*(?:[$€£¥]\s*([-+]?\d[\d.,]*)|(?=\d)([\d.,]*\d)\s*%)\s*$"


def read_csv(path, no_header=None, **kwargs):
    """``pandas.read_csv(path, **kwargs)``, streaming the one member of a ``.zip``.

    ``no_header`` reads a CSV file without a line of names: ``True`` names its
    columns by position, or ``(names, label)`` as a training file's
    (:func:`positional_names`).

    With ``chunksize`` it returns an iterator of chunks (the archive stays
    open until the last one is read), else a DataFrame.

    Examples
    --------
    >>> import io, zipfile, tempfile, os
    >>> from sklearn_sketch.cli._csv import read_csv
    >>> path = os.path.join(tempfile.mkdtemp(), "rows.csv.zip")
    >>> with zipfile.ZipFile(path, "w") as archive:
    ...     archive.writestr("rows.csv", "a,b\\n1,x\\n2,y\\n3,z\\n")
    >>> [len(chunk) for chunk in read_csv(path, chunksize=2)]
    [2, 1]
    >>> list(read_csv(path, nrows=0).columns)
    ['a', 'b']
    >>> tabs = os.path.join(os.path.dirname(path), "rows.tsv")
    >>> with open(tabs, "w") as f:
    ...     _ = f.write("a\\tb\\tc,d\\n1\\tx\\ty,z\\n")
    >>> read_csv(tabs).to_dict("records")
    [{'a': 1, 'b': 'x', 'c,d': 'y,z'}]
    >>> europe = os.path.join(os.path.dirname(path), "rows.csv")
    >>> with open(europe, "w") as f:
    ...     _ = f.write("place; temp\\nOslo; -1,5\\nRome; 12,25\\n")
    >>> read_csv(europe, dtype=str).to_dict("list")
    {'place': ['Oslo', 'Rome'], 'temp': ['-1.5', '12.25']}
    """
    kind, lines, encoding = _table_kind(path)
    if kind != "csv":
        return read_table(kind, path, open_decompressed, encoding, kwargs)
    kwargs.setdefault("encoding", encoding)
    kwargs.setdefault("encoding_errors", "replace")
    skip = comment_lines(lines)
    if skip:
        kwargs["skiprows"] = skip
        lines = lines[skip:]
    sep = kwargs.setdefault("sep", separator(lines))
    kwargs.setdefault("skipinitialspace", True)
    spans = fixed_widths(lines) if sep == "," and no_header is None else None
    if spans is not None:
        kwargs["colspecs"] = sep = spans
    if no_header is not None:
        kwargs["header"] = None
        kwargs["names"] = positional_names(lines[0] if lines else "", sep, no_header, path)
    elif lines and "names" not in kwargs:
        if not row_names_first(lines, sep):
            kwargs["index_col"] = False
        names = _fields(lines[:1], sep)
        # A header of names each in single quotes (statsmodels' anes96: 'vote'):
        # pandas quotes by " only, and --label vote was unknown.
        if len(names) > 1 and all(len(n) > 1 and n[0] == n[-1] == "'" for n in names):
            kwargs["names"] = [n[1:-1] for n in names]
            kwargs["header"] = 0
    style = number_style(lines, sep)
    if kwargs.get("chunksize") is not None:
        return _chunks(path, kwargs, style)
    with _opened(path) as source:
        frame = _read(source, kwargs)
    return _with_points(frame, style) if any(style) else frame


def positional_names(line, sep, spec, path):
    """The names of the columns of a file without a header whose first line is
    ``line``: ``"1"`` to ``"n"`` (``spec`` True), or a training file's ``names``
    (``spec = (names, label)``), without its label when the file has one column
    fewer (a file to predict).

    Examples
    --------
    >>> positional_names("39, State-gov, 77516", ",", True, "adult.data")
    ['1', '2', '3']
    >>> positional_names("State-gov, 77516", ",", (["1", "2", "3"], "1"), "new.data")
    ['2', '3']
    """
    width = len(_fields([line], sep))
    if spec is True:
        return [str(i + 1) for i in range(width)]
    names, label = spec
    if width == len(names):
        return list(names)
    if width == len(names) - 1 and label in names:
        return [name for name in names if name != label]
    raise ValueError(f"{path} has {width} columns; the model's training file had "
                     f"{len(names)} ({len(names) - 1} without its label, column {label})")


def is_label_and_text(path):
    """Whether ``path`` reads as the two columns ``label`` and ``text``: a file in
    fastText's format or a folder of documents (:mod:`._formats`)."""
    return _table_kind(path)[0] in ("fasttext", "documents")


def _table_kind(path):
    """``(kind, lines, encoding)`` of ``path``: its format (:func:`._formats.table_format`,
    or ``"documents"`` for a folder), first lines and text encoding."""
    if os.path.isdir(path):
        return "documents", [], None
    head = file_head(path)
    lines, encoding = first_lines(path, head=head)
    return table_format(head, lines, path), lines, encoding


def _read(source, kwargs):
    import pandas as pd

    # The bytes are decompressed already (:func:`_opened`): not by the name's ending.
    kwargs = {**kwargs, "compression": None}
    if "colspecs" in kwargs:
        fixed = {k: v for k, v in kwargs.items() if k not in ("sep", "skipinitialspace")}
        return pd.read_fwf(source, **fixed)
    return pd.read_csv(source, **kwargs)


def _chunks(path, kwargs, style):
    with _opened(path) as source, _read(source, kwargs) as reader:
        for chunk in reader:
            yield _with_points(chunk, style) if any(style) else chunk


@contextmanager
def _opened(path):
    """What pandas reads: the path, or a compressed file's bytes as a stream."""
    if compression(path) is None:
        yield path
        return
    with open_stream(path) as (stream, _):
        yield stream


def number_style(lines, sep):
    """How the lines of a CSV file (its header first) write numbers that pandas does
    not read, as ``(grouping, symbols)``. ``grouping``: ``"decimal comma"``
    (separated by other than commas, some fields of the rows are digits with one
    comma, ``-1,5``, or grouped by dots, ``1.234,5``, and none are digits with a
    point), ``"thousands"`` (some fields are digits grouped by commas,
    ``"1,234.5"``, and none has a decimal comma), or None. ``symbols``: some
    fields are numbers after a currency sign or before a percent sign
    (``$12.50``, ``-€3``, ``45%``).

    Examples
    --------
    >>> number_style(["place;temp", "Oslo;-1,5", "Rome;12,25"], ";")
    ('decimal comma', False)
    >>> number_style(["area,price", '"3,185","$10,015.47"', "205,417.80"], ",")
    ('thousands', True)
    >>> number_style(["a,b", "1,2.5"], ",")
    (None, False)
    """
    if len(lines) < 2:
        return None, False
    import pandas as pd

    fields = pd.Series(_fields(lines[1:], sep), dtype=object)
    if fields.empty:
        return None, False
    bare = fields.str.replace(_SYMBOLS, r"\1\2\3", regex=True)
    symbols = bool((bare != fields).any())
    comma = bare.str.match(_DECIMAL_COMMA)
    thousands = bare.str.match(_THOUSANDS)
    if (sep != "," and (comma | bare.str.match(_THOUSANDS_DOTS)).any()
            and not bare.str.match(_DECIMAL_POINT).any()):
        return "decimal comma", symbols
    if thousands.any() and not (comma & ~thousands).any():
        return "thousands", symbols
    return None, symbols


def _fields(lines, sep):
    """The fields of ``lines``, quotes read as CSV reads them (``sep`` a list of
    spans: the fields of a fixed-width file)."""
    import csv

    if isinstance(sep, list):
        return [line[start:stop].strip() for line in lines for start, stop in sep]
    if sep == r"\s+":  # a quoted field one field, as pandas reads it
        return [field.strip('"') for line in lines
                for field in re.findall(r'"[^"]*"|\S+', line)]
    return [field for row in csv.reader(lines, delimiter=sep, skipinitialspace=True)
            for field in row]


def _with_points(frame, style):
    """``frame`` with its text columns' numbers written as pandas reads them (``style``
    from :func:`number_style`): currency and percent signs dropped, decimal commas
    as points (``"decimal comma"``), or thousands' commas dropped (``"thousands"``)."""
    from pandas.api.types import is_string_dtype

    text = [c for c in frame.columns if is_string_dtype(frame[c])]
    if not text:
        return frame
    return frame.assign(**{c: _number_text(frame[c], style) for c in text})


def _number_text(column, style):
    style, symbols = style
    if symbols:
        column = column.str.replace(_SYMBOLS, r"\1\2\3", regex=True)
    if style is None:
        return column
    if style == "thousands":
        grouped = column.str.match(_THOUSANDS).fillna(False).to_numpy(dtype=bool)
        return column.where(~grouped, column.str.replace(",", "", regex=False))
    dotted = column.str.match(_THOUSANDS_DOTS).fillna(False).to_numpy(dtype=bool)
    column = column.where(~dotted, column.str.replace(".", "", regex=False))
    return column.str.replace(_DECIMAL_COMMA, r"\1.\2", regex=True)


def row_names_first(lines, sep):
    r"""Whether the rows of a file's first ``lines`` (its header first) each hold one
    field more than the header, a row's name first (R's ``write.table``), and not
    only an empty one last (a separator ending every row). Else pandas is told that
    no column is an index: it read a row of one field more as a name first, and a
    file whose rows end with a separator (or whose first row has one value too
    many) had its first column taken as the index and every other moved one name
    left.

    Examples
    --------
    >>> row_names_first(["a,b", "r1,1,x", "r2,2,y"], ",")
    True
    >>> row_names_first(["a,b", "1,x,", "2,y,"], ",")
    False
    >>> row_names_first(["a,b", "1,x,9", "2,y"], ",")
    False
    >>> row_names_first(["a b", '"r1" 1 "x y"'], r"\s+")
    True
    """
    if not isinstance(sep, str) or len(lines) < 2:  # fixed widths: no row names
        return False
    width = len(_fields(lines[:1], sep))
    rows = [_fields([line], sep) for line in lines[1:] if line.strip()]
    return (bool(rows) and all(len(row) == width + 1 for row in rows)
            and not all(row[-1] == "" for row in rows))


def comment_lines(lines):
    """How many of a file's first ``lines`` are comments before its header: the
    lines that open it with ``#`` (a tool's notes, BLAST's tabular output, VCF's
    ``##`` lines), all but the last if that one has as many fields as the line
    after it and no space after its ``#``: a header that opens with ``#`` (VCF's
    ``#CHROM``, a spreadsheet's column ``#`` of row numbers).

    Examples
    --------
    >>> comment_lines(["# made by tool X", "# on 2026-12-01", "a,b,c", "1,x,3"])
    2
    >>> comment_lines(["##fileformat=VCFv4.2", "#CHROM\tPOS\tID", "1\t10\trs1"])
    1
    >>> comment_lines(["#,Name,Total", "1,Bulbasaur,318"])
    0
    >>> comment_lines(["# by X, v2, 2026", "a,b,c", "1,x,3"])
    1
    """
    k = 0
    while k < len(lines) and lines[k].lstrip().startswith("#"):
        k += 1
    if k == 0 or k == len(lines):
        return 0
    sep = separator(lines[k:])
    last = lines[k - 1].lstrip()
    if (not last[1:2].isspace() and last[1:2] != ""
            and len(_fields([last], sep)) == len(_fields([lines[k]], sep))):
        return k - 1
    return k


def separator(lines):
    r"""The column separator of a CSV file of first ``lines`` (its header first): the
    one of :data:`SEPARATORS` the header holds most often outside double quotes (the
    earlier on a tie), unless most lines after it hold it as many times as the header
    does not, and runs of white space split every line alike (a header of tabs
    over rows aligned by spaces: ISLP's ``Auto.data``); else any run of white space,
    when it splits the header and every line after it into as many fields, more than
    one, or every row into one more (a row's name first), a quoted field one field
    (R's ``write.table``, many ``.dat`` files); else a comma (one column).

    Examples
    --------
    >>> print(separator(["a\tb\tc", '1  2.5  "x y"', '3  4.0  "z"']))
    \s+
    >>> separator(["a,b", "1,2", "3,4"])
    ','
    """
    unquoted = [re.sub(r'"[^"]*"', "x", line) for line in lines if line.strip()]
    header = unquoted[0] if unquoted else ""
    counts = [header.count(sep) for sep in SEPARATORS]
    best = max(range(len(SEPARATORS)), key=lambda i: (counts[i], -i))
    widths = [len(line.split()) for line in unquoted]
    rows_widths = set(widths[1:])
    # As many fields in every line, or one more in every row: R's write.table
    # writes a row's name first, under no name.
    spaced = bool(widths) and widths[0] > 1 and (rows_widths <= {widths[0]}
                                                 or rows_widths == {widths[0] + 1})
    if counts[best]:
        sep = SEPARATORS[best]
        rows = unquoted[1:]
        # A header written with tabs over rows aligned with spaces reads by the rows.
        if spaced and sum(line.count(sep) != counts[best] for line in rows) > len(rows) / 2:
            return r"\s+"
        return sep
    return r"\s+" if spaced else ","


def fixed_widths(lines):
    """The column spans ``[(start, stop), ...]`` of a fixed-width table of first
    ``lines`` (its header first) whose values may hold spaces (Stata's and R's
    printed tables: ``   12-15 years``), or None. Between two names of the
    header, the columns part at the longest run of positions blank in every line
    (the leftmost on a tie): a value's inner space is one position, the space
    between columns several. None when the header holds one of
    :data:`SEPARATORS`, a line is wider than its last column allows, or a gap
    between two names is nowhere blank in every line.

    Examples
    --------
    >>> fixed_widths(["   id        heduc  div", "    9  12-15 years   No",
    ...               "   11   < 12 years  Yes"])
    [(0, 5), (5, 18), (18, None)]
    >>> fixed_widths(["name      city", "Ann Lee   Oslo", "Bo        New York"])
    [(0, 7), (7, None)]
    >>> fixed_widths(["name city", "Ann Lee Oslo"]) is None   # no column of blanks
    True
    """
    lines = [line.rstrip() for line in lines if line.strip()]
    if len(lines) < 2 or any(sep in lines[0] for sep in SEPARATORS):
        return None
    names = [match.span() for match in re.finditer(r"\S+", lines[0])]
    if len(names) < 2:
        return None
    width = max(map(len, lines))
    blank = np.ones(width + 1, dtype=bool)
    for line in lines[1:]:
        blank[:len(line)] &= np.frombuffer(line.encode("utf-32-le"), dtype="<u4") == ord(" ")
    cuts = [0]
    for (_, stop), (start, _) in zip(names, names[1:]):
        gap = blank[stop:start]
        runs = np.flatnonzero(np.diff(np.concatenate([[0], gap.view(np.int8), [0]])))
        if not len(runs):
            return None
        begins, lengths = runs[::2], runs[1::2] - runs[::2]
        cuts.append(stop + int(begins[np.argmax(lengths)]))
    return list(zip(cuts, [*cuts[1:], None]))


def file_head(path, limit=SAMPLE_BYTES):
    """The first ``limit`` bytes of a file, decompressed (:func:`open_decompressed`)."""
    with open_decompressed(path) as f:
        return f.read(limit)


@contextmanager
def open_decompressed(path):
    """The bytes of a file, decompressed as its first bytes say (a zip's one file)."""
    with open_stream(path) as (stream, _):
        yield stream


def first_lines(path, n_lines=SAMPLE_LINES + 1, limit=SAMPLE_BYTES, head=None):
    """The first lines of a file (within its first ``limit`` bytes, decompressed;
    ``head`` if read already) and its encoding
    (:func:`text_encoding`)."""
    if head is None:
        head = file_head(path, limit)
    encoding = head_encoding(head, limit)
    lines = re.split(r"\r\n|\r|\n", head.decode(encoding, errors="replace"))
    if lines and not lines[-1]:
        lines.pop()  # after the last line break
    if len(head) == limit and len(lines) > 1:
        lines.pop()  # cut by the limit
    return lines[:n_lines], encoding


def head_encoding(head, limit=SAMPLE_BYTES):
    """:func:`text_encoding` of a file whose first ``limit`` bytes (or all, when
    fewer) are ``head``."""
    return text_encoding(head, whole=len(head) < limit)


def text_encoding(head, whole=False):
    r"""The encoding of a text file whose first bytes are ``head`` (all of them when
    ``whole``): ``'utf-16'`` after a UTF-16 byte-order mark, ``'utf-8'`` when ``head``
    decodes as UTF-8 (a character cut at its end aside, unless ``whole``), else
    ``'cp1252'``.

    Examples
    --------
    >>> text_encoding("naïve,café\n".encode("utf-8")), text_encoding(b"caf\xe9\n")
    ('utf-8', 'cp1252')
    >>> text_encoding("a\tb\n".encode("utf-16"))
    'utf-16'
    >>> text_encoding(b"caf\xe9"), text_encoding(b"caf\xe9", whole=True)
    ('utf-8', 'cp1252')
    """
    if head.startswith(UTF16_BOMS):
        return "utf-16"
    try:
        head.decode("utf-8")
    except UnicodeDecodeError as error:
        if whole or error.reason != "unexpected end of data":  # not a character cut short
            return "cp1252"
    return "utf-8"
