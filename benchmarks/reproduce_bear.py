"""Reproduce Fig. 1 of the BEAR paper: exact support recovery, BEAR beside MISSION.

Aghazadeh et al., "BEAR: Sketching BFGS Algorithm for Ultra-High Dimensional
Feature Selection in Sublinear Memory", section 6 ("Simulations"): a Gaussian
design with n=900 rows and p=1000 features, k=8 planted weights drawn from
[0.8, 1.2], noiseless targets ``y = X @ beta*``, squared loss. The probability
of recovering exactly the planted support is measured

* against the compression factor ``p / (sketch_width * sketch_depth)`` (Fig. 1A,
  with the l2 error of Fig. 1B beside it), sketches holding 10% to 60% of p;
* against the step size ``eta0`` from 1e-7 to 1e-1 with a 150 x 3 sketch,
  compression 2.22 (Fig. 1C).

The paper's text gives only a few numbers for these curves (its figure is not in
the text), so the tables put our numbers beside the paper's textual claims. The
paper repeats each setting 200 times and runs to convergence; to stay within a
few minutes we use fewer seeds and a fixed number of passes (printed).

    python benchmarks/reproduce_bear.py [--quick] [--json PATH]

``--quick`` is a reduced run (a few seeds and settings) for the test suite.
"""
import argparse
import json
import sys
import time
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np
from scipy.stats import fisher_exact

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _provenance import provenance  # noqa: E402

from sklearn_sketch import BearRegressor, MissionRegressor  # noqa: E402

N_SAMPLES, N_FEATURES, N_PLANTED = 900, 1000, 8
DEPTH = 3  # Fig. 1C's 150 x 3 sketch; Fig. 1A does not state its depth
PAPER_REPEATS = 200
PAPER_CF3 = {"BEAR": 0.5, "MISSION": 0.0}  # Sec. 6 text: "given a compression factor of 3"
PAPER_MISSION_PEAK = 1e-4  # Sec. 6 text: "MISSION's accuracy peaks around eta = 1e-4"
FIG1C_WIDTH = 150
EXPECTED_BETA_NORM = np.sqrt(N_PLANTED * (1 + 0.4**2 / 12))  # E||beta*||^2 = k E[U(0.8, 1.2)^2]
DEFAULT_JSON = Path(__file__).resolve().parent / "results" / "reproduce_bear.json"
ALGORITHMS = ("BEAR", "MISSION")


@dataclass(frozen=True)
class Setting:
    """The sizes of a run (seeds, grids, passes)."""

    sketch_fractions: tuple  # sketch cells / p, the paper's 10% to 60%
    step_sizes: tuple
    sweep_seeds: tuple  # Fig. 1C, also the step-size search for Fig. 1A
    curve_seeds: tuple  # Fig. 1A/B, disjoint from the search seeds
    bear_passes: int
    bear_batch: int
    mission_passes: int
    mission_batch: int


FULL = Setting(sketch_fractions=(0.6, 0.45, 1 / 3, 0.2, 0.1),
               step_sizes=(1e-7, 1e-6, 1e-5, 1e-4, 1e-3, 1e-2, 1e-1),
               sweep_seeds=tuple(range(8)), curve_seeds=tuple(range(1000, 1010)),
               bear_passes=40, bear_batch=N_SAMPLES, mission_passes=10, mission_batch=32)
QUICK = Setting(sketch_fractions=(0.45, 0.2), step_sizes=(1e-5, 1e-2, 1e-1),
                sweep_seeds=(0, 1), curve_seeds=(1000, 1001),
                bear_passes=20, bear_batch=N_SAMPLES, mission_passes=5, mission_batch=32)


def planted_problem(seed):
    """Gaussian X, a k-sparse beta* with weights in [0.8, 1.2], noiseless y = X beta*."""
    rng = np.random.RandomState(seed)
    X = rng.normal(size=(N_SAMPLES, N_FEATURES))
    support = np.sort(rng.choice(N_FEATURES, N_PLANTED, replace=False))
    beta = np.zeros(N_FEATURES)
    beta[support] = rng.uniform(0.8, 1.2, N_PLANTED)
    return X, X @ beta, beta


