# Generated from explainers/proxies-dropping-protected-column.md by `fairsite build`; edit the explainer, not this file.
# Run it from the repository root:  python explainers/code/proxies-dropping-protected-column.py
# %% The gap for three feature sets
"""Proxies: how well the features a model keeps can stand in for sex."""
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from scipy.special import logsumexp
from scipy.stats import hypergeom, rankdata
from sklearn.metrics import roc_auc_score

from faircode import fit_predict, load_audit
from faircode.models import build_model
from faircode.significance import format_p_value, permutation_test
from faircode.strategies import encode_features, feature_columns

audit = load_audit("benefits-denial")
seed = audit.manifest.random_state
is_woman = audit.masks["sex"]          # 1 = woman, 0 = man
is_man = audit.reference_masks["sex"]

# 1. The gap in flag rates for three feature sets.
strategies = {"S0": "all features", "S1": "no sex or race column",
              "S2": "core features"}
flag_gap = {}
for strategy in strategies:
    pred = fit_predict(audit, strategy=strategy, model="logistic_regression")
    women, men = is_woman[pred.rows] == 1, is_man[pred.rows] == 1
    difference = pred.y_pred[women].mean() - pred.y_pred[men].mean()
    flag_gap[strategy] = float(difference)
    print(f"{strategy}: flag rate women {100 * pred.y_pred[women].mean():.1f}%, men "
          f"{100 * pred.y_pred[men].mean():.1f}%, gap {100 * difference:+.1f} pp")
    if strategy == "S2":
        flags_women, flags_men = pred.y_pred[women], pred.y_pred[men]
share_of_gap_left = flag_gap["S2"] / flag_gap["S1"]
test_y = audit.y[audit.test]
base_women = float(test_y[is_woman[audit.test] == 1].mean())
base_men = float(test_y[is_man[audit.test] == 1].mean())
print(f"S2 keeps {share_of_gap_left:.0%} of S1's gap; base rates (income above $50K): "
      f"women {100 * base_women:.1f}%, men {100 * base_men:.1f}%")


# %% A probe: how well do the kept features predict sex?
# 2. How well do the kept features predict sex? Fit a probe on the training
#    rows, score the test rows, read the ROC AUC (0.5 = a coin toss,
#    1 = perfect).
def sex_auc(columns):
    X = encode_features(audit.df, columns)
    probe = build_model("logistic_regression", seed)
    probe.fit(X.iloc[audit.train], is_woman[audit.train])
    score = probe.predict_proba(X.iloc[audit.test])[:, 1]
    return score, roc_auc_score(is_woman[audit.test], score)


def auc_by_hand(labels, score):
    """Mann-Whitney: chance a random woman outscores a random man.

    Ties count half: rankdata gives tied scores their average rank.
    """
    ranks = rankdata(score)
    n_pos, n_neg = int(labels.sum()), int((1 - labels).sum())
    rank_sum = ranks[labels == 1].sum()
    return (rank_sum - n_pos * (n_pos + 1) / 2) / (n_pos * n_neg)


score_s1, auc_s1 = sex_auc(feature_columns(audit, "S1"))
score_s2, auc_s2 = sex_auc(feature_columns(audit, "S2"))
truth = is_woman[audit.test]
auc_s1_by_hand = auc_by_hand(truth, score_s1)
auc_s2_by_hand = auc_by_hand(truth, score_s2)
print(f"predicting sex: AUC {auc_s1:.4f} from S1's features, "
      f"{auc_s2:.4f} from S2's (by hand: {auc_s1_by_hand:.4f}, {auc_s2_by_hand:.4f})")


# %% Standard errors of the AUC, checked against a bootstrap
def auc_standard_error(labels, score):
    """DeLong, DeLong and Clarke-Pearson's (1988) standard error of an AUC over these rows.

    Each woman's placement is the share of men she outscores (ties half), each man's the share
    of women who outscore him; the AUC is their mean, and its variance is the sum of the two
    placement variances over the group sizes. Midranks give the placements without pairs.
    """
    pos, neg = score[labels == 1], score[labels == 0]
    all_ranks = rankdata(np.concatenate([pos, neg]))
    placement_pos = (all_ranks[:pos.size] - rankdata(pos)) / neg.size
    placement_neg = 1 - (all_ranks[pos.size:] - rankdata(neg)) / pos.size
    variance = (placement_pos.var(ddof=1) / pos.size
                + placement_neg.var(ddof=1) / neg.size)
    return float(np.sqrt(variance))


