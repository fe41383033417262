"""benchmarks/write_results.py: the result tables come from the JSON, never typed by hand."""
import json
import sys
from pathlib import Path

import pytest

BENCHMARKS = Path(__file__).resolve().parent.parent / "benchmarks"
pytestmark = pytest.mark.skipif(not (BENCHMARKS / "write_results.py").is_file(),
                                reason="benchmarks/ is not beside the tests")


@pytest.fixture(scope="module")
def write_results():
    sys.path.insert(0, str(BENCHMARKS))
    try:
        import write_results
        yield write_results
    finally:
        sys.path.remove(str(BENCHMARKS))


def record(**extra):
    return {
        "provenance": {"command": "python benchmarks/bench_x.py --json x.json",
                       "date": "2026-11-24 12:00 UTC",
                       "machine": {"cpu": "CPU X", "cores": 2, "memory_gib": 23.5, "os": "Linux"},
                       "versions": {"python": "3.11.7", "sklearn-sketch": "0.1.0"}},
        "tables": [{"title": "Accuracy | bytes", "columns": ["estimator", "64KB", "1MB"],
                    "rows": [["AWM-Sketch", 0.5491, 0.7391], ["VW", None, 0.604]],
                    "note": "a note", "headline": True}],
        **extra,
    }


def test_the_committed_readmes_are_those_the_json_gives(write_results):
    # README.rst's results section and benchmarks/README.md, rebuilt from
    # benchmarks/results/*.json, equal what is committed.
    assert write_results.main(["--check"]) == 0


def test_tables_carry_every_number_and_how_it_was_measured(write_results, tmp_path):
    (tmp_path / "bench_x.json").write_text(json.dumps(record(
        disagreements=["ours is lower because of fewer seeds"])))
    results = write_results.load_results(tmp_path)
    markdown = write_results.markdown(results)
    page = write_results.rst_page(results)
    readme = write_results.readme_section(results)
    for text in (markdown, page, readme):
        assert "0.549" in text and "0.739" in text and "0.604" in text
        assert "python benchmarks/bench_x.py --json x.json" in text
        assert "2026-11-24 12:00 UTC" in text and "CPU X, 2 cores" in text
    assert "ours is lower because of fewer seeds" in markdown and "fewer seeds" in page
    assert readme.startswith(write_results.BEGIN) and readme.endswith(write_results.END)


def test_the_generated_rst_is_valid(write_results, tmp_path):
    docutils_core = pytest.importorskip("docutils.core")
    # Prose with reStructuredText's markup characters is escaped, not interpreted.
    (tmp_path / "bench_x.json").write_text(json.dumps(record(
        disagreements=["||w^K - w*|| / ||w*|| is 1.2; memory_bytes_ of `AWM` [sic]"])))
    results = write_results.load_results(tmp_path)
    for text in (write_results.rst_page(results), write_results.readme_section(results)):
        html = docutils_core.publish_string(text, writer="html",
                                            settings_overrides={"halt_level": 2,
                                                                "report_level": 2})
        assert b"<table" in html and b"0.549" in html
    page = docutils_core.publish_string(write_results.rst_page(results), writer="html",
                                        settings_overrides={"halt_level": 2, "report_level": 2})
    assert b"||w^K - w*|| / ||w*||" in page and b"memory_bytes_ of `AWM` [sic]" in page


def test_a_result_without_provenance_is_refused(write_results, tmp_path):
    bad = record()
    del bad["provenance"]
    (tmp_path / "bench_bad.json").write_text(json.dumps(bad))
    with pytest.raises(ValueError, match="bench_bad.json lacks"):
        write_results.load_results(tmp_path)


def test_the_readme_section_is_replaced_between_its_markers(write_results):
    text = f"intro\n\n{write_results.BEGIN}\nold\n{write_results.END}\n\nrest\n"
    new = write_results.replace_section(text, f"{write_results.BEGIN}\nnew\n{write_results.END}")
    assert new == f"intro\n\n{write_results.BEGIN}\nnew\n{write_results.END}\n\nrest\n"
    with pytest.raises(ValueError, match="markers"):
        write_results.replace_section("no markers", "x")
