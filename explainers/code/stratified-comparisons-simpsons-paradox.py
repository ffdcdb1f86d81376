# Generated from explainers/stratified-comparisons-simpsons-paradox.md by `fairsite build`; edit the explainer, not this file.
# Run it from the repository root:  python explainers/code/stratified-comparisons-simpsons-paradox.py
# %% Overall and within bands
"""Stratified comparisons and Simpson's paradox (Recidivism Risk: COMPAS flags by prior counts; Berkeley 1973)."""
import math

import matplotlib.pyplot as plt
import numpy as np
from scipy.stats import chi2, fisher_exact
from statsmodels.stats.contingency_tables import StratifiedTable
from statsmodels.stats.meta_analysis import combine_effects

from faircode import load_audit
from faircode.formatting import format_p_value
from faircode.group_tests import breslow_day_test, cmh_test, stratified_permutation_test
from faircode.significance import (VERDICTS, adjust_p_values, classify_gap, gap_verdict_from_counts, permutation_test,
                                   proportion_difference_ci)

SEED = 20261201
ALPHA = 0.05
CONFIDENCE = 0.95
audit = load_audit("recidivism-risk")
in_pair = (audit.masks["race"] == 1) | (audit.reference_masks["race"] == 1)  # ProPublica's pair
compas = audit.df[in_pair]
black = (audit.masks["race"][in_pair] == 1).astype(np.int8)  # 1 = Black, 0 = white
# ProPublica's logistic regression (Larson and colleagues 2016), cited, not computed: "black
# defendants were 45 percent more likely to be assigned higher risk scores than white defendants",
# controlling for prior crimes, future recidivism, charge degree, age and gender. Their race
# coefficient is 0.47721 (an odds ratio of exp(0.47721)); the 45 percent is that odds ratio turned
# into a ratio of chances at their model's baseline (intercept -1.52554: white, male, 25 to 45).
PROPUBLICA_MORE_LIKELY = 0.45
PROPUBLICA_ODDS_RATIO = math.exp(0.47721)
PROPUBLICA_BASE = 1 / (1 + math.exp(1.52554))
propublica_ratio_check = PROPUBLICA_ODDS_RATIO / (1 - PROPUBLICA_BASE + PROPUBLICA_BASE * PROPUBLICA_ODDS_RATIO) - 1
CUT = 5  # ProPublica's cut: a decile of 5 or more is "medium or high risk"
flagged = (compas["decile_score"].to_numpy() >= CUT).astype(np.int8)
priors = compas["priors_count"].to_numpy()
# Bands of prior counts: none, one, then roughly doubling widths. One stratum per prior count gives
# the same pooled gap (the Limitations cell), so the answer does not hang on where the edges fall.
BANDS = [(0, 0, "none"), (1, 1, "1"), (2, 3, "2-3"), (4, 6, "4-6"), (7, 10, "7-10"), (11, 10_000, "11 or more")]
band = np.select([(priors >= lo) & (priors <= hi) for lo, hi, _ in BANDS], range(len(BANDS)), -1)
assert (band >= 0).all()  # every count falls in a band

n_black, n_white = int(black.sum()), int((1 - black).sum())
rate_black, rate_white = float(flagged[black == 1].mean()), float(flagged[black == 0].mean())
overall_gap = rate_black - rate_white
overall_ci = tuple(proportion_difference_ci(flagged[black == 1], flagged[black == 0], confidence_level=CONFIDENCE))
p_overall = permutation_test(flagged[black == 1], flagged[black == 0], method="exact")
by_band = []
for s, (_, _, name) in enumerate(BANDS):
    b, w = (band == s) & (black == 1), (band == s) & (black == 0)
    by_band.append({"band": name, "n_black": int(b.sum()), "n_white": int(w.sum()),
                    "black": float(flagged[b].mean()), "white": float(flagged[w].mean()),
                    "gap": float(flagged[b].mean() - flagged[w].mean()), "both": float(flagged[band == s].mean()),
                    "share_black": float(b.sum() / n_black), "share_white": float(w.sum() / n_white)})
gaps = [row["gap"] for row in by_band]
min_band_gap, max_band_gap = min(gaps), max(gaps)
flag_rate_climbs = all(later[g] > earlier[g] for earlier, later in zip(by_band, by_band[1:]) for g in ("black", "white"))
# Figure 1's "because": both groups' flag rate in each band, averaged over the bands with each
# group's own shares (where the group sits, not how it is treated there).
band_mix_rate_black = sum(row["share_black"] * row["both"] for row in by_band)
band_mix_rate_white = sum(row["share_white"] * row["both"] for row in by_band)


TINY_P = 1e-6  # below this, the page gives a bound, not digits


