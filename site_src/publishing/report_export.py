"""``fairsite audit export NAME --out DIR``: a built report as a folder that opens from disk and prints.

The folder holds ``index.html`` (the report's page as the site shows it, without the site's
navigation, header, search or scripts), the stylesheets the page uses (Material's, the site's,
``report.css`` with its print rules, and ``export.css``), the record (``report.json``,
``report.csv``), the code and any figure. Nothing in it loads from a server or the network: the
stylesheets have no outside ``url()``, the page has no script, and a link to another page of
the site is made absolute (it leads to the published site; the report itself needs none).
Printed, it has no navigation, no table row is split across pages and each table's header row
is repeated on every page it spans (``report.css``).

It is made from the built site (``site/reports/<slug>/``), not built anew: what is exported is
what the site publishes. A report whose manifest or data changed since that build is refused.
"""

from __future__ import annotations

import datetime
import hashlib
import json
import re
import shutil
import tempfile
from pathlib import Path
from urllib.parse import urljoin

import jinja2
from markupsafe import Markup

from site_src.errors import ConfigError, SiteError
from site_src.provenance import source_config
from site_src.rendering.environment import TEMPLATES
from site_src.sources.reports import MANIFEST, PAGE, REPORTS

_ARTICLE = re.compile(r'<article class="md-content__inner md-typeset">(.*?)</article>', re.S)
_TITLE = re.compile(r"<title>(.*?)</title>", re.S)
_STYLESHEET = re.compile(r'<link rel="stylesheet" href="([^"]+)"|<link href="([^"]+)" rel="stylesheet"')
_BACK_LINK = re.compile(r'<a class="fc-back"[^>]*>.*?</a>', re.S)
_URL = re.compile(r'(\s(?:href|src)=")([^"]*)(")')
_OWN = ("#", "http:", "https:", "mailto:", "data:")


def export_report(root: Path, name: str, out: Path) -> Path:
    """Write the built report ``reports/<name>/`` as a self-contained folder ``out``.

    Parameters
    ----------
    root : Path
        The repository, with the site built (``site/``).
    name : str
        The report's name.
    out : Path
        A folder that does not exist or is empty; written whole or not at all.

    Returns
    -------
    Path
        ``out``, resolved.

    Raises
    ------
    ConfigError
        ``name`` is no report's (with the closest names); ``out`` is a file or a folder that
        holds anything.
    SiteError
        The report is not in the built site, or its manifest or data changed since that build
        (``fairsite build`` first).
    """
    root = Path(root).resolve()
    built = _built_report(root, name)
    out = _empty_folder(Path(out))
    html = (built / "index.html").read_text(encoding="utf-8")
    record = json.loads((built / "report.json").read_text(encoding="utf-8"))
    _check_current(root, name, record)
    staging = Path(tempfile.mkdtemp(prefix=f".{out.name}-", dir=out.parent))
    staging.chmod(0o755)  # mkdtemp's is the owner's alone; the export is a folder like any other
    try:
        for path in sorted(built.iterdir()):  # the record, the code, any figure
            if path.is_file() and path.name != "index.html":
                shutil.copyfile(path, staging / path.name)
        sheets = _copy_stylesheets(html, built, staging / "assets")
        page_url = urljoin(source_config(root)["site_url"], f"{REPORTS}/{name}/")
        (staging / "index.html").write_text(_page(html, record, sheets, page_url, files=_files(staging)),
                                            encoding="utf-8")
        if out.exists():
            out.rmdir()  # empty: the export takes its place
        staging.rename(out)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return out


def _built_report(root: Path, name: str) -> Path:
    if not (root / REPORTS / name / PAGE).is_file():
        from faircode.formatting import did_you_mean

        names = sorted(p.parent.name for p in (root / REPORTS).glob(f"*/{PAGE}"))
        raise ConfigError(f"NAME: no report {name!r} ({REPORTS}/{name}/{PAGE} does not exist){did_you_mean(name, names)}; "
                          f"the reports are {', '.join(names) or 'none yet (fairsite audit new makes one)'}")
    built = root / "site" / REPORTS / name
    if not (built / "index.html").is_file() or not (built / "report.json").is_file():
        raise SiteError(f"{REPORTS}/{name} is not in the built site (site/{REPORTS}/{name}/ has no page or record): "
                        "run `fairsite build` first; the export is made from the site that build writes")
    return built


