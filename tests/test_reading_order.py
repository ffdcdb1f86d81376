"""One reading order (issue 28): ``explainers/reading-order.yaml``, and everything that follows it.

The home page's reading path, the sidebar and Previous/Next (the MkDocs hook), the auditor's
checklist and the common mistakes must list the explainers in the order that file gives, and
cover every explainer. The expected order is read from the YAML file itself, not from the code
under test; the pages are read back from what the templates and the hook produce.
"""

from __future__ import annotations

import re
import textwrap
from pathlib import Path

import pytest
import yaml

from site_src.errors import ConfigError
from site_src.rendering.environment import make_environment
from site_src.rendering.references import load_bibliography, reference_link
from site_src.sources.collect import collect

ROOT = Path(__file__).resolve().parents[1]
_LINK = re.compile(r"\]\((?:\.\./)*explainers/([a-z0-9-]+)/index\.md\)")


def _declared() -> list[str]:
    raw = yaml.safe_load((ROOT / "explainers" / "reading-order.yaml").read_text(encoding="utf-8"))
    return [slug for part in raw["parts"] for slug in part["explainers"]]


@pytest.fixture(scope="module")
def site():
    explainers = collect(ROOT / "explainers")
    env = make_environment(explainers)
    bibliography = load_bibliography(ROOT / "explainers" / "references.json")
    env.globals["reference"] = lambda key: reference_link(bibliography, key)  # as render() sets it
    return explainers, env


def _first_seen(slugs: list[str]) -> list[str]:
    return list(dict.fromkeys(slugs))


def test_the_reading_order_lists_every_explainer_once():
    declared = _declared()
    assert len(declared) == len(set(declared))
    assert set(declared) == {p.stem for p in (ROOT / "explainers").glob("*.md")}


def test_collect_gives_every_explainer_its_place_in_the_reading_order(site):
    explainers, env = site
    assert [e.slug for e in explainers] == _declared()
    assert env.globals["reading_order"] == _declared()
    assert all(e.part is not None and e.slug in e.part.slugs for e in explainers)


def test_the_home_page_path_follows_the_reading_order(site):
    explainers, env = site
    home = env.get_template("index.md.j2").render(explainers=explainers, has_results=False, thumbs={})
    path = home[home.index("## A reading path"):home.index("## All explainers")]
    assert _LINK.findall(path) == _declared()
    cards = home[home.index("## All explainers"):]
    assert _first_seen(_LINK.findall(cards)) == _declared()


def test_the_checklist_follows_the_reading_order_and_covers_every_explainer(site):
    _, env = site
    page = env.get_template("checklist.md.j2").render(terms=[], audits=[])
    body = page[page.index("## What to measure"):]  # after "Before you measure", whose steps come first
    assert _first_seen(_LINK.findall(body)) == _declared()
    # The sections are the parts of the reading order.
    raw = yaml.safe_load((ROOT / "explainers" / "reading-order.yaml").read_text(encoding="utf-8"))
    headings = re.findall(r"^## (.+)$", body, flags=re.M)
    assert headings[:len(raw["parts"])] == [p["title"] for p in raw["parts"]]


def test_each_mistake_sits_with_its_first_explainer_in_reading_order(site):
    _, env = site
    page = env.get_template("mistakes.md.j2").render(terms=[], audits=[])
    declared = _declared()
    # Each mistake is a definition (":   ..."); its first explainer link places it.
    entries = re.split(r"\n\n(?=\*\*)", page)
    firsts = [m[0] for m in (_LINK.findall(entry) for entry in entries) if m]
    places = [declared.index(slug) for slug in firsts]
    assert places == sorted(places), firsts
    assert set(_LINK.findall(page)) == set(declared)  # every explainer is linked from the page


