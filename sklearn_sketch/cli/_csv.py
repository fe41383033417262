"""CSV files read by pandas, a zip archive's member as a stream.

pandas decompresses the member of a ``.zip`` whole into memory before it parses a
line, even for ``nrows=0`` or with ``chunksize``: 83 MiB at the peak and 0.12 s
for the header of the 23 MB ``flights.csv.zip``. Read as a stream, the header
takes 0.005 s and a chunked pass stays within its chunk, whatever the size of
the file. Other compressions (gz, bz2, xz) pandas streams already.

The column separator is read from the header line (a comma, a tab, a semicolon
or a bar, whichever it holds most; runs of spaces when it holds none of them and
they split the first lines alike), and spaces after it are skipped
(``a, b, c``: the names were `` b`` and `` c``). A file separated by other
than commas whose first rows write numbers with a decimal comma and none with a
point (a spreadsheet's export in much of Europe: ``27,8;13,9``) has those
numbers read with a point: as text, a column of temperatures was a
classification of 65 classes.

A file in fastText's format (each line ``__label__X`` and a text, as fastText,
and many corpora made for it, write them: review polarity, topic, language) is
read as a table of two columns, ``label`` and ``text`` (:func:`is_fasttext`); its
text is then a column of free text, read as its words (:mod:`._text`). A line
without a label has a missing one; a line of several labels is refused (a
classifier here learns one label an example).

The text encoding is read from the file's first MiB: UTF-16 when it opens with a
byte-order mark (a spreadsheet's "Unicode text" export), UTF-8 when it decodes
so, else Windows-1252 (a spreadsheet's CSV export on Windows, a corpus of
Latin-1 text: ``caf\\xe9``). A byte that its encoding cannot read further on
becomes U+FFFD (the same in every file, so training and predicting read it
alike). Read as UTF-8 alone, such a file stopped ``fit`` with pandas' "'utf-8'
codec can't decode byte 0x97 in position 110".
"""
import re
import zipfile
from contextlib import contextmanager

import numpy as np

#: Column separators a header line is read for, preferred in this order on a tie.
SEPARATORS = (",", "\t", ";", "|")
#: Lines after the header read for how the file writes its numbers.
SAMPLE_LINES = 100
#: Bytes at the start of a file read for its encoding and first lines.
SAMPLE_BYTES = 1 << 20
#: What starts a label in fastText's format, and the two columns its lines make.
FASTTEXT_LABEL = "__label__"
FASTTEXT_COLUMNS = ("label", "text")
_FASTTEXT_LINE = r"^\s*((?:__label__\S*\s+)*)(.*?)\s*$"
_DECIMAL_COMMA = r"^\s*([-+]?\d*),(\d+)\s*$"
_DECIMAL_POINT = r"^\s*[-+]?\d*\.\d+\s*$"


def read_csv(path, **kwargs):
    """``pandas.read_csv(path, **kwargs)``, streaming the one member of a ``.zip``.

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
    lines, encoding = first_lines(path)
    if is_fasttext(lines):
        return _fasttext(path, encoding, kwargs)
    kwargs.setdefault("encoding", encoding)
    kwargs.setdefault("encoding_errors", "replace")
    sep = kwargs.setdefault("sep", separator(lines))
    kwargs.setdefault("skipinitialspace", True)
    points = decimal_comma(lines, sep)
    if kwargs.get("chunksize") is not None:
        return _chunks(path, kwargs, points)
    with _opened(path) as source:
        frame = _read(source, kwargs)
    return _with_points(frame) if points else frame


def is_fasttext(lines):
    """Whether a file of first ``lines`` is in fastText's format: its first line that
    is not blank starts with ``__label__``.

    Examples
    --------
    >>> is_fasttext(["__label__pos a fine film", "__label__neg dull"])
    True
    >>> is_fasttext(["label,text", "pos,a fine film"])
    False
    """
    first = next((line for line in lines if line.strip()), "")
    return first.lstrip().startswith(FASTTEXT_LABEL)


def _fasttext(path, encoding, kwargs):
    """A fastText file as ``read_csv`` would return a table of its two columns."""
    columns = list(kwargs.get("usecols") or FASTTEXT_COLUMNS)
    unknown = [c for c in columns if c not in FASTTEXT_COLUMNS]
    if unknown:
        raise ValueError(f"Usecols do not match columns, columns expected but not found: "
                         f"{unknown} ({path} is in fastText's format: columns 'label' and "
                         "'text')")
    chunks = _fasttext_chunks(path, encoding, columns, kwargs.get("chunksize") or (1 << 62),
                              kwargs.get("nrows"))
    if kwargs.get("chunksize") is not None:
        return chunks
    import pandas as pd

    frames = list(chunks)
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(columns=columns)


def _fasttext_chunks(path, encoding, columns, chunksize, nrows):
    import io
    from itertools import islice

    import pandas as pd

    name = str(path).lower()
    opener = open
    for ending, module in ((".gz", "gzip"), (".bz2", "bz2"), (".xz", "lzma")):
        if name.endswith(ending):
            opener = __import__(module).open
    first_line = 1
    with (_member(path) if name.endswith(".zip") else opener(path, "rb")) as raw:
        text = io.TextIOWrapper(raw, encoding=encoding, errors="replace", newline=None)
        left = nrows if nrows is not None else 1 << 62
        while left > 0:
            lines = list(islice(text, min(chunksize, left)))
            if not lines:
                break
            parts = pd.Series(lines, dtype=object).str.extract(_FASTTEXT_LINE)
            labels = parts[0].str.split()
            several = np.flatnonzero(labels.str.len().to_numpy() > 1)
            if several.size:
                raise ValueError(
                    f"{path}, line {first_line + several[0]}: several labels "
                    f"({' '.join(labels.iloc[several[0]])}): a classifier here learns one "
                    "label an example")
            frame = pd.DataFrame({"label": labels.str[0].str[len(FASTTEXT_LABEL):],
                                  "text": parts[1]})
            blank = frame["text"].eq("") & frame["label"].isna()
            yield frame.loc[~blank.to_numpy(), columns].reset_index(drop=True)
            first_line += len(lines)
            left -= len(lines)


def _read(source, kwargs):
    import pandas as pd

    return pd.read_csv(source, **kwargs)


def _chunks(path, kwargs, points):
    with _opened(path) as source, _read(source, kwargs) as reader:
        for chunk in reader:
            yield _with_points(chunk) if points else chunk


@contextmanager
def _opened(path):
    """What pandas reads: the path, or a zip archive's one member open as a stream."""
    if not str(path).lower().endswith(".zip"):
        yield path
        return
    with _member(path) as member:
        yield member


