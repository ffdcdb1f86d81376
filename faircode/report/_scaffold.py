"""A new report manifest from a data file: :func:`scaffold_report_manifest`.

The scaffold reads the data's columns and a sample of its rows, guesses which column holds the
decisions (or the scores) and which hold sex, race/ethnicity and other categories (by their names
and values), lists every distinct label of each category column and every decision value (from
all the rows), and writes a manifest in which each guess is marked ``# GUESS`` for the user to
confirm, each field explained in a comment, and each answer the data cannot give (the title, the
tool, the dates, the data's source and kind, the margin's reason) written ``FILL IN: ...``:
:func:`faircode.report.load_report_manifest` reports each of those as "fill this in" until it is
filled, and loads the manifest once they are.
"""

from __future__ import annotations

import csv
import re
from pathlib import Path

import numpy as np
import yaml

from faircode.data import project_root
from faircode.manifest import ParseOptions
from faircode.report._data import data_columns, data_kind, data_sha256, read_columns

_SAMPLE_ROWS = 20_000
_SEX_NAME = re.compile(r"^(sex|gender)$|sex|gender", re.I)
_RACE_NAME = re.compile(r"race|ethnic", re.I)
_EXTRA_NAME = re.compile(r"age_?(cat|band|group|range|bracket)|disab|veteran", re.I)
_DECISION_NAME = re.compile(r"decision|select|outcome|hire|hired|approv|advance|pass|result|status|accept|offer|"
                            r"shortlist|label|target", re.I)
_SCORE_NAME = re.compile(r"score|rating|rank|prob|risk", re.I)
_SEX_WORDS = {"m": "Male", "male": "Male", "man": "Male", "men": "Male", "f": "Female", "female": "Female",
              "woman": "Female", "women": "Female"}
_UNKNOWN_WORDS = {"", "u", "unknown", "unk", "na", "n/a", "none", "null", "?", "not disclosed", "undisclosed",
                  "declined", "decline to state", "prefer not to say", "not specified", "unspecified", "missing"}
_FAVOURABLE_WORDS = {"1", "yes", "y", "true", "selected", "select", "hired", "hire", "approved", "approve",
                     "accepted", "accept", "pass", "passed", "advance", "advanced", "offer", "offered",
                     "shortlisted", "interview", "positive"}
_RACE_WORDS = re.compile(r"white|black|asian|hispan|latin|cauca|african|native|pacific|indian|hawai", re.I)


def scaffold_report_manifest(name: str, data_path: str | Path) -> str:
    """The text of a new ``report.yaml`` for ``data_path``, for its author to complete.

    Parameters
    ----------
    name : str
        The report's name (``fairsite audit new NAME``), written in the comment at the top.
    data_path : str or pathlib.Path
        A CSV file (its separator, header row and padding after separators found by
        :class:`csv.Sniffer`), a Parquet file, or a folder of Parquet files.

    Returns
    -------
    str
        YAML text: ``data`` filled in (file, sha256, parse options), the outcome and the
        category columns guessed (``# GUESS`` comments say on what), every label found in a
        category column mapped (sex: M, F, male... to Male and Female; other labels to
        themselves; empty and "unknown"-like labels to ``unknown``), every decision value
        declared favourable or other, and ``FILL IN: ...`` where only the author knows.

    Raises
    ------
    FileNotFoundError
        ``data_path`` does not exist.
    ValueError
        Data whose columns cannot be read.
    """
    path = Path(data_path)
    if not path.exists():
        raise FileNotFoundError(f"{str(path)!r} does not exist")
    parse = _sniff(path) if data_kind(path) == "csv" else None
    columns = data_columns(path, parse)
    sample = _sample(path, parse, columns)
    roles = _guess_roles(columns, sample)
    category_columns = [c for c in (roles["sex"], roles["race"], *roles["extra"]) if c]
    labels = _label_counts(path, parse, category_columns + ([roles["decision"]] if roles["decision"] else []))
    parts = [_head(name), _data_block(path, parse), _outcome_block(roles, labels),
             _categories_block(roles, labels), _tail()]
    return "\n".join(parts)


def _sniff(path: Path) -> ParseOptions:
    """A CSV file's parse options: separator, header row, a space after each separator."""
    with open(path, newline="", encoding="utf-8", errors="replace") as fh:
        head = fh.read(64 * 1024)
    lines = head.splitlines()[:50]
    try:
        dialect = csv.Sniffer().sniff("\n".join(lines), delimiters=",;\t|")
        sep = dialect.delimiter
    except csv.Error:
        sep = ","
    try:
        header = csv.Sniffer().has_header("\n".join(lines))
    except csv.Error:
        header = True
    padded = bool(lines) and all(f"{sep} " in line for line in lines[1:] if line.strip())
    width = len(next(csv.reader([lines[0]], delimiter=sep))) if lines else 0
    names = None if header else [f"column_{i + 1}" for i in range(width)]
    return ParseOptions(sep=sep, header=header, names=names, skipinitialspace=padded)