def make_estimator(name, width, eta0, seed, setting):
    """BEAR or MISSION on a width x DEPTH sketch; the same hashes (seed) for both."""
    common = dict(n_features_to_select=N_PLANTED, sketch_width=width, sketch_depth=DEPTH,
                  learning_rate="constant", eta0=eta0, fit_intercept=False, random_state=seed)
    if name == "BEAR":
        # The paper's Algorithm 2: training reads the heap's weights, 0 elsewhere.
        return BearRegressor(batch_size=setting.bear_batch, max_iter=setting.bear_passes,
                             predict_with="heap", **common)
    return MissionRegressor(batch_size=setting.mission_batch, max_iter=setting.mission_passes,
                            **common)


def fit_once(name, width, eta0, seed, problem, setting):
    """One fit: (exact support recovered, l2 error of the heap weights, diverged)."""
    X, y, beta = problem
    try:
        estimator = make_estimator(name, width, eta0, seed, setting).fit(X, y)
    except ValueError:  # the library raises when the weights become infinite or NaN
        return False, np.nan, True
    support = np.flatnonzero(beta)
    recovered = np.array_equal(estimator.get_support(indices=True), support)
    error = np.linalg.norm(estimator.coef_.toarray().ravel() - beta)
    return recovered, error, False


def run_cell(name, width, eta0, problems, setting):
    """Success rate, mean l2 error (over fits that did not diverge), divergences."""
    outcomes = [fit_once(name, width, eta0, seed, problem, setting)
                for seed, problem in problems.items()]
    recovered, errors, diverged = (np.array(column) for column in zip(*outcomes))
    finite = errors[~diverged]
    return {"successes": int(recovered.sum()), "runs": len(outcomes),
            "rate": float(recovered.mean()),
            "l2_error": float(finite.mean()) if finite.size else None,
            "diverged": int(diverged.sum())}


def wilson_interval(successes, runs, z=1.96):
    """95% Wilson score interval of a binomial rate."""
    rate = successes / runs
    centre = (rate + z**2 / (2 * runs)) / (1 + z**2 / runs)
    half = z * np.sqrt(rate * (1 - rate) / runs + z**2 / (4 * runs**2)) / (1 + z**2 / runs)
    return max(0.0, centre - half), min(1.0, centre + half)


def width_for(fraction):
    return round(fraction * N_FEATURES / DEPTH)


def compression(width):
    return N_FEATURES / (width * DEPTH)


def step_sweep(setting):
    """Fig. 1C: every step size on the 150 x 3 sketch, for both algorithms."""
    problems = {seed: planted_problem(seed) for seed in setting.sweep_seeds}
    return {eta0: {name: run_cell(name, FIG1C_WIDTH, eta0, problems, setting)
                   for name in ALGORITHMS}
            for eta0 in setting.step_sizes}


def best_step(sweep, name):
    """The step size with most recoveries, ties to the lower l2 error."""
    def key(eta0):
        cell = sweep[eta0][name]
        return cell["successes"], -(cell["l2_error"] if cell["l2_error"] is not None else np.inf)
    return max(sweep, key=key)


def compression_curve(setting, steps):
    """Fig. 1A/B: each algorithm at its searched step; MISSION also at BEAR's step."""
    problems = {seed: planted_problem(seed) for seed in setting.curve_seeds}
    curve = {}
    for fraction in setting.sketch_fractions:
        width = width_for(fraction)
        cells = {name: run_cell(name, width, steps[name], problems, setting)
                 for name in ALGORITHMS}
        # The paper uses "the same ... step sizes" for both algorithms.
        cells["MISSION at BEAR's step"] = run_cell("MISSION", width, steps["BEAR"], problems,
                                                   setting)
        curve[width] = cells
    return curve


def rate_text(cell):
    return f"{cell['rate']:.2f} ({cell['successes']}/{cell['runs']})"


def error_text(cell):
    return "n/a" if cell["l2_error"] is None else f"{cell['l2_error']:.2f}"


def paper_cf_claim(cf):
    if abs(cf - 3) < 0.05:
        return ("BEAR ~0.5, MISSION ~0 ('almost no power'); "
                "BEAR lower l2 error (text)")
    return "BEAR > MISSION in success and l2 error, gap grows with CF (text, no numbers)"


