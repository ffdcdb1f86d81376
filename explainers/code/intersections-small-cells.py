# Generated from explainers/intersections-small-cells.md by `fairsite build`; edit the explainer, not this file.
# Run it from the repository root:  python explainers/code/intersections-small-cells.py
# %% A toy case
"""Sex x race on Benefits Denial: cells, small cells, the minimum-size rule, the chi-squared, maxT and range tests."""
import math

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import statsmodels.api as sm
from scipy.stats import chi2, chi2_contingency, norm
from statsmodels.stats.contingency_tables import StratifiedTable
from statsmodels.stats.multitest import multipletests

from faircode import fit_predict, load_audit
from faircode.group_tests import breslow_day_test, homogeneity_test
from faircode.groups import compare_groups, group_labels
from faircode.significance import format_p_value, proportion_difference_ci

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
# Cochran's rule (Cochran 1954): the chi-squared distribution serves when no expected count is
# below 1 and no more than a fifth of them are below 5. faircode's automatic choice asks more
# (every count at least 5) and relabels otherwise: valid too, but its p cannot go below 1/(m + 1).
compared_n = c.by_group.loc[list(c.compared), "n_group"].to_numpy(dtype=float)
compared_k = c.by_group.loc[list(c.compared), "n_outcome"].to_numpy(dtype=float)
shared_rate = compared_k.sum() / compared_n.sum()
expected = np.concatenate([compared_n * shared_rate, compared_n * (1 - shared_rate)])  # the k x 2 table's cells
n_expected, n_expected_below_5 = int(expected.size), int(np.sum(expected < 5))
min_expected_by_hand = float(expected.min())
cochran_ok = bool(min_expected_by_hand >= 1 and n_expected_below_5 <= expected.size / 5)
omnibus_monte_carlo = omnibus.method == "monte_carlo"
p_maxt = maxt.p_value
# At their floor 1/(m + 1) no relabelling was as extreme: the prose says so.
omnibus_at_floor = omnibus_monte_carlo and p_omnibus <= 1 / (n_permutations + 1) + 1e-15
maxt_at_floor = p_maxt <= 1 / (n_permutations + 1) + 1e-15
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
# Which pairs differ: each pair's exact test, Holm-adjusted over all pairs (checked against
# statsmodels). maxT's per-pair p-values are not used: they hold only when no cell differs
# (Petrondas and Gabriel 1983).
n_pairs = len(c.pairwise)
holm_diff = float(np.max(np.abs(np.array([q.p_value_adjusted for q in c.pairwise])
                                - multipletests([q.p_value for q in c.pairwise], method="holm")[1])))
pair_holm = next(q.p_value_adjusted for q in c.pairwise if {q.group_a, q.group_b} == {pair_high, pair_low})
high_rows, low_rows = flagged[cells_labels == pair_high], flagged[cells_labels == pair_low]
pair_ci = tuple(proportion_difference_ci(high_rows, low_rows))
# The same interval at the Bonferroni level the Holm p of the largest of the pairs must beat.
pair_ci_adjusted = tuple(proportion_difference_ci(high_rows, low_rows, confidence_level=1 - alpha / n_pairs))


def newcombe_by_hand(k1, n1, k2, n2, z=norm.ppf(0.975)):
    """Newcombe (1998, method 10): the difference's interval from each rate's Wilson interval."""
    def wilson(k, n):
        p = k / n
        centre = (p + z**2 / (2 * n)) / (1 + z**2 / n)
        half = z * math.sqrt(p * (1 - p) / n + z**2 / (4 * n**2)) / (1 + z**2 / n)
        return centre - half, centre + half
    (l1, u1), (l2, u2), d = wilson(k1, n1), wilson(k2, n2), k1 / n1 - k2 / n2
    return (d - math.sqrt((k1 / n1 - l1) ** 2 + (u2 - k2 / n2) ** 2),
            d + math.sqrt((u1 - k1 / n1) ** 2 + (k2 / n2 - l2) ** 2))


newcombe_diff = float(np.max(np.abs(np.subtract(pair_ci, newcombe_by_hand(
    high_rows.sum(), high_rows.size, low_rows.sum(), low_rows.size)))))
vs_reference = [{"group": g, "gap": float(c.by_group.at[g, "diff_vs_reference"]),
                 "p_holm": float(c.by_group.at[g, "p_value_vs_reference_holm"])}
                for g in c.compared if g != cross.reference]
print(f"{n_compared} cells compared: {pair_high} - {pair_low} {100 * pair_gap:+.1f} pp, "
      f"range test {format_p_value(p_library, floor=1 / (n_permutations + 1))}; the pair's exact test, "
      f"Holm-adjusted over {n_pairs} pairs, {format_p_value(pair_holm)}, Newcombe interval "
      f"[{100 * pair_ci[0]:+.1f}, {100 * pair_ci[1]:+.1f}] pp")
