# Generated from explainers/small-samples-statistical-power.md by `fairsite build`; edit the explainer, not this file.
# Run it from the repository root:  python explainers/code/small-samples-statistical-power.py
# %% Settings
"""How many rows does an audit need? Power of the exact permutation test, by simulation."""
import math

import matplotlib.pyplot as plt
from matplotlib.ticker import FuncFormatter, NullFormatter
import numpy as np
from scipy.optimize import brentq
from scipy.stats import binom, hypergeom, norm
from statsmodels.stats.power import NormalIndPower
from statsmodels.stats.proportion import power_proportions_2indep, proportion_effectsize

from faircode import fit_predict, load_audit
from faircode.significance import permutation_test

alpha = 0.05          # the test's significance level
target_power = 0.8    # the conventional aim: find a real gap four times in five
n_sims = 1000         # simulated audits per point of the power curve
gaps = (0.05, 0.10)   # true gaps in selection rate to detect: 5 and 10 percentage points
sizes = (100, 200, 300, 500, 700, 1000, 2000, 3000, 5000)  # audit sizes (rows), both groups
max_enumerated = 1000  # largest audit whose power is also computed exactly, by enumeration
rng = np.random.default_rng(20240612)


# %% Power by simulation
def simulated_power(p_a, p_b, n_a, n_b, n_sims, rng):
    """Share of simulated audits in which faircode's exact test finds the gap (p < alpha)."""
    flagged_a = rng.random((n_sims, n_a)) < p_a   # each row: one simulated audit's group a
    flagged_b = rng.random((n_sims, n_b)) < p_b
    p_values = np.array([permutation_test(flagged_a[i], flagged_b[i]) for i in range(n_sims)])
    return float(np.mean(p_values < alpha))


# %% Power by the normal formula and by exact enumeration
def normal_power(p_a, p_b, n_a, n_b, alpha):
    """Closed-form power of the two-sided z-test for two proportions (normal approximation).

    Under the null the standard error uses the pooled rate; under the alternative, each
    group's own rate (Fleiss, Levin and Paik, ch. 4).
    """
    pooled = (n_a * p_a + n_b * p_b) / (n_a + n_b)
    se_null = math.sqrt(pooled * (1 - pooled) * (1 / n_a + 1 / n_b))
    se_alt = math.sqrt(p_a * (1 - p_a) / n_a + p_b * (1 - p_b) / n_b)
    z = norm.ppf(1 - alpha / 2)
    d = abs(p_a - p_b)
    return float(norm.cdf((d - z * se_null) / se_alt) + norm.cdf((-d - z * se_null) / se_alt))


def enumerated_power(p_a, p_b, n_a, n_b, alpha):
    """Power of the exact test with no simulation: sum over every possible audit outcome.

    For each total K of flagged people, the test's p-value for "x of them in group a" is the
    hypergeometric probability of an x as far from its expectation; sum the probability of
    every (x, K - x) outcome whose p-value is below alpha. Written with SciPy's distributions,
    independently of faircode.
    """
    n = n_a + n_b
    pmf_a = binom.pmf(np.arange(n_a + 1), n_a, p_a)
    pmf_b = binom.pmf(np.arange(n_b + 1), n_b, p_b)
    power = 0.0
    for k in range(n + 1):
        x = np.arange(max(0, k - n_b), min(n_a, k) + 1)
        null = hypergeom.pmf(x, n, k, n_a)
        distance = np.abs(x * n - k * n_a)        # integers: ties between outcomes are exact
        order = np.argsort(-distance, kind="stable")
        tail = np.cumsum(null[order])              # P(distance >= d), before handling ties
        last_of_tie = np.r_[distance[order][1:] != distance[order][:-1], True]
        # a tied outcome's p-value counts the whole tie: the tail at the tie's last member
        p_sorted = np.minimum.accumulate(np.where(last_of_tie, tail, np.inf)[::-1])[::-1]
        p_values = np.empty_like(p_sorted)
        p_values[order] = p_sorted
        reject = x[p_values < alpha]
        power += float(np.sum(pmf_a[reject] * pmf_b[k - reject]))
    return power


