"""Every script in examples/ runs.

The gallery's ``plot_*.py`` scripts run in the documentation build
(``test_doc_site.py``, which fails on an example that raises); the others run here.
"""
import runpy
from pathlib import Path

import pytest

EXAMPLES = sorted(path for path in
                  (Path(__file__).resolve().parent.parent / "examples").glob("*.py")
                  if not path.name.startswith("plot_"))


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.name)
def test_example_runs(path, capsys):
    runpy.run_path(str(path), run_name="__main__")
    assert capsys.readouterr().out.strip(), f"{path.name} printed nothing"


def test_examples_found():
    assert len(EXAMPLES) >= 2
