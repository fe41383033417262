"""The subcommands: demo, fit, select, predict, evaluate."""
import ast
import concurrent.futures
import json
import os
import sys
import time
import warnings

import numpy as np

from ._errors import CommandError
from ._inputs import (
    SAMPLE_READ_LENGTH,
    TABLE_ROWS,
    InputStream,
    check_read_options,
    csv_options,
    decide_svmlight_layout,
    file_bases,
    file_coverages,
    input_kind,
    labelled_files,
    shuffle_rows,
)
from ._model_file import load_model, save_model
from ._report import note

#: ``--estimator``: module, class, and whether it keeps feature names (has a
#: heap), known before the module (and scikit-learn) is imported.
ESTIMATORS = {
    "mission": ("mission", "MissionClassifier", True),
    "bear": ("bear", "BearClassifier", True),
    "awm": ("weight_median", "AWMSketchClassifier", True),
    "wm": ("weight_median", "WMSketchClassifier", True),
    "hashing": ("mission", "FeatureHashingClassifier", False),
    "iht": ("mission", "IHTClassifier", True),
}

#: The regressor (squared error) of an ``--estimator``, in the same module, for a regression.
REGRESSORS = {"mission": "MissionRegressor", "bear": "BearRegressor", "iht": "IHTRegressor"}

#: The ``--estimator`` of a task when none is named: the AWM-Sketch classifies
#: (against MISSION, the default until then, on held-out strains' reads .976 against
#: .945 from a folder of 12 genomes, in 4 MB against 12.7 and 22 s against 34; DNA's
#: VW reads .988 against .957; 20 Newsgroups' folder .843 against .851 in 4 MB
#: against 64; four of scikit-learn's tables and the flights level), and MISSION
#: regresses (the WM-Sketches have no regressor).
DEFAULT_ESTIMATORS = {"classification": "awm", "regression": "mission"}

#: Chunks the first pass of ``fit`` may read ahead while scikit-learn is imported.
EARLY_READ_CHUNKS = 4

#: Non-zero values of an input small enough that ``--epochs auto`` trains it for the
#: estimator's ``max_iter`` passes (5), as ``fit`` in Python does: four more passes
#: then cost a second or two. One pass of a small input leaves a model short of
#: converged (held-out, one pass -> five: scikit-learn's tables as CSV, the mean of
#: five splits, BEAR on iris .790 -> .921, on wine .764 -> .964, diabetes R^2 -.089
#: -> .388, MISSION and the AWM-Sketch 0.3-3.6 points up but one -0.3; the weather's
#: temperature over 306,444 non-zeros, R^2 .988 -> .996; 6,000 reads of 150 bases of
#: two genomes at 0.1x coverage, 834,000 non-zeros: MISSION .645 -> .838, AWM .839
#: -> .874, BEAR .782 -> .841, hashing .838 -> .871), where the embedded DNA sample
#: (755,774) loses 0.02 to 0.24 points; past this a pass costs what a user would
#: notice, and 20 Newsgroups (1.8M) would lose MISSION 2.6 points in twice the time.
SMALL_INPUT_NNZ = 1_000_000
#: On a small input whose passes are cheap (at least AUTO_MIN_PASSES of them within
#: AUTO_WORK non-zero updates of every model of AUTO_FOLDS-fold cross-validation, up
#: to AUTO_MAX_PASSES; at least AUTO_MIN_ROWS rows), ``--epochs auto`` trains the
#: number of passes of AUTO_PASSES whose held-out error was least among those that err
#: less than the estimator's ``max_iter`` passes in every fold, where that is less in
#: all by more than AUTO_MARGIN of it (a regression's squared error) or by two square
#: roots of the mistakes (a classification's). Small tables under-fit in five passes
#: (the United States' real interest rate from other quarterly figures, 140 rows: R^2
#: 0.64 in 5, 0.84 in 20, 0.87 in 50; a schools' spending, a day's highest
#: temperature, a penguin's mass: +7, +10, +4 points) and some over-fit in more
#: (diabetes, 350 rows: 0.34 in 5, 0.27 in 20). Asking the least error of all passes
#: to beat the default in every fold kept 5 for ISLP's cars' mileage (20 erred least
#: but in one fold): R^2 .81, against .85 in the 12 chosen now. Tables of 35 to 99
#: rows are cross-validated too (they trained five passes when the least was 100): R's
#: data sets of 50 to 142 rows (pydataset; 70/30 splits, so 35 to 99 rows to train):
#: of 70 regressions of 35-70 rows, R^2 up on 33 by more than 0.005, down on 11 (the
#: mean +0.11, each score floored at -1: Arbuthnot's christenings -1.70 -> 0.69, the
#: worst loss oesophageal cancer 0.28 -> -0.06); of 15 of 70-99 rows, up on 7 and down
#: on 1, 7 and 1, 6 and 3 over three splits (+0.06, +0.03, +0.04; 100 senators, Gore's
#: share of their state's vote, 0.05 -> 0.53, -0.02 -> 0.18, 0.40 -> 0.81); no
#: classification moved (38 and 21 of them: a class of fewer rows than folds, or no
#: clear margin, keeps five).
AUTO_FOLDS, AUTO_WORK, AUTO_MIN_PASSES, AUTO_MAX_PASSES, AUTO_MARGIN = 3, 10_000_000, 10, 50, 0.02
AUTO_MIN_ROWS, AUTO_PASSES = 35, (1, 2, 3, 5, 8, 12, 20, 30, 50)
#: ``--epochs auto`` keeps the average of the models after the last AVERAGED_PASSES
#: of its passes (of all where fewer): a small input's last model moves with its last
#: rows (Polyak-Ruppert averaging, by pass; scikit-learn's ``SGDClassifier(average=
#: True)`` averages every step). The package index's small tables (R's data sets,
#: ISLP and others, as :mod:`._bins` says; 70/30 splits, seed 0): of 115
#: classifications and 115 regressions whose held-out part holds at least 100 rows,
#: accuracy up on 40 by more than 0.005, down on 11, +0.006 on average (R's
#: unemployment benefits 0.547 -> 0.660, ``LogisticRegression`` 0.705); R^2 up on
#: 33, down on 11, +0.007; over all 361 (the smallest test on 30 rows) 58 up and 38
#: down, 43 and 29. scikit-learn's tables (five splits): iris 0.910 -> 0.937
#: (MISSION), diabetes R^2 0.431/0.433 -> 0.440/0.443 (MISSION, BEAR), wine 0.969 ->
#: 0.960 (MISSION), the other models level or up. Averaging every pass lost more
#: than it won (regressions down on 65, up on 52: its first passes are far from
#: converged).
AVERAGED_PASSES = 3
#: A classification's default model (a model per class: feature hashing 4 MiB a class,
#: MISSION and BEAR about 3) has its sketches narrowed to this many bytes in all where
#: it would take more, unless a parameter in SIZE_PARAMS sizes it: Vowpal Wabbit's
#: one-against-all shares one table. The flights' 104 destinations (from carrier,
#: origin, flight, tail number, hour and month; January to September to train):
#: feature hashing 436 -> 134 MB, 0.7940 -> 0.7934-0.7937, 19 -> 14 s; MISSION 0.7930
#: -> 0.7921, 69 -> 60 s; BEAR 0.7952 -> 0.7956. Twenty classes stay under it (20
#: Newsgroups: hashing 84 MB, BEAR 73 MB, MISSION 64 MB).
DEFAULT_MODEL_BYTES = 2**27
SIZE_PARAMS = {"memory_budget", "sketch_width", "sketch_depth", "n_features_to_select"}
#: A capped sketch is at least this wide: past about 1,800 classes (MISSION: a heap of
#: 24 KB and a sketch of this width, 48 KB, a class) the model then takes more than the
#: cap, where it kept its default shape before (R's Bundesliga results, the date, one
#: of 3,045, from teams, goals, round and year: MISSION's 9,201 MiB, stopped after 18
#: minutes in its probe; narrowed, 209 MiB, accuracy .679 held out).
MIN_CAPPED_WIDTH = 2**12
#: Rows of an input (as the label scan counts them) read whole before its model is
#: made, so that a default sketch can be narrowed to its features.
SMALL_TABLE_ROWS = 50_000
#: Cells a distinct feature of a small input gets in each row of a narrowed sketch ...
CELLS_PER_FEATURE = 16
#: ... and the fewest cells of such a row.
MIN_SMALL_WIDTH = 2**12
#: Bytes a model (a class, or the one model of two) gets at least of a default
#: WM- or AWM-Sketch's budget: many classes grow it (up to ``DEFAULT_MODEL_BYTES``).
#: The flights' 104 destinations (as for ``DEFAULT_MODEL_BYTES``), the AWM-Sketch:
#: 4 MB (its default) 0.7797, 13 MB (this much a class) 0.7926, 26 MB 0.7925, 32
#: MB and 128 MB 0.7928 (MISSION's capped default 0.7922 in 134 MB).
MIN_BUDGET_PER_MODEL = 2**17
#: Class models from which a default model trains in a thread a core (n_jobs=-1):
#: with 20 or 104 classes fit took 0.62-0.93 of its time on two cores, with 4 longer.
MIN_MODELS_FOR_THREADS = 16
#: The least budget a small input's default WM- or AWM-Sketch is cut to (doubled
#: until its sketch holds ``CELLS_PER_FEATURE`` cells a distinct feature). The
#: AWM-Sketch at 64 KB, 256 KB, 1 MB and 4 MB (its default) on two 70/30 splits
#: each of eight tables (scikit-learn's iris, wine, breast cancer and digits; New
#: York's airports by time zone, planes by engine and by manufacturer, weather by
#: airport): the same accuracy from 256 KB on six, within 0.2 points on digits
#: and 0.1 on the weather (either way); 64 KB lost up to 0.8 points (digits, planes).
MIN_SMALL_BUDGET = 2**18


