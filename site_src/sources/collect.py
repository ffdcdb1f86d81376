"""Stage 1, collect: find the explainer sources, parse and validate their front matter.

An explainer is ``explainers/<slug>.md``: YAML front matter between ``---`` lines, then Markdown
prose that is also a Jinja template, with exactly one fenced block whose info string is
``python explainer``: the explainer's code. Every problem in every explainer is reported at once.
"""

from __future__ import annotations

import functools
import hashlib
import re
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Annotated, ClassVar

import jinja2
import jinja2.nodes
import yaml
from pydantic import (AfterValidator, BaseModel, ConfigDict, Field, StrictInt, StringConstraints, ValidationError,
                      field_validator)


from faircode.formatting import at, did_you_mean, yaml_list_hint, yaml_syntax_hint, yaml_value_problem  # NumPy-free
from site_src.errors import ConfigError

CODE_MARKER = "python explainer"
_FENCE = re.compile(r"^(?P<fence>`{3,}|~{3,})\s*(?P<info>[^\n`]*)$")
# An explainer's file name (without `.md`): lowercase ASCII words joined by `-` (its page's URL).
SLUG = re.compile(r"^[a-z0-9]+(?:-[a-z0-9]+)*$")

NonEmpty = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1)]

DEFAULT_MEMORY = 4 * 1024**3  # bytes of address space a run may use unless `memory:` says otherwise
_MIN_MEMORY = 256 * 1024**2  # below this Python cannot even import the scientific stack
_UNITS = {"kb": 10**3, "mb": 10**6, "gb": 10**9, "tb": 10**12,
          "kib": 2**10, "mib": 2**20, "gib": 2**30, "tib": 2**40}
_SIZE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([kmgt]i?b)\s*$", re.I)


# What `memory:` takes, said by every refusal of it.
_SIZE_FORMS = ("expected a size such as 6GiB or 512MiB (binary units; kB, MB, GB and TB are decimal: 8GB is "
               "7629.4MiB), or a whole number of MiB, got {value!r}")


def parse_memory(value) -> int:
    """A memory size from the front matter, in bytes.

    ``6GiB``, ``6 GiB``, ``512MiB``, ``8GB`` (decimal units: ``kB``/``MB``/``GB``/``TB``; binary:
    ``KiB``/``MiB``/``GiB``/``TiB``), or a whole number meaning MiB (``memory: 6144``).

    Raises
    ------
    ValueError
        Not a size in one of those forms, or below 256 MiB.
    """
    if isinstance(value, bool) or not isinstance(value, (int, str)):
        raise ValueError(_SIZE_FORMS.format(value=value))
    if isinstance(value, int):
        size = value * 2**20
    else:
        m = _SIZE.match(value)
        if not m:
            raise ValueError(_SIZE_FORMS.format(value=value))
        size = int(float(m[1]) * _UNITS[m[2].lower()])
    if size < _MIN_MEMORY:
        raise ValueError(f"must be at least 256MiB (Python and its libraries need that much), got {value!r}")
    return size


def _repo_relative(pattern: str) -> str:
    """An ``inputs:`` entry: a path or glob inside the repository, written relative to its root."""
    if "\\" in pattern:
        raise ValueError(f"use '/' between folders, got {pattern!r}")
    if pattern.startswith(("/", "~")):
        raise ValueError(f"must be relative to the repository root (e.g. 'data/x.db'), got {pattern!r}")
    if ".." in pattern.split("/"):
        raise ValueError(f"must stay inside the repository (no '..'), got {pattern!r}")
    return pattern


InputPattern = Annotated[NonEmpty, AfterValidator(_repo_relative)]