def compression_table(curve, steps):
    rows = []
    for width, cells in curve.items():
        cf = compression(width)
        rows.append([f"{cf:.2f}", f"{width} x {DEPTH}", rate_text(cells["BEAR"]),
                     rate_text(cells["MISSION"]), rate_text(cells["MISSION at BEAR's step"]),
                     error_text(cells["BEAR"]), error_text(cells["MISSION"]),
                     paper_cf_claim(cf)])
    return {"title": (f"Fig. 1A/B: P(exact support) and mean l2 error vs compression factor "
                      f"(BEAR eta0={steps['BEAR']:g}, MISSION eta0={steps['MISSION']:g}, "
                      "searched on the Fig. 1C seeds)"),
            "columns": ["CF = p/(w*d)", "sketch w x d", "BEAR P(success)",
                        "MISSION P(success)", "MISSION at BEAR's eta0", "BEAR l2 err",
                        "MISSION l2 err", "paper (Sec. 6 text)"],
            "rows": rows}


def paper_step_claim(eta0):
    if eta0 == PAPER_MISSION_PEAK:
        return "MISSION peaks here; BEAR fairly agnostic (text)"
    return "MISSION drops sharply away from 1e-4; BEAR fairly agnostic (text)"


def step_table(sweep):
    rows = [[f"{eta0:g}", rate_text(cells["BEAR"]), rate_text(cells["MISSION"]),
             error_text(cells["BEAR"]), error_text(cells["MISSION"]),
             f"{cells['BEAR']['diverged']}/{cells['MISSION']['diverged']}",
             paper_step_claim(eta0)]
            for eta0, cells in sweep.items()]
    return {"title": (f"Fig. 1C: P(exact support) vs step size, sketch {FIG1C_WIDTH} x {DEPTH} "
                      f"(CF {compression(FIG1C_WIDTH):.2f})"),
            "columns": ["eta0", "BEAR P(success)", "MISSION P(success)", "BEAR l2 err",
                        "MISSION l2 err", "diverged B/M", "paper (Sec. 6 text)"],
            "rows": rows}


def setup_table(setting):
    cfs = sorted(compression(width_for(f)) for f in setting.sketch_fractions)
    rows = [
        ["n x p, k", "900 x 1000, 8", f"{N_SAMPLES} x {N_FEATURES}, {N_PLANTED}"],
        ["weights, noise", "U[0.8, 1.2], none", "U[0.8, 1.2], none"],
        ["sketch depth", "3 (Fig. 1C; not stated for 1A)", str(DEPTH)],
        ["compression factors", "sketch = 10%..60% of p (CF 1.67..10)",
         ", ".join(f"{cf:.2f}" for cf in cfs)],
        ["repetitions", f"{PAPER_REPEATS} per setting",
         f"{len(setting.curve_seeds)} per CF, {len(setting.sweep_seeds)} per step size"],
        ["step sizes", "1e-7..1e-1, searched; same for both",
         ", ".join(f"{s:g}" for s in setting.step_sizes)
         + "; searched per algorithm (MISSION also at BEAR's)"],
        ["gradient", "sum over the minibatch", "mean over the minibatch; loss (y - xw)^2 / 2"],
        ["batch, stopping", "not stated; until ||grad|| < 1e-7",
         f"BEAR {setting.bear_batch} x {setting.bear_passes} passes, MISSION "
         f"{setting.mission_batch} x {setting.mission_passes} passes (fixed, no tolerance)"],
        ["Newton's-method curve", "shown", "not run (no such estimator in the library)"],
        ["paper's numbers", "Fig. 1 (plot)", "only what the Sec. 6 text states: the figure is "
         "not in the text, so no values are read off it"],
    ]
    return {"title": ("Setup: the paper's beside ours (ours has fewer repetitions, a coarser "
                      "step grid and a fixed number of passes, to run in minutes)"),
            "columns": ["quantity", "paper", "ours"], "rows": rows}


