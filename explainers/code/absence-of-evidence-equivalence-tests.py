# Generated from explainers/absence-of-evidence-equivalence-tests.md by `fairsite build`; edit the explainer, not this file.
# Run it from the repository root:  python explainers/code/absence-of-evidence-equivalence-tests.py
# %% German Credit's verdict
"""Absence of evidence: equivalence tests (TOST) and the three-state verdict (German Credit, Benefits Denial)."""
import math

import matplotlib.pyplot as plt
import numpy as np
from scipy.optimize import brentq
from scipy.stats import binom, norm

from faircode import load_audit
from faircode.models import fit_predict, fit_predict_strategies
from faircode.significance import (EXACT_MAX_TABLES, equivalence_test, equivalence_test_from_counts, gap_verdict,
                                   permutation_test_power)

alpha = 0.05  # each one-sided test's level; the interval a TOST reads is 1 - 2 alpha (90%)
german = load_audit("german-credit")
margin = german.manifest.practical_margin.points / 100  # declared in its audit.yaml, in percentage points
band = german.manifest.practical_margin.ratio_band  # the four-fifths band, for a ratio
german_rows_total = len(german.df)
pred = fit_predict(german, strategy="S2", model="logistic_regression")
women = german.masks["sex"][pred.rows] == 1
men = german.reference_masks["sex"][pred.rows] == 1
german_women, german_men = pred.y_pred[women], pred.y_pred[men]  # 1 = rated a bad credit risk
german_verdict = gap_verdict(german_women, german_men, margin=margin, alpha=alpha, names=("women", "men"),
                             outcome="rated a bad credit risk")


def summary(v):
    """The numbers of a verdict the page cites (a GapVerdict is not plain data)."""
    return {"verdict": v.verdict, "label": v.label, "sentence": v.sentence, "estimate": v.estimate,
            "p_value": v.p_value, "eq_p_value": v.equivalence.p_value, "method": v.equivalence.method,
            "ci95": (v.ci_low, v.ci_high), "ci90": (v.equivalence.ci_low, v.equivalence.ci_high),
            "power_at_margin": v.power_at_margin, "n_a": v.n_a, "n_b": v.n_b, "count_a": v.count_a,
            "count_b": v.count_b, "rate_a": v.count_a / v.n_a, "rate_b": v.count_b / v.n_b}


german_v = summary(german_verdict)
print(f"margin: ±{100 * margin:g} percentage points; ratio band {band}")
print(german_verdict)
print(german_verdict.equivalence)

# %% Benefits Denial's verdicts
benefits = load_audit("benefits-denial")
if benefits.manifest.practical_margin.points / 100 != margin:
    raise ValueError("the page reads one margin: the two audits must declare the same")
fits = fit_predict_strategies(benefits, strategies=("S2", "S3"), model="logistic_regression")
b_women = benefits.masks["sex"][fits["S2"].rows] == 1
b_men = benefits.reference_masks["sex"][fits["S2"].rows] == 1
before, after = fits["S2"].y_pred, fits["S3"].y_pred  # 1 = flagged and turned away
eligible = fits["S2"].y_true == 0  # income at most $50K: a flag is a wrongful refusal
flagged = "flagged and turned away"
verdicts = {
    "after": gap_verdict(after[b_women], after[b_men], margin=margin, alpha=alpha, names=("women", "men"),
                         outcome=flagged),
    "before": gap_verdict(before[b_women], before[b_men], margin=margin, alpha=alpha, names=("women", "men"),
                          outcome=flagged),
    "wrongly": gap_verdict(before[b_women & eligible], before[b_men & eligible], margin=margin, alpha=alpha,
                           names=("eligible women", "eligible men"), outcome="turned away"),
}
after_v, before_v, wrongly_v = (summary(verdicts[key]) for key in ("after", "before", "wrongly"))
for key, v in verdicts.items():
    print(f"{key}: {v!r}; {v.confidence_level:.0%} interval [{100 * v.ci_low:+.1f}, {100 * v.ci_high:+.1f}] pp, "
          f"{v.equivalence.confidence_level:.0%} [{100 * v.equivalence.ci_low:+.1f}, {100 * v.equivalence.ci_high:+.1f}] pp")
verdicts["german"] = german_verdict
# The four-fifths band: the ratio of favourable-outcome rates (not being flagged), women over men.
german_ratio = summary(gap_verdict(1 - german_women, 1 - german_men, margin=band, compare="ratio", alpha=alpha,
                                   names=("women", "men"), outcome="rated a good credit risk"))
