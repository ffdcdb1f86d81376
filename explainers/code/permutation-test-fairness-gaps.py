# Generated from explainers/permutation-test-fairness-gaps.md by `fairsite build`; edit the explainer, not this file.
# Run it from the repository root:  python explainers/code/permutation-test-fairness-gaps.py
# %% Measure the gap
"""Permutation test for the gap in selection rates, women vs men (Benefits Denial)."""
import math

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from faircode import fit_predict, load_audit
from faircode.significance import format_p_value, gap_verdict, permutation_test, significance_report

audit = load_audit("benefits-denial")
pred = fit_predict(audit, strategy="S2", model="logistic_regression")

# Test-split rows of each group; whether the model flagged each person (1) or not (0).
is_female = audit.masks["sex"][pred.rows] == 1
is_male = audit.reference_masks["sex"][pred.rows] == 1
flagged_female = pred.y_pred[is_female]
flagged_male = pred.y_pred[is_male]

n_female, n_male = int(is_female.sum()), int(is_male.sum())
rate_female = float(flagged_female.mean())
rate_male = float(flagged_male.mean())
observed_gap = rate_female - rate_male
# Rates as percentages and the gap in percentage points, as the prose gives them.
print(f"women: {n_female:,} rows, selection rate {100 * rate_female:.1f}%")
print(f"men:   {n_male:,} rows, selection rate {100 * rate_male:.1f}%")
print(f"gap (women − men): {100 * observed_gap:+.1f} pp")


# %% Shuffle by hand, and the library's exact test
def shuffle_test(a, b, n_shuffles, rng):
    """Two-sided permutation test by hand: shuffle pooled outcomes, re-split, compare."""
    pooled = np.concatenate([a, b])
    observed = a.mean() - b.mean()
    gaps = np.empty(n_shuffles)
    for i in range(n_shuffles):
        shuffled = rng.permutation(pooled)
        gaps[i] = shuffled[: len(a)].mean() - shuffled[len(a):].mean()
    # Ties count as extreme; the tolerance keeps float rounding from breaking a tie.
    n_extreme = int(np.sum(np.abs(gaps) >= abs(observed) - 1e-12))
    return (n_extreme + 1) / (n_shuffles + 1), n_extreme, gaps


rng = np.random.default_rng(20240607)
n_shuffles = 2000
p_by_hand, n_as_extreme, shuffled_gaps = shuffle_test(
    flagged_female, flagged_male, n_shuffles, rng)
p_library = permutation_test(flagged_female, flagged_male)  # exact for 0/1 outcomes
report = significance_report(flagged_female, flagged_male, random_state=1)
report_gap = report.gap
# A hand-written p at its floor prints "p = 1/(m + 1)": the Monte Carlo p-value itself, written as a fraction.
print(f"by hand: {n_as_extreme} of {n_shuffles:,} shuffles as extreme, "
      f"{format_p_value(p_by_hand, floor=1 / (n_shuffles + 1))}")
print(f"faircode exact: {format_p_value(p_library)}")
# The worked example's interval: Newcombe's hybrid score interval (his method 10), by hand.
z = 1.959963984540054


def wilson(k, n):
    centre = (k / n + z**2 / (2 * n)) / (1 + z**2 / n)
    half = z * np.sqrt(k / n * (1 - k / n) / n + z**2 / (4 * n**2)) / (1 + z**2 / n)
    return centre - half, centre + half


(l1, u1), (l2, u2) = wilson(flagged_female.sum(), n_female), wilson(flagged_male.sum(), n_male)
ci_low = observed_gap - np.sqrt((rate_female - l1) ** 2 + (u2 - rate_male) ** 2)
ci_high = observed_gap + np.sqrt((u1 - rate_female) ** 2 + (rate_male - l2) ** 2)
newcombe_diff = max(abs(ci_low - report.ci_low), abs(ci_high - report.ci_high))
# With none of m shuffles as extreme, the exact p is below -ln(0.05)/m, about 3/m, with 95%
# confidence: the largest p for which seeing no extreme shuffle still has a chance of 1 in 20.
confidence = 0.95
exact_p_upper = -np.log(1 - confidence) / n_shuffles
print(f"faircode report: gap {100 * report.gap:+.1f} pp, {report.confidence_level:.0%} {report.ci_method} interval "
      f"[{100 * report.ci_low:+.1f}, {100 * report.ci_high:+.1f}] pp, {report.format_p_value()}")

# %% The same test on a small audit
# 200 test rows drawn at random.
n_small = 200
sample = rng.choice(len(pred.rows), size=n_small, replace=False)
small_female = pred.y_pred[sample][is_female[sample]]
small_male = pred.y_pred[sample][is_male[sample]]
n_small_female, n_small_male = len(small_female), len(small_male)
gap_small = float(small_female.mean() - small_male.mean())
p_by_hand_small, _, shuffled_gaps_small = shuffle_test(
    small_female, small_male, n_shuffles, rng)
p_library_small = permutation_test(small_female, small_male, method="exact")
p_library_small_mc = permutation_test(
    small_female, small_male, method="monte_carlo",
    n_permutations=n_shuffles, random_state=3)
