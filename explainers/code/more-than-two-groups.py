# Generated from explainers/more-than-two-groups.md by `fairsite build`; edit the explainer, not this file.
# Run it from the repository root:  python explainers/code/more-than-two-groups.py
# %% Every race category: its rate and Wilson interval
"""Every race category of COMPAS: rates, Wilson intervals, the chi-squared, maxT and range tests, Holm."""
import math

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from fairlearn.metrics import MetricFrame, false_positive_rate, selection_rate
from scipy.stats import chi2, chi2_contingency, norm
from statsmodels.stats.multitest import multipletests
from statsmodels.stats.proportion import proportion_confint

from faircode import fit_predict, load_audit
from faircode.group_tests import homogeneity_test
from faircode.groups import compare_groups, group_labels
from faircode.significance import (VERDICTS, adjust_p_values, classify_gap, format_p_value, gap_verdict,
                                   proportion_difference_ci, wilson_interval)

audit = load_audit("recidivism-risk")
pred = fit_predict(audit, strategy="S2", model="logistic_regression")
race = group_labels(audit, "race")          # the manifest's groups: every race category
groups = race.labels[pred.rows]             # one label per test row
min_size = audit.manifest.groups.min_size
n_test, n_categories = len(pred.rows), len(race.groups)
# Relabellings of the Monte Carlo tests: enough that a p-value near 0.001 keeps its first digit
# (standard error about 7e-5); each p is printed with its Monte Carlo standard error.
n_permutations = 199_999
alpha = 0.05


def wilson_by_hand(k, n, level=0.95):
    """Wilson (1927): the rates a score test at this level does not reject."""
    z = norm.ppf(0.5 + level / 2)
    p = k / n
    centre = (p + z**2 / (2 * n)) / (1 + z**2 / n)
    half = z * np.sqrt(p * (1 - p) / n + z**2 / (4 * n**2)) / (1 + z**2 / n)
    return max(0.0, centre - half), min(1.0, centre + half)


flagged, negative = pred.y_pred, pred.y_true == 0
rows, wilson_diff = [], 0.0
for g in race.groups:
    member = groups == g
    n, k = int(member.sum()), int(flagged[member].sum())
    low, high = wilson_by_hand(k, n)
    ref = proportion_confint(k, n, method="wilson")
    wilson_diff = max(wilson_diff, *np.abs(np.subtract((low, high), ref)),
                      *np.abs(np.subtract((low, high), wilson_interval(k, n))))
    fpr_n = int((member & negative).sum())
    fpr = float(flagged[member & negative].mean()) if fpr_n else 0.0
    rows.append({"group": g, "n": n, "rate": k / n, "low": low, "high": high, "fpr": fpr, "fpr_n": fpr_n})
    print(f"{g:16s} n={n:5d} flagged {k / n:6.1%} [{low:.1%}, {high:.1%}]  FPR {fpr:.1%} (n={fpr_n})")
small_rows = [r for r in rows if r["n"] < min_size]
small_intervals_wide = all(r["high"] - r["low"] > 0.5 for r in small_rows)

# Taken at face value: the largest gap over every group, however small.
by_rate = sorted(rows, key=lambda r: r["rate"])
naive_gap = by_rate[-1]["rate"] - by_rate[0]["rate"]
naive_high, naive_low = by_rate[-1]["group"], by_rate[0]["group"]
naive_high_n, naive_low_n = by_rate[-1]["n"], by_rate[0]["n"]
print(f"largest gap, all groups: {100 * naive_gap:+.1f} pp ({naive_high}, n={naive_high_n}, "
      f"against {naive_low}, n={naive_low_n})")


# %% Build checks, by hand: chi-squared, range and maxT
def chi2_by_hand(outcome, labels):
    """Pearson's X^2 for a k x 2 table (each group: flagged, not flagged) and its chi2(k - 1) p."""
    names = sorted(set(labels))
    n = np.array([np.sum(labels == g) for g in names], dtype=float)
    k = np.array([outcome[labels == g].sum() for g in names], dtype=float)
    shared = k.sum() / n.sum()                   # the one rate every group would share
    expected = np.column_stack([n * shared, n * (1 - shared)])
    observed = np.column_stack([k, n - k])
    x2 = float(np.sum((observed - expected) ** 2 / expected))
    return x2, float(chi2.sf(x2, len(names) - 1))


