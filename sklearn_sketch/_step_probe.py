"""eta0='auto''s and learning_rate='auto''s probe: the candidate steps (and schedules)
trained on the first rows of the first pass.

One fit probes its own first rows (:func:`choose_step`). A model trained as copies
on partitions (:mod:`sklearn_sketch.dask`) probes a share of those rows on each
partition (:func:`train_share`), and the mistakes summed over the partitions
choose the step.
"""
import math

import numpy as np

from ._sgd_fast import PassStatus

#: A probe's rows are trained in this many parts; a candidate can stop after each.
PARTS = 4
#: Bytes of a new model past which a probe keeps no candidate's model (``lean``): the
#: winner's first pass starts from scratch, training the probe's rows again, and ends
#: on the same model (the probe's kept model equals one trained with its step from the
#: start). A probe that keeps models holds up to four at once: 1.27 GB at the peak of
#: ``fit`` from the command line for a 336 MB model of 20 classes, 614 MB lean. The
#: rows trained again cost feature hashing nothing measurable (its copies cost as
#: much) and MISSION about a tenth (104 classes: 45 s -> 51 s, 1.10 -> 0.57 GB).
LEAN_BYTES = 2**26


class StepProbe:
    """The candidates of one probe (or of one partition's share of it), part by part.

    Each candidate ``(learning_rate, eta0)`` of ``estimator._probe_candidates()``
    trains a fresh model (the same hashes and order for all) on the first rows
    of the first pass's order
    (``estimator._probe_rows``; a ``1/share`` part of them for one of
    ``share`` partitions), in ``PARTS`` parts, each of whole batches of the
    pass (``estimator._batch_starts``),
    counting the samples it misclassifies just before their update
    (progressive validation). A candidate of a larger step than the first's,
    or of another schedule ('frequency': larger steps for rare features), is
    tried only on a lightly loaded sketch (``estimator._probe_is_light``). A
    candidate is
    lost when it diverges, ends with a weight that is not finite, or is
    stopped; its count is then inf.

    Parameters
    ----------
    estimator : sketched SGD estimator
        Gives the candidates, the model's shape and the pass.
    n_models : int
        Models (one per class for multi-class, else one).
    X, csr, y, sample_weight
        The training data as ``estimator._training_inputs`` gives it.
    share : int, default=1
        Probe a ``1/share`` part of the rows, as one of ``share`` partitions.
    """

    def __init__(self, estimator, n_models, X, csr, y, sample_weight, share=1):
        self.estimator, self.n_models, self.X = estimator, n_models, X
        self.csr, self.y, self.sample_weight = csr, y, sample_weight
        template = estimator._new_state(n_models, X)
        estimator._start_intercept(template, y, sample_weight)
        order = estimator._pass_order(template, csr[0].shape[0] - 1)
        # The probe ends, and its parts, where a batch of the pass starts: the first
        # pass goes on after the probe as if never cut.
        starts = estimator._batch_starts(template, csr, order)
        batch = max(1, int(estimator.batch_size))

        def whole_batches(n_rows):
            if starts is None:
                return min(order.size, -(-n_rows // batch) * batch)
            return int(starts[np.searchsorted(starts, n_rows)])

        rows = whole_batches(estimator._probe_rows(csr, order))
        if share > 1:
            rows = min(rows, whole_batches(max(1, -(-rows // share))))
        self.rows = rows
        ends = sorted({min(rows, whole_batches(-(-rows * k // PARTS)))
                       for k in range(1, PARTS + 1)})
        self.parts = [order[a:b] for a, b in zip([0] + ends[:-1], ends)]
        self.candidates = estimator._probe_candidates()
        schedule, first = self.candidates[0]
        self.templates = {schedule: template}
        bolder = [s != schedule or step > first for s, step in self.candidates]
        light = (not any(bolder)
                 or estimator._probe_is_light(template, csr, order[:rows]))
        n = len(self.candidates)
        self.lean = sum(sketch.memory_bytes for sketch in template.sketches) > LEAN_BYTES
        self.lost = [not light and bold for bold in bolder]
        self.mistakes = [0] * n
        # The kernel's errors of heap-only and sketch reads, and its log loss.
        self.read_errors = [np.zeros(3) for _ in range(n)]
        self.done = [0] * n
        self.states = {}

    def start(self, i):
        """Give candidate ``i`` its fresh model: a copy of its schedule's template, or
        the template itself for the schedule's last candidate (start it after the
        others). A schedule other than the first's has a template of its own
        (the 'frequency' schedule's model holds its feature counts in the budget)."""
        schedule = self.candidates[i][0]
        if schedule not in self.templates:
            self.templates[schedule] = self.estimator._new_state(
                self.n_models, self.X, schedule=schedule)
            self.estimator._start_intercept(self.templates[schedule], self.y,
                                            self.sample_weight)
        template = self.templates[schedule]
        last = max(j for j, c in enumerate(self.candidates) if c[0] == schedule)
        self.states[i] = template if i == last else template.independent_copy()
        if i == last:
            del self.templates[schedule]

    def train_part(self, i):
        """Train candidate ``i`` (started, not lost) on its next part."""
        state = self.states[i]
        est = self.estimator
        schedule, step = self.candidates[i]
        params = est._sgd_params(self.n_models, eta0=step, schedule=schedule)
        params.seed = state.shuffle_seed
        t, status, more, errors = est._train_order(state, params, self.csr, self.y,
                                                   self.sample_weight, self.parts[self.done[i]])
        if status == PassStatus.PASS_DIVERGED:
            self.lose(i)
            return
        state.t = t
        self.mistakes[i] += more
        self.read_errors[i] = self.read_errors[i] + np.asarray(errors, dtype=float)
        self.done[i] += 1
        if self.finished(i) and not est._state_is_finite(state):
            self.lose(i)

    def finished(self, i):
        return self.done[i] == len(self.parts)

    def lose(self, i):
        self.lost[i] = True
        self.states.pop(i, None)

    def keep_only(self, indices):
        """Let go of the models of the candidates not in ``indices`` (of all, ``lean``)."""
        for i in list(self.states):
            if self.lean or i not in indices:
                del self.states[i]

    def count(self, i):
        """Candidate ``i``'s mistakes so far, inf when it is lost."""
        return math.inf if self.lost[i] else float(self.mistakes[i])

    def kept(self, i):
        """``(state, rows, mistakes, read_errors)`` of candidate ``i`` after the whole
        probe, from which the first pass goes on; None when its model was let go."""
        if i is None or self.lost[i] or not self.finished(i) or i not in self.states:
            return None
        return self.states[i], self.rows, self.mistakes[i], self.read_errors[i]


def bar(first, z):
    """The count another candidate must stay under to beat the first's ``first``:
    ``first - z * sqrt(first)`` (None when the first was lost)."""
    return first - z * math.sqrt(first) if math.isfinite(first) else None


def trails(count, first, z):
    """Whether a candidate's ``count`` trails another's ``first`` (the fewest of
    those trained before it) on the same rows by at least ``z * sqrt(first)``."""
    return count - first >= z * math.sqrt(first)


# The schedules under which the steps below the best one err more the smaller they
# are, so that the descent may stop (choose_step): measured under 'normalized' and
# 'frequency' (the defaults). Under 'constant' and 'invscaling' the mistakes of IHT
# and truncation were often level across the steps, and not so ordered: at 11 of 78
# probes (20 Newsgroups tokens, DNA reads, four small tables) 3 erred no less than 10
# where 1 erred least, so the descent would have skipped the argmin.
DESCENT_SCHEDULES = ("normalized", "frequency")


def smaller_steps_above(candidates):
    """For each candidate of the first schedule with a smaller step than the
    first's, the index of the candidate of the next larger step (the first's
    for the largest of them): ``{i: above}``."""
    schedule, first = candidates[0]
    smaller = sorted((i for i, (s, step) in enumerate(candidates)
                      if s == schedule and step < first), key=lambda i: -candidates[i][1])
    return dict(zip(smaller, [0] + smaller[:-1]))


def training_order(candidates):
    """The order in which :func:`choose_step` trains the ``candidates``: the first,
    then the other schedules' (each may set the best count early), then the first
    schedule's others in their order (the smaller steps largest first)."""
    schedule = candidates[0][0]
    others = [i for i, c in enumerate(candidates) if i and c[0] != schedule]
    return [0] + others + [i for i, c in enumerate(candidates) if i and c[0] == schedule]


def choose_step(probe, n_threads=1, stop_losers=True, bar_stops=True):
    """One probe's choice: ``(winner, counts)``.

    The candidates train in :func:`training_order`. The first trains on the
    whole probe, and its count sets the bar; another stops at the end of a
    part once it has made as many mistakes as the bar (it cannot win; for
    another schedule the bar of ``_AUTO_SCHEDULE_Z`` roots), unless
    ``stop_losers`` or ``bar_stops`` is False. Where
    ``estimator._AUTO_RACE_Z`` is a number ``z`` (2), another also stops at
    the end of a part once it trails the best candidate trained whole before
    it (the fewest mistakes on the same rows) by ``z`` times the square root
    of that one's count there (:func:`trails`): to win, or to deny another
    schedule its margin, it would have to gain most of that back; and the
    steps smaller than the first's are
    tried largest first, until one makes no fewer mistakes than the next larger
    one on the rows both trained on (the mistakes fall with the step down to a
    best step and rise below it: on DNA reads, 20 Newsgroups and the flights
    each smaller step past the best erred more, or as often where the steps
    are small enough to score alike); the smaller ones are not trained (these
    two, unless ``stop_losers`` is False; the second only under the schedules
    of ``DESCENT_SCHEDULES``). With ``n_threads`` the candidates
    train in rounds of that many threads (the compiled pass releases the GIL),
    each round told only what earlier rounds did, and a candidate trained beside
    the first is not stopped; only the first's and the best other's models are
    kept between rounds (each schedule's best other; none by a ``lean`` probe, of
    a model past ``LEAN_BYTES``). ``winner`` indexes the candidate of
    ``estimator._auto_choice`` (None when every candidate was lost), told the
    mistakes of those stopped at the bar (their whole probe's count is no
    smaller; the first schedule's fewest is taken over them too);
    ``probe.kept(winner)`` is its model.
    """
    est = probe.estimator
    schedule = probe.candidates[0][0]
    # Each candidate's bar, once the first candidate is done: another schedule must
    # beat the first schedule's fewest by _AUTO_SCHEDULE_Z roots, hence the first's.
    z = [est._AUTO_Z if c[0] == schedule else est._AUTO_SCHEDULE_Z for c in probe.candidates]
    limit = [None]  # the first candidate's count, once it is done
    stopped = [math.inf] * len(probe.candidates)  # counts of those stopped at the bar
    history = {}  # each candidate's count after each of its parts
    whole = []  # candidates of earlier rounds trained on the whole probe
    diverged, skipped = set(), set()
    race_z = est._AUTO_RACE_Z
    descends = stop_losers and race_z is not None and schedule in DESCENT_SCHEDULES
    above = smaller_steps_above(probe.candidates) if descends else {}
    order = training_order(probe.candidates)
    position = {i: k for k, i in enumerate(order)}

    def train(i):
        if probe.lost[i]:
            return
        after_each_part = history.setdefault(i, [])
        while not probe.finished(i):
            probe.train_part(i)
            if probe.lost[i]:
                diverged.add(i)
                return
            after_each_part.append(probe.mistakes[i])
            # Not beside the first in threads: what stops a candidate there would
            # depend on the threads' timing.
            if position[i] >= n_threads and stop_losers and limit[0] is not None:
                if bar_stops and probe.mistakes[i] >= bar(limit[0], z[i]):
                    stopped[i] = probe.mistakes[i]
                    probe.lose(i)
                    return
                part = probe.done[i] - 1
                if (race_z is not None and not probe.finished(i)
                        and trails(probe.mistakes[i], min(history[j][part] for j in whole),
                                   race_z)):
                    probe.lose(i)
                    return
        if i == 0:
            limit[0] = probe.mistakes[0]

    def descended_past_best(i):
        """Whether the step above ``i`` (itself smaller than the first's) was not
        tried, or made no fewer mistakes than the one above it."""
        previous = above.get(i, 0)
        if previous in skipped:
            return True
        if previous == 0 or previous in diverged:
            return False
        # Empty in threads when it trains in this round.
        its, larger = history.get(previous, []), history.get(above[previous], [])
        k = min(len(its), len(larger))
        return k > 0 and its[k - 1] >= larger[k - 1]

    n = len(probe.candidates)
    best = {}  # each schedule's best candidate but the first
    for first in range(0, n, n_threads):
        indices = order[first:first + n_threads]
        for i in indices:
            if not probe.lost[i] and descended_past_best(i):
                skipped.add(i)
                probe.lose(i)
        # Started before any trains: the last candidate trains the template itself.
        for i in indices:
            if not probe.lost[i]:
                probe.start(i)
        if n_threads > 1:
            from concurrent.futures import ThreadPoolExecutor

            with ThreadPoolExecutor(n_threads) as pool:
                list(pool.map(train, indices))
        else:
            for i in indices:
                train(i)
        for i in indices:
            if not probe.lost[i] and probe.finished(i):
                whole.append(i)
            schedule = probe.candidates[i][0]
            if i and (schedule not in best or probe.count(i) < probe.count(best[schedule])):
                best[schedule] = i
        probe.keep_only({0, *best.values()})
    counts = [probe.count(i) for i in range(n)]
    return est._auto_choice(counts, stopped), counts


def train_share(probe):
    """One partition's share of a probe: every candidate's mistakes there.

    :mod:`sklearn_sketch.dask` sums the shares' counts and chooses with
    ``estimator._auto_choice``. A share stops a candidate that trails the
    first on its own rows, and leaves untried the smaller steps past the best,
    as one probe does (:func:`choose_step`; its count is then inf, and so is
    the sum), but never at the bar: a share's bar, two roots of about
    ``1/share`` of the count, would stop a candidate ahead by less than that on
    the share that wins on the whole probe. Emulated in one process on 200,000
    DNA reads and 20 Newsgroups tokens, the four estimators of
    ``benchmarks/bench_parallel.py`` with 2, 3, 4 and 8 partitions and with 2
    at 64KB, 1MB and 16MB: every summed choice the same as with every
    candidate trained whole, and 29 to 40 of 48 candidate parts trained (2
    partitions). Only the first candidate's model and each schedule's best
    other's are kept (``probe.kept``).
    """
    return choose_step(probe, bar_stops=False)[1]
