"""MISSION and the baselines it is measured against: IHT and feature hashing.

MISSION (Aghazadeh et al., ICML 2018, Algorithm 1): SGD whose weight vector
lives in a Count-Sketch; after each update the touched features are queried and
offered to a top-k heap, and the heap is the model. IHT keeps only the heap
(hard thresholding after every update). Feature hashing keeps only a depth-1
sketch: the accuracy reference at equal memory, with no feature identities.
"""
from numbers import Integral

from sklearn.base import ClassifierMixin, RegressorMixin
from sklearn.utils._param_validation import Interval, StrOptions

from ._base import (
    N_JOBS_DOC,
    _CLASSIFIER_LOSSES,
    _BaseSketchSGD,
    _init_sgd_params,
    _SketchClassifierMixin,
    _SketchRegressorMixin,
    _SketchSelectorMixin,
)
from . import _stores

_SKETCH_CONSTRAINTS = {
    "sketch_width": [Interval(Integral, 1, 2**31, closed="both")],
    "sketch_depth": [Interval(Integral, 1, 64, closed="both")],
}
_SELECTION_CONSTRAINTS = {
    "n_features_to_select": [Interval(Integral, 1, None, closed="left")],
}
_MEMORY_CONSTRAINTS = {
    "memory_budget": [Interval(Integral, 16, None, closed="left"), str, None],
}
#: Heap-only models: a capacity, or None to fill ``memory_budget``.
_CAPACITY_OR_BUDGET_CONSTRAINTS = {
    **_MEMORY_CONSTRAINTS,
    "n_features_to_select": [Interval(Integral, 1, None, closed="left"), None],
}
_MISSION_BUDGET_DOC = """
    memory_budget : int or str, default=None
        Bytes of the whole fitted estimator, all classes together
        (``memory_bytes_ <= memory_budget``), or None to use
        ``n_features_to_select`` and ``sketch_width`` as given. A budget
        replaces both: after the intercepts each model (one per class for
        multi-class) gets an equal part, a quarter to its heap (about 22.7
        bytes an entry) and three quarters to its ``sketch_depth`` rows of
        float32 cells, since the heap holds the k selected features while the
        sketch carries the gradient of every feature. The shape chosen is in
        ``sketch_width_``, ``sketch_depth_`` and ``n_features_to_select_``.
        MISSION's gradient reads the heap alone (the paper's Algorithm 1), so
        it needs a heap that holds most of the model: on 20 Newsgroups (20
        classes) it is level with feature hashing from 16MB (0.817 against
        0.817 on words) and far under it below (0.654 against 0.779 at 1MB),
        whatever the heap's share (from a fiftieth to three quarters: 0.543
        to 0.654 at 1MB, a quarter best); below that the WM- and AWM-Sketch,
        whose gradient reads every feature, are the ones to use."""
_HEAP_ONLY_BUDGET_DOC = """
    n_features_to_select : int, default=None
        Number of weights kept by each model (``k``), or None to fill
        ``memory_budget``.
    memory_budget : int or str, default='4MB'
        Bytes of the whole fitted estimator, all classes together
        (``memory_bytes_ <= memory_budget``), when ``n_features_to_select``
        is None: after the intercepts (and the table of 'frequency' or
        'adaptive', at most a sixteenth), equal heaps, about 22.7 bytes an
        entry plus the kept names; the capacity chosen is
        ``n_features_to_select_``. 4MB is the WM- and AWM-Sketch's default.
        The earlier default, 1,000 entries a class whatever the data (91 KB
        on DNA reads of four species), scored 0.365 from the command line on
        held-out strains (chance 0.25; 30,000 entries 0.707, 150,000 0.869)
        and 0.695 on 20 Newsgroups words."""
_HASHING_BUDGET_DOC = """
    memory_budget : int or str, default=None
        Bytes of the whole fitted estimator, all classes together, or None to
        use ``sketch_width`` as given. A budget replaces it: after the
        intercepts each model gets an equal part of float32 cells; the width
        chosen is ``sketch_width_``."""

_OTHER_SGD_PARAMS_DOC = """
    power_t : float, default=0.5
        Exponent of the 'invscaling' schedule.
    alpha : float, default=0.0
        L2 penalty, applied lazily through the sketch's and heap's global scale.
    fit_intercept : bool, default=True
        Learn an (unsketched) intercept. A classifier's starts at 0; a
        regressor's at the first fit's mean target when that lies more than 10
        of the targets' standard deviations from 0 (a latitude), else at 0.
    batch_size : int, default=1
        Samples per update; their gradient is averaged before it enters the model.
    max_iter : int, default=5
        Passes over the data in :meth:`fit`.
    shuffle : bool, default=True
        Shuffle the samples before each pass.
    random_state : int, RandomState instance or None, default=None
        Seeds the sketch's hashes and the shuffling.
    warm_start : bool, default=False
        Continue from the previous model in :meth:`fit`.
    verbose : int, default=0
        Print a line per pass."""

