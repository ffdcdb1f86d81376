# Generated from explainers/calibration-within-groups.md by `fairsite build`; edit the explainer, not this file.
# Run it from the repository root:  python explainers/code/calibration-within-groups.py
# %% COMPAS deciles: calibration within groups
"""Calibration within groups vs error-rate balance (Recidivism Risk: COMPAS scores and our model)."""
import math

import matplotlib.pyplot as plt
import numpy as np
import statsmodels.api as sm
from scipy.stats import chi2, chi2_contingency, norm
from sklearn.calibration import calibration_curve
from statsmodels.stats.contingency_tables import StratifiedTable

from faircode import fit_predict, load_audit
from faircode.data import read_data
from faircode.group_tests import breslow_day_test, cmh_test, stratified_permutation_test
from faircode.metrics import gap, group_outcomes
from faircode.significance import format_p_value, permutation_test

SEED = 20240613
audit = load_audit("recidivism-risk")
is_black_all = audit.masks["race"] == 1  # every row ProPublica's filters keep: COMPAS was not trained on them
is_white_all = audit.reference_masks["race"] == 1
decile = audit.df["decile_score"].to_numpy()
reoffended = np.asarray(audit.y)  # 1 = charged with a new crime within two years
n_black_all, n_white_all = int(is_black_all.sum()), int(is_white_all.sum())
base_black = float(reoffended[is_black_all].mean())
base_white = float(reoffended[is_white_all].mean())
print(f"COMPAS: {n_black_all:,} Black, {n_white_all:,} white; base rates "
      f"{100 * base_black:.1f}% / {100 * base_white:.1f}%")

# Calibration of the COMPAS decile score: the share who reoffended at each score, per group.
deciles = np.arange(1, 11)
by_decile = []
for d in deciles:
    at_d = decile == d
    a, b = reoffended[at_d & is_black_all], reoffended[at_d & is_white_all]
    by_decile.append({"decile": int(d), "n_black": int(a.size), "black": float(a.mean()),
                      "n_white": int(b.size), "white": float(b.mean()),
                      "gap": float(a.mean() - b.mean()), "p": permutation_test(a, b)})
print("decile  Black reoffended   white reoffended   gap      p")
for row in by_decile:
    print(f"{row['decile']:>6}  {100 * row['black']:5.1f}% of {row['n_black']:>4}   "
          f"{100 * row['white']:5.1f}% of {row['n_white']:>4}   {100 * row['gap']:+5.1f} pp  "
          f"{format_p_value(row['p'])}")
calibration_black = [row["black"] for row in by_decile]
calibration_white = [row["white"] for row in by_decile]
ALPHA = 0.05
n_deciles_below_alpha = sum(row["p"] < ALPHA for row in by_decile)
close_band = 0.1  # "similar rates": within ten percentage points
n_close = sum(abs(row["gap"]) < close_band for row in by_decile)
largest_gap_row = max(by_decile, key=lambda row: abs(row["gap"]))
chance_at_least_one = 1 - (1 - ALPHA) ** len(by_decile)  # if the ten tests were independent

# %% One test over all deciles (CMH); build checks
in_pair = is_black_all | is_white_all
cmh = cmh_test(reoffended[in_pair], is_black_all[in_pair].astype(int), decile[in_pair])
p_cmh, cmh_or, cmh_low, cmh_high, cmh_gap = cmh.p_value, cmh.odds_ratio, cmh.ci_low, cmh.ci_high, cmh.risk_difference
cmh_level = cmh.confidence_level
stratified = stratified_permutation_test(reoffended[in_pair], is_black_all[in_pair].astype(int), decile[in_pair])
p_stratified, stratified_gap = stratified.p_value, stratified.statistic
p_breslow_day = breslow_day_test(reoffended[in_pair], is_black_all[in_pair].astype(int), decile[in_pair]).p_value
print(f"CMH: chi2 {cmh.statistic:.2f}, {cmh.format_p_value()}; common odds ratio {cmh_or:.3f} "
      f"[{cmh_low:.3f}, {cmh_high:.3f}]; weighted gap {100 * cmh_gap:+.1f} pp")