def p_bound(p):
    """A p-value far below any threshold, as a bound: the smallest power of ten with an exponent
    that is a multiple of ten and lies above it ("p < 10⁻³⁰" for 2.7 × 10⁻³⁷). Its digits beyond
    that say nothing a reader can use."""
    exponent = 10 * (math.floor(math.log10(p) / 10) + 1)
    superscripts = str.maketrans("-0123456789", "\u207b\u2070\u00b9\u00b2\u00b3\u2074\u2075\u2076\u2077\u2078\u2079")
    return "p < 10" + str(exponent).translate(superscripts)


p_overall_text = p_bound(p_overall)


def mh_gap(outcome, group, strata):
    """The Mantel-Haenszel weighted gap: sum_s w_s (mean_1s - mean_0s) / sum_s w_s, with
    w_s = n_1s n_0s / n_s (Greenland and Robins 1985); strata missing a group get no weight."""
    k = strata.max() + 1
    n1 = np.bincount(strata, weights=group, minlength=k)
    n = np.bincount(strata, minlength=k)
    n0 = n - n1
    sum1 = np.bincount(strata, weights=outcome * group, minlength=k)
    sum0 = np.bincount(strata, weights=outcome, minlength=k) - sum1
    both = (n1 > 0) & (n0 > 0)
    w = n1[both] * n0[both] / n[both]
    return float(np.sum(w * (sum1[both] / n1[both] - sum0[both] / n0[both])) / np.sum(w))


within_gap = mh_gap(flagged, black, band)
mean_priors_black, mean_priors_white = float(priors[black == 1].mean()), float(priors[black == 0].mean())
# Within a band the groups can still differ in prior counts: the wider the band, the more.
in_top = band == len(BANDS) - 1
top_band_priors_black = float(priors[in_top & (black == 1)].mean())
top_band_priors_white = float(priors[in_top & (black == 0)].mean())
# Printed narrow (under 40 characters) so that the tables stay tables on a phone.
print(f"flagged: {100 * rate_black:.1f}% of {n_black:,} Black,")
print(f"         {100 * rate_white:.1f}% of {n_white:,} white defendants")
print(f"overall gap {100 * overall_gap:+.1f} pp")
print(f"  [{100 * overall_ci[0]:+.1f}, {100 * overall_ci[1]:+.1f}]; exact {format_p_value(p_overall)}\n")
print("      flagged (%)  gap   share (%)")
print("priors Black white  (pp)  Black white")
for row in by_band:
    label = row["band"].replace(" or more", "+")
    print(f"{label:<6}{100 * row['black']:5.1f} {100 * row['white']:5.1f} {100 * row['gap']:+5.1f}"
          f"  {100 * row['share_black']:5.1f} {100 * row['share_white']:5.1f}")
print(f"\nwithin bands (MH weights): {100 * within_gap:+.1f} pp")
print(f"mean priors: {mean_priors_black:.1f} (Black), {mean_priors_white:.1f} (white)")
print("both groups' flag rate by band,")
print(f"  averaged with Black shares {100 * band_mix_rate_black:.1f}%,")
print(f"  with white shares {100 * band_mix_rate_white:.1f}%")

# %% Figure 1
COLOURS = {"Black": "#3f51b5", "White": "#d84315"}
plt.rcParams.update({"font.size": 14, "axes.titlesize": 15, "axes.labelsize": 14, "xtick.labelsize": 13,
                     "ytick.labelsize": 13, "legend.fontsize": 13})  # large enough on a 390 px phone
labels = [row["band"] for row in by_band]
x = np.arange(len(labels))
fig, (left, right) = plt.subplots(1, 2, figsize=(10, 4.4))
for name, key, offset in (("Black", "black", -0.06), ("White", "white", 0.06)):
    left.plot(x + offset, [row[key] for row in by_band], "o-", color=COLOURS[name], linewidth=2, markersize=7,
              label=name)
left.axhline(rate_black, color=COLOURS["Black"], linestyle=":", linewidth=1.5)
left.axhline(rate_white, color=COLOURS["White"], linestyle=":", linewidth=1.5)
left.text(x[-1] + 1.5, rate_black + 0.01, "all Black", color=COLOURS["Black"], va="bottom", ha="right")
left.text(x[-1] + 1.5, rate_white + 0.01, "all white", color=COLOURS["White"], va="bottom", ha="right")
left.set_xticks(x, labels, rotation=30, ha="right")
left.set_xlim(-0.4, x[-1] + 1.6)
left.set_xlabel("prior counts")
left.set_ylabel(f"flagged (decile {CUT} or more)")
left.yaxis.set_major_formatter(lambda v, _: f"{v:.0%}")
left.set_ylim(0, 1)
left.set_title("Flagged, within each band")
left.legend(loc="upper left")
width = 0.38
right.bar(x - width / 2, [row["share_black"] for row in by_band], width, color=COLOURS["Black"], label="Black")
right.bar(x + width / 2, [row["share_white"] for row in by_band], width, color=COLOURS["White"], label="White")
right.set_xticks(x, labels, rotation=30, ha="right")
right.set_xlabel("prior counts")
right.set_ylabel("share of the group")
right.yaxis.set_major_formatter(lambda v, _: f"{v:.0%}")
right.set_title("Who is in which band")
right.legend(loc="upper right")
fig.tight_layout()
plt.show()

