# Generated from explainers/intersections-small-cells.md by `fairsite build`; edit the explainer, not this file.
# Run it from the repository root:  python explainers/code/intersections-small-cells.py
# %% A toy case
"""Sex x race on Benefits Denial: cells, small cells, the minimum-size rule, the chi-squared, maxT and range tests."""
import math

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from scipy.stats import chi2, chi2_contingency, norm

from faircode import fit_predict, load_audit
from faircode.group_tests import homogeneity_test
from faircode.groups import compare_groups, group_labels
from faircode.significance import format_p_value

# "Fairness gerrymandering" (Kearns et al. 2018), with exact rates.
toy_n = 400
sex_toy = np.repeat(["woman", "man"], toy_n // 2)
group_toy = np.tile(np.repeat(["A", "B"], toy_n // 4), 2)
toy_high, toy_low = 0.6, 0.2
toy_rate = np.where((sex_toy == "man") == (group_toy == "A"), toy_high, toy_low)
toy_flag = (np.arange(toy_n) % (toy_n // 4) < toy_rate * (toy_n // 4)).astype(float)  # exact rates, no noise
toy_gap_a = toy_flag[sex_toy == "woman"].mean() - toy_flag[sex_toy == "man"].mean()
toy_gap_b = toy_flag[group_toy == "A"].mean() - toy_flag[group_toy == "B"].mean()
toy_cells = pd.Series(toy_flag).groupby([sex_toy, group_toy]).mean()
toy_cell_gap = toy_cells.max() - toy_cells.min()
print(f"toy: women - men {100 * toy_gap_a:+.1f} pp, A - B {100 * toy_gap_b:+.1f} pp, "
      f"largest cell gap {100 * toy_cell_gap:+.1f} pp")

# %% Sex x race cells; one attribute at a time
audit = load_audit("benefits-denial")
pred = fit_predict(audit, strategy="S2", model="logistic_regression")
n_test = len(pred.rows)
min_size = audit.manifest.groups.min_size
favourable = audit.manifest.target.favourable
flagged = pred.y_pred.astype(float)
test_rows = audit.df.iloc[pred.rows]

# The cells by hand, checked against faircode's intersection and a crosstab.
sex_names = {"Male": "Men", "Female": "Women"}
race_names = dict(zip(audit.df["race"].unique(), audit.df["race"].unique()))
race_names.update({"Asian-Pac-Islander": "Asian or Pacific Islander", "Amer-Indian-Eskimo": "American Indian or Eskimo"})
by_hand = (test_rows["sex"].map(sex_names) + " & " + test_rows["race"].map(race_names)).to_numpy()
cross = group_labels(audit, "sex_x_race")
cells_labels = cross.labels[pred.rows]
crosstab = pd.crosstab(test_rows["sex"], test_rows["race"]).stack()
cells_match = bool((by_hand == cells_labels).all()
                   and sorted(pd.Series(by_hand).value_counts().tolist()) == sorted(crosstab[crosstab > 0].tolist()))

marginal = {}
for name in ("sex", "race"):
    labels = group_labels(audit, name).labels[pred.rows]
    marginal[name] = {g: float(flagged[labels == g].mean()) for g in group_labels(audit, name).groups}
sex_rates, race_rates = marginal["sex"], marginal["race"]
sex_gap = sex_rates["Women"] - sex_rates["Men"]
race_gap = race_rates["Black"] - race_rates["White"]
print(f"women - men {100 * sex_gap:+.1f} pp; Black - white {100 * race_gap:+.1f} pp; "
      f"cells match faircode and a crosstab: {cells_match}")

# %% Every cell's rate and Wilson interval
n_permutations = 199_999  # a p near 0.03 to within about 0.0004
alpha = 0.05
c = compare_groups("selection_rate", pred.y_true, pred.y_pred, cells_labels, favourable=favourable,
                   reference=cross.reference, order=cross.groups, min_size=min_size,
                   n_permutations=n_permutations, random_state=11)
z = norm.ppf(0.975)
cells, wilson_diff = [], 0.0
for g, row in c.by_group.iterrows():
    n, k = int(row["n_group"]), int(row["n_outcome"])
    p = k / n
    centre = (p + z**2 / (2 * n)) / (1 + z**2 / n)
    half = z * np.sqrt(p * (1 - p) / n + z**2 / (4 * n**2)) / (1 + z**2 / n)
    low, high = max(0.0, centre - half), min(1.0, centre + half)
    wilson_diff = max(wilson_diff, abs(low - row["ci_low"]), abs(high - row["ci_high"]))
    cells.append({"group": g, "n": n, "rate": p, "low": low, "high": high})
    print(f"{g:34s} n={n:5d} flagged {p:6.1%} [{low:.1%}, {high:.1%}]{'  small' if n < min_size else ''}")
n_cells = len(cells)
small_cells = [x for x in cells if x["n"] < min_size]
small_cells_below = set(x["group"] for x in small_cells) == set(c.small_groups)
bw_rate = c.by_group.at["Women & Black", "value"]
wm_rate = c.by_group.at["Men & White", "value"]
bw_gap = bw_rate - wm_rate

# Taken at face value: the largest gap over every cell.
by_rate = sorted(cells, key=lambda x: x["rate"])
naive_gap = by_rate[-1]["rate"] - by_rate[0]["rate"]
naive_high, naive_low = by_rate[-1]["group"], by_rate[0]["group"]
naive_involves_small = min(by_rate[-1]["n"], by_rate[0]["n"]) < min_size
naive_small_n = min(by_rate[-1]["n"], by_rate[0]["n"])
print(f"largest gap, all cells: {100 * naive_gap:+.1f} pp ({naive_high} - {naive_low})")

# %% Is any cell different? Chi-squared, maxT, range
n_compared = len(c.compared)
compared = np.isin(cells_labels, c.compared)
outcome, labels = flagged[compared], np.asarray(cells_labels[compared], dtype=str)
omnibus, maxt = c.omnibus_test, c.max_t_test  # "is any cell different?", and which pairs
chi2_stat, chi2_dof, p_omnibus, min_expected = omnibus.statistic, omnibus.dof, omnibus.p_value, omnibus.min_expected
omnibus_monte_carlo = omnibus.method == "monte_carlo"
p_maxt = maxt.p_value
maxt_high, maxt_low = maxt.pair
maxt_t = max(abs(t) for _, _, t, _ in maxt.pairs_adjusted)
maxt_pair_n = [int(c.by_group.at[g, "n_group"]) for g in maxt.pair]


def chi2_by_hand(outcome, labels):
    """Pearson's X^2 for a k x 2 table (each cell: flagged, not flagged) and its chi2(k - 1) p."""
    names = sorted(set(labels))
    n = np.array([np.sum(labels == g) for g in names], dtype=float)
    k = np.array([outcome[labels == g].sum() for g in names], dtype=float)
    shared = k.sum() / n.sum()                   # the one rate every cell would share
    expected = np.column_stack([n * shared, n * (1 - shared)])
    observed = np.column_stack([k, n - k])
    x2 = float(np.sum((observed - expected) ** 2 / expected))
    return x2, float(chi2.sf(x2, len(names) - 1))


x2_hand, p_chi2_hand = chi2_by_hand(outcome, labels)
x2_scipy, p_chi2_scipy, _, _ = chi2_contingency(pd.crosstab(labels, outcome).to_numpy(), correction=False)
p_chi2_library = homogeneity_test(outcome, labels, method="asymptotic").p_value
chi2_diff = max(abs(x2_hand - chi2_stat), abs(x2_hand - x2_scipy),
                abs(math.log10(p_chi2_hand) - math.log10(p_chi2_library)))
print(f"chi-squared {chi2_stat:.1f} on {chi2_dof} dof, {omnibus.format_p_value()} ({omnibus.method}; "
      f"smallest expected count {min_expected:.1f}); chi2 distribution {format_p_value(p_chi2_scipy)}; "
      f"by hand {x2_hand:.1f}")
print(f"maxT {maxt.statistic:.1f} ({maxt_high} vs {maxt_low}), {maxt.format_p_value()}")
pair_gap, pair_high, pair_low = c.difference, c.high_group, c.low_group
pair_high_n = int(c.by_group.at[pair_high, "n_group"])
pair_low_n = int(c.by_group.at[pair_low, "n_group"])
p_library = c.max_gap_test.p_value
p_library_se = math.sqrt(p_library * (1 - p_library) / n_permutations)  # its Monte Carlo standard error
maxt_range_pair = next(q for x, y, _, q in maxt.pairs_adjusted if {x, y} == {pair_high, pair_low})
maxt_range_pair_se = math.sqrt(maxt_range_pair * (1 - maxt_range_pair) / n_permutations)
vs_reference = [{"group": g, "gap": float(c.by_group.at[g, "diff_vs_reference"]),
                 "p_holm": float(c.by_group.at[g, "p_value_vs_reference_holm"])}
                for g in c.compared if g != cross.reference]
print(f"{n_compared} cells compared: {pair_high} - {pair_low} {100 * pair_gap:+.1f} pp, "
      f"range test {format_p_value(p_library, floor=1 / (n_permutations + 1))}; maxT-adjusted for the pair "
      f"{format_p_value(maxt_range_pair, floor=1 / (n_permutations + 1))}")
for row in vs_reference:
    print(f"  {row['group']} - {cross.reference}: {100 * row['gap']:+.1f} pp, Holm-adjusted {format_p_value(row['p_holm'])}")

# %% Build checks, by hand: relabelling; small cells at the extremes
rng = np.random.default_rng(20261130)
n_shuffles = 2000
compared = np.isin(cells_labels, c.compared)
codes = pd.Categorical(cells_labels[compared], categories=c.compared).codes
sizes = np.bincount(codes)
rates = np.bincount(codes, weights=flagged[compared]) / sizes
observed = rates.max() - rates.min()
null = np.empty(n_shuffles)
for i in range(n_shuffles):
    shuffled = np.bincount(rng.permutation(codes), weights=flagged[compared]) / sizes
    null[i] = shuffled.max() - shuffled.min()
p_by_hand = (np.sum(null >= observed - 1e-12) + 1) / (n_shuffles + 1)
p_by_hand_se = math.sqrt(p_by_hand * (1 - p_by_hand) / n_shuffles)
print(f"by hand: {format_p_value(p_by_hand, floor=1 / (n_shuffles + 1))} (faircode {format_p_value(p_library, floor=1 / (n_permutations + 1))})")

# Small cells at the extremes by chance. Relabel all cells; is the highest or lowest rate a small cell's?
all_codes = pd.Categorical(cells_labels, categories=cross.groups).codes
all_sizes = np.bincount(all_codes, minlength=n_cells)
is_small = all_sizes < min_size
small_row_share = float(all_sizes[is_small].sum() / all_sizes.sum())
hits = 0
for _ in range(n_shuffles):
    shuffled = np.bincount(rng.permutation(all_codes), weights=flagged, minlength=n_cells) / all_sizes
    hits += bool(is_small[np.argmax(shuffled)] or is_small[np.argmin(shuffled)])
null_share_small = hits / n_shuffles
print(f"small cells hold {small_row_share:.1%} of rows; extreme in {null_share_small:.1%} of relabellings")

# %% Figure 1: every cell's rate with its interval
# The caption's claim: the cells' rates reach beyond the four one-attribute rates on both sides.
lines = (sex_rates["Women"], sex_rates["Men"], race_rates["Black"], race_rates["White"])
cells_spread_wider = bool(max(x["rate"] for x in cells) > max(lines) and min(x["rate"] for x in cells) < min(lines))
fig, ax = plt.subplots(figsize=(8, 4.2))
for y, x in enumerate(cells):
    ok = x["n"] >= min_size
    colour = "#0072B2" if x["group"].startswith("Men") else "#D55E00"
    colour = colour if ok else "#999999"
    ax.plot([x["low"], x["high"]], [y, y], color=colour, lw=2)
    ax.plot([x["rate"]], [y], "o", color=colour, markerfacecolor=colour if ok else "white")
for value, label, style in ((sex_rates["Women"], "all women", ":"), (sex_rates["Men"], "all men", "--"),
                            (race_rates["Black"], "all Black", "-."), (race_rates["White"], "all white", (0, (1, 3)))):
    ax.axvline(value, color="0.4", lw=1, linestyle=style, label=f"{label} ({value:.1%})")
ax.set_yticks(range(n_cells), [f"{x['group']} (n={x['n']:,})" for x in cells])
ax.invert_yaxis()
ax.set_xlim(0, None)  # rates from zero
ax.xaxis.set_major_formatter(lambda v, _: f"{v:.0%}")  # percent, as the prose
ax.set_xlabel("selection rate, 95% Wilson interval")
ax.set_title(f"Hollow grey: fewer than {min_size} rows, left out of the comparison", fontsize=9)
ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1), frameon=False)
fig.tight_layout()
