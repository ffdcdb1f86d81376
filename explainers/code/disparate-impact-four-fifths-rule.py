# Generated from explainers/disparate-impact-four-fifths-rule.md by `fairsite build`; edit the explainer, not this file.
# Run it from the repository root:  python explainers/code/disparate-impact-four-fifths-rule.py
# %% Approval rates and three ratios
"""Disparate impact ratio of the favourable outcome, its bootstrap interval, and audit size (German Credit)."""
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from fairlearn.metrics import MetricFrame, demographic_parity_ratio
from fairlearn.metrics import selection_rate as fl_selection_rate
from scipy.stats import bootstrap

from faircode import fit_predict, load_audit
from faircode.metrics import disparate_impact_ratio
from faircode.significance import bootstrap_ratio_ci, format_p_value, permutation_test, proportion_ratio_ci

SEED = 20240612
FOUR_FIFTHS = 0.8
audit = load_audit("german-credit")
pred = fit_predict(audit, strategy="S2", model="logistic_regression")
y_true, y_pred = pred.y_true, pred.y_pred  # 1 = rated a bad credit risk (the loan is refused)
is_young = audit.masks["age"][pred.rows] == 1  # under 25
is_older = audit.reference_masks["age"][pred.rows] == 1  # 25 and over
n_test, n_young, n_older = len(pred.rows), int(is_young.sum()), int(is_older.sum())
young, older = audit.group_labels["age"]  # "Under 25", "25 and over"
confidence = 0.95

# The four-fifths rule compares the rates of the *favourable* outcome. Here the positive class is
# the harmful one, so the favourable outcome is its complement: rated a good risk.
approved = 1 - y_pred
flagged_ratio = disparate_impact_ratio(y_true, y_pred, disadvantaged=is_young, advantaged=is_older,
                                       favourable="positive")  # as if being flagged were the good outcome
favourable = disparate_impact_ratio(y_true, y_pred, disadvantaged=is_young, advantaged=is_older,
                                    favourable=audit.manifest.target.favourable)  # "negative": not flagged
flag_young, flag_older = flagged_ratio.disadvantaged.value, flagged_ratio.advantaged.value
approve_young, approve_older = favourable.disadvantaged.value, favourable.advantaged.value
ratio_flagged = flagged_ratio.value  # the ratio of harms
ratio_favourable = favourable.value  # what the four-fifths rule reads, and the results table reports
ratio_flagged_flipped = 1 / ratio_flagged  # older applicants' flag rate over the young's
print(f"under 25: {n_young} rows, flagged {100 * flag_young:.1f}%, approved {100 * approve_young:.1f}%")
print(f"25+:      {n_older} rows, flagged {100 * flag_older:.1f}%, approved {100 * approve_older:.1f}%")
print(f"ratio of approval rates {ratio_favourable:.3f}; of flag rates {ratio_flagged:.3f} "
      f"(the other way round {ratio_flagged_flipped:.3f})")

# %% Checked against fairlearn
# fairlearn's MetricFrame on the same favourable predictions, as an independent computation.
both = is_young | is_older
group = np.where(is_young, "Under 25", "25 and over")[both]
frame = MetricFrame(metrics=fl_selection_rate, y_true=1 - y_true[both], y_pred=approved[both],
                    sensitive_features=group)
fairlearn_ratio = frame.by_group["Under 25"] / frame.by_group["25 and over"]
# fairlearn's own ratio is min / max over the groups: ours when the disadvantaged rate is lower.
fairlearn_dp_ratio = demographic_parity_ratio(1 - y_true[both], approved[both], sensitive_features=group)
print("fairlearn approval rates (%):", (100 * frame.by_group).round(1).to_dict())
print(f"fairlearn ratio {fairlearn_ratio:.4f}, min/max {fairlearn_dp_ratio:.4f}")

# %% Permutation test and bootstrap interval
# The permutation test of equal approval rates (the same p-value as for equal flag rates).
p_value = permutation_test(approved[is_young], approved[is_older])


def bootstrap_ratios(a, b, n_boot, rng):
    """Resample each group's rows with replacement (group sizes fixed); ratio of the means."""
    ratios = np.empty(n_boot)
    for i in range(n_boot):
        resampled_a = a[rng.integers(0, len(a), len(a))]
        resampled_b = b[rng.integers(0, len(b), len(b))]
        ratios[i] = resampled_a.mean() / resampled_b.mean()
    return ratios


