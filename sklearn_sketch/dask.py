"""Training on a Dask cluster: a copy of the model per partition per epoch, then averaged.

Needs ``dask[array]`` and ``distributed`` (``pip install "sklearn-sketch[dask]"``).
"""
import copy
import numbers
import os
import warnings

import numpy as np

from ._merge import average_estimators

__all__ = ["fit"]


def fit(estimator, X, y=None, *, client=None, epochs=1, classes=None, reader=None,
        retries=2):
    """Train ``estimator`` on data spread over a Dask cluster, by parameter mixing.

    Each epoch, each partition trains a copy of the current model for one
    pass where the partition lives (``partial_fit``, or
    :func:`~sklearn_sketch.io.partial_fit_stream` over a file), and a worker
    averages the copies (:func:`~sklearn_sketch.average_estimators`, weighted
    by rows) into the next epoch's model. Only models travel, from worker to
    worker (the client sends the first and receives the last): the data
    stays on the workers (a dask array is persisted there once). Each
    partition trains on a worker that holds it, at most ``ceil(n_partitions /
    n_workers)`` partitions a worker: a worker holding more gives the rest to
    the others once (``dask.array.from_array`` puts every block on one
    worker, which would otherwise train them one after the other). Addresses
    come only from ``client``, so the same call runs on a ``LocalCluster``
    and on a real cluster. A task whose worker dies is run again
    (``retries``); the partitions' models are averaged in partition order,
    so the same ``random_state`` and the same partitions give the same model.
    From an unfitted model with ``eta0='auto'``, the step is chosen once:
    each partition probes its share of the rows a single fit would probe
    (a ``1/n_partitions`` part, where the partition lives), the candidates'
    mistakes are summed over the partitions, and every copy of the first
    epoch goes on from its own probe's model where the probe kept one; a
    single partition chooses it in its own ``partial_fit``, as a plain fit
    does. Files take the choice of a probe of the first file's first chunk
    (learning_rate='auto''s schedule too). With ``w`` partitions and ``eta0='auto'``, a
    classifier's copies train with ``w`` times the step so chosen (the
    result's ``eta0_``): while the updates are small, an average of ``w``
    copies that each took ``1/w`` of the steps moves as one model with a
    ``w`` times smaller step would, and one pass of that lags behind a plain
    fit (20 Newsgroups words, after 2 epochs: 2 partitions 2-3 accuracy
    points under, 8 partitions 11-12; with the scaled step 0.1-1.2 and
    0-2.4, see the parallel guide). A given number ``eta0`` is used as it is.
    The floor of the 'normalized' step (``norm_floor_``) is likewise each
    partition's own in the first epoch, the first partition's after it. Dense
    columns that a new model standardizes (``feature_mean_``,
    ``feature_scale_``) take the whole data's mean and standard deviation,
    computed on the cluster, so every copy reads the same columns. Sparse
    tables (at most 1,000 columns) and the measured features of wider sparse
    blocks and files are scaled by each partition's own statistics in the
    first epoch, and the average reads them after it (see
    :func:`~sklearn_sketch.average_estimators`; partitions that read their
    columns differently are refused there).

    Parameters
    ----------
    estimator : estimator of sklearn_sketch
        Trained from where it is (a new copy when unfitted); it is not changed.
        Without an integer ``random_state`` one is drawn here, so that every
        copy hashes alike.
    X : dask array of shape (n_samples, n_features), dask DataFrame or list of str
        Rows partitioned by their chunks (one chunk across the columns); a
        dask DataFrame, one partition each, whose column ``y`` holds the
        targets and whose other columns are the features (numeric columns,
        named by ``feature_names_in_``, or a single column of token lists,
        raw samples whose names are kept: build it with dask's
        ``dataframe.convert-string`` set to False, or dask stores the lists
        as strings); or paths of files the workers can read, one partition
        each.
    y : dask array of shape (n_samples,) or str, default=None
        Targets, chunked as ``X``'s rows; the label column of a DataFrame;
        None for files (they hold labels).
    client : distributed.Client, default=None
        The cluster; the current client by default.
    epochs : int, default=1
        Passes over the data.
    classes : array-like, default=None
        Every class (classifiers); computed from a dask ``y`` when not given,
        required for files.
    reader : callable, default=None
        ``reader(path)`` returns the chunks of a file (see
        :mod:`sklearn_sketch.io`); by default :class:`~sklearn_sketch.io.VowpalWabbitReader`
        for ``.vw`` (names kept) and :class:`~sklearn_sketch.io.SvmlightReader`
        otherwise. It runs on the workers.
    retries : int, default=2
        Times a partition's task is run again after its worker died.

    Returns
    -------
    estimator : estimator
        The trained model (a new object).

    Raises
    ------
    ValueError
        Input that cannot be partitioned; a partition's error reaches the
        client with the partition's number.

    Examples
    --------
    >>> import dask.array as da
    >>> from distributed import Client, LocalCluster
    >>> from sklearn_sketch import MissionClassifier
    >>> from sklearn_sketch import dask as sk_dask
    >>> client = Client(LocalCluster(n_workers=2, processes=False, dashboard_address=None))
    >>> X = da.random.RandomState(0).normal(size=(4_000, 50), chunks=(1_000, 50))
    >>> y = (X[:, 3] > 0).astype(int)
    >>> model = sk_dask.fit(MissionClassifier(4, random_state=0), X, y, epochs=3)
    >>> int(model.selected_features_.keys[0])  # the feature that decides y
    3
    >>> client.close()
    """
    from distributed import get_client

    client = client if client is not None else get_client()
    if isinstance(epochs, bool) or not isinstance(epochs, numbers.Integral) or epochs < 1:
        raise ValueError(f"epochs must be a positive integer, got {epochs!r}")
    model = _start_model(estimator)
    parts, classes, columns = _partitions(client, model, X, y, classes)
    if columns is not None and len(parts) > 1 and "_state" not in model.__dict__ \
            and model._scales_columns():
        statistics = _column_statistics(client, columns)
        if statistics is not None:
            model._preset_standardization = statistics
    # The model is a task of its own (its copy travels once, to one worker), and so is
    # each epoch's average: models go from worker to worker, and only the last one to
    # the client. A worker that dies takes no model with it for good: the scheduler
    # holds every task's inputs and runs again what was lost.
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="Sending large graph", category=UserWarning)
        current = client.submit(_same, model, pure=False, retries=retries)
    # eta0='auto' is chosen once for every partition: each probes its own share of
    # the rows one fit would probe, where it lives, and the mistakes summed over the
    # partitions pick the step. The probe's cost (at least 2,000 rows, up to six
    # candidates) then falls with the workers instead of holding them all back. A
    # share stops the candidates that trail on its own rows and the smaller steps
    # past its best, but none at the bar (train_share says why); stopping at the
    # bar on summed counts took a round trip per quarter of the probe, which cost DNA
    # reads more than it saved on 20 Newsgroups. A partition whose probe kept the
    # chosen step's model goes on from it, as a plain fit goes on from its probe (the
    # probe stays on its worker, where the partition's first training task runs). One
    # partition probes inside its own partial_fit, as a plain fit does.
    places = _places(client, parts)
    step, probes = None, [None] * len(parts)
    new_auto = "_state" not in model.__dict__ and model._probes()
    scale = len(parts) if new_auto and model._copies_scale_the_step() else 1
    if new_auto and len(parts) > 1 and parts[0][0] != "file":
        probes = [client.submit(_probe_partition, current, i, part, classes, len(parts),
                                pure=False, retries=retries, **places[i])
                  for i, part in enumerate(parts)]
        counts = [client.submit(_counts, p, pure=False, retries=retries) for p in probes]
        step = client.submit(_pick_step, current, counts, pure=False, retries=retries)
    elif new_auto and len(parts) > 1:
        step = client.submit(_first_chunk_step, current, parts[0], classes, reader,
                             pure=False, retries=retries, **places[0])
    for epoch in range(epochs):
        futures = [client.submit(_train_partition, current, i, part, classes, reader,
                                 step if epoch == 0 else None,
                                 probes[i] if epoch == 0 else None,
                                 scale if epoch == 0 else 1, pure=False, retries=retries,
                                 **places[i])
                   for i, part in enumerate(parts)]
        probes = [None] * len(parts)  # the probes' models are let go after the first epoch
        # One worker averages and the others fetch the average: every worker
        # averaging the copies itself saves a transfer an epoch, but holds every
        # copy on every worker (measured at 2 workers: 2.4 -> 2.3 s an epoch of an
        # 84 MB model, inside the noise), and moves w times the models at w workers.
        current = client.submit(_average, futures, pure=False, retries=retries)
    return current.result()


