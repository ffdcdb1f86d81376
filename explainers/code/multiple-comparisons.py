# Generated from explainers/multiple-comparisons.md by `fairsite build`; edit the explainer, not this file.
# Run it from the repository root:  python explainers/code/multiple-comparisons.py
# %% The table's p-values, corrected over the whole table
"""Multiple comparisons: Holm (FWER) and Benjamini-Hochberg (FDR) on the benchmark's results table."""
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from statsmodels.stats.multitest import multipletests

from faircode.significance import adjust_p_values, format_p_value

alpha = 0.05
table = pd.read_csv("results/results_fairness.csv")
n_rows = len(table)
rows_tested = table[table["p_value"].notna()].reset_index(drop=True)
n_rows_tested = len(rows_tested)
# A row whose same_test_as names another metric repeats that row's permutation test: one null
# hypothesis in two rows. The family is the distinct hypotheses, each counted once.
repeats = rows_tested["same_test_as"].notna().to_numpy()
n_repeat = int(repeats.sum())
tested = rows_tested[~repeats].reset_index(drop=True)
p = tested["p_value"].to_numpy(dtype=float)
m = len(p)
expected_by_chance = m * alpha                   # if no gap anywhere were real
chance_of_none = (1 - alpha) ** m            # P(no p < alpha at all) for m independent nulls: not these tests
bonferroni_threshold = alpha / m

holm = adjust_p_values(p, method="holm")
bh = adjust_p_values(p, method="bh")
n_raw = int(np.sum(p < alpha))
n_holm = int(np.sum(holm < alpha))
n_bh = int(np.sum(bh < alpha))
print(f"{n_rows} rows, {n_repeat} repeat another row's test: {m} distinct hypotheses")
print(f"{m} p-values: {n_raw} below {alpha}, {n_holm} after Holm, {n_bh} after Benjamini-Hochberg")
print(f"chance alone: at most {expected_by_chance:.1f} expected, whatever the dependence; "
      f"P(none) = {chance_of_none:.0e} only if the tests were independent")

# %% Chance alone: tables with no real gap anywhere
# Chance alone: families of m p-values with no real gap anywhere (uniform p-values; the exact
# test for 0/1 outcomes is slightly conservative, so real null p-values give even fewer).
rng = np.random.default_rng(20240613)
n_families = 2000
null_raw, null_holm_any, null_bh_any = [], 0, 0
for _ in range(n_families):
    null_p = rng.random(m)
    null_raw.append(int(np.sum(null_p < alpha)))
    null_holm_any += bool(np.any(adjust_p_values(null_p, method="holm") < alpha))
    null_bh_any += bool(np.any(adjust_p_values(null_p, method="bh") < alpha))
null_raw = np.array(null_raw)
null_mean = float(null_raw.mean())
null_max = int(null_raw.max())
middle = 0.95                                    # the middle share of tables reported
null_low, null_high = (int(v) for v in np.quantile(null_raw, [(1 - middle) / 2, (1 + middle) / 2]))
null_share_raw = null_mean / m                   # share of null tests with p < alpha
null_fwer_holm = null_holm_any / n_families      # families with any false positive after Holm
null_fwer_bh = null_bh_any / n_families          # ... after BH (with every null true, FDR = FWER)
# Holm's family-wise error under independence, 1 - (1 - alpha/m)^m, sits just under alpha.
holm_fwer_theory = 1 - (1 - alpha / m) ** m
print(f"null families: mean {null_mean:.1f} raw positives ({middle:.0%} of families {null_low}-{null_high}, "
      f"max {null_max}); any false positive after Holm {null_fwer_holm:.3f}, after BH {null_fwer_bh:.3f}")


# %% Build checks: statsmodels, the table's q_value column, Holm and BH by hand
# Independent oracle: statsmodels' multipletests on the same p-values.
sm_holm = multipletests(p, alpha=alpha, method="holm")[1]
sm_bh = multipletests(p, alpha=alpha, method="fdr_bh")[1]
max_diff_holm = float(np.max(np.abs(holm - sm_holm)))
max_diff_bh = float(np.max(np.abs(bh - sm_bh)))
# The table's own q-value column is BH within each audit, over its distinct hypotheses; a row
# whose same_test_as names another metric repeats that row's test and carries its q-value.
bh_own = np.full(m, np.nan)
for slug, rows in tested.groupby("audit"):
    bh_own[rows.index] = adjust_p_values(p[rows.index], method="bh")
