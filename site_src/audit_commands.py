"""``fairsite audit``: start a bias-audit report from a data file, verify a report's record, export a report.

    fairsite audit new NAME --data FILE        # reports/NAME/report.yaml and report.md, to complete
    fairsite audit verify RECORD --data FILE   # recompute every number of a record; 0 only if all match
    fairsite audit export NAME --out DIR       # the built report as a folder that opens from disk and prints

A report is built, checked and published by ``fairsite build`` and ``check`` like an explainer
(``site_src.sources.reports``); these commands are what a report has that an explainer has not.
Exit status: 0 done (``verify``: every number matches); 1 ``verify`` found numbers that differ,
or ``export`` found the report not built (or built from another manifest or data); 2 a bad
input (a name that is not one, a file that is missing, unreadable or not a record), with the
file or argument named, and nothing written.
"""

from __future__ import annotations

import argparse
import re
import shutil
import sys
import tempfile
from pathlib import Path

from rich.console import Console

from site_src.errors import ConfigError, SiteError

# Imported by `fairsite`'s argument parser on every command: what the commands need is imported
# when one runs (site_src.sources.reports imports pydantic and Jinja).

_out = Console(highlight=False, width=None if sys.stdout.isatty() else 160)  # what a command says: stdout
_err = Console(stderr=True, highlight=False, width=None if sys.stderr.isatty() else 160)


def add_parser(sub) -> argparse.ArgumentParser:
    """``fairsite audit`` and its three commands, under ``fairsite``'s subparsers ``sub``."""
    audit = sub.add_parser("audit", help="bias-audit reports: start one from a data file, verify a record, export one")
    commands = audit.add_subparsers(dest="audit", required=True, metavar="{new,verify,export}")
    new = commands.add_parser("new", help="write reports/NAME/report.yaml and report.md from a data file, to complete")
    new.add_argument("name", metavar="NAME", help="the report's name: its folder reports/NAME/ and its page's address "
                                                  "(lowercase a-z, 0-9 and '-')")
    new.add_argument("--data", required=True, type=Path, metavar="FILE",
                     help="the tool's decisions: a CSV file, a Parquet file or a folder of Parquet files")
    verify = commands.add_parser("verify", help="recompute every number of a report's record (report.json) from the data")
    verify.add_argument("record", type=Path, metavar="RECORD", help="the record, a report.json")
    verify.add_argument("--data", required=True, type=Path, metavar="FILE", help="the data file (or folder) it was made from")
    export = commands.add_parser("export", help="write a built report as a folder that opens from disk and prints")
    export.add_argument("name", metavar="NAME", help="the report's name (reports/NAME/)")
    export.add_argument("--out", required=True, type=Path, metavar="DIR", help="a new or empty folder to write")
    return audit


def run(root: Path, args) -> int:
    """Run ``fairsite audit <command>``; the exit status (see the module's docstring)."""
    try:
        if args.audit == "new":
            return _new(root, args.name, args.data)
        if args.audit == "verify":
            return _verify(args.record, args.data)
        from site_src.publishing.report_export import export_report

        out = export_report(root, args.name, args.out)
        _out.print(f"wrote {out}: open {out / 'index.html'} in a browser (no server needed) or print it; "
                   "report.json and report.csv are beside it")
        return 0
    except ConfigError as err:
        _err.print(f"[bold red]audit {args.audit} failed:[/] ", end="")
        _err.print(str(err), markup=False)
        return 2
    except SiteError as err:
        _err.print(f"[bold red]audit {args.audit} failed:[/] ", end="")
        _err.print(str(err), markup=False)
        return 1


# ------------------------------------------------------------------------------------------- new