def relabel_by_hand(outcome, labels, n_shuffles, rng):
    """The largest raw gap (range) and the largest studentised pairwise gap (maxT), observed and
    under relabelling, with their (b + 1) / (m + 1) p-values."""
    names = sorted(set(labels))
    codes = np.array([names.index(g) for g in labels])
    sizes = np.bincount(codes)
    shared = outcome.mean()                      # fixed under relabelling, so is the pooled variance
    i, j = np.triu_indices(len(names), 1)
    se = np.sqrt(shared * (1 - shared) * (1 / sizes[i] + 1 / sizes[j]))

    def both(c):
        rates = np.bincount(c, weights=outcome) / sizes
        return rates.max() - rates.min(), np.max(np.abs(rates[i] - rates[j]) / se)

    observed = both(codes)
    null = np.array([both(rng.permutation(codes)) for _ in range(n_shuffles)])
    as_extreme = np.sum(null >= np.array(observed) - 1e-12, axis=0)
    p_range, p_maxt = (as_extreme + 1) / (n_shuffles + 1)
    return {"range": observed[0], "p_range": float(p_range), "p_maxt": float(p_maxt),
            "null": null, "names": names, "sizes": sizes, "pairs": list(zip(i, j)), "se": se}


# %% The three tests
def mc_p(p, m):
    """A Monte Carlo p-value from m relabellings and its standard error, as printed below (none at
    the floor 1 / (m + 1), where no relabelling was as extreme: the p-value is what was counted)."""
    at_floor = p <= 1 / (m + 1) + 1e-15
    return format_p_value(p, floor=1 / (m + 1)) + ("" if at_floor else f" (s.e. {math.sqrt(p * (1 - p) / m):.1g})")


rng = np.random.default_rng(20261130)
n_shuffles = 2000
comparisons, tests, by_hand, max_gap_diffs, chi2_diff = {}, {}, {}, 0.0, 0.0
for metric, fairlearn_metric, rows_used in (("selection_rate", selection_rate, np.ones(n_test, bool)),
                                            ("false_positive_rate", false_positive_rate, negative)):
    c = compare_groups(metric, pred.y_true, pred.y_pred, groups, favourable=audit.manifest.target.favourable,
                       reference=race.reference, order=race.groups, min_size=min_size,
                       n_permutations=n_permutations, random_state=7)
    comparisons[metric] = c
    kept = np.isin(groups, c.compared) & rows_used
    outcome, labels = pred.y_pred[kept].astype(float), np.asarray(groups[kept], dtype=str)
    omnibus, maxt = c.omnibus_test, c.max_t_test  # "is any group treated differently?", and which pairs
    tests[metric] = omnibus, maxt
    # Checks: the chi-squared by hand, against faircode (its chi2 reference distribution) and SciPy.
    x2, p_chi2 = chi2_by_hand(outcome, labels)
    scipy_x2, scipy_p, _, _ = chi2_contingency(pd.crosstab(labels, outcome).to_numpy(), correction=False)
    asymptotic = homogeneity_test(outcome, labels, method="asymptotic")
    chi2_diff = max(chi2_diff, abs(x2 - omnibus.statistic), abs(x2 - scipy_x2),
                    abs(p_chi2 - asymptotic.p_value), abs(p_chi2 - scipy_p))
    by_hand[metric] = relabel_by_hand(outcome, labels, n_shuffles, rng)
    frame = MetricFrame(metrics=fairlearn_metric, y_true=pred.y_true[np.isin(groups, c.compared)],
                        y_pred=pred.y_pred[np.isin(groups, c.compared)],
                        sensitive_features=groups[np.isin(groups, c.compared)])
    max_gap_diffs = max(max_gap_diffs, abs(by_hand[metric]["range"] - frame.difference()),
                        abs(by_hand[metric]["range"] - c.difference))
    # Each Monte Carlo p with its standard error (its second digit may be noise).
    print(f"{metric}: chi-squared {omnibus.statistic:.2f} on {omnibus.dof} dof, {omnibus.format_p_value()} "
          f"({omnibus.method}); maxT {maxt.statistic:.2f}, {mc_p(maxt.p_value, n_permutations)}; "
          f"range {c.high_group} - {c.low_group} {100 * c.difference:+.1f} pp, {mc_p(c.max_gap_test.p_value, n_permutations)}")
    print(f"  by hand, {n_shuffles:,} shuffles: range {mc_p(by_hand[metric]['p_range'], n_shuffles)}, "
          f"maxT {mc_p(by_hand[metric]['p_maxt'], n_shuffles)}")

