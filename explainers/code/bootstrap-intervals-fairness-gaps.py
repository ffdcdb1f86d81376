# Generated from explainers/bootstrap-intervals-fairness-gaps.md by `fairsite build`; edit the explainer, not this file.
# Run it from the repository root:  python explainers/code/bootstrap-intervals-fairness-gaps.py
# %% The full test split
"""Bootstrap intervals for the gap in selection rates between women and men (Benefits Denial)."""
import matplotlib.pyplot as plt
import numpy as np
import scipy.stats

from faircode import fit_predict, load_audit
from faircode.significance import binary_bootstrap_ci, bootstrap_ci, proportion_difference_ci

audit = load_audit("benefits-denial")
pred = fit_predict(audit, strategy="S2", model="logistic_regression")

# Test-split rows of each group; 1 = the model flagged the person (turned away), 0 = not.
is_female = audit.masks["sex"][pred.rows] == 1
is_male = audit.reference_masks["sex"][pred.rows] == 1
flagged = pred.y_pred.astype(float)
full_female, full_male = flagged[is_female], flagged[is_male]
n_female, n_male = len(full_female), len(full_male)
n_full = n_female + n_male
rate_female, rate_male = float(full_female.mean()), float(full_male.mean())
gap_full = rate_female - rate_male

n_resamples = 9999
level = 0.95  # the confidence level of every interval here
tail = (1 - level) / 2
ci_full = tuple(bootstrap_ci(full_female, full_male, n_resamples=n_resamples,
                             method="percentile", confidence_level=level, random_state=1))
ci_full_bca = tuple(bootstrap_ci(full_female, full_male, n_resamples=n_resamples,
                                 method="bca", confidence_level=level, random_state=1))
width_full = ci_full[1] - ci_full[0]


def pp(interval, digits=1):
    """An interval of gaps in percentage points, as the prose gives it."""
    return f"[{100 * interval[0]:+.{digits}f}, {100 * interval[1]:+.{digits}f}] pp"


print(f"full test split: {n_female:,} women, {n_male:,} men; selection rates "
      f"{100 * rate_female:.1f}% and {100 * rate_male:.1f}%, gap {100 * gap_full:+.1f} pp")
print(f"  {level:.0%} percentile {pp(ci_full)}, BCa {pp(ci_full_bca)}")

# %% A small audit
# A small audit: 200 test rows drawn at random.
rng = np.random.default_rng(20240611)
n_small = 200
sample = rng.choice(len(pred.rows), size=n_small, replace=False)
small_female = flagged[sample][is_female[sample]]
small_male = flagged[sample][is_male[sample]]
n_small_female, n_small_male = len(small_female), len(small_male)
gap_small = float(small_female.mean() - small_male.mean())
ci_small = tuple(bootstrap_ci(small_female, small_male, n_resamples=n_resamples,
                              method="percentile", confidence_level=level, random_state=2))
ci_small_bca = tuple(bootstrap_ci(small_female, small_male, n_resamples=n_resamples,
                                  method="bca", confidence_level=level, random_state=2))
width_small = ci_small[1] - ci_small[0]
width_ratio = width_small / width_full
sqrt_size_ratio = float(np.sqrt(n_full / n_small))  # what the square-root law predicts
print(f"200-row sample: {n_small_female} women, {n_small_male} men, gap {100 * gap_small:+.1f} pp")
print(f"  percentile {pp(ci_small)}, BCa {pp(ci_small_bca)}; {width_ratio:.1f} times wider "
      f"(square-root law: {sqrt_size_ratio:.1f})")


# %% Checked against a hand-written bootstrap and SciPy
def percentile_bootstrap(a, b, n_boot, rng, level):
    """Percentile bootstrap by hand: resample each group's rows with replacement, take quantiles."""
    gaps = np.empty(n_boot)
    for i in range(n_boot):
        gaps[i] = rng.choice(a, size=len(a)).mean() - rng.choice(b, size=len(b)).mean()
    cut = (1 - level) / 2
    low, high = np.quantile(gaps, [cut, 1 - cut])
    return (float(low), float(high)), gaps