print(f"exact stratified permutation test {stratified.format_p_value()} ({stratified.method}); "
      f"Breslow-Day {format_p_value(p_breslow_day)}")

# Checks. By hand: one 2 x 2 table per decile (Black / white x charged again or not).
tables, num, den, gap_num, gap_den = [], 0.0, 0.0, 0.0, 0.0
for d in deciles:
    at_d = decile == d
    a_, b_ = reoffended[at_d & is_black_all], reoffended[at_d & is_white_all]
    t = np.array([[a_.sum(), a_.size - a_.sum()], [b_.sum(), b_.size - b_.sum()]], dtype=float)
    tables.append(t)
    n_d = t.sum()
    num += t[0, 0] * t[1, 1] / n_d          # Mantel and Haenszel (1959): sum a d / n over sum b c / n
    den += t[0, 1] * t[1, 0] / n_d
    weight = a_.size * b_.size / n_d        # the weights of the Mantel-Haenszel risk difference
    gap_num += weight * (a_.mean() - b_.mean())
    gap_den += weight
cmh_hand_diff = max(abs(num / den - cmh_or), abs(gap_num / gap_den - cmh_gap))
# statsmodels' StratifiedTable on the same tables (an independent implementation).
table_sm = StratifiedTable(tables)
null_sm = table_sm.test_null_odds(correction=False)
cmh_statsmodels_diff = max(abs(null_sm.statistic - cmh.statistic), abs(null_sm.pvalue - p_cmh),
                           abs(table_sm.oddsratio_pooled - cmh_or),
                           *np.abs(np.subtract(table_sm.oddsratio_pooled_confint(), (cmh_low, cmh_high))))
print(f"by hand: odds ratio {num / den:.3f}, weighted gap {100 * gap_num / gap_den:+.1f} pp; "
      f"largest difference from statsmodels {cmh_statsmodels_diff:.1e}")

# The weighted gap's interval. faircode's cmh_test gives the gap, not its variance: two variances by
# hand, Sato's (1989; valid for many small strata and for few large ones) and Greenland and
# Robins's (1985; few large strata), for 2 x 2 tables [[a, b], [c, d]] (row 1: Black defendants).
z = norm.ppf(0.975)
sato_p = sato_q = gr = weight_sum = 0.0
for t in tables:
    (a, b), (c, d) = t
    n1, n0, n = a + b, c + d, t.sum()
    weight_sum += n1 * n0 / n
    sato_p += (n1**2 * c - n0**2 * a + n1 * n0 * (n0 - n1) / 2) / n**2
    sato_q += (a * (n0 - c) + c * (n1 - a)) / (2 * n)
    gr += (a * b * n0**3 + c * d * n1**3) / (n1 * n0 * n**2)
se_sato = np.sqrt((cmh_gap * sato_p + sato_q) / weight_sum**2)
se_gr = np.sqrt(gr / weight_sum**2)
cmh_gap_low, cmh_gap_high = float(cmh_gap - z * se_sato), float(cmh_gap + z * se_sato)
cmh_gap_low_gr, cmh_gap_high_gr = float(cmh_gap - z * se_gr), float(cmh_gap + z * se_gr)
print(f"weighted gap {100 * cmh_gap:+.2f} pp, 95% interval (Sato) [{100 * cmh_gap_low:+.2f}, "
      f"{100 * cmh_gap_high:+.2f}] pp; (Greenland-Robins) [{100 * cmh_gap_low_gr:+.2f}, {100 * cmh_gap_high_gr:+.2f}] pp")

# Equal rates in every decile (no common direction assumed): each decile's Pearson chi-squared,
# summed, on one degree of freedom per decile; SciPy's chi2_contingency as the oracle.
heterogeneity_x2, heterogeneity_dof = 0.0, len(tables)
for t in tables:
    expected = t.sum(axis=1, keepdims=True) * t.sum(axis=0, keepdims=True) / t.sum()
    heterogeneity_x2 += float(np.sum((t - expected) ** 2 / expected))
