"""The data page (site_src/rendering/data_page.py): the audits and their datasets, from the
datasheets and the manifests.

Expected values are read independently: the datasheets' and manifests' YAML with PyYAML, row
counts with plain pandas or by counting lines, digests with hashlib, and ProPublica's published
6,172 filtered rows; never from the module under test.
"""

from __future__ import annotations

import hashlib
import html
import shutil
from pathlib import Path
from types import SimpleNamespace

import pandas as pd
import pytest
import yaml

from site_src.rendering.data_page import audit_data, render_data_page
from site_src.rendering.environment import make_environment

ROOT = Path(__file__).resolve().parents[1]


def _front_matter(path: Path) -> dict:
    return yaml.safe_load(path.read_text(encoding="utf-8").split("---\n")[1])


def _manifest(slug: str) -> dict:
    return yaml.safe_load((ROOT / "audits" / slug / "audit.yaml").read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def audits():
    return {a.slug: a for a in audit_data(ROOT)}


def test_one_entry_per_manifest_with_its_datasheets_front_matter(audits):
    assert sorted(audits) == sorted(p.parent.name for p in (ROOT / "audits").glob("*/audit.yaml"))
    for slug, a in audits.items():
        manifest = _manifest(slug)
        sheet = _front_matter(ROOT / manifest["dataset"]["datasheet"])
        assert slug in sheet["audits"]
        for field in ("dataset", "collector", "population", "licence", "source", "source_url"):
            assert getattr(a, field) == str(sheet[field]), (slug, field)
        assert a.name == manifest["name"]
        assert a.files[0] == (manifest["dataset"]["file"], manifest["dataset"]["sha256"])
        assert a.target == manifest["target"]["column"] and a.meaning == manifest["target"]["meaning"]
        assert [g[0] for g in a.groups] == [p["name"] for p in manifest["protected"]]
        assert [p[0] for p in a.proxies] == [p["column"] for p in manifest.get("proxies") or []]
        assert len(a.filters) == len(manifest.get("filters") or [])


def test_the_pinned_digest_is_the_files_own(audits):
    for a in audits.values():
        for path, sha in a.files:
            assert hashlib.sha256((ROOT / path).read_bytes()).hexdigest() == sha


def test_rows_before_and_after_the_filters(audits):
    # Counted without faircode: non-blank lines (minus the header where there is one).
    def lines(name: str) -> int:
        return sum(1 for line in (ROOT / "data" / name).read_text(encoding="utf-8").splitlines() if line.strip())

    assert audits["benefits-denial"].rows_file == audits["benefits-denial"].rows_after == lines("adult.data")
    assert audits["german-credit"].rows_file == lines("german.data")
    assert audits["arrest-release"].rows_file == lines("arrests.csv") - 1
    compas = pd.read_csv(ROOT / "data" / "compas-scores-two-years.csv")
    assert audits["recidivism-risk"].rows_file == len(compas)
    # ProPublica's notebook: nrow(df) = 6172 after its four filters.
    assert audits["recidivism-risk"].rows_after == 6172
    assert [f[0] for f in audits["recidivism-risk"].filters][0] == "days_b_screening_arrest between -30 and 30"


def _env():
    env = make_environment([])
    env.globals.update(build=SimpleNamespace(commit="0" * 40), source={"repo_url": "https://example.org/repo"})
    return env


def test_the_page_links_each_audit_its_source_and_its_datasheet(tmp_path, audits):
    env = _env()
    assert render_data_page(env, tmp_path, ROOT) == []
    page = (tmp_path / "data" / "index.md").read_text(encoding="utf-8")
    assert page.startswith("---\norder: 4\ntitle: The four audits and their data\n")
    for slug, a in audits.items():
        assert f"{{ #{slug} }}" in page
        assert f"]({a.source_url})" in page
        assert f"https://example.org/repo/blob/{'0' * 40}/{a.datasheet}" in page
    # ProPublica's table is listed with its citation, and the page says the audits are scenarios.
    assert "| 805 |" in page and "How We Analyzed the COMPAS Recidivism Algorithm" in page
    assert "Scenarios, not deployed systems" in page and "real audit" not in page


def test_scenario_names_the_audit_and_links_its_section(tmp_path):
    env = _env()
    render_data_page(env, tmp_path, ROOT)
    sentence = env.globals["scenario"]("german-credit")
    assert sentence.startswith("*German Credit is a scenario built on public data")
    assert "](../../data/index.md#german-credit)" in sentence
    with pytest.raises(ValueError, match=r"scenario\('german-credit2'\): no audit 'german-credit2'.*german-credit"):
        env.globals["scenario"]("german-credit2")
    both = env.globals["scenario"]("german-credit", "benefits-denial")
    assert both.startswith("*German Credit and Benefits Denial are scenarios built on public data")
    assert "](../../data/index.md)" in both
    assert env.globals["scenario"]().startswith("*Every audit here is a scenario built on public data")
    assert env.globals["scenario"]("german-credit", inline=True) == "the [German Credit scenario](../../data/index.md#german-credit)"
    assert (env.globals["scenario"]("german-credit", "benefits-denial", inline=True)
            == "the [German Credit and Benefits Denial scenarios](../../data/index.md)")


def test_a_datasheet_without_a_field_the_page_shows_is_named(tmp_path):
    root = tmp_path / "repo"
    (root / "audits" / "arrest-release").mkdir(parents=True)
    (root / "data").mkdir()
    shutil.copyfile(ROOT / "audits" / "arrest-release" / "audit.yaml", root / "audits" / "arrest-release" / "audit.yaml")
    shutil.copyfile(ROOT / "data" / "arrests.csv", root / "data" / "arrests.csv")
    sheet = (ROOT / "data" / "arrests.md").read_text(encoding="utf-8")
    (root / "data" / "arrests.md").write_text(
        "\n".join(line for line in sheet.split("\n") if not line.startswith("licence:")), encoding="utf-8")
    problems = render_data_page(_env(), tmp_path / "docs", root)
    assert [str(p) for p in problems] == [
        "data page: data/arrests.md: front matter: missing licence (the data page shows them)"]


def test_target_and_flag_are_told_apart_and_pinned_counts_are_not_published(tmp_path, audits):
    """The outcome in the data and the prediction are two rows of the table; the site's own
    counts are a table of their own, never listed as published (their citations name no source)."""
    assert render_data_page(_env(), tmp_path, ROOT) == []
    page = (tmp_path / "data" / "index.md").read_text(encoding="utf-8")
    assert "Flagged means" not in page
    for slug, a in audits.items():
        manifest = _manifest(slug)
        sheet = _front_matter(ROOT / manifest["dataset"]["datasheet"])
        assert f"| Target | `{manifest['target']['column']}` = " in page, slug
        assert (a.target_means, a.flagged_means) == (sheet["target_means"], sheet["flagged_means"])
    compas = html.unescape(page.split("{ #recidivism-risk }")[1].split("\n## ")[0])
    assert "| Target | `two_year_recid` = 1 (a new charge within two years) |" in compas
    assert '| Flagged | predicted to have it (on the COMPAS pages: a decile score of 5 or more' in compas
    published, pinned = compas.split("Counts the site pins, not published (8)")
    assert "| 805 |" in published and "| 641 |" not in published  # ProPublica's FP on all rows; the site's filtered FP
    assert "| 641 |" in pinned and "propublica.org" not in pinned
    assert "Published facts the build checks (19)" in published
    german = html.unescape(page.split("{ #german-credit }")[1].split("\n## ")[0])
    assert "women = divorced/separated/married only; coding doubtful (Grömping 2019)" in german
    assert "except pages that re-examine COMPAS" in page and "cannot drift from what the explainers use" not in page


def test_scenario_after_an_audit_could_not_be_read_says_so_not_that_it_does_not_exist(tmp_path, monkeypatch):
    # A fresh user's typo in one manifest: every page's scenario() said "no audit 'recidivism-risk'",
    # false; the audits were there, the data page could not read one of them.
    import site_src.rendering.data_page as data_page
    from faircode.manifest import ManifestError

    def broken(root):
        raise ManifestError(["audits/benefits-denial/audit.yaml:59: groups.attributes[1].categories[1]: 'Blak'"])

    monkeypatch.setattr(data_page, "audit_data", broken)
    env = _env()
    [problem] = render_data_page(env, tmp_path, ROOT)
    assert "'Blak'" in problem.message
    with pytest.raises(ValueError, match=r"^scenario\('recidivism-risk'\): the audits could not be read "
                                         r"\(see the data page's problem, an audit manifest's\)$"):
        env.globals["scenario"]("recidivism-risk")
