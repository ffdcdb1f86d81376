"""The three-state verdicts on the results page (issue 45): each row's verdict in words with its
sentence, and for each audit its margin, the manifest's reason for it and its rows in each state.

The verdict is the benchmark's (``verdict`` in ``results/*.csv``: `faircode.significance.classify_gap`
on the row's adjusted numbers); its words are `faircode.significance.VERDICTS` and its sentence
`faircode.significance.verdict_sentence`, written from the row's numbers when the page is made.
Imported when the page is drawn (`results_page`), so faircode.significance and the manifests are
read only then.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import TYPE_CHECKING

from site_src.rendering.results import is_missing

if TYPE_CHECKING:
    import pandas as pd

# What a 1 of each rate means, as a verdict's sentence reads it after "were" (the fairness file's
# metrics and the by-group file's rates).
_OUTCOMES = {
    "demographic_parity_difference": "flagged", "selection_rate": "flagged",
    "equal_opportunity_difference": "given the favourable outcome when they merited it",
    "true_favourable_rate": "given the favourable outcome when they merited it",
    "true_positive_rate_difference": "flagged when their true label was positive",
    "true_positive_rate": "flagged when their true label was positive",
    "false_positive_rate_difference": "flagged when their true label was negative",
    "false_positive_rate": "flagged when their true label was negative",
    "true_negative_rate": "left unflagged when their true label was negative",
    "precision_difference": "truly positive when flagged", "precision": "truly positive when flagged",
    "accuracy_difference": "classified correctly", "accuracy": "classified correctly",
    "disparate_impact_ratio": "given the favourable outcome",
}


def verdict_words() -> dict[str, str]:
    """`faircode.significance.VERDICTS`: each state's key and the words every page uses, in order."""
    from faircode.significance import VERDICTS

    return dict(VERDICTS)


def verdict_cell(row: dict, *, alpha: float, by_group: bool = False) -> dict:
    """The verdict's cell of a results row: its words, and its sentence to open.

    Parameters
    ----------
    row : dict
        A row of ``results_fairness.csv`` (``by_group=False``) or ``results_by_group.csv``.
    alpha : float
        The level the benchmark's verdicts use (``faircode.benchmark.ALPHA``).
    by_group : bool, default False

    Returns
    -------
    dict
        ``text`` (the state in `verdict_words`' words, ``""`` for no verdict) and ``sentence``
        (None for no verdict).
    """
    verdict = row.get("verdict")
    if is_missing(verdict) or str(verdict) == "":
        return {"text": "", "sentence": None}
    return {"text": verdict_words()[str(verdict)], "sentence": _sentence(row, alpha=alpha, by_group=by_group)}


def _sentence(row: dict, *, alpha: float, by_group: bool) -> str:
    """`faircode.significance.verdict_sentence` from the row's numbers, naming adjusted values as such."""
    from faircode.significance import verdict_sentence

    def number(column: str) -> float:
        value = row.get(column)
        return math.nan if is_missing(value) else float(value)

    if by_group:
        names = (f"the {row['group']} group", f"the {row['reference_group']} group")
        numbers = dict(compare="difference", estimate=number("diff_vs_reference"),
                       ci_low=number("diff_vs_reference_ci_low"), ci_high=number("diff_vs_reference_ci_high"),
                       p_value=number("p_value_vs_reference_holm"),
                       equivalence_p_value=number("equivalence_p_value_holm"))
        adjusted = "Holm-adjusted p"
    else:
        names = (f"the {row['disadvantaged_group']} group", f"the {row['advantaged_group']} group")
        numbers = dict(compare=str(row["kind"]), estimate=number("gap"), ci_low=number("ci_low"),
                       ci_high=number("ci_high"), p_value=number("q_value"),
                       equivalence_p_value=number("equivalence_q_value"))
        adjusted = "q"
    return verdict_sentence(str(row["verdict"]), **numbers, equivalence_ci=(math.nan, math.nan),
                            margin=(number("margin_low"), number("margin_high")),
                            power_at_margin=number("power_at_margin"), alpha=alpha, names=names,
                            outcome=_OUTCOMES.get(str(row["metric"]), "flagged"), p_label=adjusted)  # values adjusted for their family


def verdict_options(values) -> list[tuple[str, str]]:
    """``(key, words)`` of the states among ``values``, in `verdict_words`' order (a filter's options)."""
    present = {str(v) for v in values if not is_missing(v)}
    return [(key, words) for key, words in verdict_words().items() if key in present]