#: 'normalized' on dense input, in every estimator's learning_rate (benchmarks/
#: bench_dense_columns.py).
STANDARDIZE_NOTE = """ With dense input, 'normalized' also standardizes each
        column (its first data's mean and standard deviation: ``feature_mean_``,
        ``feature_scale_``), so a column's range does not matter either: raw
        breast cancer, wine and iris (5-fold CV, defaults) scored 0.59-0.89,
        0.08-0.63 and 0.67-0.95 read as given, 0.95-0.98 standardized, as
        ``StandardScaler`` in front gives. A sparse table (at most 1,000
        columns, mostly zeros) is scaled by the root mean square of each
        column's entries, keeping its zeros (the weather's precipitation,
        fields one-hot beside raw columns: 0.933 read as given, 0.938-0.945
        scaled; the flights' late arrivals 0.907-0.918 and 0.913-0.918); one
        at least half non-zero is read as the array it is. Wider sparse input (keys: Vowpal Wabbit files, raw
        ``{name: value}`` dicts, hashed features) whose first 10,000 rows hold at
        most 1,000 features of values other than 1 has its measured features
        (most values other than 1, with fractions or values past 16) scaled by
        the root mean square of their values (``scaled_keys_``, ``key_scales_``):
        the flights as raw dicts of categories and seven measurements scored
        0.64 read as given, under the majority class, and 0.915-0.916 scaled
        (0.901-0.914 by their largest values).
        Counts of words or k-mers measure thousands of features and are read
        as given."""

#: The statistics of standardized dense columns (estimators that standardize them).
STANDARDIZE_ATTRIBUTES_DOC = """
    feature_mean_, feature_scale_ : ndarray of shape (n_features,)
        With ``learning_rate='normalized'`` and dense input: each column's mean
        and standard deviation (1 for a constant column) in the first call's
        rows. The model reads ``(X - feature_mean_) / feature_scale_``, so
        ``coef_`` and the selected features' weights are per standard
        deviation of their column, comparable across columns. A sparse input
        of at most 1,000 columns, mostly zeros: mean 0 and the root mean
        square of each column's entries (1 for an empty column), so the weights
        are per that value. Absent when the columns are read as given: sparse input
        of more than 1,000 columns, a first call of fewer than 30 rows,
        statistics (16 bytes a column) that would take more than a quarter of
        ``memory_budget``, or a dense array of more than 1,000 columns that is
        mostly zeros (centring would fill its rows).
    scaled_keys_, key_scales_ : ndarray of shape (n_measured,)
        With ``learning_rate='normalized'`` and sparse input of more than 1,000
        columns: its measured features (most of their values in the first
        call's first 10,000 rows other than 1, with fractions or values past
        16; at most 1,000 features with values other than 1) and their largest
        absolute values; the model reads each divided by its value. Absent for
        counts of words or k-mers and for indicators."""

#: learning_rate='auto', the default of MISSION, feature hashing and the (A)WM-Sketch
#: (benchmarks/bench_schedules.py: its data and budgets, 5 passes; the probe's counts).
AUTO_SCHEDULE_NOTE = """'auto' chooses 'normalized' or another schedule on
        the probe that ``eta0='auto'`` runs (it runs for 'auto' with a given
        ``eta0`` too), as ``learning_rate_``: 'adaptive' for feature hashing and
        the WM- and AWM-Sketch, 'frequency' for MISSION. On 20 Newsgroups
        (word uni+bigrams as tokens and as L2 rows, 1MB to 16MB) 'adaptive'
        erred on 3 to 9% fewer of the probe's rows than 'frequency' and
        scored 0.4 to 1.7 points over it after one pass (one pass over its
        words from the command line: feature hashing 0.823, ``vw --oaa 20 -b
        24`` 0.822; binary tasks, ``benchmarks/bench_binary_text.py``, mean of
        three orders of the lines: computing and science posts against the
        rest 0.943-0.944, Vowpal Wabbit 0.930, atheism against christian
        0.932-0.935, Vowpal Wabbit 0.940); after 5 passes 0.2 to 1.0 over at 16MB
        and 0.1 over to 1.0 under at 1MB and 4MB; MISSION's heap-read
        gradient scored 1.7 and 3.8 points under with it at 16MB. The other
        schedule is tried only where
        the probe's features load the sketch lightly (as a larger step is, see
        ``eta0``), with the largest step ``eta0`` tries (3; it erred less
        than 1 under 'frequency' wherever both were measured), and kept
        only where it misclassified fewer of the probe's samples than the
        best 'normalized' step, by more than 1.5 times the square root of
        that one's count. Measured for 'frequency': on 20 Newsgroups (20
        classes; words, and L2-normalized rows) it erred on about a fifth
        fewer than 'normalized' and was kept from
        1MB up: 1.8 to 3.6 points over 'normalized' after 5 passes (at 64KB
        and 256KB, where the sketch is loaded, it scored 2.3 under to 0.9
        over); on its TF-IDF rows from the command line it was kept for
        feature hashing, the AWM-Sketch and MISSION (1.4 points over
        'normalized' for the first two; 1.2 roots fell short for the
        WM-Sketch). On DNA reads the two were
        within 1.2 roots at every budget and 'normalized' stayed
        ('frequency' scored 0.2 to 1.4 points under it below 4MB). MISSION tries it where it tries the step 3, from about
        16MB for 20 classes: at 1MB its heap-read gradient fell from 0.654 to
        0.490 under 'frequency'."""

