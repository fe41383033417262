"""sklearn_sketch.dask.fit on a LocalCluster of two worker processes."""
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp

da = pytest.importorskip("dask.array")
distributed = pytest.importorskip("distributed")

from sklearn.datasets import dump_svmlight_file  # noqa: E402

from sklearn_sketch import MissionClassifier, WMSketchClassifier, average_estimators  # noqa: E402
from sklearn_sketch import dask as sk_dask  # noqa: E402
from sklearn_sketch._step_probe import train_share  # noqa: E402

sys.path.insert(0, str(Path(__file__).parent))
from _reference import assert_same_snapshot, snapshot  # noqa: E402


@pytest.fixture(scope="module")
def client():
    cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                       dashboard_address=None)
    with distributed.Client(cluster) as client:
        yield client
    cluster.close()


def data(n=4000, p=40, seed=0):
    rng = np.random.RandomState(seed)
    X = rng.normal(size=(n, p))
    return X, (X[:, 3] - 2 * X[:, 17] + 0.3 * rng.normal(size=n) > 0).astype(int)


def svmlight_halves(folder, X, y):
    """Two svmlight files of alternate rows; their paths."""
    paths = [str(folder / f"part{i}.svm") for i in range(2)]
    for i, path in enumerate(paths):
        dump_svmlight_file(X[i::2], y[i::2], path, zero_based=True)
    return paths


def mission(**params):
    return MissionClassifier(6, sketch_width=128, random_state=0, **params)


def test_one_partition_equals_a_plain_fit(client):
    X, y = data()
    model = sk_dask.fit(mission(), da.from_array(X, chunks=(len(y), 40)),
                        da.from_array(y, chunks=len(y)), client=client, epochs=3)
    plain = mission(max_iter=3).fit(X, y)
    assert_same_snapshot(snapshot(model), snapshot(plain))


