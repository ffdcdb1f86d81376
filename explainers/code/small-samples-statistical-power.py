# Generated from explainers/small-samples-statistical-power.md by `fairsite build`; edit the explainer, not this file.
# Run it from the repository root:  python explainers/code/small-samples-statistical-power.py
# %% Settings
"""How many rows does an audit need? Exact power of the exact permutation test."""
import math

import matplotlib.pyplot as plt
from matplotlib.ticker import FuncFormatter, NullFormatter
import numpy as np
from scipy.optimize import brentq
from scipy.stats import binom, hypergeom, norm
from statsmodels.stats.power import NormalIndPower
from statsmodels.stats.proportion import confint_proportions_2indep, power_proportions_2indep, proportion_effectsize

from faircode import fit_predict, load_audit
from faircode.significance import (equivalence_test, format_p_value, gap_verdict, permutation_test,
                                   permutation_test_power, proportion_difference_ci)

alpha = 0.05          # the test's significance level
target_power = 0.8    # the conventional aim: find a real gap four times in five
gaps = (0.05, 0.10)   # true gaps in selection rate to detect: 5 and 10 percentage points
sizes = (100, 200, 300, 500, 700, 1000, 2000, 3000, 5000)  # audit sizes (rows), both groups
max_enumerated = 300   # largest audit whose power is also enumerated by hand (SciPy, slower)
n_sims = 1000         # simulated audits in the Monte Carlo check
rng = np.random.default_rng(20240612)


# %% Power by simulation: the definition
def simulated_power(p_a, p_b, n_a, n_b, n_sims, rng):
    """Share of simulated audits in which faircode's exact test finds the gap (p < alpha)."""
    flagged_a = rng.random((n_sims, n_a)) < p_a   # each row: one simulated audit's group a
    flagged_b = rng.random((n_sims, n_b)) < p_b
    p_values = np.array([permutation_test(flagged_a[i], flagged_b[i]) for i in range(n_sims)])
    return float(np.mean(p_values < alpha))


def exact_power(p_a, p_b, n_a, n_b):
    """The same share with no simulation: faircode sums the probability of every outcome
    the exact test rejects (its docstring gives the method)."""
    return permutation_test_power(p_a, p_b, n_a, n_b, alpha=alpha)


