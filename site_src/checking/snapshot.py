"""The accepted numbers: every run value an explainer's prose cites, recorded as readers saw it.

``explainers/<slug>.numbers.json`` is committed next to the source. ``fairsite check`` compares
a fresh run with it and fails on drift with a table (explainer / value / accepted / now);
``fairsite accept`` records new numbers on purpose.

A value matches its accepted one by the tolerance ``faircode.tolerances`` declares for its kind,
where the kind is known:

- a value declared Monte Carlo in the front matter (``monte_carlo: {p_by_hand: n_shuffles}``):
  within four standard errors of its resample count (``tolerances.monte_carlo``), each element
  of a list or dict alike;
- a value the prose shows through the ``pvalue`` filter: on the log scale
  (``tolerances.p_value``);
- an integer (a count, a group size, a seed): exact; booleans and text: exact.

Any other number is taken for what most explainer numbers are, a quantity computed from data
and fitted models: it matches if the prose shows it exactly as accepted (readers see the same
page; ``0.24312`` and ``0.24318`` are both "24.3%"), or, when the display changed, if the value
is within the fitted-model tolerance (``tolerances.fitted``, 1e-4): a value sitting on a
rounding boundary may flip its last shown digit on another machine, which is not a change.
Values the prose uses only inside loops or through attributes (lists, dicts) get the same
fitted-model tolerance element by element.
"""

from __future__ import annotations

import hashlib
import json
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import jinja2
from jinja2 import nodes

from faircode import tolerances
from faircode.formatting import closest
from site_src import filestate
from site_src.sources.collect import PROSE_FUNCTIONS, Explainer, prose_syntax_tree
from site_src.sources.reports import REPORT_FUNCTIONS
from site_src.errors import CheckError
from site_src.execution.execute import RunResult
from site_src.filters import FILTERS

SUFFIX = ".numbers.json"


@dataclass(frozen=True)
class Drift:
    """One cited value that differs from its accepted record: a row of the drift table.

    ``explainer`` is the source path, ``value`` the template variable's name, ``accepted`` and
    ``now`` what readers saw and would see (``"(not accepted yet)"`` / ``"(no longer cited)"``
    when one side has no record), ``lines`` the lines of the source that cite it (none when it is
    no longer cited).
    """

    explainer: str
    value: str
    accepted: str
    now: str
    lines: tuple[int, ...] = ()


def snapshot_path(explainer: Explainer) -> Path:
    """``explainers/<slug>.numbers.json``: where an explainer's accepted numbers are committed,
    beside its source (a report's: ``reports/<slug>/report.numbers.json``)."""
    return explainer.path.with_name(explainer.path.stem + SUFFIX)


def cited(explainer: Explainer, run: RunResult) -> dict:
    """``{name: {"value": raw, "shown": [displayed strings]}}`` for each run value the prose cites."""
    names, filters = _citations(explainer, run)
    shown: dict[str, set[str]] = {name: set() for name in names}
    for name, filter_name, args, kwargs in filters:
        shown[name].add(_shown(filter_name, run.values[name], args, kwargs))
    return {name: {"value": run.values[name], "shown": sorted(shown[name])} for name in sorted(names)}


def _citations(explainer: Explainer, run: RunResult) -> tuple[set[str], list[tuple[str, str, list, dict]]]:
    """The run values the prose cites, and each (name, filter, constant positional arguments,
    constant keyword arguments) it shows them by: both kinds of argument, so that what is recorded
    is what the page shows (``interval(2, unit="ratio")`` is a ratio, not percentage points)."""
    tree = prose_syntax_tree(explainer.prose)
    names = {n.name for n in tree.find_all(nodes.Name) if n.ctx == "load" and n.name in run.values}
    names.update(name for name in explainer.cited_always if name in run.values)  # a report's tables
    filters = []
    for f in tree.find_all(nodes.Filter):
        if isinstance(f.node, nodes.Name) and f.node.name in names and f.name in FILTERS:
            try:
                args = [a.as_const() for a in f.args]
                kwargs = {k.key: k.value.as_const() for k in f.kwargs}
            except nodes.Impossible:
                continue  # an argument that is itself a run value: the raw comparison covers it
            if f.dyn_args is not None or f.dyn_kwargs is not None:
                continue  # *args / **kwargs spelled in the template: not constants either
            filters.append((f.node.name, f.name, args, kwargs))
    return names, filters


