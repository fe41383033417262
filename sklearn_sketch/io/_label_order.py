"""How the labels of a stream follow one another: sorted files teach the last labels."""
import math
from typing import NamedTuple

import numpy as np

#: Below this many label changes expected of a random order, a count of changes says
#: too little (a few rows, or one label nearly everywhere) to call an order sorted.
MIN_EXPECTED_CHANGES = 16
#: Neighbouring rows go together (a file in time order: the flights of a day, the
#: hours of a station) when their labels change at most this share of a random
#: order's changes, or their numbers correlate at least ALIKE_CORRELATION, and by
#: ALIKE_DEVIATIONS standard deviations of a random order (so that a small file
#: decides nothing by chance).
ALIKE_CHANGES_SHARE, ALIKE_CORRELATION, ALIKE_DEVIATIONS = 0.9, 0.1, 4.0


class LabelOrder(NamedTuple):
    """The label changes between adjacent rows of a stream, against a random order.

    A file sorted by label (as ``dump_svmlight_file`` writes the rows of
    ``load_files``: one class, then the next) changes label once per class;
    the same labels in a random order change about ``expected_changes``
    times. Trained in file order, one pass learns the last labels best (20
    Newsgroups, TF-IDF rows sorted by group, one pass: 0.42 accuracy against
    0.84 shuffled).

    Attributes
    ----------
    n_rows : int
        Rows read.
    n_changes : int
        Adjacent rows whose labels differ.
    expected_changes : float
        The mean of ``n_changes`` over every order of the same labels:
        ``(n - 1) - sum(c * (c - 1)) / n`` for label counts ``c``.
    serial_correlation : float
        The correlation of each label with the next, when the labels are numbers
        (NaN otherwise, or when they are all equal): about 0, within
        ``1 / sqrt(n)``, in a random order.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_sketch.io._label_order import label_order
    >>> order = label_order([np.repeat([0, 1, 2], 100)])
    >>> order.n_changes, round(order.expected_changes), order.sorted_by_label
    (2, 200, True)
    """

    n_rows: int
    n_changes: int
    expected_changes: float
    serial_correlation: float = math.nan

    @property
    def sorted_by_label(self):
        """Whether the labels come in runs: fewer than half the changes of a random
        order, where a random order would change at least ``MIN_EXPECTED_CHANGES``
        times (so that a few rows or a rare label decide nothing)."""
        return (self.expected_changes >= MIN_EXPECTED_CHANGES
                and self.n_changes < self.expected_changes / 2)

    @property
    def neighbours_alike(self):
        """Whether neighbouring rows have alike labels, past what chance gives a
        random order: at most ``ALIKE_CHANGES_SHARE`` of its changes of label, or
        numbers whose ``serial_correlation`` is at least ``ALIKE_CORRELATION``,
        either by ``ALIKE_DEVIATIONS`` standard deviations of a random order
        (about ``sqrt(expected_changes)`` changes, ``1 / sqrt(n_rows)`` of
        correlation). A file sorted by label is one such order.

        Examples
        --------
        >>> import numpy as np
        >>> from sklearn_sketch.io._label_order import label_order
        >>> days = np.repeat(np.random.default_rng(0).normal(size=50), 20)  # 20 alike rows
        >>> label_order([days]).neighbours_alike
        True
        >>> label_order([np.random.default_rng(0).permutation(days)]).neighbours_alike
        False
        """
        return self.changes_alike or self.numbers_alike

    @property
    def changes_alike(self):
        """Whether the labels change at most ``ALIKE_CHANGES_SHARE`` of a random
        order's times, and by ``ALIKE_DEVIATIONS`` of its standard deviations (one
        of :attr:`neighbours_alike`'s two measures)."""
        return (self.expected_changes >= MIN_EXPECTED_CHANGES
                and self.n_changes <= ALIKE_CHANGES_SHARE * self.expected_changes
                and self.n_changes <= self.expected_changes
                - ALIKE_DEVIATIONS * math.sqrt(self.expected_changes))

    @property
    def numbers_alike(self):
        """Whether the labels are numbers correlated with the next row's at least
        ``ALIKE_CORRELATION``, and by ``ALIKE_DEVIATIONS`` of a random order's
        standard deviations (the other of :attr:`neighbours_alike`'s measures)."""
        return self.n_rows > 1 and self.serial_correlation >= max(
            ALIKE_CORRELATION, ALIKE_DEVIATIONS / math.sqrt(self.n_rows))