after_ratio = summary(gap_verdict(1 - after[b_women], 1 - after[b_men], margin=band, compare="ratio", alpha=alpha,
                                  names=("women", "men"), outcome="not flagged"))
# The band in percentage points, from the men's approval rate: how far the women's may lie from it.
band_points = ((band[0] - 1) * german_ratio["rate_b"], (band[1] - 1) * german_ratio["rate_b"])
print(f"ratio of favourable rates: German Credit {german_ratio['estimate']:.3f} ({german_ratio['label']}), "
      f"Benefits Denial after group thresholds {after_ratio['estimate']:.3f} ({after_ratio['label']})")

# %% Figure 1
rows = [("German Credit: rated a bad risk", german_v), ("Benefits Denial, group thresholds: turned away", after_v),
        ("Benefits Denial: turned away", before_v), ("Benefits Denial, eligible people: wrongly turned away", wrongly_v)]
colours = {"gap_shown": "#D55E00", "no_practical_gap_shown": "#009E73", "inconclusive": "#E69F00"}
fig, ax = plt.subplots(figsize=(8, 5.6))
ax.axvspan(-100 * margin, 100 * margin, color="0.85", zorder=0, label=f"margin ±{100 * margin:g} pp")
ax.axvline(0, color="0.45", linewidth=0.8)
left = 100 * min(v["ci95"][0] for _, v in rows) - 1
for y, (label, v) in enumerate(rows):
    colour = colours[v["verdict"]]
    ax.plot([100 * v["ci95"][0], 100 * v["ci95"][1]], [y, y], color=colour, linewidth=1.5,
            label=f"{1 - alpha:.0%} interval" if y == 0 else None)
    ax.plot([100 * v["ci90"][0], 100 * v["ci90"][1]], [y, y], color=colour, linewidth=7, solid_capstyle="butt",
            label=f"{1 - 2 * alpha:.0%} interval" if y == 0 else None)
    ax.plot([100 * v["estimate"]], [y], "o", color="black", markersize=4)
    # Each row's name and verdict above its interval: the intervals keep the figure's whole width.
    ax.text(left, y - 0.22, f"{label}\n{v['label']}", va="bottom", linespacing=1.1)
ax.set_yticks([])
ax.set_ylim(len(rows) - 0.6, -0.85)
ax.set_xlim(left, 100 * max(v["ci95"][1] for _, v in rows) + 1)
ax.set_xlabel("gap, women − men (percentage points)")
fig.legend(loc="lower center", ncol=3, frameon=False)
fig.tight_layout(rect=(0, 0.08, 1, 1))

# %% Check: the TOST by hand
def restricted_rates(x1, n1, x2, n2, d):
    """The two rates that fit the counts best if the gap were exactly d (maximum likelihood under
    p1 - p2 = d): the root of a cubic, in closed form (Farrington and Manning 1990)."""
    theta = n2 / n1
    r1, r2 = x1 / n1, x2 / n2
    a = 1 + theta
    b = -(1 + theta + r1 + theta * r2 + d * (theta + 2))
    c = d * d + d * (2 * r1 + theta + 1) + r1 + theta * r2
    e = -r1 * d * (1 + d)
    v = b**3 / (27 * a**3) - b * c / (6 * a**2) + e / (2 * a)
    u = np.sign(v) * np.sqrt(np.maximum(b**2 / (9 * a**2) - c / (3 * a), 0.0))
    with np.errstate(divide="ignore", invalid="ignore"):
        cosine = np.where(u == 0, 0.0, v / u**3)
    p1 = 2 * u * np.cos((math.pi + np.arccos(np.clip(cosine, -1.0, 1.0))) / 3) - b / (3 * a)
    return p1, p1 - d


def score_z(x1, n1, x2, n2, d):
    """Miettinen and Nurminen's score statistic for "the gap is d": the observed gap minus d over
    its standard error at the restricted rates, with their variance factor N / (N - 1)."""
    p1, p2 = restricted_rates(x1, n1, x2, n2, d)
    total = n1 + n2
    se = np.sqrt((p1 * (1 - p1) / n1 + p2 * (1 - p2) / n2) * total / (total - 1))
    return (x1 / n1 - x2 / n2 - d) / se


def tost_by_hand(x1, n1, x2, n2, delta):
    """"The gap is -delta or less" is rejected when z is large, "+delta or more" when it is small;
    the TOST p-value is the larger of the two one-sided p-values."""
    return np.maximum(norm.sf(score_z(x1, n1, x2, n2, -delta)), norm.cdf(score_z(x1, n1, x2, n2, delta)))