# %% Power by the normal formula, and by enumeration by hand
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
    """Power of the exact test by hand: sum over every possible audit outcome.

    For each total K of flagged people, the test's p-value for "x of them in group a" is the
    hypergeometric probability of an x as far from its expectation; sum the probability of
    every (x, K - x) outcome whose p-value is below alpha. Written with SciPy's distributions,
    independently of faircode.
    """
    n = n_a + n_b
    pmf_a = binom.pmf(np.arange(n_a + 1), n_a, p_a)
    pmf_b = binom.pmf(np.arange(n_b + 1), n_b, p_b)
    # Null distribution of x for every K at once (row K; zero outside x's possible range).
    null_all = hypergeom.pmf(np.arange(n_a + 1)[None, :], n, np.arange(n + 1)[:, None], n_a)
    power = 0.0
    for k in range(n + 1):
        x = np.arange(max(0, k - n_b), min(n_a, k) + 1)
        null = null_all[k, x]
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
audits, curve, outcomes = [], [], {}
for slug in ("german-credit", "benefits-denial"):
    audit = load_audit(slug)
    pred = fit_predict(audit, strategy="S2", model="logistic_regression")
    in_a = audit.masks["sex"][pred.rows] == 1             # women (disadvantaged group)
    in_b = audit.reference_masks["sex"][pred.rows] == 1   # men
    flagged_a, flagged_b = pred.y_pred[in_a], pred.y_pred[in_b]
    outcomes[slug] = flagged_a, flagged_b, audit.manifest.practical_margin.points / 100  # and the declared margin
    share_a = in_a.sum() / (in_a.sum() + in_b.sum())
    comparison_rate = float(flagged_b.mean())                   # the comparison group's (men's) flag rate
    observed_gap = float(flagged_a.mean() - comparison_rate)
    direction = math.copysign(1.0, observed_gap)          # gaps in the observed direction
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
            curve.append({
                "audit": slug, "gap": gap, "rows": rows,
                "exact": exact_power(p_a, comparison_rate, n_a, n_b),
                "closed_form": normal_power(p_a, comparison_rate, n_a, n_b, alpha),
                "statsmodels": float(power_proportions_2indep(
                    p_a - comparison_rate, comparison_rate, n_a, ratio=n_b / n_a, alpha=alpha, return_results=False)),
                # The normal approximation needs enough flagged and unflagged people in each group.
                "min_expected": min(n_a * p_a, n_a * (1 - p_a), n_b * comparison_rate, n_b * (1 - comparison_rate)),
            })
        # Power on the audit's own test split, with its real group sizes.
        key = round(gap * 100)
        info[f"power_test_{key}"] = exact_power(p_a, comparison_rate, info["n_a"], info["n_b"])
        info[f"power_test_closed_{key}"] = normal_power(p_a, comparison_rate, info["n_a"], info["n_b"], alpha)
        # Rows needed for the target power (closed form, continuous in the number of rows).
        needed = brentq(lambda n: normal_power(p_a, comparison_rate, share_a * n, (1 - share_a) * n, alpha)
                        - target_power, 10, 10**7)
        info[f"rows_needed_{key}"] = math.ceil(needed)
        # The exact test's power at that size (the formula runs a little ahead on small audits).
        n_a_needed = int(round(share_a * info[f"rows_needed_{key}"]))
        info[f"power_at_needed_{key}"] = exact_power(p_a, comparison_rate, n_a_needed,
                                                     info[f"rows_needed_{key}"] - n_a_needed)
        # The same question with Cohen's effect size h, as statsmodels' NormalIndPower answers it.
        h = proportion_effectsize(p_a, comparison_rate)
        n_a_h = NormalIndPower().solve_power(effect_size=h, alpha=alpha, power=target_power,
                                             ratio=(1 - share_a) / share_a)
        info[f"rows_needed_h_{key}"] = math.ceil(n_a_h / share_a)
    # The smallest gap the test split can find with the target power: the minimum detectable gap.
    # By the formula first (what a sample-size table gives), then by the exact test: for fixed
    # group sizes its power rises with the gap (the build checks it in the observed direction),
    # so Brent's method finds where it crosses the target, searching between half and twice the
    # formula's answer.
    # In the observed direction, and the other way: a rate's noise depends on the rate, so at the
    # 80% target a gap away from 50% needs to be smaller than one towards it (checked on both splits).
    for sign, name in ((direction, "detectable_gap"), (-direction, "detectable_gap_reverse")):
        widest = (comparison_rate if sign < 0 else 1 - comparison_rate) - 1e-4  # rates stay in [0, 1]
        by_formula = brentq(
            lambda d: normal_power(comparison_rate + sign * d, comparison_rate, info["n_a"], info["n_b"], alpha)
            - target_power, 1e-4, widest)
        info[name + "_formula"] = by_formula
        info[name] = brentq(
            lambda d: exact_power(comparison_rate + sign * d, comparison_rate, info["n_a"], info["n_b"])
            - target_power, by_formula / 2, min(2 * by_formula, widest), xtol=1e-5)
    audits.append(info)
    # Gaps in percentage points and rates in percent, as the prose gives them.
    print(f"{info['name']}: test split {info['n_test']:,} rows ({info['n_a']} women, {info['n_b']} men), "
          f"men flagged {info['comparison_rate']:.1%}; observed gap {100 * observed_gap:+.1f} pp ({format_p_value(info['p_value'])})")
    for gap in gaps:
        key = round(gap * 100)
        print(f"  true gap {100 * gap:.0f} pp: power on the test split {info[f'power_test_{key}']:.2%} exact, "
              f"{info[f'power_test_closed_{key}']:.2%} by the formula; "
              f"rows needed for {target_power:.0%} power: {info[f'rows_needed_{key}']:,} by the formula "
              f"(exact power there {info[f'power_at_needed_{key}']:.1%})")
    print(f"  minimum detectable gap ({target_power:.0%} power): {100 * info['detectable_gap']:.1f} pp exact, "
          f"{100 * info['detectable_gap_formula']:.1f} pp by the formula; the other way "
          f"{100 * info['detectable_gap_reverse']:.1f} pp exact")
