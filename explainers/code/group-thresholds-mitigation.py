# Generated from explainers/group-thresholds-mitigation.md by `fairsite build`; edit the explainer, not this file.
# Run it from the repository root:  python explainers/code/group-thresholds-mitigation.py
# %% One threshold (S2), group thresholds (S3)
"""Group thresholds (S3) against the core model (S2) on Benefits Denial."""
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from fairlearn.metrics import (MetricFrame, false_positive_rate, selection_rate,
                               true_positive_rate)

from faircode import fit_predict, load_audit
from faircode.metrics import accuracy, gap
from faircode.significance import (format_p_value, gap_verdict, gap_verdict_from_counts, permutation_test,
                                   significance_report)

audit = load_audit("benefits-denial")
# S2: one threshold for everyone. S3: the same model, then fairlearn's
# ThresholdOptimizer, which equalises selection rates for the manifest's
# first protected attribute (sex).
before = fit_predict(audit, strategy="S2", model="logistic_regression")
after = fit_predict(audit, strategy="S3", model="logistic_regression")
women = audit.masks["sex"][before.rows] == 1
men = audit.reference_masks["sex"][before.rows] == 1
black = audit.masks["race"][before.rows] == 1
white = audit.reference_masks["race"][before.rows] == 1
n_women, n_men = int(women.sum()), int(men.sum())

# %% Every gap, before and after
METRICS = {
    "demographic_parity_difference": "selection rate",
    "true_positive_rate_difference": "true positive rate",
    "false_positive_rate_difference": "false positive rate",
    "precision_difference": "precision",
    "accuracy_difference": "accuracy",
}


def gaps(pred, disadvantaged, advantaged):
    return {m: gap(m, pred.y_true, pred.y_pred, disadvantaged=disadvantaged,
                   advantaged=advantaged).value
            for m in METRICS}


sex_before, sex_after = gaps(before, women, men), gaps(after, women, men)
race_before, race_after = gaps(before, black, white), gaps(after, black, white)
for m, label in METRICS.items():
    # Gaps in percentage points, as the prose gives them.
    print(f"{label:>19}: women - men {100 * sex_before[m]:+.1f} -> "
          f"{100 * sex_after[m]:+.1f} pp; Black - white "
          f"{100 * race_before[m]:+.1f} -> {100 * race_after[m]:+.1f} pp")

# The names the prose cites.
dp_before = sex_before["demographic_parity_difference"]
dp_after = sex_after["demographic_parity_difference"]
eo_before = sex_before["true_positive_rate_difference"]
eo_after = sex_after["true_positive_rate_difference"]
fpr_before = sex_before["false_positive_rate_difference"]
fpr_after = sex_after["false_positive_rate_difference"]
precision_before = sex_before["precision_difference"]
precision_after = sex_after["precision_difference"]
race_dp_before = race_before["demographic_parity_difference"]
race_dp_after = race_after["demographic_parity_difference"]
rate_women_before = float(before.y_pred[women].mean())
rate_men_before = float(before.y_pred[men].mean())
rate_women_after = float(after.y_pred[women].mean())
rate_men_after = float(after.y_pred[men].mean())
base_women = float(before.y_true[women].mean())
base_men = float(before.y_true[men].mean())
# The lowest score at which each group is flagged under S3 (the figure's left panel).
lowest_flagged_women = float(after.y_score[women & (after.y_pred == 1)].min())
lowest_flagged_men = float(after.y_score[men & (after.y_pred == 1)].min())

# %% Test the remaining gap
alpha = 0.05
report_after = significance_report(after.y_pred[women], after.y_pred[men],
                                   random_state=7)
p_after = report_after.p_value
ci_after = (report_after.ci_low, report_after.ci_high)
ci_level = report_after.confidence_level
# The report names the interval it computed; the prose names it too.
ci_after_method = {"newcombe": "Newcombe's score interval", "percentile": "a percentile bootstrap",
                   "bca": "a BCa bootstrap"}[report_after.ci_method]
p_before = permutation_test(before.y_pred[women], before.y_pred[men])
print(f"after mitigation: gap {100 * report_after.gap:+.1f} pp, 95% {report_after.ci_method} interval "
      f"{100 * report_after.ci_low:+.1f} to {100 * report_after.ci_high:+.1f} pp, {format_p_value(p_after)}")


