# Generated from explainers/more-than-two-groups.md by `fairsite build`; edit the explainer, not this file.
# Run it from the repository root:  python explainers/code/more-than-two-groups.py
# %% Every race category: its rate and Wilson interval
"""Every race category of COMPAS: rates, Wilson intervals, the max-gap permutation test, Holm."""
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from fairlearn.metrics import MetricFrame, false_positive_rate, selection_rate
from scipy.stats import norm
from statsmodels.stats.multitest import multipletests
from statsmodels.stats.proportion import proportion_confint

from faircode import fit_predict, load_audit
from faircode.groups import compare_groups, group_labels
from faircode.significance import format_p_value, wilson_interval

audit = load_audit("recidivism-risk")
pred = fit_predict(audit, strategy="S2", model="logistic_regression")
race = group_labels(audit, "race")          # the manifest's groups: every race category
groups = race.labels[pred.rows]             # one label per test row
min_size = audit.manifest.groups.min_size
n_test, n_categories = len(pred.rows), len(race.groups)
n_permutations = 9999
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

# %% Taken at face value: the largest gap over every group, however small
by_rate = sorted(rows, key=lambda r: r["rate"])
naive_gap = by_rate[-1]["rate"] - by_rate[0]["rate"]
naive_high, naive_low = by_rate[-1]["group"], by_rate[0]["group"]
naive_high_n, naive_low_n = by_rate[-1]["n"], by_rate[0]["n"]
print(f"largest gap, all groups: {100 * naive_gap:+.1f} pp ({naive_high}, n={naive_high_n}, "
      f"against {naive_low}, n={naive_low_n})")


# %% Build check, by hand: the largest gap and its relabelling p-value
def max_gap_by_hand(outcome, labels, n_shuffles, rng):
    """The largest group rate minus the smallest, and its relabelling p-value, by hand."""
    names = sorted(set(labels))
    codes = np.array([names.index(g) for g in labels])
    sizes = np.bincount(codes)

    def largest_gap(c):
        rates = np.bincount(c, weights=outcome) / sizes
        return rates.max() - rates.min()

    observed = largest_gap(codes)
    null = np.array([largest_gap(rng.permutation(codes)) for _ in range(n_shuffles)])
    as_extreme = int(np.sum(null >= observed - 1e-12))
    return observed, (as_extreme + 1) / (n_shuffles + 1)


# %% The max-gap permutation test among groups of the minimum size
rng = np.random.default_rng(20261130)
n_shuffles = 2000
comparisons, max_gap_diffs = {}, 0.0
for metric, fairlearn_metric, rows_used in (("selection_rate", selection_rate, np.ones(n_test, bool)),
                                            ("false_positive_rate", false_positive_rate, negative)):
    c = compare_groups(metric, pred.y_true, pred.y_pred, groups, favourable=audit.manifest.target.favourable,
                       reference=race.reference, order=race.groups, min_size=min_size,
                       n_permutations=n_permutations, random_state=7)
    comparisons[metric] = c
    kept = np.isin(groups, c.compared)
    outcome = pred.y_pred[kept & rows_used].astype(float)
    gap_by_hand, p_by_hand = max_gap_by_hand(outcome, list(groups[kept & rows_used]), n_shuffles, rng)
    frame = MetricFrame(metrics=fairlearn_metric, y_true=pred.y_true[kept], y_pred=pred.y_pred[kept],
                        sensitive_features=groups[kept])
    max_gap_diffs = max(max_gap_diffs, abs(gap_by_hand - frame.difference()), abs(gap_by_hand - c.difference))
    print(f"{metric}: {c.high_group} - {c.low_group} {100 * c.difference:+.1f} pp, "
          f"{format_p_value(c.max_gap_test.p_value, floor=1 / (n_permutations + 1))} "
          f"(by hand: {round(p_by_hand * (n_shuffles + 1)) - 1} of {n_shuffles:,} shuffles as large, "
          f"{format_p_value(p_by_hand, floor=1 / (n_shuffles + 1))})")
    if metric == "selection_rate":
        p_by_hand_sel = p_by_hand
    else:
        p_by_hand_fpr = p_by_hand