def decimal_comma(lines, sep):
    """Whether the lines of a CSV file (its header first) write numbers with a
    decimal comma: separated by other than commas, some fields of the rows are
    digits with one comma (``-1,5``) and none are digits with a point."""
    if sep == "," or len(lines) < 2:
        return False
    import pandas as pd

    split = str.split if sep == r"\s+" else (lambda line: line.split(sep))
    fields = pd.Series([field for line in lines[1:] for field in split(line)])
    return bool(fields.str.match(_DECIMAL_COMMA).any()
                and not fields.str.match(_DECIMAL_POINT).any())


def _with_points(frame):
    """``frame`` with the text columns' decimal commas written as points."""
    from pandas.api.types import is_string_dtype

    text = [c for c in frame.columns if is_string_dtype(frame[c])]
    if not text:
        return frame
    return frame.assign(**{c: frame[c].str.replace(_DECIMAL_COMMA, r"\1.\2", regex=True)
                           for c in text})


@contextmanager
def _member(path):
    """The one file of a zip archive, open for reading (pandas' rule: exactly one)."""
    with zipfile.ZipFile(path) as archive:
        files = [info for info in archive.infolist()
                 if not info.is_dir() and not info.filename.startswith("__MACOSX/")]
        if len(files) != 1:
            raise ValueError(f"{path} must hold exactly one CSV file, it holds "
                             f"{[info.filename for info in files]}")
        with archive.open(files[0]) as member:
            yield member


def separator(lines):
    r"""The column separator of a CSV file of first ``lines`` (its header first): the
    one of :data:`SEPARATORS` the header holds most often outside double quotes (the
    earlier on a tie), unless most lines after it hold it as many times as the header
    does not, and runs of white space split every line alike (a header of tabs
    over rows aligned by spaces: ISLP's ``Auto.data``); else any run of white space,
    when it splits the header and every line after it into as many fields, more than
    one, a quoted field one field (R's ``write.table``, many ``.dat`` files); else a
    comma (one column).

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
    fields = {len(line.split()) for line in unquoted}
    spaced = len(fields) == 1 and fields.pop() > 1
    if counts[best]:
        sep = SEPARATORS[best]
        rows = unquoted[1:]
        # A header written with tabs over rows aligned with spaces reads by the rows.
        if spaced and sum(line.count(sep) != counts[best] for line in rows) > len(rows) / 2:
            return r"\s+"
        return sep
    return r"\s+" if spaced else ","


def first_lines(path, n_lines=SAMPLE_LINES + 1, limit=SAMPLE_BYTES):
    """The first lines of a file (within its first ``limit`` bytes, decompressed as
    pandas reads it, by its name's ending) and its encoding (:func:`text_encoding`)."""
    name = str(path).lower()
    opener = open
    for ending, module in ((".gz", "gzip"), (".bz2", "bz2"), (".xz", "lzma")):
        if name.endswith(ending):
            opener = __import__(module).open
    with (_member(path) if name.endswith(".zip") else opener(path, "rb")) as f:
        head = f.read(limit)
    encoding = text_encoding(head)
    lines = re.split(r"\r\n|\r|\n", head.decode(encoding, errors="replace"))
    if lines and not lines[-1]:
        lines.pop()  # after the last line break
    if len(head) == limit and len(lines) > 1:
        lines.pop()  # cut by the limit
    return lines[:n_lines], encoding


def text_encoding(head):
    r"""The encoding of a text file whose first bytes are ``head``: ``'utf-16'`` after
    a UTF-16 byte-order mark, ``'utf-8'`` when ``head`` decodes as UTF-8 (a character
    cut at its end aside), else ``'cp1252'``.

    Examples
    --------
    >>> text_encoding("naïve,café\n".encode("utf-8")), text_encoding(b"caf\xe9\n")
    ('utf-8', 'cp1252')
    >>> text_encoding("a\tb\n".encode("utf-16"))
    'utf-16'
    """
    if head[:2] in (b"\xff\xfe", b"\xfe\xff"):
        return "utf-16"
    try:
        head.decode("utf-8")
    except UnicodeDecodeError as error:
        if error.reason != "unexpected end of data":  # not a character cut at the end
            return "cp1252"
    return "utf-8"
