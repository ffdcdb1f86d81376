"""A report's tables over 10 million rows against pandas reading the file and counting its groups.

    python bench/bench_report.py [--rows 10000000] [--runs 5] [--folder DIR]

Makes, once, a CSV file of ``--rows`` people (an id, sex, race, a decision, a score, age and a
zip code: 7 columns, some people of unknown sex or race, two race categories under 2%) and a
Parquet copy of it (when pyarrow is installed), with a report manifest for each, in ``--folder``
(kept there for the next run) or a temporary folder. Then, in ``--runs`` rounds after a warm-up
round, each side first in every other round, it times two commands, each a fresh Python process
(``python bench/bench_report.py --child ...``), from start to exit:

- (a) pandas: ``pd.read_csv(file, usecols=[sex, race, decision])`` (``read_parquet(columns=...)``)
  and ``groupby([sex, race]).agg(size, sum of the favourable flag)``: the counts a hand-built
  table starts from;
- (b) the report: ``faircode.report.load_report_manifest`` (the file's sha256, its header, one
  counting pass and the check of every label and decision), ``count_categories`` and
  ``report_tables`` (three tables with every interval, exact test, adjustment, equivalence test,
  power and verdict).

It prints each side's median wall time and the ratio b/a (the median of the rounds' ratios, and
the ratio of the medians), for CSV and for Parquet; target b/a <= 2.0, exit 1 if missed. (b)'s
own process also reports how its time splits (imports, loading and counting, tables), printed
below as medians.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

TARGET = 2.0
COLUMNS = ["sex", "race", "decision"]


def _make_data(folder: Path, rows: int) -> dict[str, Path]:
    """The data files (made once per folder and size) and a report manifest for each."""
    import numpy as np
    import pandas as pd

    csv_file, parquet_file = folder / f"people-{rows}.csv", folder / f"people-{rows}.parquet"
    if not csv_file.exists():
        rng = np.random.default_rng(0)
        sex = rng.choice(np.array(["F", "M", "U", ""]), rows, p=[0.49, 0.495, 0.01, 0.005])
        race = rng.choice(np.array(["White", "Black", "Hispanic", "Asian", "Two or more", "Native American",
                                    "Pacific Islander", ""]), rows, p=[0.5, 0.2, 0.15, 0.08, 0.04, 0.015, 0.008, 0.007])
        rate = 0.3 + 0.05 * (sex == "M") + 0.05 * (race == "White")
        frame = pd.DataFrame({"id": np.arange(rows), "sex": sex, "race": race,
                              "decision": np.where(rng.random(rows) < rate, "advance", "reject"),
                              "score": rng.normal(50, 10, rows).round(2), "age": rng.integers(18, 70, rows),
                              "zip": rng.integers(10000, 99999, rows)})
        frame.to_csv(csv_file.with_suffix(".tmp"), index=False)
        csv_file.with_suffix(".tmp").rename(csv_file)
        try:
            frame.to_parquet(parquet_file, index=False)
        except ImportError:
            pass  # no pyarrow: Parquet is not timed
    files = {"csv": csv_file}
    if parquet_file.exists():
        files["parquet"] = parquet_file
    return {kind: _manifest(folder, kind, path) for kind, path in files.items()}


def _manifest(folder: Path, kind: str, data: Path) -> Path:
    import yaml

    from faircode.report import data_sha256

    path = folder / f"report-{kind}.yaml"
    if path.exists() and yaml.safe_load(path.read_text())["data"]["file"] == str(data):
        return path
    raw = {"title": "Bench", "tool": {"name": "bench", "distribution_date": None}, "audit_date": "2026-12-01",
           "data": {"file": str(data), "sha256": data_sha256(data), "source": "bench/bench_report.py", "kind": "test",
                    "kind_reason": "a benchmark", "period": {"start": "2025-01-01", "end": "2025-12-31"}},
           "outcome": {"decision": {"column": "decision", "favourable": ["advance"], "other": ["reject"]}},
           "categories": {"sex": {"column": "sex", "labels": {"F": "Female", "M": "Male"}, "unknown": ["", "U"]},
                          "race_ethnicity": {"column": "race", "labels": {r: r for r in (
                              "White", "Black", "Hispanic", "Asian", "Two or more", "Native American",
                              "Pacific Islander")}, "unknown": [""]}},
           "exclusion": {"under_share": 0.02, "reason": "Local Law 144's 2% rule"},
           "practical_margin": {"points": 5, "ratio": [0.8], "reason": "the four-fifths line"}}
    path.write_text(yaml.safe_dump(raw, sort_keys=False))
    return path


def _child_pandas(data: str) -> None:
    import pandas as pd

    if data.endswith(".parquet"):
        frame = pd.read_parquet(data, columns=COLUMNS)
    else:
        frame = pd.read_csv(data, usecols=COLUMNS)
    counts = (frame.assign(selected=frame["decision"] == "advance")
              .groupby(["sex", "race"], dropna=False, observed=True)["selected"].agg(["size", "sum"]))
    assert int(counts["size"].sum()) == len(frame)


def _child_report(manifest: str) -> None:
    start = time.perf_counter()
    from faircode.report import count_categories, load_report_manifest, report_tables

    imported = time.perf_counter()
    m = load_report_manifest(manifest)
    counts = count_categories(m)
    counted = time.perf_counter()
    tables = report_tables(counts, m)
    done = time.perf_counter()
    assert sum(r.n for r in tables.table("sex").rows) + tables.table("sex").n_unknown == counts.n_rows
    print(json.dumps({"imports": imported - start, "load and count": counted - imported, "tables": done - counted}))


def _run(args: list[str]) -> tuple[float, dict]:
    start = time.perf_counter()
    done = subprocess.run([sys.executable, __file__, *args], capture_output=True, text=True)
    elapsed = time.perf_counter() - start
    if done.returncode:
        raise SystemExit(f"{' '.join(args)} failed:\n{done.stderr}")
    lines = done.stdout.strip().splitlines()
    return elapsed, (json.loads(lines[-1]) if lines else {})


def _time(kind: str, manifest: Path, data: Path, runs: int) -> bool:
    a_cmd, b_cmd = ["--child", "pandas", str(data)], ["--child", "report", str(manifest)]
    a_times, b_times, splits = [], [], []
    for round_ in range(runs + 1):  # round 0 warms the file cache and the bytecode: not counted
        order = [(a_cmd, a_times), (b_cmd, b_times)]
        for cmd, times in (order if round_ % 2 else order[::-1]):
            elapsed, split = _run(cmd)
            if round_:
                times.append(elapsed)
                if split:
                    splits.append(split)
    ratios = [b / a for a, b in zip(a_times, b_times)]
    med = statistics.median
    ratio = med(ratios)
    print(f"\n{kind}: {data.name} ({data.stat().st_size / 1e6:,.0f} MB), medians of {runs} runs")
    print(f"  (a) pandas read + groupby:  {med(a_times):6.2f} s  {[round(t, 2) for t in a_times]}")
    print(f"  (b) report tables:          {med(b_times):6.2f} s  {[round(t, 2) for t in b_times]}")
    print("      of which " + ", ".join(f"{k} {med(s[k] for s in splits):.2f} s" for k in splits[0]))
    print(f"  b/a: {ratio:.2f}x (median of rounds; ratio of medians {med(b_times) / med(a_times):.2f}x), "
          f"target <= {TARGET:.1f}x: {'met' if ratio <= TARGET else 'MISSED'}")
    return ratio <= TARGET


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=10_000_000)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--folder", type=Path, help="where the data are made and kept (default: a temporary folder)")
    parser.add_argument("--child", nargs=2, metavar=("KIND", "PATH"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        (_child_pandas if args.child[0] == "pandas" else _child_report)(args.child[1])
        return 0
    with tempfile.TemporaryDirectory(prefix="bench-report-") as tmp:
        folder = args.folder or Path(tmp)
        folder.mkdir(parents=True, exist_ok=True)
        start = time.perf_counter()
        manifests = _make_data(folder, args.rows)
        print(f"data: {args.rows:,} rows in {folder} (made or found in {time.perf_counter() - start:.0f} s)")
        if "parquet" not in manifests:
            print("Parquet: not timed (pyarrow is not installed)")
        met = [_time(kind, m, Path(_data_of(m)), args.runs) for kind, m in manifests.items()]
    return 0 if all(met) else 1


def _data_of(manifest: Path) -> str:
    import yaml

    return yaml.safe_load(manifest.read_text())["data"]["file"]


if __name__ == "__main__":
    sys.exit(main())
