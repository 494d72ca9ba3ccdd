"""Scorer names on the command line: ``--raters`` with names that hold commas (a repeatable
flag; commas still split a list of known names; a clear error otherwise), and ``--a/--b``
names typed in another Unicode spelling (NFD) than the store's (NFC)."""

from __future__ import annotations

import json
import unicodedata
from pathlib import Path

import krippendorff
import numpy as np
import pandas as pd
import pytest

from analysis.cli.main import main
from analysis.core.store import Store
from analysis.views.scorers import rater_names, resolve, scorer_options

COMMA = "Smith, J."
JOSE = unicodedata.normalize("NFC", "José")
JOSE_NFD = unicodedata.normalize("NFD", "José")
# Scores per judge on instances 1..8 (one model, one skill); ties and a missing rating included.
SCORES = {
    COMMA: [1, 2, 2, 3, 4, 5, 5, 3],
    "Lee": [1, 2, 3, 3, 4, 4, 5, None],
    JOSE: [2, 2, 2, 3, 5, 5, 4, 3],
}


@pytest.fixture
def db(tmp_path: Path) -> Path:
    rows = [
        {"instance_id": i + 1, "model": "m", "skill": "correctness", "score": s, "judge": j}
        for j, scores in SCORES.items()
        for i, s in enumerate(scores)
        if s is not None
    ]
    file = tmp_path / "labels.csv"
    pd.DataFrame(rows).to_csv(file, index=False)
    path = tmp_path / "t.duckdb"
    assert main(["import-scores", str(file), "--db", str(path), "--dataset", "t",
                 "--kind", "human"]) == 0  # fmt: skip
    return path


def _alpha(*judges: str) -> float:
    grid = np.array([[np.nan if s is None else s for s in SCORES[j]] for j in judges], float)
    return float(krippendorff.alpha(grid, level_of_measurement="ordinal"))


def _raters(db: Path, capsys, *values: str) -> tuple[int, dict | str]:
    args = [a for v in values for a in ("--raters", v)]
    code = main(["agreement", "--db", str(db), "--dataset", "t", *args, "--json",
                 "--n-boot", "50"])  # fmt: skip
    out = capsys.readouterr()
    return code, json.loads(out.out) if code == 0 else out.err


def _ordinal(report: dict) -> float:
    return report["alpha"]["correctness"]["alpha_ordinal"]["value"]


def test_a_name_with_a_comma_is_given_with_its_own_flag(db, capsys):
    code, report = _raters(db, capsys, COMMA, "Lee")
    assert code == 0, report
    assert report["raters"] == [COMMA, "Lee"]
    assert _ordinal(report) == pytest.approx(_alpha(COMMA, "Lee"), abs=1e-9)


def test_commas_still_split_a_list_of_known_names(db, capsys):
    code, report = _raters(db, capsys, f"Lee,{JOSE}")
    assert code == 0, report
    assert report["raters"] == ["Lee", JOSE]
    assert _ordinal(report) == pytest.approx(_alpha("Lee", JOSE), abs=1e-9)
    code, report = _raters(db, capsys, f"{COMMA}", f"Lee, {JOSE}")  # a whole name, then a list
    assert code == 0 and report["raters"] == [COMMA, "Lee", JOSE]


def test_an_unknown_split_is_a_clear_error(db, capsys):
    code, err = _raters(db, capsys, f"{COMMA},Lee")  # a comma name inside a list: ambiguous
    assert code == 2 and "Traceback" not in err
    assert f"--raters '{COMMA},Lee' is not a scorer's name" in err
    assert "unknown scorers: 'Smith', 'J.'" in err and "one --raters each" in err


def test_nfd_names_find_the_nfc_scorer(db, capsys):
    assert JOSE_NFD != JOSE
    known = scorer_options(Store(db), "t")
    assert resolve(JOSE_NFD, known).judges == (JOSE,)
    assert resolve(" KIND:human ", known).spec == "kind:human"  # a group in any case
    assert rater_names([JOSE_NFD, "Lee"], known) == (JOSE, "Lee")
    code = main(["agreement", "--db", str(db), "--dataset", "t", "--a", JOSE_NFD, "--b", "Lee",
                 "--json", "--n-boot", "50"])  # fmt: skip
    out = capsys.readouterr()
    assert code == 0, out.err
    report = json.loads(out.out)
    assert JOSE in json.dumps(report, ensure_ascii=False)
    code, report = _raters(db, capsys, JOSE_NFD, "Lee")
    assert code == 0 and report["raters"] == [JOSE, "Lee"]
    assert _ordinal(report) == pytest.approx(_alpha(JOSE, "Lee"), abs=1e-9)