class Check(BaseModel):
    """One assertion over the run's values, e.g. that a hand-written p agrees with the library's."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True)
    name: NonEmpty
    expr: NonEmpty = Field(alias="assert")


def _regex(pattern: str) -> str:
    try:
        re.compile(pattern)
    except re.error as err:
        raise ValueError(f"not a regular expression ({err}): {pattern!r}") from None
    return pattern


class ExpectedWarning(BaseModel):
    """A warning the page expects its code to issue: ``match`` is a regular expression searched
    in ``Category: message`` (e.g. ``"RuntimeWarning: invalid value encountered in divide"``),
    ``reason`` says why the warning is expected rather than fixed."""

    model_config = ConfigDict(extra="forbid")
    match: Annotated[NonEmpty, AfterValidator(_regex)]
    reason: NonEmpty


class FrontMatter(BaseModel):
    """The schema of an explainer's front matter."""

    model_config = ConfigDict(extra="forbid")
    title: NonEmpty
    subtitle: NonEmpty
    summary: NonEmpty
    tags: list[NonEmpty] = Field(default_factory=list)
    related: list[NonEmpty] = Field(default_factory=list)
    checks: list[Check] = Field(min_length=1)
    # Seconds before the build kills the run; an explainer that simulates a lot may raise it.
    # A whole number (not `true`, which YAML reads as 1), at most a day (a larger one overflowed
    # the socket's timeout: a traceback naming no explainer).
    timeout: StrictInt = Field(default=600, gt=0, le=86_400, json_schema_extra={"unit": "seconds"})
    # Address space the run may use (bytes once parsed): `6GiB`, `512MiB`, or a whole number of MiB.
    memory: int = DEFAULT_MEMORY
    # Values whose accepted number may move by Monte Carlo error: value name -> name of its resample count.
    monte_carlo: dict[NonEmpty, NonEmpty] = Field(default_factory=dict)
    order: StrictInt = 100
    # Files the code reads in ways the run cannot track (a SQLite database, a file a child process
    # reads, a folder it lists): paths or globs relative to the repository root. Their digests,
    # and a glob's list of matches, join the cache key; without them such a run re-runs every build.
    # A path may name a file the run creates (a database it writes): one missing even after the
    # run is a typo, which the run's stage reports.
    inputs: list[InputPattern] | None = None
    # Warnings the code is expected to issue; any other warning fails `fairsite check`.
    warnings: list[ExpectedWarning] = Field(default_factory=list)

    @field_validator("memory", mode="before")
    @classmethod
    def _memory(cls, value):
        return parse_memory(value)


@dataclass(frozen=True)
class Explainer:
    """A parsed explainer source.

    ``prose`` is the source with the front matter and the code block blanked out line for line,
    so a Jinja error's line number is the line in the source file; the code block's place is held
    by ``CODE_PLACEHOLDER``.
    """

    slug: str
    path: Path
    meta: FrontMatter
    prose: str
    code: str
    code_line: int  # 1-based source line of the code's first line
    # sha256 of the bytes this build read: what its page and the build's record are keyed on, so
    # an edit saved while the build runs is a change for the next build (issue 26, a fresh user).
    digest: str = ""
    # The part of the reading order it is in (``reading-order.yaml``); None without that file.
    part: "Part | None" = None
    # The front matter's YAML as this build read it, one blank line first (it starts on the
    # file's line 2): where a later stage finds a field's line (`front_matter_line`).
    front_matter: str = ""

    def front_matter_line(self, *loc: str | int) -> int | None:
        """The source line (1-based) where the front matter's key at ``loc`` is written, e.g.
        ``("checks", 2, "assert")`` for the third check's expression; None if it is not there."""
        from faircode.manifest import yaml_key_line  # the one finder of a key's line; only on a mistake

        return yaml_key_line(self.front_matter, loc) if self.front_matter else None

    # Run values compared with the accepted ones whether or not the prose names them (a report's
    # tables, which the page shows through its own template: `snapshot.cited`).
    cited_always: ClassVar[tuple[str, ...]] = ()

    @property
    def display_path(self) -> str:
        # Relative to the repository root, whatever the working directory: "explainers/<slug>.md".
        return f"{self.path.parent.name}/{self.path.name}"

    @property
    def root(self) -> Path:
        """The repository the source is in (``explainers/`` is in it)."""
        return self.path.resolve().parents[1]

    @property
    def code_path(self) -> Path:
        """Where the extract stage writes the code readers run: ``explainers/code/<slug>.py``."""
        return self.path.parent / "code" / f"{self.slug}.py"

    @property
    def code_source(self) -> Path:
        """The file a run's errors and traceback lines name: the source whose block the code is."""
        return self.path