def _new(root: Path, name: str, data: Path) -> int:
    manifest, page = new_report(root, name, data)
    text = manifest.read_text(encoding="utf-8")
    fill, guesses = text.count('"FILL IN'), len(re.findall(r"#\s*GUESS", text))
    _out.print(f"wrote {manifest.relative_to(root)} and {page.relative_to(root)}; in the manifest, fill in "
               f"{fill} value{'s' if fill != 1 else ''} (\"FILL IN\") and confirm {guesses} guess"
               f"{'es' if guesses != 1 else ''} (\"GUESS\"); in the page, write the context and the findings; then "
               f"`fairsite build` (and `fairsite accept {name}` once its numbers are what you meant)")
    return 0


def new_report(root: Path, name: str, data: Path) -> tuple[Path, Path]:
    """Write ``reports/<name>/report.yaml`` (``faircode.report.scaffold_report_manifest`` of the
    data, its data file named from the repository's root when it is inside it) and
    ``reports/<name>/report.md`` (a starter page: front matter, and prose placing every part of
    the report, with places for the context and the findings).

    Returns the two paths. Nothing is written when anything is wrong: both files are written in a
    folder of their own that is then renamed into place.

    Raises
    ------
    ConfigError
        ``name`` is not a slug or is an explainer's or another report's; ``data`` does not
        exist, or cannot be read as CSV or Parquet (the reader's own words said).
    """
    from site_src.sources.collect import SLUG
    from site_src.sources.reports import MANIFEST, PAGE, REPORTS
    from site_src.sources.scaffold import SLUG_MAX, shortened, slugify

    root = Path(root).resolve()
    if not SLUG.match(name) or len(name) > SLUG_MAX:
        example = shortened(slugify(name)) if re.search(r"[A-Za-z0-9]", name) else "my-screen"
        raise ConfigError(f"NAME must be lowercase words of a-z and 0-9 joined by '-', at most {SLUG_MAX} characters "
                          f"(the folder {REPORTS}/NAME/ and the page's address), got {name!r}; e.g. {example!r}")
    if (root / "explainers" / f"{name}.md").exists():
        raise ConfigError(f"explainers/{name}.md has the name {name!r}: a report needs a name of its own")
    folder = root / REPORTS / name
    if folder.exists() and any(folder.iterdir()):
        held = ", ".join(sorted(p.name for p in folder.iterdir()))
        raise ConfigError(f"{REPORTS}/{name}/ already exists (holding {held}); choose another name or edit those files")
    manifest = _manifest_text(root, name, data)
    page = _starter_page(name)
    staging = Path(tempfile.mkdtemp(prefix=f".{name}-", dir=_mkdir(root / REPORTS)))
    staging.chmod(0o755)  # mkdtemp's is the owner's alone; the report's folder is like any other
    try:
        (staging / MANIFEST).write_text(manifest, encoding="utf-8")
        (staging / PAGE).write_text(page, encoding="utf-8")
        if folder.exists():
            folder.rmdir()  # an empty folder: the whole report takes its place
        staging.rename(folder)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return folder / MANIFEST, folder / PAGE


