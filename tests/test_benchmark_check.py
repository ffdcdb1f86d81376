"""`faircode benchmark --check` accounts for every committed row, and bad results files or a full
disk are named by file and line, not raised as tracebacks (issue 25, points 12 and 14).

One small run (german-credit, S0, logistic regression, 999 permutations) stands in for the whole
benchmark: the command's run is replaced by it, so a "full" check costs one fit.
"""

from __future__ import annotations

import errno
import shutil
from pathlib import Path

import pytest

from faircode import benchmark as bm
from faircode import cli
from faircode.results_csv import RESULTS_KEYS, ResultsFileError, read_results_csv

TASK = ["german-credit", "S0", "logistic_regression"]
ARGS = ["--audit", "german-credit", "--strategy", "S0", "--model", "logistic_regression"]


@pytest.fixture(scope="module")
def run():
    return bm.run_benchmark(audits=[TASK[0]], strategies=[TASK[1]], models=[TASK[2]], n_permutations=999,
                            progress=False, return_by_group=True)


@pytest.fixture
def committed(run, tmp_path):
    out = tmp_path / "results"
    bm.write_results(*run[:2], out, by_group=run[2])
    return out


@pytest.fixture
def check(run, committed, monkeypatch, capsys):
    """``faircode benchmark --check [args]`` against ``committed``, with the small run as its run."""
    monkeypatch.setenv("COLUMNS", "250")
    monkeypatch.setattr(cli, "_run", lambda args: run)

    def _check(*args: str) -> tuple[int, str]:
        code = cli.main(["benchmark", "--check", "--no-progress", "--output", str(committed), *args])
        captured = capsys.readouterr()
        return code, captured.out + captured.err

    return _check


def _append(path, *lines: str) -> None:
    with open(path, "a", encoding="utf-8") as fh:
        fh.writelines(line + "\n" for line in lines)


def _lines(path) -> list[str]:
    return path.read_text(encoding="utf-8").splitlines()


def test_the_results_folder_is_the_projects_from_any_folder_inside_it(run, monkeypatch, capsys):
    """From a subfolder, `faircode benchmark` read the manifests of the project but wrote a stray
    explainers/results/ (issue 47, item 3): results/ is the project's, wherever it is started."""
    from faircode.data import project_root

    root = project_root()
    written = []
    monkeypatch.setattr(cli, "_run", lambda args: run)
    monkeypatch.setattr(bm, "write_results", lambda *tables, by_group=None: written.append(Path(tables[2])) or [
        Path(tables[2]) / "results_fairness.csv"])
    monkeypatch.chdir(root / "explainers")
    assert cli.main(["benchmark", "--no-progress"]) == 0
    assert written == [root / "results"]
    assert not (root / "explainers" / "results").exists()


def test_a_second_clone_sharing_the_install_is_refused_by_name(monkeypatch, tmp_path, capsys):
    """From a second clone whose venv runs the first clone's faircode, --check compared this clone's
    results with the other clone's manifests (a broken audit.yaml passed): refused, naming both."""
    from faircode.data import project_root

    other = tmp_path / "other-clone"
    (other / "audits").mkdir(parents=True)
    (other / "explainers").mkdir()
    monkeypatch.delenv("FAIRCODE_ROOT", raising=False)
    monkeypatch.chdir(other / "explainers")
    monkeypatch.setattr(cli, "_run", lambda args: pytest.fail("the benchmark ran"))
    assert cli.main(["benchmark", "--check", "--no-progress"]) == 2
    out = " ".join(capsys.readouterr().out.split())
    assert f"the current folder is in the project {other}, but faircode reads audits/, data/ and results/ from " \
           f"{project_root()}" in out
    assert f"FAIRCODE_ROOT={other}" in out and "pip install" in out


def test_the_unchanged_files_reproduce(check):
    code, out = check()
    assert code == 0 and "results reproduce" in out and "partial check" not in out


def test_a_copied_row_for_an_audit_that_does_not_exist_is_listed(check, committed):
    # On main: "results reproduce", since rows of tasks the run did not fit were never looked at.
    path = committed / bm.FAIRNESS_FILE
    copy = _lines(path)[1].replace("german-credit,", "no-such-audit,", 1)
    _append(path, copy)
    code, out = check()
    assert code == 1 and "results reproduce" not in out
    line = len(_lines(path))
    assert "no-such-audit" in out and f"line {line}" in out and "no audit 'no-such-audit'" in out