# %% CMH, three ways


def two_by_two_tables(outcome, group, strata):
    """One 2x2 table per stratum, shape (2, 2, k): rows group 1 then group 0, columns outcome 1 then 0."""
    k = strata.max() + 1
    tables = np.zeros((2, 2, k))
    for g_row, g in enumerate((1, 0)):
        for o_col, o in enumerate((1, 0)):
            tables[g_row, o_col] = np.bincount(strata[(group == g) & (outcome == o)], minlength=k)
    return tables


def cmh_by_hand(tables):
    """Cochran-Mantel-Haenszel chi-squared (no continuity correction) and the MH common odds ratio,
    from the textbook formulas (Mantel and Haenszel 1959; Agresti 2013, section 6.4)."""
    a, b, c, d = tables[0, 0], tables[0, 1], tables[1, 0], tables[1, 1]
    n = a + b + c + d
    expected = (a + b) * (a + c) / n
    variance = (a + b) * (c + d) * (a + c) * (b + d) / (n ** 2 * (n - 1))
    statistic = (a - expected).sum() ** 2 / variance.sum()
    odds_ratio = (a * d / n).sum() / (b * c / n).sum()
    return float(statistic), float(odds_ratio)


tables = two_by_two_tables(flagged, black, band)
cmh_stat_hand, odds_ratio_hand = cmh_by_hand(tables)
sm = StratifiedTable(tables)
sm_test = sm.test_null_odds(correction=False)
cmh_stat_sm, p_cmh_sm = float(sm_test.statistic), float(sm_test.pvalue)
odds_ratio_sm = float(sm.oddsratio_pooled)
ci_sm = tuple(float(x) for x in sm.oddsratio_pooled_confint(alpha=1 - CONFIDENCE))  # Robins-Breslow-Greenland
cmh = cmh_test(flagged, black, band, confidence_level=CONFIDENCE)  # the library: statistic, odds ratio, interval, MH gap
p_cmh, odds_ratio, ci = cmh.p_value, cmh.odds_ratio, (cmh.ci_low, cmh.ci_high)
cmh_library_diff = max(abs(cmh.statistic - cmh_stat_sm) / cmh_stat_sm, abs(odds_ratio - odds_ratio_sm) / odds_ratio_sm,
                       abs(ci[0] - ci_sm[0]) / ci_sm[0], abs(ci[1] - ci_sm[1]) / ci_sm[1],
                       abs(cmh.statistic - cmh_stat_hand) / cmh_stat_hand)
risk_difference_diff = abs(cmh.risk_difference - within_gap)
overall_odds_ratio = float(rate_black / (1 - rate_black) / (rate_white / (1 - rate_white)))
print(f"{'':11}{'by hand':>9}{'statsm.':>9}{'faircode':>9}")
print(f"{'CMH chi2':<11}{cmh_stat_hand:9.3f}{cmh_stat_sm:9.3f}{cmh.statistic:9.3f}")
print(f"{'odds ratio':<11}{odds_ratio_hand:9.4f}{odds_ratio_sm:9.4f}{odds_ratio:9.4f}")
print(f"{'  low':<20}{ci_sm[0]:9.4f}{ci[0]:9.4f}")
print(f"{'  high':<20}{ci_sm[1]:9.4f}{ci[1]:9.4f}")
print(f"{'gap (pp)':<11}{100 * within_gap:+9.3f}{'':9}{100 * cmh.risk_difference:+9.3f}")
print(f"CMH {cmh.format_p_value()}")
p_cmh_text = p_bound(p_cmh)
print(f"overall odds ratio {overall_odds_ratio:.3f}")

# %% Stratified permutation test


def within_strata_shuffle_test(outcome, group, strata, n_shuffles, rng):
    """Two-sided stratified permutation test by hand: shuffle the group labels inside each stratum
    (each keeps its group sizes), recompute the Mantel-Haenszel gap, and count how often it lies
    at least as far from zero as the observed one; p = (count + 1) / (n_shuffles + 1)."""
    observed = mh_gap(outcome, group, strata)
    members = [np.flatnonzero(strata == s) for s in range(strata.max() + 1)]
    shuffled = group.copy()
    n_extreme = 0
    for _ in range(n_shuffles):
        for rows in members:
            shuffled[rows] = rng.permutation(group[rows])
        n_extreme += abs(mh_gap(outcome, shuffled, strata)) >= abs(observed) - 1e-12
    return (n_extreme + 1) / (n_shuffles + 1)