method_names = {"asymptotic": "p from the chi-squared approximation", "exact": "exact permutation p",
                "monte_carlo": "Monte Carlo permutation p"}
sel, fpr_c = comparisons["selection_rate"], comparisons["false_positive_rate"]
n_compared = len(sel.compared)
sel_gap, sel_high, sel_low = sel.difference, sel.high_group, sel.low_group
fpr_gap, fpr_high, fpr_low = fpr_c.difference, fpr_c.high_group, fpr_c.low_group
p_library_sel, p_library_fpr = sel.max_gap_test.p_value, fpr_c.max_gap_test.p_value
(omnibus_sel, maxt_sel), (omnibus_fpr, maxt_fpr) = tests["selection_rate"], tests["false_positive_rate"]
p_omnibus_sel, p_omnibus_fpr = omnibus_sel.p_value, omnibus_fpr.p_value
x2_sel, x2_fpr = omnibus_sel.statistic, omnibus_fpr.statistic
dof_sel, dof_fpr = omnibus_sel.dof, omnibus_fpr.dof
omnibus_method_sel, omnibus_method_fpr = method_names[omnibus_sel.method], method_names[omnibus_fpr.method]
p_maxt_sel, p_maxt_fpr = maxt_sel.p_value, maxt_fpr.p_value
maxt_sel_at_floor = maxt_sel.is_monte_carlo_minimum
# Monte Carlo standard errors of the relabelling p-values, as the prose prints them.
p_library_sel_se, p_library_fpr_se, p_maxt_sel_se, p_maxt_fpr_se = (
    math.sqrt(q * (1 - q) / n_permutations) for q in (p_library_sel, p_library_fpr, p_maxt_sel, p_maxt_fpr))


def two_digits_hold(p, se):
    """Whether the `pvalue` filter's two significant digits hold: the second at least half the
    standard error (the page's rule for every Monte Carlo number)."""
    return 10.0 ** (math.floor(math.log10(p)) - 1) >= se / 2


# The range test's p on the selection rate has a standard error about 7% of itself: two significant
# digits would claim more than 199,999 relabellings know, so it is printed to the last digit at
# least half its standard error. The others hold two digits (checked).
p_library_sel_digits = max(0, math.floor(-math.log10(p_library_sel_se / 2)))
mc_p_digits_ok = (10.0 ** -p_library_sel_digits >= p_library_sel_se / 2
                  and all(two_digits_hold(q, se) for q, se in ((p_library_fpr, p_library_fpr_se), (p_maxt_fpr, p_maxt_fpr_se)))
                  and (maxt_sel_at_floor or two_digits_hold(p_maxt_sel, p_maxt_sel_se)))
p_by_hand_sel, p_by_hand_fpr = by_hand["selection_rate"]["p_range"], by_hand["false_positive_rate"]["p_range"]
p_maxt_hand_fpr = by_hand["false_positive_rate"]["p_maxt"]
range_misses_fpr = bool(p_omnibus_fpr < alpha and p_maxt_fpr < alpha and p_library_fpr >= alpha)
fpr_sizes = [(g, int(n)) for g, n in zip(omnibus_fpr.groups, omnibus_fpr.sizes)]

# %% Which pairs differ, and by how much; each test's bar
# Every pair of compared groups, each its exact test, Holm-adjusted (checked against statsmodels).
pairs = fpr_c.pairwise
n_pairs = len(pairs)
holm_diff = float(np.max(np.abs(np.array([q.p_value_adjusted for q in pairs])
                                - multipletests([q.p_value for q in pairs], method="holm")[1])))
bw = next(q for q in pairs if {q.group_a, q.group_b} == {"Black", "White"})
fpr_bw_gap = bw.gap if bw.group_a == "Black" else -bw.gap
fpr_bw_p, fpr_bw_holm = bw.p_value, bw.p_value_adjusted
min_other_holm = min(q.p_value_adjusted for q in pairs if q is not bw)
n_pairs_sel = len(sel.pairwise)
# The pair's studentised gap (maxT's standard error, from the pooled rate). maxT's own per-pair
# adjusted p-values are not used: they hold only when no group differs (Petrondas and Gabriel 1983).
fpr_bw_t = next(t for x, y, t, _ in maxt_fpr.pairs_adjusted if {x, y} == {"Black", "White"})
fpr_bw_n = int(sum(n for g, n in zip(maxt_fpr.groups, maxt_fpr.sizes) if g in ("Black", "White")))
fpr_bw_t = abs(fpr_bw_t)
holm_sel_pair = next(q.p_value_adjusted for q in sel.pairwise if {q.group_a, q.group_b} == {sel_high, sel_low})