_LEARNING_RATE_DOC = """
    learning_rate : {'auto', 'normalized', 'frequency', 'adaptive', 'invscaling', \
'constant', 'optimal'}, default=@DEFAULT@
        Step size schedule. @AUTO@'normalized' (normalized least mean squares; Vowpal
        Wabbit normalizes its updates too) steps each sample's weights by
        ``eta0 / max(||x||**2, norm_floor_)`` and the intercept by
        ``eta0 / (nnz(x) + 1)``, so an update moves the sample's margin by the
        same amount whatever the scale of the features (counts, binary,
        L2-normalized, TF-IDF, standardized): the default needs no tuning.
        ``norm_floor_`` is the median ``||x||**2`` of the first data's rows: a
        shorter row (standardized features near their means) steps as the
        median row would instead of throwing the weights by ``eta0 / ||x||``
        (5-fold CV on standardized iris: feature hashing 0.69 without the
        floor, 0.95 with it; 20 Newsgroups token counts up to 2 points better;
        DNA reads and L2-normalized rows, of equal norms, unchanged).
        'frequency' steps as 'normalized' with each feature's share scaled by
        ``1 / sqrt(n_j)``, ``n_j`` the times the feature occurred so far:
        the update is ``eta0 x_j / sqrt(n_j)``, divided by
        ``sum(x_j**2 / sqrt(n_j))`` (the floor scaling it as it would
        ``||x||**2``). It is AdaGrad's per-coordinate step with counts for the
        squared gradients (McMahan et al., 2013, "computing learning rates
        with counts"): rare features (words, strain-specific k-mers) learn
        faster than the frequent ones. The counts are kept in a table of
        65,536 cells (uint32, 256 KB; at most a sixteenth of
        ``memory_budget``) shared by the classes, hashed by key. Where every
        feature is in every row (dense columns) it is 'normalized'. One pass
        over 20 Newsgroups words as Vowpal Wabbit text (raw counts), from the
        command line, 'normalized' against 'frequency': feature hashing 0.710
        -> 0.814, the AWM-Sketch 0.711 -> 0.808, MISSION 0.708 -> 0.808
        (``vw --oaa 20`` with its defaults: 0.783; 'auto' chose
        'frequency'). 'adaptive' steps as 'frequency' with ``n_j`` the sum of
        the feature's squared gradients so far (``sum_c dloss_c**2 x_j**2``
        over the classes, float32 in the same table): AdaGrad's
        per-coordinate step itself, inside the normalized update, so a
        feature of the samples the model already gets right keeps a larger
        share. Vowpal Wabbit's default update is adaptive too (without it,
        its one pass over 20 Newsgroups computing and science posts against
        the rest scored 0.862, with it 0.930; ``benchmarks/bench_binary_text.py``,
        mean of three orders).""" + STANDARDIZE_NOTE + """
        The others have scikit-learn's meanings:
        ``eta0 / t**power_t``, ``eta0``, or ``1 / (alpha * (t0 + t))``; ``t``
        counts samples."""

#: eta0='auto' (the default) of the estimators whose step was a number (measured with
#: benchmarks/bench_vw_interactions.py's flights and bench_accuracy_memory.py's data).
ETA0_AUTO_NOTE = """It keeps that step unless smaller ones (down to 0.03)
        misclassified fewer samples of a probe (the first tenth of the first
        pass, at most 10,000 rows, or more rows until they hold 500,000
        non-zeros), just before their update, by more than twice the square
        root of its own count; then the fewest of those wins (``eta0_``;
        chosen once). The first pass goes on from the winner's training on
        the probe, so the others cost at most one training on it each, in
        threads with ``n_jobs``: a candidate stops at the end of a quarter of
        the probe once it has made more mistakes than the first's whole count
        allows it, or trails the best candidate trained before it on the same
        rows by twice the square root of that one's count there (another
        schedule, under learning_rate='auto', trains second; on 200,000 DNA
        reads the smaller
        steps stopped after a quarter or a half; the chosen one never trailed
        so on any data measured); the smaller steps are tried largest first,
        and no further once one misclassifies no fewer than the next larger
        (on DNA reads, 20 Newsgroups and the flights the mistakes fell with
        the step to a best one and rose, or stayed level, below it: the same
        choices, a quarter fewer trainings). The probe favours steps
        that learn fast, so a smaller step that still wins it clearly is
        taken: labels that are mostly noise (delays, clicks) want one. On the
        flights out of New York (delayed more than 15 minutes, 1MB, 5 epochs)
        'auto' chose 0.03 and raised the test ROC AUC from 0.677 to 0.711
        for feature hashing and the AWM-Sketch (one pass from the command
        line: 0.636 to 0.671; Vowpal Wabbit 0.686); on 20 Newsgroups (tokens
        and hashed) and DNA reads at 64KB, 1MB and 16MB
        (``benchmarks/bench_accuracy_memory.py``) it kept the former step
        for all four estimators, every accuracy unchanged."""

#: Step 3 against 1, 5 epochs, each fixed (benchmarks/bench_accuracy_memory.py's data
#: and budgets); probe features a cell counted on the first pass's probe.
LARGER_STEP_NOTE = """
        Feature hashing and the WM- and AWM-Sketch also try 3, after 1 and
        only on a lightly loaded sketch: at most 50 distinct features of the
        probe per sketch cell (width times depth). 3 must beat 1 on the probe
        as a smaller step must. A large step learns faster, but on a loaded
        sketch each step is noise on the features it collides with, and that
        noise adds up after the probe, where the probe cannot see it. With 3
        instead of 1 (5 epochs): on 20 Newsgroups (20 classes, tokens and
        L2-normalized), +0.6 to +1.4 points from 1MB to 64MB (21 to 25 probe
        features a cell at 1MB), -0.4 to +0.1 at 256KB (82 to 100) and -2.1
        to -3.3 at 64KB (330 to 1000); on DNA reads, -2 to -3.2 points at
        64KB and 256KB (85 and 21 a cell) and +0.1 to +0.2 from 4MB, where
        the probe keeps 1 but at 64MB. On binary tasks of the same data
        (comp.* against the other groups, E. coli against the other species;
        feature hashing and AWM, 16KB to 1MB) it took the better of 1 and 3 in
        15 of 16 settings (0.4 points short in the other): 3 gained up to 1.2
        points and would have lost up to 3.3."""