rng = np.random.default_rng(SEED)
n_shuffles = 2000
p_strat_hand = within_strata_shuffle_test(flagged, black, band, n_shuffles, rng)
strat = stratified_permutation_test(flagged, black, band)  # exact for 0/1 outcomes (Mantel's test)
p_strat = strat.p_value
strat_statistic_diff = abs(strat.statistic - within_gap)
p_strat_text = p_bound(p_strat)
print(f"flag gap within bands {100 * within_gap:+.1f} pp")
print(f"  by hand ({n_shuffles:,}): {format_p_value(p_strat_hand, floor=1 / (n_shuffles + 1))}")
print(f"  faircode, exact: {strat.format_p_value()}")

# The general case: the mean COMPAS decile score (1 to 10), not a 0/1 outcome.
decile = compas["decile_score"].to_numpy().astype(float)
score_gap_overall = float(decile[black == 1].mean() - decile[black == 0].mean())
score_gap_within = mh_gap(decile, black, band)
p_score_hand = within_strata_shuffle_test(decile, black, band, n_shuffles, rng)
score_test = stratified_permutation_test(decile, black, band, n_permutations=n_shuffles, random_state=SEED)
p_score = score_test.p_value
score_statistic_diff = abs(score_test.statistic - score_gap_within)
print(f"mean decile score: gap {score_gap_overall:+.2f} overall,")
print(f"  {score_gap_within:+.2f} within bands")
print(f"  by hand ({n_shuffles:,}): {format_p_value(p_score_hand, floor=1 / (n_shuffles + 1))}")
print(f"  faircode, Monte Carlo: {score_test.format_p_value()}")

# %% Breslow-Day


def breslow_day_by_hand(tables):
    """Breslow-Day statistic with Tarone's correction (Breslow and Day 1980; Tarone 1985): in each
    stratum, the count a_s that a table with the same margins and the common MH odds ratio would
    have (the root of a quadratic), compared with the observed count."""
    a, b, c, d = tables[0, 0], tables[0, 1], tables[1, 0], tables[1, 1]
    _, psi = cmh_by_hand(tables)
    n1, m1, n = a + b, a + c, a + b + c + d
    # (x (n - n1 - m1 + x)) / ((n1 - x)(m1 - x)) = psi, solved for x in [max(0, n1+m1-n), min(n1, m1)]
    qa = 1 - psi
    qb = (n - n1 - m1) + psi * (n1 + m1)
    qc = -psi * n1 * m1
    roots = (-qb + np.sqrt(qb ** 2 - 4 * qa * qc)) / (2 * qa), (-qb - np.sqrt(qb ** 2 - 4 * qa * qc)) / (2 * qa)
    low, high = np.maximum(0, n1 + m1 - n), np.minimum(n1, m1)
    fitted = np.where((roots[0] >= low) & (roots[0] <= high), roots[0], roots[1])
    var = 1 / (1 / fitted + 1 / (n1 - fitted) + 1 / (m1 - fitted) + 1 / (n - n1 - m1 + fitted))
    statistic = np.sum((a - fitted) ** 2 / var) - (a - fitted).sum() ** 2 / var.sum()  # Tarone
    return float(statistic), len(a) - 1


bd_stat_hand, bd_dof = breslow_day_by_hand(tables)
bd_sm = sm.test_equal_odds(adjust=True)
bd_stat_sm, p_bd_sm = float(bd_sm.statistic), float(bd_sm.pvalue)
bd = breslow_day_test(flagged, black, band)  # Tarone's correction by default
p_bd = bd.p_value
bd_diff = max(abs(bd_stat_hand - bd_stat_sm), abs(bd.statistic - bd_stat_sm)) / bd_stat_sm
print(f"Breslow-Day (Tarone), {bd_dof + 1} prior-count bands")
print(f"  by hand {bd_stat_hand:.4f}, statsmodels {bd_stat_sm:.4f},")
print(f"  faircode {bd.statistic:.4f}; {bd.format_p_value()}")



def equal_gaps_test(outcome, group, strata):
    """Cochran's Q for equal gaps in percentage points (Cochran 1954a): each stratum's gap d_s with
    its variance v_s = p1 (1 - p1) / n1 + p0 (1 - p0) / n0, pooled with weights 1 / v_s;
    Q = sum (d_s - pooled)^2 / v_s, chi-squared with k - 1 degrees of freedom if the gaps are equal."""
    d, v = [], []
    for s in np.unique(strata):
        o1, o0 = outcome[(strata == s) & (group == 1)], outcome[(strata == s) & (group == 0)]
        d.append(o1.mean() - o0.mean())
        v.append(o1.mean() * (1 - o1.mean()) / len(o1) + o0.mean() * (1 - o0.mean()) / len(o0))
    d, v = np.array(d), np.array(v)
    pooled = np.sum(d / v) / np.sum(1 / v)
    q = float(np.sum((d - pooled) ** 2 / v))
    return q, float(chi2.sf(q, len(d) - 1)), d, v


