"""The ``sklearn-sketch`` command line: demo, fit, select, predict, evaluate.

``_main`` parses the arguments, ``_commands`` runs them, ``_inputs`` turns the
input options into a stream of chunks, ``_model_file`` reads and writes model
files and ``_demo`` holds the demos. Heavy modules load only when a command
needs them, so ``--help`` and ``--version`` answer at once.
"""
from ._main import main, run

__all__ = ["main", "run", "run_dna_demo", "run_heavy_hitters_demo"]


def __getattr__(name):
    if name in ("run_dna_demo", "run_heavy_hitters_demo"):
        from . import _demo
        return getattr(_demo, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