heterogeneity_diff = abs(heterogeneity_x2 - sum(chi2_contingency(t, correction=False)[0] for t in tables))
p_each_decile = float(chi2.sf(heterogeneity_x2, heterogeneity_dof))
n_deciles_same_sign = sum(np.sign(row["gap"]) == np.sign(np.log(cmh_or)) for row in by_decile)
print(f"equal rates in every decile: X2 = {heterogeneity_x2:.1f} on {heterogeneity_dof} dof, "
      f"{format_p_value(p_each_decile)}")

# Build check: scikit-learn's calibration_curve on the COMPAS deciles.

# scikit-learn's calibration_curve on the same data: decile d is the bin [(d-1)/10, d/10).
sklearn_max_difference = 0.0
for in_group, hand in ((is_black_all, calibration_black), (is_white_all, calibration_white)):
    prob_true, _ = calibration_curve(reoffended[in_group], (decile[in_group] - 0.5) / 10,
                                     n_bins=10, strategy="uniform")
    sklearn_max_difference = max(sklearn_max_difference, float(np.abs(prob_true - np.array(hand)).max()))
print(f"COMPAS deciles, largest difference from sklearn's calibration_curve: {sklearn_max_difference:.1e}")

# %% Error rates at ProPublica's cut

# Error-rate balance at ProPublica's cut: "medium" or "high" risk (decile 5 or more) = flagged.
CUT = 5
flagged = (decile >= CUT).astype(np.int8)
# The false positive rate's counts (flagged among those not charged again), for the calculator link.
not_reoffended = reoffended == 0
fp_black, neg_black = int(flagged[is_black_all & not_reoffended].sum()), int((is_black_all & not_reoffended).sum())
fp_white, neg_white = int(flagged[is_white_all & not_reoffended].sum()), int((is_white_all & not_reoffended).sum())
compas = {}
for name in ("precision_difference", "false_positive_rate_difference", "true_positive_rate_difference"):
    g = gap(name, reoffended, flagged, disadvantaged=is_black_all, advantaged=is_white_all)
    compas[name] = g
ppv_black, ppv_white = (compas["precision_difference"].disadvantaged.value,
                        compas["precision_difference"].advantaged.value)
fpr_black, fpr_white = (compas["false_positive_rate_difference"].disadvantaged.value,
                        compas["false_positive_rate_difference"].advantaged.value)
fnr_black = 1 - compas["true_positive_rate_difference"].disadvantaged.value
fnr_white = 1 - compas["true_positive_rate_difference"].advantaged.value
ppv_gap = ppv_black - ppv_white
# Calibration holds decile by decile; PPV averages over the flagged people's deciles.
mean_decile_flagged_black = float(decile[is_black_all & (flagged == 1)].mean())
mean_decile_flagged_white = float(decile[is_white_all & (flagged == 1)].mean())
fpr_gap = fpr_black - fpr_white
fnr_gap = fnr_black - fnr_white
print(f"Black / white: PPV {100 * ppv_black:.1f}% / {100 * ppv_white:.1f}%, "
      f"FPR {100 * fpr_black:.1f}% / {100 * fpr_white:.1f}%, FNR {100 * fnr_black:.1f}% / {100 * fnr_white:.1f}%")
# ProPublica's published table counts every row of the file, before its own filters: the same cut
# on all rows (see the reproduction page).
everyone = read_data(audit.manifest.resolve(audit.manifest.dataset.file), audit.manifest.dataset.parse)
n_rows_all, n_rows_filtered = len(everyone), len(audit.df)
not_charged = everyone["two_year_recid"] == 0
fpr_black_all_rows, fpr_white_all_rows = (
    float((everyone.loc[not_charged & (everyone["race"] == race), "decile_score"] >= CUT).mean())
    for race in ("African-American", "Caucasian"))
print(f"all {n_rows_all:,} rows, before ProPublica's filters: FPR {100 * fpr_black_all_rows:.2f}% / "
      f"{100 * fpr_white_all_rows:.2f}%")

# %% Build checks: Chouldechova's identity; shuffle tests by hand


def implied_fpr(base, ppv, fnr):
    """Chouldechova (2017), eq. 2.6: FPR = p / (1 - p) * (1 - PPV) / PPV * (1 - FNR)."""
    return base / (1 - base) * (1 - ppv) / ppv * (1 - fnr)


