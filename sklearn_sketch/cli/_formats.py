"""Tables that are not CSV, read by ``--csv`` as CSV tables are: fastText lines, JSON
lines and Parquet files; other binary files refused by name.

Each reader returns what :func:`._csv.read_csv` returns for the same keywords
(``nrows``, ``usecols``, ``dtype=str``, ``chunksize``): a DataFrame, or an iterator
of them. With ``dtype=str`` a typed value is written as text (``1.5``, ``True``,
``2013-01-01 05:00:00``; a float column of whole numbers as integers, ``5``) and a
missing one stays missing, so the command line's rules for CSV columns (categories,
numbers, free text) read them alike.

- fastText's format (each line ``__label__X`` and a text, as fastText, and many
  corpora made for it, write them: review polarity, topic, language) is a table
  of two columns, ``label`` and ``text``; a line without a label has a missing
  one, and a line of several labels is refused (a classifier here learns one label
  an example).
- JSON lines (one object a line, ``{"carrier": "UA", "delay": 12}``: event and
  click logs), read by pandas in chunks; an object's keys are the columns, an
  object within it spread into ``key.inner`` columns.
- Parquet, read with pyarrow (installed with ``pip install
  "sklearn-sketch[dask]"`` or on its own) a row group batch at a time, only the
  columns asked for.
- ARFF (Weka's format, OpenML's files: ``@relation``, ``@attribute NAME TYPE``
  lines, then ``@data`` and its rows, dense as CSV with ``'`` quotes and ``?``
  for a missing value, or sparse, ``{index value, ...}``, a value left out being
  0, a nominal attribute's first value), its attributes the columns.
- A folder of documents, as scikit-learn's ``load_files`` reads one (20
  Newsgroups' ``20news-bydate-train``): a folder per class, a file per document,
  read as the columns ``label`` (the folder's name) and ``text`` (the file, in
  the encoding its bytes say); files directly in the folder have no label (to
  predict). Rows come in the order of the sorted names, class folders first.
- A tar archive, an Excel workbook or another binary file (a NUL byte in its
  first KiB) is refused with what it is; read as text, its first line's bytes
  were listed as column names.
"""
import io
import os
import re
from itertools import islice

import numpy as np

#: What starts a label in fastText's format, and the two columns its lines make.
FASTTEXT_LABEL = "__label__"
FASTTEXT_COLUMNS = ("label", "text")
_FASTTEXT_LINE = r"^\s*((?:__label__\S*\s+)*)(.*?)\s*$"
#: Magic bytes of formats told from a file's first bytes: Parquet, and the
#: workbooks .xls (OLE2) and .xlsx (a zip).
PARQUET_MAGIC = b"PAR1"
_EXCEL_MAGIC = (b"\xd0\xcf\x11\xe0", b"PK\x03\x04")
#: The byte-order marks that open UTF-16 text (little- and big-endian).
UTF16_BOMS = (b"\xff\xfe", b"\xfe\xff")
_ARFF_ATTRIBUTE = re.compile(r"""\s*@attribute\s+(?:'([^']*)'|"([^"]*)"|(\S+))\s+(.+)$""",
                             re.IGNORECASE)
_QUOTED = {q: re.compile(rf"(?:^|,)\s*{q}", re.MULTILINE) for q in "'\""}
#: An ARFF file: comment lines (``%``) and blank ones, then ``@relation``.
_ARFF_START = re.compile(rb"(?:[ \t]*(?:%[^\n]*)?\r?\n)*[ \t]*@relation\b", re.IGNORECASE)
#: Cells of an ARFF chunk's table at most (rows times attributes).
ARFF_CELLS = 1 << 23
#: JSON lines parsed at a time, and read for the columns (the keys of the first lines).
JSON_CHUNK_ROWS = 50_000
JSON_HEADER_ROWS = 1000