def fisher_p(first, second):
    """Two-sided Fisher exact p-value that two success counts differ."""
    table = [[first["successes"], first["runs"] - first["successes"]],
             [second["successes"], second["runs"] - second["successes"]]]
    return float(fisher_exact(table).pvalue)


def compare_compression(curve):
    """Agreements and disagreements with the Fig. 1A/B text."""
    agreements, disagreements = [], []
    cfs = {width: compression(width) for width in curve}
    gaps = {w: c["BEAR"]["rate"] - c["MISSION"]["rate"] for w, c in curve.items()}
    runs = next(iter(curve.values()))["BEAR"]["runs"]
    gap_text = ", ".join(f"CF {cfs[w]:.2f}: {curve[w]['BEAR']['successes']} vs "
                         f"{curve[w]['MISSION']['successes']}" for w in curve)
    if all(g >= 0 for g in gaps.values()) and any(g > 0 for g in gaps.values()):
        agreements.append(f"Fig. 1A: BEAR recovers the support at least as often as MISSION at "
                          f"every compression factor and more often at some (successes of "
                          f"{runs}, BEAR vs MISSION: {gap_text}).")
    else:
        worse = [f"CF {cfs[w]:.2f}" for w, g in gaps.items() if g < 0]
        disagreements.append(
            f"Fig. 1A: the paper says BEAR outperforms MISSION; ours has MISSION ahead at "
            f"{', '.join(worse) or 'no CF but never behind'} ({gap_text}). Why (not isolated): "
            f"{runs} runs per CF make the rates coarse, and each algorithm gets its own "
            "searched step size, where the paper gives both the same one.")
    widest = max(curve, key=lambda w: (gaps[w], cfs[w]))
    lowest = min(curve, key=cfs.get)
    if gaps[widest] > gaps[lowest]:
        agreements.append(f"Fig. 1A: the gap grows with compression, as the paper says: "
                          f"BEAR - MISSION success rate is {gaps[lowest]:+.2f} at CF "
                          f"{cfs[lowest]:.2f} and largest ({gaps[widest]:+.2f}) at CF "
                          f"{cfs[widest]:.2f}.")
    cells = curve[widest]
    p_value = fisher_p(cells["BEAR"], cells["MISSION"])
    same = [curve[w]["MISSION at BEAR's step"]["successes"] for w in curve]
    if p_value > 0.05:
        disagreements.append(
            f"Fig. 1A: the paper says BEAR 'significantly' outperforms MISSION; ours does not "
            f"show it: even the largest gap (CF {cfs[widest]:.2f}: {rate_text(cells['BEAR'])} vs "
            f"{rate_text(cells['MISSION'])}) has a two-sided Fisher exact p = {p_value:.2f}. "
            f"Why: {runs} runs per CF instead of the paper's {PAPER_REPEATS} (run-time budget), "
            f"and our MISSION gets its own searched step size; at BEAR's step (the paper shares "
            f"step sizes) MISSION recovers at most {max(same)}/{runs} at any CF.")
    errors = {w: (c["BEAR"]["l2_error"], c["MISSION"]["l2_error"]) for w, c in curve.items()}
    both = {w: be for w, be in errors.items() if None not in be}
    lower = [w for w, (b, m) in both.items() if b < m]
    error_text_ = ", ".join(f"CF {cfs[w]:.2f}: {b:.2f} vs {m:.2f}" for w, (b, m) in both.items())
    if both and len(lower) == len(errors):
        agreements.append(f"Fig. 1B: BEAR's mean l2 error ||beta_t - beta*|| is below "
                          f"MISSION's at every compression factor ({error_text_}).")
    else:
        disagreements.append(
            f"Fig. 1B: the paper says BEAR has the lower l2 error; ours is lower at "
            f"{len(lower)} of {len(errors)} compression factors ({error_text_}). Why (not "
            "isolated): both stop after a fixed number of passes, not at convergence, so the "
            "l2 error also measures how far each has got.")
    cf3 = [w for w in curve if abs(cfs[w] - 3) < 0.05]
    if cf3:
        compare_cf3(curve, cf3[0], agreements, disagreements)
    return agreements, disagreements