sel, fpr_c = comparisons["selection_rate"], comparisons["false_positive_rate"]
n_compared = len(sel.compared)
sel_gap, sel_high, sel_low = sel.difference, sel.high_group, sel.low_group
p_library_sel = sel.max_gap_test.p_value
fpr_gap, fpr_high, fpr_low = fpr_c.difference, fpr_c.high_group, fpr_c.low_group
p_library_fpr = fpr_c.max_gap_test.p_value

# %% Which pairs differ
# Every pair of compared groups, Holm-adjusted (checked against statsmodels).
pairs = fpr_c.pairwise
n_pairs = len(pairs)
holm_diff = float(np.max(np.abs(np.array([q.p_value_adjusted for q in pairs])
                                - multipletests([q.p_value for q in pairs], method="holm")[1])))
bw = next(q for q in pairs if {q.group_a, q.group_b} == {"Black", "White"})
fpr_bw_gap = bw.gap if bw.group_a == "Black" else -bw.gap
fpr_bw_p, fpr_bw_holm = bw.p_value, bw.p_value_adjusted
table = sel.by_group
vs_reference = [{"group": g, "gap": float(table.at[g, "diff_vs_reference"]),
                 "p_holm": float(table.at[g, "p_value_vs_reference_holm"])}
                for g in sel.compared if g != race.reference]
print(f"FPR, Black - White: {100 * fpr_bw_gap:+.1f} pp, {format_p_value(fpr_bw_p)}; "
      f"Holm-adjusted over {n_pairs} pairs {format_p_value(fpr_bw_holm)}")
for row in vs_reference:
    print(f"selection rate, {row['group']} - {race.reference}: {100 * row['gap']:+.1f} pp, "
          f"Holm-adjusted {format_p_value(row['p_holm'])}")

# %% The largest gap when no gap is real
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
null_q95_all_at_max = bool(null_q95_all >= 1 - 1e-9)  # a gap between rates cannot exceed 100 points
print(f"largest gap under relabelling, on average: all groups {100 * null_mean_all:.1f} pp,\n"
      f"  compared groups {100 * null_mean_compared:.1f} pp, one pre-chosen pair {100 * null_mean_pair:.1f} pp")

# %% Build check: the benchmark's row for the same model and strategy
bench = pd.read_csv("results/results_by_group.csv")
bench_row = bench[(bench["audit"] == "recidivism-risk") & (bench["strategy"] == "S2")
                  & (bench["model"] == "logistic_regression") & (bench["attribute"] == "race")
                  & (bench["metric"] == "selection_rate")]
benchmark_max_gap = float(bench_row["max_gap"].iloc[0])
print(f"benchmark's largest selection rate gap: {100 * benchmark_max_gap:+.1f} pp")

# %% Figure 1: every group's rate, and the largest gap under relabelling
fig, (left, right) = plt.subplots(1, 2, figsize=(10, 3.8))
for y, r in enumerate(rows):
    colour = "#0072B2" if r["n"] >= min_size else "#999999"
    left.plot([r["low"], r["high"]], [y, y], color=colour, lw=2)
    left.plot([r["rate"]], [y], "o", color=colour, markerfacecolor=colour if r["n"] >= min_size else "white")
left.set_yticks(range(len(rows)), [f"{r['group']} (n={r['n']:,})" for r in rows])
left.invert_yaxis()
left.set_xlim(0, 1)
left.xaxis.set_major_formatter(lambda v, _: f"{v:.0%}")  # percent, as the prose
left.set_xlabel("selection rate, 95% Wilson interval")
left.set_title(f"Grey, hollow: below the minimum size ({min_size})", fontsize=9)
bins = np.linspace(0, 1, 81)
for column, label, colour in ((0, f"largest gap, all {n_categories} groups", "#999999"),
                              (1, f"largest gap, {n_compared} groups >= {min_size}", "#0072B2"),
                              (2, "|Black - White|, chosen in advance", "#009E73")):
    right.hist(null[:, column], bins=bins, alpha=0.6, color=colour, label=label)
right.axvline(sel_gap, color="#D55E00", lw=2, label=f"observed largest gap {100 * sel_gap:+.1f} pp")
right.xaxis.set_major_formatter(lambda v, _: f"{100 * v:.0f}")  # percentage points, as the prose
right.set_xlabel("largest gap, relabelled (pp)")
right.set_ylabel("relabellings")
right.legend(fontsize=8)
fig.tight_layout()