def _shown(filter_name: str, value, args, kwargs) -> str:
    try:
        return FILTERS[filter_name](value, *args, **kwargs)
    except (TypeError, ValueError) as err:
        return f"<{err}>"


def save(explainer: Explainer, run: RunResult) -> Path:
    """Accept ``run``'s cited values: write them, as raw values and as shown, to the explainer's
    numbers file (sorted keys, one value per line, so a diff reads well), with what they came
    from (`run_inputs`), and return its path."""
    path = snapshot_path(explainer)
    data = {"explainer": explainer.display_path, "values": cited(explainer, run), "inputs": run_inputs(explainer, run)}
    path.write_text(json.dumps(data, indent=1, sort_keys=True, ensure_ascii=False) + "\n", encoding="utf-8")
    return path


def _accepted(explainer: Explainer) -> dict | None:
    """The accepted values of ``explainer`` (its numbers file's ``values``), or None when nothing
    was accepted yet; a file that is not one is a CheckError naming it and the fix."""
    path = snapshot_path(explainer)
    if not path.exists():
        return None
    try:
        accepted = json.loads(path.read_text(encoding="utf-8"))["values"]
        _check_accepted(accepted)
    except (ValueError, KeyError, TypeError) as err:
        raise CheckError(f"{path.parent.name}/{path.name} is not an accepted-numbers file ({type(err).__name__}: "
                         f"{err}); restore it from git or run `fairsite accept {explainer.slug}`",
                         explainer=explainer.display_path) from None
    return accepted


def _names_read(explainer: Explainer, run: RunResult) -> tuple[dict[str, set[int]], set[str]]:
    """Each name the prose reads, with its lines (the prose keeps the source's line numbers, front
    matter blanked, so a node's line is the file's), and those of them the run did not define: a
    typo the render stage reports; here it only explains why an accepted value looks "no longer
    cited". Not counted as undefined: what the template sets itself (a loop's variables and
    `loop`, {% set %}) and what each page provides (PROSE_FUNCTIONS)."""
    where: dict[str, set[int]] = {}
    stored = set()
    for n in prose_syntax_tree(explainer.prose).find_all(nodes.Name):
        if n.ctx == "load":
            where.setdefault(n.name, set()).add(n.lineno)
        elif n.ctx == "store":
            stored.add(n.name)
    unknown = set(where) - stored - {"loop"} - set(run.values) - set(PROSE_FUNCTIONS) - set(REPORT_FUNCTIONS)
    return where, unknown