rng = np.random.default_rng(SEED)
n_boot = 4000
boot_favourable = bootstrap_ratios(approved[is_young], approved[is_older], n_boot, rng)
boot_flagged = bootstrap_ratios(y_pred[is_young], y_pred[is_older], n_boot, rng)
levels = [(1 - confidence) / 2, (1 + confidence) / 2]
ci_favourable = tuple(float(q) for q in np.quantile(boot_favourable, levels))
ci_flagged = tuple(float(q) for q in np.quantile(boot_flagged, levels))
print(f"permutation test of equal approval rates: {format_p_value(p_value)}")
print(f"approval ratio {ratio_favourable:.3f}, {confidence:.0%} bootstrap interval "
      f"[{ci_favourable[0]:.3f}, {ci_favourable[1]:.3f}]")

# %% Checked against the results file, faircode's bootstrap and SciPy


def tail_shares(draws, low, high):
    """Share of draws below `low` and above `high`, each as (ties excluded, ties included).

    Ratios of counts repeat exactly, so an interval end can sit on a value many draws share;
    the share that agrees with it is then anywhere between the two.
    """
    below = (float(np.mean(draws < low)), float(np.mean(draws <= low)))
    above = (float(np.mean(draws > high)), float(np.mean(draws >= high)))
    return below, above


def ends(interval):
    return f"[{interval[0]:.3f}, {interval[1]:.3f}]"


def shares(pair):
    return f"{100 * pair[0]:.1f}%–{100 * pair[1]:.1f}%"


# Check 1: the results table's ratio and interval are those of the approval rates.
table = pd.read_csv("results/results_fairness.csv")
row = table.query("audit == 'german-credit' and strategy == 'S2' and model == 'logistic_regression'"
                  " and attribute == 'age' and metric == 'disparate_impact_ratio'").iloc[0]
file_gap, file_ci = float(row["gap"]), (float(row["ci_low"]), float(row["ci_high"]))
# The file's interval is a score-based interval (MOVER-R with Wilson limits; no resampling), not a bootstrap.
score_ci = tuple(proportion_ratio_ci(approved[is_young], approved[is_older], confidence_level=confidence))
# Our hand-written bootstrap against the library's bootstrap of the same ratio of flag rates.
lib_resamples = 9999
lib_ci = tuple(bootstrap_ratio_ci(y_pred[is_young], y_pred[is_older], confidence_level=confidence,
                                  n_resamples=lib_resamples, random_state=SEED + 2))
lib_below, lib_above = tail_shares(boot_flagged, *lib_ci)
print(f"results file: ratio {file_gap:.4f}, score interval {ends(file_ci)} (faircode {ends(score_ci)})")
print(f"flag-rate ratio: our bootstrap {ends(ci_flagged)}, faircode's {ends(lib_ci)}")
print(f"  our draws below and above faircode's ends: {shares(lib_below)}, {shares(lib_above)} "
      f"(expected 2.5% each)")

# Check 2: SciPy's percentile bootstrap of the approval-rate ratio.
scipy_res = bootstrap((approved[is_young], approved[is_older]),
                      lambda a, b, axis: a.mean(axis=axis) / b.mean(axis=axis),
                      n_resamples=n_boot, method="percentile", vectorized=True,
                      confidence_level=confidence,
                      rng=np.random.default_rng(SEED + 1))
scipy_ci = (float(scipy_res.confidence_interval.low), float(scipy_res.confidence_interval.high))
scipy_below, scipy_above = tail_shares(boot_favourable, *scipy_ci)
print(f"approval ratio: SciPy {ends(scipy_ci)}")
print(f"  our draws below and above SciPy's ends: {shares(scipy_below)}, {shares(scipy_above)}")

# %% Bigger audits with the same rates
# With the same approval rates, how wide would the interval be on a larger audit?
sizes = []
for scale in (1, 5, 25, 125):
    n_a, n_b = n_young * scale, n_older * scale
    draws_a = rng.binomial(n_a, approve_young, size=20000) / n_a
    draws_b = rng.binomial(n_b, approve_older, size=20000) / n_b
    low, high = np.quantile(draws_a / draws_b, levels)
    sizes.append({"rows": n_a + n_b, "young": n_a, "low": float(low), "high": float(high),
                  "excludes": bool(high < FOUR_FIFTHS or low > FOUR_FIFTHS)})
    print(f"{n_a + n_b:,} rows ({n_a:,} under 25): interval [{low:.2f}, {high:.2f}], "
          f"{'clear of' if sizes[-1]['excludes'] else 'straddles'} the line")
n_file = len(audit.df)  # applicants in the whole German Credit file
print(f"the whole German Credit file: {n_file:,} applicants")

