"""Training an estimator on a stream of chunks, one ``partial_fit`` per chunk."""
import queue
import sys
import threading
import time

import numpy as np


def partial_fit_stream(estimator, chunks, *, classes=None, epochs=1, verbose=0,
                       prefetch=True):
    """Train ``estimator`` on every chunk of ``chunks``, ``epochs`` times.

    Memory stays at the model plus the chunk being read. Importance weights
    (``chunk.sample_weight``, from Vowpal Wabbit files) reach ``partial_fit``
    as ``sample_weight``; a chunk whose weights are all 0 teaches nothing and
    is skipped. A model trained this
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
        Show progress on stderr (rows, rows/s, elapsed time): a ``tqdm`` bar
        per epoch when tqdm is installed (shown after a second), else a line
        every 5 s and one at the end of each epoch.
    prefetch : bool, default=True
        Read the next chunk in a background thread while the estimator trains
        on the current one. Parsing, k-mer counting and training release the
        GIL, so on two cores reading costs little wall time; the chunks and
        their order are the same, and memory grows by two chunks. Pass False
        for an iterable that must not be read from another thread.

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
    return train_stream(estimator, chunks, classes=classes, epochs=epochs, verbose=verbose,
                        prefetch=prefetch)


def train_stream(estimator, chunks, *, classes=None, epochs=1, verbose=0, prefetch=True,
                 disposable=False):
    """:func:`partial_fit_stream`; with ``disposable``, for a model that the caller
    throws away if a call raises (the command line writes no model then), each
    ``partial_fit`` skips the sketches' undo journal, which copies a fitted
    model's tables at each call: a second copy of the model in memory, and its
    copying time at every chunk (a 336 MB model of 20 classes: 894 MB at the
    peak of ``fit`` from the command line with the step given, 614 MB
    without the journal)."""
    if isinstance(epochs, bool) or not isinstance(epochs, int) or epochs < 1:
        raise ValueError(f"epochs must be a positive integer, got {epochs!r}")
    fit_kwargs = {} if classes is None else {"classes": classes}
    try:
        for epoch in range(epochs):
            progress = _Progress(verbose, f"epoch {epoch + 1}/{epochs}")
            for chunk in (_prefetched(chunks) if prefetch else chunks):
                weight = _weight_to_learn(chunk)
                if weight is False:
                    progress.update(chunk.X.shape[0])
                    continue
                names = getattr(chunk, "feature_names", None)
                remember = names is not None and hasattr(estimator, "remember_feature_names")
                # A new model takes the names before its first call (which names its
                # heap keys with them, its memory_budget keeping room for them); a
                # fitted one after each call, for the keys that entered.
                before = remember and not hasattr(estimator, "n_iter_")
                if before:
                    estimator.remember_feature_names(names)
                if disposable:
                    estimator._disposable = True
                estimator.partial_fit(chunk.X, chunk.y, sample_weight=weight, **fit_kwargs)
                if remember and not before:
                    estimator.remember_feature_names(names)
                if not disposable:
                    _hold_journal_memory(estimator, True)
                progress.update(chunk.X.shape[0])
            progress.close()
    finally:
        _hold_journal_memory(estimator, False)
    return estimator


def _hold_journal_memory(estimator, hold):
    """Let the sketches of ``estimator`` keep their undo journal's copy of the
    table from one ``partial_fit`` to the next (``CountSketch.hold_journal_memory``),
    or free it: a call that copies a large table then reuses the last call's copy."""
    for sketch in getattr(getattr(estimator, "_state", None), "sketches", ()):
        sketch.hold_journal_memory(hold)


def _prefetched(chunks, depth=2):
    """Iterate ``chunks`` in a background thread, up to ``depth`` chunks ahead.

    An exception of the iteration is raised here, in the consumer; when the
    consumer stops early the thread stops at its next chunk.
    """
    prefetcher = Prefetcher(chunks, depth)
    try:
        yield from prefetcher
    finally:
        prefetcher.close()


class Prefetcher:
    """One pass over ``chunks`` read by a background thread, started at once.

    Iterating gives the chunks in order, up to ``depth`` of them read ahead;
    an exception of the reading is raised in the consumer, at the chunk where
    it happened. ``close`` stops the thread (at its next chunk) and waits for it.
    """

    _end = object()

    def __init__(self, chunks, depth=2):
        self._ready = queue.Queue(maxsize=depth)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._produce, args=(chunks,),
                                        name="sklearn-sketch-reader", daemon=True)
        self._thread.start()

    def _put(self, item):
        while not self._stop.is_set():
            try:
                self._ready.put(item, timeout=0.05)
                return True
            except queue.Full:
                continue
        return False

    def _produce(self, chunks):
        try:
            for chunk in chunks:
                if not self._put((chunk, None)):
                    return
            self._put((self._end, None))
        except BaseException as exc:  # Handed to the consumer, raised there.
            self._put((self._end, exc))

    def __iter__(self):
        while True:
            chunk, error = self._ready.get()
            if error is not None:
                raise error
            if chunk is self._end:
                return
            yield chunk

    def close(self):
        self._stop.set()
        self._thread.join()


def _weight_to_learn(chunk):
    """The ``sample_weight`` to train on ``chunk`` with (None: every example counts
    once), or False when every weight is 0 (legal, Vowpal Wabbit's importance 0,
    but nothing to learn); an example without a label raises."""
    weight = getattr(chunk, "sample_weight", None)
    if weight is not None and not np.any(weight):
        return False
    _check_labelled(chunk)
    return weight


def _check_labelled(chunk):
    y = np.asarray(chunk.y)
    if y.dtype.kind == "f" and np.isnan(y).any():
        line = getattr(chunk, "first_line", 0)
        where = f" (in the chunk starting at line {line})" if line else ""
        raise ValueError(f"an example has no label{where}: training needs a label on "
                         "every example")


class _Progress:
    """Rows, rows/s and elapsed time: a tqdm bar when installed, else lines on stderr.

    Only the line at the end shows during the first second of a pass.
    """

    def __init__(self, verbose, description, every=5.0):
        self.description = description
        self.start = self.last = time.perf_counter()
        self.rows = self.printed_rows = 0
        self.every = every
        self.enabled = bool(verbose)
        self.bar = None
        if self.enabled:
            try:
                from tqdm import tqdm
            except ImportError:
                tqdm = None
            if tqdm is not None:
                self.bar = tqdm(desc=description, unit=" rows", unit_scale=True, delay=1.0,
                                file=sys.stderr)

    def update(self, rows):
        self.rows += rows
        if not self.enabled:
            return
        if self.bar is not None:
            self.bar.update(rows)
            return
        now = time.perf_counter()
        if now - self.last >= self.every and now - self.start >= 1.0:
            self.last = now
            self._print(now)

    def _print(self, now):
        self.printed_rows = self.rows
        elapsed = now - self.start
        print(f"{self.description}: {self.rows:,} rows, {self.rows / max(elapsed, 1e-9):,.0f} "
              f"rows/s, {elapsed:.1f} s", file=sys.stderr)

    def close(self):
        if self.bar is not None:
            self.bar.close()
        elif self.enabled and (self.rows != self.printed_rows or not self.rows):
            # The pass's line, unless the last update printed these very rows.
            self._print(time.perf_counter())
