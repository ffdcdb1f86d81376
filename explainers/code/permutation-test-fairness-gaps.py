# Generated from explainers/permutation-test-fairness-gaps.md by `fairsite build`; edit the explainer, not this file.
# Run it from the repository root:  python explainers/code/permutation-test-fairness-gaps.py
# %% Measure the gap
"""Permutation test for the gap in selection rates, women vs men (Benefits Denial)."""
import matplotlib.pyplot as plt
import numpy as np

from faircode import fit_predict, load_audit
from faircode.significance import format_p_value, permutation_test, significance_report

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
print(f"200-row sample: gap {100 * gap_small:+.1f} pp; p by hand {p_by_hand_small:.4f}, "
      f"exact {p_library_small:.4f}, Monte Carlo {p_library_small_mc:.4f}")

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