# %% Figure 1: the interval against the line, at this size and larger
fig, (left, right) = plt.subplots(1, 2, figsize=(10, 3.8))
left.hist(boot_favourable, bins=40, color="#7986cb", edgecolor="white")
left.axvspan(*ci_favourable, color="#c5cae9", alpha=0.5, zorder=0,
             label=f"{confidence:.0%} bootstrap interval")
left.axvline(ratio_favourable, color="#283593", linewidth=2, label=f"observed ratio {ratio_favourable:.2f}")
left.axvline(FOUR_FIFTHS, color="#d84315", linestyle="--", linewidth=2, label="four-fifths line")
left.set_xlabel("ratio of approval rates (resampled)")
left.set_ylabel("bootstrap resamples")
left.set_title(f"German Credit test split: {n_young} + {n_older} applicants")
left.set_ylim(0, 1.6 * left.get_ylim()[1])  # headroom: the legend sits above the bars
left.legend(loc="upper left", fontsize="small")
for i, s in enumerate(sizes):
    right.plot([s["low"], s["high"]], [i, i], color="#283593", linewidth=3)
    right.plot(ratio_favourable, i, "o", color="#283593")
right.axvline(FOUR_FIFTHS, color="#d84315", linestyle="--", linewidth=2)
right.set_yticks(range(len(sizes)), [f"{s['rows']:,} rows\n({s['young']:,} under 25)" for s in sizes])
right.set_xlabel(f"{confidence:.0%} interval of the approval-rate ratio")
right.set_title("Same rates, bigger audits")
fig.tight_layout()

# %% Wrong verdicts on a small audit
# How often would a 200-row audit of these group sizes land on the wrong side of four-fifths?
pooled_approval = float(approved[both].mean())
n_sim = 100000
no_gap = (rng.binomial(n_young, pooled_approval, n_sim) / n_young) / (
    rng.binomial(n_older, pooled_approval, n_sim) / n_older)
false_alarm = float(np.mean(no_gap < FOUR_FIFTHS))  # true ratio 1
clear_gap_ratio = 0.7
clear_gap = (rng.binomial(n_young, clear_gap_ratio * approve_older, n_sim) / n_young) / (
    rng.binomial(n_older, approve_older, n_sim) / n_older)
missed = float(np.mean(clear_gap >= FOUR_FIFTHS))  # true ratio 0.7
print(f"true ratio 1: below four-fifths in {false_alarm:.1%}; true ratio {clear_gap_ratio}: "
      f"at or above in {missed:.1%}")

# %% The same ratio on bigger audits
# The same ratio of favourable rates on bigger audits (S2, logistic regression, test split).
others = []
n_boot_others = 2000
for slug, attribute, outcome in (("german-credit", "sex", "rated a good risk"),
                                 ("recidivism-risk", "race", "not flagged as likely to reoffend"),
                                 ("benefits-denial", "sex", "not flagged ineligible")):
    other = audit if slug == "german-credit" else load_audit(slug)
    p = pred if slug == "german-credit" else fit_predict(other, strategy="S2", model="logistic_regression")
    dis = other.masks[attribute][p.rows] == 1
    adv = other.reference_masks[attribute][p.rows] == 1
    fav = disparate_impact_ratio(p.y_true, p.y_pred, disadvantaged=dis, advantaged=adv,
                                 favourable=other.manifest.target.favourable)
    boot = bootstrap_ratios(1 - p.y_pred[dis], 1 - p.y_pred[adv], n_boot_others, rng)
    low, high = np.quantile(boot, levels)
    labels = other.group_labels[attribute]
    others.append({"audit": other.manifest.name, "groups": f"{labels[0]} / {labels[1]}",
                   "outcome": outcome, "rows": int(dis.sum() + adv.sum()),
                   "rate_dis": fav.disadvantaged.value, "rate_adv": fav.advantaged.value,
                   "ratio": fav.value, "low": float(low), "high": float(high)})
    print(f"{others[-1]['audit']}, {others[-1]['groups']}: {others[-1]['outcome']} "
          f"{100 * fav.disadvantaged.value:.1f}% / {100 * fav.advantaged.value:.1f}%, ratio {fav.value:.2f}, "
          f"interval [{low:.2f}, {high:.2f}]")

# "On the two larger audits ... say which side each one is on": both intervals clear the line.
larger_audits_clear_of_line = all(o["high"] < FOUR_FIFTHS or o["low"] > FOUR_FIFTHS for o in others[1:])