def levels(value, gaps):
    """Share of resampled gaps strictly below `value`, and at or below it (0/1 data makes ties)."""
    return float(np.mean(gaps < value)), float(np.mean(gaps <= value))


# Where do faircode's endpoints fall in a hand-written bootstrap distribution? At about 2.5%
# and 97.5%, if the two compute the same interval.
n_hand = 10000
hand_small, hand_gaps_small = percentile_bootstrap(small_female, small_male, n_hand, rng, level)
# The full split the same way, in one line: resampling a group's 0/1 rows with replacement draws
# its number of flagged people from a binomial distribution (n rows, the group's rate).
hand_gaps_full = (rng.binomial(n_female, rate_female, n_hand) / n_female
                  - rng.binomial(n_male, rate_male, n_hand) / n_male)
hand_full = tuple(float(v) for v in np.quantile(hand_gaps_full, [tail, 1 - tail]))
small_low_levels = levels(ci_small[0], hand_gaps_small)
small_high_levels = levels(ci_small[1], hand_gaps_small)
full_low_levels = levels(ci_full[0], hand_gaps_full)
full_high_levels = levels(ci_full[1], hand_gaps_full)


def shares(pair):
    """A (strictly below, at or below) pair of shares as percentages."""
    return f"{100 * pair[0]:.2f}%–{100 * pair[1]:.2f}%"


print(f"hand-written, 200 rows: {pp(hand_small)}; faircode's ends at "
      f"{shares(small_low_levels)} and {shares(small_high_levels)}")
print(f"hand-written, full split: {pp(hand_full)}; faircode's ends at "
      f"{shares(full_low_levels)} and {shares(full_high_levels)}")

# SciPy's BCa interval on the same sample, against the spread of faircode's BCa over 20 seeds.
scipy_ci = scipy.stats.bootstrap(
    (small_female, small_male), lambda x, y, axis: x.mean(axis) - y.mean(axis), vectorized=True,
    method="BCa", confidence_level=level, n_resamples=n_resamples, rng=np.random.default_rng(3),
).confidence_interval
scipy_bca = (float(scipy_ci.low), float(scipy_ci.high))
n_seeds = 20
seed_runs = np.array([
    bootstrap_ci(small_female, small_male, n_resamples=n_resamples, method="bca",
                 confidence_level=level, random_state=seed)
    for seed in range(100, 100 + n_seeds)
])
bca_seed_mean = tuple(float(v) for v in seed_runs.mean(axis=0))
bca_seed_sd = tuple(float(v) for v in seed_runs.std(axis=0, ddof=1))
print(f"SciPy BCa {pp(scipy_bca, 2)}; faircode BCa over {n_seeds} seeds: "
      f"mean {pp(bca_seed_mean, 2)}, sd ({100 * bca_seed_sd[0]:.2f}, {100 * bca_seed_sd[1]:.2f}) pp")

# %% Figure 1
# Figure 1: the bootstrap distribution of the gap on the full split and on 200 rows.
fig, ax = plt.subplots(figsize=(9, 3.8))
ax.hist(hand_gaps_full, bins=np.arange(-0.16, -0.04, 0.0025), density=True, color="#3949ab",
        alpha=0.8, label=f"full test split ({n_full:,} rows)")
ax.hist(hand_gaps_small, bins=np.arange(-0.3, 0.26, 0.01), density=True, color="#ff8f00",
        alpha=0.6, label=f"random sample ({n_small} rows)")
top = ax.get_ylim()[1]
bars = [(ci_full, "#3949ab", "-"), (ci_full_bca, "#3949ab", ":"),
        (ci_small, "#ff8f00", "-"), (ci_small_bca, "#ff8f00", ":")]
for i, ((low, high), colour, style) in enumerate(bars):
    y = -top * (0.06 + 0.05 * i)
    ax.plot([low, high], [y, y], color=colour, linewidth=3, linestyle=style, solid_capstyle="butt")