# Each pair's verdict at the margin the audit declares (three states). A verdict per pair is a
# family of claims, of "differs" and of "no gap of practical size" alike: the equivalence tests'
# p-values are Holm-adjusted over the pairs as the usual tests' are, and the interval a gap shown
# must lie beyond the margin is at the family's level (Bonferroni, 1 - alpha / m: Holm has none).
margin = audit.manifest.practical_margin.points / 100  # in its audit.yaml, with its reason


def pair_verdicts(comparison, rows):
    """The verdict on each pair of `comparison.pairwise` (gap group_a minus group_b), `rows` the
    rows its rate is measured on."""
    pairs, m = comparison.pairwise, len(comparison.pairwise)
    data = [(flagged[(groups == q.group_a) & rows], flagged[(groups == q.group_b) & rows]) for q in pairs]
    alone = [gap_verdict(a, b, margin=margin, alpha=alpha, equivalence_interval=False) for a, b in data]
    eq_holm = adjust_p_values([v.equivalence.p_value for v in alone], method="holm")
    out = []
    for q, (a, b), v, e in zip(pairs, data, alone, eq_holm):
        low, high = proportion_difference_ci(a, b, confidence_level=1 - alpha / m)
        verdict = classify_gap(p_value=q.p_value_adjusted, ci_low=low, ci_high=high, equivalence_p_value=e,
                               margin=(-margin, margin), alpha=alpha)
        out.append({"a": q.group_a, "b": q.group_b, "gap": q.gap, "ci_family": (low, high), "p_holm": q.p_value_adjusted,
                    "eq_p": v.equivalence.p_value, "eq_holm": float(e), "verdict": verdict,
                    "label": VERDICTS[verdict], "p_vs_pairwise": abs(v.p_value - q.p_value) / q.p_value})
    return out


fpr_verdicts = pair_verdicts(fpr_c, negative)
sel_verdicts = pair_verdicts(sel, np.ones(n_test, bool))
family_level = 1 - alpha / n_pairs
bw_v = next(v for v in fpr_verdicts if {v["a"], v["b"]} == {"Black", "White"})
other_fpr_verdicts = [v for v in fpr_verdicts if v is not bw_v]
min_other_eq = min(v["eq_p"] for v in other_fpr_verdicts)
others_inconclusive = all(v["verdict"] == "inconclusive" for v in other_fpr_verdicts)
sel_pair_v = next(v for v in sel_verdicts if {v["a"], v["b"]} == {sel_high, sel_low})
# The prose reads these two intervals as Black minus white and as the higher minus the lower group.
bw_ci = bw_v["ci_family"] if bw_v["a"] == "Black" else tuple(-x for x in reversed(bw_v["ci_family"]))
sel_pair_ci = sel_pair_v["ci_family"] if sel_pair_v["a"] == sel_high else tuple(-x for x in reversed(sel_pair_v["ci_family"]))
verdict_p_vs_pairwise = max(v["p_vs_pairwise"] for v in fpr_verdicts + sel_verdicts)
print(f"verdicts at ±{100 * margin:g} pp ({family_level:.1%} intervals; Holm over the {n_pairs} pairs):")
for rate_name, pair_list in (("false positive rate", fpr_verdicts), ("selection rate", sel_verdicts)):
    for pv in pair_list:
        print(f"  {rate_name}, {pv['a']} - {pv['b']}: {100 * pv['gap']:+.1f} pp [{100 * pv['ci_family'][0]:+.1f}, "
              f"{100 * pv['ci_family'][1]:+.1f}], Holm {format_p_value(pv['p_holm'])}, equivalence "
              f"{format_p_value(pv['eq_p'])} (Holm {format_p_value(pv['eq_holm'])}): {pv['label']}")
table = sel.by_group
vs_reference = [{"group": g, "gap": float(table.at[g, "diff_vs_reference"]),
                 "p_holm": float(table.at[g, "p_value_vs_reference_holm"])}
                for g in sel.compared if g != race.reference]