def label_order(blocks):
    """The :class:`LabelOrder` of the label arrays ``blocks`` read one after another."""
    counter = LabelOrderCounter()
    for labels in blocks:
        counter.add(labels)
    return counter.order()


def combined(orders):
    """One :class:`LabelOrder` of streams read separately (several files): their rows,
    changes and expected changes added, as each file is mixed on its own terms."""
    orders = list(orders)
    n_rows = sum(o.n_rows for o in orders)
    numbered = [o for o in orders if not math.isnan(o.serial_correlation)]
    correlation = (sum(o.n_rows * o.serial_correlation for o in numbered)
                   / sum(o.n_rows for o in numbered) if numbered else math.nan)
    return LabelOrder(n_rows, sum(o.n_changes for o in orders),
                      float(sum(o.expected_changes for o in orders)), correlation)


def merge_label_counts(values, counts):
    """The sorted distinct labels of several ``(values, counts)`` blocks (sequences of
    arrays) and the rows of each, summed over the blocks."""
    distinct, inverse = np.unique(np.concatenate(values), return_inverse=True)
    return distinct, np.bincount(inverse.ravel(), weights=np.concatenate(counts),
                                 minlength=distinct.size).astype(np.int64)


class LabelOrderCounter:
    """Count rows, label changes and label counts over consecutive blocks of labels."""

    def __init__(self):
        self.n_rows = self.n_changes = 0
        self._last = None
        self._values, self._counts = [], []
        # Of the labels as numbers (until one is not): their sum, sum of squares, sum
        # of products of neighbours, first and last.
        self._numbers = True
        self._sum = self._squares = self._products = 0.0
        self._first = self._last_number = None

    def add(self, labels):
        """Count one block of labels (a 1-D array), read after the previous ones."""
        labels = np.asarray(labels)
        if not labels.size:
            return
        self.n_rows += labels.size
        self.n_changes += int(np.count_nonzero(labels[1:] != labels[:-1]))
        if self._last is not None and labels[0] != self._last:
            self.n_changes += 1
        self._last = labels[-1]
        values, counts = np.unique(labels, return_counts=True)
        self._values.append(values)
        self._counts.append(counts)
        if self._numbers:
            self._add_numbers(labels)

    def _add_numbers(self, labels):
        try:
            numbers = np.asarray(labels, dtype=np.float64)
        except (TypeError, ValueError):  # words ("yes", "spam"): labels, not numbers
            self._numbers = False
            return
        if not np.isfinite(numbers).all():
            self._numbers = False
            return
        self._sum += float(numbers.sum())
        self._squares += float(numbers @ numbers)
        self._products += float(numbers[1:] @ numbers[:-1])
        if self._last_number is not None:
            self._products += self._last_number * float(numbers[0])
        else:
            self._first = float(numbers[0])
        self._last_number = float(numbers[-1])

    def _serial_correlation(self):
        """The lag-1 correlation of the numbers counted (NaN: not numbers, or constant)."""
        n = self.n_rows
        if not self._numbers or n < 2:
            return math.nan
        mean = self._sum / n
        spread = self._squares - n * mean * mean
        if not spread > 1e-12 * max(self._squares, 1e-300):
            return math.nan
        neighbours = (self._products - mean * (2 * self._sum - self._first - self._last_number)
                      + (n - 1) * mean * mean)
        return neighbours / spread

    def distinct(self):
        """The sorted distinct labels seen."""
        return self.label_counts()[0]

    def label_counts(self):
        """The sorted distinct labels seen and the rows of each."""
        if not self._values:
            return np.zeros(0), np.zeros(0, dtype=np.int64)
        return merge_label_counts(self._values, self._counts)

    def order(self):
        """The :class:`LabelOrder` of what was counted."""
        n = self.n_rows
        if n < 2:
            return LabelOrder(n, 0, 0.0)
        counts = self.label_counts()[1].astype(np.float64)
        expected = (n - 1) - float(np.sum(counts * (counts - 1))) / n
        return LabelOrder(n, self.n_changes, expected, self._serial_correlation())
