"""Reading an ``audit.yaml``: :func:`load_manifest` and :func:`read_manifest_yaml`.

:func:`load_manifest` reads the YAML, validates it against the schema
(:mod:`faircode.manifest._schema`) and the data (:mod:`faircode.manifest._checks`) and raises one
:class:`~faircode.manifest.ManifestError` listing every problem, each prefixed with the file and
the field path, structural ones (pydantic's) worded for a reader (:func:`_format_pydantic`).
:func:`read_manifest_yaml` is the one reader of a manifest's raw YAML; :func:`yaml_key_line`
finds where a key is written in one.
"""

from __future__ import annotations

import difflib
import re
import types
import typing
from collections.abc import Sequence
from pathlib import Path
from typing import Annotated, Any, Union

import yaml
from pydantic import BaseModel, ValidationError
from pydantic.fields import FieldInfo

from faircode.data import project_root
from faircode.formatting import at, did_you_mean, yaml_list_hint, yaml_syntax_hint, yaml_value_problem
from faircode.manifest._schema import AuditManifest, ManifestError
from faircode.manifest._checks import _semantic_problems


def load_manifest(path: str | Path, *, root: str | Path | None = None) -> AuditManifest:
    """Read and validate an ``audit.yaml``.

    Parameters
    ----------
    path : str or pathlib.Path
        The manifest file (``audits/<slug>/audit.yaml``).
    root : str or pathlib.Path, optional
        Folder that relative data paths in the manifest start from. Default: the nearest
        folder above the manifest holding ``pyproject.toml``, else :func:`project_root`
        (which honours the ``FAIRCODE_ROOT`` environment variable).

    Returns
    -------
    AuditManifest
        The validated manifest, with ``path`` and ``root`` set.

    Raises
    ------
    ManifestError
        One error listing every problem, each ``"<file>: <field path>: <message>"``: YAML
        syntax and a key given twice in one mapping (``"<file>:L:C: ..."``), unknown keys (``"<file>:L: <field
        path>: unknown key ..."`` with the allowed keys close to it, or all of them), missing or mistyped fields
        (``"<file>:L: <field path>: ..."``: the key's line, or for a missing field the line of the
        mapping that lacks it), columns that are not in the data file's header, a data file whose sha256 differs,
        malformed filters or derived columns, ``test_size`` outside (0, 1), unknown model or
        strategy names.
    FileNotFoundError
        If ``path`` does not exist, or no ``root`` is given or found (see :func:`project_root`).

    Notes
    -----
    Structural checks come from pydantic; the cross-field and data checks then run on every
    section that is structurally sound, so one run reports everything it can.

    Example
    -------
    >>> m = load_manifest("audits/benefits-denial/audit.yaml")  # doctest: +SKIP
    >>> m.target.meaning  # doctest: +SKIP
    'flagged ineligible for the benefit (income above $50K)'
    """
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"manifest {str(path)!r} does not exist")
    root_path = Path(root).resolve() if root is not None else _find_root(path)
    label = _display(path, root_path)
    raw = _read_yaml(path, label)

    problems: list[str] = []
    manifest = None
    try:
        manifest = AuditManifest.model_validate(raw)
    except ValidationError as exc:
        problems.extend(_format_pydantic(exc, label=label, text=_text(path, label)))
    problems += located(path, label, _semantic_problems(raw, root_path))

    if problems:
        raise ManifestError(_dedupe(problems))
    assert manifest is not None
    manifest._path = path.resolve()
    manifest._root = root_path
    return manifest


def read_manifest_yaml(path: str | Path, *, label: str | None = None) -> dict:
    """An ``audit.yaml`` as the mapping its YAML holds, before any validation.

    For readers that need a field or two of every manifest without loading the audits (the site
    build's provenance lists each data file's sha256): a syntax error is the same
    `ManifestError` :func:`load_manifest` raises, naming the file and the line, never a
    ``yaml.YAMLError`` traceback.

    Parameters
    ----------
    path : str or pathlib.Path
        The manifest file.
    label : str, optional
        How the file is named in messages; default the path.

    Returns
    -------
    dict
        The top-level mapping, unvalidated.

    Raises
    ------
    ManifestError
        ``"<file>:L:C: YAML syntax error: ..."``, or a top level that is not a mapping.
    FileNotFoundError
        If ``path`` does not exist.
    """
    path = Path(path)
    # libyaml's safe loader when it is there: the same mapping, several times faster (the site
    # build reads every manifest on each build). On a problem, the pure-Python reader says what
    # load_manifest says.
    try:
        raw = yaml.load(_text(path, label or str(path)), Loader=_FAST_LOADER)
    except yaml.YAMLError:
        raw = None
    if isinstance(raw, dict):
        return raw
    return _read_yaml(path, label or str(path))


