"""The BEAR Fig. 1 reproduction script: its JSON, and the claims that hold on its quick run."""
import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
import reproduce_bear  # noqa: E402


@pytest.fixture(scope="module")
def result(tmp_path_factory):
    path = tmp_path_factory.mktemp("reproduce_bear") / "r.json"
    returned = reproduce_bear.main(["--quick", "--json", str(path)])
    written = json.loads(path.read_text())
    assert written["tables"] == returned["tables"]
    return written


def test_json_structure(result):
    assert {"command", "date", "machine", "versions"} <= set(result["provenance"])
    assert "--quick" in result["provenance"]["command"]
    assert len(result["tables"]) == 3
    for table in result["tables"]:
        assert set(table) == {"title", "columns", "rows"}
        assert table["rows"]
        assert all(len(row) == len(table["columns"]) for row in table["rows"])
    # Ours beside the paper's: every result table has a column for the paper.
    assert all(any("paper" in column for column in table["columns"])
               for table in result["tables"][1:])
    for key in ("agreements", "disagreements"):
        assert result[key] and all(isinstance(text, str) and text for text in result[key])
    # Every disagreement says why.
    assert all("Why" in text for text in result["disagreements"])


def test_bear_beats_mission_at_bear_step(result):
    # Fig. 1C: at eta0 = 0.1 BEAR recovers the support, while MISSION's first-order
    # steps are too large for it and its weights blow up.
    at_01 = result["raw"]["step_sweep"]["0.1"]
    assert at_01["BEAR"]["rate"] >= 0.5
    assert at_01["MISSION"]["successes"] == 0
    assert at_01["MISSION"]["l2_error"] > 10 * at_01["BEAR"]["l2_error"]
    assert result["steps"]["BEAR"] == 0.1


def test_mission_fails_far_from_its_peak(result):
    # MISSION's tiny steps leave the weights at about 0: no recovery.
    tiny = result["raw"]["step_sweep"]["1e-05"]["MISSION"]
    assert tiny["successes"] == 0
    assert tiny["l2_error"] == pytest.approx(reproduce_bear.EXPECTED_BETA_NORM, rel=0.1)


def test_bear_at_least_mission_along_compression(result):
    curve = result["raw"]["compression"]
    widths = sorted(curve, key=int)
    highest = curve[widths[0]]  # the narrowest sketch: the highest compression
    assert highest["BEAR"]["rate"] >= highest["MISSION"]["rate"]
    # Fig. 1B: BEAR's l2 error is the lower one at every compression factor.
    for cells in curve.values():
        assert cells["BEAR"]["l2_error"] < cells["MISSION"]["l2_error"]
        assert cells["BEAR"]["rate"] >= cells["MISSION at BEAR's step"]["rate"]