# %% Each audit: power, minimum detectable gap, rows needed
audits, curve = [], []
for slug in ("german-credit", "benefits-denial"):
    audit = load_audit(slug)
    pred = fit_predict(audit, strategy="S2", model="logistic_regression")
    in_a = audit.masks["sex"][pred.rows] == 1             # women (disadvantaged group)
    in_b = audit.reference_masks["sex"][pred.rows] == 1   # men
    flagged_a, flagged_b = pred.y_pred[in_a], pred.y_pred[in_b]
    share_a = in_a.sum() / (in_a.sum() + in_b.sum())
    comparison_rate = float(flagged_b.mean())                   # the comparison group's (men's) flag rate
    observed_gap = float(flagged_a.mean() - comparison_rate)
    direction = math.copysign(1.0, observed_gap)          # simulate gaps in the observed direction
    info = {
        "name": audit.manifest.name, "slug": slug, "rows_total": len(audit.df),
        "n_test": int(in_a.sum() + in_b.sum()), "n_a": int(in_a.sum()), "n_b": int(in_b.sum()),
        "share_a": float(share_a), "comparison_rate": comparison_rate, "observed_gap": observed_gap,
        "p_value": permutation_test(flagged_a, flagged_b),
    }
    for gap in gaps:
        p_a = comparison_rate + direction * gap
        for rows in sizes:
            n_a = int(round(share_a * rows))
            n_b = rows - n_a
            closed = normal_power(p_a, comparison_rate, n_a, n_b, alpha)
            curve.append({
                "audit": slug, "gap": gap, "rows": rows,
                "simulated": simulated_power(p_a, comparison_rate, n_a, n_b, n_sims, rng),
                # Enumeration grows with the square of the rows: only for the smaller audits.
                "enumerated": (enumerated_power(p_a, comparison_rate, n_a, n_b, alpha)
                               if rows <= max_enumerated else -1.0),
                "closed_form": closed,
                "statsmodels": float(power_proportions_2indep(
                    p_a - comparison_rate, comparison_rate, n_a, ratio=n_b / n_a, alpha=alpha, return_results=False)),
                # The normal approximation needs enough flagged and unflagged people in each group.
                "min_expected": min(n_a * p_a, n_a * (1 - p_a), n_b * comparison_rate, n_b * (1 - comparison_rate)),
            })
        # Power on the audit's own test split, by simulation with its real group sizes.
        key = round(gap * 100)
        info[f"power_test_{key}"] = simulated_power(p_a, comparison_rate, info["n_a"], info["n_b"], n_sims, rng)
        info[f"power_test_closed_{key}"] = normal_power(p_a, comparison_rate, info["n_a"], info["n_b"], alpha)
        if info["n_test"] <= max_enumerated:
            info[f"power_test_exact_{key}"] = enumerated_power(p_a, comparison_rate, info["n_a"], info["n_b"], alpha)
        # Rows needed for the target power (closed form, continuous in the number of rows).
        needed = brentq(lambda n: normal_power(p_a, comparison_rate, share_a * n, (1 - share_a) * n, alpha)
                        - target_power, 10, 10**7)
        info[f"rows_needed_{key}"] = math.ceil(needed)
        # The same question with Cohen's effect size h, as statsmodels' NormalIndPower answers it.
        h = proportion_effectsize(p_a, comparison_rate)
        n_a_h = NormalIndPower().solve_power(effect_size=h, alpha=alpha, power=target_power,
                                             ratio=(1 - share_a) / share_a)
        info[f"rows_needed_h_{key}"] = math.ceil(n_a_h / share_a)
    # The smallest gap the test split can find with the target power (closed form).
    info["detectable_gap"] = brentq(
        lambda d: normal_power(comparison_rate + direction * d, comparison_rate, info["n_a"], info["n_b"], alpha)
        - target_power,
        1e-4, (comparison_rate if direction < 0 else 1 - comparison_rate) - 1e-4)
    audits.append(info)
    # Gaps in percentage points and rates in percent, as the prose gives them.
    print(f"{info['name']}: test split {info['n_test']:,} rows ({info['n_a']} women, {info['n_b']} men), "
          f"men flagged {info['comparison_rate']:.1%}; observed gap {100 * observed_gap:+.1f} pp (p = {info['p_value']:.2g})")
    for gap in gaps:
        key = round(gap * 100)
        exact = info.get(f"power_test_exact_{key}")
        print(f"  true gap {100 * gap:.0f} pp: power on the test split {info[f'power_test_{key}']:.1%} simulated"
              + (f", {exact:.1%} enumerated" if exact is not None else "")
              + f", {info[f'power_test_closed_{key}']:.1%} by the formula; "
              f"rows needed for {target_power:.0%} power: {info[f'rows_needed_{key}']:,}")
    print(f"  minimum detectable gap ({target_power:.0%} power): {100 * info['detectable_gap']:.1f} pp")

# %% Build checks: three computations agree; false alarms
for info in audits:
    for gap in gaps:
        points = [r for r in curve if r["audit"] == info["slug"] and r["gap"] == gap]
        print(f"{info['name']}, true gap {100 * gap:.0f} pp, simulated power by audit size: "
              + ", ".join(f"{r['rows']:,} rows {r['simulated']:.0%}" for r in points))