def _same(model):
    return model


def _average(results):
    """The partitions' models averaged, weighted by rows, in partition order."""
    trained = [m for m, n in results if n > 0]
    if not trained:
        raise ValueError("no partition held any rows")
    return average_estimators(trained, weights=[n for _, n in results if n > 0])


def _start_model(estimator):
    if "_state" in estimator.__dict__:
        return copy.deepcopy(estimator)
    from sklearn.base import clone

    model = clone(estimator)
    if not isinstance(model.get_params().get("random_state"), numbers.Integral):
        model.set_params(random_state=int(np.random.randint(2**31 - 1)))
    return model


def _column_statistics(client, columns):
    """``(mean, scale)`` of the columns of a dask array or DataFrame, computed on the
    cluster, as :func:`~sklearn_sketch._columns.column_mean_and_scale` gives them; None
    for rows that are mostly zeros over many columns (read as given, as one fit on
    them would)."""
    from ._columns import column_scale, mostly_zeros

    mean, std, nnz, rows = client.compute(
        [columns.mean(axis=0), columns.std(axis=0, ddof=0), (columns != 0).sum(),
         columns.shape[0]], sync=True)
    if mostly_zeros(len(mean), float(np.sum(nnz)) / max(int(rows), 1)):
        return None
    mean, std = (np.asarray(v, dtype=np.float64) for v in (mean, std))
    return mean, column_scale(mean, std)