def compare_cf3(curve, width, agreements, disagreements):
    """The one number the text gives: CF 3, BEAR ~0.5, MISSION ~0."""
    cells, cf = curve[width], compression(width)
    for name in ALGORITHMS:
        cell = cells[name]
        low, high = wilson_interval(cell["successes"], cell["runs"])
        paper = PAPER_CF3[name]
        consistent = low <= paper + 0.1 and paper <= high  # "almost no power": up to ~0.1
        statement = (f"Fig. 1A at CF {cf:.2f}: {name} recovers the support in "
                     f"{cell['successes']}/{cell['runs']} runs (95% interval {low:.2f}-{high:.2f}); "
                     f"the paper's text says ~{paper:g}")
        if consistent:
            agreements.append(statement + ": consistent.")
        elif name == "MISSION":
            disagreements.append(statement + " ('almost no power'). " + shared_step_reason(curve))
        else:
            disagreements.append(
                statement + ". Why (not isolated here): our BEAR forms its curvature pair with "
                "the gradient at w + s, not at the re-read (heap-masked) weights of the paper's "
                "Algorithm 2; the library's BearRegressor Notes report 7/8 against at most 2/8 "
                "for the re-read pairs at CF 3 on this simulation.")


def shared_step_reason(curve):
    """Why MISSION does better than the paper says, with the shared-step evidence."""
    cf3 = min(curve, key=lambda w: abs(compression(w) - 3))
    lowest = max(curve)
    same, same_low = curve[cf3]["MISSION at BEAR's step"], curve[lowest]["MISSION at BEAR's step"]
    reason = ("Why: our MISSION gets its own searched step size (and a batch of 32), while the "
              "paper uses the same step sizes for BEAR and MISSION; at BEAR's step MISSION "
              f"recovers {rate_text(same)} at CF {compression(cf3):.2f}")
    if same["rate"] > 0.1:
        return reason + ", so the shared step does not explain all of it."
    reason += ", as in the paper"
    if same_low["rate"] < 0.5:
        return reason + (f"; but at that step MISSION also fails at CF "
                         f"{compression(lowest):.2f} ({rate_text(same_low)}), while the paper's "
                         "gap to BEAR shrinks at low compression, and the paper does not say "
                         "which step it shared: the explanation is partial.")
    return reason + "."


def span(values):
    """'a-b' for a range of errors, 'a' when they all print the same."""
    low, high = f"{min(values):.2f}", f"{max(values):.2f}"
    return low if low == high else f"{low}-{high}"