def _estimator_module(name):
    import importlib
    return importlib.import_module(f"sklearn_sketch.{ESTIMATORS[name][0]}")


def _new_estimator(name, task="classification"):
    """A new estimator of ``--estimator name`` for the task (imports scikit-learn)."""
    module = _estimator_module(name)
    return getattr(module, REGRESSORS[name] if task == "regression" else ESTIMATORS[name][1])()


def _parse_params(pairs):
    """``key=value`` pairs as a dict; a value that is no Python literal stays a string."""
    params = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key.isidentifier():
            raise CommandError(f"--param expects key=value, got {pair!r}")
        try:
            params[key] = ast.literal_eval(value)
        except (ValueError, SyntaxError):
            params[key] = value
    return params


def _format_label(label):
    if isinstance(label, (float, np.floating)) and float(label).is_integer():
        return str(int(label))
    return str(label)


def _write(text, path):
    if path is None:
        sys.stdout.write(text)
    else:
        with open(path, "w") as f:
            f.write(text)


#: Training bases below which reads are counted in ``SHORT_K``-mers by default, and
#: ``LONG_K``-mers from there (``--k``). Which k serves depends on the task. Species
#: told apart on strains held out (MISSION, four species, reads of 200 bases): 4 Mbp
#: .903 with 8-mers against .774 with 12-mers (100-base reads: .807 against .701),
#: 16 Mbp .925 against .887, 40 Mbp .910 against .926: in few reads long k-mers
#: seldom repeat, and another strain shares fewer of them. Two strains of one
#: species told apart on reads of their own genomes (H. pylori G27 against ELS37):
#: 2 Mbp .562 against .600, 4 Mbp .582 against .666, 8 Mbp .612 against .721,
#: 20 Mbp .646 against .799: the strains differ by long k-mers. Below 5 Mbp
#: 8-mers gain 9 to 16 points on the first task (2,000 FASTQ reads of two species,
#: 0.6 Mbp: .947 against .787) and lose at most 4 to 8 near chance on the second;
#: past it, 12-mers lose little on the first and keep the second.
SHORT_K_BASES = 5_000_000
SHORT_K, LONG_K = 8, 12

def training_bases(args):
    """About how many bases the training reads hold, before any is read: exact for
    the embedded sample and for ``--read-length`` with ``--n-reads``, else from the
    files' sizes (times ``--coverage``)."""
    if args.sample:  # the reads the stream draws (InputStream._sample_chunks)
        from ..datasets._dna import sample_species
        return (args.n_reads or 1000) * SAMPLE_READ_LENGTH * len(sample_species())
    files = labelled_files(args)
    if args.read_length is not None and args.coverage is None:
        return args.read_length * (args.n_reads or 1000) * len(files)
    coverages = file_coverages(args) or [1.0] * len(files)
    return sum(file_bases(path, bool(args.fastq)) * coverage
               for (path, _), coverage in zip(files, coverages))


def _vectorizer(args):
    if input_kind(args) in ("svmlight", "vw", "csv"):
        return None
    from ..feature_extraction import KmerVectorizer
    k = args.k
    if k is None:
        bases = training_bases(args)
        k = SHORT_K if bases < SHORT_K_BASES else LONG_K
        why = ("in few reads long k-mers seldom repeat, and another strain shares fewer "
               "of them" if k == SHORT_K else "strains of one species differ by long k-mers")
        note(f"{k}-mers: the training reads hold about {bases / 1e6:,.1f} Mbp, "
             f"{'fewer' if k == SHORT_K else 'more'} than {SHORT_K_BASES // 10**6} Mbp "
             f"({why}); --k sets the length")
    return KmerVectorizer(k=k, canonical=not args.forward_strand)


# ------------------------------------------------------------------ demo
def cmd_demo(args):
    from ._demo import run_dna_demo, run_heavy_hitters_demo
    if args.heavy_hitters:
        run_heavy_hitters_demo(n_items=args.items, top=args.top, width=args.width,
                               depth=args.depth, random_state=args.random_state)
    else:
        start = time.perf_counter()
        run_dna_demo(n_reads_per_class=args.n_reads, k=args.k, random_state=args.random_state)
        print(f"\nDemo ran in {time.perf_counter() - start:.1f} s.")


# ------------------------------------------------------------------- fit
class _ReadEarly:
    """The training stream, its labels scanned and its first pass read by a background thread.

    One thread scans the labels (svmlight, VW), then reads the first pass
    ahead, while the main thread imports the estimator (and scikit-learn):
    the import, which holds the GIL, keeps a core to itself. Later passes are
    read ahead as :func:`partial_fit_stream` would.
    """

    def __init__(self, stream):
        from ..io._training import Prefetcher
        self.stream = stream
        self.scanned = concurrent.futures.Future()
        self.first = Prefetcher(self._scan_then_read(), EARLY_READ_CHUNKS)
        self._peeked, self._rest = [], None

    def _scan_then_read(self):
        try:
            self.scanned.set_result(self.stream.classes())
        except BaseException as exc:  # Raised in the main thread by classes().
            self.scanned.set_exception(exc)
            return
        yield from self.stream

    def classes(self):
        """Every class of the input (waits for the scan)."""
        return self.scanned.result()

    def read_ahead(self, more):
        """The first pass's chunks read ahead of training (which still gets them all),
        one at a time while ``more(chunk)`` says so; whether they are the whole
        input. Only for an input of at most ``SMALL_TABLE_ROWS`` rows as the label
        scan counted them (False, nothing read ahead, for any other)."""
        rows = self.stream.scanned_rows
        if self.first is None or rows is None or rows > SMALL_TABLE_ROWS:
            return False
        self._rest = iter(self.first)
        for chunk in self._rest:
            self._peeked.append(chunk)
            if not more(chunk):
                return False
        self._rest = iter(())
        return True

    def __iter__(self):
        from ..io._training import _prefetched
        first, self.first = self.first, None
        if first is None:
            yield from _prefetched(self.stream)
            return
        peeked, self._peeked = self._peeked, []
        try:
            if self._rest is None:
                yield from first
            else:
                yield from peeked
                yield from self._rest
        finally:
            first.close()

    def close(self):
        if self.first is not None:
            self.first.close()


