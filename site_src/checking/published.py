"""Stage 4, published facts: each datasheet's facts from the published record, checked on its data.

A datasheet (``data/<name>.md``) declares, in its front matter under ``published:``, what the
dataset's documentation or its best-known analysis says about the file: row counts, class
balance, ProPublica's COMPAS table. Each fact names the rows it is about and the citation it
comes from; `verify` counts them in the committed data through faircode's own loading code and
fails, naming the fact, the citation, the expected and the found value, when they differ. Counts
must match exactly; a share (``expected: "44.85%"``) must match to the decimals it is published
with. So a changed data file, or a changed filter in a manifest, fails the check loudly with the
source it contradicts.

A fact::

    - fact: Black defendants, did not reoffend, scored Medium or High (FP)
      audit: recidivism-risk      # optional when the datasheet's `audits:` names one audit
      rows: file                  # "file": as faircode.data.read_data reads the file;
                                  # "audit": after the manifest's filters (faircode.load_audit)
      where: ["race == African-American", "two_year_recid == 0", "decile_score >= 5"]
      complete: false             # optional: true keeps only rows with no missing value
      share_of: [...]             # optional: expected is then the share of `where`'s rows that pass these
      files: [...]                # optional, with rows: file: count other files of the same dataset instead
      expected: 805               # an integer count, or a share written "44.85%"
      citation: Larson et al. (2016), table "Black defendants"
      url: https://www.propublica.org/article/how-we-analyzed-the-compas-recidivism-algorithm
      kind: published             # optional: "pinned" for a count the site itself relies on that
                                  # no source publishes (checked alike; the data page lists it
                                  # apart, never as published); its citation says where the site uses it

A condition is ``"column op value"`` with ``op`` one of ``== != < <= > >=``; the value is read as
a number when it reads as one (``5``), true/false, else the text as written (``>50K``).

``files`` is for a fact the documentation gives about files the audit does not read (UCI's Adult
counts are for its training and test parts together). Each entry names a file next to the audit's
data file, read with the manifest's parse options and the entry's tweaks, and the rows of all
entries are counted together::

      files:
        - adult.data
        - {file: adult.test, skip_rows: 1, strip_suffix: {income: "."}}
      # skip_rows: lines skipped before the rows, on top of the manifest's (adult.test opens
      #            with a comment line); strip_suffix: {column: text} removed from the end of
      #            that column's values (adult.test writes ">50K.")
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from decimal import Decimal, ROUND_HALF_EVEN
from pathlib import Path

from site_src import filestate
from site_src.errors import CheckError, ConfigError, SiteError

__all__ = ["Condition", "FileRead", "PublishedFact", "load_facts", "verify"]

_CONDITION = re.compile(r"^\s*(?P<column>[^\s=!<>]+)\s*(?P<op>==|!=|<=|>=|<|>)\s*(?P<value>.+?)\s*$")
_SHARE = re.compile(r"^\s*(?P<number>\d+(?:\.(?P<decimals>\d+))?)\s*%\s*$")
_KEYS = {"fact", "audit", "rows", "where", "complete", "share_of", "expected", "citation", "url", "files", "kind"}
_KINDS = ("published", "pinned")
_FILE_KEYS = {"file", "skip_rows", "strip_suffix"}
_ROWS = ("file", "audit")


@dataclass(frozen=True)
class Condition:
    """``column op value``: one row condition of a fact (``op`` one of ``== != < <= > >=``)."""

    column: str
    op: str
    value: object

    def __str__(self) -> str:
        return f"{self.column} {self.op} {self.value}"


@dataclass(frozen=True)
class FileRead:
    """One entry of a fact's ``files``: a file next to the audit's data file and how its reading
    differs from the manifest's parse options."""

    file: str  # a bare file name, e.g. "adult.test"
    skip_rows: int = 0  # skipped on top of the manifest's skiprows
    strip_suffix: tuple[tuple[str, str], ...] = ()  # (column, text removed from the end of its values)


@dataclass(frozen=True)
class PublishedFact:
    """One published fact of a datasheet, validated.

    ``expected`` is an int (a count, checked exactly) or a share in percent with ``decimals``
    digits after the point (checked after rounding the found share to as many).
    """

    datasheet: str  # as shown in messages, e.g. "data/compas.md"
    fact: str
    audit: str
    rows: str  # "file" or "audit"
    where: tuple[Condition, ...]
    share_of: tuple[Condition, ...] | None
    complete: bool
    expected: int | Decimal
    decimals: int | None  # for a share: digits after the point as published
    citation: str
    url: str | None
    files: tuple[FileRead, ...] = ()  # empty: the audit's own file (or its filtered rows)
    pinned: bool = False  # kind: pinned: the site's own count, not from a published source

    @property
    def expected_text(self) -> str:
        return f"{self.expected:,}" if self.decimals is None else f"{self.expected}%"