for row in vs_reference:
    print(f"  {row['group']} - {cross.reference}: {100 * row['gap']:+.1f} pp, Holm-adjusted {format_p_value(row['p_holm'])}")

# %% Does the intersection add anything? Interaction on two scales
# The races whose women's and men's cells both have at least min_size rows (a 0/18 cell has no odds).
sex_of = test_rows["sex"].map(sex_names).to_numpy()
race_of = test_rows["race"].map(race_names).to_numpy()
races = [r for r in race_rates if all(c.by_group.at[f"{s} & {r}", "n_group"] >= min_size for s in ("Women", "Men"))]
n_interaction_races, interaction_dof = len(races), len(races) - 1
rows = np.isin(race_of, races)
y, woman, race = flagged[rows], (sex_of[rows] == "Women").astype(float), race_of[rows]
overall_rate = float(y.mean())


def logistic_deviance(X, y):
    """-2 log-likelihood of a logistic regression fitted by Newton-Raphson."""
    beta = np.zeros(X.shape[1])
    for _ in range(50):
        mu = 1 / (1 + np.exp(-X @ beta))
        step = np.linalg.solve(X.T @ (X * (mu * (1 - mu))[:, None]), X.T @ (y - mu))
        beta += step
        if np.max(np.abs(step)) < 1e-12:
            break
    mu = np.clip(1 / (1 + np.exp(-X @ beta)), 1e-300, 1 - 1e-16)
    return float(-2 * np.sum(y * np.log(mu) + (1 - y) * np.log(1 - mu)))


race_dummies = np.column_stack([race == r for r in races[1:]]).astype(float)
intercept = np.ones((y.size, 1))
main = np.column_stack([intercept, woman, race_dummies])
full = np.column_stack([main, race_dummies * woman[:, None]])
deviance_null, deviance_main, deviance_full = (logistic_deviance(X, y) for X in (intercept, main, full))
lr_main, lr_interaction = deviance_null - deviance_main, deviance_main - deviance_full
p_interaction_lr = float(chi2.sf(lr_interaction, interaction_dof))
# The same test with statsmodels' GLM (binomial family) as the oracle.
glm = sm.GLM(y, main, family=sm.families.Binomial()).fit(), sm.GLM(y, full, family=sm.families.Binomial()).fit()
lr_diff = abs(lr_interaction - (glm[0].deviance - glm[1].deviance))
# Breslow-Day (Tarone) test of equal odds ratios across races; statsmodels as the oracle.
breslow_day = breslow_day_test(y, woman, race)
p_breslow_day = breslow_day.p_value
tables = [np.array([[np.sum(y[(race == r) & (woman == g)] == v) for v in (1, 0)] for g in (1, 0)]) for r in races]
breslow_day_diff = abs(p_breslow_day - StratifiedTable(tables).test_equal_odds(adjust=True).pvalue)
# Additive scale: is the women-minus-men gap the same in every race? Cochran's Q, inverse-variance weights.
interaction_gaps, weights = [], []
for r in races:
    w, m = y[(race == r) & (woman == 1)], y[(race == r) & (woman == 0)]
    variance = w.mean() * (1 - w.mean()) / w.size + m.mean() * (1 - m.mean()) / m.size
    interaction_gaps.append({"race": r if r != "White" else "white", "gap": float(w.mean() - m.mean())})
    weights.append(1 / variance)
gaps, weights = np.array([g["gap"] for g in interaction_gaps]), np.array(weights)
pooled_gap = float(np.sum(weights * gaps) / weights.sum())
q_interaction = float(np.sum(weights * (gaps - pooled_gap) ** 2))
p_interaction_q = float(chi2.sf(q_interaction, interaction_dof))
print(f"races with both cells of at least {min_size} rows: {', '.join(races)}")
print(f"logistic scale: main effects LR {lr_main:.1f} on {len(races)} dof; interaction LR {lr_interaction:.2f} "
      f"on {interaction_dof} dof, {format_p_value(p_interaction_lr)}; Breslow-Day {format_p_value(p_breslow_day)}")
print("additive scale: women - men " + ", ".join(f"{g['race']} {100 * g['gap']:+.1f} pp" for g in interaction_gaps)
      + f"; Q = {q_interaction:.1f} on {interaction_dof} dof, {format_p_value(p_interaction_q)}")

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
# Printed to the digits its standard error supports: the last digit at least half of it.
p_by_hand_digits = max(0, math.floor(-math.log10(p_by_hand_se / 2)))
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
ax.legend(fontsize=10, loc="upper left", bbox_to_anchor=(1.01, 1), frameon=False)
fig.tight_layout()