def compare_steps(sweep, setting):
    """Agreements and disagreements with the Fig. 1C text."""
    agreements, disagreements = [], []
    rates = {name: np.array([sweep[eta0][name]["rate"] for eta0 in sweep]) for name in ALGORITHMS}
    steps = np.array(list(sweep))
    listing = {name: ", ".join(f"{eta0:g}: {sweep[eta0][name]['successes']}"
                               f"/{sweep[eta0][name]['runs']}" for eta0 in sweep)
               for name in ALGORITHMS}
    peak = steps[np.argmax(rates["MISSION"])]
    good = steps[rates["MISSION"] >= 0.5 * rates["MISSION"].max()] if rates["MISSION"].max() else []
    if rates["MISSION"].max() > 0 and len(good) <= 2:
        agreements.append(f"Fig. 1C: MISSION's recovery is peaked in the step size and drops "
                          f"sharply away from its peak (eta0 {listing['MISSION']}).")
    else:
        disagreements.append(f"Fig. 1C: MISSION is not sharply peaked here ({listing['MISSION']}).")
    if abs(np.log10(peak / PAPER_MISSION_PEAK)) > 0.5:
        batch = setting.mission_batch
        near = any(abs(np.log10(peak / (f * batch * PAPER_MISSION_PEAK))) <= 0.5 for f in (1, 2))
        disagreements.append(
            f"Fig. 1C: MISSION peaks at eta0={peak:g}, not ~1e-4. Why: the step sizes are on "
            f"different scales. The paper's gradient is the sum over the minibatch, ours the "
            f"mean over {batch} samples of (y - xw)^2 / 2, so our eta0 is the paper's times "
            f"the batch size (times 2 more if its MSE has no 1/2): our peak is "
            f"{peak / (2 * batch):.1e} to {peak / batch:.1e} in the paper's units"
            + (", within half a decade of its 1e-4" if near else ", still not 1e-4")
            + "; the paper does not state its batch size.")
    spread = rates["BEAR"].max() - rates["BEAR"].min()
    if spread <= 0.25:
        agreements.append(f"Fig. 1C: BEAR's recovery varies little with the step size "
                          f"(eta0 {listing['BEAR']}).")
    else:
        small = steps <= 1e-4
        flat = small.sum() > 1 and np.ptp(rates["BEAR"][small]) == 0
        bear_errors = [e for e in (sweep[eta0]["BEAR"]["l2_error"] for eta0 in steps[small])
                       if e is not None] or [np.nan]
        disagreements.append(
            f"Fig. 1C: BEAR is not agnostic to the step size here (eta0 {listing['BEAR']}). "
            f"Why (likely; convergence at tiny steps is beyond our budget): we stop after "
            f"{setting.bear_passes} passes, the paper at convergence; with eta0 <= 1e-4 the "
            f"weights barely leave 0 (mean l2 error {span(bear_errors)}, about ||beta*|| = "
            f"{EXPECTED_BETA_NORM:.2f}), so the heap "
            "ranks the features by the first quasi-Newton directions, not by converged weights"
            + (" (identical rates for all eta0 <= 1e-4: the L-BFGS direction does not depend "
               "on the step's scale)." if flat else "."))
    totals = {name: sum(sweep[eta0][name]["successes"] for eta0 in sweep) for name in ALGORITHMS}
    working = {name: int((rates[name] > 0).sum()) for name in ALGORITHMS}
    if totals["BEAR"] > totals["MISSION"] and working["BEAR"] > working["MISSION"]:
        agreements.append(
            f"Fig. 1C: BEAR depends less on the step size than MISSION, as the paper says: it "
            f"recovers the support at least once at {working['BEAR']} of {len(steps)} step "
            f"sizes (MISSION at {working['MISSION']}) and in {totals['BEAR']} runs in all (MISSION "
            f"{totals['MISSION']}).")
    return agreements, disagreements


def format_table(table):
    """Aligned text: the title, the header, a rule and the rows."""
    cells = [table["columns"], *table["rows"]]
    widths = [max(len(str(row[i])) for row in cells) for i in range(len(table["columns"]))]
    lines = ["  ".join(str(value).ljust(width) for value, width in zip(row, widths)).rstrip()
             for row in cells]
    lines.insert(1, "  ".join("-" * width for width in widths))
    return "\n".join([table["title"], *lines])


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a reduced run (about 20 s)")
    parser.add_argument("--json", default=str(DEFAULT_JSON), help="where to write the results")
    args = parser.parse_args(argv)
    setting = QUICK if args.quick else FULL
    start = time.perf_counter()

    sweep = step_sweep(setting)
    steps = {name: best_step(sweep, name) for name in ALGORITHMS}
    curve = compression_curve(setting, steps)
    tables = [setup_table(setting), compression_table(curve, steps), step_table(sweep)]
    agreements, disagreements = compare_compression(curve)
    more_agreements, more_disagreements = compare_steps(sweep, setting)
    agreements += more_agreements
    disagreements += more_disagreements
    elapsed = time.perf_counter() - start

    for table in tables:
        print(format_table(table), end="\n\n")
    print("Agreements:", *(f"- {text}" for text in agreements), sep="\n")
    print("\nDisagreements:", *(f"- {text}" for text in disagreements), sep="\n")
    print(f"\n{'quick' if args.quick else 'full'} run: {elapsed:.0f} s")

    command = sys.argv[1:] if argv is None else list(argv)
    result = {"provenance": provenance([str(Path(__file__)), *command]),
              "setting": {**asdict(setting), "quick": args.quick}, "seconds": elapsed,
              "steps": steps, "tables": tables, "agreements": agreements,
              "disagreements": disagreements,
              "raw": {"compression": {str(w): cells for w, cells in curve.items()},
                      "step_sweep": {f"{e:g}": cells for e, cells in sweep.items()}}}
    path = Path(args.json)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(result, indent=2))
    return result


if __name__ == "__main__":
    main()