def table_format(head, lines, path):
    """``"parquet"``, ``"json"``, ``"fasttext"`` or ``"csv"`` for a file whose first
    bytes are ``head`` (decompressed) and first ``lines``; raises ``ValueError`` for
    a tar archive, a spreadsheet workbook or another binary file.

    Examples
    --------
    >>> table_format(b"PAR1\\x15\\x04", [], "t.parquet")
    'parquet'
    >>> table_format(b'{"a": 1}\\n', ['{"a": 1}'], "t.jsonl")
    'json'
    >>> table_format(b"__label__pos fine\\n", ["__label__pos fine"], "t.txt")
    'fasttext'
    >>> table_format(b"% iris\\n@RELATION iris\\n", ["% iris", "@RELATION iris"], "t")
    'arff'
    >>> table_format(b"a,b\\n1,2\\n", ["a,b", "1,2"], "t.csv")
    'csv'
    """
    if head.startswith(PARQUET_MAGIC):
        return "parquet"
    if head[257:262] == b"ustar":
        raise ValueError(f"{path} is a tar archive: extract it (tar xf {path}) and give the "
                         "file, or the folder of documents (a folder per class), it holds")
    if head.startswith(_EXCEL_MAGIC):
        raise ValueError(f"{path} is a spreadsheet workbook, not a table of text: save "
                         "its sheet as CSV (or Parquet) and train on that")
    if b"\x00" in head[:1024] and not head.startswith(UTF16_BOMS):
        raise ValueError(f"{path} is not a text file (it holds NUL bytes; the compressions "
                         "read are gzip, bzip2, xz and a zip archive of one file), nor Parquet")
    if _ARFF_START.match(head):
        return "arff"
    first = next((line.strip() for line in lines if line.strip()), "")
    if first.startswith("{") and first.endswith("}"):
        return "json"
    if first.startswith(FASTTEXT_LABEL):
        return "fasttext"
    return "csv"


def read_table(kind, path, opened, encoding, kwargs):
    """The table of a file of format ``kind`` (not CSV) as ``read_csv(**kwargs)``
    returns it; ``opened(path)`` opens its bytes, decompressed."""
    reader = {"fasttext": _fasttext_chunks, "json": _json_chunks, "arff": _arff_chunks,
              "parquet": _parquet_chunks, "documents": _document_chunks}[kind]
    chunks = reader(path, opened, encoding, kwargs)
    if kwargs.get("chunksize") is not None:
        return chunks
    import pandas as pd

    frames = list(chunks)
    if not frames:
        return pd.DataFrame(columns=list(kwargs.get("usecols") or ()))
    return pd.concat(frames, ignore_index=True) if len(frames) > 1 else frames[0]


def _rows_at_a_time(kwargs):
    """Rows of each chunk, and the rows to read in all."""
    nrows = kwargs.get("nrows")
    return kwargs.get("chunksize") or 1 << 16, (1 << 62) if nrows is None else nrows


def _as_asked(frame, columns, kwargs, path):
    """``frame``'s ``columns`` (those asked for: all by default), as text with
    ``dtype=str`` (missing values kept missing)."""
    unknown = [c for c in columns if c not in frame.columns]
    if unknown:
        raise ValueError(f"Usecols do not match columns, columns expected but not found: "
                         f"{unknown} (in {path})")
    frame = frame[list(columns)]
    if kwargs.get("dtype") is str:
        frame = frame.apply(_as_text)
    return frame.reset_index(drop=True)


def _as_text(column):
    """A column as text; a float column of whole numbers as integers (JSON's numbers
    of a column with nulls, Parquet's too, arrive as floats: ``5`` read ``5.0``)."""
    present = column.notna().to_numpy()
    if column.dtype.kind == "f":
        values = column.to_numpy()[present]
        if np.array_equal(values, np.round(values)) and np.abs(values).max(initial=0) < 2**53:
            column = column.astype("Int64")
    text = column.astype(str).astype(object)
    return text.where(present, np.nan)


def _label_and_text(kwargs, path, what):
    """The columns asked of a table of the two columns ``label`` and ``text`` (a
    fastText file or a folder of documents, ``what``)."""
    columns = list(kwargs.get("usecols") or FASTTEXT_COLUMNS)
    unknown = [c for c in columns if c not in FASTTEXT_COLUMNS]
    if unknown:
        raise ValueError(f"Usecols do not match columns, columns expected but not found: "
                         f"{unknown} ({path} is {what}: columns 'label' and 'text')")
    return columns


