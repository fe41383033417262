"""Feature extraction from raw sequences: k-mer counts of DNA and RNA reads."""
from ._kmer import KmerVectorizer

__all__ = ["KmerVectorizer"]