identity_error = max(abs(implied_fpr(base_black, ppv_black, fnr_black) - fpr_black),
                     abs(implied_fpr(base_white, ppv_white, fnr_white) - fpr_white))
# Give white defendants the Black group's PPV and FNR: their base rate alone sets their FPR.
fpr_white_if_matched = implied_fpr(base_white, ppv_black, fnr_black)
fpr_gap_if_matched = fpr_black - fpr_white_if_matched
print(f"identity holds to {identity_error:.1e}; white FPR if PPV and FNR matched the Black group's: "
      f"{100 * fpr_white_if_matched:.1f}%")

# Permutation tests, by hand and exact.


def shuffle_test(a, b, n_shuffles, rng):
    """Two-sided permutation test by hand: shuffle the pooled outcomes, re-split, compare."""
    pooled = np.concatenate([a, b])
    observed = a.mean() - b.mean()
    n_extreme = 0
    for _ in range(n_shuffles):
        shuffled = rng.permutation(pooled)
        n_extreme += abs(shuffled[: len(a)].mean() - shuffled[len(a):].mean()) >= abs(observed) - 1e-12
    return (n_extreme + 1) / (n_shuffles + 1)


rng = np.random.default_rng(SEED)
n_shuffles = 2000
p_hand, p_lib = {}, {}
for rate_name in ("precision", "false_positive_rate", "true_positive_rate"):
    o = group_outcomes(rate_name, reoffended, flagged, disadvantaged=is_black_all, advantaged=is_white_all)
    p_hand[rate_name] = shuffle_test(o.a, o.b, n_shuffles, rng)
    p_lib[rate_name] = permutation_test(o.a, o.b)
    print(f"{rate_name}: by hand {format_p_value(p_hand[rate_name], floor=1 / (n_shuffles + 1))}, "
          f"faircode exact {format_p_value(p_lib[rate_name])}")
p_ppv_hand, p_ppv = p_hand["precision"], p_lib["precision"]
p_fpr_hand, p_fpr = p_hand["false_positive_rate"], p_lib["false_positive_rate"]
p_fnr_hand, p_fnr = p_hand["true_positive_rate"], p_lib["true_positive_rate"]


def mc_digits(p, m):
    """Decimals a Monte Carlo p from m shuffles supports: the last digit at least half its standard error."""
    return max(0, math.floor(-math.log10(math.sqrt(max(p * (1 - p), 1 / m) / m) / 2)))


p_ppv_hand_digits, p_fpr_hand_digits, p_fnr_hand_digits = (mc_digits(q, n_shuffles) for q in (p_ppv_hand, p_fpr_hand, p_fnr_hand))
# At the floor 1/(m + 1) no shuffle was as extreme: the prose says so rather than print a rounded p.
fpr_fnr_hand_at_floor = max(p_fpr_hand, p_fnr_hand) <= 1 / (n_shuffles + 1) + 1e-15

# %% Our own model: calibration and error rates
# Our own model (S2 features, logistic regression) on the test split: its score y_score, binned.
pred = fit_predict(audit, strategy="S2", model="logistic_regression")
is_black = is_black_all[pred.rows]
is_white = is_white_all[pred.rows]
n_black, n_white = int(is_black.sum()), int(is_white.sum())
N_BINS = 10
bins = np.minimum((pred.y_score * N_BINS).astype(int), N_BINS - 1)
model_curves = {}
for label, in_group in (("Black", is_black), ("White", is_white)):
    counts = np.bincount(bins[in_group], minlength=N_BINS)
    hits = np.bincount(bins[in_group], weights=pred.y_true[in_group], minlength=N_BINS)
    scores = np.bincount(bins[in_group], weights=pred.y_score[in_group], minlength=N_BINS)
    kept = counts > 0
    model_curves[label] = {"rate": hits[kept] / counts[kept], "score": scores[kept] / counts[kept],
                           "count": counts[kept]}
    prob_true, prob_pred = calibration_curve(pred.y_true[in_group], pred.y_score[in_group],
                                             n_bins=N_BINS, strategy="uniform")
    sklearn_max_difference = max(sklearn_max_difference,
                                 float(np.abs(prob_true - model_curves[label]["rate"]).max()),
                                 float(np.abs(prob_pred - model_curves[label]["score"]).max()))