def compare(explainer: Explainer, run: RunResult) -> list[Drift] | None:
    """The drifts between the accepted numbers and this run; None when nothing was accepted yet."""
    accepted = _accepted(explainer)
    if accepted is None:
        return None
    try:
        now = cited(explainer, run)
    except jinja2.TemplateSyntaxError:
        return []  # nothing can be read from prose that does not parse: the render stage reports it, with its line
    p_values = {name for name, filter_name, *_ in _citations(explainer, run)[1] if filter_name == "pvalue"}
    mc = explainer.meta.monte_carlo
    where, unknown = _names_read(explainer, run)
    drifts = []
    for name in sorted(set(accepted) | set(now)):
        if name not in now:
            typo = closest(name, unknown)
            drifts.append(Drift(explainer.display_path, name, _brief(accepted[name]["value"]),
                                f"(no longer cited: the prose reads '{typo}', which the run did not define)"
                                if typo else "(no longer cited)"))
            continue
        if name not in accepted:
            drifts.append(Drift(explainer.display_path, name, "(not accepted yet)", _brief(now[name]["value"]),
                                tuple(sorted(where.get(name, ())))))
            continue
        old, new = accepted[name], now[name]
        if name in mc:
            n = run.values.get(mc[name])
            rule = lambda v, n=n: tolerances.monte_carlo(v, n)  # noqa: E731
        elif name in p_values:
            rule = lambda v: tolerances.p_value()  # noqa: E731
        else:
            rule = lambda v: tolerances.fitted()  # noqa: E731
        same_display = bool(old["shown"]) and old["shown"] == new["shown"] and not (name in mc or name in p_values)
        ok = (same_display and _same_shape(old["value"], new["value"])) or _matches(old["value"], new["value"], rule)
        if not ok:
            if old["shown"] or new["shown"]:
                then, now_shown = ", ".join(old["shown"]), ", ".join(new["shown"])
            else:
                # A list or dict cut at 60 characters hid what moved (a fresh user saw two equal
                # beginnings): the first element that differs, by its place.
                place, a, b = _first_difference(old["value"], new["value"], rule)
                then, now_shown = f"{place}{_brief(a)}", f"{place}{_brief(b)}"
            drifts.append(Drift(explainer.display_path, name, then, now_shown, tuple(sorted(where.get(name, ())))))
    return drifts


@dataclass(frozen=True)
class NumbersProblem:
    """Why a page's cited numbers are not the accepted ones.

    ``kind`` is "unaccepted" (nothing accepted yet), "drift" (``drifts`` lists the values that
    moved beyond their tolerance) or "unreadable" (the accepted-numbers file is broken).
    """

    kind: Literal["unaccepted", "drift", "unreadable"]
    text: str
    slug: str
    drifts: tuple[Drift, ...] = ()


def numbers_problem(e: Explainer, run: RunResult) -> NumbersProblem | None:
    """How the numbers the prose cites differ from the accepted ones; None if they do not."""
    try:
        drifts = compare(e, run)
    except CheckError as err:
        return NumbersProblem("unreadable", err.message, e.slug)
    if drifts is None:
        return NumbersProblem("unaccepted", f"no accepted numbers yet ({snapshot_path(e).name}); "
                              f"run `fairsite accept {e.slug}`", e.slug)
    if not drifts:
        return None
    width = max(len(d.value) for d in drifts)
    rows = "\n".join(f"    {d.value:<{width}}  accepted: {d.accepted:<24}  now: {d.now}{_cited_at(e, d)}" for d in drifts)
    # What the run read differently, first: the writer's question is why the numbers moved.
    since, changed = changed_since(e, run) or ("", [])
    since = f"    since they were accepted: {since}\n" if since else ""
    manifests = [p for p in changed if p.startswith("audits/")]
    if manifests:
        # `accept` alone leaves results/ made from the manifest as it was, and the checks and
        # pages that compare with it fail (a fresh user accepted and met 13 problems).
        advice = (f"if the change to {manifests[0]} is meant, run `faircode benchmark` (results/ is made from "
                  f"the manifests), then `fairsite accept {e.slug}`; if not, undo it")
    else:
        advice = f"run `fairsite accept {e.slug}` if on purpose"
    head = f"cited numbers changed ({advice}):"
    return NumbersProblem("drift", f"{head}\n{since}{rows}", e.slug, tuple(drifts))


def _cited_at(e: Explainer, d: Drift) -> str:
    """Where the prose cites a drifted value: the writer's next stop (a new user asked for it)."""
    if not d.lines:
        return ""
    return f"  ({e.display_path}, line{'s' if len(d.lines) > 1 else ''} {', '.join(map(str, d.lines))})"


_DIGEST_HEX = 16  # of a sha256 in the record: enough to tell two versions apart, short enough to read in a diff


