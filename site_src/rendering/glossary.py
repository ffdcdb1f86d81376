"""The site's conventions and glossary: one home for every term the explainers use.

The glossary page (``glossary.md.j2``) lists `TERMS` in order; each explainer page gets a "Terms
used on this page" line linking the terms its rendered prose mentions (`terms_used`), so a term is
linked wherever it appears without anyone keeping a list per page. What "flagged", "favourable"
and "disadvantaged" mean in each audit is read from the audits' manifests (`audit_conventions`),
so the table cannot drift from the configuration that defines it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Term:
    """One glossary entry.

    ``anchor`` is the heading id on the glossary page; ``pattern`` a case-insensitive regular
    expression that finds the term in a page's text; ``definition`` Markdown (links relative to
    the glossary page). A definition also travels as a tooltip to every page that links the term
    (``publishing.mkdocs_hooks.define_terms``), so it names what it points to ("the glossary's
    table"), never where it is ("the table above": issue 47).
    """

    anchor: str
    name: str
    pattern: str
    definition: str

    @property
    def short(self) -> str:
        """The name without its parenthesis or alternatives, for the per-page list of terms."""
        return _SHORT.get(self.anchor, self.name.split(" (")[0].split(",")[0])


# Short names where cutting at the first comma or parenthesis would drop what the entry covers.
_SHORT = {"strategies": "S0–S3", "q-value": "q-value", "p-value": "p-value", "tpr": "TPR", "fpr": "FPR",
          "gap": "gap", "percentage-points": "percentage points", "flagged": "flag rate",
          "disadvantaged": "disadvantaged", "interval": "interval", "power": "power",
          "disparate-impact": "four-fifths rule", "equivalence": "equivalence test"}


TERMS: tuple[Term, ...] = (
    Term("gap", "Gap (its sign)", r"\bgaps?\b|\bdifference\b",
         "A gap compares one rate between two groups and is always **the disadvantaged group's rate "
         "minus the advantaged group's**. A negative gap means the disadvantaged group's rate is "
         "lower. Whether lower is good or bad depends on the rate: a lower flag rate is good for the "
         "person, a lower favourable-outcome rate is bad."),
    Term("percentage-points", "Percentage points (pp)", r"percentage points?|\bpp\b",
         "Gaps between rates are given in **percentage points**: a flag rate of 11% against 31% is a "
         "gap of −20 percentage points (not −20%, and not a fraction −0.20). Rates are percentages. "
         "The pages, their figures, their code's printed output and the results page use percentage "
         "points; only the downloadable CSV files and faircode's return values hold fractions in "
         "[0, 1], where 0.20 is 20 percentage points."),
    Term("flagged", "Flagged, flag rate, selection rate", r"\bflag(s|ged|ging)?\b|selection rate",
         "A model **flags** a person when it puts them in its positive class. The **flag rate** (the "
         "field's term is **selection rate**) is the share of a group the model flags. In every audit "
         "on this site the flag is the *harmful* decision; the glossary's [table of the "
         "audits](#audits) says what it means in each."),
    Term("favourable", "Favourable outcome", r"favourable",
         "The decision the person wants: in every audit here, *not* being flagged. Each audit's "
         "manifest declares it (`target.favourable`). Equal opportunity and the four-fifths rule are "
         "defined on the favourable outcome."),
    Term("disadvantaged", "Disadvantaged and advantaged group", r"disadvantaged|advantaged",
         "The two groups a gap compares. **\"Disadvantaged\" is a label set in the audit's "
         "configuration** (the group the audit asks about, usually the one historically treated "
         "worse), **not a finding**: in Recidivism Risk by sex the label goes to men, and an audit "
         "can find the \"disadvantaged\" group better off (women are flagged less in Benefits Denial)."),
    Term("base-rate", "Base rate", r"base[- ]rates?",
         "The share of a group whose *true* label is positive: who actually earned above $50K, who "
         "actually reoffended. It is a fact about the data, not the model, and it differs from the "
         "flag rate (what the model predicts)."),
    Term("strategies", "S0, S1, S2, S3 (feature strategies)", r"\bS[0-3]\b",
         "The four ways the benchmark trains each model. **S0**: every candidate feature. **S1**: S0 "
         "without the protected columns. **S2**: only the audit's core features, no protected column "
         "and no declared proxy. **S3**: S2's model followed by fairlearn's `ThresholdOptimizer`, "
         "which sets a threshold per group to equalise flag rates on the first protected attribute "
         "(Hardt, Price and Srebro 2016)."),
    Term("test-split", "Test split", r"test split|held-out",
         "The rows held out from training (a share set by the manifest's `test_size`, 20% in every "
         "audit), on which every rate and gap is computed. A model is not judged on the rows it "
         "learned from."),
    Term("p-value", "p (p-value)", r"p-values?|\bp\s*[=<≤]|permutation p",
         "The probability, if group membership made no difference (every relabelling of who is in "
         "which group equally likely), of a gap at least as far from zero as the one observed. Exact "
         "tests give it exactly; a test that shuffles *m* times reports (*b* + 1)/(*m* + 1), with *b* "
         "the shuffles at least as extreme, so it is never 0 ([Phipson and Smyth "
         "2010](https://doi.org/10.2202/1544-6115.1585)). A small p says the gap is unlikely to be "
         "chance alone; a large p does **not** say the groups are treated alike."),
    Term("q-value", "q (q-value), FDR, FWER", r"q-values?|\bFDR\b|\bFWER\b|false discovery",
         "The p-value adjusted for the number of tests in the family (Benjamini and Hochberg 1995): "
         "flagging every row with q below 0.05 keeps the expected share of false findings among the "
         "findings (the **false discovery rate**, FDR) at or below 5%, if the tests are independent or "
         "positively dependent (Benjamini and Yekutieli 2001). The **family-wise error rate** (FWER) "
         "is the chance of even one false finding; Holm's method controls it. The results table's "
         "q-values take one audit's tests as the family; the multiple-comparisons explainer also "
         "corrects over the whole table."),
    Term("tpr", "True positive rate (TPR)", r"true positive rate|\bTPR\b|recall",
         "Among people whose true label is positive, the share the model flags: P(flagged | y = 1)."),
    Term("fpr", "False positive rate (FPR)", r"false positive rate|\bFPR\b|false positives?",
         "Among people whose true label is negative, the share the model flags anyway: P(flagged | "
         "y = 0). In these audits a false positive is a person wrongly given the harmful decision."),
    Term("precision", "Precision (PPV)", r"precision|\bPPV\b|predictive value",
         "Among the people the model flags, the share whose true label is positive: P(y = 1 | flagged)."),
    Term("interval", "Interval (95%)", r"\binterval",
         "A range of gaps the data are compatible with. A 95% interval procedure aims to cover the "
         "true gap in 95% of audits; in practice its coverage is approximate and can fall short when a "
         "group has few positives (the bootstrap explainer measures it). The results table uses score intervals (Newcombe's "
         "for a difference, MOVER-R with Wilson limits for a ratio); explainers also use the bootstrap, which resamples "
         "the rows. An interval that includes 0 (or 1 for a ratio) has not shown which group is "
         "better off."),
    Term("equal-opportunity", "Equal opportunity (difference)", r"equal opportunity",
         "Among the people who merit the favourable outcome, the share who receive it, compared "
         "between groups (Hardt, Price and Srebro 2016). Here that is the share *not* flagged among "
         "people whose true label is negative, so the equal opportunity difference is minus the false "
         "positive rate gap. Negative: the disadvantaged group's deserving members are refused more."),
    Term("demographic-parity", "Demographic parity difference", r"demographic parity",
         "The flag-rate (selection-rate) gap, disadvantaged minus advantaged, whatever the true labels."),
    Term("disparate-impact", "Disparate impact ratio, four-fifths rule", r"disparate impact|four-fifths",
         "The favourable-outcome rate of the disadvantaged group divided by the advantaged group's "
         "(1 is parity). The US Uniform Guidelines on Employee Selection Procedures (1978, 29 CFR "
         "1607.4(D)) treat a ratio below 0.8, the **four-fifths rule**, as evidence of adverse impact. "
         "The ratio of the *harmful* outcome is a different number that 0.8 does not apply to."),
    Term("equivalence", "Equivalence test (TOST), margin, the three verdicts",
         r"equivalen|\bTOST\b|\bmargin\b|practical size|inconclusive",
         "A test that a gap is *small*: its null hypothesis is that the gap is at least as large as a "
         "**margin** declared before looking, the smallest gap that would change a decision (each audit "
         "here declares one, with its reason; for a ratio, the four-fifths band). Two one-sided tests "
         "(TOST) reject it when the gap's 90% interval lies inside the margin (Schuirmann 1987). Beside "
         "the usual test it gives every gap one of three verdicts: **a gap shown** (significant, and the "
         "95% interval beyond the margin), **no gap of practical size shown** (the equivalence test "
         "rejects), or **inconclusive** (neither). \"Not significant\" alone is never a pass."),
    Term("permutation-test", "Permutation test", r"permutation|shuffl",
         "A test that relabels who is in which group many times (or all ways, exactly) and asks how "
         "often a relabelled gap is as extreme as the real one; that share is the p-value."),
    Term("bootstrap", "Bootstrap", r"bootstrap",
         "Resampling each group's rows with replacement to see how much a gap would move with another "
         "sample of the same size; the spread of the resampled gaps gives an interval (Efron and "
         "Tibshirani 1993)."),
    Term("power", "Power, minimum detectable gap", r"\bpower\b|detectable",
         "The chance that an audit of a given size finds (p below 0.05) a gap that is really there. The "
         "minimum detectable gap is the smallest true gap found with 80% power. Post-hoc power, "
         "computed for the gap an audit happened to observe, adds nothing to the p-value (Hoenig and "
         "Heisey 2001)."),
    Term("calibration", "Calibration", r"calibrat",
         "A score is calibrated in a group when, among people given score *s*, a share *s* have the "
         "positive label. Calibration in every group and equal error rates cannot both hold when base "
         "rates differ, unless prediction is perfect (Kleinberg, Mullainathan and Raghavan 2016; "
         "Chouldechova 2017)."),
    Term("proxy", "Proxy", r"prox(y|ies)",
         "A feature that carries the protected attribute (\"Husband\" states the sex). Dropping the "
         "protected column leaves its proxies, so the model can still tell the groups apart."),
    # The level is written out (importing faircode.benchmark for ALPHA would load pandas and
    # scikit-learn into every render); tests/test_render.py pins it to ALPHA.
    Term("significant", "Significant", r"significan",
         "Below the conventional 0.05 level (a convention, not a law of nature). On an explainer page, "
         "one test chosen before looking: its p below 0.05. On the results page, where many gaps are "
         "tested at once, a row whose q-value is below 0.05. Not significant means the audit did not "
         "show a gap, not that there is none: see [common mistakes](../mistakes/index.md) and "
         "[the three verdicts](#equivalence)."),
    Term("exchangeable", "Exchangeable rows", r"exchangeab",
         "Rows are exchangeable when, if nothing were going on, swapping their group labels would not "
         "change how likely the data are; independent people drawn the same way, for example. Members of one "
         "household or repeated rows of one person are not; a permutation test must then shuffle "
         "whole clusters (see the grouped-permutation explainer)."),
    Term("standard-error", "Standard error, the ± after a simulated share", r"standard error|Monte Carlo error",
         "How much a number computed from random draws would move if the draws were repeated. A share "
         "estimated from a simulation is shown as 41% ± 2: the ± is its Monte Carlo standard error; "
         "the estimate is within one standard error of what an endless simulation would give about "
         "two times in three."),
    Term("effect-size", "Effect size", r"effect size",
         "How big a gap is (here, in percentage points or as a ratio), as opposed to how sure we are "
         "that it is not chance (the p-value). A tiny gap can have a tiny p on a large audit, and a "
         "large gap a large p on a small one."),
)


def definition_text(term: Term) -> str:
    """``term``'s definition as plain text, for a tooltip: the Markdown of links, emphasis and code
    taken out, their words kept (``[Phipson and Smyth 2010](https://...)`` -> ``Phipson and Smyth 2010``)."""
    text = re.sub(r"\[([^\]]+)\]\([^)]*\)", r"\1", term.definition)
    text = re.sub(r"(\*\*|\*|`)(.+?)\1", r"\2", text)
    return " ".join(text.split())


def terms_used(text: str) -> list[Term]:
    """The glossary terms a page's text mentions, in glossary order."""
    plain = re.sub(r"```.*?```|<pre.*?</pre>", " ", text, flags=re.S)  # code is not prose
    return [t for t in TERMS if re.search(t.pattern, plain, flags=re.I)]


@dataclass(frozen=True)
class AuditConvention:
    """What the words mean in one audit, read from its manifest."""

    slug: str
    name: str
    flagged: str  # target.meaning: what the positive class (the flag) means for the person
    favourable: str  # "not flagged" or "flagged": the manifest's target.favourable in words
    groups: tuple[tuple[str, str, str], ...]  # (attribute, disadvantaged label, advantaged label)


def audit_conventions(root: Path) -> list[AuditConvention]:
    """One `AuditConvention` per ``audits/*/audit.yaml`` under ``root``, by name.

    Reading a manifest validates it against its data (pandas, a sha256 of each data file): the
    answer is remembered in ``.cache/`` by the digests of the manifests and data files, so a
    build that changed none of them neither imports pandas nor reads the data for it.
    """
    import json

    from site_src.filestate import hash_file

    manifests = sorted((root / "audits").glob("*/audit.yaml"))
    key = [[str(p.relative_to(root)), hash_file(p)] for p in manifests]
    key += [[str(p.relative_to(root)), hash_file(p)] for p in sorted((root / "data").glob("*")) if p.is_file()]
    memo = root / ".cache" / "fairsite-glossary.json"
    try:
        saved = json.loads(memo.read_text(encoding="utf-8"))
        if saved["key"] == key:
            return [AuditConvention(**{**a, "groups": tuple(tuple(g) for g in a["groups"])}) for a in saved["audits"]]
    except (OSError, ValueError, KeyError, TypeError):
        pass
    out = _read_conventions(manifests, root)
    try:
        memo.parent.mkdir(parents=True, exist_ok=True)
        memo.write_text(json.dumps({"key": key, "audits": [a.__dict__ for a in out]}), encoding="utf-8")
    except OSError:
        pass  # remembered next time
    return out


def _read_conventions(manifests: list[Path], root: Path) -> list[AuditConvention]:
    from faircode.manifest import load_manifest

    out = []
    for path in manifests:
        m = load_manifest(path, root=root)
        out.append(AuditConvention(
            slug=path.parent.name, name=m.name, flagged=m.target.meaning,
            favourable="not flagged" if m.target.favourable == "negative" else "flagged",
            groups=tuple((p.name, p.disadvantaged_label, p.reference_label) for p in m.protected),
        ))
    return sorted(out, key=lambda a: a.name)