def verdict_counts(df: pd.DataFrame) -> dict:
    """Rows in each state, per audit (by its display name) and in all.

    Returns
    -------
    dict
        ``{"states": [(key, words), ...], "audits": [{"name", "counts": {key: n}, "none": n,
        "rows": n}, ...], "all": {...}}``; ``none`` counts rows without a verdict.
    """
    states = list(verdict_words().items())
    verdict = df["verdict"].fillna("").astype(str)
    name = df["audit_name"] if "audit_name" in df.columns else df["audit"]

    def count(mask) -> dict:
        return {"counts": {key: int(((verdict == key) & mask).sum()) for key, _ in states},
                "none": int(((verdict == "") & mask).sum()), "rows": int(mask.sum())}

    audits = [{"name": str(n), **count(name == n)} for n in sorted(name.astype(str).unique())]
    return {"states": states, "audits": audits, "all": count(verdict.notna())}


def yardstick_disagreements(df: pd.DataFrame) -> int:
    """Comparisons whose selection rate difference shows a gap while their disparate impact ratio
    shows none of practical size by its band (or the reverse): the two read different yardsticks,
    points and the four-fifths band, which part at low rates (a gap of several points between
    two small rates of being flagged is a ratio near 1 between the rates of not being flagged).

    Parameters
    ----------
    df : DataFrame
        ``results_fairness.csv`` (columns ``audit``, ``strategy``, ``model``, ``attribute``,
        ``disadvantaged_group``, ``advantaged_group``, ``metric``, ``verdict``).

    Returns
    -------
    int
        Comparisons where one of the two is ``gap_shown`` and the other ``no_practical_gap_shown``.
    """
    keys = ["audit", "strategy", "model", "attribute", "disadvantaged_group", "advantaged_group"]
    pair = df[df["metric"].isin(["demographic_parity_difference", "disparate_impact_ratio"])]
    wide = pair.pivot_table(index=keys, columns="metric", values="verdict", aggfunc="first")
    if not {"demographic_parity_difference", "disparate_impact_ratio"} <= set(wide.columns):
        return 0
    parted = {("gap_shown", "no_practical_gap_shown"), ("no_practical_gap_shown", "gap_shown")}
    both = zip(wide["demographic_parity_difference"], wide["disparate_impact_ratio"])
    return sum(pair in parted for pair in both)


def audit_margins(df: pd.DataFrame, root: Path) -> list[dict]:
    """Each audit's margin as the results file used it, and its manifest's reason for it.

    Parameters
    ----------
    df : DataFrame
        ``results_fairness.csv`` (columns ``audit``, ``audit_name``, ``kind``, ``margin_low``,
        ``margin_high``).
    root : Path
        The repository (``audits/<audit>/audit.yaml`` under it).

    Returns
    -------
    list of dict
        ``{"name", "margin", "reason"}`` per audit, by name; ``margin`` in words.

    Raises
    ------
    ValueError
        An audit whose rows hold another margin than its manifest declares now (the results are
        stale: re-run ``faircode benchmark``), or more than one margin of one kind.
    """
    from faircode.manifest import PracticalMargin, read_manifest_yaml

    out = []
    for audit, rows in df.groupby("audit", sort=False):
        path = root / "audits" / str(audit) / "audit.yaml"
        declared = PracticalMargin(**read_manifest_yaml(path, label=f"audits/{audit}/audit.yaml")["practical_margin"])
        for kind, of_kind in rows.groupby("kind"):
            used = set(zip(of_kind["margin_low"].astype(float), of_kind["margin_high"].astype(float)))
            if used != {tuple(float(v) for v in declared.of(str(kind)))}:
                raise ValueError(f"results/results_fairness.csv: the {kind} rows of audit {audit} hold the margin(s) "
                                 f"{sorted(used)}, but audits/{audit}/audit.yaml declares {declared.of(str(kind))}; "
                                 "re-run `faircode benchmark`")
        low, high = declared.ratio_band
        band = f"at least {low:g}" if math.isinf(high) else f"{low:g} to {high:g}"
        out.append({"name": str(rows["audit_name"].iloc[0]), "reason": declared.reason,
                    "margin": f"±{declared.points:g} percentage points for a difference of rates; {band} for the "
                              "disparate impact ratio"})
    return sorted(out, key=lambda a: a["name"])