q_gaps, p_q, d_bands, v_bands = equal_gaps_test(flagged, black, band)
q_sm = combine_effects(d_bands, v_bands).test_homogeneity()  # statsmodels' meta-analysis, the oracle
q_diff = abs(q_gaps - float(q_sm.statistic)) / float(q_sm.statistic) + abs(p_q - float(q_sm.pvalue))
print(f"equal gaps, Cochran's Q {q_gaps:.2f}, {format_p_value(p_q)}")

# The same question for age bands (COMPAS's own age categories).
AGES = ["Less than 25", "25 - 45", "Greater than 45"]
age_band = np.select([compas["age_cat"].to_numpy() == a for a in AGES], range(len(AGES)), -1)
assert (age_band >= 0).all()
age_tables = two_by_two_tables(flagged, black, age_band)
age_sm = StratifiedTable(age_tables)
bd_age_stat, bd_age_dof = breslow_day_by_hand(age_tables)
bd_age = breslow_day_test(flagged, black, age_band)
p_bd_age = bd_age.p_value
bd_age_stat_sm = float(age_sm.test_equal_odds(adjust=True).statistic)
bd_diff = max(bd_diff, abs(bd_age_stat - bd_age_stat_sm) / bd_age_stat_sm, abs(bd_age.statistic - bd_age_stat_sm) / bd_age_stat_sm)
by_age = []
for s, name in enumerate(["under 25", "25 to 45", "over 45"]):
    b, w = (age_band == s) & (black == 1), (age_band == s) & (black == 0)
    t = age_tables[:, :, s]
    by_age.append({"age": name, "n_black": int(b.sum()), "n_white": int(w.sum()),
                   "black": float(flagged[b].mean()), "white": float(flagged[w].mean()),
                   "gap": float(flagged[b].mean() - flagged[w].mean()),
                   "ci": tuple(proportion_difference_ci(flagged[b], flagged[w], confidence_level=CONFIDENCE)),
                   "odds_ratio": float(t[0, 0] * t[1, 1] / (t[0, 1] * t[1, 0]))})
q_age, p_q_age, d_age, v_age = equal_gaps_test(flagged, black, age_band)
q_age_sm = combine_effects(d_age, v_age).test_homogeneity()
q_diff = max(q_diff, abs(q_age - float(q_age_sm.statistic)) / float(q_age_sm.statistic) + abs(p_q_age - float(q_age_sm.pvalue)))
print("\n           flagged       gap   odds")
print("age        Black  white  (pp)  ratio")
for row in by_age:
    print(f"{row['age']:<10} {100 * row['black']:4.1f}%  {100 * row['white']:4.1f}% {100 * row['gap']:+5.1f}  "
          f"{row['odds_ratio']:.2f}")
    print(f"{'':10} gap {CONFIDENCE:.0%}: [{100 * row['ci'][0]:+.1f}, {100 * row['ci'][1]:+.1f}]")
print(f"Breslow-Day (Tarone), age bands: {bd_age_stat:.2f}")
print(f"  statsmodels {bd_age_stat_sm:.2f}; {bd_age.format_p_value()}")
print(f"equal gaps, Cochran's Q {q_age:.2f},")
print(f"  {format_p_value(p_q_age)}")

# %% Finer strata, and age as well
# One stratum per prior count (the last one "FINE_CAP or more"): does the pooled gap hang on the bands?
FINE_CAP = 20
fine = cmh_test(flagged, black, np.minimum(priors, FINE_CAP), confidence_level=CONFIDENCE)
fine_gap, fine_odds_ratio, fine_ci = fine.risk_difference, fine.odds_ratio, (fine.ci_low, fine.ci_high)
# Prior-count band and age band together: what is left when age is held alike as well.
band_age = band * len(AGES) + age_band
n_joint_strata = int(np.unique(band_age).size)
joint = cmh_test(flagged, black, band_age, confidence_level=CONFIDENCE)
joint_gap, joint_odds_ratio, joint_ci = joint.risk_difference, joint.odds_ratio, (joint.ci_low, joint.ci_high)
joint_gap_hand = mh_gap(flagged, black, band_age)
risk_difference_diff = max(risk_difference_diff, abs(joint_gap - joint_gap_hand),
                           abs(fine_gap - mh_gap(flagged, black, np.minimum(priors, FINE_CAP))))
print(f"{'strata':<16}{'gap (pp)':>9}{'odds ratio':>11}")
for name, g, o in (("prior bands", within_gap, odds_ratio), (f"each count<{FINE_CAP}", fine_gap, fine_odds_ratio),
                   ("bands x age", joint_gap, joint_odds_ratio)):
    print(f"{name:<16}{100 * g:+9.1f}{o:11.2f}")