def _unique_keys(base: type) -> type:
    """``base`` (a YAML safe loader) refusing a mapping that holds one key twice.

    YAML 1.2 requires keys to be unique, but PyYAML keeps the last value silently: a second
    ``sep:`` in a manifest replaced the first, and the error came later, far from its cause.
    """

    class _Loader(base):
        def construct_mapping(self, node, deep=False):
            seen = {}
            for key_node, _ in node.value:
                if key_node.tag == "tag:yaml.org,2002:merge":
                    continue  # `<<:` merges another mapping: not a key of this one
                key = self.construct_object(key_node, deep=True)
                try:
                    first = seen.setdefault(key, key_node.start_mark.line)
                except TypeError:
                    continue  # an unhashable key: SafeConstructor reports it
                if first != key_node.start_mark.line:
                    raise yaml.constructor.ConstructorError(
                        None, None, f"the key {key!r} appears twice in one mapping (first on line {first + 1}); "
                        "keep one", key_node.start_mark)
            return super().construct_mapping(node, deep=deep)

    return _Loader


_FAST_LOADER = _unique_keys(getattr(yaml, "CSafeLoader", yaml.SafeLoader))
_LOADER = _unique_keys(yaml.SafeLoader)


def load_yaml(text: str):
    """YAML ``text`` as Python values, refusing a key given twice in one mapping.

    The one YAML reading of the project's hand-written files (manifests here, explainers' front
    matter in the site build): libyaml's parser when PyYAML has it, and on a mistake the
    pure-Python one, whose messages name the line and say what is wrong.

    Parameters
    ----------
    text : str
        The YAML document.

    Returns
    -------
    object
        What the document holds (``None`` for an empty one).

    Raises
    ------
    yaml.YAMLError
        A syntax error, or a ``yaml.constructor.ConstructorError`` naming a repeated key and the
        line of its first appearance; ``problem_mark`` gives the line.
    """
    try:
        return yaml.load(text, Loader=_FAST_LOADER)
    except yaml.YAMLError:
        pass
    return yaml.load(text, Loader=_LOADER)


class NotUTF8Error(ValueError):
    """Bytes that are not UTF-8: ``line`` and ``column`` (1-based) and the value of the first bad ``byte``."""

    def __init__(self, line: int, column: int, byte: int):
        super().__init__(f"line {line}, column {column}: not UTF-8 text (byte 0x{byte:02x})")
        self.line, self.column, self.byte = line, column, byte


def utf8_text(data: bytes) -> str:
    """A hand-written file's bytes as text: UTF-8, a leading byte-order mark dropped (Windows
    editors write one). The one decoding of the project's sources (manifests here, explainers and
    the reading order in the site build).

    Raises
    ------
    NotUTF8Error
        Naming the line and column of the first byte that is not UTF-8, where a UnicodeDecodeError
        names only an offset.
    """
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as err:
        line = data.count(b"\n", 0, err.start) + 1
        raise NotUTF8Error(line, err.start - (data.rfind(b"\n", 0, err.start) + 1) + 1, data[err.start]) from None


def _text(path: Path, label: str) -> str:
    """The manifest's text (`utf8_text`); other bytes are a ManifestError naming the line."""
    try:
        return utf8_text(path.read_bytes())
    except NotUTF8Error as err:
        raise ManifestError([f"{at(label, err.line, err.column)}: not UTF-8 text (byte 0x{err.byte:02x}); "
                             "save the file as UTF-8"]) from None


