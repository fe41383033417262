"""BEAR: second-order (online L-BFGS) feature selection with the weights in a Count-Sketch.

BEAR (Aghazadeh et al., "BEAR: Sketching BFGS Algorithm for Ultra-High
Dimensional Feature Selection in Sublinear Memory", Algorithm 2) replaces
MISSION's stochastic gradient by an online L-BFGS direction computed on each
mini-batch's active set, so less gradient noise is sketched and fewer
collisions bury the heavy features. The kernel is ``_bear_fast.bear_pass``.
"""
from numbers import Integral, Real

from sklearn.base import ClassifierMixin, RegressorMixin
from sklearn.utils._param_validation import Interval, StrOptions

from ._base import (
    N_JOBS_DOC,
    _BaseSketchSGD,
    _init_sgd_params,
    largest_rows_nnz,
    median_rows_nnz,
    parse_memory_budget,
    row_nnz,
    _SketchClassifierMixin,
    _SketchRegressorMixin,
    _SketchSelectorMixin,
)
from ._bear_fast import LBFGSHistory, batch_starts, bear_pass, history_bytes
from . import _stores
from .mission import (
    STANDARDIZE_ATTRIBUTES_DOC,
    STANDARDIZE_NOTE,
    _COMMON_ATTRIBUTES_DOC,
    _MEMORY_CONSTRAINTS,
    _SELECTION_CONSTRAINTS,
    _SKETCH_CONSTRAINTS,
)

_BEAR_PARAMS_DOC = """
    sketch_width : int, default=2**18
        Buckets per sketch row.
    sketch_depth : {depth_type}, default={depth}
        Sketch rows (independent hashes).{depth_note}
    history_size : int or 'auto', default='auto'
        Curvature pairs ``(s, r)`` kept (the paper's ``tau``), from 1 to 256.
        'auto' keeps 5 (the paper's value) without ``memory_budget`` and 1 with
        one. Under a budget the heaps hold many features (a quarter of the
        bytes) and every pair costs batch room; there one pair was as accurate
        or better and steadier (classifier defaults, before the bound on the
        scores of the Notes): 20 Newsgroups tokens at
        64 MB, seeds 0-2, .73/.74/.74 with one pair against .56/.74/.70 with
        five; DNA reads at 4 MB .791 against .784 (at 4 MB on 20 Newsgroups the
        pairs' room holds one pair of its long rows either way). Without a
        budget five pairs won on 20 Newsgroups (.63 against .53, measured with
        the earlier step 0.3) and tied on DNA (.885).
    damping : float, default={damping}
        Added to every pair's curvature, as online L-BFGS does
        (``r = g' - g + damping * s``): with one model the direction is then
        at most ``1 / damping`` times the gradient. 0 turns it off (see Notes).{damping_note}
    learning_rate : {{'auto', 'normalized', 'adaptive', 'constant', 'invscaling', \
'optimal'}}, default={learning_rate}
        Step size schedule. 'normalized' scales, by the batch's mean
        ``||x||**2``, the only two places where curvature does not come from the
        pairs: a model without a usable pair (the first batch) steps by
        ``eta0 / mean ||x||**2`` on the features, and ``damping`` on them is
        multiplied by the same mean. Steps then do not depend on the scale of
        the features (counts, binary, L2-normalized); on L2-normalized rows it
        is 'constant'.{standardize_note} 'adaptive' takes those steps in
        coordinates where each feature's value is divided by the fourth root
        of its sum of squares so far, ``Q_j`` (a table of float32 sums of
        ``2**16`` cells that colliding features share, at most a sixteenth of
        ``memory_budget``; the pairs are kept in those coordinates): the
        quasi-Newton step is then preconditioned by ``Q_j ** -1/2``, AdaGrad's
        diagonal with the values in place of the gradients (for binary
        features the 'frequency' schedule's ``1 / sqrt(count)`` of the
        first-order estimators), so a rare feature moves further than a
        frequent one. As under 'normalized', the model does not depend on the
        scale of the features (``X`` times a constant gives the same
        predictions).{adaptive_note}
        The others have scikit-learn's meanings: ``eta0``,
        ``eta0 / t**power_t``, or ``1 / (alpha * (t0 + t))``; ``t`` counts
        samples.
    eta0 : {eta0_type}, default={eta0}
        Step size, a multiple of the quasi-Newton step; a step that goes past
        its batch's minimum is cut back to it (see Notes){eta0_note}
    power_t : float, default=0.5
        Exponent of the 'invscaling' schedule.
    alpha : float, default=0.0
        L2 penalty ``alpha / 2 * ||w_A||**2`` on the batch's active features,
        part of the gradient (so of the curvature pairs too).
    fit_intercept : bool, default=True
        Learn an (unsketched) intercept: one more coordinate of the L-BFGS vectors.
        A classifier's starts at 0, the regressor's at the first fit's mean target.
    batch_size : int, default={batch_size}
        Samples per mini-batch; the gradient is their mean.{batch_note}
    max_iter : int, default=5
        Passes over the data in :meth:`fit`.
    shuffle : bool, default=True
        Shuffle the samples before each pass.
    random_state : int, RandomState instance or None, default=None
        Seeds the sketch's hashes and the shuffling.
    warm_start : bool, default=False
        Continue from the previous model (curvature pairs included) in :meth:`fit`.
    verbose : int, default=0
        Print a line per pass."""