print(f"each count: [{fine_ci[0]:.2f}, {fine_ci[1]:.2f}]")
print(f"bands x age ({n_joint_strata}): [{joint_ci[0]:.2f}, {joint_ci[1]:.2f}]")

# Does the odds ratio differ by age once prior bands are held alike too? Each age band's odds
# ratio pooled over the prior bands (Mantel-Haenszel), and Breslow-Day over the age x prior strata:
# it uses those with both groups and both outcomes (a table with an empty margin has no odds ratio
# to compare) and counts the strata it drops.
by_age_within = []
for s, row in enumerate(by_age):
    rows = age_band == s
    r = cmh_test(flagged[rows], black[rows], band[rows], confidence_level=CONFIDENCE)
    by_age_within.append({"age": row["age"], "odds_ratio": r.odds_ratio, "ci": (r.ci_low, r.ci_high)})
bd_joint = breslow_day_test(flagged, black, band_age)
p_bd_joint = bd_joint.p_value
n_usable_joint, n_dropped_joint, n_constant_joint = bd_joint.n_strata, bd_joint.n_strata_dropped, bd_joint.n_strata_constant
# statsmodels' test takes only tables with no empty margin: the oracle is given those, chosen here.
joint_tables = two_by_two_tables(flagged, black, band_age)  # (2, 2, strata)
full = (joint_tables.sum(axis=0).min(axis=0) > 0) & (joint_tables.sum(axis=1).min(axis=0) > 0)
bd_joint_sm = StratifiedTable(joint_tables[:, :, full]).test_equal_odds(adjust=True)
bd_diff = max(bd_diff, abs(bd_joint.statistic - float(bd_joint_sm.statistic)) / float(bd_joint_sm.statistic))
bd_joint_strata_match = int(full.sum()) == n_usable_joint
age_alone_spread = max(r["odds_ratio"] for r in by_age) / min(r["odds_ratio"] for r in by_age)
age_within_spread = max(r["odds_ratio"] for r in by_age_within) / min(r["odds_ratio"] for r in by_age_within)
print("age band odds ratios within prior bands:")
for r in by_age_within:
    print(f"  {r['age']:<9} {r['odds_ratio']:.2f} [{r['ci'][0]:.2f}, {r['ci'][1]:.2f}]")
print(f"Breslow-Day over age x prior strata: {bd_joint!r}")

# %% Berkeley
# Applicants admitted and rejected by sex in the six largest departments, fall 1973, as R's
# datasets package records them (UCBAdmissions, after Bickel, Hammel and O'Connell 1975).
BERKELEY = {  # department: (men admitted, men rejected, women admitted, women rejected)
    "A": (512, 313, 89, 19), "B": (353, 207, 17, 8), "C": (120, 205, 202, 391),
    "D": (138, 279, 131, 244), "E": (53, 138, 94, 299), "F": (22, 351, 24, 317),
}
# The totals the UCBAdmissions documentation publishes: 4,526 applicants ("Format": "cross-tabulating
# 4526 observations"); 2,691 men of whom 1,198 were admitted, 1,835 women of whom 557 ("Details").
PUBLISHED = {"applicants": 4526, "men": 2691, "men_admitted": 1198, "women": 1835, "women_admitted": 557}
# Campus-wide, all departments (Bickel, Hammel and O'Connell 1975), cited, not computed:
# 8,442 men applied and about 44% were admitted; 4,321 women and about 35%.
BICKEL_MEN, BICKEL_RATE_MEN = 8442, 0.44
BICKEL_WOMEN, BICKEL_RATE_WOMEN = 4321, 0.35
counts = np.array(list(BERKELEY.values()))  # shape (6, 4)
men_applied, women_applied = counts[:, 0] + counts[:, 1], counts[:, 2] + counts[:, 3]
totals = {"applicants": int(counts.sum()), "men": int(men_applied.sum()), "men_admitted": int(counts[:, 0].sum()),
          "women": int(women_applied.sum()), "women_admitted": int(counts[:, 2].sum())}
totals_match = totals == PUBLISHED
admit_men, admit_women = totals["men_admitted"] / totals["men"], totals["women_admitted"] / totals["women"]
berkeley_overall_gap = admit_women - admit_men  # women minus men: negative = fewer women admitted
# The margin of a practical gap, for Berkeley too: the one the site's audits declare (5 points).
b_margin = audit.manifest.practical_margin.points / 100
departments = []
for (dept, (ma, mr, wa, wr)), m, w in zip(BERKELEY.items(), men_applied, women_applied):
    departments.append({"dept": dept, "men": int(m), "women": int(w), "rate_men": ma / m, "rate_women": wa / w,
                        "gap": wa / w - ma / m, "admit_rate": (ma + wa) / (m + w),
                        "share_men": m / totals["men"], "share_women": w / totals["women"],
                        "p_fisher": float(fisher_exact([[wa, wr], [ma, mr]]).pvalue),  # two-sided
                        # The three-state verdict at the page's margin (issue 45): not shown is not absent.
                        "v": gap_verdict_from_counts(wa, w, ma, m, margin=b_margin, names=("women", "men"),
                                                     outcome="admitted", equivalence_interval=False)})
