"""A FLASK import writes exactly what the code before issue 14's import work wrote: every table's
row count and checksum, and every import's report, in three scenarios (the real folder; the
older schema with GPT-4 review files in both names; both into one store, then the reviews
again). tests/data/golden/make_flask_import.py wrote flask_import.json from /work/before; the
folder's path, timestamps and sequence ids are left out, as a rerun cannot repeat them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.data.golden.make_flask_import import SCENARIOS, run_scenario

GOLDEN = json.loads((Path(__file__).parents[1] / "data/golden/flask_import.json").read_text())[
    "scenarios"
]


@pytest.fixture(scope="module", params=SCENARIOS)
def scenario(request, flask_dir: Path, tmp_path_factory: pytest.TempPathFactory):
    name = request.param
    tables = list(GOLDEN[name]["tables"])
    return name, run_scenario(name, flask_dir, tmp_path_factory.mktemp(name), tables)


def test_reports_are_unchanged(scenario):
    name, got = scenario
    assert got["reports"] == GOLDEN[name]["reports"]


def test_tables_are_unchanged(scenario):
    name, got = scenario
    for table, figures in GOLDEN[name]["tables"].items():
        assert got["tables"][table] == figures, f"{name}: table {table} differs"


def test_golden_covers_what_an_import_writes():
    tables = GOLDEN["reimport"]["tables"]
    assert {"datasets", "instances", "responses", "judges", "runs", "judgments", "scores"} <= set(
        tables
    )
    assert tables["responses"]["rows"] == 26_595 and tables["scores"]["rows"] == 2_577
    assert GOLDEN["real"]["tables"]["instances"]["rows"] == 1_829