# Measured with benchmarks/bench_accuracy_memory.py's data and budgets, 5 epochs, each
# step fixed; probe features a cell as LARGER_STEP_NOTE counts them.
_ETA0_SELECTOR_DOC = """
    eta0 : float or 'auto', default='auto'
        Step size (the first one for 'invscaling'). 'auto' starts from 1 and
        tries 3 only where the probe's features load the sketch lightly: at
        most 4 distinct features of the probe per cell (width times depth),
        where 3 must also beat 1 on the probe. With 'normalized', 1 against 3
        on 20 Newsgroups (20 classes): token counts +2.5, +2.7 and +0.7 points
        at 256KB, 1MB and 4MB (138, 34 and 9 probe features a cell) and -2.0 at
        16MB (2.2); L2-normalized rows +3.3, +6.3 and +1.6 at 256KB to 4MB and
        -1.3 at 16MB; DNA 12-mers within 0.1 up to 1MB and -0.4 at 4MB and
        16MB (6.0 and 1.5 a cell). Where the sketch is loaded, a large step's
        noise on the features it collides with adds up over the passes, after
        the probe (which favours the faster learner) has chosen; the load
        tells the two regimes apart where the probe cannot: 'auto' gives
        0.349, 0.654, 0.765 and 0.787 on token counts from 256KB to 16MB and
        0.405, 0.666, 0.784 and 0.807 on L2-normalized rows (starting from 3,
        it gave 0.324, 0.627, 0.758, 0.787 and 0.372, 0.603, 0.768, 0.807),
        under 'normalized'; at 16MB ``learning_rate='auto'`` chooses
        'frequency' there, with 3: 0.817 and 0.832.
        """ + ETA0_AUTO_NOTE

_ETA0_HASHING_DOC = """
    eta0 : float or 'auto', default='auto'
        Step size (the first one for 'invscaling'). With 'normalized', values
        from 1 to 3 were within about a point of the best on DNA 12-mer counts
        and on 20 Newsgroups (raw counts and L2-normalized); 3 alone fails
        scikit-learn's check that a classifier fits a small dense task:
        'auto' starts from 1. """ + ETA0_AUTO_NOTE + LARGER_STEP_NOTE

# eta0='auto' of the heap-only models (IHT, truncation): the fewest mistakes
# (_AUTO_Z = 0) over a tenth of the first pass, however large (capped at 10,000 rows
# it chose 3 for 10 on 400,000 DNA reads, 0.7 points lower). Largest first, with a
# race of three roots (_step_probe.choose_step): on DNA reads and 20 Newsgroups the
# largest erred least, the others soon trailed it, and the descent left 1 untried;
# on small tables (iris, wine, breast cancer, digits) and the flights 1 or 3 won.
# Replayed on every candidate's count after each part of 94 probes (DNA reads,
# 20,000 a strain at 5 budgets, 100,000 at 3, 200,000 and 400,000 at 7 shapes each,
# for IHT, truncation and probabilistic truncation; 20 Newsgroups tokens and L2 rows
# at 15 settings each; the four tables, raw and standardised, 24; the flights from
# the command line, 2): every choice the same as the argmin of every candidate
# trained whole, and 1,102 candidate parts fell to 795 (12 to 5-8 on DNA, 7-8 on 20
# Newsgroups; 8-12 to 12 on the small sets). A race of two roots (756) stopped 3 on
# a test's task where it ended 0.2 roots ahead. Since learning_rate='auto' tries
# 'adaptive' 10 too (trained second), 3 races the better of the two: on 200,000 DNA
# reads at the papers' shape it stops after half the probe, not at its end.
HEAP_ONLY_AUTO_ETA0, HEAP_ONLY_RACE_Z = (10.0, 3.0, 1.0), 3.0

#: The schedule learning_rate='auto' tries beside 'normalized' for feature hashing and
#: the (A)WM-Sketch: 'adaptive' (squared gradients). On 20 Newsgroups (word uni+bigrams
#: as tokens and as L2 rows, 1MB to 16MB, step 3) it erred on 3 to 9% fewer of the
#: probe's first 2,000 rows than 'frequency', and scored 0.4 to 1.7 points over it after
#: one pass; after 5 passes 0.2 to 1.0 over at 16MB, 0.1 over to 1.0 under at 1MB and
#: 4MB. MISSION keeps 'frequency': its heap-read gradient scored 1.7 and 3.8 under
#: with 'adaptive' at 16MB (5 passes), where 'auto' takes it.
AUTO_OTHER_SCHEDULE = "adaptive"

# Measured with benchmarks/bench_accuracy_memory.py's data, 5 epochs (IHT, heaps of
# 11540 and 2307 per class), and the probe's choice on each.
ETA0_AUTO_DOC = """
    eta0 : float or 'auto', default='auto'
        Step size (the first one for 'invscaling'). 'auto' tries 10, 3 and 1
        on the first tenth of the first pass (at least 2000 rows) and keeps
        the step that misclassified the fewest samples just before their
        update (``eta0_``; a step that trails the best tried before it (10,
        or 'adaptive' 10 under learning_rate='auto') by three square roots
        of its count is stopped there, and, under 'normalized', 1 is not tried where 3
        erred no less than 10: 0.03 to 0.1 passes more where 10 wins, 0.2
        where 1 does). A heap-only model keeps a step only on the features
        that stay in its heap, so its best step depends on how much of a
        sample the heap holds: with 'normalized', 30 scored 0.679 and 3 0.627
        on DNA 12-mers, 3 scored 0.783 and 30 0.757 on L2-normalized 20
        Newsgroups; 'auto' chose 10 on both (0.661 and 0.782)."""