print(f"largest difference from sklearn's calibration_curve: {sklearn_max_difference:.2e}")

# Kleinberg et al.'s balance conditions: the average score of people who did not reoffend
# (negative class) and of people who did (positive class) should not depend on the group.
mean_score_neg_black = float(pred.y_score[is_black & (pred.y_true == 0)].mean())
mean_score_neg_white = float(pred.y_score[is_white & (pred.y_true == 0)].mean())
mean_score_pos_black = float(pred.y_score[is_black & (pred.y_true == 1)].mean())
mean_score_pos_white = float(pred.y_score[is_white & (pred.y_true == 1)].mean())
# Calibration in the large: average score against the share who reoffended, per group.
mean_score_black = float(pred.y_score[is_black].mean())
mean_score_white = float(pred.y_score[is_white].mean())
model_base_black = float(pred.y_true[is_black].mean())
model_base_white = float(pred.y_true[is_white].mean())
# Is the model's miscalibration different between the groups? Residual = outcome - score; a
# calibrated score has residuals averaging zero in each group. Continuous outcomes: Monte Carlo.
residual_black = pred.y_true[is_black] - pred.y_score[is_black]
residual_white = pred.y_true[is_white] - pred.y_score[is_white]
residual_gap = float(residual_black.mean() - residual_white.mean())
p_residual_hand = shuffle_test(residual_black, residual_white, n_shuffles, rng)
p_residual_hand_digits = mc_digits(p_residual_hand, n_shuffles)
p_residual = permutation_test(residual_black, residual_white, n_permutations=n_shuffles,
                              random_state=SEED)
p_residual_digits = mc_digits(p_residual, n_shuffles)
print(f"calibration gap {100 * residual_gap:+.1f} pp: by hand "
      f"{format_p_value(p_residual_hand, floor=1 / (n_shuffles + 1))}, faircode Monte Carlo "
      f"{format_p_value(p_residual, floor=1 / (n_shuffles + 1))}")
# Calibration in the large for white defendants: if the score were each person's true risk, the
# sum of (outcome - score) would have mean 0 and variance sum of score (1 - score): a score test.
score_w, y_w = pred.y_score[is_white], pred.y_true[is_white]
white_overstatement = float(score_w.mean() - y_w.mean())
z_white = float(np.sum(y_w - score_w) / np.sqrt(np.sum(score_w * (1 - score_w))))
p_white_calibration = float(2 * norm.sf(abs(z_white)))
# Oracle: statsmodels' GLM score test that the intercept is 0 with the score's log-odds as offset.
offset_glm = sm.GLM(y_w, np.ones((y_w.size, 1)), family=sm.families.Binomial(),
                    offset=np.log(score_w / (1 - score_w)))
white_calibration_diff = abs(float(offset_glm.score(np.zeros(1))[0]) / np.sqrt(
    float(-offset_glm.hessian(np.zeros(1))[0, 0])) - z_white)
print(f"white defendants: mean score {100 * white_overstatement:+.1f} pp above their reoffence rate, "
      f"z = {z_white:.2f}, {format_p_value(p_white_calibration)}")
print(f"model, Black / white: mean score {100 * mean_score_black:.1f}% / {100 * mean_score_white:.1f}%, "
      f"reoffended {100 * model_base_black:.1f}% / {100 * model_base_white:.1f}%")
print(f"  mean score of non-reoffenders {100 * mean_score_neg_black:.1f}% / {100 * mean_score_neg_white:.1f}%, "
      f"of reoffenders {100 * mean_score_pos_black:.1f}% / {100 * mean_score_pos_white:.1f}%")

# The model's error rates at its own threshold (0.5).
model_rates = {}
for name in ("precision_difference", "false_positive_rate_difference", "true_positive_rate_difference"):
    model_rates[name] = gap(name, pred.y_true, pred.y_pred, disadvantaged=is_black, advantaged=is_white)