ax.set_ylim(-top * 0.3, top)
ax.set_xlim(-0.22, 0.18)
ax.set_yticks([t for t in ax.get_yticks() if 0 <= t <= top])
ax.axvline(0, color="grey", linewidth=0.8)
ax.xaxis.set_major_formatter(lambda v, _: f"{100 * v:+.0f}")  # percentage points, as the prose
ax.set_xlabel("resampled gap in selection rate, women − men (pp)")
ax.set_ylabel("density")
ax.set_title(f"Below: {level:.0%} percentile (solid) and BCa (dotted) intervals")
ax.legend(loc="upper right")
fig.tight_layout()

# %% Coverage by simulation
# Coverage: treat the full test split as the population and draw many audits from it. Drawing
# with replacement makes each row a fresh person from a population exactly like the test split.
population_gap = gap_full
n_audits = 2000
n_boot_audit = 2000  # resamples per simulated audit
coverage = []
for size in (50, n_small, 1000):
    rows = rng.integers(0, len(pred.rows), size=(n_audits, size))  # row i: audit i's people
    n_a, n_b = is_female[rows].sum(axis=1), is_male[rows].sum(axis=1)
    k_a = (flagged[rows] * is_female[rows]).sum(axis=1).astype(int)  # women flagged, per audit
    k_b = (flagged[rows] * is_male[rows]).sum(axis=1).astype(int)
    # All the audits' intervals in one call per method (the same resamples for both methods).
    ends = {method: binary_bootstrap_ci(k_a, n_a, k_b, n_b, n_resamples=n_boot_audit, method=method,
                                        confidence_level=level, random_state=size)
            for method in ("percentile", "bca")}
    hits = {method: float(np.mean((low <= population_gap) & (population_gap <= high)))
            for method, (low, high) in ends.items()}
    low, high = ends["percentile"]
    # An audit in which no woman (or no man) was flagged: that group cannot vary under resampling.
    no_flagged = float(np.mean((k_a == 0) | (k_b == 0)))
    coverage.append({"rows": size, "percentile": hits["percentile"], "bca": hits["bca"],
                     "median_width": float(np.median(high - low)), "degenerate": no_flagged,
                     # women flagged in an audit of this size, on average: what coverage follows
                     "expected_flagged_women": size * float(is_female.mean()) * rate_female})
    if size == n_small:
        first_intervals = list(zip(low[:50], high[:50]))
    print(f"{size:,} rows: coverage percentile {hits['percentile']:.1%}, "
          f"BCa {hits['bca']:.1%}; median width {100 * np.median(high - low):.1f} pp; "
          f"no woman or no man flagged in {no_flagged:.1%} of audits")
coverage_small = coverage[1]
coverage_se = float(np.sqrt(level * (1 - level) / n_audits))  # Monte Carlo error of a coverage
coverage_tiny = coverage[0]
# Which sizes keep the promise within two Monte Carlo standard errors?
kept_sizes = [f"{row['rows']:,}" for row in coverage if row["percentile"] >= level - 2 * coverage_se]
missed_sizes = [f"{row['rows']:,}" for row in coverage if row["percentile"] < level - 2 * coverage_se]