_ADAPTIVE_CLASSIFIER_NOTE = """ 'auto' (the default) lets the probe of
        ``eta0`` also try 'adaptive' with the largest step (on a lightly
        loaded sketch, as MISSION's tries its other schedule) and keeps it
        only where it misclassified clearly fewer of the probe's rows
        (``learning_rate_`` says which). Measured with training reading the
        sketch (``predict_with``), test accuracy, 5 passes, defaults otherwise,
        at 1, 4 and 16 MB ('normalized' / 'adaptive', the heaps then a quarter
        of the budget): 20 Newsgroups, 20 classes, word uni+bi-grams as raw
        counts .741/.719, .762/.785, .757/.822; as L2-normalized rows
        .749/.743, .785/.806, .796/.844; DNA reads .675/.656, .857/.852,
        .924/.924. 'auto' chose 'adaptive' on 20 Newsgroups from 1 MB up and
        'normalized' below and on DNA; one pass: raw counts at 1, 4, 16 and
        64 MB .721/.784/.808/.814, L2 rows .739/.805/.835/.839,
        DNA .700/.862/.922/.940. From the command line (one pass) 20
        Newsgroups words as Vowpal Wabbit text .547 -> .823, binary posts
        .825 -> .941 and .949 (Vowpal Wabbit .930 and .940). While training
        read features outside the heap as 0, 'adaptive' lost over passes (raw counts at
        4 MB .734 after one, .550 after 5: the large steps of rare features
        piled up in the sketch cells they share) and 'auto' tried it for a
        single pass only. Preconditioned by the gradients' squares (AdaGrad's
        own diagonal) one pass scored .47; by the values' squares to the
        power -1 (each feature to a root sum of squares of 1) .80 without a
        budget but .52 on L2 rows at 4 MB."""