class _Counted:
    """Count the rows, rows with weight, non-zeros and rows per label a stream hands
    out, per pass, and keep the first ``CHECKED_ROWS`` rows of the first pass
    (``first_rows``), on which the trained model is checked; for a regression
    (``targets``), read the labels as numbers instead of counting them.

    ``first_pass``: the progressive error and log loss of ``estimator`` (its
    ``online_error_rate_`` and ``online_log_loss_``, None where it has none) when
    the first pass ended, each example predicted before it was trained on: a later
    pass over a small input predicts examples the model has learned by heart.
    """

    def __init__(self, chunks, targets=False, estimator=None):
        from .._base import CHECKED_ROWS
        self.chunks, self.targets, self.checked_rows = chunks, targets, CHECKED_ROWS
        self.estimator = estimator
        self.rows = self.weighted_rows = self.empty_rows = self.nnz = 0
        self.label_counts = {}
        self.first_rows = []
        self.first_pass = None
        #: The first pass's chunks ``(X, y, sample_weight)``, while it holds at most
        #: SMALL_INPUT_NNZ non-zero values (then None).
        self.small_input = []

    def __iter__(self):
        self.rows = self.weighted_rows = self.empty_rows = self.nnz = 0
        self.label_counts = {}
        keep = not self.first_rows
        for chunk in self.chunks:
            self.rows += chunk.X.shape[0]
            self.nnz += chunk.X.nnz
            self.empty_rows += _empty_rows(chunk.X)
            weight = chunk.sample_weight
            self.weighted_rows += (chunk.X.shape[0] if weight is None
                                   else int(np.count_nonzero(weight)))
            if self.targets:
                # Finite numbers: checked by the label scan and the CSV reader.
                chunk = chunk._replace(y=np.asarray(chunk.y, dtype=np.float64))
            if keep and self.small_input is not None:
                if self.nnz > SMALL_INPUT_NNZ:
                    self.small_input = None
                else:
                    self.small_input.append((chunk.X, chunk.y, weight))
            kept = sum(x.shape[0] for x, _ in self.first_rows)
            if keep and kept < self.checked_rows:
                self.first_rows.append((chunk.X[:self.checked_rows - kept],
                                        np.asarray(chunk.y)[:self.checked_rows - kept]))
            if not self.targets:
                labels, counts = np.unique(np.asarray(chunk.y), return_counts=True)
                for label, count in zip(labels.tolist(), counts.tolist()):
                    self.label_counts[label] = self.label_counts.get(label, 0) + count
            yield chunk
        # Reached once the consumer asks past the last chunk: it has trained on them all.
        if self.first_pass is None:
            self.first_pass = tuple(getattr(self.estimator, name, None) for name in
                                    ("online_error_rate_", "online_log_loss_"))


def _empty_rows(X):
    """Rows of a CSR chunk without a stored feature."""
    return int(np.count_nonzero(np.diff(X.indptr) == 0))


def _warn_if_empty_rows(n_empty, n_rows, vectorizer, consequence):
    """Say how many examples had no feature: a model can only guess their label."""
    if not n_empty:
        return
    why = ""
    if vectorizer is not None:
        why = (f" (reads shorter than k={vectorizer.k} bases, or without {vectorizer.k} "
               "A, C, G or T in a row)")
    print(f"sklearn-sketch: warning: {n_empty:,} of {n_rows:,} examples have no "
          f"feature{why}: {consequence}", file=sys.stderr)


#: Distinct k-mers an example of whole records has on average, past which the
#: records are taken for genomes (a 200-base read has at most 200), or a quarter of
#: the k-mers there are where that is fewer (a genome holds most 8-mers).
GENOME_KMERS = 100_000


def _records_read_whole(args):
    """FASTA/FASTQ records are examples as they are unless ``--read-length`` cuts reads
    (the embedded sample holds reads already)."""
    return input_kind(args) == "reads" and args.read_length is None


