# Generated from explainers/reading-a-bias-audit-report.md by `fairsite build`; edit the explainer, not this file.
# Run it from the repository root:  python explainers/code/reading-a-bias-audit-report.py
# %% The report's tables, as the law asks for them
"""Reading a bias-audit report: COMPAS's scores of every defendant, audited as Local Law 144 would audit a tool."""
import math

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.lines import Line2D
from scipy.stats import hypergeom
from statsmodels.stats.multitest import multipletests
from statsmodels.stats.proportion import proportion_confint

from faircode.data import project_root, read_data
from faircode.report import FOUR_FIFTHS, count_categories, load_report_manifest, report_tables
from faircode.significance import VERDICTS, verdict_sentence

manifest = load_report_manifest(project_root() / "reports" / "compas-ll144" / "report.yaml")
report = report_tables(count_categories(manifest), manifest)  # the 2% rule on, as the manifest declares
alpha, band, under_share, four_fifths = report.alpha, report.band, report.under_share, FOUR_FIFTHS
n_rows = report.n_rows
favourable = sorted(manifest.outcome.decision.favourable)  # the decile scores counted as "rated low risk"
period = (manifest.data.period.start.isoformat(), manifest.data.period.end.isoformat())
labels = dict(VERDICTS)  # each verdict's words: "a gap shown", ...


def table_rows(tables, key):
    """One table's rows as plain values the page cites, in the report's order. A row compared with
    the reference has its ratio, interval, tests and verdict; the reference and a category left
    out have none (the library's NaN is left out, not cited: the accepted numbers keep no NaN)."""
    rows = []
    for r in tables.table(key).rows:
        row = {"category": r.category, "n": r.n, "selected": r.n_selected, "rate": r.selection_rate,
               "share": r.share, "excluded": r.excluded, "reference": r.reference, "verdict": r.verdict or ""}
        if r.verdict:
            row |= {"ratio": r.impact_ratio, "ci": (r.impact_ratio_ci_low, r.impact_ratio_ci_high), "p": r.p_value,
                    "p_holm": r.p_adjusted, "eq_p_holm": r.equivalence_p_adjusted, "power": r.power_at_margin}
        rows.append(row)
    return rows


race = table_rows(report, "race/ethnicity")
race_by = {r["category"]: r for r in race}
reference = report.table("race/ethnicity").reference
excluded = [r["category"] for r in race if r["excluded"]]
excluded_are_two_smallest = sorted(excluded) == sorted(r["category"] for r in sorted(race, key=lambda r: r["n"])[:2])
tested = [r for r in race if r["verdict"]]
excluded_under_share = all(race_by[c]["share"] < under_share for c in excluded)
reference_is_most_selected_kept = race_by[reference]["rate"] == max(r["rate"] for r in race if not r["excluded"])
n_tested = report.table("race/ethnicity").n_tested
sex_reference = report.table("sex").reference
sex_ratio = next(r for r in table_rows(report, "sex") if r["verdict"])
n_unknown = {t.table: t.n_unknown for t in report.tables}
no_unknowns = all(n == 0 for n in n_unknown.values())


def sentence(row, names):
    """The verdict in plain words, naming the values it quotes as what they are: Holm-adjusted."""
    return verdict_sentence(row["verdict"], compare="ratio", estimate=row["ratio"], ci_low=row["ci"][0],
                            ci_high=row["ci"][1], p_value=row["p_holm"], equivalence_p_value=row["eq_p_holm"],
                            equivalence_ci=(math.nan, math.nan), margin=band, power_at_margin=row["power"],
                            alpha=alpha, names=names, outcome="rated low risk", p_label="Holm-adjusted p")


sentences = {c: sentence(race_by[c], (f"{c} defendants", f"{reference} defendants"))
             for c in ("African-American", "Caucasian", "Hispanic")}
for r in race:
    ratio = ("left out" if r["excluded"] else "reference" if r["reference"]
             else f"{r['ratio']:.3f} [{r['ci'][0]:.3f}, {r['ci'][1]:.3f}], Holm p {r['p_holm']:.2g}, {r['verdict']}")
    print(f"{r['category']:<17} n {r['n']:>5,}  rated low risk {r['selected']:>5,}  {r['rate']:6.1%}  "
          f"share {r['share']:5.1%}  {ratio}")
print(f"reference {reference}; {n_tested} compared (Holm's family); unknown: {n_unknown}")
print(sentences["Caucasian"])

# %% Check: the counts, the ratios, the intervals, the exact test and Holm, by hand
# The counts from the file itself (pandas), not from the library's one pass.
frame = read_data(manifest.data_path(), manifest.data.parse)
low_risk = frame["decile_score"].isin(favourable).to_numpy()
by_hand = {g: (int((frame["race"] == g).sum()), int(low_risk[(frame["race"] == g).to_numpy()].sum()))
           for g in frame["race"].unique()}
n_rows_file = len(frame)
counts_match = len(by_hand) == len(race) and all(by_hand[r["category"]] == (r["n"], r["selected"]) for r in race)
n_ref, x_ref = by_hand[reference]


def exact_p(x_a, n_a, x_b, n_b):
    """The exact conditional test of equal rates, two-sided on the size of the gap: the chance,
    with the selected people dealt at random between the two groups (hypergeometric), of a gap
    at least as large as the one seen (ties within rounding count as as large)."""
    k = x_a + x_b
    x = np.arange(max(0, k - n_b), min(n_a, k) + 1)
    gaps = np.abs(x / n_a - (k - x) / n_b)
    return float(hypergeom.pmf(x, n_a + n_b, n_a, k)[gaps >= abs(x_a / n_a - x_b / n_b) * (1 - 1e-9)].sum())


