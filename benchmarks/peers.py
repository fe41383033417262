"""Peer learners for the benchmarks: scikit-learn's SGDClassifier and Vowpal Wabbit.

Vowpal Wabbit (``pip install vowpalwabbit``) is imported only when used. Its PyPI package ships
no ``vw`` binary; :func:`vw_fit_predict` then runs the command line as
``python -m vowpalwabbit``, which drives the same C++ parser and learner in a new process.

Run this file as a script to time the peers on the DNA task of :mod:`dna_task`::

    python benchmarks/peers.py
"""

import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import scipy.sparse as sp

__all__ = ["sgd_fit_predict", "vw_fit_predict", "write_vw_text"]

#: Number of rows :func:`write_vw_text` formats at once.
_BLOCK_ROWS = 8192

_POWERS_OF_TEN = 10 ** np.arange(19, dtype=np.int64)


def _import_vowpalwabbit():
    """Import vowpalwabbit, or raise an ImportError telling how to install it."""
    try:
        import vowpalwabbit
    except ImportError as exc:
        raise ImportError(
            "Vowpal Wabbit is needed for this peer: pip install vowpalwabbit"
        ) from exc
    return vowpalwabbit


def _n_digits(values):
    """Number of decimal digits of each non-negative integer (1 for 0)."""
    return np.maximum(np.searchsorted(_POWERS_OF_TEN, values, side="right"), 1)


def _put_digits(buf, pos, values, n_digits):
    """Write the decimal digits of ``values`` into ``buf`` starting at positions ``pos``.

    The last byte of ``buf`` is scratch: it receives the leading zeros past each number's
    length, which keeps the loop over decimal places free of boolean indexing.
    """
    remaining = values.astype(np.uint32 if values.max(initial=0) < 2**32 else np.uint64)
    last = pos + n_digits - 1
    for place in range(int(n_digits.max(initial=0))):
        remaining, digit = np.divmod(remaining, 10)
        buf[np.where(n_digits > place, last - place, buf.size - 1)] = digit + ord("0")


def _vw_block(X, y, namespace):
    """Format the rows of a CSR block as the bytes of VW text lines."""
    heads = {label: f"{1 if label else -1} |{namespace}".encode() for label in (0, 1)}
    head_len = np.where(y == 1, len(heads[1]), len(heads[0]))
    indices = X.indices.astype(np.int64)
    values = X.data.astype(np.int64)
    index_len = _n_digits(indices)
    value_len = _n_digits(values)

    # A row is its head, then one token " index:value" per non-zero, then "\n".
    token_len = 1 + index_len + 1 + value_len
    token_offset = np.concatenate([[0], np.cumsum(token_len)])
    row_offset = token_offset[X.indptr]
    row_start = np.concatenate([[0], np.cumsum(head_len + np.diff(row_offset) + 1)])
    shift = row_start[:-1] + head_len - row_offset[:-1]
    token_start = token_offset[:-1] + np.repeat(shift, np.diff(X.indptr))

    buf = np.empty(row_start[-1] + 1, dtype=np.uint8)  # and a scratch byte for _put_digits
    for label, head in heads.items():
        starts = row_start[:-1][y == label]
        for offset, char in enumerate(head):
            buf[starts + offset] = char
    buf[row_start[1:] - 1] = ord("\n")
    buf[token_start] = ord(" ")
    _put_digits(buf, token_start + 1, indices, index_len)
    buf[token_start + 1 + index_len] = ord(":")
    _put_digits(buf, token_start + 2 + index_len, values, value_len)
    return buf[:-1].tobytes()


def _vw_blocks(X, y, namespace):
    """Yield the VW text of ``X`` and ``y`` as bytes, a block of rows at a time."""
    X = sp.csr_matrix(X)
    y = np.asarray(y)
    if X.shape[0] != y.shape[0]:
        raise ValueError(f"X has {X.shape[0]} rows but y has {y.shape[0]} labels")
    if not np.isin(y, (0, 1)).all():
        raise ValueError("y must hold binary labels 0 and 1")
    if X.nnz and (X.data.min() < 0 or not np.array_equal(X.data, np.floor(X.data))):
        raise ValueError("X must hold non-negative integer values (counts)")
    for start in range(0, X.shape[0], _BLOCK_ROWS):
        stop = start + _BLOCK_ROWS
        yield _vw_block(X[start:stop], y[start:stop], namespace)


def write_vw_text(X, y, path, namespace="k"):
    """Write a labelled count matrix as a Vowpal Wabbit text file for logistic loss.

    Row ``i`` becomes the line ``label |k j:count ...`` over its non-zeros, with label ``-1``
    for class 0 and ``1`` for class 1. Integer feature names are used by VW as indices (offset
    by the namespace hash), so no string hashing of k-mers takes place.

    Parameters
    ----------
    X : sparse matrix of shape (n_samples, n_features)
        Non-negative integer values, e.g. the k-mer counts of :func:`dna_task.kmer_csr`.
    y : array-like of shape (n_samples,)
        Binary labels, 0 or 1.
    path : str or path-like
        Output file, overwritten.
    namespace : str, default="k"
        VW namespace of the features.

    Returns
    -------
    n_bytes : int
        Size of the written file.
    """
    n_bytes = 0
    with open(path, "wb") as f:
        for chunk in _vw_blocks(X, y, namespace):
            n_bytes += f.write(chunk)
    return n_bytes


def _vw_command():
    """Command line of Vowpal Wabbit: the ``vw`` binary, else ``python -m vowpalwabbit``."""
    binary = shutil.which("vw")
    return [binary] if binary else [sys.executable, "-m", "vowpalwabbit"]