_BEAR_CLASSIFIER_PARAMS_DOC = _BEAR_PARAMS_DOC.format(
    depth_type="int or None", depth="None", depth_note=""" None: 3, or 2 under a
        ``memory_budget`` when training reads the sketch (``predict_with``
        'auto' or 'sketch'): at equal bytes, two rows of a wider sketch read
        the weights of the active features more closely than three where the
        budget makes every cell shared. 5 passes at 256 KB, 1, 4, 16 and
        64 MB, three rows against two: DNA reads .475/.717/.872/.929/.946
        against .516/.756/.885/.931/.947; 20 Newsgroups raw counts
        .548/.747/.796/.824/.832 against .568/.746/.804/.824/.827,
        L2-normalized rows .589/.767/.815/.845/.849 against
        .599/.773/.821/.841/.844 (seeds 1 and 2 at 64 MB: .846 and .845
        against .845 and .847); one pass at 256 KB, 1, 4 and 16 MB, DNA
        .487/.700/.862/.922 against .523/.740/.879/.928, L2 rows
        .294/.739/.805/.835 against .435/.757/.810/.836, raw counts
        .337/.721/.784/.808 against .362/.727/.788/.807. One row gained as
        much on DNA and lost on text (raw counts after one pass .281 at
        256 KB, .796 at 16 MB). With ``predict_with='heap'`` three rows kept
        their lead (L2 rows at 4 MB .765 against .719 with one row), and
        without a budget the width is given, so more rows are more cells.""",
    learning_rate="'auto'", adaptive_note=_ADAPTIVE_CLASSIFIER_NOTE,
    batch_size=32, batch_note=""" Batches of 32 scored over batches of 64 (the
        earlier default) after one pass on every data set measured: 20
        Newsgroups, 20 classes, seeds 0 and 1, raw token counts at 1, 4 and 16
        MB .614/.559, .661/.654 and .601 against .552/.491, .622/.571 and
        .494, L2-normalized rows .622/.575, .725 and .719/.721 against
        .390/.540, .685 and .707/.708; DNA reads .799 and .912 at 4 and 16 MB
        against .792 and .909; binary posts (six shuffles) .863 and .804
        against .841 and .778. After 5 passes too (raw counts .666/.640, .769/.766
        and .763 against .634/.639, .747/.755 and .743; DNA .798 and .917
        against .791 and .914; binary posts .914 and .897 against .903 and
        .877), but for L2-normalized rows at 1 MB (.604/.610 against
        .645/.652). Batches of 16 gained more after one pass and lost more
        there (.559); small dense sets (iris, wine, breast cancer, digits)
        scored within 0.2 points of 64 with 32.""",
    standardize_note=STANDARDIZE_NOTE, damping="3e-2", damping_note="\n        It and ``eta0`` were chosen together (see ``eta0``).",
    eta0_type="float or 'auto'", eta0="'auto'", eta0_note=""". 'auto' tries 3, then
        1, 0.3, 0.1 and 0.03, on the first tenth of the first pass (at least
        2,000 rows), and keeps 3 unless a smaller step misclassified clearly
        fewer samples just before their update (``eta0_``); a smaller step
        that trails the best step tried before it by twice the square root of
        that one's count at the end of a quarter of the probe stops there,
        and the steps below one that
        misclassified no fewer than the step above it are not tried. The first pass
        goes on from the probe's model, so a kept step gives the model that
        step gives. It kept 3 on DNA reads and 20 Newsgroups (raw counts and
        L2-normalized rows; without a budget and at 256KB, 1MB and 4MB: the
        same models, 3% to 26% more fit time, 18% on one pass over 200,000
        DNA reads once trailing steps stopped early), and chose 0.3 where labels are
        mostly noise (flights arriving over 15 minutes late, from carrier,
        airports, hour, month and plane: 0.7612 against 0.7382 for 3, ROC AUC
        0.670 against 0.635; 0.1 scored 0.7627, always "on time" 0.763). A
        large step mostly lengthens the steps along directions of little curvature, which
        ``damping`` bounds. Chosen with ``damping`` on 20 Newsgroups (word
        uni+bi-grams, 20 classes; test accuracy, mean over random_state 0-2,
        unbudgeted 0-1 for 1 and 0 for 0.3) and DNA reads: 3 with damping 0.03
        against 1 with 0.01 and the earlier 0.3 with 0.01 scored, on raw token
        counts, .74/.73/.66 without a budget, .74/.67/.62 at 4 MB, .74/.73/.62
        at 16 MB and .30/.26/.23 at 1 MB; on L2-normalized rows .80/.80/.75,
        .74/.72/.70, .80/.79/.74 and .45/.34/.35; DNA reads .89 unbudgeted and
        .79 at 4 MB for all three, .914 against .908 (0.3) at 16 MB. With
        damping 0.01, single fits at 1 or 3 swung by up to 15 points from one
        pass or seed to the next (raw counts at 4 MB: .56-.71); with 0.03 and
        step 1 they were steady but slower (.68 at 4 MB, .50-.70 unbudgeted).
        On small dense sets they learn more slowly: the digits (1,797 rows, raw
        pixels, 5-fold) .89 against .92 for 0.3 (.82 for 1); scaled digits,
        breast cancer and wine tie.""")
_BEAR_REGRESSOR_PARAMS_DOC = _BEAR_PARAMS_DOC.format(
    depth_type="int or None", depth="3", depth_note=""" None: as
        :class:`BearClassifier`'s.""",
    learning_rate="'normalized'", adaptive_note=""" 'auto' chooses between
        'normalized' and 'adaptive' as :class:`BearClassifier`'s does.""",
    batch_size=64, batch_note="",
    standardize_note=STANDARDIZE_NOTE, damping="1e-2", damping_note="", eta0_type="float",
    eta0="0.3", eta0_note=""". The classifier's
        defaults (3, with damping 0.03) fail scikit-learn's check that a
        regressor fits a small dense task (``check_regressors_train``), so the
        regressor keeps 0.3 and damping 0.01.""")


