"""Feature spaces far beyond 2**31 columns: int64 keys end to end, no p-sized array."""
import numpy as np
import pytest
import scipy.sparse as sp

from sklearn_sketch import IHTClassifier, MissionClassifier

N_FEATURES = 2**40


@pytest.fixture(scope="module")
def huge_problem():
    # 60 distinct columns anywhere in [0, 2**40); the label is whether a sample
    # holds one of the first three.
    rng = np.random.default_rng(0)
    columns = np.unique(rng.integers(0, N_FEATURES, size=60))
    n_samples = 600
    rows = np.repeat(np.arange(n_samples), 4)
    cols = columns[rng.integers(0, columns.size, size=rows.size)]
    X = sp.csr_matrix((np.ones(rows.size), (rows, cols)), shape=(n_samples, N_FEATURES))
    X.sum_duplicates()
    informative = columns[:3]
    y = np.zeros(n_samples, dtype=int)
    y[np.unique(rows[np.isin(cols, informative)])] = 1
    return X, y, informative


@pytest.mark.parametrize("Estimator", [MissionClassifier, IHTClassifier])
def test_fit_predict_select_beyond_int32(huge_problem, Estimator):
    X, y, informative = huge_problem
    assert X.indices.dtype == np.int64
    clf = Estimator(3, random_state=0, learning_rate="constant", eta0=0.5, max_iter=10)
    if Estimator is MissionClassifier:
        clf.set_params(sketch_width=4096)
    clf.fit(X, y)
    assert clf.n_features_in_ == N_FEATURES
    assert clf.coef_.shape == (1, N_FEATURES)
    np.testing.assert_array_equal(clf.get_support(indices=True), np.sort(informative))
    assert clf.score(X, y) > 0.95
    names = clf.get_feature_names_out()
    assert names.tolist() == [f"x{c}" for c in np.sort(informative)]


def test_transform_and_mask_beyond_int32(huge_problem):
    X, y, informative = huge_problem
    clf = MissionClassifier(3, sketch_width=4096, random_state=0, learning_rate="constant",
                            eta0=0.5, max_iter=10).fit(X, y)
    selected = clf.get_support(indices=True)
    Xt = clf.transform(X)
    assert sp.issparse(Xt) and Xt.shape == (X.shape[0], selected.size)
    # Reference: entry (i, j) of the output is X[i, selected[j]].
    coo = X.tocoo()
    expected = np.zeros(Xt.shape)
    for j, column in enumerate(selected):
        hit = coo.col == column
        expected[coo.row[hit], j] = coo.data[hit]
    np.testing.assert_array_equal(Xt.toarray(), expected)
    with pytest.raises(ValueError, match="indices=True"):
        clf.get_support()