def _read_yaml(path: Path | None, label: str, *, text: str | None = None) -> dict:
    """The manifest's YAML as a mapping; a syntax error, a key given twice in one mapping or
    another top level is a ManifestError. ``text``: the manifest's text, when it is at hand (a
    report record holds it), instead of reading ``path``."""
    text = _text(path, label) if text is None else text
    try:
        raw = yaml.load(text, Loader=_LOADER)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = at(label, mark.line + 1, mark.column + 1) if mark else label
        problem = getattr(exc, "problem", None) or str(exc)
        raise ManifestError([f"{where}: YAML syntax error: {problem}{yaml_syntax_hint(text, exc)}"]) from None
    if not isinstance(raw, dict):
        raise ManifestError([f"{label}: (top level): expected a mapping of keys, got {type(raw).__name__}"])
    return raw


def _format_pydantic(exc: ValidationError, *, label: str, text: str | None = None,
                     model: type[BaseModel] = AuditManifest) -> list[str]:
    """pydantic's errors worded for a manifest's author, each after the manifest's ``label`` and,
    with its ``text``, its line (`faircode.formatting.at`; `_problem_line`: the key's, or for a
    missing field the line of the mapping that lacks it). ``model``: the schema validated (an
    ``audit.yaml``'s, or a report's, `faircode.report.ReportManifest`), whose keys and bounds the
    hints name."""
    out = []
    errors = exc.errors()
    choices = _literal_choices(errors)
    for err in errors:
        full = tuple(err["loc"])
        # pydantic reports a failed union member by member ("value.bool", "value.list[...]");
        # the member names are noise to a manifest author: report the field once.
        loc = tuple(p for p in full if not (isinstance(p, str) and ("[" in p or p in _SCALAR_TAGS)))
        field = _loc_path(loc)
        line = _problem_line(text, loc, missing=err["type"] == "missing") if text is not None else None
        where = f"{at(label, line)}: "
        if loc in choices or (err["type"] == "literal_error" and loc and loc[-1] == "op"):
            # A union of fixed words (a derived column's `op`: a comparison or 'map'): every word
            # it allows, said once, not "expected a number, text..." (issue 26, a fresh user). An
            # `op` (a filter's too) also says what was written and the op it may have meant.
            allowed = choices.get(loc) or _quoted(err["ctx"]["expected"])
            hint = (f" (did you mean {_OP_SYMBOLS[err['input']]!r}?)" if err["input"] in _OP_SYMBOLS
                    else did_you_mean(err["input"], allowed))
            out.append(f"{where}{field}: Input should be {', '.join(map(repr, allowed[:-1]))} or {allowed[-1]!r}, "
                       f"got {err['input']!r}{hint}")
            continue
        if loc != full and err["type"] != "extra_forbidden":
            out.append(f"{where}{field}: {err['input']!r} is not a valid value here (expected a number, "
                       "text, true/false, or a list of those)")
            continue
        if err["type"] == "extra_forbidden":
            key = str(loc[-1])
            out.append(f"{where}{field}: unknown key {key!r}{_close_keys(key, _known_keys(loc[:-1], model))}")
        elif err["type"] == "missing":
            hint = _REQUIRED_HINTS.get(str(loc[-1]), "") if model is AuditManifest else ""
            out.append(f"{where}{field}: required field is missing{hint}")
        elif err["type"] == "list_type" and isinstance(err["input"], str) and loc:  # `models: a, b`
            out.append(f"{where}{field}: {yaml_list_hint(str(loc[-1]), err['input'])}")
        elif loc and loc[-1] == "sha256" and not isinstance(err["input"], str):
            out.append(f"{where}{field}: must be 64 hex digits as text; YAML read {err['input']!r} as a "
                       "number, so quote it")
        elif worded := yaml_value_problem(err, bounds=getattr(field_at(model, loc), "metadata", ())):
            # `test_size: half`: what to write (a number more than 0 and less than 1), not pydantic's words
            out.append(f"{where}{field}: {worded}")
        else:
            msg = err["msg"].removeprefix("Value error, ")
            out.append(f"{where}{field}: {msg}")
    return out


