"""The kind of an input file, read from its first bytes, for files named without
``--csv``, ``--svmlight``, ``--vw``, ``--fasta`` or ``--fastq``.

A new user types ``sklearn-sketch fit flights.csv --label origin --output m.skm``;
the file's first lines (decompressed) say which reader it needs:

- FASTA: the first line opens a record (``>``); GenBank and EMBL genomes
  (``LOCUS``, ``ID``) are read by the FASTA reader too.
- FASTQ: a record's four lines, ``@`` name, bases, ``+``.
- svmlight / libsvm: every line a label and ``index:value`` pairs (``qid:`` and a
  ``#`` comment allowed), at least one pair in the first lines.
- Vowpal Wabbit: every line a label part (empty, numbers, ``'tag``) then ``|`` and
  a namespace of features; a table separated by bars has a field, not a
  namespace, after its first bar.
- Anything else is a table (``--csv``: CSV and its dialects, JSON lines,
  Parquet, ARFF, fastText lines, a folder of documents).
"""
import os
import re

from ..io._readers import _FLAT_FILE_START
from ._csv import file_head, first_lines
from ._formats import table_format

#: The option that reads each kind.
OPTIONS = {"csv": "--csv", "svmlight": "--svmlight", "vw": "--vw", "fasta": "--fasta",
           "fastq": "--fastq"}
#: What each kind is called in messages.
NAMES = {"csv": "a table",
         "svmlight": "svmlight", "vw": "Vowpal Wabbit text", "fasta": "FASTA",
         "fastq": "FASTQ"}
_SVMLIGHT_LINE = re.compile(r"^[^\s:|#]+(?:\s+qid:\S+)?(?:\s+\d+:\S+)*\s*(?:#.*)?$")
_SVMLIGHT_PAIR = re.compile(r"\s\d+:\S")
#: A VW label part: numbers (a label, an importance, a base; ``1:0.5``, costs), the
#: last of them maybe a tag (``'doc2``, ``zebra``) or a named label.
_VW_NUMBER = r"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?(?::[-+]?[\d.eE+-]+)?"
_VW_LABEL = re.compile(rf"^\s*(?:{_VW_NUMBER}\s+)*[^\s|]*\s*$")


def input_kind(path):
    """``"csv"``, ``"svmlight"``, ``"vw"``, ``"fasta"`` or ``"fastq"``: the reader a
    file (or a folder of documents) needs, told from its first lines. A folder of
    documents whose first file holds reads (genomes in a folder per species) is
    ``"fasta"`` or ``"fastq"``.

    Raises ``ValueError`` for a binary file that is no table (a tar archive, a
    workbook), as ``--csv`` would.

    Examples
    --------
    >>> import os, tempfile
    >>> from sklearn_sketch.cli._detect import input_kind
    >>> folder = tempfile.mkdtemp()
    >>> def kind(text):
    ...     path = os.path.join(folder, "input")
    ...     with open(path, "w") as f:
    ...         _ = f.write(text)
    ...     return input_kind(path)
    >>> kind(">read 1\\nACGTACGT\\n"), kind("@r1\\nACGT\\n+\\nIIII\\n")
    ('fasta', 'fastq')
    >>> kind("1 3:0.5 17:1\\n0 qid:2 4:1 # a comment\\n")
    'svmlight'
    >>> kind("1 |words the cat\\n-1 'doc2 |words a dog |meta len:2\\n3 cat|f c\\n| d\\n")
    'vw'
    >>> kind("carrier|dest|delay\\nUA|IAH|12\\n"), kind("a,b\\n1,2\\n")
    ('csv', 'csv')
    """
    if os.path.isdir(path):
        return _folder_kind(path)
    head = file_head(path)
    lines, _ = first_lines(path, head=head)
    if table_format(head, lines, path) != "csv":
        return "csv"
    lines = [line for line in lines if line.strip()]
    if not lines:
        return "csv"
    first = lines[0].lstrip("\ufeff")
    # A GenBank or EMBL genome as the FASTA reader tells one (its first bytes).
    if first.startswith(">") or _FLAT_FILE_START.match(head[:64]):
        return "fasta"
    if first.startswith("@") and len(lines) >= 3 and lines[2].startswith("+"):
        return "fastq"
    rows = [line for line in lines if not line.lstrip().startswith("#")]
    if rows and all(_SVMLIGHT_LINE.match(line.strip()) for line in rows) and any(
            _SVMLIGHT_PAIR.search(line) for line in rows):
        return "svmlight"
    if rows and all(_vw_line(line) for line in rows):
        return "vw"
    return "csv"


def _folder_kind(folder, looked_at=16):
    """``"fasta"`` or ``"fastq"`` for a folder of which at least half the first
    documents (``looked_at``) hold reads, the kind most of them hold (a README or
    checksums may sit among genomes, and a post may open with a ``>`` quote), else
    ``"csv"`` (documents, read as text: a genome read as text was a word a file)."""
    from ._formats import document_files

    try:
        files = document_files(folder)[:looked_at]
    except ValueError:
        return "csv"  # the documents' reader names the problem
    kinds = []
    for _, path in files:
        try:
            kinds.append(input_kind(path))
        except (OSError, ValueError):
            kinds.append(None)
    reads = [kind for kind in kinds if kind in ("fasta", "fastq")]
    if 2 * len(reads) < len(kinds):
        return "csv"
    return max(("fasta", "fastq"), key=reads.count)


def _vw_line(line):
    """Whether ``line`` reads as a Vowpal Wabbit example: a label part, then ``|`` and
    a namespace (its name joined to the bar, or features after a space)."""
    label, bar, rest = line.partition("|")
    if not bar or not _VW_LABEL.match(label):
        return False
    return rest[:1].isspace() or " " in rest.strip() or not rest.strip()
