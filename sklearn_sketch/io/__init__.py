"""Streaming readers: svmlight, Vowpal Wabbit, FASTA and FASTQ files in chunks.

Each reader is re-iterable (one pass over the file per iteration, e.g. one
epoch of ``partial_fit``) and holds one block of the file and one chunk at a
time. Malformed input raises :class:`ParseError`, which names the file and line.
:class:`ReadSampler` and :func:`sample_reads` cut reads of a fixed length from
long records such as genomes; :class:`ShuffledReader` mixes several readers.
:class:`KeyNames` holds the names of hashed keys (a Vowpal Wabbit chunk's).
"""
from ._key_names import KeyNames
from ._readers import (
    MAX_FEATURES,
    Chunk,
    FastaReader,
    FastqReader,
    ParseError,
    RecordTooLong,
    ReadChunk,
    SvmlightReader,
    VowpalWabbitReader,
    scan_labels,
)
from ._sampling import ReadSampler, sample_reads
from ._shuffle import ShuffledReader
from ._training import partial_fit_stream

__all__ = [
    "MAX_FEATURES",
    "Chunk",
    "FastaReader",
    "FastqReader",
    "KeyNames",
    "ParseError",
    "RecordTooLong",
    "ReadChunk",
    "ReadSampler",
    "ShuffledReader",
    "SvmlightReader",
    "VowpalWabbitReader",
    "partial_fit_stream",
    "sample_reads",
    "scan_labels",
]
