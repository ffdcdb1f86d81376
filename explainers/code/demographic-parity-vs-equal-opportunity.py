# Generated from explainers/demographic-parity-vs-equal-opportunity.md by `fairsite build`; edit the explainer, not this file.
# Run it from the repository root:  python explainers/code/demographic-parity-vs-equal-opportunity.py
# %% Base rates and the three gaps
"""Three gaps for one model: selection rate, true positive rate, false positive rate (Recidivism Risk)."""
import matplotlib.pyplot as plt
import numpy as np
from fairlearn.metrics import MetricFrame
from fairlearn.metrics import false_positive_rate as fl_false_positive_rate
from fairlearn.metrics import selection_rate as fl_selection_rate
from fairlearn.metrics import true_positive_rate as fl_true_positive_rate

from faircode import fit_predict, load_audit
from faircode.metrics import gap, group_outcomes
from faircode.significance import format_p_value, permutation_test

SEED = 20240611
audit = load_audit("recidivism-risk")
print(audit.missing_summary())  # rows dropped for a missing target or race/sex (the manifest says)
pred = fit_predict(audit, strategy="S2", model="logistic_regression")
y_true, y_pred, y_score = pred.y_true, pred.y_pred, pred.y_score

# Test-split rows of each group; other races are left out of this comparison.
is_black = audit.masks["race"][pred.rows] == 1
is_white = audit.reference_masks["race"][pred.rows] == 1
n_black, n_white = int(is_black.sum()), int(is_white.sum())
base_black = float(y_true[is_black].mean())  # share who were in fact charged again
base_white = float(y_true[is_white].mean())
print(f"test split: {n_black:,} Black, {n_white:,} white defendants; base rates "
      f"{100 * base_black:.1f}% and {100 * base_white:.1f}%")


# Each gap compares one rate; the rate is a mean over different rows.
GAPS = {
    "selection_rate": "demographic_parity_difference",  # everyone
    "true_positive_rate": "true_positive_rate_difference",  # people who did reoffend
    "false_positive_rate": "false_positive_rate_difference",  # people who did not
}


def three_gaps(flagged):
    """Each group's three rates and the gaps (Black minus white) for a 0/1 flag per row."""
    out = {}
    for rate_name, gap_name in GAPS.items():
        g = gap(gap_name, y_true, flagged, disadvantaged=is_black, advantaged=is_white)
        out[rate_name] = {"black": g.disadvantaged.value, "white": g.advantaged.value, "gap": g.value}
    return out


model = three_gaps(y_pred)
sr_black, sr_white = model["selection_rate"]["black"], model["selection_rate"]["white"]
tpr_black, tpr_white = model["true_positive_rate"]["black"], model["true_positive_rate"]["white"]
fpr_black, fpr_white = model["false_positive_rate"]["black"], model["false_positive_rate"]["white"]
dp_gap = model["selection_rate"]["gap"]
eo_gap = model["true_positive_rate"]["gap"]
fpr_gap = model["false_positive_rate"]["gap"]
for rate_name, r in model.items():
    print(f"{rate_name:20s} Black {100 * r['black']:5.1f}%  white {100 * r['white']:5.1f}%  "
          f"gap {100 * r['gap']:+.1f} pp")

# Equal opportunity is defined on the favourable outcome (Hardt et al. 2016), which the manifest
# declares: here not being flagged, so it compares the rate of not being flagged among people
# who did not reoffend (the true negative rate).
favourable = audit.manifest.target.favourable
eod = gap("equal_opportunity_difference", y_true, y_pred, disadvantaged=is_black, advantaged=is_white,
          favourable=favourable)
eod_gap, eod_rate = eod.value, eod.disadvantaged.metric
print(f"favourable outcome: {favourable}; equal opportunity difference ({eod_rate}) {100 * eod_gap:+.1f} pp")

# %% Checked against fairlearn's MetricFrame
# The same rates by group from fairlearn's MetricFrame, an independent implementation.
both = is_black | is_white
frame = MetricFrame(
    metrics={"selection_rate": fl_selection_rate, "true_positive_rate": fl_true_positive_rate,
             "false_positive_rate": fl_false_positive_rate},
    y_true=y_true[both], y_pred=y_pred[both],
    sensitive_features=np.where(is_black, "Black", "White")[both],
)
print("fairlearn MetricFrame, rates by group (%):")
print((100 * frame.by_group).round(1))
fairlearn_max_difference = max(
    abs(frame.by_group.loc[label, rate_name] - model[rate_name][side])
    for rate_name in GAPS for label, side in (("Black", "black"), ("White", "white"))
)
print(f"largest difference from faircode's rates: {fairlearn_max_difference:.1e}")