def load_facts(datasheet: Path, *, shown: str | None = None) -> list[PublishedFact]:
    """The published facts a datasheet declares (its front matter's ``published:``).

    Parameters
    ----------
    datasheet : Path
        A ``data/<name>.md`` file with YAML front matter.
    shown : str, optional
        How messages name the file (default: its name).

    Returns
    -------
    list of PublishedFact
        In the order declared; empty when the front matter has no ``published:``.

    Raises
    ------
    ConfigError
        Listing every problem: no front matter, a fact without ``fact``, ``expected`` or
        ``citation``, an unknown key, ``rows`` other than "file" or "audit", a condition that is
        not ``column op value``, an ``expected`` that is neither a count nor a share like "44.85%",
        no ``audit`` where the datasheet's ``audits:`` does not name exactly one, a ``files``
        entry that is not a bare file name with an optional whole ``skip_rows`` and a
        ``strip_suffix`` mapping of columns to text, ``files`` with ``rows: audit``, a ``kind``
        other than "published" or "pinned".
    """
    from site_src.sources.collect import split_front_matter

    shown = shown or datasheet.name
    meta, _ = split_front_matter(datasheet.read_text(encoding="utf-8").split("\n"), shown=shown)
    if not isinstance(meta, dict):
        raise ConfigError(f"{shown}: front matter must be a mapping")
    facts, problems = [], []
    audits = meta.get("audits") or []
    declared = meta.get("published") or []
    if not isinstance(declared, list):
        raise ConfigError(f"{shown}: published: expected a list of facts, got {type(declared).__name__}")
    for i, raw in enumerate(declared):
        where = f"{shown}: published[{i}]"
        if not isinstance(raw, dict):
            problems.append(f"{where}: expected a mapping with fact, rows, expected, citation")
            continue
        before = len(problems)
        for key in sorted(set(raw) - _KEYS):
            problems.append(f"{where}: unknown key {key!r} (expected one of {', '.join(sorted(_KEYS))})")
        for key in ("fact", "expected", "citation"):
            if raw.get(key) in (None, ""):
                problems.append(f"{where}: {key}: required")
        rows = raw.get("rows", "file")
        if rows not in _ROWS:
            problems.append(f"{where}: rows: expected 'file' or 'audit', got {rows!r}")
        audit = raw.get("audit") or (audits[0] if isinstance(audits, list) and len(audits) == 1 else None)
        if not audit:
            problems.append(f"{where}: audit: required when the datasheet's audits: does not name exactly one")
        conditions = _conditions(raw.get("where"), f"{where}: where", problems)
        share_of = None if raw.get("share_of") is None else _conditions(raw.get("share_of"), f"{where}: share_of", problems)
        expected, decimals = _expected(raw.get("expected"), share=share_of is not None, where=f"{where}: expected",
                                       problems=problems)
        files = _files(raw.get("files"), f"{where}: files", problems)
        kind = raw.get("kind", "published")
        if kind not in _KINDS:
            problems.append(f"{where}: kind: expected 'published' or 'pinned', got {kind!r}")
        if files and rows != "file":
            problems.append(f"{where}: files: only with rows: file (an audit's filters apply to its own file)")
        if len(problems) == before:
            facts.append(PublishedFact(
                datasheet=shown, fact=str(raw["fact"]), audit=str(audit), rows=rows, where=conditions,
                share_of=share_of, complete=bool(raw.get("complete", False)), expected=expected, decimals=decimals,
                citation=str(raw["citation"]), url=raw.get("url"), files=files, pinned=kind == "pinned"))
    if problems:
        raise ConfigError("\n".join(problems))
    return facts


