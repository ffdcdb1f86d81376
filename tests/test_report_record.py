"""build_record and verify_record: the record holds every number and what it came from; an
untouched record verifies; a record with one number changed fails naming that number; a data file
that is not the recorded one fails naming its sha256."""

from __future__ import annotations

import copy
import csv
import hashlib
import io
import json

import pytest

from faircode.data import project_root
from faircode.report import (
    ROW_FIELDS,
    build_record,
    count_categories,
    load_report_manifest,
    record_csv,
    report_tables,
    verify_record,
)

from report_data import frame, write

ROOT = project_root()
PROVENANCE = {"commit": "0" * 40, "dirty": False, "lock_sha256": "1" * 64, "date": "2026-12-01"}


@pytest.fixture(scope="module")
def recorded(tmp_path_factory):
    """A report's record as report.json holds it, and its data file."""
    folder = tmp_path_factory.mktemp("record")
    path = write(folder, frame(seed=30, n=1500),
                 exclusion={"under_share": 0.02, "reason": "categories under 2% of the data"})
    m = load_report_manifest(path)
    record = build_record(report_tables(count_categories(m), m), m, provenance=PROVENANCE)
    return json.loads(json.dumps(record, allow_nan=False)), folder / "data.csv", path


def test_the_record_holds_every_number_and_what_it_came_from(recorded):
    record, data, path = recorded
    assert record["format"] == "faircode-report/1" and record["date"] == "2026-12-01"
    assert record["data"]["sha256"] == hashlib.sha256(data.read_bytes()).hexdigest()
    assert record["data"]["rows"] == 1500
    assert record["manifest"]["text"] == path.read_text()
    assert record["manifest"]["sha256"] == hashlib.sha256(path.read_bytes()).hexdigest()
    assert record["project"] == {"commit": "0" * 40, "dirty": False, "lock_sha256": "1" * 64, "faircode": "0.1.0"}
    assert [t["table"] for t in record["tables"]] == ["sex", "race/ethnicity", "intersection"]
    contract = {"table", "category", "n", "n_selected", "selection_rate", "impact_ratio", "impact_ratio_ci_low",
                "impact_ratio_ci_high", "p_value", "p_adjusted", "verdict", "excluded"}
    for table in record["tables"]:
        assert {"n_unknown", "reference", "rows"} <= set(table)
        for row in table["rows"]:
            assert contract <= set(row) and row["table"] == table["table"]


def test_the_csv_is_the_records_rows(recorded):
    record, _, _ = recorded
    rows = list(csv.DictReader(io.StringIO(record_csv(record))))
    flat = [r for t in record["tables"] for r in t["rows"]]
    assert len(rows) == len(flat) and tuple(rows[0]) == ROW_FIELDS
    for got, want in zip(rows, flat):
        assert got["category"] == want["category"] and int(got["n"]) == want["n"]
        assert got["p_value"] == ("" if want["p_value"] is None else repr(want["p_value"]))


def test_an_untouched_record_verifies(recorded):
    record, data, _ = recorded
    assert verify_record(record, data) == []


def _tested(record):
    return next((t, r) for t in record["tables"] for r in t["rows"] if r["p_value"] is not None)


@pytest.mark.parametrize("field, change", [
    ("p_value", lambda v: v * (1 + 1e-6)),
    ("impact_ratio_ci_low", lambda v: v + 1e-7),
    ("n_selected", lambda v: v + 1),
    ("verdict", lambda v: "gap_shown" if v != "gap_shown" else "inconclusive"),
    ("excluded", lambda v: not v),
])
def test_a_record_with_one_number_changed_fails_naming_it(recorded, field, change):
    record, data, _ = recorded
    bad = copy.deepcopy(record)
    table, row = _tested(bad)
    row[field] = change(row[field])
    differences = verify_record(bad, data)
    assert [(d.table, d.category, d.field) for d in differences] == [(table["table"], row["category"], field)]
    assert str(differences[0]).startswith(f"{table['table']} / {row['category']}: {field}: recorded ")


def test_a_number_changed_within_rounding_still_verifies(recorded):
    record, data, _ = recorded
    same = copy.deepcopy(record)
    _, row = _tested(same)
    row["p_value"] *= 1 + 1e-12
    assert verify_record(same, data) == []


def test_a_changed_data_file_fails_naming_its_sha256_first(recorded, tmp_path):
    record, data, _ = recorded
    changed = tmp_path / "data.csv"
    lines = data.read_text().splitlines(keepends=True)
    # One person's decision flipped: the hash and that person's table rows differ.
    header, first = lines[0], lines[1]
    lines[1] = first.replace(",yes,", ",no,") if ",yes," in first else first.replace(",no,", ",yes,")
    changed.write_text(header + "".join(lines[1:]))
    differences = verify_record(record, changed)
    assert differences[0].field == "data.sha256"
    assert differences[0].recorded == record["data"]["sha256"]
    assert differences[0].recomputed == hashlib.sha256(changed.read_bytes()).hexdigest()
    assert any(d.field == "n_selected" for d in differences[1:])


def test_data_the_manifest_cannot_read_is_one_difference(recorded, tmp_path):
    record, data, _ = recorded
    changed = tmp_path / "data.csv"
    changed.write_text(data.read_text().replace(",F,", ",Q,", 1))
    differences = verify_record(record, changed)
    assert [d.field for d in differences] == ["data.sha256", "manifest"]
    assert "the label 'Q'" in str(differences[1].recomputed)


def test_a_tampered_manifest_text_is_named(recorded):
    record, data, _ = recorded
    bad = copy.deepcopy(record)
    bad["manifest"]["text"] = bad["manifest"]["text"].replace("ratio:\n  - 0.8", "ratio:\n  - 0.5")
    assert bad["manifest"]["text"] != record["manifest"]["text"]
    fields = [d.field for d in verify_record(bad, data)]
    assert fields[0] == "manifest.sha256" and "equivalence_p_value" in fields


def test_the_compas_record_verifies():
    m = load_report_manifest(ROOT / "reports" / "compas-ll144" / "report.yaml")
    record = json.loads(json.dumps(build_record(report_tables(count_categories(m), m), m, provenance=PROVENANCE),
                                   allow_nan=False))
    assert verify_record(record, ROOT / "data" / "compas-scores-two-years.csv") == []


def test_a_record_of_another_format_is_refused(recorded):
    record, data, _ = recorded
    with pytest.raises(ValueError, match="not a report record"):
        verify_record({**record, "format": "other/1"}, data)
    with pytest.raises(ValueError, match="provenance"):
        build_record(None, None, provenance={"commmit": "x"})