# %% Permutation tests, by hand and exact


def shuffle_test(a, b, n_shuffles, rng):
    """Two-sided permutation test by hand: shuffle the pooled outcomes, re-split, compare."""
    pooled = np.concatenate([a, b])
    observed = a.mean() - b.mean()
    n_extreme = 0
    for _ in range(n_shuffles):
        shuffled = rng.permutation(pooled)
        shuffled_gap = shuffled[: len(a)].mean() - shuffled[len(a):].mean()
        n_extreme += abs(shuffled_gap) >= abs(observed) - 1e-12  # a tie counts as extreme
    return (n_extreme + 1) / (n_shuffles + 1)


rng = np.random.default_rng(SEED)
n_shuffles = 2000
p_by_hand, p_library = {}, {}
for rate_name in GAPS:
    # The test runs on the rows the rate is defined on (e.g. only people who reoffended for the TPR).
    outcomes = group_outcomes(rate_name, y_true, y_pred, disadvantaged=is_black, advantaged=is_white)
    p_by_hand[rate_name] = shuffle_test(outcomes.a, outcomes.b, n_shuffles, rng)
    p_library[rate_name] = permutation_test(outcomes.a, outcomes.b)  # exact for 0/1 outcomes
    # A hand-written p at its floor prints "p = 1/(m + 1)": the Monte Carlo p-value itself, written as a fraction.
    print(f"{rate_name:20s} by hand {format_p_value(p_by_hand[rate_name], floor=1 / (n_shuffles + 1))}; "
          f"faircode exact {format_p_value(p_library[rate_name])}")
p_dp_hand, p_dp = p_by_hand["selection_rate"], p_library["selection_rate"]
p_eo_hand, p_eo = p_by_hand["true_positive_rate"], p_library["true_positive_rate"]
p_fpr_hand, p_fpr = p_by_hand["false_positive_rate"], p_library["false_positive_rate"]

# %% How much of the gap do the base rates explain?

# A selection rate is a mix of the two error rates, weighted by the base rate:
#   selection rate = base rate * TPR + (1 - base rate) * FPR.
# Black defendants' selection rate if the model made the white group's errors: the part of the
# gap that the base rates alone explain.
identity_error = max(abs(sr_black - (base_black * tpr_black + (1 - base_black) * fpr_black)),
                     abs(sr_white - (base_white * tpr_white + (1 - base_white) * fpr_white)))
sr_black_with_white_errors = base_black * tpr_white + (1 - base_black) * fpr_white
gap_from_base_rates = sr_black_with_white_errors - sr_white
gap_from_error_rates = dp_gap - gap_from_base_rates
share_from_base_rates = gap_from_base_rates / dp_gap
# The other reference: the white group's selection rate with the Black group's error rates.
sr_white_with_black_errors = base_white * tpr_black + (1 - base_white) * fpr_black
gap_from_base_rates_b = sr_black - sr_white_with_black_errors
gap_from_error_rates_b = dp_gap - gap_from_base_rates_b
share_from_base_rates_b = gap_from_base_rates_b / dp_gap
print(f"white group's error rates held: base rates {100 * gap_from_base_rates:+.1f} pp "
      f"({share_from_base_rates:.0%}), error rates {100 * gap_from_error_rates:+.1f} pp")
print(f"Black group's error rates held: base rates {100 * gap_from_base_rates_b:+.1f} pp "
      f"({share_from_base_rates_b:.0%}), error rates {100 * gap_from_error_rates_b:+.1f} pp")

# %% Two thought experiments: a perfect predictor, equal selection rates
# Thought experiment 1: a perfect predictor flags exactly the people who reoffended.
perfect = three_gaps(y_true)
perfect_dp_gap = perfect["selection_rate"]["gap"]
print("perfect predictor, gaps:", ", ".join(f"{k} {100 * v['gap']:+.1f} pp" for k, v in perfect.items()))

# Thought experiment 2: per-group score thresholds that flag the same share of each group
# (demographic parity by construction), at the model's overall selection rate.
target_rate = float(y_pred[both].mean())
equal_sr = np.zeros_like(y_pred)
for in_group in (is_black, is_white):
    cut = np.quantile(y_score[in_group], 1 - target_rate)
    equal_sr[in_group] = (y_score[in_group] > cut).astype(y_pred.dtype)
