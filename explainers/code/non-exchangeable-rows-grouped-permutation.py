# Generated from explainers/non-exchangeable-rows-grouped-permutation.md by `fairsite build`; edit the explainer, not this file.
# Run it from the repository root:  python explainers/code/non-exchangeable-rows-grouped-permutation.py
# %% Simulated households built from real people
"""Row-wise vs grouped permutation tests when people come in households."""
import matplotlib.pyplot as plt
import numpy as np
from scipy.special import expit, logit

from faircode import fit_predict, load_audit
from faircode.significance import format_p_value, permutation_test, permutation_test_result, permutation_tests

SEED = 20240917
rng = np.random.default_rng(SEED)

# Real people: the Benefits Denial test split, each with the core-feature (S2)
# logistic regression's predicted probability (its score, not its 0/1 flag) as
# their chance of being flagged in the simulation.
audit = load_audit("benefits-denial")
pred = fit_predict(audit, strategy="S2", model="logistic_regression")
own_log_odds = logit(np.clip(pred.y_score, 1e-6, 1 - 1e-6))

n_people = 1200        # people in one simulated audit
household_sd = 2.0     # spread of the shared household effect (log-odds)
alpha = 0.05
n_permutations = 4999  # shuffles for the example audit


def simulate_audit(size, rng):
    """One audit: n_people in households of `size`; no true gap."""
    n_households = n_people // size
    people = rng.choice(own_log_odds.size, size=n_households * size,
                        replace=False)
    household = np.repeat(np.arange(n_households), size)
    # What a household shares (one income, one landlord, one caseworker)
    # moves the odds of every member together.
    shared = rng.normal(0.0, household_sd, n_households)
    chance = expit(own_log_odds[people] + shared[household])
    flagged = (rng.random(people.size) < chance).astype(np.int8)
    # A random draw puts exactly half the households, whole, in group A and
    # the rest in B: the true gap is zero.
    half = np.arange(n_households) < n_households // 2
    in_a = rng.permutation(half)[household]
    return flagged, household, in_a


# %% One audit in households of four: the row-wise and the grouped test
size = 4
flagged, household, in_a = simulate_audit(size, rng)
a, b = flagged[in_a], flagged[~in_a]
# One household label per row of a, and one per row of b.
groups = (household[in_a], household[~in_a])
n_households = n_people // size
rate_a, rate_b = float(a.mean()), float(b.mean())
example_gap = rate_a - rate_b
household_totals = np.bincount(household, weights=flagged)
unanimous = (household_totals == 0) | (household_totals == size)
share_unanimous = float(np.mean(unanimous))

p_naive = permutation_test(a, b)  # exact; treats the rows as exchangeable
grouped = permutation_test_result(a, b, groups=groups,
                                  n_permutations=n_permutations,
                                  random_state=1)
p_grouped = grouped.p_value
rowwise = permutation_test_result(a, b, method="monte_carlo",
                                  n_permutations=n_permutations, random_state=2)
# Half-width that holds 95% of the shuffled gaps, for each kind of shuffle.
spread_naive = float(np.quantile(np.abs(rowwise.null_distribution), 1 - alpha))
spread_grouped = float(np.quantile(np.abs(grouped.null_distribution),
                                   1 - alpha))
# Independent rows would give the households' spread with this many people
# (the variance of the gap shrinks as one over the rows). A rough simulation
# estimate, so rounded to hundreds.
effective_people = int(round(n_people * np.var(rowwise.null_distribution)
                             / np.var(grouped.null_distribution), -2))
print(f"households of {size}: gap {100 * example_gap:+.1f} pp; "
      f"row-wise {format_p_value(p_naive)}, grouped {format_p_value(p_grouped, floor=1 / (n_permutations + 1))}")
print(f"95% of shuffled gaps lie within ±{100 * spread_naive:.1f} pp (people) "
      f"vs ±{100 * spread_grouped:.1f} pp (households)")


# %% Build check, by hand: deal whole households at random
def household_shuffle(flagged, household, in_a, n_shuffles, rng):
    """Grouped permutation test by hand: deal whole households at random."""
    totals = np.bincount(household, weights=flagged)
    sizes = np.bincount(household).astype(float)
    household_in_a = np.zeros(totals.size, dtype=bool)
    household_in_a[household[in_a]] = True

    def gap(pick):
        return totals[pick].sum() / sizes[pick].sum() - \
            totals[~pick].sum() / sizes[~pick].sum()

    observed = gap(household_in_a)
    n_extreme = 0
    for _ in range(n_shuffles):
        shuffled = gap(rng.permutation(household_in_a))
        n_extreme += abs(shuffled) >= abs(observed) - 1e-12
    return (n_extreme + 1) / (n_shuffles + 1)


p_by_hand = household_shuffle(flagged, household, in_a, n_permutations, rng)
print(f"hand-written household shuffle: {format_p_value(p_by_hand, floor=1 / (n_permutations + 1))}")