for info in audits:
    for gap in gaps:
        points = [r for r in curve if r["audit"] == info["slug"] and r["gap"] == gap]
        print(f"{info['name']}, true gap {100 * gap:.0f} pp, exact power by audit size: "
              + ", ".join(f"{r['rows']:,} rows {r['exact']:.0%}" for r in points))
german, benefits = audits
gap_small, gap_large = gaps
z_critical = float(norm.ppf(1 - alpha / 2))

# %% Build checks: enumeration by hand, one simulation, the formula; false alarms; power by gap
# 1. The hand enumeration at every point of up to max_enumerated rows (German Credit's test
#    split among them: 200 rows, 64 women).
for r in curve:
    if r["rows"] <= max_enumerated:
        info = german if r["audit"] == "german-credit" else benefits
        n_a = int(round(info["share_a"] * r["rows"]))
        p_a = info["comparison_rate"] + math.copysign(r["gap"], info["observed_gap"])
        r["enumerated"] = enumerated_power(p_a, info["comparison_rate"], n_a, r["rows"] - n_a, alpha)
enumerated = [r for r in curve if "enumerated" in r]
n_enumerated = len(enumerated)
worst_enumerated_vs_library = max(abs(r["enumerated"] - r["exact"]) for r in enumerated)
print(f"hand enumeration vs faircode at {n_enumerated} points: largest difference "
      f"{100 * worst_enumerated_vs_library:.1e} pp of power")
# 2. One Monte Carlo check: simulate German Credit's test split with the larger gap.
p_a_large = german["comparison_rate"] + math.copysign(gap_large, german["observed_gap"])
power_sim = simulated_power(p_a_large, german["comparison_rate"], german["n_a"], german["n_b"], n_sims, rng)
share_se = math.sqrt(power_sim * (1 - power_sim) / n_sims)  # the simulated share's own error, as the page's ±
sim_se = math.sqrt(german["power_test_10"] * (1 - german["power_test_10"]) / n_sims)  # at the exact power
sim_errors = abs(power_sim - german["power_test_10"]) / sim_se
sim_chance = float(2 * norm.sf(sim_errors))  # how often chance puts a simulation this far off
print(f"{n_sims:,} simulated audits: {power_sim:.1%} ± {100 * share_se:.1f} found the gap; "
      f"exact {german['power_test_10']:.1%} (standard error at the exact power {100 * sim_se:.1f} pp; "
      f"{sim_errors:.1f} standard errors apart)")
# 3. The formula: statsmodels' implementation, and its distance from the exact power.
min_count = 20  # expected flagged and unflagged people per group for the normal approximation
worst_closed_vs_statsmodels = max(abs(r["closed_form"] - r["statsmodels"]) for r in curve)
approximable = [r for r in curve if r["min_expected"] >= min_count]
n_approximable = len(approximable)
worst_formula_vs_exact = max(abs(r["closed_form"] - r["exact"]) for r in approximable)
print(f"closed form vs statsmodels: largest difference {100 * worst_closed_vs_statsmodels:.1e} pp of power")
print(f"closed form vs exact power ({n_approximable} points with at least {min_count} expected): "
      f"largest difference {100 * worst_formula_vs_exact:.1f} pp of power")