n_depts_women_higher = sum(row["gap"] > 0 for row in departments)
b_largest = max(departments, key=lambda row: abs(row["gap"]))
b_others = [row for row in departments if row is not b_largest]
# The five departments' claims are a family: their exact and equivalence p-values are
# Holm-adjusted over it before the verdict is read (an unadjusted "no gap" in one of five can be
# chance).
b_holm = adjust_p_values([row["v"].p_value for row in b_others], method="holm")
b_holm_eq = adjust_p_values([row["v"].equivalence.p_value for row in b_others], method="holm")
for row, p_adj, eq_adj in zip(b_others, b_holm, b_holm_eq):
    row["verdict"] = classify_gap(p_value=p_adj, ci_low=row["v"].ci_low, ci_high=row["v"].ci_high,
                                  equivalence_p_value=eq_adj, margin=(-b_margin, b_margin))
    row["eq_p_unadjusted"], row["eq_p_holm"] = row["v"].equivalence.p_value, float(eq_adj)
b_largest["verdict"] = b_largest["v"].verdict
for row in departments:
    del row["v"]  # the verdict object is not a number the page cites
b_min_eq_holm = min(row["eq_p_holm"] for row in b_others)
b_min_eq = min(row["eq_p_unadjusted"] for row in b_others)
n_depts_alike = len(b_others)
b_fewest_women = min(b_others, key=lambda row: row["women"])  # the department that can say least
b_fewest_women_ci = tuple(float(x) for x in proportion_difference_ci(
    np.repeat([1, 0], BERKELEY[b_fewest_women["dept"]][2:]), np.repeat([1, 0], BERKELEY[b_fewest_women["dept"]][:2]),
    confidence_level=CONFIDENCE))
b_min_p_others = min(row["p_fisher"] for row in b_others)
b_shown_small = [row["dept"] for row in b_others if row["verdict"] == "no_practical_gap_shown"]
b_inconclusive = [row["dept"] for row in b_others if row["verdict"] == "inconclusive"]
b_max_abs_gap_others = max(abs(row["gap"]) for row in b_others)
# The admission rate of the department an average applicant of each sex applied to.
dept_rate_men_applied = sum(row["share_men"] * row["admit_rate"] for row in departments)
dept_rate_women_applied = sum(row["share_women"] * row["admit_rate"] for row in departments)
# One row per applicant, to run the same tests as on COMPAS: outcome 1 = admitted, group 1 = women.
admitted = np.concatenate([np.repeat([1, 0, 1, 0], row) for row in counts]).astype(np.int8)
woman = np.concatenate([np.repeat([0, 0, 1, 1], row) for row in counts]).astype(np.int8)
dept = np.concatenate([np.full(row.sum(), s) for s, row in enumerate(counts)])
berkeley_within_gap = mh_gap(admitted, woman, dept)
b_tables = two_by_two_tables(admitted, woman, dept)
b_cmh_stat_hand, b_odds_ratio_hand = cmh_by_hand(b_tables)
b_sm = StratifiedTable(b_tables)
b_cmh_sm = b_sm.test_null_odds(correction=False)
b_p_cmh_sm = float(b_cmh_sm.pvalue)
b_odds_ratio_sm = float(b_sm.oddsratio_pooled)
b_ci_sm = tuple(float(x) for x in b_sm.oddsratio_pooled_confint(alpha=1 - CONFIDENCE))
b_p_strat_hand = within_strata_shuffle_test(admitted, woman, dept, n_shuffles, rng)
b_cmh = cmh_test(admitted, woman, dept, confidence_level=CONFIDENCE)
b_p_strat = stratified_permutation_test(admitted, woman, dept).p_value  # exact
b_bd = breslow_day_test(admitted, woman, dept)
b_odds_ratio, b_ci, b_p_cmh, b_p_bd = b_cmh.odds_ratio, (b_cmh.ci_low, b_cmh.ci_high), b_cmh.p_value, b_bd.p_value
cmh_library_diff = max(cmh_library_diff, abs(b_cmh.statistic - float(b_cmh_sm.statistic)) / float(b_cmh_sm.statistic),
                       abs(b_cmh.statistic - b_cmh_stat_hand) / b_cmh_stat_hand,
                       abs(b_odds_ratio - b_odds_ratio_sm) / b_odds_ratio_sm, abs(b_ci[0] - b_ci_sm[0]) / b_ci_sm[0],
                       abs(b_ci[1] - b_ci_sm[1]) / b_ci_sm[1])