m_ppv_black = model_rates["precision_difference"].disadvantaged.value
m_ppv_white = model_rates["precision_difference"].advantaged.value
m_fpr_black = model_rates["false_positive_rate_difference"].disadvantaged.value
m_fpr_white = model_rates["false_positive_rate_difference"].advantaged.value
m_fnr_black = 1 - model_rates["true_positive_rate_difference"].disadvantaged.value
m_fnr_white = 1 - model_rates["true_positive_rate_difference"].advantaged.value
print(f"model at 0.5, Black / white: PPV {100 * m_ppv_black:.1f}% / {100 * m_ppv_white:.1f}%, "
      f"FPR {100 * m_fpr_black:.1f}% / {100 * m_fpr_white:.1f}%, FNR {100 * m_fnr_black:.1f}% / {100 * m_fnr_white:.1f}%")

# %% Figures 1 and 2

COLOURS = {"Black": "#5c6bc0", "White": "#ef6c00"}
fig, (left, right) = plt.subplots(1, 2, figsize=(10, 4.2))
for label, rates, n in (("Black", calibration_black, [r["n_black"] for r in by_decile]),
                        ("White", calibration_white, [r["n_white"] for r in by_decile])):
    left.plot(deciles, rates, "-", color=COLOURS[label], linewidth=1.5)
    left.scatter(deciles, rates, s=np.array(n) / 4, color=COLOURS[label], alpha=0.8,
                 label=f"{label} ({sum(n):,} defendants)")
left.set_xticks(deciles)
left.set_xlabel("COMPAS decile score")
left.set_ylabel("charged again within two years")
left.yaxis.set_major_formatter(lambda v, _: f"{v:.0%}")  # percent, as the prose
left.set_ylim(0, 1)
left.set_title("COMPAS, all defendants (dot size = defendants)")
left.legend(loc="upper left")
right.plot([0, 1], [0, 1], ":", color="grey", label="perfect calibration")
# The alt text's "white defendants' points mostly lie below the diagonal in the middle of the range".
middle = (model_curves["White"]["score"] > 0.3) & (model_curves["White"]["score"] < 0.7)
white_mostly_below = bool(np.mean(model_curves["White"]["rate"][middle] < model_curves["White"]["score"][middle]) > 0.5)
for label, curve in model_curves.items():
    right.plot(curve["score"], curve["rate"], "-", color=COLOURS[label], linewidth=1.5)
    right.scatter(curve["score"], curve["rate"], s=curve["count"] / 2, color=COLOURS[label], alpha=0.8,
                  label=f"{label} ({curve['count'].sum():,} test rows)")
right.set_xlabel("model score (mean per tenth of its range)")
right.set_ylabel("charged again within two years")
right.yaxis.set_major_formatter(lambda v, _: f"{v:.0%}")
right.set_xlim(0, 1)
right.set_ylim(0, 1)
right.set_title("Our model (S2 features), test split")
right.legend(loc="upper left")
fig.tight_layout()

# Figure 2: error rates at the cut.
fig, axes = plt.subplots(1, 2, figsize=(10, 3.6), sharey=True)
names = ["reoffended among\nflagged (PPV)", "false positive\nrate", "false negative\nrate"]
x = np.arange(len(names))
for ax, black, white, title in (
        (axes[0], (ppv_black, fpr_black, fnr_black), (ppv_white, fpr_white, fnr_white),
         f"COMPAS, flagged = decile {CUT} or more"),
        (axes[1], (m_ppv_black, m_fpr_black, m_fnr_black), (m_ppv_white, m_fpr_white, m_fnr_white),
         "Our model, flagged = score above 0.5")):
    ax.bar(x - 0.19, black, width=0.38, color=COLOURS["Black"], label="Black")
    ax.bar(x + 0.19, white, width=0.38, color=COLOURS["White"], label="White")
    for xi, (vb, vw) in enumerate(zip(black, white)):
        ax.text(xi - 0.19, vb + 0.02, f"{vb:.0%}", ha="center")
        ax.text(xi + 0.19, vw + 0.02, f"{vw:.0%}", ha="center")
    ax.set_xticks(x, names)
    ax.set_ylim(0, 1)
    ax.set_title(title)
axes[0].set_ylabel("rate")
axes[0].yaxis.set_major_formatter(lambda v, _: f"{v:.0%}")
axes[0].legend()
fig.tight_layout()