def mover_r(x_a, n_a, x_b, n_b, level):
    """Donner and Zou's MOVER-R interval of p_a / p_b, from each rate's Wilson interval (statsmodels')."""
    p_a, p_b = x_a / n_a, x_b / n_b
    (l_a, u_a), (l_b, u_b) = (proportion_confint(x, n, alpha=1 - level, method="wilson") for x, n in ((x_a, n_a), (x_b, n_b)))
    low = (p_a * p_b - math.sqrt((p_a * p_b) ** 2 - l_a * u_b * (2 * p_a - l_a) * (2 * p_b - u_b))) / (u_b * (2 * p_b - u_b))
    high = (p_a * p_b + math.sqrt((p_a * p_b) ** 2 - u_a * l_b * (2 * p_a - u_a) * (2 * p_b - l_b))) / (l_b * (2 * p_b - l_b))
    return low, high


ratio_vs_hand = max(abs(r["ratio"] - (r["selected"] / r["n"]) / (x_ref / n_ref)) for r in tested)
interval_vs_hand = max(abs(a - b) for r in tested
                       for a, b in zip(r["ci"], mover_r(r["selected"], r["n"], x_ref, n_ref, 1 - alpha)))
p_vs_hand = max(abs(r["p"] - exact_p(r["selected"], r["n"], x_ref, n_ref)) / r["p"] for r in tested)
holm_vs_statsmodels = float(np.max(np.abs(multipletests([r["p"] for r in tested], method="holm")[1]
                                          - [r["p_holm"] for r in tested])))
print(f"counts as the file holds them: {counts_match}; largest differences from the hand computations: ratio "
      f"{ratio_vs_hand:.1e}, MOVER-R interval {interval_vs_hand:.1e}, exact p (relative) {p_vs_hand:.1e}, "
      f"Holm (statsmodels) {holm_vs_statsmodels:.1e}")

# %% Without the small-category rule
# The same manifest with its exclusion removed: every category enters the impact ratios.
without_rule = report_tables(count_categories(manifest), manifest.model_copy(update={"exclusion": None}))
race_without = {r["category"]: r for r in table_rows(without_rule, "race/ethnicity")}
na = race_without["Native American"]
n_tested_without = without_rule.table("race/ethnicity").n_tested
reference_without = without_rule.table("race/ethnicity").reference
inter = {r["category"]: r for r in table_rows(report, "intersection")}
inter_without = {r["category"]: r for r in table_rows(without_rule, "intersection")}
inter_reference = report.table("intersection").reference
inter_reference_without = without_rule.table("intersection").reference
n_inter_tested, n_inter_tested_without = report.table("intersection").n_tested, without_rule.table("intersection").n_tested
inter_shown = sum(r["verdict"] == "gap_shown" for r in inter.values())
inter_excluded_above = [c for c, r in inter.items() if r["excluded"] and r["rate"] > inter[inter_reference]["rate"]]
inter_tested_without = [r for r in inter_without.values() if r["verdict"]]
inter_verdicts_without = sorted({r["verdict"] for r in inter_tested_without})
largest_power_without = max(r["power"] for r in inter_tested_without)
inter_without_reach_line = all(r["ci"][1] > four_fifths for r in inter_tested_without)  # the figure's alt text
for name, t in (("with the rule", report), ("without it", without_rule)):
    for key in ("race/ethnicity", "intersection"):
        tab = t.table(key)
        print(f"{name}, {key}: reference {tab.reference}, {tab.n_tested} compared; "
              + ", ".join(f"{r.category} {r.verdict}" for r in tab.rows if r.verdict))
print(f"Native American without the rule: ratio {na['ratio']:.3f} [{na['ci'][0]:.3f}, {na['ci'][1]:.3f}], "
      f"Holm p {na['p_holm']:.2g}, power at the line {na['power']:.2f}: {na['verdict']}")

# %% Figure 1
fig, axes = plt.subplots(1, 2, figsize=(11, 5.2), gridspec_kw={"width_ratios": [1, 1.25]})
styles = ((-0.17, "#0072B2", "o"), (0.17, "#D55E00", "s"))  # with the rule, without it
for ax, key, title in ((axes[0], "race/ethnicity", "race/ethnicity"), (axes[1], "intersection", "sex × race/ethnicity")):
    versions = [{r["category"]: r for r in table_rows(t, key)} for t in (report, without_rule)]
    names = list(versions[0])
    for i, c in enumerate(names):
        for (offset, colour, marker), rows in zip(styles, versions):
            r = rows[c]
            if r["reference"]:  # the reference's ratio is 1 by definition: an open marker
                ax.plot([1], [i + offset], marker, color=colour, markerfacecolor="none", markersize=7)
            elif r["verdict"]:
                ax.plot(r["ci"], [i + offset] * 2, color=colour, linewidth=1.8)
                ax.plot([r["ratio"]], [i + offset], marker, color=colour, markersize=5)
    ax.axvline(four_fifths, color="0.3", linestyle="--", linewidth=1)
    ax.set_yticks(range(len(names)), names)
    ax.set_ylim(len(names) - 0.5, -0.5)
    ax.set_xlabel(f"impact ratio, {1 - alpha:.0%} interval")
    ax.set_title(title)
handles = [Line2D([], [], color=colour, marker=marker, label=label)
           for (_, colour, marker), label in zip(styles, (f"with the {under_share:.0%} rule", "without it"))]
handles += [Line2D([], [], color="0.4", marker="o", linestyle="none", markerfacecolor="none", label="the reference"),
            Line2D([], [], color="0.3", linestyle="--", label=f"four-fifths line ({four_fifths:g})")]
fig.legend(handles=handles, loc="lower center", ncol=4, frameon=False)
fig.tight_layout(rect=(0, 0.08, 1, 1))
