"""``fairsite new "Title"``: a new explainer in the house form that builds at once."""

from __future__ import annotations

import re
import unicodedata
from pathlib import Path

import yaml

from site_src.errors import ConfigError
from site_src.sources.collect import SLUG, split_front_matter, title_key

# The front matter is written by the YAML library (any title: colons, quotes, leading numbers),
# then the body below. The title is the author's name for the page, kept as given; the
# bare-number rule does not apply to whole numbers in a title ("Top 10 Mistakes").
_CHECKS = [{"name": "the hand-computed gap equals faircode.significance's",
            "assert": "abs(gap_by_hand - gap_library) < 1e-12"}]

_TEMPLATE = '''---
{front_matter}---

!!! tip "What this means for your audit"

    1. **Say the first thing an auditor should do, as an order.** Then say why, in one sentence.
    2. **Say the second thing, as an order.** Then say why, in one sentence.

    {{{{ check_gap(n_a=n_a, n_b=n_b, rate_a=rate_a, rate_b=rate_b, a=group_a, b=group_b, outcome="given the positive prediction", text="Check these numbers") }}}} in the calculator.

## When should I use it?

- Say when to use this method, and what to use instead when it does not fit.

## In one sentence

Define the method in one sentence a curious reader can follow.

## Why it matters

Say what goes wrong in an audit without it.

## The idea, step by step

1. First step.
2. Second step.

## A worked example: German Credit

{{{{ scenario("german-credit") }}}}

A logistic regression on the core features ([strategy S2](../../glossary/index.md#strategies))
is judged on the held-out [test split](../../glossary/index.md#test-split). It gives the positive
prediction to {{{{ rate_a | percent }}}} of {{{{ group_a }}}} ({{{{ n_a | number }}}} people) and
{{{{ rate_b | percent }}}} of {{{{ group_b }}}} ({{{{ n_b | number }}}}): a [gap](../../glossary/index.md#gap) of
{{{{ gap_by_hand | gap }}}} ({{{{ p_value | pvalue }}}}). Figure 1 shows the two rates.

{{{{ figure(1, alt="Bar chart of the share of each group given the positive prediction: " ~ group_a ~ " " ~ (rate_a | percent) ~ ", " ~ group_b ~ " " ~ (rate_b | percent) ~ ".", caption="Say what the reader should notice in this figure.") }}}}

## The code

```python explainer
import matplotlib.pyplot as plt

from faircode import fit_predict, load_audit
from faircode.significance import significance_report

audit = load_audit("german-credit")
pred = fit_predict(audit, strategy="S2", model="logistic_regression")
attribute = audit.attributes[0]
group_a, group_b = audit.group_labels[attribute]
in_a = audit.masks[attribute][pred.rows] == 1
in_b = audit.reference_masks[attribute][pred.rows] == 1
n_a, n_b = int(in_a.sum()), int(in_b.sum())

rate_a = float(pred.y_pred[in_a].mean())
rate_b = float(pred.y_pred[in_b].mean())
gap_by_hand = rate_a - rate_b
report = significance_report(pred.y_pred[in_a], pred.y_pred[in_b], random_state=0)
gap_library, p_value = report.gap, report.p_value
print(report)

fig, ax = plt.subplots(figsize=(5, 3))
ax.bar([group_a, group_b], [rate_a, rate_b], color=["#d84315", "#3949ab"])
ax.set_ylabel("share predicted positive")
fig.tight_layout()
```

## Limitations

- What this method cannot tell you.

## Further reading

{{# List the sources with {{{{ further_reading("key", ["key", "what to read it for"]) }}}}, each key an entry of
explainers/references.json, and cite one in the prose with {{{{ cite("key") }}}}. #}}
- Author, *Title*, Venue (year).
'''


# The scaffold's stand-in text: a page that still holds any of it is a draft, which `fairsite
# check` (and so `publish`) refuses (`checking.lint.scaffold_text`, which finds each one anywhere
# in a line: the caption is inside a call); `build` and `serve` show it.
PLACEHOLDERS = ("Say the first thing an auditor should do, as an order.",
                "Say the second thing, as an order.", "Then say why, in one sentence.",
                "Say when to use this method, and what to use instead when it does not fit.",
                "Define the method in one sentence a curious reader can follow.",
                "Say what goes wrong in an audit without it.", "1. First step.", "2. Second step.",
                "Say what the reader should notice in this figure.",
                "- What this method cannot tell you.", "- Author, *Title*, Venue (year).")
SUBTITLE = "What question does this method answer?"
SUMMARY = "One line that tells a reader what they will learn."
DRAFT_TAG = "draft"