def _note_if_records_are_genomes(vectorizer, n_rows, nnz, doing):
    """Without ``--read-length`` each FASTA/FASTQ record is one example: say so when
    the ``n_rows`` records (``nnz`` distinct k-mers in all) are long enough to be
    whole genomes, which a user who meant to classify reads of them has then
    trained on, or scored, as a handful of examples (``doing``: what reads would
    be for)."""
    if not n_rows or nnz / n_rows < min(GENOME_KMERS, 4**vectorizer.k // 4):
        return
    note(f"without --read-length each record is one example: "
         f"{n_rows:,} here, with {nnz / n_rows:,.0f} distinct {vectorizer.k}-mers each on "
         f"average (whole genomes?). To {doing} reads of them, cut reads: "
         f"--read-length 200 --n-reads 20000, say")


def _warn_if_near_chance(estimator, counted, vectorizer=None, whole_records=None):
    """Say so when the model erred about as often as predicting the majority label
    on the first pass (``counted.first_pass``), and a binary model's log loss was no
    lower than the labels' entropy (the rule by which ``fit`` of a classifier
    warns), saying what a later pass did. With reads
    (``vectorizer``), the ways out are a shorter k or more reads: in one pass over
    few reads long k-mers seldom repeat, so the model sees each one once (two
    species at 0.6x coverage with k=31: 49% of reads erred as they came, while
    held-out strains scored 0.80; 2,000 FASTQ reads of 150 bases of E. coli and
    of S. aureus: 49% with k=12, held-out strains 0.79, and 0.95 with k=8).
    ``whole_records`` is ``"records"`` for FASTA without ``--read-length``: each
    record is an example, so a few genomes are a few examples, and the first way
    out is to cut reads from them; ``"reads"`` for FASTQ read whole, whose records
    are a sequencer's reads."""
    from .._base import (label_entropy, learned_next_to_nothing, later_passes_note,
                         log_loss_note, majority_error)

    error, log_loss = counted.first_pass or (None, None)
    baseline = majority_error(counted.label_counts.values())
    entropy = label_entropy(counted.label_counts.values())
    if not learned_next_to_nothing(error, baseline, log_loss, entropy):
        _warn_if_final_model_near_chance(estimator, counted)
        return
    params = estimator.get_params()
    larger = ("memory (--param memory_budget=...)" if "memory_budget" in params
              else "heap (--param n_features_to_select=...)")
    if vectorizer is not None and whole_records == "records":
        tries = (f"reads cut from the records (--read-length L with --n-reads N or "
                 f"--coverage C: without --read-length each record is one example, here "
                 f"{counted.rows:,} in all), a shorter --k, another --estimator, ")
    elif vectorizer is not None:
        # A sequencer's reads (FASTQ) are examples already: more of them is more files.
        how = "" if whole_records else "--n-reads or --coverage: "
        shorter = SHORT_K if vectorizer.k > SHORT_K else max(vectorizer.k - 2, 4)
        tries = (f"a shorter --k (--k {shorter}, say), more reads ({how}in one pass over few reads, "
                 f"k-mers of {vectorizer.k} bases seldom repeat), more --epochs, "
                 f"another --estimator, a larger {larger}, ")
    else:
        tries = (f"more --epochs, another --estimator, a larger {larger} or another step "
                 f"(--param eta0=...), put numeric features of very different ranges on one "
                 f"scale (the step adapts to an example's norm, not to each feature's range), ")
    later = (later_passes_note(error, getattr(estimator, "online_error_rate_", None),
                               "examples")
             if estimator.get_params().get("max_iter", 1) > 1 else "")
    print(f"sklearn-sketch: warning: the model learned next to nothing: on the first pass it "
          f"erred on {error:.1%} of the examples just before training on them, and always "
          f"predicting the most frequent label errs on {baseline:.1%}."
          f"{log_loss_note(log_loss, entropy)}{later} "
          f"Try {tries}"
          f"or check that the labels match the inputs.", file=sys.stderr)


def _kept_first_rows(counted):
    """The first training rows kept by ``counted``: ``(X, y)``, or None."""
    import scipy.sparse as sp

    if not counted.first_rows:
        return None
    return (sp.vstack([x for x, _ in counted.first_rows], format="csr"),
            np.concatenate([y for _, y in counted.first_rows]))


def _warn_if_final_model_near_chance(estimator, counted):
    """Say so when the trained classifier predicts the first training rows
    (``counted.first_rows``) next to nothing though the pass learned, by the rule
    of Python's ``fit`` (a late step can undo what a pass learned)."""
    from .._base import final_model_near_chance, log_loss_note

    rows = _kept_first_rows(counted)
    found = None if rows is None else final_model_near_chance(estimator, *rows)
    if found is None:
        return
    error, baseline, log_loss, entropy, n_rows = found
    print(f"sklearn-sketch: warning: the model learned next to nothing in the end: the "
          f"trained model errs on {error:.1%} of the first {n_rows:,} training examples, "
          f"and always predicting their most frequent label errs on {baseline:.1%}."
          f"{log_loss_note(log_loss, entropy)} A late step can undo what a pass learned. "
          "Try another step (--param eta0=...), more --epochs, another --random-state or "
          "another --estimator.", file=sys.stderr)


def _warn_if_no_better_than_the_mean(estimator, counted):
    """Say so when the trained regressor predicts the first training rows
    (``counted.first_rows``) no better than their mean does, by the rule of
    Python's ``fit`` (a regressor has no progressive error, as a classifier has)."""
    from .._base import no_better_than_the_mean

    rows = _kept_first_rows(counted)
    found = None if rows is None else no_better_than_the_mean(estimator, *rows)
    if found is None:
        return
    error, variance, n_rows = found
    print(f"sklearn-sketch: warning: the model learned next to nothing: on the first "
          f"{n_rows:,} training examples its squared error is {error:.4g}, and predicting "
          f"their mean errs by {variance:.4g} (their variance). Try more --epochs, another "
          "--estimator, a larger memory (--param memory_budget=...) or another step "
          "(--param eta0=...), put numeric features of very different ranges on one "
          "scale, or check that the labels match the inputs.", file=sys.stderr)


def _train(args, params, vectorizer, zero_based, n_features, csv, interactions):
    """A new estimator of the options trained on the input: ``(estimator, counted
    stream, classes)``; classes None for a regression."""
    likely = args.estimator or DEFAULT_ESTIMATORS["classification"]
    stream = InputStream(args, vectorizer, "train", zero_based=zero_based,
                         n_features=n_features, shuffle_buffer=shuffle_rows(args),
                         keep_names=ESTIMATORS[likely][2], csv=csv,
                         interactions=interactions)
    early = _ReadEarly(stream)
    try:
        _estimator_module(likely)  # scikit-learn imported while the labels are read
        classes = early.classes()
        name = args.estimator or DEFAULT_ESTIMATORS[
            "regression" if stream.task == "regression" else "classification"]
        # --random-state seeds the estimator too (its hashes and shuffles): the same
        # command gives the same model. --param random_state=... overrides it.
        if stream.task == "regression" and name not in REGRESSORS:
            raise CommandError(f"{stream.task_note or 'a regression (--task regression)'}, "
                               f"and --estimator {name} has no regressor: use "
                               f"{', '.join(sorted(REGRESSORS))} (or --task classification)")
        estimator = _new_estimator(name, stream.task).set_params(
            random_state=args.random_state)
        # The model's max_iter says how many passes it trained (partial_fit ignores it).
        if args.epochs != "auto":
            estimator.set_params(max_iter=args.epochs)
        if stream.task_note:
            note(stream.task_note)
        try:
            estimator.set_params(**params)
            estimator._validate_params()
        except ValueError as exc:
            raise CommandError(f"bad --param for {name}: {exc}") from exc
        if classes is not None:
            _cap_many_class_model(estimator, classes, params)
            _grow_many_class_budget(estimator, classes, params)
            _thread_many_class_model(estimator, classes, params)
            _warn_if_labels_differ_in_case(classes)
        _narrow_small_input_model(estimator, early, classes, params)
        counted = _Counted(early, targets=classes is None, estimator=estimator)
        from ..io._training import train_stream
        verbose = 0 if args.quiet else 1
        epochs = 1 if args.epochs == "auto" else args.epochs
        # A call that raises ends the command without a model: no undo journal.
        train_stream(estimator, counted, classes=classes, epochs=epochs, verbose=verbose,
                     prefetch=False, disposable=True)
        if args.epochs == "auto":
            passes, why = _auto_passes(estimator, counted, classes, args.random_state)
            more = passes - 1
            if more:
                note(f"a small input ({counted.nnz:,} non-zero "
                     f"values): {more} more passes, {more + 1} in all, {why}; the "
                     f"model is the average of the models after the last "
                     f"{min(AVERAGED_PASSES, more + 1)} (--epochs N for another number, "
                     "the last model kept)")
                estimator = _train_averaging_the_last(estimator, counted, classes, more,
                                                      verbose)
            estimator.set_params(max_iter=more + 1)
    finally:
        early.close()
    return estimator, counted, classes


def _warn_if_labels_differ_in_case(classes):
    """Warn of classes that differ only in letter case or the spaces around them
    (``yes``, ``Yes``, ``yes ``): a file's inconsistent spelling, learned as classes
    of their own (the rows of one, split at random, scored 0.69 where 1.0 was there
    to learn)."""
    groups = {}
    for label in classes.tolist():
        groups.setdefault(str(label).strip().casefold(), []).append(str(label))
    alike = [names for names in groups.values() if len(names) > 1]
    if alike:
        shown = "; ".join(", ".join(repr(n) for n in names) for names in alike[:3])
        print(f"sklearn-sketch: warning: {len(alike):,} group(s) of labels differ only in "
              f"letter case or spaces ({shown}{'; ...' if len(alike) > 3 else ''}): each is a "
              "class of its own here; if they are one class, write them alike in the file",
              file=sys.stderr)


def _train_averaging_the_last(estimator, counted, classes, more, verbose):
    """``estimator`` (one pass over ``counted`` done) trained ``more`` passes, as the
    average of its models after the last :data:`AVERAGED_PASSES` passes (a running
    :func:`~sklearn_sketch.average_estimators`: one copy of the model more). The
    clock (``t_``) and the last pass's counters are the last model's."""
    import copy

    from .._merge import average_estimators
    from ..io._training import train_stream

    if not hasattr(estimator, "t_"):  # no example of non-zero weight: nothing to average
        return train_stream(estimator, counted, classes=classes, epochs=more,
                            verbose=verbose, prefetch=False, disposable=True)
    passes = more + 1
    first_kept = max(1, passes - AVERAGED_PASSES + 1)
    mean, kept = (copy.deepcopy(estimator), 1) if first_kept == 1 else (None, 0)
    for done in range(2, passes + 1):
        train_stream(estimator, counted, classes=classes, epochs=1, verbose=verbose,
                     prefetch=False, disposable=True)
        if done >= first_kept:
            mean = (copy.deepcopy(estimator) if mean is None
                    else average_estimators([mean, estimator], weights=[kept, 1]))
            kept += 1
    # The counters of the last pass (its mistakes, read by online_error_rate_) are
    # the last model's, not a sum over the averaged ones.
    last, state = estimator._state, mean._state
    state.mistakes, state.log_loss = last.mistakes, last.log_loss
    state.last_pass_samples = last.last_pass_samples
    mean._set_fitted_attributes()
    return mean


def _default_budget(estimator, params):
    """Bytes of the default ``memory_budget`` of a model sized by one (the WM- and
    AWM-Sketch, IHT) that no parameter sizes (``SIZE_PARAMS``); else None."""
    if SIZE_PARAMS & set(params) or getattr(estimator, "memory_budget", None) is None:
        return None
    from .._base import parse_memory_budget
    return parse_memory_budget(estimator.memory_budget)


def _default_width(estimator, params):
    """The sketch width of a model whose shape no parameter sets (``SIZE_PARAMS``,
    or a ``memory_budget``, which sizes the WM-Sketches): the width the command line
    may narrow; None when the user sized the model or it has no sketch width."""
    if SIZE_PARAMS & set(params) or getattr(estimator, "memory_budget", "given") is not None:
        return None
    return getattr(estimator, "sketch_width", None)


def _cap_many_class_model(estimator, classes, params):
    """Narrow each class's sketch of a default model of many classes so that the
    model's tables take about ``DEFAULT_MODEL_BYTES`` in all (each sketch at least
    ``MIN_CAPPED_WIDTH`` wide), with a note, where its default shape would take more;
    unless a parameter sizes it (``SIZE_PARAMS``).
    The heaps keep their default capacity (a budget would enlarge them: MISSION's
    104 destinations took 88 s against 69)."""
    width = _default_width(estimator, params)
    if width is None:
        return
    n_models = estimator._n_models(classes)
    total, each = estimator._planned_bytes(n_models)
    if total <= DEFAULT_MODEL_BYTES:
        return
    from .._base import largest_sketch_width, sketch_bytes

    _, depth, _ = estimator._model_shape(n_models)
    sketch_each = sketch_bytes(width, depth or 1)
    room = DEFAULT_MODEL_BYTES / n_models - (each - sketch_each)
    narrow = max(largest_sketch_width(max(room, 0.0), depth or 1), MIN_CAPPED_WIDTH)
    if narrow >= width:
        return
    estimator.set_params(sketch_width=narrow)
    note(f"{len(classes):,} classes: the default model, "
         f"{each / 2**20:,.1f} MiB a class, would take {total / 2**20:,.0f} MiB; fit "
         f"narrows each class's sketch to {narrow:,} cells, "
         f"{estimator._planned_bytes(n_models)[0] / 2**20:,.0f} MiB in all "
         "(--param sketch_width=... or memory_budget=... for another size)")


def _grow_many_class_budget(estimator, classes, params):
    """Grow a default WM- or AWM-Sketch's budget to ``MIN_BUDGET_PER_MODEL`` bytes
    a model where it would give each less (with a note), up to ``DEFAULT_MODEL_BYTES``."""
    budget = _default_budget(estimator, params)
    n_models = estimator._n_models(classes)
    if budget is None or estimator._model_shape(n_models)[0] is None:
        return
    grown = min(MIN_BUDGET_PER_MODEL * n_models, DEFAULT_MODEL_BYTES)
    if grown <= budget:
        return
    estimator.set_params(memory_budget=grown)
    note(f"{len(classes):,} classes: the model's memory budget grown from "
         f"{budget / 2**20:,.1f} MiB to {grown / 2**20:,.1f} MiB, "
         f"{grown / n_models / 2**10:,.0f} KiB a class (--param memory_budget=... "
         "for another)")


def _thread_many_class_model(estimator, classes, params):
    """Train a default model of at least ``MIN_MODELS_FOR_THREADS`` class models
    on every core (``n_jobs=-1``): the threads share out the classes' models, and
    the model is the one a single thread trains, bit for bit (see ``n_jobs``);
    unless ``n_jobs`` is given or the estimator's threads split rows (BEAR).

    Measured with the AWM-Sketch on two cores: 20 Newsgroups' 20 classes 8.0 and
    8.7 s -> 7.4 and 7.1 s, the flights' 104 destinations 13.0 and 14.1 s ->
    10.0 and 8.8 s, the same predictions; four species' genomes 25.8 -> 28.2 s
    (four models: the threads wait for each other more than they share)."""
    if "n_jobs" in params or not getattr(estimator, "_threads_share_classes", False):
        return
    if estimator._n_models(classes) >= MIN_MODELS_FOR_THREADS:
        estimator.set_params(n_jobs=-1)


def _narrow_small_input_model(estimator, early, classes, params):
    """Narrow a default sketch far wider than a small input's features to
    ``CELLS_PER_FEATURE`` cells a distinct feature (at least ``MIN_SMALL_WIDTH``),
    with a note (the WM-Sketches: their budget cut, ``_cut_small_input_budget``);
    unless a parameter sizes the model (``SIZE_PARAMS``), the sketch has one row
    (feature hashing: each collision is kept) or the input is not read whole
    ahead of training (``early.read_ahead``: at most ``SMALL_TABLE_ROWS`` rows,
    and it stops at the chunk whose features leave no room to narrow, so that
    20 Newsgroups' posts train while the rest is read, as before).

    MISSION's and BEAR's default sketch of 2**18 cells a row and class held a
    16-row table of airlines in a 51 MB model and the 1,455 airports in 29 MB.
    At 16 cells a feature, a feature shares a cell of a row with another about
    one time in 16, and the median of the three rows hides it but where two
    do. Measured on two random 70/30 splits each of eight tables (New York's
    airports, planes by manufacturer and by engine, weather by airport;
    scikit-learn's wine, breast cancer, iris and digits; 150 to 26,115 rows):
    MISSION scored the same test accuracy on 12 splits, higher on 4 (by 0.0006
    to 0.015), in model files 3.9 to 57 times smaller (iris 9.5 MB -> 165 KB,
    digits 32 MB -> 2.2-2.4 MB); BEAR (one split each) the same on 7, 0.0001
    lower on the weather, in files 3.7 to 43 times smaller.
    """
    budget = _default_budget(estimator, params)
    n_models = estimator._n_models(classes)
    if budget is not None:
        width = estimator._model_shape(n_models)[0]
        if width is None:
            return  # no sketch (IHT's dense weights)
    else:
        width = _default_width(estimator, params)
        if width is None:
            return
        if (estimator._model_shape(n_models)[1] or 1) < 3:
            return  # one row (feature hashing): no median to hide a collision
    keys = np.zeros(0, dtype=np.int64)

    def room_to_narrow(chunk):
        nonlocal keys
        keys = np.union1d(keys, chunk.X.indices)
        return CELLS_PER_FEATURE * keys.size < width

    whole = early.read_ahead(room_to_narrow)
    distinct = keys.size
    if budget is not None:
        if whole:
            _cut_small_input_budget(estimator, n_models, budget, distinct)
        return
    narrow = max(MIN_SMALL_WIDTH, 1 << int(CELLS_PER_FEATURE * max(distinct, 1) - 1).bit_length())
    if not whole or narrow >= width:
        return
    before = estimator._planned_bytes(n_models)[0]
    estimator.set_params(sketch_width=narrow)
    note(f"the input is small ({distinct:,} distinct features): each sketch narrowed from "
         f"{width:,} to {narrow:,} cells, {estimator._planned_bytes(n_models)[0] / 2**20:,.1f} "
         f"MiB in all instead of {before / 2**20:,.1f} (--param sketch_width=... for "
         "another width)")


def _cut_small_input_budget(estimator, n_models, budget, distinct):
    """Cut the default budget of a WM- or AWM-Sketch to the least one, from
    ``MIN_SMALL_BUDGET`` doubling, whose sketch holds ``CELLS_PER_FEATURE`` cells a
    distinct feature of a small input read whole (with a note)."""
    given, cut = estimator.memory_budget, MIN_SMALL_BUDGET
    while cut < budget:
        estimator.set_params(memory_budget=cut)
        if estimator._model_shape(n_models)[0] >= CELLS_PER_FEATURE * distinct:
            note(f"the input is small ({distinct:,} distinct features): the model's "
                 f"memory budget cut from {budget / 2**20:,.1f} MiB to "
                 f"{cut / 2**20:,.2f} MiB (--param memory_budget=... for another)")
            return
        cut *= 2
    estimator.set_params(memory_budget=given)


def _auto_passes(estimator, counted, classes, random_state):
    """The passes ``--epochs auto`` trains (one of them done), and why: 1 past
    :data:`SMALL_INPUT_NNZ` non-zero values (``counted``, the first pass), else the
    estimator's ``max_iter``, or where cross-validation is cheap (``AUTO_WORK``) the
    passes its cross-validation chose (:func:`_cross_validated_errors`)."""
    if counted.nnz > SMALL_INPUT_NNZ:
        return 1, ""
    default = estimator.max_iter
    why = "as fit in Python trains"
    n_models = estimator._n_models(classes)
    most = min(AUTO_MAX_PASSES,
               AUTO_WORK // max(1, (AUTO_FOLDS - 1) * counted.nnz * n_models))
    passes = sorted({p for p in AUTO_PASSES if p <= most} | {default})
    if (most < AUTO_MIN_PASSES or not counted.small_input or counted.rows < AUTO_MIN_ROWS
            or default > most
            or (classes is not None and min(counted.label_counts.values()) < AUTO_FOLDS)):
        return default, why
    errors = _cross_validated_errors(estimator, counted.small_input, classes, passes,
                                     random_state)
    best = better_passes(errors, passes.index(default), classes is not None)
    if best is None:
        return default, (f"as fit in Python trains ({AUTO_FOLDS}-fold cross-validation of "
                         f"{', '.join(map(str, passes))} passes found none clearly better)")
    kind = "squared error" if classes is None else "mistakes"
    total = errors.sum(axis=0)
    return passes[best], (f"the least held-out {kind} of {AUTO_FOLDS}-fold cross-validation "
                          f"of {', '.join(map(str, passes))} passes ({total[best]:.4g} "
                          f"against {total[passes.index(default)]:.4g} in {default})")


def better_passes(errors, at_default, classification):
    """The column of held-out ``errors`` (folds by numbers of passes) that
    ``--epochs auto`` trains instead of the default's (``at_default``), or None:
    of the passes that err less than the default in every fold, the one of least
    total error, if that is less than the default's by a margin (``AUTO_MARGIN``
    of it for a regression's squared error; two square roots of a classification's
    mistakes, their spread were they counts of chance).

    Examples
    --------
    >>> import numpy as np
    >>> errors = np.array([[9.0, 6.0, 5.0], [9.0, 7.0, 10.0], [9.0, 7.0, 4.0]])
    >>> better_passes(errors, 0, classification=False)  # 3 passes erred most in a fold
    1
    >>> print(better_passes(errors[:, [0, 2]], 0, classification=False))
    None
    """
    total = errors.sum(axis=0)
    better = (errors < errors[:, [at_default]]).all(axis=0)
    if not better.any():
        return None
    best = int(np.flatnonzero(better)[np.argmin(total[better])])
    margin = (AUTO_MARGIN * total[at_default] if not classification
              else 2 * np.sqrt(total[at_default]))
    return best if total[best] < total[at_default] - margin else None


def cross_validation_folds(y, stratified, random_state):
    """The fold (0 to ``AUTO_FOLDS - 1``) of each row of labels ``y``: at random,
    and for a classification (``stratified``) each class's rows spread over the
    folds alike, so that every fold's training rows hold each class of at least
    ``AUTO_FOLDS`` rows (a fold's fit without a rare class would see one class)."""
    order = np.random.default_rng(random_state).permutation(y.size)
    if stratified:
        order = order[np.argsort(y[order], kind="stable")]
    folds = np.empty(y.size, dtype=np.int64)
    folds[order] = np.arange(y.size) % AUTO_FOLDS
    return folds


def _cross_validated_errors(estimator, chunks, classes, passes, random_state):
    """Held-out errors of ``AUTO_FOLDS``-fold cross-validation of ``estimator``'s
    parameters after each number of ``passes`` (increasing) over the rows of
    ``chunks`` (``(X, y, sample_weight)``): the weighted squared error of a
    regression, or the weighted mistakes of a classification, of each fold
    (shape ``(AUTO_FOLDS, len(passes))``). A fold's model trains on from one
    number of passes to the next (``warm_start``)."""
    import scipy.sparse as sp
    from sklearn.base import clone

    X = sp.vstack([x for x, _, _ in chunks], format="csr")
    y = np.concatenate([np.asarray(y) for _, y, _ in chunks])
    if classes is None:
        y = y.astype(np.float64)
    weights = np.concatenate([np.ones(x.shape[0]) if w is None else np.asarray(w, dtype=float)
                              for x, _, w in chunks])
    folds = cross_validation_folds(y, classes is not None, random_state)
    errors = np.zeros((AUTO_FOLDS, len(passes)))
    for fold in range(AUTO_FOLDS):
        train, test = folds != fold, folds == fold
        model = clone(estimator).set_params(warm_start=True)
        done = 0
        for i, n in enumerate(passes):
            with warnings.catch_warnings():  # a fold's model learning little says nothing
                warnings.simplefilter("ignore")
                model.set_params(max_iter=n - done).fit(X[train], y[train],
                                                        sample_weight=weights[train])
            done = n
            predicted = model.predict(X[test])
            wrong = ((predicted - y[test]) ** 2 if classes is None
                     else (predicted != y[test]).astype(np.float64))
            errors[fold, i] = float(wrong @ weights[test])
    return errors


#: A FASTA record of this many bases on average is a genome, a chromosome or a long
#: contig, not a read (a sequencer's longest reads average tens of kilobases).
GENOME_RECORD_BASES = 100_000
#: Bytes of a record read at most to tell genomes (a human chromosome is 250 MB).
FIRST_RECORDS_BYTES = 2**22
#: The reads ``fit`` cuts from genomes when no ``--read-length`` says how:
#: ``READ_LENGTH`` bases (the embedded sample's) at ``COVERAGE``. Held-out strains'
#: reads (12-mers, two seeds or three) at coverage 1 / 2 / 4: E. coli against
#: S. aureus MISSION .947/.977/.980, hashing .857/.947/.974, AWM .855/.946/.974;
#: 12 genomes of four species MISSION .840/.904/.928, hashing .961/.982/.990, AWM
#: .904/.957/.977 (fit 3-4 s and 12 s at 4). The classes are balanced to as many bases
#: each (``file_coverages``).
READ_LENGTH, COVERAGE = SAMPLE_READ_LENGTH, 4.0


def _default_training_reads(args):
    """Train on reads cut from FASTA genomes given without ``--read-length`` (and at
    ``COVERAGE`` where ``--read-length`` comes without an amount): each
    record whole would be one example, and a handful of genomes taught nothing
    (16 genomes of four species: 20 examples, a model that erred on nearly all of
    them). The records are genomes when the first file's first records average
    ``GENOME_RECORD_BASES``; reads or contigs shorter than that stay examples."""
    from ..io import FastaReader, RecordTooLong

    if input_kind(args) != "reads":
        return
    if args.read_length is not None:
        if args.n_reads is None and args.coverage is None:
            # 1,000 reads a file, the amount evaluate and predict score, is a sliver of
            # a genome (E. coli against S. aureus .959 against .975 at 4x coverage; 12
            # genomes of four species .836 against .928).
            args.coverage, args.balanced_coverage = COVERAGE, True
            note(f"training on reads at {COVERAGE:g}x coverage of the class with the most "
                 "bases, and as many bases of each other class (--n-reads N or --coverage C "
                 "sets it)")
        return
    if args.fastq:
        return
    path = labelled_files(args)[0][0]
    try:
        # A record past FIRST_RECORDS_BYTES is a genome's: a chromosome is not read whole.
        first = next(iter(FastaReader(path, chunk_reads=16,
                                      max_line_bytes=FIRST_RECORDS_BYTES)), None)
        if first is None or not len(first.sequences):
            return
        bases = sum(map(len, first.sequences)) / len(first.sequences)
    except RecordTooLong:
        bases = FIRST_RECORDS_BYTES
    except (OSError, ValueError):
        return  # training names the problem
    if bases < GENOME_RECORD_BASES:
        return
    args.read_length, args.coverage, args.balanced_coverage = READ_LENGTH, COVERAGE, True
    size = (f"{bases / 1e6:,.2f} Mbp on average" if bases < FIRST_RECORDS_BYTES
            else f"over {FIRST_RECORDS_BYTES / 1e6:,.1f} Mbp")
    note(f"{path}'s records are genomes ({size}): training on "
         f"reads of {READ_LENGTH} bases from both strands, at {COVERAGE:g}x coverage of the "
         "class with the most bases and as many bases of each other class (--read-length L "
         "with --coverage C or --n-reads N sets them)")


def cmd_fit(args):
    check_read_options(args)
    _default_training_reads(args)
    params = _parse_params(args.param or [])
    vectorizer = _vectorizer(args)
    kind = input_kind(args)
    zero_based, n_features = decide_svmlight_layout(args)
    csv = csv_options(args) if kind == "csv" else None
    interactions = list(args.interactions or [])
    start = time.perf_counter()
    from ..io import ParseError
    try:
        estimator, counted, classes = _train(args, params, vectorizer, zero_based, n_features,
                                             csv, interactions)
    except ParseError as exc:
        if n_features is None or "is not below n_features" not in exc.reason:
            raise
        # The first rows looked like a table; a later index says the columns are keys.
        note(f"{exc}; the first {TABLE_ROWS:,} rows of the training files "
             f"held only indices below {n_features:,}, read as a table of as many "
             "columns: training again on the whole key space, the values as given")
        estimator, counted, classes = _train(args, params, vectorizer, zero_based, None,
                                             csv, interactions)
    if counted.weighted_rows == 0:
        raise CommandError("the input holds no example with a non-zero weight: nothing to "
                           "train on, no model written")
    _warn_if_empty_rows(counted.empty_rows, counted.rows, vectorizer,
                        "only the model's intercept learned from them")
    whole_records = None
    if _records_read_whole(args):
        _note_if_records_are_genomes(vectorizer, counted.rows, counted.nnz, "learn from")
        whole_records = "reads" if args.fastq else "records"
    if classes is None:
        _warn_if_no_better_than_the_mean(estimator, counted)
    else:
        _warn_if_near_chance(estimator, counted, vectorizer, whole_records)
    model_input = {"format": "reads" if kind == "sample" else kind, "zero_based": zero_based}
    if csv is not None:
        model_input["csv"] = csv
    if interactions:
        model_input["interactions"] = interactions
    save_model(args.output, estimator, vectorizer, model_input)
    if not args.quiet:
        task = "a regression" if classes is None else f"{len(classes)} classes"
        print(f"{type(estimator).__name__} trained on {counted.rows:,} examples x "
              f"{estimator.max_iter} epoch(s), {task}, in "
              f"{time.perf_counter() - start:.1f} s; {estimator.memory_bytes_:,} bytes, "
              f"saved to {args.output}")


# ---------------------------------------------------------------- select
def _feature_names(model, keys):
    """Names of heap keys: kept names (VW, raw tokens), k-mers, else the key."""
    estimator, vectorizer = model["estimator"], model["vectorizer"]
    names = estimator.selected_features_.names
    if vectorizer is not None:
        return vectorizer.decode(keys).tolist()
    if names is not None:
        return [str(key) if name is None else str(name)
                for key, name in zip(keys.tolist(), names[:keys.size].tolist())]
    return keys.astype(str).tolist()


def cmd_select(args):
    model = load_model(args.model)
    estimator = model["estimator"]
    if not hasattr(estimator, "selected_features_"):
        raise CommandError(f"{type(estimator).__name__} keeps no feature identities: "
                           "nothing to select")
    selected = estimator.selected_features_
    keys, weights = selected.keys[:args.top], selected.weights[:args.top]
    names = _feature_names(model, keys)
    if hasattr(estimator, "classes_"):
        classes = estimator.classes_
        # A binary model has one weight vector, that of the positive class.
        columns = [_format_label(c) for c in (classes[1:] if len(classes) == 2 else classes)]
    else:  # A regressor's one weight vector.
        columns = ["target"]
    if args.format == "json":
        text = json.dumps([{"key": int(key), "name": name,
                            "weights": dict(zip(columns, row.tolist()))}
                           for key, name, row in zip(keys, names, weights)], indent=1) + "\n"
    else:
        lines = ["\t".join(["key", "name"] + [f"weight_{c}" for c in columns])]
        lines += ["\t".join([str(key), name] + [f"{w:.6g}" for w in row])
                  for key, name, row in zip(keys.tolist(), names, weights)]
        text = "\n".join(lines) + "\n"
    _write(text, args.output)


# ------------------------------------------------------ predict, evaluate
def _model_stream(model, args):
    """The input as the model's training read it, checked against its kind."""
    check_read_options(args)
    trained_on = model["input"].get("format")
    kind = input_kind(args)
    given = "reads" if kind == "sample" else kind
    if trained_on is not None and given != trained_on:
        hint = {"reads": "--fasta, --fastq or --sample", "svmlight": "--svmlight",
                "vw": "--vw", "csv": "--csv"}[trained_on]
        raise CommandError(f"this model was trained on {trained_on} input, not {given}: "
                           f"give {hint}")
    if kind == "reads" and hasattr(model["estimator"], "classes_"):
        _check_file_labels(args, model["estimator"].classes_)
    vectorizer = model["vectorizer"]
    csv = csv_options(args, model["input"]["csv"]) if kind == "csv" else None
    if csv is not None and args.command == "evaluate":
        from ._csv import read_csv
        from ._inputs import header_spec
        for path in args.csv:
            if csv["label"] not in [str(c) for c in
                                    read_csv(path, header_spec(csv), nrows=0).columns]:
                raise CommandError(f"{path} has no label column {csv['label']!r} to evaluate "
                                   "against (give --label)")
    zero_based, n_features = decide_svmlight_layout(args, model)
    # predict reads every row; evaluate scores the rows with a label (a regressor's,
    # with a number).
    missing = "keep" if args.command == "predict" else "skip"
    return InputStream(args, vectorizer, "test", zero_based=zero_based, n_features=n_features,
                       csv=csv, interactions=model["input"].get("interactions", []),
                       missing_labels=missing,
                       targets=not hasattr(model["estimator"], "classes_"),
                       stray_labels="unscored", record_names=args.command == "predict")


def _check_file_labels(args, classes):
    """A label given on the command line that the model does not know is a typo."""
    known = {str(c) for c in classes}
    for path, label in labelled_files(args):
        if label is not None and label not in known:
            raise CommandError(f"the label {label!r} of {path} is not one of the model's "
                               f"classes: {', '.join(sorted(known))}")


def cmd_predict(args):
    model = load_model(args.model)
    estimator = model["estimator"]
    proba = getattr(args, "proba", False)
    if proba and not hasattr(estimator, "classes_"):
        raise CommandError("--proba gives the probabilities of a classifier's classes; this "
                           "model is a regressor, which predicts numbers")
    if proba and not hasattr(estimator, "predict_proba"):
        raise CommandError(f"--proba needs a model trained with loss='log_loss' (the "
                           f"default); this one has loss={estimator.loss!r}")
    stream = _model_stream(model, args)
    n_rows = n_empty = nnz = 0
    # Each class's text once; a chunk's lines are formatted and joined in NumPy and C.
    names = (np.array([_format_label(c) for c in estimator.classes_.tolist()], dtype=object)
             if hasattr(estimator, "classes_") else None)
    documents = _document_names(args)
    # Each read beside its identifier, as a folder's documents beside their names.
    first_column = "file" if documents is not None else (
        "read" if input_kind(args) == "reads" else None)
    with _open_output(args.output) as out:
        if proba:
            out.write("\t".join([first_column] * (first_column is not None)
                                + ["label", *names]) + "\n")
        for chunk in stream:
            n_rows += chunk.X.shape[0]
            nnz += chunk.X.nnz
            n_empty += _empty_rows(chunk.X)
            if proba:
                # One scoring a chunk: the label and the probabilities from the same scores.
                probabilities = estimator._probabilities(estimator._decision(chunk.X))
                lines = names[probabilities.argmax(axis=1)].astype(str)
                for column in np.char.mod("%.6g", probabilities).T:
                    lines = np.char.add(np.char.add(lines, "\t"), column)
            elif names is not None:
                codes = np.searchsorted(estimator.classes_, estimator.predict(chunk.X))
                lines = names[codes]
            else:
                lines = np.char.mod("%.6g", estimator.predict(chunk.X))
            row_names = (documents[n_rows - chunk.X.shape[0]:n_rows] if documents is not None
                         else chunk.row_names)
            if row_names is not None:
                lines = np.char.add(np.char.add(np.asarray(row_names, dtype=str), "\t"), lines)
            if len(lines):
                out.write("\n".join(lines.tolist()) + "\n")
    _warn_if_empty_rows(n_empty, n_rows, model["vectorizer"],
                        "the model predicted them by its intercept alone")
    if _records_read_whole(args):
        _note_if_records_are_genomes(model["vectorizer"], n_rows, nnz, "predict")


def _document_names(args):
    """The files of the folders of documents that ``--csv`` gives (each relative to
    its folder, the rows' order), or None when an input is not such a folder: a
    folder's predictions are written beside its files' names (in the folder's
    sorted order, they could not be told apart)."""
    paths = getattr(args, "csv", None) or []
    if not paths or not all(os.path.isdir(path) for path in paths):
        return None
    from ._formats import document_files

    return np.array([os.path.relpath(name, path) for path in paths
                     for _, name in document_files(path)], dtype=object)


class _open_output:
    def __init__(self, path):
        self.path = path

    def __enter__(self):
        self.file = sys.stdout if self.path is None else open(self.path, "w")
        return self.file

    def __exit__(self, *exc):
        if self.path is not None:
            self.file.close()


def cmd_evaluate(args):
    model = load_model(args.model)
    estimator = model["estimator"]
    regression = not hasattr(estimator, "classes_")
    tally = (_TargetTally if regression else _ClassTally)(estimator)
    n_empty = nnz = 0
    for chunk in _model_stream(model, args):
        n_empty += _empty_rows(chunk.X)
        nnz += chunk.X.nnz
        tally.add(chunk.X, chunk.y)
    if not tally.n_rows:
        raise CommandError("the input holds no example")
    _warn_if_empty_rows(n_empty, tally.n_rows, model["vectorizer"],
                        "the model scored them by its intercept alone")
    if _records_read_whole(args):
        _note_if_records_are_genomes(model["vectorizer"], tally.n_rows, nnz, "score")
    # A Vowpal Wabbit line without a label (NaN) is an example to predict, not to score,
    # as a regression's CSV row whose label is not a number. (A CSV row without one is
    # skipped at reading; other inputs always have one.)
    if tally.n_unlabeled:
        print(f"sklearn-sketch: warning: {tally.n_unlabeled:,} of {tally.n_rows:,} examples "
              f"have no label{' that is a number' if regression else ''}: they are not "
              "scored", file=sys.stderr)
    if tally.n_unlabeled == tally.n_rows:
        raise CommandError("the input holds no labeled example to score")
    metrics = tally.metrics()
    metrics.update(memory_bytes=int(estimator.memory_bytes_),
                   predict_seconds=round(tally.seconds, 4))
    if args.format == "json":
        print(json.dumps(metrics))
    else:
        for name, value in metrics.items():
            if value is None:
                value = "n/a"
            elif isinstance(value, float) and name != "predict_seconds":
                value = f"{value:.4f}"
            print(f"{name}\t{value}")


class _Tally:
    """What ``evaluate`` keeps of the examples of a stream, chunk by chunk."""

    def __init__(self, estimator):
        self.estimator = estimator
        self.n_rows = self.n_unlabeled = 0
        self.seconds = 0.0

    def _scored(self, method, X, y):
        """``(scores, y)`` of the labeled rows of a chunk (``method`` timed)."""
        start = time.perf_counter()
        scores = method(X)
        self.seconds += time.perf_counter() - start
        self.n_rows += y.size
        if y.dtype.kind == "f" and np.isnan(y).any():
            labeled = ~np.isnan(y)
            self.n_unlabeled += int(y.size - labeled.sum())
            y, scores = y[labeled], scores[labeled]
        return scores, y


class _TargetTally(_Tally):
    """A regressor's targets and predictions (a CSV's targets are text, checked as
    numbers by its reader), for R^2, RMSE and MAE."""

    def __init__(self, estimator):
        super().__init__(estimator)
        self.targets, self.predictions = [], []

    def add(self, X, y):
        """Predict one chunk ``X`` of targets ``y``."""
        predictions, y = self._scored(self.estimator.predict, X,
                                      np.asarray(y, dtype=np.float64))
        self.targets.append(y)
        self.predictions.append(predictions)

    def metrics(self):
        return _regression_metrics(np.concatenate(self.targets),
                                   np.concatenate(self.predictions))


class _ClassTally(_Tally):
    """A classifier's examples: each row's class code (-1: a label the model does
    not know), the rows it got right, and what its ROC AUC needs (a binary model's
    scores, else the probabilities of the scores, computed once). The labels
    themselves, as Python objects, took about 200 bytes a row with their scores:
    790 MB for 2.7M flights of 3 classes."""

    def __init__(self, estimator):
        super().__init__(estimator)
        self.classes = estimator.classes_
        self.with_proba = hasattr(estimator, "predict_proba") and len(self.classes) > 2
        self.codes, self.auc_scores, self.unknown = [], [], {}
        self.n_right = 0

    def add(self, X, y):
        """Score one chunk ``X`` of labels ``y``."""
        scores, y = self._scored(self.estimator.decision_function, X, np.asarray(y))
        codes = _class_codes(y, self.classes)
        unknown = codes < 0
        if unknown.any():
            for label, count in zip(*np.unique(y[unknown], return_counts=True)):
                key = _format_label(label)
                self.unknown[key] = self.unknown.get(key, 0) + int(count)
        predicted = (scores > 0) if scores.ndim == 1 else scores.argmax(axis=1)
        self.n_right += int((predicted == codes).sum())
        self.codes.append(codes)
        if scores.ndim == 1:
            self.auc_scores.append(scores)
        elif self.with_proba:  # the probabilities of the scores just computed
            self.auc_scores.append(self.estimator._probabilities(scores))

    def metrics(self):
        codes = np.concatenate(self.codes)
        if self.unknown:
            labels, classes = sorted(self.unknown), self.classes
            print(f"sklearn-sketch: warning: {sum(self.unknown.values()):,} of {codes.size:,} "
                  f"examples have labels the model does not know ({', '.join(labels[:5])}"
                  f"{', ...' if len(labels) > 5 else ''}); its classes are "
                  f"{', '.join(map(_format_label, classes[:10]))}"
                  f"{f' and {len(classes) - 10} more' if len(classes) > 10 else ''}: they "
                  "count as errors", file=sys.stderr)
        return {"examples": int(codes.size), "accuracy": self.n_right / codes.size,
                "roc_auc": _roc_auc(len(self.classes), codes, self.auc_scores)}


def _class_codes(y, classes):
    """The index of each label of ``y`` in ``classes``, -1 for a label not among them
    (compared as numbers when both are numbers, else as text).

    Examples
    --------
    >>> import numpy as np
    >>> _class_codes(np.array(["b", "z", "a"], dtype=object), np.array(["a", "b"]))
    array([ 1, -1,  0], dtype=int32)
    >>> _class_codes(np.array([1.0, -1.0, 3.0]), np.array([-1, 1]))
    array([ 1,  0, -1], dtype=int32)
    """
    if not (y.dtype.kind in "biuf" and classes.dtype.kind in "biuf"):
        classes, y = classes.astype(str), y.astype(str)
    order = np.argsort(classes, kind="stable")
    ranks = np.minimum(np.searchsorted(classes[order], y), len(classes) - 1)
    codes = order[ranks].astype(np.int32)
    return np.where(classes[codes] == y, codes, np.int32(-1))


def _regression_metrics(y_true, predicted):
    """R^2 (scikit-learn's ``r2_score``: 1 is exact, 0 predicts as well as the targets'
    mean), root mean squared and mean absolute errors."""
    errors = predicted - y_true
    variance = float(np.var(y_true))
    mse = float(np.mean(errors ** 2))
    return {"examples": int(y_true.size),
            "r2": 1.0 - mse / variance if variance > 0 else None,
            "rmse": float(np.sqrt(mse)), "mae": float(np.mean(np.abs(errors)))}


def _roc_auc(n_classes, codes, scores):
    """Binary AUC of the scores, macro one-vs-rest AUC of the probabilities (as
    ``roc_auc_score(multi_class="ovr")``, a class at a time: it binarized every
    label and copied every probability at once, 70 bytes a row at 3 classes), or
    None (a class absent, a label the model does not know, or no probabilities).
    ``scores`` are a list of chunks' scores or probabilities."""
    from sklearn.metrics import roc_auc_score
    if not scores or codes.min() < 0 or np.bincount(codes, minlength=n_classes).min() == 0:
        return None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if scores[0].ndim == 1:
            return float(roc_auc_score(codes == 1, np.concatenate(scores)))
        return float(np.mean([roc_auc_score(codes == c, np.concatenate([p[:, c] for p in scores]))
                              for c in range(n_classes)]))
