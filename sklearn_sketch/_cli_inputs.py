"""Inputs of the command line: svmlight, Vowpal Wabbit, FASTA/FASTQ or the embedded sample."""
import numpy as np

from .datasets import load_dna_sample
from .io import FastaReader, FastqReader, SvmlightReader, VowpalWabbitReader


def add_input_arguments(parser):
    """Add the options that name the input of ``fit``, ``predict`` and ``evaluate``."""
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument("--svmlight", metavar="PATH", help="svmlight / libsvm file")
    source.add_argument("--vw", metavar="PATH", help="Vowpal Wabbit text file")
    source.add_argument("--fasta", metavar="PATH:LABEL", action="append",
                        help="FASTA file whose reads all have LABEL (repeat per file)")
    source.add_argument("--fastq", metavar="PATH:LABEL", action="append",
                        help="FASTQ file whose reads all have LABEL (repeat per file)")
    source.add_argument("--sample", action="store_true",
                        help="the embedded DNA sample (train strains for fit, held-out "
                             "strains otherwise)")
    parser.add_argument("--n-reads", type=int, default=1000,
                        help="--sample: reads per species (default 1000)")
    parser.add_argument("--sample-seed", type=int, default=0,
                        help="--sample: seed of the sampling (default 0)")
    parser.add_argument("--chunk-rows", type=int, default=10000,
                        help="rows or reads per chunk (default 10000)")


def is_dna_input(args):
    """Whether the input is reads, to be counted into k-mers."""
    return bool(args.fasta or args.fastq or args.sample)


def _labelled_paths(specs):
    paths = {}
    for spec in specs:
        path, sep, label = spec.rpartition(":")
        if not sep or not path or not label:
            raise ValueError(f"expected PATH:LABEL, got {spec!r}")
        paths[path] = label
    return paths


def iter_chunks(args, vectorizer, split):
    """Yield ``(X, y)`` chunks of the input named by ``args``.

    Reads (FASTA, FASTQ, the sample) are counted with ``vectorizer``; labels of
    reads are the strings given on the command line, or the species names of
    the sample (``split`` says which strains).
    """
    if args.sample:
        data = load_dna_sample(args.n_reads, split=split, random_state=args.sample_seed)
        labels = np.asarray(data.target_names)[data.target]
        for start in range(0, len(data.reads), args.chunk_rows):
            stop = start + args.chunk_rows
            yield vectorizer.transform(data.reads[start:stop]), labels[start:stop]
    elif args.fasta or args.fastq:
        reader = (FastaReader if args.fasta else FastqReader)(
            _labelled_paths(args.fasta or args.fastq), args.chunk_rows)
        for chunk in reader:
            yield vectorizer.transform(chunk.sequences), chunk.labels
    else:
        reader = (SvmlightReader(args.svmlight, args.chunk_rows) if args.svmlight
                  else VowpalWabbitReader(args.vw, args.chunk_rows))
        for chunk in reader:
            yield chunk.X, chunk.y