def test_the_sidebar_and_previous_next_follow_the_reading_order(tmp_path, site):
    # The hook reads each generated page's `order:`, as explainer.md.j2 writes it.
    from mkdocs.config import load_config
    from mkdocs.structure.files import get_files
    from mkdocs.structure.nav import get_navigation

    from site_src.publishing.mkdocs_hooks import on_nav

    explainers, env = site
    docs = tmp_path / "docs"
    pages = {"index.md": "# Home\n", "tags.md": env.get_template("tags.md.j2").render(),
             "glossary/index.md": "---\norder: 1\n---\n# Glossary\n"}
    for e in reversed(explainers):  # written in the other order: the order must come from the front matter
        pages[f"explainers/{e.slug}/index.md"] = f"---\ntitle: {e.slug}\norder: {e.meta.order}\n---\n# {e.slug}\n"
    for rel, text in pages.items():
        (docs / rel).parent.mkdir(parents=True, exist_ok=True)
        (docs / rel).write_text(text, encoding="utf-8")
    (tmp_path / "mkdocs.yml").write_text("site_name: t\n", encoding="utf-8")
    config = load_config(str(tmp_path / "mkdocs.yml"), docs_dir=str(docs))
    files = get_files(config)
    nav = on_nav(get_navigation(files, config), config, files)
    shown = [p.file.src_uri.split("/")[1] for p in nav.pages if p.file.src_uri.startswith("explainers/")]
    assert shown == _declared()
    first = next(p for p in nav.pages if p.file.src_uri == f"explainers/{_declared()[0]}/index.md")
    assert not first.previous_page.file.src_uri.startswith("tags")  # never the tag index before the first page
    uris = [p.file.src_uri for p in nav.pages]
    assert uris.index("tags.md") > uris.index(f"explainers/{_declared()[-1]}/index.md")
    for a, b in zip(_declared(), _declared()[1:]):
        page = next(p for p in nav.pages if p.file.src_uri == f"explainers/{a}/index.md")
        assert page.next_page.file.src_uri == f"explainers/{b}/index.md"


def test_no_explainer_calls_another_page_the_start_of_the_series():
    pattern = re.compile(r"first page|series' first|start of the series|start here", re.I)
    for path in sorted((ROOT / "explainers").glob("*.md")):
        assert not pattern.search(path.read_text(encoding="utf-8")), path.name


# ------------------------------------------------------------------------- a broken reading order

_SOURCE = textwrap.dedent('''\
    ---
    title: {title}
    subtitle: A question?
    summary: One line.
    {extra}checks:
      - name: x is one
        assert: x == 1
    ---

    Prose.

    ```python explainer
    x = 1
    ```
    ''')


def _site(tmp_path, order_yaml: str, *, extra: dict[str, str] | None = None) -> Path:
    folder = tmp_path / "explainers"
    folder.mkdir()
    for slug in ("alpha", "beta", "gamma"):
        (folder / f"{slug}.md").write_text(_SOURCE.format(title=slug.title(), extra=(extra or {}).get(slug, "")),
                                           encoding="utf-8")
    (folder / "reading-order.yaml").write_text(order_yaml, encoding="utf-8")
    return folder


def test_a_fixture_order_is_taken_and_parts_kept(tmp_path):
    folder = _site(tmp_path, "parts:\n  - {title: One, intro: x, explainers: [gamma, alpha]}\n"
                             "  - {title: Two, intro: y, explainers: [beta]}\n")
    found = collect(folder)
    assert [e.slug for e in found] == ["gamma", "alpha", "beta"]
    assert [e.part.title for e in found] == ["One", "One", "Two"]


@pytest.mark.parametrize(("order_yaml", "extra", "message"), [
    ("parts:\n  - {title: One, intro: x, explainers: [alpha, beta, gamma, delta]}\n", None,
     r"explainers/reading-order.yaml: part 'One': no explainer 'delta'"),
    ("parts:\n  - {title: One, intro: x, explainers: [alpha, beta]}\n", None,
     r"explainer 'gamma' is not listed"),
    ("parts:\n  - {title: One, intro: x, explainers: [alpha, beta, gamma, alpha]}\n", None,
     r"'alpha' is listed twice"),
    ("parts:\n  - {title: One, intro: x, explainers: [alpha, beta, gamma]}\n", {"beta": "order: 3\n"},
     r"explainers/beta.md: front matter: order: the reading order is declared in explainers/reading-order.yaml"),
    ("parts:\n  - {title: One, explainers: [alpha, beta, gamma]}\n", None,
     r"reading-order.yaml: parts.0.intro: required field is missing"),
])
def test_a_broken_reading_order_is_reported_with_the_file_and_slug(tmp_path, order_yaml, extra, message):
    with pytest.raises(ConfigError, match=message):
        collect(_site(tmp_path, order_yaml, extra=extra))