# %% False alarms over many audits with no gap, by household size
n_audits = 500
null_audit_permutations = 199  # each audit only needs "p < alpha or not"
sizes = (1, 2, 4, 6)
type1 = []
for s in sizes:
    audits = [simulate_audit(s, rng) for _ in range(n_audits)]
    # One row per audit (every audit puts the same number of people in A):
    # group A's flags and household ids, and group B's.
    a_rows = np.array([f[g] for f, h, g in audits])
    b_rows = np.array([f[~g] for f, h, g in audits])
    households = (np.array([h[g] for f, h, g in audits]),
                  np.array([h[~g] for f, h, g in audits]))
    # Every audit's test in one call: row-wise (exact), then by household.
    naive = permutation_tests(a_rows, b_rows)
    grouped_p = permutation_tests(a_rows, b_rows, groups=households,
                                  n_permutations=null_audit_permutations,
                                  random_state=rng)
    naive_rate = float(np.mean(naive < alpha))
    grouped_rate = float(np.mean(grouped_p < alpha))
    type1.append({"size": s, "naive": naive_rate, "grouped": grouped_rate})
    print(f"households of {s}: false alarms row-wise "
          f"{naive_rate:.1%}, grouped {grouped_rate:.1%}")
binomial_se = float(np.sqrt(alpha * (1 - alpha) / n_audits))
type1_naive = next(r["naive"] for r in type1 if r["size"] == size)
type1_grouped = next(r["grouped"] for r in type1 if r["size"] == size)
type1_naive_largest = type1[-1]["naive"]
largest_size = sizes[-1]
worst_grouped_error = max(abs(r["grouped"] - alpha) for r in type1)
# With m shuffles the grouped p-value is (b + 1) / (m + 1) (Phipson and Smyth),
# so "p < alpha" needs b + 1 below alpha * (m + 1): under no gap, at most this
# share of audits, a little under alpha.
grouped_level = max(k for k in range(1, null_audit_permutations + 2)
                    if k / (null_audit_permutations + 1) < alpha) / (null_audit_permutations + 1)

# %% Figure 1: one audit's shuffled gaps; false alarms by household size
fig, axes = plt.subplots(1, 2, figsize=(10, 3.8))
# Relabelled gaps lie on a lattice (one flag moved = one step); bins of
# three whole steps, edged half-way between lattice points, avoid a comb
# of empty bins.
step = n_people / (a.size * b.size)
reach = 1.6 * spread_grouped
n_bins = int(np.ceil((reach + abs(example_gap)) / (3 * step)))
edges = example_gap + step * (3 * np.arange(-n_bins, n_bins + 1) + 0.5)
panels = ((rowwise.null_distribution, "#5c6bc0", "shuffling people",
           spread_naive),
          (grouped.null_distribution, "#ef6c00", "shuffling households",
           spread_grouped))
for null, colour, label, spread in panels:
    axes[0].hist(null, bins=edges, histtype="step", linewidth=1.8, color=colour,
                 label=label)
    for x in (-spread, spread):
        axes[0].axvline(x, color=colour, linestyle=":", linewidth=1.2)
axes[0].axvline(example_gap, color="#c62828", linewidth=2,
                label=f"observed gap {100 * example_gap:+.1f} pp")
axes[0].set_xlim(-reach, reach)
axes[0].xaxis.set_major_locator(plt.MaxNLocator(5))
axes[0].xaxis.set_major_formatter(lambda v, _: f"{100 * v:+.0f}")  # percentage points, as the prose
axes[0].set_xlabel("shuffled gap in flag rate, A − B (pp); "
                   "dotted: 95% of shuffles")
axes[0].set_ylabel("shuffles")
axes[0].set_title(f"One audit, no true gap: {n_households} households "
                  f"of {size}")
axes[0].legend(loc="upper left")
xs = np.array(sizes)
axes[1].axhspan(alpha - 2 * binomial_se, alpha + 2 * binomial_se, color="0.9",
                label="alpha ± 2 binomial s.e.")
axes[1].axhline(alpha, color="0.4", linestyle="--", linewidth=1)
axes[1].plot(xs, [r["naive"] for r in type1], "o-", color="#5c6bc0",
             label="row-wise test")
axes[1].plot(xs, [r["grouped"] for r in type1], "s-", color="#ef6c00",
             label="grouped test")
axes[1].set_xticks(xs)
axes[1].set_xlabel("people per household")
axes[1].set_ylabel(f"share of {n_audits} audits with p < {alpha}")  # axis from zero
axes[1].set_title("False alarms when there is no gap")
axes[1].set_ylim(0, None)
axes[1].yaxis.set_major_formatter(lambda v, _: f"{v:.1%}".replace(".0%", "%"))  # 2.5% ticks stay 2.5%
axes[1].legend(loc="upper left")
fig.tight_layout()