def field_at(model: type[BaseModel], loc: tuple) -> FieldInfo | None:
    """The field of ``model`` at an error's location (``("groups", "min_size")``), through nested
    models and list items (an index in ``loc``); None where it is not a plain model field.

    Parameters
    ----------
    model : type of pydantic.BaseModel
        The top-level model (``AuditManifest``, an explainer's ``FrontMatter``).
    loc : tuple
        ``ValidationError.errors()[i]["loc"]``.

    Returns
    -------
    pydantic.fields.FieldInfo or None
        Its ``metadata`` holds the bounds (``Gt(gt=0)``...), its ``json_schema_extra`` a unit.
    """
    field = None
    for part in loc:
        if isinstance(part, int):
            continue  # an item of a list: the field is the list's
        if field is not None:
            model = next((t for t in _model_types(field.annotation)), None)
        if model is None or not isinstance(part, str) or part not in model.model_fields:
            return None
        field = model.model_fields[part]
    return field


def _model_types(annotation) -> list:
    """The pydantic models an annotation holds (``GroupsSpec | None``, ``list[Proxy]``)."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return [annotation]
    return [m for arg in typing.get_args(annotation) for m in _model_types(arg)]


def _literal_choices(errors: list[dict]) -> dict[tuple, list[str]]:
    """For each field whose type is a union of fixed words (``Literal``s) and whose every member
    failed: the words it allows, in the schema's order, by the field's location with the member
    names left out (as `_format_pydantic` names it)."""
    members: dict[tuple, list[dict]] = {}
    for err in errors:
        full = tuple(err["loc"])
        if full and isinstance(full[-1], str) and full[-1].startswith("literal["):
            members.setdefault(full[:-1], []).append(err)
    return {loc: [w for e in errs for w in _quoted(e["ctx"]["expected"])]
            for loc, errs in members.items()
            if len(errs) > 1 and all(e["type"] == "literal_error" for e in errs)}


def _quoted(expected: str) -> list[str]:
    """The words of pydantic's ``"'eq', 'ne' or 'lt'"`` (a literal error's ``expected``)."""
    return re.findall(r"'([^']*)'", expected)


# An `op` written as the symbol it stands for: the hint names the op (a did-you-mean cannot).
_OP_SYMBOLS = {"==": "eq", "=": "eq", "!=": "ne", "<>": "ne", "<": "lt", "<=": "le", ">": "gt", ">=": "ge"}


def _problem_line(text: str, loc: tuple, *, missing: bool) -> int | None:
    """The line a problem at ``loc`` is named by: the key's (an unknown key, a wrong value), or
    for a missing field the line of the mapping that lacks it (a fresh user found neither had a
    line, issue 26). The top level lacking a field is named by its first line."""
    return yaml_key_line(text, loc[:-1] if missing else loc)


def _close_keys(key: str, known: list[str]) -> str:
    """The hint after an unknown key: the allowed keys close to it (``difflib``, as
    `faircode.formatting.did_you_mean`, whose wording one match keeps), else every allowed key."""
    close = difflib.get_close_matches(key, known, n=3)
    if len(close) == 1:
        return did_you_mean(key, close)
    if close:
        return f" (did you mean {', '.join(map(repr, close[:-1]))} or {close[-1]!r}?)"
    return f" (expected one of: {', '.join(known)})" if known else ""


def yaml_key_line(text: str, loc: Sequence[str | int]) -> int | None:
    r"""The line where the key at ``loc`` is written in the YAML ``text``, for a message.

    The one finder of a key's line (manifests here; explainers' front matter in the site build):
    the text is composed into YAML nodes, which keep their position, and ``loc`` is followed
    through them.

    Parameters
    ----------
    text : str
        A YAML document.
    loc : sequence of str or int
        The path to the key, as pydantic reports it: keys of mappings and indices of lists,
        e.g. ``("protected", 0, "disadvantged")``.

    Returns
    -------
    int or None
        The 1-based line of the last key of ``loc`` (of the list item, when ``loc`` ends with an
        index; of the top-level node, when ``loc`` is empty); None when the text does not parse
        or ``loc`` leads nowhere in it.

    Examples
    --------
    >>> yaml_key_line("name: x\nprotected:\n  - {name: a, colr: b}\n", ("protected", 0, "colr"))
    3
    """
    try:
        node = yaml.compose(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
    except yaml.YAMLError:
        return None
    if node is None:
        return None  # an empty document
    line = node.start_mark.line + 1  # an empty ``loc``: the document's top node
    for part in loc:
        if isinstance(node, yaml.MappingNode) and isinstance(part, str):
            pair = next(((k, v) for k, v in node.value if isinstance(k, yaml.ScalarNode) and k.value == part), None)
            if pair is None:
                return None
            line, node = pair[0].start_mark.line + 1, pair[1]
        elif isinstance(node, yaml.SequenceNode) and isinstance(part, int) and 0 <= part < len(node.value):
            node = node.value[part]
            line = node.start_mark.line + 1
        else:
            return None
    return line


# What to write when a required field is absent, for fields whose meaning is easy to get wrong.
_REQUIRED_HINTS = {
    "favourable": ("; say which class of the target is the favourable outcome for the person: "
                   "`favourable: negative` when the positive class is the harmful one (flagged, "
                   "refused), `favourable: positive` when it is the one people want"),
}

_SCALAR_TAGS = {"bool", "int", "float", "str", "list", "dict", "function-after"}


def located(path: Path | None, label: str, problems: list[str], *, text: str | None = None) -> list[str]:
    """Each ``"<field path>: <what is wrong>"`` found in the manifest at ``path`` as
    ``"<label>:<line>: <field path>: ..."``, the line where the field's key is written
    (`yaml_key_line`; no line where it is not found). The one way a problem found past the schema
    is named: the registry's and the data's checks here, the data's in `faircode.load_audit` and
    a report manifest's (`faircode.report`; a fresh user found them named by field alone, where
    pydantic's had their line). ``text``: the manifest's text, when it is at hand (a report
    record holds it whole), instead of reading ``path``."""
    if not problems:
        return []
    if text is None:
        try:
            text = path.read_text(encoding="utf-8-sig")
        except (OSError, UnicodeDecodeError, AttributeError):
            text = None
    out = []
    for p in problems:
        field, _, rest = p.partition(": ")
        loc = _parse_loc_path(field) if rest and text is not None else None
        out.append(f"{at(label, yaml_key_line(text, loc) if loc else None)}: {p}")
    return out


def _parse_loc_path(path: str) -> tuple | None:
    """The inverse of `_loc_path`: ``"protected[1].column"`` -> ``("protected", 1, "column")``;
    None for text that is not a field path."""
    loc: list = []
    for part in path.split("."):
        m = re.fullmatch(r"([A-Za-z_]\w*)((?:\[\d+\])*)", part)
        if m is None:
            return None
        loc.append(m[1])
        loc += [int(i) for i in re.findall(r"\[(\d+)\]", m[2])]
    return tuple(loc)


def _loc_path(loc: tuple) -> str:
    parts: list[str] = []
    for p in loc:
        if isinstance(p, int):
            parts[-1:] = [f"{parts[-1] if parts else ''}[{p}]"]
        else:
            parts.append(str(p))
    return ".".join(parts) or "(top level)"


def _known_keys(loc: tuple, model: type[BaseModel] = AuditManifest) -> list[str]:
    """Field names (YAML spelling) of the model found by walking ``loc`` from ``model``."""
    tp: Any = model
    for p in loc:
        tp = _unwrap(tp)
        if isinstance(p, int):
            args = typing.get_args(tp)
            tp = args[0] if args else Any
        elif isinstance(tp, type) and issubclass(tp, BaseModel):
            field = next((f for n, f in tp.model_fields.items() if (f.alias or n) == p), None)
            tp = field.annotation if field else Any
    tp = _unwrap(tp)
    if isinstance(tp, type) and issubclass(tp, BaseModel):
        return [f.alias or n for n, f in tp.model_fields.items()]
    return []


def _unwrap(tp: Any) -> Any:
    """Strip Optional[...] / X | None / Annotated[...] down to the one real type."""
    while True:
        origin = typing.get_origin(tp)
        if origin is Annotated:
            tp = typing.get_args(tp)[0]
        elif origin in (Union, types.UnionType):
            args = [a for a in typing.get_args(tp) if a is not type(None)]
            if len(args) != 1:
                return tp
            tp = args[0]
        else:
            return tp


def _dedupe(items: list[str]) -> list[str]:
    return list(dict.fromkeys(items))


def _find_root(path: Path) -> Path:
    for folder in path.resolve().parents:
        if (folder / "pyproject.toml").is_file():
            return folder
    return project_root()


def _display(path: Path, root: Path) -> str:
    try:
        return str(path.resolve().relative_to(root))
    except ValueError:
        return str(path)