def summary(v):
    """The numbers of a three-state verdict the prose cites."""
    return {"verdict": v.verdict, "label": v.label, "margin": v.margin_high, "estimate": v.estimate,
            "ci90": (v.equivalence.ci_low, v.equivalence.ci_high), "eq_p_value": v.equivalence.p_value}


# Not significant is not a pass: the verdict at the audit's declared margin (issue 45).
after_v = summary(gap_verdict(after.y_pred[women], after.y_pred[men],
                              margin=audit.manifest.practical_margin.points / 100,
                              names=("women", "men"), outcome="flagged"))
print(f"  at the declared margin of ±{audit.manifest.practical_margin.points:g} pp: {after_v['label']}")

# %% Build checks: by hand, fairlearn, the benchmark
# The same test by hand: shuffle who is a woman and who is a man, and count
# the shuffled gaps at least as extreme.
rng = np.random.default_rng(20240918)
n_shuffles = 4000
pooled = np.concatenate([after.y_pred[women], after.y_pred[men]]).astype(float)
# The first n_women after a shuffle play the women, the rest the men.
shuffled = np.array([rng.permutation(pooled)[:n_women].mean()
                     for _ in range(n_shuffles)])
shuffled_gaps = shuffled - (pooled.sum() - shuffled * n_women) / n_men
n_extreme = int(np.sum(np.abs(shuffled_gaps) >= abs(dp_after) - 1e-12))
p_by_hand = (n_extreme + 1) / (n_shuffles + 1)
print(f"hand-written shuffle test: {format_p_value(p_by_hand, floor=1 / (n_shuffles + 1))} "
      f"(faircode exact: {format_p_value(p_after)})")

# An independent oracle for the gaps: fairlearn's MetricFrame, group by group.
sex_label = np.where(women, "Women", np.where(men, "Men", "other"))
fairlearn_metrics = {"demographic_parity_difference": selection_rate,
                     "true_positive_rate_difference": true_positive_rate,
                     "false_positive_rate_difference": false_positive_rate}
largest_gap_discrepancy = 0.0
for pred, ours in ((before, sex_before), (after, sex_after)):
    frame = MetricFrame(metrics=fairlearn_metrics, y_true=pred.y_true,
                        y_pred=pred.y_pred, sensitive_features=sex_label)
    for m in fairlearn_metrics:
        theirs = frame.by_group.loc["Women", m] - frame.by_group.loc["Men", m]
        largest_gap_discrepancy = max(largest_gap_discrepancy,
                                      abs(theirs - ours[m]))
print(f"largest difference from fairlearn's MetricFrame: "
      f"{100 * largest_gap_discrepancy:.1e} pp")

# The benchmark's table holds the same two gaps (same fit_predict).
table = pd.read_csv("results/results_fairness.csv")
is_row = ((table["audit"] == "benefits-denial")
          & (table["model"] == "logistic_regression")
          & (table["attribute"] == "sex")
          & (table["metric"] == "demographic_parity_difference"))
table_dp_before = float(table.loc[is_row & (table["strategy"] == "S2"), "gap"]
                        .item())
table_dp_after = float(table.loc[is_row & (table["strategy"] == "S3"), "gap"]
                       .item())
# Recidivism Risk's selection-rate gap by race after group thresholds, from its S3 row's counts,
# and its verdict at that audit's declared margin.
rr = table[(table["audit"] == "recidivism-risk") & (table["strategy"] == "S3")
           & (table["model"] == "logistic_regression") & (table["attribute"] == "race")
           & (table["metric"] == "demographic_parity_difference")].iloc[0]
table_rr_dp_after = float(rr["gap"])
rr_after_v = summary(gap_verdict_from_counts(
    round(rr["value_disadvantaged"] * rr["n_disadvantaged"]), int(rr["n_disadvantaged"]),
    round(rr["value_advantaged"] * rr["n_advantaged"]), int(rr["n_advantaged"]),
    margin=load_audit("recidivism-risk").manifest.practical_margin.points / 100))
print(f"Recidivism Risk after group thresholds: {100 * table_rr_dp_after:+.1f} pp, {rr_after_v['label']}")