_AUTO_LEARNING_RATE_DOC = (_LEARNING_RATE_DOC.replace("@DEFAULT@", "'auto'")
                           .replace("@AUTO@", AUTO_SCHEDULE_NOTE + "\n        "))
#: learning_rate='auto' of IHT (benchmarks/bench_accuracy_memory.py's data and sizing,
#: 5 passes; the command line as its README shows, on the same data).
HEAP_ONLY_AUTO_SCHEDULE_NOTE = """'auto' chooses 'normalized' or 'adaptive'
        on the probe of ``eta0='auto'`` (as ``learning_rate_``; 'adaptive'
        with the step 10, kept where it misclassified fewer of the probe's
        samples than the best 'normalized' step by more than 1.5 square roots
        of that one's count). A heap-only model forgets an evicted weight, so
        steps that shrink for the features already learnt leave the heap to
        the features that help: 5 passes over 20 Newsgroups words (20
        classes) at 1MB, 4MB and 16MB scored 0.770, 0.786 and 0.794 under
        'normalized', 0.807, 0.829 and 0.834 under 'auto' (which took
        'adaptive'; the AWM-Sketch scored 0.775, 0.811 and 0.823 there); on
        DNA reads of four species 0.661, 0.811 and 0.896 against 0.645, 0.836
        and 0.896 (it took 'adaptive' at 1MB and 4MB). One pass from the
        command line with the defaults: 20 Newsgroups words 0.826 (0.695
        before 'auto' and the 4MB budget), held-out DNA strains 0.762 (it
        kept 'normalized'; 0.365 before). """
_HEAP_ONLY_LEARNING_RATE_DOC = (_LEARNING_RATE_DOC.replace("@DEFAULT@", "'auto'")
                                .replace("@AUTO@", HEAP_ONLY_AUTO_SCHEDULE_NOTE + "\n        "))
_AUTO_SELECTOR_PARAMS_DOC = _HEAP_ONLY_LEARNING_RATE_DOC + ETA0_AUTO_DOC + _OTHER_SGD_PARAMS_DOC
_SELECTOR_PARAMS_DOC = _AUTO_LEARNING_RATE_DOC + _ETA0_SELECTOR_DOC + _OTHER_SGD_PARAMS_DOC
_HASHING_PARAMS_DOC = _AUTO_LEARNING_RATE_DOC + _ETA0_HASHING_DOC + _OTHER_SGD_PARAMS_DOC

_REGRESSOR_PARAMS_DOC = """
    learning_rate : {'normalized', 'frequency', 'adaptive', 'auto', 'invscaling', \
'constant', 'optimal'}, default='normalized'
        Step size schedule: ``eta0 / max(||x||**2, norm_floor_)`` (normalized
        least mean squares, dense columns standardized: see the classifiers),
        the same with each feature's share scaled by ``1 / sqrt(its count)``
        or by ``1 / sqrt(its squared gradients)`` (see the classifiers), the choice of the two on a probe ('auto', see
        the classifiers; measured on classification only),
        ``eta0 / t**power_t``, ``eta0`` or ``1 / (alpha * (t0 + t))`` (``t``
        counts samples). The earlier default, 'invscaling' with ``eta0=0.01``
        (``SGDRegressor``'s), diverged on every raw table tried, as
        ``SGDRegressor()`` does (test R^2 about -1e24 on scikit-learn's
        diabetes, 5-fold, on the hourly temperature at New York's airports
        from the other weather columns, and on the flights' arrival delays
        from schedule, distance and departure delay); 'normalized' scored
        0.479, 0.992 and 0.878 there (``StandardScaler`` + ``Ridge``: 0.490,
        0.992, 0.882).
    eta0 : float, default=0.1
        Initial step size. With 'normalized', 0.01, 0.1, 0.3 and 1 scored
        0.33, 0.48, 0.41 and -0.13 on diabetes (442 rows), 0.88, 0.88, 0.88
        and 0.83 on the flights (261,000 rows).""" + _OTHER_SGD_PARAMS_DOC

_PREDICT_WITH_DOC = """
    predict_with : {'auto', 'sketch', 'heap'}, default='auto'
        What predictions read. 'heap': the heap's ``k`` weights only (the
        paper's model, ``coef_``). 'sketch': also the sketch's estimate of
        every feature outside the heap, so a sample is scored by all its
        features, as feature hashing scores it. 'auto' picks, at the end of
        each fit or partial_fit, the one whose predictions of training samples
        just before their update erred less (progressive validation, on every
        fourth sample for MISSION, every sample for BEAR; recent
        passes weigh most; ties go to the heap); ``predict_with_``
        says which. The sketch wins when the heap's ``k`` features are absent
        from most samples (DNA reads of held-out strains: 0.90 against 0.55 for
        the heap alone, with the paper's sizes); the heap wins when a few
        features decide and the others only add noise. Ask for 'heap' to ship
        a model shrunk to its selected features, or to explain predictions by
        them alone. Selection (``get_support``, ``transform``, names) is the
        heap's top ``k`` either way."""


#: The floor of the 'normalized' step (not BEAR's, which divides by its batch's mean).
NORM_FLOOR_DOC = """
    norm_floor_ : float
        With ``learning_rate='normalized'``, the median ``||x||**2`` of the
        first data's rows (the first call's first 10,000; calls of fewer rows
        add theirs until 256 are seen): no update steps the weights by more
        than ``eta0 / norm_floor_``."""