_BEAR_NOTES_DOC = """
    Each mini-batch: the weights of its active set ``A`` (the features present)
    are read from the sketch (where the feature is in the heap, 0 elsewhere,
    with ``predict_with='heap'``: see that parameter); the
    batch's mean gradient ``g`` is turned into a direction ``z`` by the L-BFGS
    two-loop recursion over the last ``history_size`` pairs; the step
    ``s = -eta0 z`` is added to the sketch on ``A``; the sketch is read again on
    ``A`` and those estimates are offered to the heap; the gradient ``g'`` on
    the same batch at ``w + s`` gives the pair ``(s, r = g' - g)``, stored on
    ``A`` only. Memory is the sketch, the heap and the pairs:
    ``O(history_size * batch non-zeros)``, independent of ``n_features``.

    Where this differs from the paper's box, and why: the paper takes ``g'`` at
    the re-read weights masked by the heap, the authors' code at the re-read
    weights unmasked. Both make ``r`` mix the step with collisions and heap
    changes, so it stops measuring the curvature along ``s``. On the paper's
    section 6 simulation (n=900, p=1000, 8 weights in [0.8, 1.2], squared loss,
    full batches, depth 3, 100 passes, 8 seeds), the exact support was
    recovered at compression 3 in 7/8 runs with ``g'`` at ``w + s`` (eta0=0.1),
    at most 2/8 with either re-read, and at most 5/8 by MISSION over
    eta0 in {0.3, 0.1, 0.03, 0.01}; at compression 2: 8/8, at most 7/8 and 7/8.

    A step that goes past the minimum of its batch's loss along it (``(g +
    g')^T s > 0``, which for a quadratic loss means the loss rose) is cut, with
    its pair, to the secant minimum ``theta s``, ``theta = -g^T s / (g' -
    g)^T s``. Without this cut, on one cross-validation fold of 20 Newsgroups
    (raw token counts) the intercepts grew past 1e5 and every prediction was
    one class; with it that fold scores 0.66.

    The classifier also bounds how far a step moves the model's scores: a step
    that would move a score (log-odds) of one of its batch's rows by more than
    10 is scaled down until none moves further, before it is taken (a trust
    region in the scores, which any scale of features shares). The secant cut
    cannot do this where a batch is separable, as a batch of a few posts of
    thousands of words is: its loss falls all along the step, which the
    quasi-Newton direction makes long where the pairs saw little curvature,
    and the scores of the other rows swing by tens between batches. Measured
    (test accuracy, defaults otherwise; no bound -> a bound of 10): binary 20
    Newsgroups posts, raw counts, six shuffles, 5 passes, atheism against
    christian .823 (.688 to .872) -> .877 (.861 to .891) and computing and
    science against the rest .836 (.581 to .909) -> .903 (.888 to .907), one
    pass .696 -> .778 and .823 -> .841; 20 Newsgroups, 20 classes, 5 passes,
    seeds 0-1 (0-2 from 16MB), raw token counts at 256KB, 1MB, 4MB, 16MB and
    64MB .067/.306/.739/.736/.734 -> .341/.636/.751/.743/.730; L2 rows at
    256KB .107 -> .331; DNA reads at 4MB .791 -> .791 and iris, wine, breast
    cancer and digits (5-fold) as they were. A bound of 3 was steadier on
    one pass over small binary posts (atheism .803) but cost 2 to 5 points on
    raw counts at 16MB and 64MB (.712, .684) and 4 at 1MB (.593); one of 1
    lower on the binary posts and at 4MB.

    ``damping`` is online L-BFGS's regularization of the pairs (Schraudolph et
    al., 2007): with the log loss, a batch the model already fits has almost no
    curvature, and its pair would scale the next batch's gradient by the inverse
    of that; on separable data the weights then overflow within a few batches.
    A pair whose curvature is still not positive (``r^T s <= 1e-10 ||r|| ||s||``:
    with softmax a class's own pair can bend the wrong way, since the other
    classes' steps move its probabilities) is skipped by the two-loop; it still takes its place
    in the window of the last ``history_size`` batches. Only smooth losses are
    offered, since L-BFGS needs curvature."""


_BEAR_PREDICT_WITH_DOC = """
    predict_with : {'auto', 'sketch', 'heap'}, default='auto'
        What the model reads, in training and in predictions. 'heap': the
        heap's ``k`` weights only, every other feature read as 0, in training
        too (the paper's Algorithm 2, whose steps 3 and 7 query the active
        features in the top-k): the model is ``coef_``, trained as such.
        'sketch' and 'auto': training reads the sketch's estimate of every
        active feature, the update whose convergence the paper proves (its
        Eq. 12 and 13, the query of every feature); 'sketch' predicts from it
        too, and 'auto' predicts from the heap alone where that erred less on
        the training samples just before their update (progressive
        validation, recent passes weighing most; ties go to the sketch):
        ``predict_with_`` says which. Under a ``memory_budget`` the heaps of
        'heap' get a quarter of the bytes (they are the model), the others'
        a twentieth (they name the features), as the WM-Sketch's. Trained on
        the heap's reads, rare features outside the heap take steps that pile
        up in the sketch cells they share. Measured, 5 passes, defaults
        otherwise, at 64 KB, 256 KB, 1 MB, 4 MB, 16 MB and 64 MB (heap reads
        -> the defaults: sketch reads, the heaps' twentieth and 'auto' trying
        'adaptive'): 20 Newsgroups, 20 classes, word uni+bi-grams as raw
        counts .236/.235/.666/.769/.763/.760 -> .406/.548/.747/.796/.824/.832;
        as L2-normalized rows .168/.359/.604/.776/.802/.798 ->
        .471/.589/.767/.815/.845/.849; DNA reads of held-out strains
        .353/.461/.621/.798/.917/.948 -> .366/.475/.717/.872/.929/.946 (the
        heaps' twentieth alone added 2.0 and 1.5 points there at 1 and
        4 MB); with the sketch's two rows under a budget (``sketch_depth``)
        raw counts .425/.568/.746/.804/.824/.827, L2 rows
        .488/.599/.773/.821/.841/.844, DNA .387/.516/.756/.885/.931/.947;
        with the pairs' room of 8 median rows (``memory_budget``) DNA
        .387/.516/.762/.894/.932/.946, 20 Newsgroups within 0.2 points.
        Selection (``get_support``, ``transform``, names) is the heap's top
        ``k`` either way."""