def verify(root: Path, *, datasheets: list[Path] | None = None, use_cache: bool = True) -> list[SiteError]:
    """Check every published fact of the datasheets against the committed data.

    Parameters
    ----------
    root : Path
        The repository root (``audits/``, ``data/``).
    datasheets : list of Path, optional
        The datasheets to check; default every ``data/*.md`` except ``data/README.md``.
    use_cache : bool, default True
        Skip the counting when the datasheets, manifests, data files and this module are those of
        the last check that passed (``.cache/fairsite-published.json``); ``fairsite check``
        passes False and always counts.

    Returns
    -------
    list of SiteError
        One ``CheckError`` per fact that does not hold, naming the datasheet, the fact, the
        citation (and its address), the expected and the found value; one ``ConfigError`` per
        datasheet whose facts are malformed or whose audit cannot be loaded. Empty when all hold.
    """
    from site_src.filestate import digest_parts, hash_file

    root = Path(root).resolve()
    if datasheets is None:
        datasheets = sorted(p for p in (root / "data").glob("*.md") if p.name != "README.md")
    inputs = [*datasheets, *sorted((root / "audits").glob("*/audit.yaml")),
              *sorted(p for p in (root / "data").glob("*") if p.is_file()), Path(__file__)]
    key = digest_parts(f"{p} {hash_file(p)}" for p in inputs)
    memo = root / ".cache" / "fairsite-published.json"
    if use_cache:
        try:
            if json.loads(memo.read_text(encoding="utf-8")).get("key") == key:
                return []
        except (OSError, ValueError, AttributeError):
            pass
    problems: list[SiteError] = []
    frames: dict[tuple[str, str], object] = {}
    for path in datasheets:
        shown = filestate.shown_path(path, root)
        try:
            facts = load_facts(path, shown=shown)
        except ConfigError as err:
            problems.append(err)
            continue
        for fact in facts:
            try:
                found = _found(fact, _frame(fact, root, frames))
            except (ValueError, KeyError, FileNotFoundError) as err:  # ManifestError is a ValueError
                problems.append(ConfigError(f"{shown}: published fact {fact.fact!r}: cannot count it: {err}"))
                continue
            if found != fact.expected:
                problems.append(CheckError(_message(fact, found)))
    if not problems:
        try:
            memo.parent.mkdir(parents=True, exist_ok=True)
            memo.write_text(json.dumps({"key": key}), encoding="utf-8")
        except OSError:
            pass  # counted again next time
    return problems


# --- helpers ---------------------------------------------------------------------------------------


def _conditions(raw, where: str, problems: list[str]) -> tuple[Condition, ...]:
    if raw is None:
        return ()
    if isinstance(raw, str) or not isinstance(raw, list):
        problems.append(f"{where}: expected a list of conditions like \"race == Caucasian\"")
        return ()
    out = []
    for j, text in enumerate(raw):
        m = _CONDITION.match(str(text))
        if m is None:
            problems.append(f"{where}[{j}]: {text!r} is not \"column op value\" (op: == != < <= > >=)")
            continue
        out.append(Condition(m["column"], m["op"], _value(m["value"])))
    return tuple(out)


def _files(raw, where: str, problems: list[str]) -> tuple[FileRead, ...]:
    if raw is None:
        return ()
    if not isinstance(raw, list) or not raw:
        problems.append(f"{where}: expected a list of file names or {{file, skip_rows, strip_suffix}} mappings, "
                        f"got {raw!r}")
        return ()
    out = []
    for j, entry in enumerate(raw):
        at = f"{where}[{j}]"
        before = len(problems)
        spec = {"file": entry} if isinstance(entry, str) else entry
        if not isinstance(spec, dict):
            problems.append(f"{at}: expected a file name or a mapping with file, skip_rows, strip_suffix; got {entry!r}")
            continue
        for key in sorted(set(spec) - _FILE_KEYS):
            problems.append(f"{at}: unknown key {key!r} (expected one of {', '.join(sorted(_FILE_KEYS))})")
        name = spec.get("file")
        # A bare name: the file sits next to the audit's data file, so a fact cannot reach outside data/.
        if not isinstance(name, str) or not name or name in (".", "..") or "/" in name or "\\" in name:
            problems.append(f"{at}: file: expected the name of a file next to the audit's data file "
                            f"(e.g. adult.test), got {name!r}")
        skip = spec.get("skip_rows", 0)
        if isinstance(skip, bool) or not isinstance(skip, int) or skip < 0:
            problems.append(f"{at}: skip_rows: expected a whole number of lines >= 0, got {skip!r}")
        strip = spec.get("strip_suffix", {})
        if not isinstance(strip, dict) or not all(isinstance(c, str) and isinstance(s, str) and s
                                                  for c, s in strip.items()):
            problems.append(f"{at}: strip_suffix: expected a mapping column: text, e.g. {{income: \".\"}}; got {strip!r}")
        if len(problems) == before:
            out.append(FileRead(file=name, skip_rows=skip, strip_suffix=tuple(sorted(strip.items()))))
    return tuple(out)


def _value(text: str):
    """A condition's value: a whole number, a number, true/false, else the text as written
    (``>50K`` and ``N/A`` stay text; a YAML reading would choke on the first)."""
    for kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            pass
    return {"true": True, "false": False}.get(text, text)