def vw_fit_predict(train_path, X_test, y_test, bits=24, method="python", namespace="k"):
    """Train Vowpal Wabbit for one pass with logistic loss, then score a test set.

    Parameters
    ----------
    train_path : str or path-like
        Training set as written by :func:`write_vw_text`.
    X_test : sparse matrix of shape (n_samples, n_features)
        Test counts.
    y_test : array-like of shape (n_samples,)
        Test labels, 0 or 1.
    bits : int, default=24
        Number of bits of the weight table (``-b``).
    method : {"python", "cli"}, default="python"
        ``"python"`` learns through the Python API (``Workspace.learn``), one text line at a
        time. ``"cli"`` runs the command line on the file in a new process, the ``vw`` binary
        if on ``PATH`` and ``python -m vowpalwabbit`` otherwise, and predicts with
        ``-t -i model``.
    namespace : str, default="k"
        Namespace of the features in the training file.

    Returns
    -------
    seconds : float
        Wall-clock time of training: reading and learning the file, plus the process start
        and model save for ``"cli"``.
    accuracy : float
        Test accuracy, predicting class 1 for a positive score.
    """
    vowpalwabbit = _import_vowpalwabbit()
    y_test = np.asarray(y_test)
    options = ["--loss_function", "logistic", "-b", str(bits), "--quiet"]
    if method == "python":
        workspace = vowpalwabbit.Workspace(arg_list=options)
        start = time.perf_counter()
        with open(train_path) as f:
            for line in f:
                workspace.learn(line)
        seconds = time.perf_counter() - start
        test_lines = b"".join(_vw_blocks(X_test, y_test, namespace)).decode().splitlines()
        scores = np.array([workspace.predict(line) for line in test_lines])
        workspace.finish()
    elif method == "cli":
        command = _vw_command()
        with tempfile.TemporaryDirectory() as tmp:
            model, test_path, predictions = (Path(tmp) / n for n in ("model", "test", "pred"))
            start = time.perf_counter()
            subprocess.run(
                [*command, "-d", str(train_path), "-f", str(model), *options], check=True
            )
            seconds = time.perf_counter() - start
            write_vw_text(X_test, y_test, test_path, namespace)
            subprocess.run(
                [
                    *command,
                    "-t",
                    "-i",
                    str(model),
                    "-d",
                    str(test_path),
                    "-p",
                    str(predictions),
                    "--quiet",
                ],
                check=True,
            )
            scores = np.loadtxt(predictions, ndmin=1)
    else:
        raise ValueError(f"method must be 'python' or 'cli', got {method!r}")
    return seconds, float(np.mean((scores > 0) == (y_test == 1)))


def sgd_fit_predict(X_train, y_train, X_test, y_test, random_state=0):
    """Train scikit-learn's SGDClassifier for one epoch with logistic loss, then score it.

    scikit-learn accepts only 32-bit sparse indices, so the matrices are given ``int32``
    indices first (outside of the timing).

    Parameters
    ----------
    X_train : sparse matrix of shape (n_train, n_features)
        Training features, with fewer than 2**31 columns.
    y_train : array-like of shape (n_train,)
        Training labels.
    X_test : sparse matrix of shape (n_test, n_features)
        Test features.
    y_test : array-like of shape (n_test,)
        Test labels.
    random_state : int, default=0
        Seed of the SGD shuffling.

    Returns
    -------
    seconds : float
        Wall-clock time of ``fit``.
    accuracy : float
        Test accuracy.
    """
    from sklearn.linear_model import SGDClassifier

    X_train, X_test = (_with_int32_indices(X) for X in (X_train, X_test))
    clf = SGDClassifier(loss="log_loss", max_iter=1, tol=None, random_state=random_state)
    start = time.perf_counter()
    clf.fit(X_train, y_train)
    seconds = time.perf_counter() - start
    return seconds, float(clf.score(X_test, y_test))


def _with_int32_indices(X):
    """Return a CSR copy of ``X`` whose ``indices`` and ``indptr`` are int32."""
    X = sp.csr_matrix(X)
    if max(X.shape[1], X.nnz) >= 2**31:
        raise ValueError("scikit-learn needs fewer than 2**31 columns and non-zeros")
    return sp.csr_matrix(
        (X.data, X.indices.astype(np.int32), X.indptr.astype(np.int32)), shape=X.shape
    )


def main():
    """Time the peers on the default DNA task and print one result line per run."""
    from dna_task import load_dna_task

    start = time.perf_counter()
    X_train, y_train, X_test, y_test = load_dna_task()
    print(
        f"DNA task built in {time.perf_counter() - start:.1f} s: train {X_train.shape}, "
        f"nnz={X_train.nnz:,}; test {X_test.shape}"
    )

    seconds, accuracy = sgd_fit_predict(X_train, y_train, X_test, y_test)
    print(
        f"sklearn SGDClassifier(log_loss, 1 epoch): fit {seconds:.1f} s, "
        f"test accuracy {accuracy:.4f}"
    )

    train_path = Path(tempfile.gettempdir()) / "dna_task_train.vw"
    start = time.perf_counter()
    n_bytes = write_vw_text(X_train, y_train, train_path)
    print(f"wrote {train_path} ({n_bytes / 2**20:.0f} MiB) in {time.perf_counter() - start:.1f} s")
    print(f"VW command line: {' '.join(_vw_command())}")
    for method in ("python", "cli"):
        for bits in (24, 22):
            seconds, accuracy = vw_fit_predict(train_path, X_test, y_test, bits, method)
            print(
                f"VW one pass, logistic, -b {bits}, {method}: train {seconds:.1f} s, "
                f"test accuracy {accuracy:.4f}"
            )


if __name__ == "__main__":
    main()