def run_inputs(explainer: Explainer, run: RunResult) -> dict:
    """What a run's numbers came from, as the accepted-numbers file records it (``"inputs"``):
    the digest of the explainer's code, of each project file the run read (its modules and data,
    root-relative, ``None`` if it was missing; not the build's own, ``site_src/``), the packages
    it imported (distribution -> version) and Python's version. Digests are the first
    `_DIGEST_HEX` hex digits of sha256."""
    return {"code": _short(hashlib.sha256(explainer.code.encode("utf-8")).hexdigest()),
            # The build's own modules the runner imported are not the numbers' inputs (the runner's
            # code is in every run's key already): an edit to them would be listed on every drift.
            "files": {path: _short(digest) for path, digest in sorted(run.deps.items())
                      if not path.startswith("site_src/")},
            "packages": dict(sorted(run.packages.items())), "python": run.python}


def _short(digest: str | None) -> str | None:
    return digest[:_DIGEST_HEX] if digest else None


def changed_since(explainer: Explainer, run: RunResult) -> tuple[str, list[str]] | None:
    """What changed among the inputs the accepted numbers record (`run_inputs`) and this run's,
    in words, for the drift message: ``"its code changed; audits/a/audit.yaml changed
    (split.test_size: 0.3 -> 0.25)"``, and the project files that changed. A YAML file's changed
    keys are named when ``HEAD`` holds the version the numbers were accepted from. None when the
    file records no inputs (accepted before they were recorded) or cannot be read.

    A fresh user changed a manifest's ``test_size``: every explainer's numbers moved, and each
    message said only "run ``fairsite accept``" (issue 26)."""
    try:
        then = json.loads(snapshot_path(explainer).read_text(encoding="utf-8"))["inputs"]
        then_files, then_packages = dict(then["files"]), dict(then["packages"])
    except (OSError, ValueError, KeyError, TypeError):
        return None
    now = run_inputs(explainer, run)
    root = explainer.root
    said = ["its code changed"] if then.get("code") != now["code"] else []
    # Only what both records hold: a run forked after the fork server imported every explainer's
    # modules records them all, one forked earlier only its own, so a file or package in one
    # record alone is not a change of what the code reads (a new data file comes with a code change).
    files, modules, changed = [], [], []
    for path in sorted(set(then_files) & set(now["files"])):
        if then_files[path] != now["files"][path]:
            changed.append(path)
            if path.endswith(".py"):
                modules.append(path)
                continue
            keys = _yaml_changes(root, path, then_files[path]) if path.endswith((".yaml", ".yml")) else ""
            files.append(f"{path} changed{f' ({keys})' if keys else ''}")
    said += files[:4] + ([f"and {len(files) - 4} more files"] if len(files) > 4 else [])
    if modules:
        # Named apart, after the data: a module edited since may or may not move this page's
        # numbers (a fresh user read three unrelated modules listed as the cause).
        said.append(f"modules it imports changed too: {', '.join(modules[:3])}"
                    + (f" and {len(modules) - 3} more" if len(modules) > 3 else ""))
    said += [f"{name} {then_packages[name]} -> {now['packages'][name]}"
             for name in sorted(set(then_packages) & set(now["packages"]))
             if then_packages[name] != now["packages"][name]]
    if then.get("python") != now["python"]:
        said.append(f"Python {then.get('python')} -> {now['python']}")
    if not said:
        return ("its code, the files it read, its packages and Python are those the accepted numbers "
                "came from"), []
    return "; ".join(said), changed