def _fasttext_chunks(path, opened, encoding, kwargs):
    import pandas as pd

    columns = _label_and_text(kwargs, path, "in fastText's format")
    size, left = _rows_at_a_time(kwargs)
    first_line = 1
    with opened(path) as raw:
        text = io.TextIOWrapper(raw, encoding=encoding, errors="replace", newline=None)
        while True:
            lines = list(islice(text, min(size, left)))
            if not lines:
                if first_line == 1:  # no line: the columns only
                    yield pd.DataFrame(columns=columns)
                return
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
            blank = frame["text"].eq("").to_numpy() & frame["label"].isna().to_numpy()
            yield _as_asked(frame[~blank], columns, kwargs, path)
            first_line += len(lines)
            left -= len(lines)
            if left <= 0:
                return


def arff_attributes(lines, path):
    """``(names, defaults)`` of an ARFF header's ``@attribute`` lines (``lines``
    up to ``@data``): each name, and the value a sparse row's left-out entry takes
    (``"0"``, a nominal attribute's first value).

    Examples
    --------
    >>> arff_attributes(["@relation r", "@attribute 'sepal length' REAL",
    ...                  "@attribute class {'Iris setosa', versicolor}"], "iris.arff")
    (['sepal length', 'class'], ['0', 'Iris setosa'])
    """
    names, defaults = [], []
    for line in lines:
        match = _ARFF_ATTRIBUTE.match(line)
        if match is None:
            continue
        name = next(part for part in match.group(1, 2, 3) if part is not None)
        kind = match.group(4).strip()
        if kind.lower().startswith("relational"):
            raise ValueError(f"{path}: attribute {name!r} is relational (a table in a "
                             "cell), which is not read here")
        if kind.startswith("{"):
            first = kind[1:].split(",")[0].strip().rstrip("}").strip()
            defaults.append(first[1:-1] if first[:1] in "'\"" and len(first) > 1 else first)
        else:
            defaults.append("0")
        names.append(name)
    if not names:
        raise ValueError(f"{path}: an ARFF file without an @attribute line")
    return names, defaults


