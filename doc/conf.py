"""Sphinx configuration of the sklearn-sketch documentation.

Build with ``sphinx-build -W -b html doc doc/_build/html`` (``pip install ".[doc]"``).
The gallery runs ``examples/plot_*.py``; ``benchmarks/write_results.py`` turns the
committed benchmark JSON into the tables of :doc:`benchmarks`.
"""
import os
import sys
from pathlib import Path

import matplotlib

matplotlib.use("Agg")

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT / "benchmarks"))

import sklearn_sketch  # noqa: E402
from write_results import write_doc_page  # noqa: E402

project = "sklearn-sketch"
author = "the sklearn-sketch developers"
copyright = "2026, " + author
release = sklearn_sketch.__version__
version = release

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.intersphinx",
    "sphinx.ext.mathjax",
    "sphinx.ext.doctest",
    "numpydoc",
    "sphinx_gallery.gen_gallery",
]

exclude_patterns = ["_build", "auto_examples/*.ipynb", "auto_examples/*.py",
                    "auto_examples/*.zip", "auto_examples/*.md5", "auto_examples/*.json",
                    "sg_execution_times.rst"]
templates_path = ["_templates"]
html_theme = "pydata_sphinx_theme"
html_title = f"sklearn-sketch {release}"
html_theme_options = {
    "github_url": "https://github.com/sklearn-sketch/sklearn-sketch",
    "navigation_with_keys": False,
    "show_toc_level": 2,
}
html_sidebars = {"**": ["sidebar-nav-bs"]}

autosummary_generate = True
autodoc_typehints = "none"
numpydoc_show_class_members = False
numpydoc_class_members_toctree = False
numpydoc_xref_param_type = False

# No network in the build: cross-references to other projects stay plain text.
intersphinx_mapping = {}

sphinx_gallery_conf = {
    "examples_dirs": str(ROOT / "examples"),
    "gallery_dirs": "auto_examples",
    "filename_pattern": r"/plot_",
    "ignore_pattern": r"__init__\.py",
    "download_all_examples": False,
    "remove_config_comments": True,
    "abort_on_example_error": True,
    "show_memory": False,
    "plot_gallery": os.environ.get("SKLEARN_SKETCH_DOC_PLOTS", "True"),
    "within_subsection_order": "FileNameSortKey",
    "min_reported_time": 1,
    "backreferences_dir": "generated/backreferences",
    "doc_module": ("sklearn_sketch",),
}

write_doc_page(ROOT / "benchmarks" / "results", HERE / "_generated" / "results.rst")


def _skip_metadata_requests(app, what, name, obj, skip, options):
    """Leave out scikit-learn's generated ``set_*_request`` methods (its metadata routing)."""
    if name.startswith("set_") and name.endswith("_request"):
        return True
    return skip


def setup(app):
    app.connect("autodoc-skip-member", _skip_metadata_requests)
