"""benchmarks/reproduce_wm_sketch.py: its JSON and the claims that hold on its quick setting."""
import importlib.util
import json
from pathlib import Path

import numpy as np
import pytest

from sklearn_sketch import AWMSketchClassifier, FeatureHashingClassifier, WMSketchClassifier

SCRIPT = Path(__file__).resolve().parent.parent / "benchmarks" / "reproduce_wm_sketch.py"


def load_script():
    spec = importlib.util.spec_from_file_location("reproduce_wm_sketch", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def script():
    return load_script()


def test_relative_error_is_one_without_collisions(script):
    # With a sketch far wider than the feature space every method is exact OGD,
    # so its top-K is the reference's: RelErr 1 (float32 cells aside).
    X, y = script.synthetic_stream(n=1500, d=3000, nnz=20)
    w_star, _ = script.online_reference(X, y, script.PAPER_LAMBDA)
    params = script.sgd_params(script.PAPER_LAMBDA)
    for estimator in (
            WMSketchClassifier(None, n_features_to_select=128, sketch_width=2**20,
                               sketch_depth=3, random_state=0, **params),
            AWMSketchClassifier(None, n_features_to_select=128, sketch_width=2**20,
                                sketch_depth=1, random_state=0, **params),
            FeatureHashingClassifier(sketch_width=2**20, random_state=0, **params)):
        keys, weights = script.top_k(estimator.fit(X, y), X.shape[1])
        assert script.relative_error(keys, weights, w_star) == pytest.approx(1.0, abs=1e-5)
    # Returning nothing scores ||w*|| / ||w* - w*^K||, the same as an all-zero w^K.
    assert script.zero_vector_error(w_star) == pytest.approx(
        script.relative_error(np.arange(128), np.zeros(128), w_star))


def test_quick_run_writes_tables_and_claims(script, tmp_path, capsys):
    try:
        script.locate_tarball()
    except FileNotFoundError:
        pytest.skip("20 Newsgroups tarball not available")
    path = tmp_path / "r.json"
    script.main(["--quick", "--json", str(path)])
    out = capsys.readouterr().out
    result = json.loads(path.read_text())

    assert {"command", "date", "machine", "versions"} <= set(result["provenance"])
    assert "--quick" in result["provenance"]["command"]
    assert len(result["tables"]) >= 4
    for table in result["tables"]:
        assert table["title"] in out
        assert table["rows"] and all(len(r) == len(table["columns"]) for r in table["rows"])
    assert any("paper" in c for c in result["tables"][0]["columns"])
    for key in ("agreements", "disagreements"):
        assert all(isinstance(s, str) and s for s in result[key])
    assert result["agreements"] and "Disagreements:" in out

    assert result["checks"]["reference_relerr"] == pytest.approx(1.0)
    assert result["checks"]["sklearn_sgd_cosine"] > 0.99
    news = result["results"]["20 Newsgroups, lambda=1e-06"]
    median = {b: {m: np.median(r["errors"]["online"]) for m, r in records.items()}
              for b, records in news.items()}
    for records in news.values():
        for record in records.values():
            # The true top-K is the best K-sparse vector: RelErr >= 1.
            assert min(record["errors"]["online"]) >= 1 - 1e-9
            assert record["cost_model_bytes"] <= 32 * 1024
    largest = median["32KB"]
    assert largest["AWM"] < largest["SS"] and largest["AWM"] < largest["Hash"]
    assert all(m["AWM"] < m["WM"] for m in median.values())