risk_difference_diff = max(risk_difference_diff, abs(b_cmh.risk_difference - berkeley_within_gap))
bd_diff = max(bd_diff, abs(b_bd.statistic - float(b_sm.test_equal_odds(adjust=True).statistic)))
b_overall_ci = tuple(proportion_difference_ci(admitted[woman == 1], admitted[woman == 0], confidence_level=CONFIDENCE))
b_p_overall = permutation_test(admitted[woman == 1], admitted[woman == 0], method="exact")
b_p_overall_text = p_bound(b_p_overall)
# The same, without the department whose gap is the largest.
keep = dept != list(BERKELEY).index(b_largest["dept"])
b_rest_gap = mh_gap(admitted[keep], woman[keep], dept[keep])
b_rest = cmh_test(admitted[keep], woman[keep], dept[keep], confidence_level=CONFIDENCE)
b_rest_odds_ratio, b_rest_ci = b_rest.odds_ratio, (b_rest.ci_low, b_rest.ci_high)
b_rest_p_bd = breslow_day_test(admitted[keep], woman[keep], dept[keep]).p_value
risk_difference_diff = max(risk_difference_diff, abs(b_rest.risk_difference - b_rest_gap))
print(f"published totals reproduced: {totals_match}")
print(f"admitted: men {100 * admit_men:.1f}%, women {100 * admit_women:.1f}%")
print(f"overall gap {100 * berkeley_overall_gap:+.1f} pp")
print(f"  [{100 * b_overall_ci[0]:+.1f}, {100 * b_overall_ci[1]:+.1f}]; exact {format_p_value(b_p_overall)}\n")
print(f"{'':6}{'admitted':<28}{'gap':>5}  verdict at ±{100 * b_margin:g} pp")
print(f"{'dept':<6}{'men':<14}{'women':<14}{'(pp)':>5}")
for row in departments:
    print(f"  {row['dept']}   {100 * row['rate_men']:4.1f}% of {row['men']:>3}  {100 * row['rate_women']:4.1f}% of "
          f"{row['women']:>3}  {100 * row['gap']:+5.1f}  {VERDICTS[row['verdict']]}")
print(f"\nwithin departments: {100 * berkeley_within_gap:+.1f} pp")
print("odds ratio, women vs men:")
print(f"  faircode    {b_odds_ratio:.2f} [{b_ci[0]:.2f}, {b_ci[1]:.2f}]")
print(f"  statsmodels {b_odds_ratio_sm:.2f} [{b_ci_sm[0]:.2f}, {b_ci_sm[1]:.2f}]")
print(f"CMH: faircode {b_cmh.format_p_value()},")
print(f"  statsmodels p = {b_p_cmh_sm:.3f}")
print("stratified permutation:")
print(f"  faircode, exact p = {b_p_strat:.3f}")
print(f"  by hand ({n_shuffles:,}) p = {b_p_strat_hand:.3f}")
print(f"Breslow-Day {b_bd.format_p_value()}")
print("Fisher's exact test, each department:")
for pair in (departments[:2], departments[2:4], departments[4:]):
    print("  " + ", ".join(f"{row['dept']} {format_p_value(row['p_fisher'])}" for row in pair))
print(f"without {b_largest['dept']}: {100 * b_rest_gap:+.1f} pp, odds ratio")
print(f"  {b_rest_odds_ratio:.2f} [{b_rest_ci[0]:.2f}, {b_rest_ci[1]:.2f}]; Breslow-Day")
print(f"  {format_p_value(b_rest_p_bd)}")

# %% Figure 2
depts = [row["dept"] for row in departments]
x = np.arange(len(depts))
fig, (left, right) = plt.subplots(1, 2, figsize=(10, 4.4))
left.bar(x - width / 2, [row["rate_men"] for row in departments], width, color="#009E73", label="Men")
left.bar(x + width / 2, [row["rate_women"] for row in departments], width, color="#CC79A7", label="Women")
left.axhline(admit_men, color="#009E73", linestyle=":", linewidth=1.5)
left.axhline(admit_women, color="#CC79A7", linestyle=":", linewidth=1.5)
left.set_xticks(x, depts)
left.set_xlabel(f"department (dotted: all {len(depts)} together)")
left.set_ylabel("admitted")
left.yaxis.set_major_formatter(lambda v, _: f"{v:.0%}")
left.set_ylim(0, 1)
left.set_title("Admitted, within each department")
left.legend(loc="upper right")
right.bar(x - width / 2, [row["share_men"] for row in departments], width, color="#009E73", label="Men")
right.bar(x + width / 2, [row["share_women"] for row in departments], width, color="#CC79A7", label="Women")
right.set_xticks(x, [f"{row['dept']}\n{row['admit_rate']:.0%}" for row in departments])
right.set_xlabel("department and its admission rate")
right.set_ylabel("share of the sex's applicants")
right.yaxis.set_major_formatter(lambda v, _: f"{v:.0%}")
right.set_title("Where each sex applied")
right.legend(loc="upper right")
fig.tight_layout()
plt.show()
