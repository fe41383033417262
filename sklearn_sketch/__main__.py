"""``python -m sklearn_sketch``: the command line."""
import sys

from .cli import main

sys.exit(main())