READING_ORDER = "reading-order.yaml"  # beside the explainers: the one reading order (issue 28)


@dataclass(frozen=True)
class Part:
    """One part of the reading order: a heading on the home page and the checklist, its one-line
    ``intro`` and its explainers' slugs in reading order."""

    title: str
    intro: str
    slugs: tuple[str, ...]


class _PartSpec(BaseModel):
    model_config = ConfigDict(extra="forbid")
    title: NonEmpty
    intro: NonEmpty
    explainers: list[NonEmpty] = Field(min_length=1)


class _ReadingOrderSpec(BaseModel):
    model_config = ConfigDict(extra="forbid")
    parts: list[_PartSpec] = Field(min_length=1)


CODE_PLACEHOLDER = "<!-- fairsite:code -->"
# What the prose may call beside the run's values (rendering.pages passes them to each page).
PROSE_FUNCTIONS = ("figure", "cell", "result", "cite", "further_reading")


@functools.lru_cache(maxsize=64)
def prose_syntax_tree(prose: str) -> jinja2.nodes.Template:
    """The Jinja syntax tree of an explainer's prose, parsed once per build for the checks that read
    it (cited numbers, numbers typed inside Jinja). Treat it as read-only: it is shared.

    Raises
    ------
    jinja2.TemplateSyntaxError
        The prose is not a valid template (the render stage reports it with its line).
    """
    return jinja2.Environment().parse(prose)


def collect(explainers_dir: Path) -> list[Explainer]:
    """Parse every ``*.md`` in ``explainers_dir``.

    Raises
    ------
    ConfigError
        One error listing every problem of every explainer (file, line or field, what was expected).
    """
    paths = sorted(p for p in Path(explainers_dir).glob("*.md") if p.name.lower() != "readme.md")
    if not paths:
        raise ConfigError(f"no explainer sources (*.md) found in {_display(Path(explainers_dir))}")
    problems: list[str] = []
    explainers = []
    for path in paths:
        try:
            explainers.append(parse_explainer(path))
        except ConfigError as err:
            problems.append(str(err))
    # Every source counts as an explainer for `related:`, even one with problems of its own, so
    # one broken file is reported once, not once per explainer that links to it.
    slugs = {p.stem for p in paths}
    for e in explainers:
        for rel in e.meta.related:
            if rel == e.slug:
                problems.append(f"{e.display_path}: related: an explainer cannot list itself ('{rel}')")
            elif rel not in slugs:
                problems.append(f"{e.display_path}: related: no explainer '{rel}'{did_you_mean(rel, slugs)}")
    problems += _same_titles(explainers)
    explainers, found = _in_reading_order(Path(explainers_dir), explainers, slugs)
    problems += found
    if problems:
        raise ConfigError("\n".join(problems))
    return sorted(explainers, key=lambda e: (e.meta.order, e.slug))


