"""The accepted numbers: every run value an explainer's prose cites, recorded as readers saw it.

``explainers/<slug>.numbers.json`` is committed next to the source. ``fairsite check`` compares
a fresh run with it and fails on drift with a table (explainer / value / accepted / now);
``fairsite accept`` records new numbers on purpose. A value is compared as displayed: if the
prose shows ``rate | percent`` then 0.24312 and 0.24318 are the same number ("24.3%"). A value
declared Monte Carlo in the front matter (``monte_carlo: {p_by_hand: n_shuffles}``) may move by
four standard errors of its resample count instead. Values the prose uses only inside loops or
through attributes are compared as numbers, to a relative 1e-9.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from pathlib import Path

import jinja2
from jinja2 import nodes

from site_src.check import mc_error
from site_src.collect import Explainer
from site_src.errors import CheckError
from site_src.execute import RunResult
from site_src.filters import FILTERS

SUFFIX = ".numbers.json"


@dataclass(frozen=True)
class Drift:
    explainer: str
    value: str
    accepted: str
    now: str


def snapshot_path(explainer: Explainer) -> Path:
    return explainer.path.with_name(explainer.slug + SUFFIX)


def cited(explainer: Explainer, run: RunResult) -> dict:
    """``{name: {"value": raw, "shown": [displayed strings]}}`` for each run value the prose cites."""
    tree = jinja2.Environment().parse(explainer.prose)
    names = {n.name for n in tree.find_all(nodes.Name) if n.ctx == "load" and n.name in run.values}
    shown: dict[str, set[str]] = {name: set() for name in names}
    for f in tree.find_all(nodes.Filter):
        if isinstance(f.node, nodes.Name) and f.node.name in names and f.name in FILTERS:
            try:
                args = [a.as_const() for a in f.args]
            except nodes.Impossible:
                continue  # an argument that is itself a run value: the raw comparison covers it
            shown[f.node.name].add(_shown(f.name, run.values[f.node.name], args))
    return {name: {"value": run.values[name], "shown": sorted(shown[name])} for name in sorted(names)}


def _shown(filter_name: str, value, args) -> str:
    try:
        return FILTERS[filter_name](value, *args)
    except (TypeError, ValueError) as err:
        return f"<{err}>"


def save(explainer: Explainer, run: RunResult) -> Path:
    path = snapshot_path(explainer)
    data = {"explainer": explainer.display_path, "values": cited(explainer, run)}
    path.write_text(json.dumps(data, indent=1, sort_keys=True, ensure_ascii=False) + "\n", encoding="utf-8")
    return path


def compare(explainer: Explainer, run: RunResult) -> list[Drift] | None:
    """The drifts between the accepted numbers and this run; None when nothing was accepted yet."""
    path = snapshot_path(explainer)
    if not path.exists():
        return None
    try:
        accepted = json.loads(path.read_text(encoding="utf-8"))["values"]
    except (ValueError, KeyError, TypeError) as err:
        raise CheckError(f"{path.parent.name}/{path.name} is not an accepted-numbers file ({type(err).__name__}: "
                         f"{err}); restore it from git or run `fairsite accept {explainer.slug}`",
                         explainer=explainer.display_path) from None
    now = cited(explainer, run)
    mc = explainer.meta.monte_carlo
    drifts = []
    for name in sorted(set(accepted) | set(now)):
        if name not in now:
            drifts.append(Drift(explainer.display_path, name, _brief(accepted[name]["value"]), "(no longer cited)"))
            continue
        if name not in accepted:
            drifts.append(Drift(explainer.display_path, name, "(not accepted yet)", _brief(now[name]["value"])))
            continue
        old, new = accepted[name], now[name]
        if name in mc:
            n = run.values.get(mc[name])
            ok = _within_mc(old["value"], new["value"], n)
        elif old["shown"] or new["shown"]:
            ok = old["shown"] == new["shown"] and _close(old["value"], new["value"], rel=None)
        else:
            ok = _close(old["value"], new["value"], rel=1e-9)
        if not ok:
            drifts.append(Drift(explainer.display_path, name,
                                ", ".join(old["shown"]) or _brief(old["value"]),
                                ", ".join(new["shown"]) or _brief(new["value"])))
    return drifts


def _within_mc(old, new, n) -> bool:
    if not isinstance(n, int) or n <= 0 or not all(isinstance(v, (int, float)) for v in (old, new)):
        return old == new
    return abs(new - old) <= 4 * mc_error(min(max(old, 0.0), 1.0), n) * math.sqrt(2)


def _close(old, new, *, rel: float | None) -> bool:
    """Structural equality; numbers within ``rel`` (``None``: any number, its display decides)."""
    if isinstance(old, bool) or isinstance(new, bool):
        return old == new
    if isinstance(old, (int, float)) and isinstance(new, (int, float)):
        return rel is None or math.isclose(old, new, rel_tol=rel, abs_tol=1e-12)
    if isinstance(old, list) and isinstance(new, list):
        return len(old) == len(new) and all(_close(a, b, rel=rel or 1e-9) for a, b in zip(old, new))
    if isinstance(old, dict) and isinstance(new, dict):
        return old.keys() == new.keys() and all(_close(old[k], new[k], rel=rel or 1e-9) for k in old)
    return old == new


def _brief(value) -> str:
    text = json.dumps(value)
    return text if len(text) <= 60 else text[:57] + "..."