def _yaml_changes(root: Path, path: str, accepted_digest: str | None) -> str:
    """The keys of a YAML file whose values differ between the committed version and the file
    now, ``"split.test_size: 0.3 -> 0.25"`` (at most three), when the committed version is the one
    the numbers were accepted from; else ""."""
    import yaml

    before = filestate.committed_bytes(root, path)
    if before is None or _short(hashlib.sha256(before).hexdigest()) != accepted_digest:
        return ""
    try:
        old, new = yaml.safe_load(before), yaml.safe_load((root / path).read_bytes())
    except (OSError, yaml.YAMLError):
        return ""
    shown = lambda v: "(none)" if v is _ABSENT else _brief(v)  # noqa: E731
    changes = [f"{key}: {shown(a)} -> {shown(b)}" for key, a, b in _differences(old, new)]
    return ", ".join(changes[:3]) + (f" and {len(changes) - 3} more" if len(changes) > 3 else "")


_ABSENT = object()


def _differences(old, new, key: str = ""):
    """``(dotted key, old, new)`` for each leaf that differs between two parsed YAML documents
    (`_ABSENT` on the side without the key); lists compared whole."""
    if isinstance(old, dict) and isinstance(new, dict):
        for k in list(old) + [k for k in new if k not in old]:
            yield from _differences(old.get(k, _ABSENT), new.get(k, _ABSENT), f"{key}.{k}" if key else str(k))
    elif old != new:
        yield key or "(the whole file)", old, new


def _check_accepted(accepted) -> None:
    """Raise TypeError/KeyError unless ``accepted`` is ``{name: {"value": ..., "shown": [str, ...]}}``
    (what ``save`` writes; a hand edit or a merge can leave anything)."""
    if not isinstance(accepted, dict):
        raise TypeError(f"'values' must be an object of cited names, not {type(accepted).__name__}")
    for name, entry in accepted.items():
        if not isinstance(entry, dict):
            raise TypeError(f"'{name}' must be an object with 'value' and 'shown', not {type(entry).__name__}")
        for key in ("value", "shown"):
            if key not in entry:
                raise KeyError(f"'{name}' has no '{key}'")
        if not isinstance(entry["shown"], list) or not all(isinstance(s, str) for s in entry["shown"]):
            raise TypeError(f"'{name}': 'shown' must be a list of the strings the page displays")


def _matches(old, new, rule) -> bool:
    """Structural equality, numbers by ``rule(accepted number)``; integers (counts) and booleans exact."""
    if isinstance(old, bool) or isinstance(new, bool):
        return old == new
    if isinstance(old, int) and isinstance(new, int):
        return old == new
    if isinstance(old, (int, float)) and isinstance(new, (int, float)):
        return rule(old).matches(float(old), float(new))
    if isinstance(old, list) and isinstance(new, list):
        return len(old) == len(new) and all(_matches(a, b, rule) for a, b in zip(old, new))
    if isinstance(old, dict) and isinstance(new, dict):
        return old.keys() == new.keys() and all(_matches(old[k], new[k], rule) for k in old)
    return old == new


def _first_difference(old, new, rule, place: str = "") -> tuple[str, object, object]:
    """``(place, old element, new element)``: where two values first differ by `_matches`
    (``"[0].base_adv = "``), or the values whole (place ``""``) where the shapes differ."""
    if isinstance(old, list) and isinstance(new, list) and len(old) == len(new):
        pairs = [(f"{place}[{i}]", a, b) for i, (a, b) in enumerate(zip(old, new))]
    elif isinstance(old, dict) and isinstance(new, dict) and old.keys() == new.keys():
        pairs = [(f"{place}.{k}" if place else str(k), old[k], new[k]) for k in old]
    else:
        return (f"{place} = " if place else ""), old, new
    for where, a, b in pairs:
        if not _matches(a, b, rule):
            return _first_difference(a, b, rule, where)
    return (f"{place} = " if place else ""), old, new


def _same_shape(old, new) -> bool:
    """Same structure and the same non-numbers: what is left to compare once the display matched."""
    return _matches(old, new, lambda v: _ANY_NUMBER)


_ANY_NUMBER = tolerances.Tolerance("fitted", math.inf, "as displayed")


def _brief(value) -> str:
    text = json.dumps(value)
    return text if len(text) <= 60 else text[:57] + "..."