_COMMON_ATTRIBUTES_DOC = """
    learning_rate_ : str
        The schedule trained under: ``learning_rate``, or for 'auto' the one
        the first fit chose ('normalized' or 'frequency').
    intercept_ : ndarray of shape (n_models,)
        Intercepts (one model per class for multi-class, else one).
    sketches_ : list of CountSketch
        The sketches of the models (queryable); empty for IHT.
    heaps_ : list of TopKHeap
        The top-k heaps of the models; empty for feature hashing.
    memory_bytes_ : int
        Bytes held by everything that grows with the model (sketches, heaps,
        intercepts, kept feature names, the statistics of standardized dense
        columns): independent of ``n_samples`` and, but for those statistics,
        of ``n_features``; at most ``memory_budget`` when one is given.
    n_features_in_ : int
        Number of columns seen in fit.
    n_iter_ : int
        Passes run by the last call to fit or partial_fit.
    t_ : float
        Samples seen plus one (the schedule's clock)."""


class MissionClassifier(_SketchSelectorMixin, ClassifierMixin, _SketchClassifierMixin, _BaseSketchSGD):
    __doc__ = f"""MISSION: feature selection by SGD with the weights in a Count-Sketch.

    Each update adds the stochastic gradient to a Count-Sketch of the full weight
    vector, then offers the touched features' new estimates to a top-k heap,
    whose keys are the selected features. The heap's weights are the paper's
    model; predictions may read the sketch too (``predict_with``). Memory is
    the sketch plus the heap, whatever ``n_features``.
    Multi-class problems get one sketch and one heap per class, with the softmax
    loss for ``loss='log_loss'`` and one-vs-rest for the others.

    Parameters
    ----------
    n_features_to_select : int, default=1000
        Size ``k`` of each heap: the number of features kept and selected.
    loss : {{'log_loss', 'hinge', 'modified_huber'}}, default='log_loss'
        Loss minimized.
    sketch_width : int, default=2**18
        Buckets per sketch row.
    sketch_depth : int, default=3
        Sketch rows (independent hashes).{_SELECTOR_PARAMS_DOC}{_PREDICT_WITH_DOC}{_MISSION_BUDGET_DOC}{N_JOBS_DOC}

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
        Class labels.
    coef_ : scipy.sparse.csr_matrix of shape (n_models, n_features)
        The heap weights: the only non-zero weights of the model.
    selected_features_ : SelectedFeatures
        Keys and weights of the selected features, most important first.
    predict_with_ : {{'heap', 'sketch'}}
        What predictions read (``predict_with``, resolved for 'auto').{_COMMON_ATTRIBUTES_DOC}{NORM_FLOOR_DOC}{STANDARDIZE_ATTRIBUTES_DOC}

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_sketch import MissionClassifier
    >>> rng = np.random.RandomState(0)
    >>> X = rng.normal(size=(400, 50))
    >>> y = (X[:, 3] - 2 * X[:, 17] > 0).astype(int)
    >>> clf = MissionClassifier(n_features_to_select=2, sketch_width=256,
    ...                         random_state=0).fit(X, y)
    >>> clf.get_support(indices=True)
    array([ 3, 17])
    >>> clf.score(X, y) > 0.95
    True
    """

    _store = _stores.SKETCH_AND_HEAP
    _AUTO_ETA0, _AUTO_LIGHT_LOAD = (1.0, 3.0, 0.3, 0.1, 0.03), 4
    _parameter_constraints = {
        **_BaseSketchSGD._parameter_constraints, **_SKETCH_CONSTRAINTS,
        **_SELECTION_CONSTRAINTS, **_MEMORY_CONSTRAINTS,
        "loss": [StrOptions(_CLASSIFIER_LOSSES)],
        "predict_with": [StrOptions({"auto", "heap", "sketch"})],
    }

    def __init__(self, n_features_to_select=1000, *, loss="log_loss", sketch_width=2**18,
                 sketch_depth=3, learning_rate="auto", eta0="auto", power_t=0.5,
                 alpha=0.0, fit_intercept=True, batch_size=1, max_iter=5, shuffle=True,
                 random_state=None, warm_start=False, verbose=0, predict_with="auto",
                 memory_budget=None, n_jobs=None):
        self.n_jobs = n_jobs
        self.memory_budget = memory_budget
        self.n_features_to_select = n_features_to_select
        self.loss = loss
        self.sketch_width = sketch_width
        self.sketch_depth = sketch_depth
        self.predict_with = predict_with
        _init_sgd_params(self, learning_rate, eta0, power_t, alpha, fit_intercept, batch_size,
                     max_iter, shuffle, random_state, warm_start, verbose)