def _in_reading_order(explainers_dir: Path, explainers: list[Explainer], slugs: set[str]):
    """The explainers with their ``order`` and ``part`` from ``reading-order.yaml``, and the problems
    found: a slug listed that is no explainer, or twice, an explainer not listed, or an explainer
    whose own front matter gives an ``order`` (the order is declared in one place).

    Without the file (a site of a single explainer, a test fixture), each explainer keeps the
    ``order`` of its front matter.
    """
    path = explainers_dir / READING_ORDER
    if not path.exists():
        return explainers, []
    shown = f"{explainers_dir.name}/{READING_ORDER}"
    try:
        spec = _ReadingOrderSpec.model_validate(yaml.safe_load(read_text(path.read_bytes(), shown=shown)))
    except ConfigError as err:
        return explainers, [str(err)]
    except yaml.YAMLError as err:
        return explainers, [f"{shown}: not valid YAML: {err}"]
    except ValidationError as err:
        return explainers, [f"{shown}: {_field_problem(e, _ReadingOrderSpec)}" for e in err.errors()]
    problems, place, parts = [], {}, {}
    for part_spec in spec.parts:
        part = Part(title=part_spec.title, intro=part_spec.intro, slugs=tuple(part_spec.explainers))
        for slug in part.slugs:
            if slug not in slugs:
                problems.append(f"{shown}: part '{part.title}': no explainer '{slug}'{did_you_mean(slug, slugs)}")
            elif slug in place:
                problems.append(f"{shown}: '{slug}' is listed twice; list each explainer once")
            else:
                place[slug], parts[slug] = len(place) + 1, part
    for slug in sorted(slugs - set(place)):
        problems.append(f"{shown}: explainer '{slug}' is not listed; add it to the part it belongs to")
    placed = []
    for e in explainers:
        if "order" in e.meta.model_fields_set:
            problems.append(f"{e.display_path}: front matter: order: the reading order is declared in {shown}; "
                            "remove this field")
        if e.slug in place:
            e = replace(e, meta=e.meta.model_copy(update={"order": 10 * place[e.slug]}), part=parts[e.slug])
        placed.append(e)
    return placed, problems


def title_key(title: str) -> str:
    """What makes two titles the same to a reader: case and runs of spaces do not count."""
    return " ".join(str(title).split()).casefold()


def _same_titles(explainers: list[Explainer]) -> list[str]:
    """Two explainers with one title: the navigation, search and links could not tell them apart.

    Each problem names the file last modified first (the one just added or edited: the writer's
    mistake is there, not in the page that has had the title all along), then the oldest file
    with that title; files modified at the same instant are taken in slug order."""
    def age(e: Explainer) -> tuple[int, str]:
        try:
            return e.path.stat().st_mtime_ns, e.slug
        except OSError:  # gone since it was read: as old as can be
            return 0, e.slug

    first: dict[str, Explainer] = {}
    problems = []
    for e in sorted(explainers, key=age):
        other = first.setdefault(title_key(e.meta.title), e)
        if other is not e:
            problems.append(f"{e.display_path}: title: {e.meta.title!r} is already the title of {other.display_path} "
                            "(the older file); give each explainer its own title")
    return problems


def parse_explainer(path: Path) -> Explainer:
    """Parse one explainer source; raise one ConfigError listing all of its problems."""
    shown = f"{path.parent.name}/{path.name}"
    slug = path.stem
    problems = []
    if not SLUG.match(slug):
        problems.append(f"{shown}: file name must be a slug (lowercase words joined by '-'), got '{slug}'")
    data, lines, end, meta, found = read_source(path, FrontMatter, shown=shown)
    problems += found

    blocks = _fenced_blocks(lines, start=end + 1, shown=shown)
    code_blocks = [b for b in blocks if b[2] == CODE_MARKER]
    if len(code_blocks) != 1:
        found = ", ".join(f"line {b[0] + 1}" for b in code_blocks) or "none"
        problems.append(
            f"{shown}: expected exactly one ```{CODE_MARKER} block (the explainer's code), found {found}"
        )
    if problems:
        raise ConfigError("\n".join(problems))

    open_i, close_i, _ = code_blocks[0]
    code = "\n".join(lines[open_i + 1 : close_i]) + "\n"
    # Blank out front matter and code line for line so Jinja's line numbers are source lines.
    prose_lines = [""] * (end + 1) + lines[end + 1 :]
    for i in range(open_i, close_i + 1):
        prose_lines[i] = ""
    prose_lines[open_i] = CODE_PLACEHOLDER
    return Explainer(slug=slug, path=path, meta=meta, prose="\n".join(prose_lines), code=code, code_line=open_i + 2,
                     digest=hashlib.sha256(data).hexdigest(), front_matter="\n" + "\n".join(lines[1:end]))