def test_a_row_of_a_strategy_or_model_the_audit_does_not_run_is_listed(run, check, committed):
    path = committed / bm.PERFORMANCE_FILE
    first = _lines(path)[1]
    _append(path, first.replace(",S0,", ",S7,", 1), first.replace(",logistic_regression,", ",svm,", 1))
    code, out = check()
    assert code == 1 and "2 rows cannot be accounted for" in out
    diffs = bm.compare_results(*run[:2], committed, by_group=run[2], complete=True)
    assert list(diffs["committed"]) == ["present (line 3)", "present (line 4)"]
    assert list(diffs["current"]) == [
        "not produced by any run: german-credit has no strategy 'S7' (it runs S0)",
        "not produced by any run: german-credit S0 has no model 'svm' (it runs logistic_regression)"]
    assert bm.compare_results(*run[:2], committed, by_group=run[2]).empty  # partial: outside the run


def test_a_duplicated_row_is_listed_with_both_lines(check, committed):
    # On main the copy was compared with the run cell by cell and passed (or raised on the index).
    path = committed / bm.FAIRNESS_FILE
    _append(path, _lines(path)[5])
    code, out = check()
    assert code == 1 and "results reproduce" not in out
    assert f"lines 6, {len(_lines(path))}" in out and "duplicated" in out


def test_a_garbage_row_names_the_file_and_line(check, committed):
    path = committed / bm.FAIRNESS_FILE
    _append(path, "this,is,not,a,results,row")
    code, out = check()
    assert code == 1 and "Traceback" not in out and "results reproduce" not in out
    assert f"{path}:{len(_lines(path))}: 6 cells where the header has {len(bm.FAIRNESS_COLUMNS)}" in out


def test_a_partial_check_says_what_it_did_not_check(check, committed):
    path = committed / bm.PERFORMANCE_FILE
    _append(path, _lines(path)[1].replace("german-credit,", "no-such-audit,", 1))
    code, out = check(*ARGS)
    assert code == 0 and "results reproduce" in out  # the foreign row is outside what was asked for...
    # ... and the output says so, rather than implying every row reproduces.
    assert "partial check (--audit german-credit --strategy S0 --model logistic_regression)" in out
    assert f"not checked: 1 rows of {bm.PERFORMANCE_FILE}" in out


def test_a_partial_write_refuses_a_malformed_committed_file(run, committed, monkeypatch, capsys):
    monkeypatch.setattr(cli, "_run", lambda args: run)
    path = committed / bm.FAIRNESS_FILE
    before = path.read_bytes()
    _append(path, "a,b")
    code = cli.main(["benchmark", "--no-progress", "--output", str(committed), *ARGS])
    out = capsys.readouterr().out
    assert code == 1 and "Traceback" not in out
    assert f"{path.name}:{len(_lines(path))}:" in out and "nothing was written" in out
    assert path.read_bytes() == before + b"a,b\n"


def test_a_full_disk_names_the_file_and_leaves_every_results_file_as_it_was(run, committed, monkeypatch, capsys):
    from pathlib import Path

    monkeypatch.setattr(cli, "_run", lambda args: run)
    old = {p.name: p.read_bytes() for p in committed.iterdir()}
    real = Path.write_text

    def full(self, *args, **kwargs):
        if self.parent == committed and bm.PERFORMANCE_FILE in self.name:  # the second file written
            real(self, "half a fi", encoding="utf-8")  # the disk fills part-way through the write
            raise OSError(errno.ENOSPC, "No space left on device")
        return real(self, *args, **kwargs)

    monkeypatch.setattr(Path, "write_text", full)
    code = cli.main(["benchmark", "--no-progress", "--output", str(committed)])
    out = capsys.readouterr().out
    assert code == 1 and "Traceback" not in out
    assert f"cannot write {committed / bm.PERFORMANCE_FILE}" in out.replace("\n", "") and "disk is full" in out
    # Nothing cut short, the fairness file (written first) not replaced alone, no temporary file left.
    assert {p.name: p.read_bytes() for p in committed.iterdir()} == old


# --------------------------------------------------------------------------- the reader itself


@pytest.mark.parametrize("text, line, what", [
    ("a,b\n1,2\n3,4,5\n", 3, "3 cells where the header has 2 (more"),
    ("a,b\n1,2\n3\n", 3, "1 cells where the header has 2 (fewer"),
    ('a,b\n1,"2\n3,4\n', 2, "not CSV"),
    ("", 1, "the file is empty"),
    ("a,a\n1,2\n", 1, "the header repeats ['a']"),
])
def test_the_reader_names_file_line_and_problem(tmp_path, text, line, what):
    path = tmp_path / "x.csv"
    path.write_text(text)
    with pytest.raises(ResultsFileError) as info:
        read_results_csv(path)
    assert str(info.value).startswith(f"{path}:{line}: ") and what in str(info.value)