class MissionRegressor(_SketchSelectorMixin, RegressorMixin, _SketchRegressorMixin, _BaseSketchSGD):
    __doc__ = f"""MISSION for regression (squared error): the paper's sparse recovery setting.

    See :class:`MissionClassifier`; the loss is ``(y - x @ w)**2 / 2``.

    Parameters
    ----------
    n_features_to_select : int, default=1000
        Size ``k`` of the heap: the number of features kept and selected.
    loss : {{'squared_error'}}, default='squared_error'
        Loss minimized.
    sketch_width : int, default=2**18
        Buckets per sketch row.
    sketch_depth : int, default=3
        Sketch rows (independent hashes).{_REGRESSOR_PARAMS_DOC}{_PREDICT_WITH_DOC}{_MISSION_BUDGET_DOC}{N_JOBS_DOC}

    Attributes
    ----------
    coef_ : scipy.sparse.csr_matrix of shape (1, n_features)
        The heap weights.
    selected_features_ : SelectedFeatures
        Keys and weights of the selected features, most important first.
    predict_with_ : {{'heap', 'sketch'}}
        What predictions read (``predict_with``, resolved for 'auto').{_COMMON_ATTRIBUTES_DOC}{NORM_FLOOR_DOC}{STANDARDIZE_ATTRIBUTES_DOC}

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_sketch import MissionRegressor
    >>> rng = np.random.RandomState(0)
    >>> X = rng.normal(size=(500, 100))
    >>> y = 2 * X[:, 5] - 3 * X[:, 60]
    >>> reg = MissionRegressor(n_features_to_select=2, sketch_width=512, eta0=0.05,
    ...                        learning_rate="constant", random_state=0).fit(X, y)
    >>> reg.get_support(indices=True)
    array([ 5, 60])
    """

    _store = _stores.SKETCH_AND_HEAP
    _parameter_constraints = {
        **_BaseSketchSGD._parameter_constraints, **_SKETCH_CONSTRAINTS,
        **_SELECTION_CONSTRAINTS, **_MEMORY_CONSTRAINTS,
        "loss": [StrOptions({"squared_error"})],
        "predict_with": [StrOptions({"auto", "heap", "sketch"})],
    }

    def __init__(self, n_features_to_select=1000, *, loss="squared_error", sketch_width=2**18,
                 sketch_depth=3, learning_rate="normalized", eta0=0.1, power_t=0.25,
                 alpha=0.0, fit_intercept=True, batch_size=1, max_iter=5, shuffle=True,
                 random_state=None, warm_start=False, verbose=0, predict_with="auto",
                 memory_budget=None, n_jobs=None):
        self.n_jobs = n_jobs
        self.memory_budget = memory_budget
        self.n_features_to_select = n_features_to_select
        self.loss = loss
        self.sketch_width = sketch_width
        self.sketch_depth = sketch_depth
        self.predict_with = predict_with
        _init_sgd_params(self, learning_rate, eta0, power_t, alpha, fit_intercept, batch_size,
                     max_iter, shuffle, random_state, warm_start, verbose)


class _CapacityOrBudget:
    """Heap-only models: ``n_features_to_select`` entries a model if given, else the
    largest heaps that fit ``memory_budget`` (the base's budget shape: a store
    without a sketch gives its heaps the whole budget)."""

    def _model_shape(self, n_models=1, reserved=0):
        if self.n_features_to_select is not None:
            return None, None, self.n_features_to_select
        if self.memory_budget is None:
            raise ValueError("give memory_budget or n_features_to_select")
        return super()._model_shape(n_models, reserved)


class IHTClassifier(_CapacityOrBudget, _SketchSelectorMixin, ClassifierMixin,
                    _SketchClassifierMixin, _BaseSketchSGD):
    __doc__ = f"""Iterative hard thresholding: SGD keeping only the top k weights.

    After every update the weights are hard-thresholded to the ``k`` largest
    (MISSION paper, eq. 3): only the heap exists, and an evicted weight is
    forgotten. The baseline MISSION and BEAR are measured against.

    Parameters
    ----------{_HEAP_ONLY_BUDGET_DOC}
    loss : {{'log_loss', 'hinge', 'modified_huber'}}, default='log_loss'
        Loss minimized.{_AUTO_SELECTOR_PARAMS_DOC}{N_JOBS_DOC}

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
        Class labels.
    eta0_ : float
        With ``eta0='auto'``, the step chosen by the first fit.
    coef_ : scipy.sparse.csr_matrix of shape (n_models, n_features)
        The kept weights.
    n_features_to_select_ : int
        Heap capacity of each model.
    selected_features_ : SelectedFeatures
        Keys and weights of the selected features, most important first.{_COMMON_ATTRIBUTES_DOC}{NORM_FLOOR_DOC}{STANDARDIZE_ATTRIBUTES_DOC}

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_sketch import IHTClassifier
    >>> rng = np.random.RandomState(0)
    >>> X = rng.normal(size=(400, 50))
    >>> y = (X[:, 3] - 2 * X[:, 17] > 0).astype(int)
    >>> clf = IHTClassifier(n_features_to_select=5, random_state=0).fit(X, y)
    >>> bool(clf.get_support()[17])
    True
    """

    _store = _stores.HEAP_ONLY
    _AUTO_ETA0, _AUTO_Z, _AUTO_PROBE_NNZ, _AUTO_PROBE_TENTH = HEAP_ONLY_AUTO_ETA0, 0.0, 0, None
    _AUTO_RACE_Z = HEAP_ONLY_RACE_Z
    _AUTO_OTHER_SCHEDULE = AUTO_OTHER_SCHEDULE
    _parameter_constraints = {
        **_BaseSketchSGD._parameter_constraints, **_CAPACITY_OR_BUDGET_CONSTRAINTS,
        "loss": [StrOptions(_CLASSIFIER_LOSSES)],
    }

    def __init__(self, n_features_to_select=None, *, memory_budget="4MB", loss="log_loss",
                 learning_rate="auto", eta0="auto", power_t=0.5, alpha=0.0,
                 fit_intercept=True, batch_size=1, max_iter=5, shuffle=True, random_state=None,
                 warm_start=False, verbose=0, n_jobs=None):
        self.n_jobs = n_jobs
        self.memory_budget = memory_budget
        self.n_features_to_select = n_features_to_select
        self.loss = loss
        _init_sgd_params(self, learning_rate, eta0, power_t, alpha, fit_intercept, batch_size,
                     max_iter, shuffle, random_state, warm_start, verbose)


