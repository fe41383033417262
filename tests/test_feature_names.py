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


def test_memory_bytes_counts_the_names_kept_through_heap_churn():
    # remember_feature_names keeps the names of the keys in the heaps only; their
    # bytes (a key, an end offset and the UTF-8 name each) are in memory_bytes_.
    import scipy.sparse as sp

    rng = np.random.default_rng(0)
    est = MissionClassifier(20, sketch_width=512, random_state=0)
    for chunk in range(6):
        keys = rng.choice(10**6, size=(300, 5))
        X = sp.csr_matrix((np.ones(keys.size), keys.ravel(), np.arange(0, keys.size + 1, 5)),
                          shape=(300, 2**63 - 1))
        y = rng.integers(0, 2, 300)
        est.partial_fit(X, y, classes=[0, 1])
        named = {int(k): f"feature {k} of chunk {chunk} é" for k in np.unique(keys)}
        est.remember_feature_names(named)
        heap_keys = set(est.heaps_[0].keys().tolist())
        assert set(est._feature_names) == heap_keys
        assert all(name.startswith(f"feature {k} ") for k, name in est._feature_names.items())
    by_hand = sum(8 + 4 + len(name.encode()) for name in est._feature_names.values())
    assert est.memory_bytes_ == est._model_bytes() + by_hand