def _sample(path: Path, parse: ParseOptions | None, columns: list[str]):
    """The first rows of every column, as text (a sample to guess the columns' roles from)."""
    import pandas as pd

    if parse is None:
        import pyarrow.parquet as pq
        from faircode.report._data import parquet_files

        first = parquet_files(path)[0] if path.is_dir() else path
        table = pq.ParquetFile(first).iter_batches(batch_size=_SAMPLE_ROWS, columns=columns)
        return next(table).to_pandas()
    from faircode.data import _read_csv_kwargs, as_memory_error

    with as_memory_error():
        return pd.read_csv(path, nrows=_SAMPLE_ROWS, dtype=str, **_read_csv_kwargs(parse))


def _guess_roles(columns: list[str], sample) -> dict:
    """Which column is the sex, the race/ethnicity, the extra categories, the decision, the score."""
    def distinct(column) -> set[str]:
        return {str(v).strip().lower() for v in sample[column].dropna().unique()[:50]}

    def numeric(column) -> bool:
        import pandas as pd

        return pd.to_numeric(sample[column], errors="coerce").notna().mean() > 0.99

    sex = next((c for c in columns if _SEX_NAME.search(c)), None) or next(
        (c for c in columns if 1 < len(distinct(c)) <= 6 and distinct(c) <= set(_SEX_WORDS) | _UNKNOWN_WORDS), None)
    race = next((c for c in columns if _RACE_NAME.search(c) and c != sex), None) or next(
        (c for c in columns if c != sex and len(distinct(c)) <= 20 and sum(map(bool, map(_RACE_WORDS.search,
                                                                                    distinct(c)))) >= 2), None)
    extra = [c for c in columns if _EXTRA_NAME.search(c) and c not in (sex, race)]
    taken = {sex, race, *extra}
    decision = next((c for c in columns if c not in taken and _DECISION_NAME.search(c) and len(distinct(c)) <= 3),
                    None) or next((c for c in columns if c not in taken and len(distinct(c)) == 2), None)
    score = next((c for c in columns if c not in taken | {decision} and _SCORE_NAME.search(c) and numeric(c)
                  and len(distinct(c)) > 2), None)
    return {"sex": sex, "race": race, "extra": extra, "decision": decision if decision or not score else None,
            "score": None if decision else score}


def _label_counts(path: Path, parse: ParseOptions | None, columns: list[str]) -> dict[str, dict[str, int]]:
    """Every distinct label of each column, from all the rows, with its rows (``""``: missing)."""
    if not columns:
        return {}
    from faircode.report._counts import _codes

    frame = read_columns(path, parse, labels=columns)
    out = {}
    for column in columns:
        codes, texts = _codes(frame[column])
        counts = np.bincount(codes, minlength=len(texts))
        found = {texts[i]: int(n) for i, n in enumerate(counts) if n}
        out[column] = {t: found[t] for t in sorted(found, key=lambda t: (t.lower(), t))}  # the same from CSV or Parquet
    return out


def _y(value) -> str:
    """A value as YAML writes it on one line (quoted where YAML would read it otherwise)."""
    return yaml.safe_dump(value, default_flow_style=True, width=1_000_000).removesuffix("\n...\n").strip()


def _head(name: str) -> str:
    return (f"# Report manifest for {name!r}, written by `fairsite audit new` from the data.\n"
            "# Lines marked GUESS were guessed from the data: confirm or correct them. Every value reading\n"
            "# \"FILL IN: ...\" needs an answer only you have; the report is built once none is left.\n"
            "title: \"FILL IN: the report's title, e.g. Bias audit of <tool> (<period>)\"\n\n"
            "tool:   # the automated employment decision tool audited (Local Law 144's \"AEDT\")\n"
            "  name: \"FILL IN: the tool's name\"\n"
            "  version: null   # optional: the version audited\n"
            "  vendor: null    # optional: who makes it\n"
            "  distribution_date: \"FILL IN: the date the tool was first distributed or used, YYYY-MM-DD "
            "(null if you do not know it)\"\n\n"
            "auditor: null   # the independent auditor (Local Law 144 requires one): a name and organisation\n"
            "audit_date: \"FILL IN: the date of this audit, YYYY-MM-DD\"\n")


def _data_block(path: Path, parse: ParseOptions | None) -> str:
    lines = ["data:",
             f"  file: {_y(_shown_path(path))}   # a CSV file, a Parquet file or a folder of Parquet files",
             f"  sha256: {data_sha256(path)}   # the data's digest: the report is refused if the data change"]
    if parse is not None:
        lines.append("  parse:   # GUESS (from the file's first lines): how to read it")
        lines.append(f"    sep: {_y(parse.sep)}")
        lines.append(f"    header: {_y(parse.header)}")
        if parse.names:
            lines.append(f"    names: {_y(parse.names)}   # the file has no header row: name its columns")
        lines.append(f"    skipinitialspace: {_y(parse.skipinitialspace)}")
        lines.append("    na_values: [\"\"]   # the texts read as missing (an empty field)")
    lines += ["  source: \"FILL IN: where the data come from (the system, the export, who gave it)\"",
              "  kind: \"FILL IN: historical (the tool's real decisions) or test (data made to test it)\"",
              "  kind_reason: \"FILL IN: why this kind of data (Local Law 144 allows test data only when "
              "historical data are too few)\"",
              "  period: {start: \"FILL IN: first date the data cover, YYYY-MM-DD\", "
              "end: \"FILL IN: last date, YYYY-MM-DD\"}", ""]
    return "\n".join(lines)