def test_partitions_train_copies_that_are_averaged_by_rows(client):
    X, y = data()
    chunks = (1000, 1500, 1500)
    model = sk_dask.fit(mission(), da.from_array(X, chunks=(chunks, 40)),
                        da.from_array(y, chunks=(chunks,)), client=client, epochs=2)
    bounds = np.cumsum((0,) + chunks)
    # Every probe and copy reads the columns standardized by the whole data's mean and
    # standard deviation, computed on the cluster.
    statistics = (model.feature_mean_, model.feature_scale_)
    np.testing.assert_allclose(statistics[0], X.mean(axis=0), rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(statistics[1], X.std(axis=0), rtol=1e-12)

    def fresh():
        part = mission()
        part._preset_standardization = statistics
        return part

    # eta0='auto' is chosen once: each partition probes a third of the rows a fit
    # probes, and the mistakes summed over the partitions pick the step. Each copy
    # goes on from its probe's model with 3 times that step (3 copies are averaged).
    probes = [fresh()._step_probe(X[a:b], y[a:b], classes=[0, 1], share=3)
              for a, b in zip(bounds[:-1], bounds[1:])]
    counts = [train_share(p) for p in probes]
    winner = mission()._auto_choice([sum(c) for c in zip(*counts)])
    schedule, step = mission()._probe_candidates()[winner]
    local = None
    for _ in range(2):
        copies = []
        for (a, b), probe in zip(zip(bounds[:-1], bounds[1:]), probes):
            if local is None:
                part = fresh()
                part._preset_eta0, part._eta0_scale = (schedule, step), 3
                part._preset_probe = probe.kept(winner)
            else:
                part = average_estimators([local])
            copies.append(part.partial_fit(X[a:b], y[a:b], classes=[0, 1]))
        local = average_estimators(copies, weights=np.diff(bounds))
    assert model.eta0 == "auto" and model.eta0_ == 3 * step
    assert model.learning_rate == "auto" and model.learning_rate_ == schedule
    np.testing.assert_array_equal(model.sketches_[0].to_array(), local.sketches_[0].to_array())
    np.testing.assert_array_equal(model.coef_.toarray(), local.coef_.toarray())
    np.testing.assert_array_equal(model.intercept_, local.intercept_)
    assert model.score(X, y) > 0.9
    again = sk_dask.fit(mission(), da.from_array(X, chunks=(chunks, 40)),
                        da.from_array(y, chunks=(chunks,)), client=client, epochs=2)
    assert_same_snapshot(snapshot(again), snapshot(model))


def test_partitions_held_by_one_worker_train_on_every_worker(client):
    X, y = data()
    first = sorted(client.scheduler_info()["workers"])[0]
    X_one, y_one = client.persist([da.from_array(X, chunks=(1000, 40)),
                                   da.from_array(y, chunks=1000)], workers=[first])
    distributed.wait([X_one, y_one])
    holders = client.who_has([X_one, y_one])
    assert len(holders) == 8
    assert {w for ws in holders.values() for w in ws} == {first}
    with distributed.get_task_stream(client) as tasks:
        spread = sk_dask.fit(mission(), X_one, y_one, client=client, epochs=2)
    trained_on = {}
    for task in tasks.data:
        if str(task["key"]).startswith("_train_partition"):
            trained_on[task["worker"]] = trained_on.get(task["worker"], 0) + 1
    # 4 partitions, 2 epochs: each worker trains 2 partitions an epoch.
    assert sorted(trained_on.values()) == [4, 4]
    # Where a partition trains does not change the model.
    plain = sk_dask.fit(mission(), da.from_array(X, chunks=(1000, 40)),
                        da.from_array(y, chunks=1000), client=client, epochs=2)
    assert_same_snapshot(snapshot(spread), snapshot(plain))


def test_mostly_zero_wide_arrays_are_read_as_given_on_every_partition(client):
    # 1,500 columns of about 15 non-zeros a row: one fit reads them as given, and so
    # does every partition (the choice is made on the whole array).
    rng = np.random.RandomState(0)
    X = rng.binomial(1, 0.01, size=(800, 1500)).astype(float)
    y = (X[:, :40].sum(axis=1) > 0).astype(int)
    model = sk_dask.fit(mission(), da.from_array(X, chunks=(400, 1500)),
                        da.from_array(y, chunks=400), client=client)
    assert not hasattr(model, "feature_scale_")
    assert not hasattr(mission().fit(X, y), "feature_scale_")


def test_files_are_read_on_the_workers(client, tmp_path):
    X, y = data()
    paths = svmlight_halves(tmp_path, X, y)
    model = sk_dask.fit(WMSketchClassifier("16KB", random_state=0), paths, client=client,
                        classes=[0, 1], epochs=2)
    assert model.score(sp.csr_matrix(X), y) > 0.85  # columns are keys, as in the files
    with pytest.raises(ValueError, match="classes="):
        sk_dask.fit(WMSketchClassifier("16KB", random_state=0), paths, client=client)


def test_files_train_with_the_choice_of_the_first_files_first_chunk(client, tmp_path):
    # Copies that chose schedules of their own could not be averaged: one probe, on
    # the first file's first chunk, chooses for all (learning_rate and eta0 'auto').
    from itertools import islice

    from sklearn_sketch.io import SvmlightReader, partial_fit_stream

    X, y = data()
    paths = svmlight_halves(tmp_path, X, y)
    first = WMSketchClassifier("16KB", random_state=0)
    partial_fit_stream(first, islice(SvmlightReader(paths[0]), 1), classes=[0, 1])
    model = sk_dask.fit(WMSketchClassifier("16KB", random_state=0), paths, client=client,
                        classes=[0, 1])
    assert model.learning_rate_ == first.learning_rate_
    assert model.eta0_ == 2 * first.eta0_  # two copies: twice the step


def test_the_first_chunk_with_a_weight_chooses_the_step_of_files():
    """The choice for files is the probe of the first chunk with a weight, as
    ``partial_fit_stream`` would make it there (None when no chunk has one)."""
    from types import SimpleNamespace

    from sklearn_sketch.io import partial_fit_stream

    X, y = data()
    X = sp.csr_matrix(X)
    chunks = [SimpleNamespace(X=X[:500], y=y[:500], sample_weight=np.zeros(500)),
              SimpleNamespace(X=X[500:], y=y[500:], sample_weight=np.ones(3500))]
    for make in (mission, lambda: WMSketchClassifier("16KB", random_state=0)):
        model = make()
        step = sk_dask._first_chunk_step(model, ("file", "chunks"), [0, 1],
                                         lambda path: iter(chunks))
        streamed = partial_fit_stream(make(), chunks, classes=[0, 1])
        assert step == (streamed.learning_rate_, streamed.eta0_)
        assert "_state" not in model.__dict__
    assert sk_dask._first_chunk_step(mission(), ("file", "none"), [0, 1],
                                     lambda path: iter(chunks[:1])) is None


def test_bad_input_on_one_partition_names_the_partition(client):
    X, y = data()
    X[2500, 3] = np.nan
    with pytest.raises(ValueError, match="partition 2: .*NaN"):
        sk_dask.fit(mission(), da.from_array(X, chunks=(1000, 40)),
                    da.from_array(y, chunks=1000), client=client)


def _dying_reader(marker):
    """A reader whose worker process dies the first time it reads a file."""
    def read(path):
        from sklearn_sketch.io import SvmlightReader

        if not Path(marker).exists():
            Path(marker).write_text("died once")
            import os
            os._exit(1)
        return SvmlightReader(path)
    return read


def test_a_worker_killed_mid_epoch_is_retried_and_the_model_is_the_same(client, tmp_path):
    X, y = data()
    paths = svmlight_halves(tmp_path, X, y)
    plain = sk_dask.fit(mission(), paths, client=client, classes=[0, 1], epochs=2)
    killed = sk_dask.fit(mission(), paths, client=client, classes=[0, 1], epochs=2,
                         reader=_dying_reader(tmp_path / "marker"))
    assert (tmp_path / "marker").exists()
    assert_same_snapshot(snapshot(killed), snapshot(plain))
    client.wait_for_workers(2, timeout=60)


def test_dask_ml_incremental_feeds_partial_fit(client):
    wrappers = pytest.importorskip("dask_ml.wrappers")
    X, y = data()
    inc = wrappers.Incremental(mission(), scoring="accuracy")
    inc.fit(da.from_array(X, chunks=(1000, 40)), da.from_array(y, chunks=1000), classes=[0, 1])
    assert inc.estimator_.t_ == len(y) + 1
    assert inc.score(da.from_array(X, chunks=(1000, 40)), da.from_array(y, chunks=1000)) > 0.9


def test_a_dataframe_of_raw_samples_keeps_the_names(client):
    dd = pytest.importorskip("dask.dataframe")
    import pandas as pd

    rng = np.random.RandomState(0)
    y = rng.randint(0, 2, size=2000)
    tokens = [[f"w{j}" for j in rng.randint(0, 300, size=8)] + ["good" if label else "bad"]
              for label in y]
    import dask

    # Lists stay lists (dask would otherwise store object columns as strings).
    with dask.config.set({"dataframe.convert-string": False}):
        frame = dd.from_pandas(pd.DataFrame({"tokens": tokens, "label": y}), npartitions=2)
    model = sk_dask.fit(mission(), frame, "label", client=client, epochs=2)
    assert {"good", "bad"} <= set(model.selected_features_.names[:2])
    assert model.score(tokens, y) > 0.95
    numeric = dd.from_pandas(pd.DataFrame({"a": rng.normal(size=2000), "b": y * 2.0 - 1,
                                           "label": y}), npartitions=2)
    model = sk_dask.fit(mission(), numeric, "label", client=client)
    assert list(model.feature_names_in_) == ["a", "b"]
    # Its columns are standardized by the whole frame's statistics, on every partition.
    columns = numeric.compute()[["a", "b"]]
    np.testing.assert_allclose(model.feature_mean_, columns.mean().to_numpy(), rtol=1e-12,
                               atol=1e-15)
    np.testing.assert_allclose(model.feature_scale_, columns.std(ddof=0).to_numpy(),
                               rtol=1e-12)
    with pytest.raises(ValueError, match="label column"):
        sk_dask.fit(mission(), numeric, "missing", client=client)
    as_strings = dd.from_pandas(pd.DataFrame({"tokens": [" ".join(t) for t in tokens],
                                              "label": y}), npartitions=2)
    with pytest.raises(ValueError, match=r"partition \d: column 'tokens' holds strings"):
        sk_dask.fit(mission(), as_strings, "label", client=client)


def test_a_large_model_in_each_task_raises_no_dask_warning(client):
    # A warm-started model of 16 MiB goes to the scheduler once, inside its task (so
    # that a lost copy can be made again): Dask's advice against large graphs is not
    # the user's concern.
    from sklearn_sketch import FeatureHashingClassifier

    X, y = data()
    Xd, yd = da.from_array(X, chunks=(2000, X.shape[1])), da.from_array(y, chunks=2000)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        first = sk_dask.fit(FeatureHashingClassifier(sketch_width=2**22, random_state=0),
                            Xd, yd, client=client)
        model = sk_dask.fit(first, Xd, yd, client=client)
    assert model.sketches_[0].memory_bytes >= 16 * 2**20
    assert not [w for w in caught if "large graph" in str(w.message)]
