"""Feature extraction: k-mer counts of reads, crosses of categorical attributes."""
from ._crossing import CrossNames, FeatureCrosser
from ._kmer import KmerVectorizer
from .._raw_features import NamedRows

__all__ = ["CrossNames", "FeatureCrosser", "KmerVectorizer", "NamedRows"]