def _expected(raw, *, share: bool, where: str, problems: list[str]) -> tuple[int | Decimal, int | None]:
    if raw is None:
        return 0, None  # reported as required
    if share:
        m = _SHARE.match(str(raw))
        if m is None:
            problems.append(f"{where}: a share_of fact expects a percentage as published, e.g. \"44.85%\"; got {raw!r}")
            return 0, None
        return Decimal(m["number"]), len(m["decimals"] or "")
    if isinstance(raw, bool) or not isinstance(raw, int) or raw < 0:
        problems.append(f"{where}: expected a count (a whole number), got {raw!r}; a share needs share_of")
        return 0, None
    return raw, None


def _frame(fact: PublishedFact, root: Path, frames: dict):
    """The rows a fact counts: the file as faircode reads it, the audit's filtered rows, or the
    fact's ``files`` read one after the other."""
    key = (fact.audit, fact.rows, fact.files)
    if key not in frames:
        from faircode import load_audit
        from faircode.data import read_data
        from faircode.manifest import load_manifest

        path = root / "audits" / fact.audit / "audit.yaml"
        if not path.is_file():
            raise FileNotFoundError(f"no audit {fact.audit!r} (audits/{fact.audit}/audit.yaml)")
        if fact.rows == "audit":
            frames[key] = load_audit(path, root=root).df
        elif fact.files:
            import pandas as pd

            manifest = load_manifest(path, root=root)
            folder = manifest.resolve(manifest.dataset.file).parent
            frames[key] = pd.concat([_read_file(folder, spec, manifest.dataset.parse) for spec in fact.files],
                                    ignore_index=True)
        else:
            manifest = load_manifest(path, root=root)
            frames[key] = read_data(manifest.resolve(manifest.dataset.file), manifest.dataset.parse)
    return frames[key]


def _read_file(folder: Path, spec: FileRead, parse):
    from faircode.data import read_data

    path = folder / spec.file
    if not path.is_file():
        raise FileNotFoundError(f"files: no file {spec.file!r} next to the audit's data file ({path})")
    df = read_data(path, parse.model_copy(update={"skiprows": parse.skiprows + spec.skip_rows}))
    for column, suffix in spec.strip_suffix:
        if column not in df.columns:
            raise KeyError(f"files: {spec.file}: strip_suffix: no column {column!r}")
        df[column] = df[column].map(lambda v: v.removesuffix(suffix) if isinstance(v, str) else v)
    return df


def _mask(df, conditions: tuple[Condition, ...]):
    import numpy as np

    keep = np.ones(len(df), dtype=bool)
    for c in conditions:
        if c.column not in df.columns:
            raise KeyError(f"no column {c.column!r} in the rows counted")
        col = df[c.column]
        if c.op == "==":
            keep &= (col == c.value).to_numpy()
        elif c.op == "!=":
            keep &= (col != c.value).to_numpy()
        else:
            # Order comparisons on a numeric column only: text compared with "<" is a mistake.
            if not (col.dtype.kind in "iuf" and isinstance(c.value, (int, float)) and not isinstance(c.value, bool)):
                raise ValueError(f"{c}: {c.op} needs a numeric column and a number")
            keep &= {"<": col < c.value, "<=": col <= c.value, ">": col > c.value,
                     ">=": col >= c.value}[c.op].fillna(False).to_numpy(dtype=bool)
    return keep


def _found(fact: PublishedFact, df) -> int | Decimal:
    keep = _mask(df, fact.where)
    if fact.complete:
        keep &= df.notna().all(axis=1).to_numpy()
    n = int(keep.sum())
    if fact.share_of is None:
        return n
    if n == 0:
        raise ValueError("share_of: no row passes `where`, so the share is undefined")
    k = int((keep & _mask(df, fact.share_of)).sum())
    # Round the exact share (a fraction of counts) to the published decimals, half to even.
    return (Decimal(100 * k) / Decimal(n)).quantize(Decimal(1).scaleb(-fact.decimals), rounding=ROUND_HALF_EVEN)


def _message(fact: PublishedFact, found) -> str:
    if fact.files:
        rows = " + ".join(f.file for f in fact.files)
    else:
        rows = "the file" if fact.rows == "file" else f"{fact.audit}'s rows after its filters"
    where = f" where {' and '.join(map(str, fact.where))}" if fact.where else ""
    share = f", share with {' and '.join(map(str, fact.share_of))}" if fact.share_of else ""
    found_text = f"{found:,}" if fact.decimals is None else f"{found}%"
    cited = fact.citation + (f" <{fact.url}>" if fact.url else "")
    what = "pinned count" if fact.pinned else "published fact"
    return (f"{fact.datasheet}: {what} {fact.fact!r} does not hold: expected {fact.expected_text} "
            f"(cited: {cited}), found {found_text} in {rows}{where}{share}")
