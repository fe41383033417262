"""Column names of a DataFrame come back for the selected features."""
import numpy as np
import pytest

from sklearn_sketch import AWMSketchClassifier, MissionClassifier, WMSketchClassifier

pd = pytest.importorskip("pandas")


@pytest.mark.parametrize("estimator", [
    MissionClassifier(2, sketch_width=256, random_state=0),
    AWMSketchClassifier("2KB", n_features_to_select=2, random_state=0),
    WMSketchClassifier("4KB", n_features_to_select=2, random_state=0),
], ids=lambda e: type(e).__name__)
def test_selected_column_names_from_a_dataframe(estimator):
    rng = np.random.RandomState(0)
    names = [f"kmer_{i}" for i in range(30)]
    X = pd.DataFrame(rng.normal(size=(2000, 30)), columns=names)
    y = (X["kmer_4"] - 2 * X["kmer_21"] > 0).astype(int)
    estimator.fit(X, y)
    assert list(estimator.feature_names_in_) == names
    assert sorted(estimator.get_feature_names_out()) == ["kmer_21", "kmer_4"]
    assert list(estimator.transform(X).shape) == [2000, 2]
