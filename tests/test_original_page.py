"""The project's first page was written against this API; its code must run unchanged (issue 12).

The script below is in that page's style: manifest, ``_load_dataset``, core features, split,
model, permutation test and significance report. It runs end to end in a fresh process, as a
reader would run it, and its printed numbers are checked against scikit-learn and SciPy.
"""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from faircode.benchmark import _load_dataset
from faircode.data import project_root
from faircode.manifest import load_manifest

ROOT = project_root()

ORIGINAL_PAGE = '''
import json

from sklearn.model_selection import train_test_split

from faircode.benchmark import _load_dataset
from faircode.manifest import load_manifest
from faircode.models import build_model
from faircode.significance import permutation_test, significance_report
from faircode.strategies import encode_features

manifest = load_manifest("audits/german-credit/audit.yaml")
df, y, masks = _load_dataset(manifest)
X = encode_features(df, manifest.core_features)
X_train, X_test, y_train, y_test, idx_train, idx_test = train_test_split(
    X, y, df.index, test_size=manifest.test_size, random_state=manifest.random_state, stratify=y
)
model = build_model("logistic_regression", manifest.random_state)
model.fit(X_train, y_train)
y_pred = model.predict(X_test)

women = masks["sex"].loc[idx_test].to_numpy() == 1
p = permutation_test(y_pred[women], y_pred[~women], n_permutations=999, random_state=0)
report = significance_report(y_pred[women], y_pred[~women], n_resamples=500, random_state=0)
print(json.dumps({"n_test": int(len(y_test)), "n_women": int(women.sum()),
                  "selected_women": int(y_pred[women].sum()), "selected_men": int(y_pred[~women].sum()),
                  "p": p, "small_sample_warning": report.small_sample_warning}))
'''


def test_load_dataset_returns_frame_series_and_0_1_masks():
    df, y, masks = _load_dataset(load_manifest(ROOT / "audits" / "german-credit" / "audit.yaml"))
    assert isinstance(df, pd.DataFrame) and isinstance(y, pd.Series)
    assert len(df) == len(y) == 1000 and y.index.equals(df.index)
    # Independent count: the raw file codes a bad risk as 2 in its last field (300 of 1,000).
    raw = (ROOT / "data" / "german.data").read_text().split("\n")
    assert int(y.sum()) == sum(line.split()[-1] == "2" for line in raw if line.strip())
    assert list(masks) == ["sex", "age"]
    for mask in masks.values():
        assert isinstance(mask, pd.Series) and set(mask.unique()) <= {0, 1}
    # Women: status_sex codes A92 and A95 (1 = the disadvantaged group).
    assert int(masks["sex"].sum()) == sum(line.split()[8] in ("A92", "A95") for line in raw if line.strip())
    # The alias is the benchmark's loader: the same rows and labels as load_audit.
    from faircode import load_audit

    audit = load_audit("german-credit")
    assert np.array_equal(y.to_numpy(), audit.y) and np.array_equal(masks["age"].to_numpy(), audit.masks["age"])


def test_load_dataset_rejects_other_types():
    with pytest.raises(TypeError, match=r"`manifest` must be an AuditManifest"):
        _load_dataset(42)


def test_original_page_script_runs_unchanged(tmp_path):
    script = tmp_path / "original_page.py"
    script.write_text(ORIGINAL_PAGE)
    done = subprocess.run([sys.executable, str(script)], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout.strip().splitlines()[-1])
    assert out["n_test"] == 200
    # The p-value of the same counts from SciPy's Fisher exact test (an independent two-sided
    # test of the same 2x2 table); the Monte Carlo p must sit within its sampling error.
    n_w, n_m = out["n_women"], out["n_test"] - out["n_women"]
    table = [[out["selected_women"], n_w - out["selected_women"]], [out["selected_men"], n_m - out["selected_men"]]]
    assert 0 < out["p"] <= 1
    fisher = stats.fisher_exact(table).pvalue
    assert abs(out["p"] - fisher) <= 0.08 + 4 * np.sqrt(fisher * (1 - fisher) / 999)
    assert out["small_sample_warning"] is (min(n_w, n_m) < 30)