def _mkdir(folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def _manifest_text(root: Path, name: str, data: Path) -> str:
    """The scaffolded manifest of ``data``, its ``data.file`` written from the repository's root
    when the data are inside it (as the loader reads a relative path)."""
    from faircode.report import scaffold_report_manifest

    if not data.exists():
        raise ConfigError(f"--data: no file or folder {str(data)!r} (from {Path.cwd()})")
    try:
        text = scaffold_report_manifest(name, data)
    except (ValueError, OSError) as err:  # pandas' and pyarrow's errors of a file they cannot read are ValueErrors
        kind = "a folder of Parquet files" if data.is_dir() else (
            "Parquet" if data.suffix.lower() in (".parquet", ".pq") else "CSV (a .parquet file is read as Parquet)")
        raise ConfigError(f"--data: cannot read {str(data)!r} as {kind}: {type(err).__name__}: {err}") from None
    try:
        relative = data.resolve().relative_to(root).as_posix()
    except ValueError:
        return text  # outside the repository: the manifest names it whole, and its run is not cached
    import yaml

    line = f"  file: {yaml.safe_dump(relative, default_flow_style=True).removesuffix(chr(10) + '...' + chr(10)).strip()}"
    return re.sub(r"(?m)^  file: [^#\n]*?(?=\s+#|$)", lambda m: line, text, count=1)


def _starter_page(name: str) -> str:
    """The page ``audit new`` writes: its front matter, the parts of the report placed, and the
    stand-ins (`REPORT_STAND_INS`) that ``fairsite check`` refuses until they are replaced."""
    import yaml

    from site_src.sources.reports import REPORT_STAND_INS

    title = "Bias Audit of " + " ".join(w.capitalize() for w in name.split("-"))
    subtitle, summary, context, findings = REPORT_STAND_INS
    front = yaml.safe_dump({"title": title, "subtitle": subtitle, "summary": summary, "outcome": "selected"},
                           sort_keys=False, allow_unicode=True, width=1000)
    return _STARTER.format(front_matter=front, context=context, findings=findings)


_STARTER = '''---
{front_matter}---

{{# A report's page: Markdown that is also a Jinja template. The tables, the methods and the record are
   made by the build from report.yaml; write the context and the findings around them. Cite every number
   from the run, never by hand (the build refuses a number typed in prose): {{{{ n_rows | number }}}} people,
   {{{{ tables["sex"]["Female"]["selection_rate"] | percent }}}}, {{{{ reference["race/ethnicity"] }}}},
   {{{{ verdicts["intersection"]["gap_shown"] | length }}}} categories with a gap shown. Make a sentence that
   depends on the data conditional on it: {{% if "Female" in verdicts["sex"]["gap_shown"] %}}...{{% endif %}}. #}}

## Context

{context}

{{{{ report_summary() }}}}

## Findings

{findings}

## The tables

### Sex

{{{{ report_table("sex") }}}}

### Race/ethnicity

{{{{ report_table("race/ethnicity") }}}}

### Sex and race/ethnicity

{{{{ report_table("intersection") }}}}

## Excluded categories

{{{{ report_excluded() }}}}

## Methods

{{{{ report_methods() }}}}

## Limitations

{{{{ report_limitations() }}}}

## The record

{{{{ report_downloads() }}}}
'''


# ---------------------------------------------------------------------------------------- verify

def _verify(record_path: Path, data: Path) -> int:
    differences, record = verify(record_path, data)
    rows = sum(len(t["rows"]) for t in record["tables"])
    if not differences:
        _out.print(f"verified: every number of {record_path} ({rows} rows in {len(record['tables'])} tables) matches "
                   f"what {data} gives (sha256 {record['data']['sha256'][:16]}...)")
        return 0
    _out.print(f"{record_path}: {len(differences)} number{'s' if len(differences) != 1 else ''} differ from what "
               f"{data} gives:")
    for d in differences:
        _out.print(f"  {d}", markup=False)
    return 1


def verify(record_path: Path, data: Path) -> tuple[list, dict]:
    """The differences between a record and what its data give (``faircode.report.verify_record``:
    a data file that is not the recorded one first), and the record.

    Raises
    ------
    ConfigError
        The record does not exist, is not JSON or is not a report record; the data do not exist.
    """
    import json

    from faircode.report import verify_record

    if not record_path.is_file():
        raise ConfigError(f"RECORD: no file {str(record_path)!r} (a report's record is report.json, beside its page)")
    if not Path(data).exists():
        raise ConfigError(f"--data: no file or folder {str(data)!r}")
    try:
        record = json.loads(record_path.read_text(encoding="utf-8"))
    except (ValueError, UnicodeDecodeError) as err:
        raise ConfigError(f"{record_path}: not a report's record (not JSON: {err})") from None
    try:
        return verify_record(record, data), record
    except (ValueError, KeyError, TypeError) as err:
        raise ConfigError(f"{record_path}: not a report's record ({type(err).__name__}: {err})") from None