def _partitions(client, model, X, y, classes):
    """``(parts, classes, columns)``: per partition, its row blocks or its file path;
    the whole data's dense feature columns (persisted), None for files, sparse blocks
    and DataFrames of other than numbers."""
    is_classifier = model._is_classifier()
    if isinstance(X, (list, tuple)):
        if not all(isinstance(p, (str, os.PathLike)) for p in X):
            raise ValueError("a list X must hold file paths")
        if y is not None:
            raise ValueError("files hold their labels: give y=None")
        if is_classifier and classes is None and "_state" not in model.__dict__:
            raise ValueError("give classes= when training a new classifier on files")
        return [("file", os.fspath(p)) for p in X], classes, None
    if hasattr(X, "to_delayed") and hasattr(X, "columns"):  # a dask DataFrame
        if not isinstance(y, str) or y not in X.columns:
            raise ValueError("with a dask DataFrame, y must name its label column")
        if is_classifier and classes is None and "_state" not in model.__dict__:
            classes = np.unique(client.compute(X[y].unique()).result())
        X = client.persist(X)
        features = X.drop(columns=[y])
        numeric = all(dtype.kind in "biuf" for dtype in features.dtypes)
        parts = [("frame", part, y) for part in client.compute(list(X.to_delayed()))]
        return parts, classes, features if numeric else None
    import dask.array as da

    if not isinstance(X, da.Array) or not isinstance(y, da.Array):
        raise ValueError("X and y must be dask arrays (or X a list of file paths)")
    if X.ndim != 2 or y.ndim != 1:
        raise ValueError(f"X must be 2-D and y 1-D, got {X.ndim}-D and {y.ndim}-D")
    if X.numblocks[1] != 1:
        X = X.rechunk({1: -1})
    if X.chunks[0] != y.chunks[0]:
        y = y.rechunk({0: X.chunks[0]})
    if is_classifier and classes is None and "_state" not in model.__dict__:
        classes = np.unique(client.compute(da.unique(y)).result())
    # Kept on the workers for every epoch; each task is sent to where its blocks are.
    X, y = client.persist([X, y])
    x_blocks = client.compute(list(X.to_delayed().ravel()))
    y_blocks = client.compute(list(y.to_delayed()))
    dense = isinstance(X._meta, np.ndarray)
    return ([("arrays", xb, yb) for xb, yb in zip(x_blocks, y_blocks)], classes,
            X if dense else None)


