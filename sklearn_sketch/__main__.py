"""``python -m sklearn_sketch``: the command line."""
from .cli import run

run()