parity = three_gaps(equal_sr)
parity_sr_black, parity_sr_white = parity["selection_rate"]["black"], parity["selection_rate"]["white"]
parity_tpr_black, parity_tpr_white = parity["true_positive_rate"]["black"], parity["true_positive_rate"]["white"]
parity_fpr_black, parity_fpr_white = parity["false_positive_rate"]["black"], parity["false_positive_rate"]["white"]
parity_eo_gap, parity_fpr_gap = parity["true_positive_rate"]["gap"], parity["false_positive_rate"]["gap"]
print("equal selection rates:")
for rate_name, r in parity.items():
    print(f"  {rate_name:20s} Black {100 * r['black']:5.1f}%  white {100 * r['white']:5.1f}%  "
          f"gap {100 * r['gap']:+.1f} pp")

# %% Figure 1: the three rates under three ways of flagging
fig, axes = plt.subplots(1, 3, figsize=(10, 3.8), sharey=True)
panels = [(model, "The model (S2 features)"), (perfect, "Perfect prediction"),
          (parity, "Equal selection rates")]
labels = ["selection\nrate", "true\npositive\nrate", "false\npositive\nrate"]
x = np.arange(len(labels))
for ax, (rates, title) in zip(axes, panels):
    black = [rates[r]["black"] for r in GAPS]
    white = [rates[r]["white"] for r in GAPS]
    ax.bar(x - 0.19, black, width=0.38, color="#5c6bc0", label=f"Black ({n_black} test rows)")
    ax.bar(x + 0.19, white, width=0.38, color="#ffb74d", label=f"White ({n_white} test rows)")
    for xi, (vb, vw) in enumerate(zip(black, white)):
        ax.text(xi, max(vb, vw) + 0.03, f"{100 * (vb - vw):+.0f} pp", ha="center")
    ax.set_xticks(x, labels)
    ax.set_ylim(0, 1.12)
    ax.set_title(title)
axes[0].set_ylabel("rate")
axes[0].yaxis.set_major_formatter(lambda v, _: f"{v:.0%}")  # percent, as the prose
axes[0].legend(loc="upper left")
fig.suptitle("Recidivism Risk, test split: three ways of flagging\n"
             "(gap above each pair = Black minus white, percentage points)")
fig.tight_layout()

# %% Other audits and attributes
# The same three gaps on the other attributes of the two audits (S2, logistic regression).
table = []
for slug, attribute in (("recidivism-risk", "race"), ("recidivism-risk", "sex"),
                        ("benefits-denial", "sex"), ("benefits-denial", "race")):
    other = audit if slug == "recidivism-risk" else load_audit(slug)
    p = pred if slug == "recidivism-risk" else fit_predict(other, strategy="S2", model="logistic_regression")
    dis = other.masks[attribute][p.rows] == 1
    adv = other.reference_masks[attribute][p.rows] == 1
    row = {"audit": other.manifest.name, "groups": f"{other.group_labels[attribute][0]} vs {other.group_labels[attribute][1]}",
           "base_dis": float(p.y_true[dis].mean()), "base_adv": float(p.y_true[adv].mean())}
    for rate_name, gap_name in GAPS.items():
        g = gap(gap_name, p.y_true, p.y_pred, disadvantaged=dis, advantaged=adv)
        row[gap_name] = g.value
        row[rate_name + "_adv"] = g.advantaged.value
        row[rate_name + "_dis"] = g.disadvantaged.value
    # The part of the selection-rate gap left if both groups had the advantaged group's errors.
    row["from_base_rates"] = (row["base_dis"] * row["true_positive_rate_adv"]
                              + (1 - row["base_dis"]) * row["false_positive_rate_adv"]
                              - row["selection_rate_adv"])
    # ... and if both groups had the disadvantaged group's errors.
    row["from_base_rates_dis"] = (row["selection_rate_dis"]
                                  - row["base_adv"] * row["true_positive_rate_dis"]
                                  - (1 - row["base_adv"]) * row["false_positive_rate_dis"])
    row["share_adv"] = row["from_base_rates"] / row["demographic_parity_difference"]
    row["share_dis"] = row["from_base_rates_dis"] / row["demographic_parity_difference"]
    table.append(row)
    print(f"{row['audit']}, {row['groups']}: base rates {100 * row['base_dis']:.1f}% vs "
          f"{100 * row['base_adv']:.1f}%")
    print(f"  gaps: selection {100 * row['demographic_parity_difference']:+.1f} pp, "
          f"TPR {100 * row['true_positive_rate_difference']:+.1f} pp, "
          f"FPR {100 * row['false_positive_rate_difference']:+.1f} pp; from base rates "
          f"{100 * row['from_base_rates']:+.1f} or {100 * row['from_base_rates_dis']:+.1f} pp")

signs_agree = all(len({np.sign(r[g]) for g in GAPS.values()}) == 1 for r in table)