def slugify(title: str) -> str:
    """The file name (without ``.md``) for ``title``: lowercase ASCII words joined by ``-``.

    Letters with accents keep their base form ("Équité" -> "equite"); letters of other scripts
    (Greek, Chinese...) have no such form and are left out.

    Raises
    ------
    ConfigError
        When no letter or digit is left to name the file after, or only digits are left of a
        title whose letters could not be written in ASCII ("Ισότητα 2" would be "2.md"): the
        message asks for ``--slug``.
    """
    # "Über Straße" -> "uber-strasse": letters keep their base form instead of vanishing.
    ascii_title = unicodedata.normalize("NFKD", title.replace("ß", "ss")).encode("ascii", "ignore").decode()
    slug = re.sub(r"[^a-z0-9]+", "-", ascii_title.lower()).strip("-")
    dropped = any(c.isalpha() for c in title) and not re.search(r"[a-z]", slug)
    if dropped:
        raise ConfigError(f"new: the title {title!r} has no letter of the Latin alphabet to name the file after "
                          f"(a file name is lowercase a-z, 0-9 and '-', the page's address); give one with --slug, "
                          f'e.g. fairsite new "{title}" --slug equal-treatment')
    if not slug:
        raise ConfigError(f"new: cannot make a file name from the title {title!r}; use letters or digits, "
                          "or give the file name with --slug")
    return slug


# The longest file name `new` makes (without ``.md``): the page's address too. A file name made
# from a long title is cut between words to fit; a 400-character title raised a raw "File name
# too long" (issue 47).
SLUG_MAX = 64


def shortened(slug: str) -> str:
    """``slug`` cut to at most `SLUG_MAX` characters, at the last ``-`` that fits when there is one."""
    if len(slug) <= SLUG_MAX:
        return slug
    cut = slug[:SLUG_MAX + 1]
    return (cut.rsplit("-", 1)[0] if "-" in cut else cut[:SLUG_MAX]).strip("-")


def _sluggable(text: str) -> bool:
    """Whether `slugify` makes a file name of ``text`` (for the example in a message)."""
    try:
        return bool(slugify(text))
    except ConfigError:
        return False


def _titled(explainers: Path, title: str) -> tuple[Path, str] | None:
    """The explainer in ``explainers`` whose front matter has ``title`` (as a reader sees it:
    ``collect.title_key``) and its title as written there, or None. A source whose front matter
    does not parse is skipped: the build names its problem."""
    for path in sorted(explainers.glob("*.md")):
        try:
            meta, _ = split_front_matter(path.read_text(encoding="utf-8").split("\n"), shown=str(path))
        except (ConfigError, OSError, UnicodeDecodeError):
            continue
        if isinstance(meta, dict) and isinstance(meta.get("title"), str) and title_key(meta["title"]) == title_key(title):
            return path, meta["title"]
    return None


def new_explainer(root: Path, title: str, *, slug: str | None = None) -> Path:
    """Write ``explainers/<slug>.md`` from the house template; refuse to overwrite.

    ``slug`` names the file (and the page's address) when the title cannot (`slugify`: a title
    in Greek or Chinese), or when another name is wanted; default: made from the title, cut
    between words to `SLUG_MAX` characters (`shortened`).

    Returns the path written. Raises ConfigError for an empty title, one with no letter or digit
    to name the file after (or no Latin letter: the message asks for ``slug``), a ``slug`` that is
    not lowercase words of a-z and 0-9 joined by ``-`` or is longer than `SLUG_MAX`, a file that
    already exists, or an
    explainer that already has this title (ignoring case and spacing), naming its file.
    """
    given, title = title, " ".join(title.split())
    if not title:
        raise ConfigError(f"new: the title must not be empty, got {given!r}")
    if slug is not None and not SLUG.match(slug):
        raise ConfigError(f"new: --slug must be lowercase words of a-z and 0-9 joined by '-' (the file's name "
                          f"and the page's address), got {slug!r}; e.g. {slugify(slug) if _sluggable(slug) else 'equal-treatment'!r}")
    if slug is not None and len(slug) > SLUG_MAX:
        raise ConfigError(f"new: --slug must be at most {SLUG_MAX} characters (the file's name and the page's "
                          f"address), got {len(slug)}; e.g. {shortened(slug)!r}")
    explainers = Path(root) / "explainers"
    path = explainers / f"{slug or shortened(slugify(title))}.md"
    if path.exists():
        raise ConfigError(f"new: {path} already exists; choose another title or edit that file")
    same = _titled(explainers, title)
    if same is not None:
        path, its_title = same  # quoted as written there: it may differ from the one given in case or spaces
        raise ConfigError(f"new: {path} already has the title {its_title!r}" + (
            f", the same to a reader as {title!r}" if its_title != title else "") + "; choose another title or edit that file")
    related = "permutation-test-fairness-gaps" if (explainers / "permutation-test-fairness-gaps.md").exists() else ""
    explainers.mkdir(parents=True, exist_ok=True)
    front = {"title": title, "subtitle": SUBTITLE, "summary": SUMMARY, "tags": [DRAFT_TAG],
             "related": [related] if related else [], "checks": _CHECKS}
    text = yaml.safe_dump(front, sort_keys=False, allow_unicode=True, width=1000)
    path.write_text(_TEMPLATE.format(front_matter=text), encoding="utf-8")
    return path