# %% Figure 1: who is flagged at each score; every gap
fig, axes = plt.subplots(1, 2, figsize=(10.5, 4))
edges = np.linspace(0, 1, 21)
centres = (edges[:-1] + edges[1:]) / 2
for mask, label, colour in ((women, "women", "#ef6c00"),
                            (men, "men", "#5c6bc0")):
    which = np.digitize(after.y_score[mask], edges[1:-1])
    counts = np.bincount(which, minlength=centres.size)
    flagged = np.bincount(which, weights=after.y_pred[mask],
                          minlength=centres.size)
    keep = counts >= 20  # a rate over fewer rows is mostly noise
    axes[0].plot(centres[keep], flagged[keep] / counts[keep], "o-",
                 color=colour, label=f"{label} (S3)")
axes[0].step([0, 0.5, 0.5, 1], [0, 0, 1, 1], where="post", color="0.3",
             linestyle="--", label="S2: one cut-off")
axes[0].set_xlabel("S2 score (probability of income above $50K)")
axes[0].set_ylabel("share flagged")
axes[0].yaxis.set_major_formatter(lambda v, _: f"{v:.0%}")  # percent, as the prose
axes[0].set_title("Group thresholds: who gets flagged at each score")
axes[0].legend(loc="center right")

labels = list(METRICS.values())
y = np.arange(len(labels))
axes[1].barh(y + 0.2, [sex_before[m] * 100 for m in METRICS], height=0.4,
             color="0.7", label="S2 (before)")
axes[1].barh(y - 0.2, [sex_after[m] * 100 for m in METRICS], height=0.4,
             color="#ef6c00", label="S3 (after)")
axes[1].axvline(0, color="0.3", linewidth=1)
axes[1].set_yticks(y, labels)
axes[1].invert_yaxis()
axes[1].set_xlabel("gap, women minus men (pp)")
axes[1].set_title("Every gap for sex, before and after")
axes[1].legend(loc="lower left")
fig.tight_layout()

# For the page's interactive figure: each group's rates when everyone scoring at least t is
# flagged, on a grid of thresholds t; the sliders start at S2's one threshold for everyone.
one_threshold = 0.5
threshold_grid = [round(float(t), 2) for t in np.arange(0.05, 0.96, 0.01)]
threshold_curves = {"thresholds": threshold_grid}
for mask, label in ((women, "women"), (men, "men")):
    score, truth = after.y_score[mask], after.y_true[mask] == 1
    threshold_curves[label] = {
        "selection": [float((score >= t).mean()) for t in threshold_grid],
        "tpr": [float((score[truth] >= t).mean()) for t in threshold_grid],
        "fpr": [float((score[~truth] >= t).mean()) for t in threshold_grid],
    }

# %% Accuracy and changed decisions
accuracy_before = accuracy(before.y_true, before.y_pred).value
accuracy_after = accuracy(after.y_true, after.y_pred).value
accuracy_cost = accuracy_before - accuracy_after
changed = before.y_pred != after.y_pred
share_changed = float(changed.mean())
women_now_flagged = int(np.sum(changed & women & (after.y_pred == 1)))
men_now_cleared = int(np.sum(changed & men & (after.y_pred == 0)))
print(f"accuracy {100 * accuracy_before:.1f}% -> {100 * accuracy_after:.1f}%; "
      f"decisions changed {share_changed:.1%}: {women_now_flagged} women newly flagged, "
      f"{men_now_cleared} men no longer flagged")

# %% Build check: the identity behind the impossibility
# selection rate = base rate x TPR + (1 - base rate) x FPR in every group: with equal TPR and
# FPR, two groups' selection rates differ by (base-rate gap) x (TPR - FPR), zero only when
# TPR = FPR (a classifier no better than chance).
identity_error = 0.0
for pred in (before, after):
    for group in (women, men):
        y_t, y_p = pred.y_true[group], pred.y_pred[group]
        base, tpr, fpr = y_t.mean(), y_p[y_t == 1].mean(), y_p[y_t == 0].mean()
        identity_error = max(identity_error,
                             abs(y_p.mean() - (base * tpr + (1 - base) * fpr)))
print(f"largest departure from the identity: {identity_error:.1e}")