# With no gap at all, how often does the exact test cry wolf? At most alpha (it is exact).
false_alarm_rate = exact_power(german["comparison_rate"], german["comparison_rate"], german["n_a"], german["n_b"])
print(f"no true gap, German Credit's test split: p < {alpha} in {false_alarm_rate:.1%} of audits (exact)")
# 4. The exact power rises with the gap, from none to the minimum detectable gap, on each test
#    split (a grid of gaps): no smaller gap reaches the target power, and smaller gaps are found
#    less often.
power_rises_to_detectable, worst_detectable_vs_target = True, 0.0
for info in audits:
    grid = np.linspace(0, info["detectable_gap"], 5)
    powers = [exact_power(info["comparison_rate"] + math.copysign(d, info["observed_gap"]), info["comparison_rate"],
                          info["n_a"], info["n_b"]) for d in grid]
    power_rises_to_detectable = power_rises_to_detectable and bool(np.all(np.diff(powers) > 0))
    worst_detectable_vs_target = max(worst_detectable_vs_target, abs(powers[-1] - target_power))
    print(f"{info['name']}, exact power at gaps of " + ", ".join(f"{100 * d:.1f}" for d in grid)
          + " pp: " + ", ".join(f"{v:.1%}" for v in powers))

# %% Figure 1: power curves
# Exact power at each size, the hand enumeration, the formula and the one simulation.
fig, axes = plt.subplots(1, 2, figsize=(10, 5.6), sharey=True)
dense = np.geomspace(min(sizes), max(sizes), 200)
for ax, info in zip(axes, audits):
    # Each gap its own colour, marker and dash, so the two stay apart in grey or on a phone.
    for gap, colour, marker, dash in zip(gaps, ("#E69F00", "#0072B2"), ("o", "s"), ("--", "-.")):
        rows = [r for r in curve if r["audit"] == info["slug"] and r["gap"] == gap]
        ax.plot([r["rows"] for r in rows], [r["exact"] for r in rows], marker=marker, linestyle="-", color=colour,
                markersize=5, linewidth=1.5, label=f"{100 * gap:.0f} pp gap: exact test, exact power (faircode)")
        p_a = info["comparison_rate"] + math.copysign(gap, info["observed_gap"])
        share = info["share_a"]
        closed = [normal_power(p_a, info["comparison_rate"], share * n, (1 - share) * n, alpha) for n in dense]
        ax.plot(dense, closed, color=colour, linewidth=1.2, linestyle=dash,
                label=f"{100 * gap:.0f} pp gap: normal approximation")
        by_hand = [r for r in rows if "enumerated" in r]
        ax.plot([r["rows"] for r in by_hand], [r["enumerated"] for r in by_hand], marker, color=colour,
                markersize=9, markerfacecolor="none", label=f"{100 * gap:.0f} pp gap: enumerated by hand (SciPy)")
    ax.axhline(target_power, color="grey", linestyle=":", linewidth=1)
    ax.axvline(info["n_test"], color="black", linewidth=1)
    # Top right of the line, where no curve is yet: low down it sat on the 5 pp gap's markers.
    ax.text(info["n_test"] * 1.08, 1.0, f"test split\n{info['n_test']:,} rows", va="top")
    ax.set_xscale("log")
    ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:,.0f}"))  # 100, 1,000, not 10²
    ax.xaxis.set_minor_formatter(NullFormatter())
    ax.set_xlabel("rows in the audit, women and men (log scale)")
    ax.set_ylim(0, 1.04)  # power from zero: the axis is not truncated
    ax.set_title(f"{info['name']}\n{info['share_a']:.0%} women, men flagged {info['comparison_rate']:.0%}")
    ax.set_xlim(80, 10000)
# The one simulation, with two standard errors, on German Credit's test split.
axes[0].errorbar([german["n_test"]], [power_sim], yerr=2 * sim_se, fmt="D", color="black", markersize=4,
                 capsize=3, label=f"{gap_large * 100:.0f} pp gap: {n_sims:,} simulated audits ± 2 s.e.")
axes[0].set_ylabel(f"power (share of audits with p < {alpha})")
axes[0].yaxis.set_major_formatter(lambda v, _: f"{v:.0%}")  # percent, as the prose
handles, labels = axes[0].get_legend_handles_labels()
fig.legend(handles, labels, loc="lower center", ncol=2, frameon=False)
fig.tight_layout(rect=(0, 0.24, 1, 1))