_BEAR_BUDGET_DOC = """
    memory_budget : int or str, default=None
        Bytes of the whole fitted estimator, all classes together
        (``memory_bytes_ <= memory_budget``), or None to use
        ``n_features_to_select`` and ``sketch_width`` as given. The curvature
        pairs are paid first (one, with ``history_size='auto'``): room for
        ``history_size`` pairs on the largest active set that ``batch_size``
        rows of the first training data can form (for a classifier whose
        training reads the sketch, at most 8 rows of their median length: the
        bytes a room for the longest rows leaves unused in most batches widen
        the sketch, which training reads everywhere; DNA reads, 5 passes,
        seeds 0-2, 1 MB .756/.754/.755 -> .762/.760/.763, 4 MB
        .885/.886/.887 -> .894/.892/.892, 20 Newsgroups within 0.2 points from
        256 KB to 64 MB; the regressor, unmeasured, keeps the largest batch's
        room), but at most a quarter of the budget; where that caps them, a
        batch ends before the row that would take its non-zeros past the
        room, so batches of long rows hold fewer rows, and a row longer than
        the room alone is a batch of its own with a first-order step and no
        pair (its step cut back as any step is). If
        ``history_size`` pairs on the longest row pass the quarter, fewer
        pairs are kept (``history_.history_size``), down to one. Rows of later
        calls are treated alike: the pairs never grow past the room. Only a
        budget whose quarter cannot hold a pair of one feature raises. The
        rest goes to the heaps (a twentieth, or a quarter with
        ``predict_with='heap'``) and the sketches (of two rows, or three with
        'heap': see ``sketch_depth``). Small budgets leave BEAR's
        quasi-Newton steps a narrow sketch whose collisions they amplify: on
        20 Newsgroups (20 classes, 5 passes) it scored .57-.60 at 256 KB and
        .75-.77 at 1 MB, against .71-.72 and .78-.79 for
        :class:`AWMSketchClassifier`; on DNA reads .516 and .762 against .56
        and .79 (a fit that ends near chance warns): prefer the AWM- or
        WM-Sketch under 4 MB. The shape chosen is in
        ``sketch_width_``, ``sketch_depth_`` and ``n_features_to_select_``;
        ``history_.capacity - 1`` is the most non-zeros a batch holds and
        ``history_.memory_bytes`` the pairs' part. A pair coordinate costs
        ``history_size * (24 + 8 * n_models)`` bytes (float32 ``s`` and ``r``,
        the key and its hash, the shared positions) plus about 50 bytes of the
        batch's workspace: 976 bytes with 20 classes, 342 with 4."""


#: Most of a memory budget the curvature pairs may take; past it, batches end early.
_PAIRS_SHARE = 0.25


def _kilobytes(n_bytes):
    """``n_bytes`` rounded up to whole KB, or MB from 1 MB (a budget the user can type)."""
    if n_bytes >= 2**20:
        return f"{-(-n_bytes // 2**20)}MB"
    return f"{-(-n_bytes // 2**10)}KB"


def _capacity_within(history_size, n_models, nbytes, wanted):
    """Largest pair capacity, at most ``wanted``, whose history fits in ``nbytes`` (>= 1)."""
    def cost(capacity):
        return history_bytes(history_size, n_models, capacity)

    if cost(wanted) <= nbytes:
        return wanted
    low, high = 1, wanted  # cost(high) > nbytes
    while high - low > 1:
        middle = (low + high) // 2
        if cost(middle) <= nbytes:
            low = middle
        else:
            high = middle
    return low