def _places(client, parts):
    """Per partition, the ``client.submit`` arguments that place its tasks: on a worker
    that holds its data, no worker given more than its share of the partitions.

    Dask sends a task to where its inputs are, and keeps it there: partitions that all
    live on one worker (``dask.array.from_array`` puts every block of an in-memory
    array where the array is) would train one after the other there, every epoch.
    A partition over its worker's share is given to the worker with the fewest, and
    its blocks move there once (the copy stays on that worker for the later epochs);
    files go round the workers. The placement is a preference (``allow_other_workers``):
    a task whose worker died runs on another.
    """
    workers = sorted(client.scheduler_info()["workers"])
    if len(parts) < 2 or len(workers) < 2:
        return [{}] * len(parts)
    share = -(-len(parts) // len(workers))
    data = [part[1] for part in parts if part[0] != "file"]
    holders = client.who_has(data) if data else {}
    load = dict.fromkeys(workers, 0)
    chosen = [None] * len(parts)
    for i, part in enumerate(parts):
        if part[0] == "file":
            continue
        for worker in sorted(holders.get(part[1].key, ())):
            if load.get(worker, share) < share:
                chosen[i] = worker
                load[worker] += 1
                break
    for i in range(len(parts)):
        if chosen[i] is None:
            chosen[i] = min(workers, key=load.__getitem__)
            load[chosen[i]] += 1
    return [{"workers": [worker], "allow_other_workers": True} for worker in chosen]


def _train_partition(model, index, part, classes, reader, step=None, probe=None, scale=1):
    """One pass of a copy of ``model`` over partition ``index``: ``(model, rows)``.

    ``step``: eta0='auto''s choice for a new model, from the partitions' probes;
    ``probe``: this partition's probe (:func:`_probe_partition`), whose model
    with that step, if kept, the pass goes on from; ``scale``: what a new
    model's step is multiplied by after its probe.
    """
    est = copy.deepcopy(model)
    # This copy is the task's own: on failure it is dropped, so it trains unjournaled.
    est._disposable = True
    if scale != 1:
        est._eta0_scale = scale
    before = getattr(est, "t_", 1.0)
    kwargs = {"classes": classes} if classes is not None and est._is_classifier() else {}
    if step is not None:
        est._preset_eta0 = step
        if probe is not None and probe[0] is not None:
            est._preset_probe = probe[0].kept(est._probe_candidates().index(step))
    try:
        if part[0] == "file":
            from .io import partial_fit_stream

            partial_fit_stream(est, (reader or _default_reader)(part[1]), epochs=1,
                               prefetch=False, **kwargs)
        else:
            X, y = _partition_data(part)
            if len(y) == 0:
                return model, 0
            est.partial_fit(X, y, **kwargs)
    except Exception as error:
        raise _with_partition(error, index, part) from error
    return est, int(round(est.t_ - before))


def _probe_partition(model, index, part, classes, share):
    """eta0='auto''s probe on partition ``index``'s ``1/share`` part of the rows one
    fit would probe (:func:`~sklearn_sketch._step_probe.train_share`): ``(probe,
    counts)``, ``(None, None)`` for an empty partition."""
    from ._step_probe import train_share

    est = copy.deepcopy(model)
    kwargs = {"classes": classes} if classes is not None and est._is_classifier() else {}
    try:
        X, y = _partition_data(part)
        if not len(y):
            return None, None
        probe = est._step_probe(X, y, share=share, **kwargs)
        return probe, train_share(probe)
    except Exception as error:
        raise _with_partition(error, index, part) from error


def _first_chunk_step(model, part, classes, reader):
    """The ``(learning_rate, eta0)`` the probe of a copy of ``model`` chooses on the
    first chunk of file ``part`` that has a weight (None when every candidate
    diverged or no chunk has one): every file's copy trains with it (copies that
    chose schedules of their own could not be averaged: the 'frequency' model
    holds a table of counts the other has not). The chunk is probed as its
    ``partial_fit`` would probe it (its names remembered first, as
    :func:`~sklearn_sketch.io.partial_fit_stream` does), and not trained on:
    that partition's own task does."""
    from .io._training import _weight_to_learn

    est = copy.deepcopy(model)
    kwargs = {"classes": classes} if classes is not None and est._is_classifier() else {}
    for chunk in (reader or _default_reader)(part[1]):
        weight = _weight_to_learn(chunk)
        if weight is False:
            continue
        names = getattr(chunk, "feature_names", None)
        if names is not None and hasattr(est, "remember_feature_names"):
            est.remember_feature_names(names)
        probe = est._step_probe(chunk.X, chunk.y, sample_weight=weight, **kwargs)
        winner, _ = est._run_probe(probe)
        return None if winner is None else probe.candidates[winner]
    return None


def _counts(probe):
    """A probe's counts alone: what the step's task gathers (the models stay put)."""
    return probe[1]


def _pick_step(model, counts):
    """The step of the mistakes summed over the partitions' probes (None when no
    candidate trained without diverging: the first epoch then probes, and raises,
    as a plain fit would)."""
    counts = [c for c in counts if c is not None]
    if not counts:
        return None
    winner = model._auto_choice([sum(c) for c in zip(*counts)])
    return None if winner is None else model._probe_candidates()[winner]


def _partition_data(part):
    """``(X, y)`` of an array or DataFrame partition."""
    if part[0] == "frame":
        frame, label = part[1], part[2]
        if len(frame) == 0:
            return frame, np.zeros(0)
        features = frame.drop(columns=[label])
        first = features.iloc[0, 0] if features.shape[1] == 1 else None
        if isinstance(first, str):
            raise ValueError(
                f"column {features.columns[0]!r} holds strings, not token lists (dask "
                "stores lists as strings unless dataframe.convert-string is False)")
        X = list(features.iloc[:, 0]) if isinstance(first, (list, tuple)) else features
        return X, frame[label].to_numpy()
    return part[1], part[2]


def _with_partition(error, index, part):
    where = f"partition {index}" + (f" ({part[1]})" if part[0] == "file" else "")
    message = f"{where}: {error}"
    try:
        return type(error)(message)
    except Exception:
        return RuntimeError(message)


def _default_reader(path):
    from .io import SvmlightReader, VowpalWabbitReader

    if str(path).endswith((".vw", ".vw.gz")):
        return VowpalWabbitReader(path, keep_names=True)
    return SvmlightReader(path)