def interval_by_hand(x1, n1, x2, n2, alpha):
    """The 1 - 2 alpha interval: the gaps d that neither one-sided test rejects at alpha."""
    estimate, z = x1 / n1 - x2 / n2, norm.isf(alpha)
    low = brentq(lambda d: score_z(x1, n1, x2, n2, d) - z, -1 + 1e-9, estimate, xtol=1e-14)
    high = brentq(lambda d: score_z(x1, n1, x2, n2, d) + z, estimate, 1 - 1e-9, xtol=1e-14)
    return low, high


def restricted_rates_numerically(x1, n1, x2, n2, d):
    """The same rates found by SciPy: the root of the likelihood's derivative in p2 (p1 = p2 + d)."""
    def slope(p2):
        p1 = p2 + d
        return x1 / p1 - (n1 - x1) / (1 - p1) + x2 / p2 - (n2 - x2) / (1 - p2)
    p2 = brentq(slope, max(0.0, -d) + 1e-12, min(1.0, 1 - d) - 1e-12, xtol=1e-15)
    return p2 + d, p2


by_hand_vs_library, interval_vs_library, closed_form_vs_numerical = 0.0, 0.0, 0.0
for key, v in verdicts.items():
    counts = (v.count_a, v.n_a, v.count_b, v.n_b)
    library = equivalence_test_from_counts(*counts, margin=margin, alpha=alpha, method="score")
    hand = float(tost_by_hand(*counts, margin))
    by_hand_vs_library = max(by_hand_vs_library, abs(hand - library.p_value) / library.p_value)
    low, high = interval_by_hand(*counts, alpha)
    interval_vs_library = max(interval_vs_library, abs(low - library.ci_low), abs(high - library.ci_high))
    for d in (-margin, margin):
        closed = restricted_rates(*counts, d)
        closed_form_vs_numerical = max(closed_form_vs_numerical,
                                       *np.abs(np.subtract(closed, restricted_rates_numerically(*counts, d))))
    print(f"{key}: TOST p by hand {hand:.6g}, faircode (score) {library.p_value:.6g}; "
          f"90% interval by hand [{100 * low:+.2f}, {100 * high:+.2f}] pp")
n_compared = len(verdicts)
# faircode's test is exact while (n_a + 1)(n_b + 1) tables are at most EXACT_MAX_TABLES: about this many rows each.
exact_up_to = math.isqrt(EXACT_MAX_TABLES) - 1
german_score_p = equivalence_test(german_women, german_men, margin=margin, alpha=alpha, method="score").p_value
# The TOST rejects exactly when its 1 - 2 alpha interval lies inside the margin.
tost_reads_interval = all(v.equivalence.equivalent == (-margin < v.equivalence.ci_low and v.equivalence.ci_high < margin)
                          for v in verdicts.values())
print(f"largest differences: p-value (relative) {by_hand_vs_library:.1e}, interval {interval_vs_library:.1e}, "
      f"closed form vs SciPy {closed_form_vs_numerical:.1e}")

# %% Power, by enumeration
def tost_power(n1, n2, rates1, rate2, delta, alpha, width=9):
    """The chance that the score TOST shows equivalence, exactly, for group 1's true rate at each
    of `rates1`: each pair of counts' binomial probability times whether the test rejects, summed.
    Counts beyond `width` standard deviations of every expected count are left out; the largest
    probability they carry is returned too."""
    def support(n, rates):
        sd = max(math.sqrt(n * r * (1 - r)) for r in rates)
        low = max(0, math.floor(n * min(rates) - width * sd))
        return np.arange(low, min(n, math.ceil(n * max(rates) + width * sd)) + 1)
    x1, x2 = support(n1, rates1), support(n2, [rate2])
    shows = tost_by_hand(x1[:, None], n1, x2[None, :], n2, delta) < alpha  # (counts of group 1, of group 2)
    f2 = binom.pmf(x2, n2, rate2)
    powers, lost = [], 0.0
    for rate1 in rates1:
        f1 = binom.pmf(x1, n1, rate1)
        powers.append(float(f1 @ shows @ f2))
        lost = max(lost, float(1 - f1.sum() * f2.sum()))
    return powers, lost