# Coverage tracks the expected number of positives per group more than the number of rows: made-up
# populations with fixed group sizes and true rates. Resampling 0/1 rows is all that matters
# here, so each audit is drawn directly as each group's number of positives.
n_audits_rare = 6000  # a coverage's standard error about 0.3 points
rare = []
for n_a, n_b, rate_a, rate_b in ((20, 200, 0.05, 0.10), (20, 200, 0.50, 0.40),
                                 (200, 2000, 0.05, 0.10)):
    k_a = rng.binomial(n_a, rate_a, size=n_audits_rare)
    k_b = rng.binomial(n_b, rate_b, size=n_audits_rare)
    truth = rate_a - rate_b
    # An audit with no positive in a group is expected here: it is the point.
    low, high = binary_bootstrap_ci(k_a, n_a, k_b, n_b, n_resamples=n_boot_audit, method="percentile",
                                    confidence_level=level, random_state=n_a + n_b)
    covered = float(np.mean((low <= truth) & (truth <= high)))
    # Newcombe's score interval (the results table's) on the same audits: it depends on the counts
    # alone, so one interval per distinct pair of counts, then each audit takes its pair's.
    pairs, which = np.unique(np.column_stack([k_a, k_b]), axis=0, return_inverse=True)
    score = np.array([tuple(proportion_difference_ci(np.r_[np.ones(x), np.zeros(n_a - x)],
                                                     np.r_[np.ones(y), np.zeros(n_b - y)], confidence_level=level))
                      for x, y in pairs])  # (distinct pairs, 2)
    score_low, score_high = score[which.ravel(), 0], score[which.ravel(), 1]
    score_covered = float(np.mean((score_low <= truth) & (truth <= score_high)))
    rare.append({"n_a": n_a, "n_b": n_b, "rate_a": rate_a, "rate_b": rate_b,
                 "expected_positives_a": n_a * rate_a, "coverage": covered, "score_coverage": score_covered})
    print(f"groups of {n_a:,} and {n_b:,} at {rate_a:.0%} and {rate_b:.0%} "
          f"({n_a * rate_a:.0f} positive{'' if round(n_a * rate_a) == 1 else 's'} expected in the smaller): coverage {covered:.1%} (percentile bootstrap), "
          f"{score_covered:.1%} (Newcombe's score interval, same audits)")
rare_se = float(np.sqrt(level * (1 - level) / n_audits_rare))  # a coverage's Monte Carlo error at the promise
score_worst_miss = max(abs(row["score_coverage"] - level) for row in rare)
boot_worst_miss = max(level - row["coverage"] for row in rare)
n_shown = len(first_intervals)
n_shown_missed = sum(not (low <= population_gap <= high) for low, high in first_intervals)

# %% Figure 2
# Figure 2: coverage. Left, the first intervals from 200-row audits; right, coverage by size.
fig, axes = plt.subplots(1, 2, figsize=(9, 4), gridspec_kw={"width_ratios": [3, 2]})
for i, (low, high) in enumerate(first_intervals):
    missed = not (low <= population_gap <= high)
    axes[0].plot([low, high], [i, i], color="#d84315" if missed else "#7986cb",
                 linewidth=2.5 if missed else 1.5)
axes[0].axvline(population_gap, color="black", linewidth=1, label=f"population gap {100 * population_gap:+.1f} pp")
axes[0].xaxis.set_major_formatter(lambda v, _: f"{100 * v:+.0f}")
axes[0].set_xlabel(f"{level:.0%} percentile interval, women − men (pp)")
axes[0].set_ylabel("simulated audit")
axes[0].set_title(f"{n_shown} audits of {n_small} rows; misses in red")
axes[0].legend(loc="lower left")
# Coverage as points with their Monte Carlo error, not bars: the axis starts at 80%, which a bar's
# length would exaggerate; the label says where it starts.
x = np.arange(len(coverage))
axes[1].errorbar(x - 0.1, [row["percentile"] for row in coverage], yerr=coverage_se, fmt="o", color="#3949ab",
                 label="percentile")
axes[1].errorbar(x + 0.1, [row["bca"] for row in coverage], yerr=coverage_se, fmt="s", color="#ef6c00", label="BCa")
axes[1].axhline(level, color="black", linewidth=1, linestyle="--", label=f"{level:.0%} promised")
axes[1].set_xticks(x, [f"{row['rows']:,}" for row in coverage])
axes[1].set_xlabel("rows in the audit")
axes[1].set_xlim(-0.5, len(coverage) - 0.5)
axes[1].set_ylim(0.8, 1.0)
axes[1].set_yticks([0.80, 0.85, 0.90, 0.95, 1.00])
axes[1].yaxis.set_major_formatter(lambda v, _: f"{v:.0%}")
axes[1].set_ylabel(f"intervals covering (axis from 80%)")
axes[1].set_title("Coverage by audit size")
axes[1].legend(loc="lower right")
fig.tight_layout()