def _arff_chunks(path, opened, encoding, kwargs):
    import pandas as pd

    size, left = _rows_at_a_time(kwargs)
    with opened(path) as raw:
        text = io.TextIOWrapper(raw, encoding=encoding, errors="replace", newline=None)
        header = []
        for line in text:
            if line.strip().lower().startswith("@data"):
                break
            header.append(line.strip())
        names, defaults = arff_attributes(header, path)
        columns = list(kwargs.get("usecols") or names)
        # The columns alone (an unknown name raises here), for a file of no row.
        columns_only = _as_asked(pd.DataFrame(columns=names), columns, kwargs, path)
        position = dict(zip(names, range(len(names))))
        asked = np.array([position[column] for column in columns], dtype=np.int64)
        # A chunk is parsed as a dense table: at most ARFF_CELLS cells (a sparse file
        # of many attributes, text's words, would fill the memory).
        size = max(1, min(size, ARFF_CELLS // len(names)))
        if left == 0:
            yield columns_only
            return
        empty = True
        while left > 0:
            lines = pd.Series(list(islice(text, min(size, left))), dtype=object)
            if lines.empty:
                break
            # Blank lines and comment lines (%) are not rows.
            lines = lines[lines.str.strip().ne("") & ~lines.str.lstrip().str.startswith("%")]
            if lines.empty:
                continue
            lines = lines.tolist()
            if lines[0].lstrip().startswith("{"):
                frame = _sparse_arff(lines, defaults, path, columns, asked)
            else:
                block = "".join(lines)
                # Values are quoted by ' (Weka) or " (OpenML's exports), a file one way.
                quote = ('"' if len(_QUOTED['"'].findall(block)) > len(_QUOTED["'"].findall(block))
                         else "'")
                frame = _dense_arff(block, names, quote, path)
            left -= len(lines)
            empty = False
            yield _as_asked(frame, columns, kwargs, path)
        if empty:
            yield columns_only


def _dense_arff(block, names, quote, path):
    """The rows of dense ARFF text ``block`` as a table; a row of more values than
    attributes is refused (pandas would read its first values as an index, or drop
    its last), one of fewer has its last values missing (as a CSV row)."""
    import pandas as pd

    extra = "\x00more"
    try:
        frame = pd.read_csv(io.StringIO(block), header=None, names=[*names, extra],
                            index_col=False, quotechar=quote, escapechar="\\",
                            skipinitialspace=True, keep_default_na=False,
                            na_values=["?", ""], dtype=str)
    except (ValueError, pd.errors.ParserError) as exc:
        raise ValueError(f"{path}: its rows do not read as its {len(names)} @attribute "
                         f"lines declare ({exc})") from exc
    longer = frame[extra].notna().to_numpy()
    if longer.any():
        row = block.splitlines()[int(np.flatnonzero(longer)[0])]
        raise ValueError(f"{path}: a row holds more values than its {len(names)} @attribute "
                         f"lines declare: {row[:80]!r}")
    return frame.drop(columns=extra)


def _sparse_arff(lines, defaults, path, columns, asked):
    """The rows of sparse ARFF ``lines`` (``{index value, ...}``) as a table of
    ``columns``, the attributes at indices ``asked`` (the others' entries dropped);
    ``defaults`` holds every attribute's left-out value."""
    import pandas as pd

    entries = (pd.Series(lines, dtype=object).str.strip().str.strip("{}")
               .str.split(",").explode().str.strip())
    entries = entries[entries.ne("") & entries.notna()]
    parts = entries.str.split(n=1, expand=True)
    if parts.shape[1] < 2 or parts[1].isna().any():
        raise ValueError(f"{path}: a sparse ARFF row holds an entry without a value")
    index = pd.to_numeric(parts[0], errors="coerce").to_numpy()
    if np.isnan(index).any() or (index < 0).any() or (index >= len(defaults)).any():
        raise ValueError(f"{path}: a sparse ARFF entry's index is not one of the "
                         f"{len(defaults)} attributes'")
    position = np.full(len(defaults), -1)
    position[asked] = np.arange(len(asked))
    at = position[index.astype(np.int64)]
    kept = at >= 0
    table = np.tile(np.array(defaults, dtype=object)[asked], (len(lines), 1))
    values = parts[1].str.strip().str.strip("'").to_numpy(dtype=object)[kept]
    values[values == "?"] = np.nan
    table[entries.index.to_numpy()[kept], at[kept]] = values
    return pd.DataFrame(table, columns=columns)


def document_files(folder):
    """``(label, path)`` of a folder's documents: each class folder's files (label:
    the folder's name), then the files outside them (label None), in sorted order.

    Examples
    --------
    >>> import os, tempfile
    >>> folder = tempfile.mkdtemp()
    >>> for name in ("b/2.txt", "b/1.txt", "a/x.txt", "new.txt"):
    ...     os.makedirs(os.path.dirname(os.path.join(folder, name)), exist_ok=True)
    ...     _ = open(os.path.join(folder, name), "w").write("text")
    >>> [(label, os.path.relpath(p, folder)) for label, p in document_files(folder)]
    [('a', 'a/x.txt'), ('b', 'b/1.txt'), ('b', 'b/2.txt'), (None, 'new.txt')]
    """
    entries = sorted(os.scandir(folder), key=lambda entry: entry.name)
    files = []
    for entry in entries:
        if entry.is_dir() and not entry.name.startswith("."):
            files += [(entry.name, inner.path)
                      for inner in sorted(os.scandir(entry.path), key=lambda e: e.name)
                      if inner.is_file() and not inner.name.startswith(".")]
    files += [(None, entry.path) for entry in entries
              if entry.is_file() and not entry.name.startswith(".")]
    if not files:
        raise ValueError(f"{folder} holds no document: a folder of documents holds a "
                         "folder per class, a file per document")
    return files


def _document_chunks(path, opened, encoding, kwargs):
    """The documents of a folder, ``size`` files read at a time."""
    import pandas as pd

    from ._csv import open_decompressed, text_encoding

    columns = _label_and_text(kwargs, path, "a folder of documents")
    size, left = _rows_at_a_time(kwargs)
    files = document_files(path)[:left]
    if not files:
        yield pd.DataFrame(columns=columns)
        return
    for start in range(0, len(files), size):
        part = files[start:start + size]
        texts = []
        for _, name in part:   # one read per file: the folder's layout
            with open_decompressed(name) as f:   # post.txt.gz was its gzip bytes
                raw = f.read()
            texts.append(raw.decode(text_encoding(raw, whole=True), errors="replace"))
        frame = pd.DataFrame({"label": pd.Series([label for label, _ in part], dtype=object),
                              "text": pd.Series(texts, dtype=object)})
        yield frame[columns]


def _flattened(frame):
    """``frame`` with each column of JSON objects spread into a column per key, named
    ``column.key`` (objects within them alike): a click log's ``{"user": {"id": 7,
    "country": "FR"}}`` is the columns ``user.id`` and ``user.country``, not one
    category per distinct object. A value that is not an object leaves its row's
    keys missing.

    Examples
    --------
    >>> import pandas as pd
    >>> frame = pd.DataFrame({"a": [1, 2], "u": [{"id": 7, "geo": {"cc": "FR"}}, None]})
    >>> _flattened(frame).to_dict("list")
    {'a': [1, 2], 'u.id': [7.0, nan], 'u.geo.cc': ['FR', nan]}
    """
    import pandas as pd

    nested = [column for column in frame.columns if frame[column].dtype == object
              and frame[column].dropna().head(JSON_HEADER_ROWS)
              .map(lambda value: isinstance(value, dict)).any()]
    if not nested:
        return frame
    parts = [frame.drop(columns=nested)]
    for column in nested:
        # pandas' json_normalize reads a record at a time, as read_json built them.
        objects = [value if isinstance(value, dict) else {} for value in frame[column]]
        spread = pd.json_normalize(objects, sep=".").add_prefix(f"{column}.")
        spread.index = frame.index
        parts.append(spread)
    return pd.concat(parts, axis=1)


def _json_chunks(path, opened, encoding, kwargs):
    import pandas as pd

    size, left = _rows_at_a_time(kwargs)
    asked = kwargs.get("usecols")
    # pandas parses every key of a line: it reads JSON_CHUNK_ROWS lines at a time and
    # keeps the columns asked for (a chunk of a million rows of every key held 1 GB).
    inner = JSON_HEADER_ROWS if left == 0 else min(size, left, JSON_CHUNK_ROWS)
    kept, n_kept = [], 0
    with opened(path) as raw:
        text = io.TextIOWrapper(raw, encoding=encoding, errors="replace", newline=None)
        for frame in pd.read_json(text, lines=True, chunksize=inner, dtype=False):
            frame = _flattened(frame)
            if left == 0:  # the columns: the keys of the first lines
                yield _as_asked(frame.iloc[:0], asked or list(frame.columns), kwargs, path)
                return
            frame = frame.iloc[:left]
            # A key a line leaves out is a missing value (logs' optional fields).
            kept.append(_as_asked(frame.reindex(columns=asked or list(frame.columns)),
                                  asked or list(frame.columns), kwargs, path))
            n_kept += len(frame)
            left -= len(frame)
            if n_kept >= size or left <= 0:
                yield pd.concat(kept, ignore_index=True) if len(kept) > 1 else kept[0]
                kept, n_kept = [], 0
            if left <= 0:
                return
    if kept:
        yield pd.concat(kept, ignore_index=True) if len(kept) > 1 else kept[0]
    elif left > 0 and not asked:
        yield pd.DataFrame()


def _parquet_chunks(path, opened, encoding, kwargs):
    try:
        import pyarrow.parquet as pq
    except ImportError:
        raise ValueError(f"{path} is a Parquet file: reading it needs pyarrow (pip install "
                         "pyarrow)") from None
    size, left = _rows_at_a_time(kwargs)
    table = pq.ParquetFile(path)
    # pandas' index, when written, is a column of its own: not one of the table's.
    names = [name for name in table.schema_arrow.names if not name.startswith("__index_level_")]
    columns = list(kwargs.get("usecols") or names)
    unknown = [c for c in columns if c not in names]
    if unknown:
        raise ValueError(f"Usecols do not match columns, columns expected but not found: "
                         f"{unknown} (in {path})")
    if left == 0 or table.metadata.num_rows == 0:
        yield _as_asked(table.schema_arrow.empty_table().select(columns).to_pandas(), columns,
                        kwargs, path)
        return
    for batch in table.iter_batches(batch_size=min(size, left), columns=columns):
        frame = batch.to_pandas().iloc[:left]
        yield _as_asked(frame, columns, kwargs, path)
        left -= len(frame)
        if left <= 0:
            return