def read_source(path: Path, model: type[FrontMatter], *, shown: str):
    """A page source's bytes, lines, the index of its front matter's closing ``---``, the front
    matter validated by ``model`` (None if it is not valid) and its problems, each named by its
    line: what explainers and reports (``sources.reports``) are both read with.

    Raises
    ------
    ConfigError
        The file is not UTF-8, or its front matter is missing or not YAML (nothing else can be read).
    """
    data = path.read_bytes()
    lines = read_text(data, shown=shown).split("\n")
    raw, end = split_front_matter(lines, shown=shown)
    if not isinstance(raw, dict):
        return data, lines, end, None, [f"{shown}: front matter must be a mapping of fields, got {type(raw).__name__}"]
    try:
        return data, lines, end, model.model_validate(raw), []
    except ValidationError as err:
        problems = []
        for e in err.errors():
            # Each is named by its line: the key's (a misspelled key, a value such as
            # `timeout: ten`), or for a missing field the mapping's that lacks it (issue 26).
            loc = tuple(e["loc"])
            line = _front_matter_line(lines, end, loc[:-1] if e["type"] == "missing" else loc)
            problems.append(f"{at(shown, line)}: front matter: {_field_problem(e, model)}")
        return data, lines, end, None, problems


def read_text(data: bytes, *, shown: str) -> str:
    """A source file's bytes as text (`faircode.manifest.utf8_text`: UTF-8, a byte-order mark
    dropped, since the file still starts with ``---`` to its author).

    Raises
    ------
    ConfigError
        ``"<shown>:<line>:<column>: not UTF-8 text (byte 0x..); save the file as UTF-8"``.
    """
    from faircode.manifest import NotUTF8Error, utf8_text

    try:
        return utf8_text(data)
    except NotUTF8Error as err:
        raise ConfigError(f"{at(shown, err.line, err.column)}: not UTF-8 text (byte 0x{err.byte:02x}); "
                          "save the file as UTF-8") from None


def split_front_matter(lines: list[str], *, shown: str) -> tuple[object, int]:
    """The YAML front matter of a Markdown file's ``lines``: its value and the index of its
    closing ``---`` line.

    The one reading of front matter in the build: explainer sources here, and the pages MkDocs
    orders (``publishing.mkdocs_hooks``). The front matter is the YAML between a first line
    ``---`` and the next line ``---``; empty front matter is ``{}``.

    Raises
    ------
    ConfigError
        No opening or closing ``---``, or YAML that does not parse; the message starts with
        ``shown`` (the file as the user knows it) and the line.
    """
    if not lines or lines[0].strip() != "---":
        raise ConfigError(f"{shown}:1: expected front matter starting with '---'")
    try:
        end = next(i for i in range(1, len(lines)) if lines[i].strip() == "---")
    except StopIteration:
        raise ConfigError(f"{shown}:1: front matter opened with '---' is never closed") from None
    # One blank line first: the front matter starts on the file's line 2, so PyYAML's own
    # "line N" in its message is the file's line N, as in the location before it.
    text = "\n" + "\n".join(lines[1:end])
    from faircode.manifest import load_yaml  # the one YAML reading: a key given twice is refused

    try:
        return load_yaml(text) or {}, end
    except yaml.YAMLError as err:
        mark = getattr(err, "problem_mark", None)
        # The parser's own words without its "in <unicode string>, line N, column C", which names
        # no file: the file, line and column come first (`faircode.formatting.at`).
        said = " ".join(str(part) for part in (getattr(err, "context", None), getattr(err, "problem", None)) if part)
        where = at(shown, mark.line + 1, mark.column + 1) if mark else shown
        raise ConfigError(f"{where}: front matter is not valid YAML: {said or err}"
                          f"{yaml_syntax_hint(text, err)}") from None


