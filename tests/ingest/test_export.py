"""``export``: every table as hive-partitioned Parquet (or CSV) with a manifest; DuckDB reads it
in place, and ``import-scores`` of the folder rebuilds a store with the same numbers."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import duckdb
import pandas as pd
import pytest

from analysis.cli.main import main
from analysis.core.errors import InputError, NotFoundError
from analysis.core.filters import Filters
from analysis.core.store import Store
from analysis.ingest.export import TABLES, export
from analysis.ingest.score_files import import_scores
from analysis.views import overview
from analysis.views.agreement import AgreementQuery, agreement
from tests.hostile_store import DATASET as HOSTILE_SET
from tests.hostile_store import NAMES, hostile_store

JUDGE = "gpt-4 (simulated)"
HIVE = "hive_partitioning = true, hive_types_autocast = false"
COUNTED = (
    "datasets", "judges", "instances", "responses", "runs", "judgments", "latest_scores",
    "families",
)  # fmt: skip


def _counts(db: Path) -> dict[str, int]:
    with duckdb.connect(str(db), read_only=True) as con:
        return {t: con.execute(f"SELECT count(*) FROM {t}").fetchall()[0][0] for t in COUNTED}


def _rows(db: Path, sql: str) -> list[tuple]:
    with duckdb.connect(str(db), read_only=True) as con:
        return sorted(con.execute(sql).fetchall(), key=repr)


@pytest.fixture
def demo(demo_db: Path, tmp_path: Path) -> Path:
    path = tmp_path / "demo.duckdb"
    shutil.copy(demo_db, path)
    return path


def test_round_trip_gives_the_same_numbers(demo: Path, tmp_path: Path):
    out = tmp_path / "export"
    assert main(["export", "--db", str(demo), "--out", str(out)]) == 0
    fresh = tmp_path / "fresh.duckdb"
    assert main(["import-scores", str(out), "--db", str(fresh)]) == 0

    assert _counts(fresh) == _counts(demo)
    for sql in (
        "SELECT dataset, instance_id, model, judge, skill, score FROM latest_scores",
        "SELECT dataset, title, source, simulated, seed, description FROM datasets",
        "SELECT judge, kind, backend, model, prompt_version, params FROM judges",
        "SELECT * EXCLUDE (difficulty), difficulty::INT FROM instances",
        "SELECT * FROM responses",
        "SELECT dataset, instance_id, model, judge, raw_output, rationale, parse_status, error, "
        "prompt_tokens, completion_tokens FROM judgments",
        "SELECT dataset, judge, model, instance_id, grp, total, n, n_rows FROM score_sums",
        "SELECT kind, name, family FROM families",
    ):
        assert _rows(fresh, sql) == _rows(demo, sql), sql

    f = Filters("demo", JUDGE)
    pd.testing.assert_frame_equal(
        overview.leaderboard(Store(fresh), f), overview.leaderboard(Store(demo), f)
    )
    q = AgreementQuery(Filters("demo"), JUDGE, "kind:human")
    before, after = agreement(Store(demo), q), agreement(Store(fresh), q)
    pd.testing.assert_frame_equal(after.stats, before.stats)
    pd.testing.assert_frame_equal(after.ceiling, before.ceiling)

    # A second import adds nothing: the runs exist.
    assert main(["import-scores", str(out), "--db", str(fresh)]) == 0
    assert _counts(fresh) == _counts(demo)


def test_duckdb_reads_the_folders_in_place_with_their_partitions(demo: Path, tmp_path: Path):
    out = tmp_path / "export"
    report = export(Store(demo), out)
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["format"] == "finegrain-export" and manifest["file_format"] == "parquet"
    assert {t.name for t in TABLES} == set(manifest["tables"]) == set(report.rows)
    with duckdb.connect() as con:
        for name, meta in manifest["tables"].items():
            glob = str(out / meta["path"] / "**" / "*.parquet")
            n = con.execute(f"SELECT count(*) FROM read_parquet(?, {HIVE})", [glob]).fetchall()
            assert n[0][0] == meta["rows"] == report.rows[name], name
        got = con.execute(
            f"SELECT dataset, judge, count(*), count(score), sum(score) "
            f"FROM read_parquet(?, {HIVE}) GROUP BY ALL",
            [str(out / "scores" / "**" / "*.parquet")],
        ).fetchall()
    want = _rows(
        demo,
        "SELECT dataset, judge, count(*), count(score), sum(score) FROM latest_scores GROUP BY ALL",
    )
    assert sorted(got, key=repr) == want
    assert (out / "scores" / "dataset=demo" / "judge=gpt-4%20%28simulated%29").is_dir()
    assert not list(tmp_path.glob(".export.partial-*"))  # the work folder went


def test_hostile_names_survive_the_folder_names(tmp_path: Path):
    db = hostile_store(tmp_path / "hostile.duckdb")
    out = tmp_path / "export"
    export(Store(db), out)
    folders = [p.name for p in (out / "scores").rglob("*") if p.is_dir()]
    assert all("/" not in f and f.split("=", 1)[0] in ("dataset", "judge") for f in folders)
    with duckdb.connect() as con:
        got = con.execute(
            f"SELECT DISTINCT dataset, judge FROM read_parquet(?, {HIVE})",
            [str(out / "scores" / "**" / "*.parquet")],
        ).fetchall()
    assert {d for d, _ in got} == {HOSTILE_SET}
    assert {j for _, j in got} <= set(NAMES)
    fresh = tmp_path / "fresh.duckdb"
    import_scores(Store(fresh), out)
    sql = "SELECT dataset, instance_id, model, judge, skill, score FROM latest_scores"
    assert _rows(fresh, sql) == _rows(db, sql)


def test_csv_is_for_spreadsheets(tmp_path: Path):
    db = tmp_path / "s.duckdb"
    file = tmp_path / "scores.csv"
    pd.DataFrame({
        "instance_id": ["1", "2"], "model": ["=HYPERLINK(\"http://x\")", "m"], "judge": "j",
        "skill": "robustness", "score": [4, None], "domain": ["Math", "Coding"],
        "response": ["+cmd|' /C calc'!A0", "plain"], "instruction": ["@SUM(1)", "-2+3"],
    }).to_csv(file, index=False)  # fmt: skip
    import_scores(Store(db), file, kind="llm", dataset="d")
    out = tmp_path / "csv"
    export(Store(db), out, file_format="csv")
    [scores] = list((out / "scores").rglob("*.csv"))
    rows = pd.read_csv(scores, dtype=str, keep_default_na=False)
    assert set(rows["model"]) == {'\'=HYPERLINK("http://x")', "m"}
    assert set(rows["domains"]) == {"Math", "Coding"}  # a list, joined
    assert set(rows["dataset"]) == {"d"} and set(rows["judge"]) == {"j"}
    assert set(rows["score"]) == {"4.0", ""}
    responses = pd.read_csv(next((out / "responses").rglob("*.csv")), dtype=str)
    assert set(responses["text"]) == {"'+cmd|' /C calc'!A0", "plain"}
    instances = pd.read_csv(next((out / "instances").rglob("*.csv")), dtype=str)
    assert set(instances["instruction"]) == {"'@SUM(1)", "'-2+3"}
    with pytest.raises(InputError, match="export with --format parquet"):
        import_scores(Store(tmp_path / "other.duckdb"), out)


def test_refusals_leave_nothing_behind(demo: Path, tmp_path: Path):
    busy = tmp_path / "busy"
    busy.mkdir()
    (busy / "keep.txt").write_text("mine")
    with pytest.raises(InputError, match="not empty"):
        export(Store(demo), busy)
    assert [p.name for p in busy.iterdir()] == ["keep.txt"]
    with pytest.raises(NotFoundError, match="No dataset 'nope'"):
        export(Store(demo), tmp_path / "x", datasets=["nope"])
    assert not (tmp_path / "x").exists()
    with pytest.raises(InputError, match="parquet or csv"):
        export(Store(demo), tmp_path / "y", file_format="xlsx")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["busy", "demo.duckdb"]


def test_a_changed_export_is_refused_and_the_store_unchanged(demo: Path, tmp_path: Path):
    out = tmp_path / "export"
    export(Store(demo), out)
    target = tmp_path / "target.duckdb"
    Store(target).ensure()
    before = _counts(target)
    manifest = json.loads((out / "manifest.json").read_text())
    manifest["tables"]["scores"]["rows"] += 1
    (out / "manifest.json").write_text(json.dumps(manifest))
    with pytest.raises(InputError, match="the manifest says"):
        import_scores(Store(target), out)
    manifest["tables"]["scores"]["rows"] -= 1
    (out / "manifest.json").write_text(json.dumps(manifest))
    with pytest.raises(InputError, match="without --judge"):
        import_scores(Store(target), out, judge="someone")
    shutil.rmtree(out / "responses")
    with pytest.raises(InputError, match="missing: the manifest lists"):
        import_scores(Store(target), out)
    (out / "manifest.json").write_text('{"format": "other"}')
    with pytest.raises(InputError, match="not a Finegrain export"):
        import_scores(Store(target), out)
    assert _counts(target) == before


def test_one_dataset_only(demo: Path, tmp_path: Path):
    file = tmp_path / "other.csv"
    pd.DataFrame({"instance_id": ["1"], "model": ["m"], "judge": ["j"], "skill": ["robustness"],
                  "score": [3]}).to_csv(file, index=False)  # fmt: skip
    import_scores(Store(demo), file, kind="human", dataset="other")
    out = tmp_path / "export"
    report = export(Store(demo), out, datasets=["other"])
    assert report.rows["scores"] == 1 and report.rows["datasets"] == 1
    assert report.rows["judges"] == 1 and report.rows["instances"] == 1
    assert [d["dataset"] for d in json.loads((out / "manifest.json").read_text())["datasets"]] == [
        "other"
    ]


def test_command_line_errors_are_one_paragraph(demo: Path, tmp_path: Path, capsys):
    assert main(["export", "--db", str(demo), "--out", str(tmp_path / "x"), "--dataset", "no"]) == 2
    err = capsys.readouterr().err
    assert "No dataset 'no' in the store" in err and "Traceback" not in err
    assert not (tmp_path / "x").exists()
    assert main(["export", "--db", str(demo), "--out", str(tmp_path / "c"), "--format", "csv"]) == 0
    assert json.loads((tmp_path / "c" / "manifest.json").read_text())["file_format"] == "csv"
    assert "Exported demo as csv" in capsys.readouterr().out


def test_a_write_that_fails_in_duckdb_gives_the_one_error_and_leaves_no_folder(
    demo: Path, tmp_path: Path, monkeypatch
):
    """A full disk met by DuckDB while it writes the files: one StoreError, nothing left."""
    from analysis.core.errors import StoreError

    real = duckdb.DuckDBPyRelation.to_parquet
    calls = []

    def failing(self, path, **kw):
        calls.append(path)
        if len(calls) == 3:  # the third table
            raise duckdb.IOException("IO Error: No space left on device")
        return real(self, path, **kw)

    monkeypatch.setattr(duckdb.DuckDBPyRelation, "to_parquet", failing)
    with pytest.raises(StoreError, match="No space left on device"):
        export(Store(demo), tmp_path / "out")
    assert len(calls) == 3
    assert sorted(p.name for p in tmp_path.iterdir()) == ["demo.duckdb"]