@pytest.mark.parametrize("column, cell, what", [
    ("gap", "abc", "column 'gap' holds 'abc'; expected a number (or nothing)"),
    ("n_advantaged", "12 people", "column 'n_advantaged' holds '12 people'; expected a number (or nothing)"),
    ("significant", "yes", "column 'significant' holds 'yes'; expected True or False (or nothing)"),
])
def test_a_cell_of_the_wrong_kind_is_named_by_file_line_and_column(tmp_path, column, cell, what):
    # A fresh user set a gap to 'abc' (the site said "could not convert string to float", no file or
    # line) and a `significant` to 'yes' (an explainer's check was blamed).
    committed = Path(__file__).resolve().parents[1] / "results" / bm.FAIRNESS_FILE
    lines = committed.read_text().split("\n")
    header = lines[0].split(",")
    row = lines[3].split(",")  # a row without quoted commas: the committed rows' cells are plain
    assert len(row) == len(header)
    row[header.index(column)] = cell
    lines[3] = ",".join(row)
    path = tmp_path / bm.FAIRNESS_FILE
    path.write_text("\n".join(lines))
    with pytest.raises(ResultsFileError) as info:
        read_results_csv(path)
    assert str(info.value) == f"{path}:4: {what}"


def test_the_kinds_of_the_columns_are_those_the_committed_files_hold():
    # The oracle: pandas' reading of what `faircode benchmark` wrote (a column of numbers or
    # nothing reads as float or int; of True/False as bool or object with only those).
    import pandas as pd

    from faircode.results_csv import RESULTS_BOOLEANS, RESULTS_NUMBERS

    for name in (bm.FAIRNESS_FILE, bm.PERFORMANCE_FILE, bm.BY_GROUP_FILE):
        frame = pd.read_csv(Path(__file__).resolve().parents[1] / "results" / name)
        # A column empty in every row reads as float too: it may be declared a number or not.
        numeric = {c for c in frame if frame[c].dtype.kind in "fi"}
        holding_numbers = {c for c in numeric if frame[c].notna().any()}
        booleans = {c for c in frame if frame[c].dtype.kind == "b"
                    or (frame[c].notna().any() and set(frame[c].dropna().astype(str)) <= {"True", "False"})}
        assert holding_numbers <= RESULTS_NUMBERS[name] <= numeric, name
        assert RESULTS_BOOLEANS[name] == booleans, name


def test_the_reader_counts_lines_of_quoted_newlines_and_refuses_repeats(tmp_path):
    path = tmp_path / "results_performance.csv"
    path.write_text('audit,strategy,model,reason\na,S0,m,"two\nlines"\nb,S0,m,\na,S0,m,again\n')
    with pytest.raises(ResultsFileError, match=r"results_performance\.csv:5: the same row as line 2 \(audit=a, strategy=S0, model=m\)"):
        read_results_csv(path)
    kept = read_results_csv(path, duplicates="keep")
    assert kept.lines == (2, 4, 5) and kept.duplicates == ((("a", "S0", "m"), (2, 5)),)


def test_not_utf8_names_the_line(tmp_path):
    path = tmp_path / "x.csv"
    path.write_bytes(b"a,b\n1,2\n\xff,3\n")
    with pytest.raises(ResultsFileError, match=r"x.csv:3: not UTF-8"):
        read_results_csv(path)


def test_the_committed_files_read_cleanly_with_the_benchmark_keys(committed):
    from faircode.benchmark import columns

    assert RESULTS_KEYS == {columns.FAIRNESS_FILE: tuple(columns.FAIRNESS_KEY),
                            columns.PERFORMANCE_FILE: tuple(columns.PERFORMANCE_KEY),
                            columns.BY_GROUP_FILE: tuple(columns.BY_GROUP_KEY)}
    for name, header in ((bm.FAIRNESS_FILE, bm.FAIRNESS_COLUMNS), (bm.PERFORMANCE_FILE, bm.PERFORMANCE_COLUMNS),
                         (bm.BY_GROUP_FILE, bm.BY_GROUP_COLUMNS)):
        read_results_csv(committed / name, columns=header)
    shutil.rmtree(committed)