def _shown_path(path: Path) -> str:
    try:
        return path.resolve().relative_to(project_root()).as_posix()
    except (ValueError, FileNotFoundError):
        return str(path.resolve())


def _outcome_block(roles: dict, labels: dict) -> str:
    lines = ["outcome:   # exactly one of decision (a column of decisions) and score (a column of scores)"]
    if roles["decision"]:
        values = labels[roles["decision"]]
        favourable = [v for v in values if v.strip().lower() in _FAVOURABLE_WORDS and v != ""]
        other = [v for v in values if v not in favourable]
        lines += ["  decision:",
                  f"    column: {_y(roles['decision'])}   # GUESS (from its name and values): the tool's decisions"]
        if favourable:
            lines += [f"    favourable: {_y(favourable)}   # GUESS: the values that mean selected (advanced, approved...)",
                      f"    other: {_y(other)}   # GUESS: every other value the column holds"
                      + (f" (\"\": {values['']:,} rows with no decision)" if "" in values else "")]
        else:
            held = ", ".join(f"{_y(v)} ({n:,} rows)" for v, n in values.items())
            lines += [f"    favourable: {_y(f'FILL IN: which of the values mean selected: {held}')}",
                      f"    other: {_y('FILL IN: the other values, each one of them')}"]
    elif roles["score"]:
        lines += ["  score:   # the scoring rate: the share scored strictly above the whole sample's median",
                  f"    column: {_y(roles['score'])}   # GUESS (from its name and values): the tool's scores"]
    else:
        lines += ["  decision:",
                  "    column: \"FILL IN: the column of the tool's decisions (or write score: {column: ...})\"",
                  "    favourable: [\"FILL IN: the values that mean selected\"]",
                  "    other: [\"FILL IN: every other value\"]"]
    return "\n".join(lines) + "\n"


def _categories_block(roles: dict, labels: dict) -> str:
    lines = ["categories:   # each label in a column is mapped to the category the report names, or unknown"]
    for key, column, words in (("sex", roles["sex"], _SEX_WORDS), ("race_ethnicity", roles["race"], {})):
        lines += [f"  {key}:"] + _category_lines(column, labels.get(column, {}), words, "    ")
    if roles["extra"]:
        lines.append("  extra:   # GUESS: more tables, one per column (delete those you do not report)")
        for column in roles["extra"]:
            name = re.sub(r"\W", "_", column).strip("_") or "extra"
            name = name if re.match(r"[A-Za-z_]", name) else f"t_{name}"
            lines += [f"    - name: {_y(name)}"] + _category_lines(column, labels[column], {}, "      ")
    return "\n".join(lines) + "\n"


def _category_lines(column: str | None, counts: dict[str, int], words: dict[str, str], indent: str) -> list[str]:
    if column is None:
        return [f"{indent}column: \"FILL IN: the column holding this category\"",
                f"{indent}labels: \"FILL IN: each label of the column and the category it names, e.g. "
                f"{{F: Female, M: Male}}\"", f"{indent}unknown: []"]
    unknown = [t for t in counts if t.strip().lower() in _UNKNOWN_WORDS]
    lines = [f"{indent}column: {_y(column)}   # GUESS (from its name and values)",
             f"{indent}labels:   # GUESS: every label in the data (rows), and the category it names"]
    for text, n in counts.items():
        if text not in unknown:
            lines.append(f"{indent}  {_y(text)}: {_y(words.get(text.strip().lower(), text))}   # {n:,} rows")
    rows = ", ".join(f"{_y(t)}: {counts[t]:,}" for t in unknown)
    lines.append(f"{indent}unknown: {_y(unknown)}" + (f"   # GUESS: labels of no category ({rows} rows)" if unknown
                                                       else "   # labels that say nothing of the category"))
    return lines


def _tail() -> str:
    return ("# Local Law 144's exclusion (off unless written): a category under 2% of the rows may be left out of\n"
            "# the impact ratios, its count and rate still reported, with the reason (6 RCNY 5-301).\n"
            "# exclusion:\n#   under_share: 0.02\n#   reason: ...\n\n"
            "practical_margin:   # the smallest gap that matters, chosen before looking at the results\n"
            "  points: 5      # GUESS: a difference of rates within 5 percentage points is too small to matter\n"
            "  ratio: [0.8]   # GUESS: an impact ratio of at least 0.8 (the four-fifths line) is no adverse impact\n"
            "  reason: \"FILL IN: why these values, in words a reader can check\"\n")