# The bar each test sets the false positive rate's pairs, from the hand-written relabelling:
# the range test one bar in percentage points, maxT one bar in each pair's standard errors.
h = by_hand["false_positive_rate"]
range_q95_fpr, maxt_q95_fpr = (float(v) for v in np.quantile(h["null"], 0.95, axis=0))
# The Monte Carlo standard error of maxT's 95% quantile: sqrt(0.95 * 0.05 / m) / density there,
# the density estimated from the relabellings around the quantile.
def quantile_se(samples, q=0.95):
    """Monte Carlo standard error of a sample quantile: sqrt(q (1 - q) / m) / density there."""
    near = np.quantile(samples, [q - 0.02, q + 0.02])
    return float(math.sqrt(q * (1 - q) / len(samples)) * (near[1] - near[0]) / 0.04)


def printed(value_pp, se_pp):
    """A Monte Carlo quantile in percentage points and the decimals its standard error supports:
    the last digit printed is at least half the standard error."""
    return value_pp, max(0, math.floor(-math.log10(se_pp / 2)))


maxt_q95_se = quantile_se(h["null"][:, 1])
range_q95_se_pp = 100 * quantile_se(h["null"][:, 0])
range_q95_pp, range_q95_digits = printed(100 * range_q95_fpr, range_q95_se_pp)
pair_names = [(h["names"][i], h["names"][j]) for i, j in h["pairs"]]
pair_sizes = [h["sizes"][i] + h["sizes"][j] for i, j in h["pairs"]]
small_at, big_at = int(np.argmin(pair_sizes)), int(np.argmax(pair_sizes))
small_pair, big_pair = pair_names[small_at], pair_names[big_at]
bar_se_small_pair, bar_se_big_pair = range_q95_fpr / h["se"][small_at], range_q95_fpr / h["se"][big_at]
maxt_bar_bw = maxt_q95_fpr * h["se"][pair_names.index(("Black", "White"))]
bw_clears_maxt_not_range = bool(maxt_bar_bw <= abs(fpr_bw_gap) < range_q95_fpr)
print(f"FPR, Black - White: {100 * fpr_bw_gap:+.1f} pp, t = {fpr_bw_t:.2f}, {format_p_value(fpr_bw_p)} alone; "
      f"Holm-adjusted over {n_pairs} pairs {format_p_value(fpr_bw_holm)}")
print(f"the range test's bar: {100 * range_q95_fpr:.1f} pp = {bar_se_small_pair:.1f} standard errors for "
      f"{' and '.join(small_pair)}, {bar_se_big_pair:.1f} for {' and '.join(big_pair)}; maxT's bar: {maxt_q95_fpr:.2f}")
for row in vs_reference:
    print(f"selection rate, {row['group']} - {race.reference}: {100 * row['gap']:+.1f} pp, "
          f"Holm-adjusted {format_p_value(row['p_holm'])}")

# %% Build checks: the largest gap when no gap is real; the benchmark
# Relabel race at random, keeping the group sizes.
codes = np.array([race.groups.index(g) for g in groups])
sizes = np.bincount(codes, minlength=n_categories)
big = sizes >= min_size
black, white = race.groups.index("Black"), race.groups.index("White")
null = np.empty((n_shuffles, 3))
for i in range(n_shuffles):
    rates = np.bincount(rng.permutation(codes), weights=flagged, minlength=n_categories) / sizes
    null[i] = rates.max() - rates.min(), rates[big].max() - rates[big].min(), abs(rates[black] - rates[white])
null_mean_all, null_mean_compared, null_mean_pair = (float(v) for v in null.mean(axis=0))
null_q95_all, null_q95_compared, null_q95_pair = (float(v) for v in np.quantile(null, 0.95, axis=0))
q95_compared_se_pp, q95_pair_se_pp = 100 * quantile_se(null[:, 1]), 100 * quantile_se(null[:, 2])
q95_compared_pp, q95_compared_digits = printed(100 * null_q95_compared, q95_compared_se_pp)
q95_pair_pp, q95_pair_digits = printed(100 * null_q95_pair, q95_pair_se_pp)
mc_digits_ok = all(10.0 ** -d >= se / 2 for d, se in ((range_q95_digits, range_q95_se_pp),
                   (q95_compared_digits, q95_compared_se_pp), (q95_pair_digits, q95_pair_se_pp)))