# %% German Credit's equivalence reading: the table's last two rows, run
# At the gap that would matter (the larger gap, gap_large) and at the margin the audit declares in its
# audit.yaml: the exact test, the equivalence test (TOST) and the three-state verdict, from faircode.
women, men, declared = outcomes["german-credit"]
words = {"names": ("women", "men"), "outcome": "rated a bad credit risk"}
reading = gap_verdict(women, men, margin=gap_large, alpha=alpha, **words)
at_declared = gap_verdict(women, men, margin=declared, alpha=alpha, equivalence_interval=False, **words)
# The same TOST with the normal distribution (the score test), and Newcombe's 90% interval.
score = equivalence_test(women, men, margin=gap_large, alpha=alpha, method="score")
newcombe = proportion_difference_ci(women, men, confidence_level=1 - 2 * alpha)
counts = (int(women.sum()), women.size, int(men.sum()), men.size)
newcombe_sm = confint_proportions_2indep(*counts, method="newcomb", compare="diff", alpha=2 * alpha)
newcombe_vs_statsmodels = float(np.max(np.abs(np.subtract(tuple(newcombe), newcombe_sm))))


def score_z(x1, n1, x2, n2, d):
    """Miettinen and Nurminen's score statistic for "the gap is d", by maximising the likelihood
    under p1 - p2 = d numerically (SciPy), with their variance factor N / (N - 1)."""
    def slope(p2):  # the log-likelihood's derivative in p2, with p1 = p2 + d
        p1 = p2 + d
        return x1 / p1 - (n1 - x1) / (1 - p1) + x2 / p2 - (n2 - x2) / (1 - p2)
    p2 = brentq(slope, max(0.0, -d) + 1e-12, min(1.0, 1 - d) - 1e-12, xtol=1e-15)
    p1 = p2 + d
    se = math.sqrt((p1 * (1 - p1) / n1 + p2 * (1 - p2) / n2) * (n1 + n2) / (n1 + n2 - 1))
    return (x1 / n1 - x2 / n2 - d) / se


# The TOST's p: the larger of "the gap is -delta or less" (rejected when z is large) and "+delta or more".
score_p_by_hand = max(norm.sf(score_z(*counts, -gap_large)), norm.cdf(score_z(*counts, gap_large)))
score_p_vs_hand = abs(score_p_by_hand - score.p_value) / score.p_value
# The exact power of the page's test against a true gap of gap_large the other way from the observed one.
power_other_way_10 = exact_power(german["comparison_rate"] - math.copysign(gap_large, german["observed_gap"]),
                                 german["comparison_rate"], german["n_a"], german["n_b"])
eq = {"verdict": reading.verdict, "label": reading.label, "sentence": reading.sentence, "p_value": reading.p_value,
      "ci95": (reading.ci_low, reading.ci_high), "eq_p_value": reading.equivalence.p_value,
      "equivalent": reading.equivalence.equivalent, "method": reading.equivalence.method,
      "ci90": (reading.equivalence.ci_low, reading.equivalence.ci_high), "eq_p_score": score.p_value,
      "ci90_score": (score.ci_low, score.ci_high), "ci90_newcombe": tuple(newcombe),
      "power_at_margin": reading.power_at_margin, "declared": declared, "declared_verdict": at_declared.verdict,
      "declared_label": at_declared.label}
print(f"at ±{100 * gap_large:g} pp: {reading!r}")
print(reading.sentence)
for name, (low, high) in (("exact (faircode's TOST)", eq["ci90"]), ("score", eq["ci90_score"]),
                          ("Newcombe", eq["ci90_newcombe"])):
    print(f"  {1 - 2 * alpha:.0%} interval, {name}: [{100 * low:+.2f}, {100 * high:+.2f}] pp")
print(f"  score TOST {format_p_value(score.p_value)} (by hand: relative difference {score_p_vs_hand:.1e}); "
      f"Newcombe vs statsmodels {newcombe_vs_statsmodels:.1e}")
print(f"at the declared ±{100 * declared:g} pp: {at_declared!r}")