auc_s1_se = auc_standard_error(truth, score_s1)
auc_s2_se = auc_standard_error(truth, score_s2)
# The formula against a bootstrap of the test rows (women and men resampled separately).
rng = np.random.default_rng(seed)
women_rows, men_rows = np.flatnonzero(truth == 1), np.flatnonzero(truth == 0)
boot_aucs = []
for _ in range(200):
    rows_b = np.concatenate([rng.choice(women_rows, women_rows.size),
                             rng.choice(men_rows, men_rows.size)])
    boot_aucs.append(roc_auc_score(truth[rows_b], score_s1[rows_b]))
auc_s1_se_boot = float(np.std(boot_aucs, ddof=1))
print(f"S1 probe AUC standard error: DeLong {auc_s1_se:.4f}, "
      f"bootstrap {auc_s1_se_boot:.4f}")

# %% Which single columns give sex away?
core = feature_columns(audit, "S2")
single = []
for column in ["relationship", "marital_status", "occupation", "hours_per_week",
               "education_num", "age", "workclass", "native_country"]:
    _, auc = sex_auc([column])
    single.append({"column": column, "auc": float(auc),
                   "kept_in_s2": column in core})
single.sort(key=lambda r: -r["auc"])
best_proxy = single[0]
best_core = next(r for r in single if r["kept_in_s2"])
for r in single:
    kept = "  (kept in S2)" if r["kept_in_s2"] else ""
    print(f"  {r['column']:>15}: AUC {r['auc']:.3f}{kept}")

# %% Checked: S2's p-value against SciPy's hypergeometric sum
# 3. Is S2's remaining gap more than chance? faircode's exact test against
#    SciPy's hypergeometric distribution, summed by hand over every
#    relabelling at least as extreme.
p_library = permutation_test(flags_women, flags_men)
n_a, n_all = flags_women.size, flags_women.size + flags_men.size
k, x_obs = int(flags_women.sum() + flags_men.sum()), int(flags_women.sum())
x = np.arange(max(0, n_a - (n_all - k)), min(n_a, k) + 1)
as_extreme = np.abs(x * n_all - k * n_a) >= abs(x_obs * n_all - k * n_a)
log_pmf = hypergeom.logpmf(x, n_all, k, n_a)
p_scipy = float(np.exp(logsumexp(log_pmf[as_extreme])))
print(f"S2 gap: faircode {format_p_value(p_library)}, SciPy {format_p_value(p_scipy)}")

# %% Checked: the run's gaps are the benchmark's rows
# The run's gaps against the benchmark's rows.
table = pd.read_csv("results/results_fairness.csv")
rows = table[(table["audit"] == "benefits-denial")
             & (table["model"] == "logistic_regression")
             & (table["attribute"] == "sex")
             & (table["metric"] == "demographic_parity_difference")]
table_gap = {s: float(rows.loc[rows["strategy"] == s, "gap"].item())
             for s in strategies}
largest_table_discrepancy = max(abs(flag_gap[s] - table_gap[s])
                                for s in strategies)
print(f"largest difference from the results file's gaps: {largest_table_discrepancy:.1e}")

# %% Figure 1: the gap by feature set, and how well features stand in for sex
fig, axes = plt.subplots(1, 2, figsize=(10.5, 4.4),
                         gridspec_kw={"width_ratios": [1, 1.4]})
xs = np.arange(len(strategies))
axes[0].bar(xs, [100 * flag_gap[s] for s in strategies],
            color=["#9e9e9e", "#9e9e9e", "#ef6c00"])
short = {"S0": "all\nfeatures", "S1": "no sex or\nrace column", "S2": "core\nfeatures"}
axes[0].set_xticks(xs, [f"{s}\n{short[s]}" for s in strategies])
axes[0].axhline(0, color="0.3", linewidth=1)
axes[0].set_ylabel("gap in flag rate,\nwomen minus men (pp)")
axes[0].set_title("The gap, by feature set")
names = [r["column"] for r in single][::-1] + ["S2's features together",
                                                "S1's features together"]
aucs = [r["auc"] for r in single][::-1] + [auc_s2, auc_s1]
colours = ["#ef6c00" if r["kept_in_s2"] else "#5c6bc0" for r in single][::-1]
colours += ["#ef6c00", "#5c6bc0"]
# Points on a line from a coin toss (0.5), not bars: the axis does not start at zero, and a
# bar's length would exaggerate the differences.
ys = np.arange(len(names))
axes[1].hlines(ys, 0.5, aucs, color=colours, linewidth=2)
axes[1].scatter(aucs, ys, color=colours, zorder=3)
axes[1].set_yticks(ys, names)
axes[1].axvline(0.5, color="0.3", linestyle="--", linewidth=1)
axes[1].set_xlim(0.4, 1.0)
axes[1].set_xlabel("ROC AUC, predicting sex\n(axis from 0.4; 0.5 = a coin toss)")
axes[1].set_title("Stand-ins for sex (orange: kept in S2)")
fig.tight_layout()