def _front_matter_line(lines: list[str], end: int, loc: tuple) -> int | None:
    """The line of the file (1-based) where the front matter's key at ``loc`` (a pydantic error's
    location) is written, or None; ``lines`` and ``end`` as `split_front_matter` read them."""
    from faircode.manifest import yaml_key_line  # the one finder of a key's line; only on a mistake

    # One blank line first, as split_front_matter parses it: the front matter starts on line 2.
    return yaml_key_line("\n" + "\n".join(lines[1:end]), loc)


def _fenced_blocks(lines: list[str], start: int, *, shown: str) -> list[tuple[int, int, str]]:
    """(opening line index, closing line index, info string) of each fenced block."""
    blocks, i = [], start
    while i < len(lines):
        m = _FENCE.match(lines[i].strip())
        if m:
            fence = m["fence"]
            j = i + 1
            while j < len(lines) and not (lines[j].strip().startswith(fence) and lines[j].strip().strip(fence[0]) == ""):
                j += 1
            if j == len(lines):
                raise ConfigError(f"{at(shown, i + 1)}: fenced block is never closed")
            blocks.append((i, j, " ".join(m["info"].split())))
            i = j + 1
        else:
            i += 1
    return blocks


def _field_problem(err: dict, model: type[BaseModel]) -> str:
    loc = ".".join(str(p) for p in err["loc"]) or "(top)"
    if err["type"] == "extra_forbidden":
        return f"{loc}: unknown field{did_you_mean(str(err['loc'][-1]), _field_names(model))}"
    if err["type"] == "missing":
        return f"{loc}: required field is missing"
    if err["type"] == "value_error":  # our own validators' messages already say what they got
        return f"{loc}: {err['ctx']['error']}"
    if err["type"] == "list_type" and isinstance(err.get("input"), str):  # `tags: a, b`
        return f"{loc}: {yaml_list_hint(str(err['loc'][-1]), err['input'])}"
    from faircode.manifest import field_at

    field = field_at(model, tuple(err["loc"]))
    extra = getattr(field, "json_schema_extra", None)
    unit = extra.get("unit", "") if isinstance(extra, dict) else ""
    if worded := yaml_value_problem(err, unit=unit, bounds=getattr(field, "metadata", ())):  # `timeout: 10s`
        return f"{loc}: {worded}"
    return f"{loc}: {err['msg']} (got {err.get('input')!r})"


def _field_names(model: type[BaseModel]) -> list[str]:
    names = []
    for name, field in model.model_fields.items():
        names.append(field.alias or name)
    names += [f.alias or n for n, f in Check.model_fields.items()]
    return names


def _display(path: Path) -> str:
    try:
        return str(Path(path).resolve().relative_to(Path.cwd().resolve()))
    except ValueError:
        return str(path)


def check_slugs(sources: list[Explainer], named: set[str]) -> None:
    """The names given on the command line (``--force``, ``accept``) must each be an explainer's or a report's.

    Raises
    ------
    ConfigError
        Naming each unknown name with the closest (`_slug_hint`) and listing the names there are.
    """
    slugs = {e.slug for e in sources}
    unknown = sorted(set(named) - slugs)
    if unknown:
        hints = "; ".join(f"'{s}'{_slug_hint(s, sorted(slugs))}" for s in unknown)
        raise ConfigError(f"no explainer named {hints}; the explainers (and reports) are {sorted(slugs)}")


def _slug_hint(name: str, slugs: list[str]) -> str:
    """The hint after an unknown explainer name: the slugs it begins (a slug's first words, as
    `--force permutation` for permutation-test-fairness-gaps), else the closest by spelling."""
    starting = [s for s in slugs if s.startswith(name)]
    if starting:
        shown = " or ".join(repr(s) for s in starting[:3]) + (" or ..." if len(starting) > 3 else "")
        return f" (did you mean {shown}?)"
    return did_you_mean(name, slugs)