class _BearMixin:
    """Training through ``bear_pass``, with the curvature pairs in the model state."""

    _store = _stores.SKETCH_AND_HEAP
    _threads_share_classes = False  # bear_pass has no team: parts of rows are averaged
    _read_on_tie = "sketch"  # what training reads under predict_with='auto'
    _second_order = True
    # Under a budget, with training on the sketch's reads, the pairs' room holds at
    # most this many rows of the median length (None: the largest batch's room).
    # Measured on classification only, so the regressor keeps the largest batch's.
    _room_median_rows = None
    _bear_constraints = {
        **_SKETCH_CONSTRAINTS, **_SELECTION_CONSTRAINTS, **_MEMORY_CONSTRAINTS,
        "sketch_depth": [Interval(Integral, 1, 64, closed="both"), None],
        "history_size": [Interval(Integral, 1, 256, closed="both"), StrOptions({"auto"})],
        "damping": [Interval(Real, 0, None, closed="left")],
        "predict_with": [StrOptions({"auto", "heap", "sketch"})],
        "learning_rate": [StrOptions({"auto", "normalized", "adaptive", "constant",
                                       "invscaling", "optimal"})],
        "eta0": [Interval(Real, 0, None, closed="neither")],
    }

    _MARGIN_TRUST = 0.0
    _AUTO_OTHER_SCHEDULE = "adaptive"

    def _floors_row_norms(self):
        # 'normalized' divides a batch's step by its rows' mean ||x||**2: a short
        # row shares its batch's scale, so no floor is needed.
        return False

    @property
    def _training_reads_sketch(self):
        """Whether training reads the sketch's estimate of every active feature
        (the paper's box, ``predict_with='heap'``, reads the heap's weights only)."""
        return self.predict_with != "heap"

    def _sgd_params(self, n_models, eta0=None, schedule=None):
        params = super()._sgd_params(n_models, eta0, schedule)
        params.damping = float(self.damping)
        params.margin_trust = float(self._MARGIN_TRUST)
        params.read_sketch = self._training_reads_sketch
        return params

    @property
    def _budget_heap_share(self):
        # Under a budget the heap of a model that training reads (predict_with=
        # 'heap') gets a quarter, as MISSION's; one whose training reads the
        # sketch only names features, and gets a twentieth, as the WM-Sketch's.
        return 0.05 if self._training_reads_sketch else 0.25

    def _sketch_depth(self):
        # Under a budget, sketch reads: two rows of a wider sketch (see sketch_depth).
        if self.sketch_depth is not None:
            return self.sketch_depth
        return 2 if self.memory_budget is not None and self._training_reads_sketch else 3

    def _history_size(self):
        """Pairs kept: ``history_size``, or for 'auto' 5 without a budget and 1 with one."""
        if self.history_size != "auto":
            return self.history_size
        return 5 if self.memory_budget is None else 1

    def _new_state(self, n_models, X=None, reserved=0, schedule=None):
        history = LBFGSHistory(self._history_size(), n_models)
        if self.memory_budget is not None and X is not None:
            # The pairs live on batch active sets: room for batch_size rows of X (at
            # most _room_median_rows of the median length when training reads the
            # sketch; plus the intercept), but at most a share of the budget, is
            # paid first; batches then end early rather than outgrow it, fewer
            # pairs are kept if the longest row the room is for would outgrow the
            # share, and a row longer than the room takes a first-order step of its
            # own. The sketch and heaps get the rest.
            budget = parse_memory_budget(self.memory_budget)
            share = int(budget * _PAIRS_SHARE)
            lengths = row_nnz(X)
            wanted = largest_rows_nnz(lengths, self.batch_size)
            if self._training_reads_sketch and self._room_median_rows:
                # Bytes the pairs' room would leave unused in most batches go to the
                # sketch, whose width training reads everywhere (see memory_budget).
                wanted = min(wanted, max(1, median_rows_nnz(lengths,
                                                            self._room_median_rows)))
            longest = min(largest_rows_nnz(lengths, 1), wanted)
            wanted += 1
            history_size = self._history_size()
            while history_size > 1 and history_bytes(history_size, n_models,
                                                     longest + 1) > share:
                history_size -= 1
            history = LBFGSHistory(history_size, n_models)
            history.reserve(_capacity_within(history_size, n_models, share, wanted))
            reserved += history.memory_bytes
            if history.memory_bytes > share or history.capacity < 2:
                least = history_bytes(history_size, n_models, 2)
                raise ValueError(
                    f"memory_budget={self.memory_budget!r} ({budget} bytes) cannot hold "
                    f"BEAR's curvature pairs in a quarter of it: a pair of one feature "
                    f"and the intercept for {n_models} model(s) takes {least} bytes; "
                    f"give at least {_kilobytes(4 * least)}")
        state = super()._new_state(n_models, X, reserved, schedule)
        state.history = history
        return state

    def _batch_starts(self, state, csr, order):
        # Under a budget a batch ends early when its non-zeros would outgrow the
        # curvature pairs' room, so batches do not start every batch_size rows.
        if self.memory_budget is None:
            return None
        return batch_starts(csr[0], order, int(self.batch_size), state.history.capacity - 1)

    def _train_pass(self, state, params, indptr, indices, data, y, sample_weight, order,
                    max_batch_nnz):
        if self.memory_budget is None:
            state.history.reserve(max_batch_nnz + 1)
            return bear_pass(params, state.sketches, state.heaps, state.intercept,
                             state.history, indptr, indices, data, y, sample_weight, order,
                             state.t, max_batch_nnz, feature_squares=state.feature_counts)
        # Rows longer than the pairs' room (cap) each take a first-order step.
        cap = state.history.capacity - 1
        return bear_pass(params, state.sketches, state.heaps, state.intercept, state.history,
                         indptr, indices, data, y, sample_weight, order, state.t, cap,
                         batch_nnz_cap=cap, feature_squares=state.feature_counts)

    def _set_fitted_attributes(self):
        super()._set_fitted_attributes()
        self.history_ = self._state.history