share = german_v["n_a"] / (german_v["n_a"] + german_v["n_b"])  # German Credit's share of women
rate = german_v["rate_b"]  # the men's rate; with no true gap, the women's too
sizes = [german_v["n_a"] + german_v["n_b"], 500, 1000, 1500, 2000, 2500, 3000, 4000, 5000, 7000, 10000]
power, left_out = [], 0.0
for rows in sizes:
    n1 = round(share * rows)
    (at_zero, at_half), lost = tost_power(n1, rows - n1, [rate, rate + margin / 2], rate, margin, alpha)
    usual = permutation_test_power(rate + margin, rate, n1, rows - n1, alpha=alpha)  # exact, faircode
    left_out = max(left_out, lost)
    power.append({"rows": rows, "no_gap": at_zero, "half_margin": at_half, "usual_at_margin": usual})
    print(f"{rows:>6,} rows: shows equivalence {at_zero:6.1%} (no true gap), {at_half:6.1%} (a true gap of "
          f"{100 * margin / 2:.1f} pp); the exact test finds a true gap of {100 * margin:.0f} pp {usual:6.1%}")
power_rises = all(b["no_gap"] >= a["no_gap"] for a, b in zip(power, power[1:]))
target = 0.8


def rows_for(target, low, high, step=25):
    """The smallest audit, to `step` rows, whose power to show equivalence with no true gap
    reaches `target`, by bisection between `low` (below it) and `high` (at or above it)."""
    while high - low > step:
        middle = (low + high) // 2
        n1 = round(share * middle)
        if tost_power(n1, middle - n1, [rate], rate, margin, alpha)[0][0] >= target:
            high = middle
        else:
            low = middle
    return high


below = max(p["rows"] for p in power if p["no_gap"] < target)
rows_needed = rows_for(target, below, min(p["rows"] for p in power if p["rows"] > below and p["no_gap"] >= target))
n1_needed = round(share * rows_needed)
(power_at_needed, half_at_needed), _ = tost_power(n1_needed, rows_needed - n1_needed, [rate, rate + margin / 2], rate,
                                                  margin, alpha)
usual_at_needed = permutation_test_power(rate + margin, rate, n1_needed, rows_needed - n1_needed, alpha=alpha)
print(f"{target:.0%} power to show equivalence with no true gap: about {rows_needed:,} rows (exact power there "
      f"{power_at_needed:.1%}; with a true gap of half the margin {half_at_needed:.1%}); the exact test's power "
      f"at the margin there {usual_at_needed:.1%}; probability left out of any sum {left_out:.0e}")

# %% Figure 2
fig, ax = plt.subplots(figsize=(8, 4.6))
grid = [p["rows"] for p in power]
ax.plot(grid, [p["no_gap"] for p in power], "o-", color="#009E73", label="shows equivalence, no true gap")
ax.plot(grid, [p["half_margin"] for p in power], "s--", color="#E69F00",
        label=f"shows equivalence, true gap {100 * margin / 2:g} pp")
ax.plot(grid, [p["usual_at_margin"] for p in power], "^:", color="#D55E00",
        label=f"exact test finds a true gap of {100 * margin:g} pp")
ax.axhline(target, color="0.5", linestyle="-.", linewidth=1)
ax.axvline(rows_needed, color="0.3", linewidth=1)
ax.text(rows_needed * 1.05, 0.03, f"{rows_needed:,} rows")
ax.axvline(grid[0], color="0.3", linewidth=1, linestyle=":")
ax.text(grid[0] * 1.05, 0.9, "German Credit's\ntest split")
ax.set_xscale("log")
ax.xaxis.set_major_formatter(lambda v, _: f"{v:,.0f}")
ax.set_xlim(grid[0] * 0.9, grid[-1] * 1.1)
ax.set_ylim(0, 1.02)
ax.yaxis.set_major_formatter(lambda v, _: f"{v:.0%}")
ax.set_xlabel(f"rows in the audit ({share:.0%} women; log scale)")
ax.set_ylabel("power")
fig.legend(loc="lower center", ncol=2, frameon=False)
fig.tight_layout(rect=(0, 0.14, 1, 1))

# %% Check: every table
# At German Credit's group sizes, every possible pair of counts, by hand and by faircode's score test.
n_a, n_b = german_v["n_a"], german_v["n_b"]
hand_region = tost_by_hand(np.arange(n_a + 1)[:, None], n_a, np.arange(n_b + 1)[None, :], n_b, margin) < alpha
library_region = np.array([[equivalence_test_from_counts(i, n_a, j, n_b, margin=margin, alpha=alpha, method="score",
                                                         interval=False).equivalent for j in range(n_b + 1)]
                           for i in range(n_a + 1)])
n_region_tables = int(hand_region.size)
region_disagreements = int(np.sum(hand_region != library_region))
print(f"{n_region_tables:,} tables: equivalent by hand {int(hand_region.sum())}, by faircode {int(library_region.sum())}; "
      f"{region_disagreements} disagreements")
