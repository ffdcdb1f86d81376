"""Small report manifests and their data, written into a test's folder (tests/test_report_*.py).

`frame` makes people with a sex, a race and a decision, some of unknown category; `manifest`
is the ``report.yaml`` mapping that reads them (every label mapped or unknown); `write` puts
both on disk, the manifest's sha256 the data's.
"""

from __future__ import annotations

import datetime
from pathlib import Path

import numpy as np
import pandas as pd
import yaml

from faircode.report import data_sha256

SEX_LABELS = {"F": "Female", "M": "Male"}
RACE_LABELS = {"W": "White", "B": "Black", "H": "Hispanic", "A": "Asian"}


def frame(seed: int = 0, n: int = 2000) -> pd.DataFrame:
    """``n`` people: sex F/M (or U, or empty: unknown), race W/B/H/A (or empty), a decision
    ``yes``/``no`` whose rate depends on both, a score, and a column no report reads."""
    rng = np.random.default_rng(seed)
    sex = rng.choice(["F", "M", "U", ""], n, p=[0.47, 0.47, 0.03, 0.03])
    race = rng.choice(["W", "B", "H", "A", ""], n, p=[0.5, 0.25, 0.15, 0.07, 0.03])
    rate = 0.3 + 0.1 * (sex == "M") + 0.1 * (race == "W") - 0.05 * (race == "B")
    decision = np.where(rng.random(n) < rate, "yes", "no")
    score = np.round(rng.normal(50 + 10 * rate, 10, n), 1)
    return pd.DataFrame({"id": np.arange(n), "sex": sex, "race": race, "decision": decision, "score": score,
                         "zip": rng.integers(10000, 99999, n)})


def manifest(data_file: Path, **changes) -> dict:
    """A sound report manifest for `frame`'s data at ``data_file``; ``changes`` replace its top-level keys."""
    raw = {
        "title": "Bias audit of a test screen",
        "tool": {"name": "TestScreen", "version": "1.0", "distribution_date": datetime.date(2025, 1, 15)},
        "auditor": "A. Auditor",
        "audit_date": datetime.date(2026, 11, 30),
        "data": {"file": str(data_file), "sha256": data_sha256(data_file), "source": "made by tests/report_data.py",
                 "kind": "test", "kind_reason": "a test of the library",
                 "period": {"start": datetime.date(2025, 1, 1), "end": datetime.date(2025, 12, 31)}},
        "outcome": {"decision": {"column": "decision", "favourable": ["yes"], "other": ["no"]}},
        "categories": {"sex": {"column": "sex", "labels": dict(SEX_LABELS), "unknown": ["", "U"]},
                       "race_ethnicity": {"column": "race", "labels": dict(RACE_LABELS), "unknown": [""]}},
        "practical_margin": {"points": 5, "ratio": [0.8], "reason": "the four-fifths line"},
    }
    raw.update(changes)
    return raw


def write(folder: Path, data: pd.DataFrame, **changes) -> Path:
    """``data`` as ``folder/data.csv`` and its manifest as ``folder/report.yaml`` (returned)."""
    data_file = folder / "data.csv"
    data.to_csv(data_file, index=False)
    return write_manifest(folder, manifest(data_file, **changes))


def write_manifest(folder: Path, raw: dict) -> Path:
    path = folder / "report.yaml"
    path.write_text(yaml.safe_dump(raw, sort_keys=False, allow_unicode=True), encoding="utf-8")
    return path