class BearClassifier(_SketchSelectorMixin, ClassifierMixin, _BearMixin, _SketchClassifierMixin,
                     _BaseSketchSGD):
    __doc__ = f"""BEAR: feature selection by online L-BFGS with the weights in a Count-Sketch.

    The second-order counterpart of :class:`MissionClassifier`: the same sketch
    and top-k heap, but each mini-batch's step is a quasi-Newton direction on
    its active set. Binary problems use the log loss; multi-class problems the
    softmax loss with one sketch, one heap and one two-loop per class (the
    pairs share their coordinates).

    Parameters
    ----------
    n_features_to_select : int, default=1000
        Size ``k`` of each heap: the number of features kept and selected.
    loss : {{'log_loss'}}, default='log_loss'
        Loss minimized (softmax for more than two classes).{_BEAR_CLASSIFIER_PARAMS_DOC}{_BEAR_PREDICT_WITH_DOC}{_BEAR_BUDGET_DOC}{N_JOBS_DOC}

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
        Class labels.
    coef_ : scipy.sparse.csr_matrix of shape (n_models, n_features)
        The heap weights: the selected features' (with ``predict_with_='sketch'``
        predictions also read the sketch's estimates of the others).
    selected_features_ : SelectedFeatures
        Keys and weights of the selected features, most important first.
    history_ : LBFGSHistory
        The last curvature pairs (carried over by ``partial_fit`` and ``warm_start``).
    eta0_ : float
        With ``eta0='auto'``, the step chosen by the first fit.
    online_error_rate_ : float
        Fraction of the last pass's samples misclassified before their batch's update.
    online_log_loss_ : float
        Binary ``loss='log_loss'`` models: the last pass's mean log loss just
        before each update; below the labels' entropy when the model learned
        something, though it errs about as often as predicting the majority.
    predict_with_ : {{'heap', 'sketch'}}
        What predictions read (``predict_with``, resolved for 'auto').{_COMMON_ATTRIBUTES_DOC}{STANDARDIZE_ATTRIBUTES_DOC}

    See Also
    --------
    MissionClassifier : The first-order algorithm on the same sketch and heap.

    Notes
    -----{_BEAR_NOTES_DOC}

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_sketch import BearClassifier
    >>> rng = np.random.RandomState(0)
    >>> X = rng.normal(size=(400, 50))
    >>> y = (X[:, 3] - 2 * X[:, 17] > 0).astype(int)
    >>> clf = BearClassifier(n_features_to_select=2, sketch_width=256,
    ...                      random_state=0).fit(X, y)
    >>> clf.get_support(indices=True)
    array([ 3, 17])
    >>> clf.score(X, y) > 0.95
    True
    """

    _parameter_constraints = {
        **_BaseSketchSGD._parameter_constraints, **_BearMixin._bear_constraints,
        "loss": [StrOptions({"log_loss"})],
        "eta0": [Interval(Real, 0, None, closed="neither"), StrOptions({"auto"})],
    }
    # eta0='auto' tries the default step first, then only smaller ones. A candidate
    # that trails the best before it by 2 sigma at the end of a part stops there: on one pass
    # over DNA reads the probe (4 others, each on the probe's 10,000 rows) took a
    # fifth of BEAR's fit; in every probe of bench_accuracy_memory, bench_bear_folds,
    # bench_bear and bench_dense_columns the winner never trailed so: same choice.
    _AUTO_ETA0, _AUTO_RACE_Z = (3.0, 1.0, 0.3, 0.1, 0.03), 2.0
    # No step moves a score of its batch's rows by more than this (see Notes).
    _MARGIN_TRUST = 10.0

    # The pairs' room under a budget: 8 rows of the median length (see _BearMixin).
    _room_median_rows = 8

    def __init__(self, n_features_to_select=1000, *, loss="log_loss", sketch_width=2**18,
                 sketch_depth=None, history_size="auto", damping=3e-2, learning_rate="auto",
                 eta0="auto", power_t=0.5, alpha=0.0, fit_intercept=True, batch_size=32,
                 max_iter=5, shuffle=True, random_state=None, warm_start=False, verbose=0,
                 predict_with="auto", memory_budget=None, n_jobs=None):
        self.n_jobs = n_jobs
        self.memory_budget = memory_budget
        self.n_features_to_select = n_features_to_select
        self.loss = loss
        self.sketch_width = sketch_width
        self.sketch_depth = sketch_depth
        self.history_size = history_size
        self.damping = damping
        self.predict_with = predict_with
        _init_sgd_params(self, learning_rate, eta0, power_t, alpha, fit_intercept, batch_size,
                         max_iter, shuffle, random_state, warm_start, verbose)