def _check_current(root: Path, name: str, record: dict) -> None:
    """Refuse a built report whose manifest or data are no longer the ones it was made from."""
    from faircode.report import data_sha256

    manifest = root / REPORTS / name / MANIFEST
    text = manifest.read_text(encoding="utf-8") if manifest.is_file() else ""
    if hashlib.sha256(text.encode("utf-8")).hexdigest() != record["manifest"]["sha256"]:
        raise SiteError(f"{REPORTS}/{name}/{MANIFEST} changed since site/ was built: run `fairsite build`, then export")
    data = Path(record["data"]["file"])
    data = data if data.is_absolute() else root / data
    if data.exists() and data_sha256(data) != record["data"]["sha256"]:
        raise SiteError(f"{record['data']['file']} changed since site/ was built (its sha256 is not the record's): "
                        "run `fairsite build`, then export")


def _empty_folder(out: Path) -> Path:
    out = out.resolve()
    if out.is_file():
        raise ConfigError(f"--out: {out} is a file; give a new or empty folder")
    if out.is_dir() and any(out.iterdir()):
        raise ConfigError(f"--out: {out} is not empty; give a new or empty folder (nothing in it is replaced)")
    out.parent.mkdir(parents=True, exist_ok=True)
    return out


def _copy_stylesheets(html: str, built: Path, assets: Path) -> list[str]:
    """Copy each stylesheet the page links (in its order) into ``assets/``; their new addresses,
    ``report.css`` (the tables and their print rules) if the page did not link it, and
    ``export.css`` (the page's margins, off the site) last."""
    assets.mkdir()
    sheets = []
    for m in _STYLESHEET.finditer(html):
        source = (built / (m[1] or m[2])).resolve()
        if source.is_file() and source.name not in {Path(s).name for s in sheets}:
            shutil.copyfile(source, assets / source.name)
            sheets.append(f"assets/{source.name}")
    if "report.css" not in {Path(s).name for s in sheets}:
        # A site whose mkdocs.yml does not list it (a fork's, a fixture's): the tables and the
        # print rules are the export's whatever the site links.
        shutil.copyfile(TEMPLATES / "assets" / "report.css", assets / "report.css")
        sheets.append("assets/report.css")
    shutil.copyfile(TEMPLATES / "report-export.css", assets / "export.css")
    return [*sheets, "assets/export.css"]


def _files(folder: Path) -> set[str]:
    return {p.name for p in folder.iterdir() if p.is_file()}


def _page(html: str, record: dict, sheets: list[str], page_url: str, *, files: set[str]) -> str:
    """The page's article (without its back link, every ``<details>`` open: a closed one prints
    closed) in a page of its own, its links to the rest of the site made absolute."""
    article = _ARTICLE.search(html)
    title = _TITLE.search(html)
    if article is None:
        raise SiteError("the built page has no article (the theme changed?): export found nothing to export")
    body = _BACK_LINK.sub("", article[1]).replace("<details ", "<details open ")

    def url(m: re.Match) -> str:
        target = m[2]
        if target.startswith(_OWN) or target.split("#")[0] in files:
            return m[0]
        return f"{m[1]}{urljoin(page_url, target)}{m[3]}"

    env = jinja2.Environment(loader=jinja2.FileSystemLoader(TEMPLATES), autoescape=True)
    return env.get_template("report-export.html.j2").render(
        title=title[1] if title else record["title"], article=Markup(_URL.sub(url, body)), sheets=sheets,
        record=record, page_url=page_url, exported=datetime.datetime.now(datetime.timezone.utc).date().isoformat())