null_q95_all_at_max = bool(null_q95_all >= 1 - 1e-9)  # a gap between rates cannot exceed 100 points
print(f"largest gap under relabelling, on average: all groups {100 * null_mean_all:.1f} pp,\n"
      f"  compared groups {100 * null_mean_compared:.1f} pp, one pre-chosen pair {100 * null_mean_pair:.1f} pp")

# The benchmark's row for the same model and strategy.
bench = pd.read_csv("results/results_by_group.csv")
bench_row = bench[(bench["audit"] == "recidivism-risk") & (bench["strategy"] == "S2")
                  & (bench["model"] == "logistic_regression") & (bench["attribute"] == "race")
                  & (bench["metric"] == "selection_rate")]
benchmark_max_gap = float(bench_row["max_gap"].iloc[0])
print(f"benchmark's largest selection rate gap: {100 * benchmark_max_gap:+.1f} pp")

# %% Figures 1 to 3
# Figure 1: every group's selection rate and its Wilson interval.
fig, ax = plt.subplots(figsize=(8, 3.8))
for y, r in enumerate(rows):
    colour = "#0072B2" if r["n"] >= min_size else "#999999"
    # Unclipped, over the axis line: a rate of 0% or 100% sits on the axes' edge, drawn whole.
    ax.plot([r["low"], r["high"]], [y, y], color=colour, lw=2, clip_on=False)
    ax.plot([r["rate"]], [y], "o", color=colour, markerfacecolor=colour if r["n"] >= min_size else "white",
            clip_on=False, zorder=3)
ax.set_yticks(range(len(rows)), [f"{r['group']} (n={r['n']:,})" for r in rows])
ax.invert_yaxis()
ax.set_xlim(0, 1)
ax.xaxis.set_major_formatter(lambda v, _: f"{v:.0%}")  # percent, as the prose
ax.set_xlabel("selection rate, 95% Wilson interval")
ax.set_title(f"Grey, hollow: below the minimum size ({min_size})")
fig.tight_layout()

# Figure 2: the false positive rate's pairs against the bar each test sets.
fig, ax = plt.subplots(figsize=(8, 3.6))
order = np.argsort(pair_sizes)[::-1]           # the best-measured pairs first
observed_rates = {g: float(flagged[(groups == g) & negative].mean()) for g in h["names"]}
for x, at in enumerate(order):
    a, b = pair_names[at]
    ax.bar(x, 100 * maxt_q95_fpr * h["se"][at], color="#9ecae1", width=0.6,
           label="maxT's bar (the pair's standard errors, from the pooled rate)" if x == 0 else None)
    ax.plot(x, 100 * abs(observed_rates[a] - observed_rates[b]), "o", color="#D55E00",
            label="observed gap" if x == 0 else None)
ax.axhline(100 * range_q95_fpr, color="black", linestyle="--", label="the range test's bar (one for all)")
ax.set_xticks(range(len(order)), [f"{pair_names[at][0]}\n{pair_names[at][1]}\n(n={pair_sizes[at]:,})" for at in order])
ax.set_ylabel("false positive rate\ngap (pp)")  # two lines: it fits the axes on a phone too
ax.set_ylim(0, 1.6 * ax.get_ylim()[1])  # headroom: the legend sits above the bars
ax.legend(fontsize=10, loc="upper left", frameon=False)
fig.tight_layout()

# Figure 3: the largest selection rate gap when race is relabelled at random.
fig, ax = plt.subplots(figsize=(8, 3.8))
bins = np.linspace(0, 1, 81)
for column, label, colour in ((0, f"largest gap, all {n_categories} groups", "#999999"),
                              (1, f"largest gap, {n_compared} groups >= {min_size}", "#0072B2"),
                              (2, "|Black - White|, chosen in advance", "#009E73")):
    ax.hist(null[:, column], bins=bins, alpha=0.6, color=colour, label=label)
ax.axvline(sel_gap, color="#D55E00", lw=2, label=f"observed largest gap {100 * sel_gap:+.1f} pp")
ax.xaxis.set_major_formatter(lambda v, _: f"{100 * v:.0f}")  # percentage points, as the prose
ax.set_xlabel("largest gap, relabelled (pp)")
ax.set_ylabel("relabellings")
ax.legend(fontsize=10)
fig.tight_layout()