class BearRegressor(_SketchSelectorMixin, RegressorMixin, _BearMixin, _SketchRegressorMixin,
                    _BaseSketchSGD):
    __doc__ = f"""BEAR for regression (squared error): the paper's sparse recovery setting.

    See :class:`BearClassifier`; the loss is ``(y - x @ w)**2 / 2``.

    Parameters
    ----------
    n_features_to_select : int, default=1000
        Size ``k`` of the heap: the number of features kept and selected.
    loss : {{'squared_error'}}, default='squared_error'
        Loss minimized.{_BEAR_REGRESSOR_PARAMS_DOC}{_BEAR_PREDICT_WITH_DOC}{_BEAR_BUDGET_DOC}{N_JOBS_DOC}

    Attributes
    ----------
    coef_ : scipy.sparse.csr_matrix of shape (1, n_features)
        The heap weights.
    selected_features_ : SelectedFeatures
        Keys and weights of the selected features, most important first.
    history_ : LBFGSHistory
        The last curvature pairs.
    predict_with_ : {{'heap', 'sketch'}}
        What predictions read (``predict_with``, resolved for 'auto').{_COMMON_ATTRIBUTES_DOC}{STANDARDIZE_ATTRIBUTES_DOC}

    See Also
    --------
    MissionRegressor : The first-order algorithm on the same sketch and heap.

    Notes
    -----{_BEAR_NOTES_DOC}

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_sketch import BearRegressor
    >>> rng = np.random.RandomState(0)
    >>> X = rng.normal(size=(500, 100))
    >>> y = 2 * X[:, 5] - 3 * X[:, 60]
    >>> reg = BearRegressor(n_features_to_select=2, sketch_width=512, batch_size=32,
    ...                     random_state=0).fit(X, y)
    >>> reg.get_support(indices=True)
    array([ 5, 60])
    """

    _parameter_constraints = {
        **_BaseSketchSGD._parameter_constraints, **_BearMixin._bear_constraints,
        "loss": [StrOptions({"squared_error"})],
    }

    # The intercept starts at the first call's mean target wherever that is not 0
    # (see _SketchRegressorMixin._start_intercept). BEAR steps once a batch (64 rows):
    # from 0, a target far from 0 took most of a small input's passes to reach (the
    # Nile's yearly flow, about 900 +- 170, 70 rows: test R^2 -1.27 to -1.34 over three
    # seeds, 0.14 to 0.17 from the mean; real interest rates, 140 rows: 0.70-0.74 ->
    # 0.75-0.78; food budgets -2.2 points, 11 other tables within 1).
    _MEAN_START_SPREADS = 0.0

    def __init__(self, n_features_to_select=1000, *, loss="squared_error", sketch_width=2**18,
                 sketch_depth=3, history_size="auto", damping=1e-2, learning_rate="normalized",
                 eta0=0.3, power_t=0.5, alpha=0.0, fit_intercept=True, batch_size=64, max_iter=5,
                 shuffle=True, random_state=None, warm_start=False, verbose=0,
                 predict_with="auto", memory_budget=None, n_jobs=None):
        self.n_jobs = n_jobs
        self.memory_budget = memory_budget
        self.n_features_to_select = n_features_to_select
        self.loss = loss
        self.sketch_width = sketch_width
        self.sketch_depth = sketch_depth
        self.history_size = history_size
        self.damping = damping
        self.predict_with = predict_with
        _init_sgd_params(self, learning_rate, eta0, power_t, alpha, fit_intercept, batch_size,
                         max_iter, shuffle, random_state, warm_start, verbose)
