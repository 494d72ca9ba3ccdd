"""The Overview, Skill radar and Breakdowns data functions give, bit for bit, the values the
code gave before issue 14's rewrite (tests/data/golden/pages.json, written by make_pages.py in
that folder from the code before the change): every mean, CI bound, p-value, rank, rank
interval and n, on the demo and on the real FLASK instances with generated scores, under
several filters."""

from __future__ import annotations

import importlib.util
import json
import shutil
from pathlib import Path

import pytest

from analysis.core.store import Store

GOLDEN = Path(__file__).resolve().parents[1] / "data" / "golden"


def _maker():
    spec = importlib.util.spec_from_file_location("make_pages", GOLDEN / "make_pages.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


@pytest.fixture(scope="module")
def current(base_demo_db: Path, flask_db: Path, tmp_path_factory) -> dict:
    make = _maker()
    tmp = tmp_path_factory.mktemp("golden")
    shutil.copy(flask_db, tmp / "flask.duckdb")
    flask = Store(tmp / "flask.duckdb")
    make.add_generated(flask, tmp)
    return make.compute(Store(base_demo_db), flask)  # the base demo, without the judge panel


@pytest.fixture(scope="module")
def stored() -> dict:
    return json.loads((GOLDEN / "pages.json").read_text())


@pytest.mark.parametrize("store", ["demo", "flask"])
def test_every_value_is_unchanged(current, stored, store):
    assert set(current[store]) == set(stored[store])
    changed = [key for key, value in stored[store].items() if current[store][key] != value]
    assert not changed, f"{len(changed)} changed, e.g. {changed[:5]}"


def test_the_golden_values_cover_what_the_pages_show(stored):
    demo = stored["demo"]
    board = demo["leaderboard | all"]
    assert {"rank_low", "rank_high", "ci_low", "n_instances"} <= set(board["columns"])
    assert len(board["rows"]) == 8 * 5  # 8 models × (4 abilities + Overall)
    compares = [v for k, v in demo.items() if k.startswith("compare ability") and "all" in k]
    assert compares and all(len(v["rows"]) == 4 for v in compares)  # one row per ability
    flask = stored["flask"]
    assert flask["radar skill | all"]["published_subset"] == "full"
    nan_cis = sum("nan" in row for v in flask.values() if "rows" in v for row in v["rows"])
    assert nan_cis > 0  # small cells (one instance) keep their NaN CIs