# A shuffled p is an estimate: its Monte Carlo standard error (at the exact p) sets how many
# digits it can be printed to, and how far from the exact p it may fall by chance.
mc_se_small = math.sqrt(p_library_small * (1 - p_library_small) / n_shuffles)
p_digits = max(0, -math.floor(math.log10(float(f"{mc_se_small:.1g}"))))
hand_vs_exact_se = abs(p_by_hand_small - p_library_small) / mc_se_small
mc_vs_exact_se = abs(p_library_small_mc - p_library_small) / mc_se_small
mc_vs_exact_chance = math.erfc(mc_vs_exact_se / math.sqrt(2))  # two-sided normal tail: how often chance is this far
mc_far_from_exact = mc_vs_exact_se >= 1.5  # far enough that the prose says how rare it is
print(f"200-row sample: gap {100 * gap_small:+.1f} pp; exact {format_p_value(p_library_small)}; "
      f"by hand {p_by_hand_small:.{p_digits}f} ± {mc_se_small:.{p_digits}f} ({hand_vs_exact_se:.1f} s.e. from exact), "
      f"Monte Carlo {p_library_small_mc:.{p_digits}f} ± {mc_se_small:.{p_digits}f} ({mc_vs_exact_se:.1f} s.e.)")
# The three-state verdict at the audit's declared margin: not significant is not a pass.
margin = audit.manifest.practical_margin.points / 100


def summary(v):
    """The numbers of a verdict the prose cites."""
    return {"verdict": v.verdict, "label": v.label, "margin": v.margin_high, "ci90": (v.equivalence.ci_low, v.equivalence.ci_high),
            "power_at_margin": v.power_at_margin, "counts": (v.count_a, v.n_a, v.count_b, v.n_b)}


small_v = summary(gap_verdict(small_female, small_male, margin=margin, names=("women", "men"),
                              outcome="flagged and turned away"))
print(f"its verdict at ±{100 * margin:g} pp: {small_v['label']}")

# %% Figure 1: the observed gaps among the shuffled ones
fig, axes = plt.subplots(1, 2, figsize=(9, 3.4))
panels = [
    (axes[0], shuffled_gaps, observed_gap, f"Full test split ({n_female + n_male:,} rows)"),
    (axes[1], shuffled_gaps_small, gap_small, f"Random sample ({n_small} rows)"),
]
for ax, gaps, observed, title in panels:
    ax.hist(gaps, bins=40, color="#7986cb", edgecolor="white")
    ax.axvline(observed, color="#d84315", linewidth=2,
               label=f"observed gap {100 * observed:+.1f} pp")
    ax.axvline(-observed, color="#d84315", linewidth=1, linestyle="--",
               label="as far on the other side")
    ax.set_xlim(min(gaps.min(), observed) - 0.02, max(gaps.max(), -observed) + 0.02)
    ax.set_title(title)
    ax.xaxis.set_major_formatter(lambda v, _: f"{100 * v:+.0f}")  # percentage points, as the prose
    ax.set_xlabel("shuffled gap, women − men (pp)")
    ax.legend(loc="upper left")
axes[0].set_ylabel("shuffles")
fig.tight_layout()

# %% How often would a smaller audit find it?
# How often does a gap like this reach p < alpha on an audit of 200 or 1,000 rows?
alpha = 0.05
n_repeats = 500
power = []
for rows in (200, 1000):
    ps, gaps = [], []
    for _ in range(n_repeats):
        s = rng.choice(len(pred.rows), size=rows, replace=False)
        a, b = pred.y_pred[s][is_female[s]], pred.y_pred[s][is_male[s]]
        ps.append(permutation_test(a, b))
        gaps.append(a.mean() - b.mean())
    share = float(np.mean(np.array(ps) < alpha))
    power.append({"rows": rows, "share": share, "median_gap": float(np.median(gaps))})
    print(f"{rows:,} rows: p < {alpha} in {share:.1%} of {n_repeats} subsamples, "
          f"median gap {100 * np.median(gaps):+.1f} pp")
# "A small audit misses it often": in at least one subsample in five at 200 rows (at least
# half: "more often than not").
small_audit_often_misses = power[0]["share"] < 0.8
small_audit_mostly_misses = power[0]["share"] < 0.5


# %% German Credit's verdict (the benchmark note)
# The same model on German Credit, by sex; its counts are the results file's row the note cites.
german = load_audit("german-credit")
german_pred = fit_predict(german, strategy="S2", model="logistic_regression")
german_women = german_pred.y_pred[german.masks["sex"][german_pred.rows] == 1]
german_men = german_pred.y_pred[german.reference_masks["sex"][german_pred.rows] == 1]
german_v = summary(gap_verdict(german_women, german_men, margin=german.manifest.practical_margin.points / 100,
                               names=("women", "men"), outcome="rated a bad credit risk"))
row = pd.read_csv("results/results_fairness.csv").query(
    "audit == 'german-credit' and strategy == 'S2' and model == 'logistic_regression' and attribute == 'sex' "
    "and metric == 'demographic_parity_difference'").iloc[0]
german_matches_results = german_v["counts"] == (round(row.value_disadvantaged * row.n_disadvantaged), int(row.n_disadvantaged),
                                                round(row.value_advantaged * row.n_advantaged), int(row.n_advantaged))
print(f"German Credit: {german_v['counts'][0]}/{german_v['counts'][1]} women, {german_v['counts'][2]}/{german_v['counts'][3]} "
      f"men; at ±{100 * german_v['margin']:g} pp: {german_v['label']} (90% interval "
      f"[{100 * german_v['ci90'][0]:+.1f}, {100 * german_v['ci90'][1]:+.1f}] pp); the results file's row: {german_matches_results}")
