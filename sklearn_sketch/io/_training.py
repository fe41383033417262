"""Training an estimator on a stream of chunks, one ``partial_fit`` per chunk."""
import sys
import time


def partial_fit_stream(estimator, chunks, *, classes=None, epochs=1, verbose=0):
    """Train ``estimator`` on every chunk of ``chunks``, ``epochs`` times.

    Memory stays at the model plus the chunk being read. A model trained this
    way equals the model ``fit`` on the same rows in memory with
    ``shuffle=False`` when every chunk holds a multiple of ``batch_size`` rows
    (the mini-batches are then the same). After each chunk that carries
    ``feature_names`` (:class:`VowpalWabbitReader` with ``keep_names=True``),
    the estimator's ``remember_feature_names``, when it has one, records the
    names of the keys in its heaps.

    Parameters
    ----------
    estimator : estimator with ``partial_fit``
        Trained in place (its state carries over from earlier calls).
    chunks : iterable of Chunk
        A reader such as :class:`SvmlightReader` (re-iterable: one pass over the
        file per epoch) or any iterable of objects with ``X``, ``y`` and
        ``sample_weight`` attributes, and optionally ``feature_names`` (only
        one epoch for a one-shot iterator).
    classes : array-like, default=None
        Every class of the problem, for classifiers; required unless the
        estimator was already trained.
    epochs : int, default=1
        Passes over the stream.
    verbose : int, default=0
        Show progress: a ``tqdm`` bar per epoch when tqdm is installed, else a
        line per epoch on stderr.

    Returns
    -------
    estimator : estimator
        The trained estimator.

    Examples
    --------
    >>> import os, tempfile
    >>> from sklearn_sketch import MissionClassifier
    >>> from sklearn_sketch.io import SvmlightReader, partial_fit_stream
    >>> path = os.path.join(tempfile.mkdtemp(), "train.svm")
    >>> with open(path, "w") as f:
    ...     _ = f.write("1 3:1.0 7:2.0\\n-1 2:1.0\\n1 3:0.5\\n-1 2:2.0 9:1.0\\n")
    >>> model = partial_fit_stream(MissionClassifier(2, sketch_width=64, random_state=0),
    ...                            SvmlightReader(path, chunk_rows=2, zero_based=False),
    ...                            classes=[-1, 1], epochs=3)
    >>> model.t_  # 4 rows seen 3 times, plus one
    13.0
    """
    if isinstance(epochs, bool) or not isinstance(epochs, int) or epochs < 1:
        raise ValueError(f"epochs must be a positive integer, got {epochs!r}")
    fit_kwargs = {} if classes is None else {"classes": classes}
    for epoch in range(epochs):
        start, rows = time.perf_counter(), 0
        for chunk in _progress(chunks, verbose, f"epoch {epoch + 1}/{epochs}"):
            weight = getattr(chunk, "sample_weight", None)
            estimator.partial_fit(chunk.X, chunk.y, sample_weight=weight, **fit_kwargs)
            names = getattr(chunk, "feature_names", None)
            if names is not None and hasattr(estimator, "remember_feature_names"):
                estimator.remember_feature_names(names)
            rows += chunk.X.shape[0]
        if verbose and _tqdm() is None:
            print(f"epoch {epoch + 1}/{epochs}: {rows:,} rows in "
                  f"{time.perf_counter() - start:.2f} s", file=sys.stderr)
    return estimator


def _tqdm():
    try:
        from tqdm import tqdm
    except ImportError:
        return None
    return tqdm


def _progress(chunks, verbose, description):
    tqdm = _tqdm() if verbose else None
    return chunks if tqdm is None else tqdm(chunks, desc=description, unit="chunk")