german, benefits = audits
min_count = 20  # expected flagged and unflagged people per group for the normal approximation
gap_small, gap_large = gaps
z_critical = float(norm.ppf(1 - alpha / 2))


def standard_errors(simulated, expected, n):
    """How many binomial standard errors (floored at one simulation) `simulated` is from `expected`."""
    return abs(simulated - expected) / max(math.sqrt(expected * (1 - expected) / n), 1 / n)


# The points where two computations of the same power disagree the most, for the build's checks.
worst_closed_vs_statsmodels = max(abs(r["closed_form"] - r["statsmodels"]) for r in curve)
enumerated_points = [r for r in curve if r["rows"] <= max_enumerated]
worst = max(enumerated_points, key=lambda r: standard_errors(r["simulated"], r["enumerated"], n_sims))
worst_sim, worst_enumerated = worst["simulated"], worst["enumerated"]
approximable = [r for r in curve if r["min_expected"] >= min_count]
worst = max(approximable, key=lambda r: standard_errors(r["simulated"], r["closed_form"], n_sims))
worst_sim_approx, worst_closed = worst["simulated"], worst["closed_form"]
n_approximable = len(approximable)
print(f"closed form vs statsmodels: largest difference {100 * worst_closed_vs_statsmodels:.1e} pp of power")
print(f"simulated vs enumerated, worst point: {worst_sim:.1%} vs {worst_enumerated:.1%}")
print(f"simulated vs closed form ({n_approximable} points): worst {worst_sim_approx:.1%} vs {worst_closed:.1%}")
# With no gap at all, how often does the exact test cry wolf? At most alpha (it is exact).
null_a = rng.random((n_sims, german["n_a"])) < german["comparison_rate"]
null_b = rng.random((n_sims, german["n_b"])) < german["comparison_rate"]
false_alarm_rate = float(np.mean([permutation_test(a, b) < alpha for a, b in zip(null_a, null_b)]))
print(f"no true gap, German Credit's test split: p < {alpha} in {false_alarm_rate:.1%} of audits")

# %% Figure 1: power curves
# Simulated points with two binomial standard errors, the enumeration and the formula.
fig, axes = plt.subplots(1, 2, figsize=(10, 4.6), sharey=True)
dense = np.geomspace(min(sizes), max(sizes), 200)
for ax, info in zip(axes, audits):
    for gap, colour in zip(gaps, ("#ff8f00", "#3949ab")):
        rows = [r for r in curve if r["audit"] == info["slug"] and r["gap"] == gap]
        sim = np.array([r["simulated"] for r in rows])
        err = 2 * np.sqrt(sim * (1 - sim) / n_sims)
        ax.errorbar([r["rows"] for r in rows], sim, yerr=err, fmt="o", color=colour, markersize=4,
                    label=f"{100 * gap:.0f} pp gap: exact test, simulated")
        p_a = info["comparison_rate"] + math.copysign(gap, info["observed_gap"])
        share = info["share_a"]
        closed = [normal_power(p_a, info["comparison_rate"], share * n, (1 - share) * n, alpha) for n in dense]
        ax.plot(dense, closed, color=colour, linewidth=1.2, label=f"{100 * gap:.0f} pp gap: normal approximation")
        exact = [r for r in rows if r["rows"] <= max_enumerated]
        ax.plot([r["rows"] for r in exact], [r["enumerated"] for r in exact], color=colour, linestyle=":",
                linewidth=1.5, label=f"{100 * gap:.0f} pp gap: exact test, enumerated")
    ax.axhline(target_power, color="grey", linestyle="--", linewidth=1)
    ax.axvline(info["n_test"], color="black", linewidth=1)
    ax.text(info["n_test"] * 1.08, 0.03, f"test split\n{info['n_test']:,} rows")
    ax.set_xscale("log")
    ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:,.0f}"))  # 100, 1,000, not 10²
    ax.xaxis.set_minor_formatter(NullFormatter())
    ax.set_xlabel("rows in the audit, women and men (log scale)")
    ax.set_ylim(0, 1.04)  # power from zero: the axis is not truncated
    ax.set_title(f"{info['name']}\n{info['share_a']:.0%} women, men flagged {info['comparison_rate']:.0%}")
    ax.set_xlim(80, 10000)
axes[0].set_ylabel(f"power (share of audits with p < {alpha})")
axes[0].yaxis.set_major_formatter(lambda v, _: f"{v:.0%}")  # percent, as the prose
handles, labels = axes[0].get_legend_handles_labels()
fig.legend(handles, labels, loc="lower center", ncol=3, frameon=False)
fig.tight_layout(rect=(0, 0.14, 1, 1))
