"""Fixtures shared by the test modules."""
import pytest

from sklearn_sketch import _columns


@pytest.fixture
def sparse_as_given(monkeypatch):
    """Sparse input read as given, whatever its width: for tests whose subject is the
    kernel on the coordinates they feed (``tests/test_standardize.py`` tests the
    scaling of narrow sparse tables itself)."""
    monkeypatch.setattr(_columns, "SPARSE_TABLE_MAX_WIDTH", 0)
    monkeypatch.setattr(_columns, "MAX_SCALED_KEYS", 0)