class IHTRegressor(_CapacityOrBudget, _SketchSelectorMixin, RegressorMixin,
                   _SketchRegressorMixin, _BaseSketchSGD):
    __doc__ = f"""Iterative hard thresholding for regression (squared error).

    See :class:`IHTClassifier`.

    Parameters
    ----------{_HEAP_ONLY_BUDGET_DOC}
    loss : {{'squared_error'}}, default='squared_error'
        Loss minimized.{_REGRESSOR_PARAMS_DOC}{N_JOBS_DOC}

    Attributes
    ----------
    coef_ : scipy.sparse.csr_matrix of shape (1, n_features)
        The kept weights.
    selected_features_ : SelectedFeatures
        Keys and weights of the selected features, most important first.{_COMMON_ATTRIBUTES_DOC}{NORM_FLOOR_DOC}{STANDARDIZE_ATTRIBUTES_DOC}

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_sketch import IHTRegressor
    >>> rng = np.random.RandomState(0)
    >>> X = rng.normal(size=(500, 100))
    >>> y = 2 * X[:, 5] - 3 * X[:, 60]
    >>> reg = IHTRegressor(n_features_to_select=2, eta0=0.05, learning_rate="constant",
    ...                    random_state=0).fit(X, y)
    >>> reg.get_support(indices=True)
    array([ 5, 60])
    """

    _store = _stores.HEAP_ONLY
    _parameter_constraints = {
        **_BaseSketchSGD._parameter_constraints, **_CAPACITY_OR_BUDGET_CONSTRAINTS,
        "loss": [StrOptions({"squared_error"})],
    }

    def __init__(self, n_features_to_select=None, *, memory_budget="4MB", loss="squared_error",
                 learning_rate="normalized", eta0=0.1, power_t=0.25, alpha=0.0,
                 fit_intercept=True, batch_size=1, max_iter=5, shuffle=True, random_state=None,
                 warm_start=False, verbose=0, n_jobs=None):
        self.n_jobs = n_jobs
        self.memory_budget = memory_budget
        self.n_features_to_select = n_features_to_select
        self.loss = loss
        _init_sgd_params(self, learning_rate, eta0, power_t, alpha, fit_intercept, batch_size,
                     max_iter, shuffle, random_state, warm_start, verbose)


class FeatureHashingClassifier(ClassifierMixin, _SketchClassifierMixin, _BaseSketchSGD):
    __doc__ = f"""SGD on hashed features: a depth-1 sketch is the whole model.

    The accuracy reference at equal memory for the selectors: every feature's
    weight is read from the sketch, so nothing is forgotten, but colliding
    features share a weight and no feature identity is kept, so it selects
    nothing (it has no ``get_support``).

    Parameters
    ----------
    loss : {{'log_loss', 'hinge', 'modified_huber'}}, default='log_loss'
        Loss minimized.
    sketch_width : int, default=2**20
        Number of hashed weights per model (4 MiB of float32, about the memory
        of MISSION's default sketch and heap).
    sketch_depth : int, default=1
        Sketch rows; 1 is plain feature hashing (with random signs).{_HASHING_PARAMS_DOC}{_HASHING_BUDGET_DOC}{N_JOBS_DOC}

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
        Class labels.{_COMMON_ATTRIBUTES_DOC}{NORM_FLOOR_DOC}{STANDARDIZE_ATTRIBUTES_DOC}

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_sketch import FeatureHashingClassifier
    >>> rng = np.random.RandomState(0)
    >>> X = rng.normal(size=(400, 50))
    >>> y = (X[:, 3] - 2 * X[:, 17] > 0).astype(int)
    >>> FeatureHashingClassifier(sketch_width=1024, random_state=0).fit(X, y).score(X, y) > 0.9
    True
    """

    _store = _stores.SKETCH_ONLY
    _AUTO_ETA0 = (1.0, 3.0, 0.3, 0.1, 0.03)
    _AUTO_OTHER_SCHEDULE = AUTO_OTHER_SCHEDULE
    _parameter_constraints = {
        **_BaseSketchSGD._parameter_constraints, **_SKETCH_CONSTRAINTS, **_MEMORY_CONSTRAINTS,
        "loss": [StrOptions(_CLASSIFIER_LOSSES)],
    }

    def __init__(self, *, loss="log_loss", sketch_width=2**20, sketch_depth=1,
                 learning_rate="auto", eta0="auto", power_t=0.5, alpha=0.0,
                 fit_intercept=True, batch_size=1, max_iter=5, shuffle=True, random_state=None,
                 warm_start=False, verbose=0, memory_budget=None, n_jobs=None):
        self.n_jobs = n_jobs
        self.memory_budget = memory_budget
        self.loss = loss
        self.sketch_width = sketch_width
        self.sketch_depth = sketch_depth
        _init_sgd_params(self, learning_rate, eta0, power_t, alpha, fit_intercept, batch_size,
                     max_iter, shuffle, random_state, warm_start, verbose)

    def get_support(self, indices=False):
        """Not available: feature hashing keeps no feature identities.

        Parameters
        ----------
        indices : bool, default=False
            Ignored: there is nothing to return.

        Raises
        ------
        AttributeError
            Always; use :class:`MissionClassifier` to select features.
        """
        raise AttributeError(
            "FeatureHashingClassifier does not select features: hashed weights keep no "
            "feature identities. Use MissionClassifier (or another selector) instead.")
