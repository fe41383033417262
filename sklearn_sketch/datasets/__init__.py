"""Small real data sets shipped with the package."""
from ._dna import load_dna_sample

__all__ = ["load_dna_sample"]