q_by_row = dict(zip(zip(tested["audit"], tested["strategy"], tested["model"], tested["attribute"], tested["metric"]), bh_own))
q_repeated = np.array([q_by_row[(r["audit"], r["strategy"], r["model"], r["attribute"], r["same_test_as"])]
                       for _, r in rows_tested[repeats].iterrows()])
q_column = tested["q_value"].to_numpy(dtype=float)
q_column_matches = bool(np.allclose(bh_own, q_column, rtol=1e-8, atol=1e-12)
                        and np.allclose(q_repeated, rows_tested.loc[repeats, "q_value"], rtol=1e-8, atol=1e-12))
print(f"vs statsmodels: Holm {max_diff_holm:.1e}, BH {max_diff_bh:.1e}; "
      f"q column matches: {q_column_matches}")


def holm_by_hand(p, alpha):
    """Holm's step-down: walk up the sorted p-values, comparing the k-th smallest with alpha / (m - k)."""
    rejected = 0
    for k, value in enumerate(np.sort(p)):
        if value >= alpha / (len(p) - k):
            break  # the first failure stops the walk
        rejected += 1
    return rejected


def bh_by_hand(p, alpha):
    """Benjamini-Hochberg step-up: the largest k with p_(k) <= k alpha / m; reject the k smallest."""
    ranked = np.sort(p)
    k = np.arange(1, len(p) + 1)
    passing = np.flatnonzero(ranked <= k * alpha / len(p))
    return int(passing[-1] + 1) if passing.size else 0


hand_holm = holm_by_hand(p, alpha)
hand_bh = bh_by_hand(p, alpha)
print(f"by hand: Holm {hand_holm}, BH {hand_bh}")



# %% Each audit: over the whole table and within the audit; every row counted
def within_each_audit(p, audits, method):
    """Adjust p-values within each audit's own family of tests, not across the whole table."""
    adjusted = np.full(len(p), np.nan)
    for slug in np.unique(audits):
        own = audits == slug
        adjusted[own] = adjust_p_values(p[own], method=method)
    return adjusted


# Two families, both computed here from the p-values (not read from the q_value column):
# the whole table, and each audit on its own, the family one auditor of one system faces.
audits = tested["audit"].to_numpy()
holm_within = within_each_audit(p, audits, "holm")
bh_within = within_each_audit(p, audits, "bh")
by_audit = []
for slug, rows in tested.groupby("audit", sort=True):
    idx = rows.index.to_numpy()
    by_audit.append({"slug": slug, "audit": rows["audit_name"].iloc[0], "tests": len(idx),
                     "raw": int(np.sum(p[idx] < alpha)),
                     "holm": int(np.sum(holm[idx] < alpha)), "bh": int(np.sum(bh[idx] < alpha)),
                     "holm_within": int(np.sum(holm_within[idx] < alpha)),
                     "bh_within": int(np.sum(bh_within[idx] < alpha))})
    _row = by_audit[-1]
    print(f"{_row['audit']}: {_row['tests']} hypotheses; raw {_row['raw']}, BH {_row['bh']} ({_row['bh_within']} within, "
          f"as the q column), Holm {_row['holm']} ({_row['holm_within']} within)")
german = next(row for row in by_audit if row["slug"] == "german-credit")
# The calculator link's family: German Credit's p-values, as text (a run keeps lists of at most 100 values).
german_p_values = ",".join(f"{v:.6g}" for v in p[(tested["audit"] == "german-credit").to_numpy()])
# Holm is a closed test: a smaller family never rejects less (Holm 1979). BH has no such rule.
holm_within_never_fewer = all(row["holm_within"] >= row["holm"] for row in by_audit)
holm_gains = [row for row in by_audit if row["holm_within"] > row["holm"]]
german_test_rows = int(tested.loc[tested["audit"] == "german-credit",
                                  ["n_disadvantaged", "n_advantaged"]].sum(axis=1).max())
significant_is_q_below_alpha = bool(
    (rows_tested["significant"].astype(bool) == (rows_tested["q_value"] < alpha)).all())
print(f"significant = q < {alpha}: {significant_is_q_below_alpha}")

# German Credit's BH findings (the q_value column): how many comparisons are they?
german_found = tested[(tested["audit"] == "german-credit") & (tested["q_value"] < alpha)]
german_found_one_comparison = bool(len(german_found) > 0 and german_found[
    ["attribute", "disadvantaged_group", "advantaged_group"]].drop_duplicates().shape[0] == 1)
german_found_attribute = str(german_found["attribute"].iloc[0]) if len(german_found) else ""
german_found_group = str(german_found["disadvantaged_group"].iloc[0]) if len(german_found) else ""
german_found_reference = str(german_found["advantaged_group"].iloc[0]) if len(german_found) else ""
german_found_views = int(german_found[["strategy", "model"]].drop_duplicates().shape[0])
german_found_metrics = sorted(german_found["metric"].value_counts().items(), key=lambda kv: -kv[1])
german_found_n_low = int(german_found["n_disadvantaged"].min()) if len(german_found) else 0
german_found_n_high = int(german_found["n_disadvantaged"].max()) if len(german_found) else 0
n_german_found = len(german_found)
print(f"German Credit's {n_german_found} BH findings: attributes {sorted(set(german_found['attribute']))}, "
      f"{german_found_views} model/strategy rows, {german_found_n_low}-{german_found_n_high} people in the smaller group")

# Counting every row instead.
# Every row as a test, a repeated test counted twice: the count a naive reading gives.
p_rows = rows_tested["p_value"].to_numpy(dtype=float)
n_raw_rows = int(np.sum(p_rows < alpha))
n_holm_rows = int(np.sum(adjust_p_values(p_rows, method="holm") < alpha))
n_bh_rows = int(np.sum(adjust_p_values(p_rows, method="bh") < alpha))
# "The same picture": scaled to the number of tests, no count moves by more than a fifth.
same_picture = all(abs(a - b) <= 0.2 * b + 1 for a, b in (
    (n_raw_rows, n_raw * n_rows_tested / m), (n_holm_rows, n_holm * n_rows_tested / m),
    (n_bh_rows, n_bh * n_rows_tested / m)))
print(f"{n_rows_tested} rows as tests: {n_raw_rows} raw, {n_bh_rows} BH, {n_holm_rows} Holm")

# %% German Credit's strongest finding
# The strongest finding of the smallest audit: passes on its own and after BH, but not Holm.
strongest = tested.assign(holm=holm, bh=bh, holm_within=holm_within)
strongest = strongest[strongest["audit"] == "german-credit"].sort_values("p_value", kind="stable").iloc[0]
example = {key: str(strongest[key]) for key in ("audit", "strategy", "model", "attribute", "metric")}
example.update(p=float(strongest["p_value"]), holm=float(strongest["holm"]), bh=float(strongest["bh"]),
               holm_within=float(strongest["holm_within"]))
# Holm compares the k-th smallest p-value with alpha / (m - k + 1): the tests still standing.
example["holm_factor"] = m - int(np.sum(p < strongest["p_value"]))
print(f"German Credit's strongest gap: {example['metric']} ({example['strategy']}, {example['model']}), "
      f"{format_p_value(example['p'])}; BH-adjusted {format_p_value(example['bh'])}, "
      f"Holm-adjusted {format_p_value(example['holm'])} (within German Credit {format_p_value(example['holm_within'])})")

# %% Figure 1: the sorted p-values against each rule's thresholds
fig, axes = plt.subplots(1, 2, figsize=(10, 4), gridspec_kw={"width_ratios": [3, 2]})
rank = np.arange(1, m + 1)
ax = axes[0]
ax.plot(rank, np.sort(p), ".", color="#3949ab", markersize=3, label="p-values of the table, sorted")
ax.axhline(alpha, color="#9e9e9e", linestyle="--", label=f"raw: p < {alpha}")
ax.plot(rank, rank * alpha / m, color="#ff8f00", label="Benjamini-Hochberg: k alpha / m")
ax.plot(rank, alpha / (m - rank + 1), color="#d84315", label="Holm: alpha / (m - k + 1)")
ax.set_yscale("log")
ax.set_ylim(1e-12, 1.5)
ax.set_xlabel("rank k of the p-value")
ax.set_ylabel("p-value (log; cut at 1e-12)")
ax.set_title(f"{m} gaps: {n_raw} raw, {n_bh} BH, {n_holm} Holm")
ax.legend(loc="lower right")
ax = axes[1]
ax.hist(null_raw, bins=np.arange(null_raw.min(), null_raw.max() + 2) - 0.5, color="#9fa8da")
ax.axvline(expected_by_chance, color="black", linewidth=1, label=f"m × alpha = {expected_by_chance:.1f}")
ax.set_xlabel(f"count of p < {alpha} in {m} null tests")
ax.set_ylabel("simulated tables")
ax.set_title(f"Chance alone ({n_families:,} tables)")
ax.legend(loc="upper left")
fig.tight_layout()
