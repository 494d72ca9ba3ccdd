"""No file crashes an import (issue 13): generated score files and FLASK folders, plausible rows
mixed with hostile cells and bytes, fed to the real CLI in a child process under a memory and a
time limit. Every outcome is a clean import whose stored scores equal what the file said
(computed here from the generated rows), or the one-paragraph error with exit status 2 and the
store unchanged (row counts and a checksum of every table). Never a traceback, hang or crash.

Each example is a handful of inputs run by one child (tests/ingest/importer_child.py), each in
its own copy of the store, and each input's outcome is checked on its own.
"""

from __future__ import annotations

import json
import math
import os
import resource
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from analysis.core.store import Store
from analysis.ingest.flask_source import import_flask
from tests.ingest.importer_inputs import JUDGE, Expected, flask_case, score_file, score_rows
from tests.mini_flask import build_flask

CHILD = Path(__file__).with_name("importer_child.py")
ROOT = Path(__file__).resolve().parents[2]
MEMORY_LIMIT = 4 * 2**30  # address space: pyarrow and DuckDB reserve generously
TIME_LIMIT_S = 180  # for a whole batch; a hang (a FIFO opened) runs into it
# File and folder names: plain, non-ASCII, and bytes that are not UTF-8 (always refused).
STEMS = ["scores", "模型 scores", os.fsdecode(b"sc\xff")]
CAP_MB = "0.25"  # FINEGRAIN_MAX_FILE_MB in the child: a bigger FLASK file is refused

settings.register_profile(
    "importers",
    max_examples=12,
    deadline=None,
    # No shrinking: each step reruns a child (seconds); a failure names its input instead.
    phases=[Phase.explicit, Phase.reuse, Phase.generate],
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
settings.register_profile(
    "importers-ci", parent=settings.get_profile("importers"), derandomize=True
)
PROFILE = settings.get_profile("importers-ci" if os.environ.get("CI") == "true" else "importers")


@pytest.fixture(scope="module")
def bases(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Two stores: an empty one, and one with a small FLASK folder imported (names to reuse)."""
    root = tmp_path_factory.mktemp("bases")
    empty = Store(root / "empty.duckdb")
    empty.ensure()
    flask = root / "flask.duckdb"
    import_flask(Store(flask), str(build_flask(root / "folder", n=4)))
    return {"empty": empty.path, "flask": Path(flask)}


def _limits() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT, MEMORY_LIMIT))


def run_child(jobs: list[dict]) -> list[dict]:
    """Each job's outcome; a crash, hang or out-of-memory of the child fails the test."""
    env = {**os.environ, "FINEGRAIN_MAX_FILE_MB": CAP_MB, "PYTHONPATH": str(ROOT)}
    try:
        proc = subprocess.run(
            [sys.executable, str(CHILD)],
            input=json.dumps(jobs),
            capture_output=True,
            text=True,
            timeout=TIME_LIMIT_S,
            preexec_fn=_limits,
            env=env,
            cwd=ROOT,
        )
    except subprocess.TimeoutExpired:
        pytest.fail(f"the importer hung on one of {[j['argv'] for j in jobs]}")
    results = [json.loads(line) for line in proc.stdout.splitlines() if line.strip()]
    if proc.returncode != 0 or len(results) != len(jobs):
        job = jobs[len(results)] if len(results) < len(jobs) else None
        pytest.fail(
            f"the child died (status {proc.returncode}) on {job and job['argv']}:\n"
            f"{proc.stderr[-3000:]}"
        )
    return results


def check_error(result: dict) -> None:
    """Exit status 2, the one paragraph (a progress bar may come before it), store unchanged."""
    assert result["crash"] is None, result["crash"]
    assert result["code"] == 2, result
    err = result["stderr"]
    assert "Traceback" not in err, err
    start = err.find("error: ")
    assert start == 0 or (start > 0 and err[start - 1] in "\n\r"), err
    lines = err[start:].strip().splitlines()
    assert lines and lines[1:] in ([], ["Nothing was written to the store."]), err
    assert result["fingerprint"] == result["before"]


def check_clean(result: dict) -> None:
    assert result["crash"] is None, result["crash"]
    assert result["code"] == 0, result
    assert "Traceback" not in result["stderr"], result["stderr"]


def check_outcome(result: dict, expected: Expected, dataset: str) -> None:
    """One input's outcome against what was expected of it (see importer_inputs.Expected)."""
    if result["crash"] is not None or result["code"] not in (0, 2):
        pytest.fail(f"{expected.label}: not a clean outcome:\n{result['crash'] or result}")
    if expected.outcome == "error" or (expected.outcome == "any" and result["code"] == 2):
        check_error(result)
        return
    check_clean(result)
    stored = {tuple(r[1:5]): r[5] for r in result["scores"] if r[0] == dataset}
    for key, score in stored.items():  # whatever was accepted is a score on the 1-5 scale
        assert score is None or (math.isfinite(score) and 1 <= score <= 5), (key, score)
    want = expected.scores
    if expected.outcome == "clean":
        assert stored == want, expected.label
    else:  # a hostile input that was accepted: its plausible rows are stored as written
        assert {k: stored.get(k, "missing") for k in want} == want, expected.label


def _skills(base: Path) -> list[tuple[str, str]]:
    """(skill id, label) of FLASK's twelve skills, read from the store."""
    with Store(base).read() as con:
        return con.execute("SELECT skill, label FROM skills WHERE NOT custom").fetchall()


@PROFILE
@pytest.mark.parametrize("fmt", ["csv", "jsonl", "parquet"])
@given(data=st.data())
def test_score_files_import_cleanly_or_fail_with_one_paragraph(fmt, data, bases, tmp_path_factory):
    base = bases["flask"]
    skills = _skills(base)
    work = tmp_path_factory.mktemp(fmt)
    jobs, expected = [], []
    for k in range(data.draw(st.integers(3, 5), label="files")):
        rows = data.draw(score_rows(skills, fmt), label=f"rows {k}")
        stem = data.draw(st.sampled_from(STEMS), label=f"name {k}")
        path, exp = data.draw(score_file(rows, fmt, work / f"{stem}{k}.{fmt}"), label=f"file {k}")
        exp = exp if stem in STEMS[:2] else Expected(f"{exp.label}, name not UTF-8", "error")
        folder = work / f"job{k}"
        folder.mkdir()
        jobs.append({"base": str(base), "work": str(folder),
                     "argv": ["import-scores", str(path), "--dataset", "gen"]})  # fmt: skip
        expected.append(exp)
    for result, exp in zip(run_child(jobs), expected, strict=True):
        check_outcome(result, exp, "gen")


@PROFILE
@given(data=st.data())
def test_flask_folders_import_cleanly_or_fail_with_one_paragraph(data, bases, tmp_path_factory):
    base = bases["empty"]
    labels = {label.lower(): skill for skill, label in _skills(base)}
    work = tmp_path_factory.mktemp("flask")
    jobs, expected = [], []
    for k in range(data.draw(st.integers(3, 4), label="folders")):
        stem = data.draw(st.sampled_from(STEMS), label=f"name {k}")
        folder = build_flask(work / f"{stem}{k}", n=4)
        exp = data.draw(flask_case(folder, labels), label=f"folder {k}")
        exp = exp if stem in STEMS[:2] else Expected(f"{exp.label}, name not UTF-8", "error")
        (work / f"job{k}").mkdir()
        jobs.append({"base": str(base), "work": str(work / f"job{k}"),
                     "argv": ["import-flask", str(folder)]})  # fmt: skip
        expected.append(exp)
    for result, exp in zip(run_child(jobs), expected, strict=True):
        check_outcome(result, exp, "flask")


def _review_score(value: str, labels: dict[str, str]):
    """A FLASK folder whose first alpaca review scores readability with ``value`` (raw JSON)."""

    def build(tmp: Path) -> tuple[list[str], Expected]:
        folder = build_flask(tmp / "src", n=4)
        review = folder / "gpt_review/outputs/alpaca_review.jsonl"
        lines = review.read_text().splitlines()
        row = json.loads(lines[0])
        row["score"] = {"readability": "@"}
        lines[0] = json.dumps(row).replace('"@"', value)
        review.write_text("\n".join(lines) + "\n")
        want = _flask_scores(folder, labels)
        assert want.pop((str(row["question_id"]), "alpaca", JUDGE, labels["readability"]))
        return ["import-flask", str(folder)], Expected(f"score {value}", "clean", want)

    return build


def _flask_scores(folder: Path, labels: dict[str, str]) -> dict:
    """Every review score of the folder as written: build_flask writes ints 1-5."""
    out = {}
    for path in (folder / "gpt_review/outputs").glob("*_review.jsonl"):
        model = path.name.removesuffix("_review.jsonl")
        for line in path.read_text().splitlines():
            row = json.loads(line)
            for k, v in row["score"].items():
                out[(str(row["question_id"]), model, JUDGE, labels[k])] = float(v)
    return out


def _model_file_not_utf8(tmp: Path) -> tuple[list[str], Expected]:
    folder = build_flask(tmp / "src", n=4)
    name = os.fsencode(folder / "model_output/outputs") + b"/\xff\xfe.jsonl"
    Path(os.fsdecode(name)).write_text('{"question_id": 1, "text": "odd"}\n')
    return ["import-flask", str(folder)], Expected("model file name not UTF-8", "error")


def _parquet_text_not_utf8(tmp: Path) -> tuple[list[str], Expected]:
    import pyarrow as pa
    import pyarrow.parquet as pq

    model = pa.array([b"\xff\xfe", b"ok"], type=pa.binary()).view(pa.string())
    path = tmp / "bad.parquet"
    pq.write_table(
        pa.table({"instance_id": ["1", "2"], "model": model, "judge": ["j", "j"],
                  "skill": ["readability"] * 2, "score": [3, 4]}),
        path,
    )  # fmt: skip
    return ["import-scores", str(path)], Expected("Parquet text not UTF-8", "error")


def _parquet_column_twice(tmp: Path) -> tuple[list[str], Expected]:
    import pyarrow as pa
    import pyarrow.parquet as pq

    names = ["instance_id", "model", "judge", "skill", "score", "instance_id"]
    cells = [["1"], ["m"], ["j"], ["readability"], [3], ["2"]]
    path = tmp / "twice.parquet"
    pq.write_table(pa.Table.from_arrays([pa.array(c) for c in cells], names=names), path)
    return ["import-scores", str(path)], Expected("Parquet column twice", "error")


def _jsonl_id(raw: str):
    """A JSONL score file whose instance id is the raw JSON number ``raw``."""

    def build(tmp: Path) -> tuple[list[str], Expected]:
        path = tmp / "ids.jsonl"
        path.write_text(
            f'{{"instance_id": {raw}, "model": "m", "judge": "j", "skill": "readability", '
            '"score": 3}\n'
        )
        return ["import-scores", str(path)], Expected(f"id {raw[:20]}", "error")

    return build


def _csv_name_not_utf8(tmp: Path) -> tuple[list[str], Expected]:
    path = Path(os.fsdecode(os.fsencode(tmp) + b"/sc\xff.csv"))
    path.write_text("instance_id,model,judge,skill,score\n1,m,j,readability,3\n")
    return ["import-scores", str(path)], Expected("CSV name not UTF-8", "error")


def _folder_name_not_utf8(tmp: Path) -> tuple[list[str], Expected]:
    folder = build_flask(Path(os.fsdecode(os.fsencode(tmp) + b"/src\xff")), n=4)
    return ["import-flask", str(folder)], Expected("folder name not UTF-8", "error")


# Inputs that failed before their fix: a wrong stored value or a traceback.
REGRESSIONS = {
    # float("0_3") is 3.0: the digit separator was stored as a score of 3
    "flask review score '0_3'": lambda labels: _review_score('"0_3"', labels),
    # float("\u0663") is 3.0: an Arabic-Indic digit was stored as a score of 3
    "flask review score arabic-indic 3": lambda labels: _review_score('"\\u0663"', labels),
    # the model's name (from the file name) could not be stored: UnicodeEncodeError traceback
    "flask model file name not utf-8": lambda labels: _model_file_not_utf8,
    # pyarrow's to_pandas raised ArrowException ("Wrapping ... failed"): a traceback
    "parquet string column not utf-8": lambda labels: _parquet_text_not_utf8,
    # pyarrow's error listed the whole schema, a line per field: not one paragraph
    "parquet column twice": lambda labels: _parquet_column_twice,
    # the name (the run's source, the default dataset) could not be stored: a traceback
    "score file name not utf-8": lambda labels: _csv_name_not_utf8,
    "flask folder name not utf-8": lambda labels: _folder_name_not_utf8,
    # json.loads raised ValueError (Python reads at most 4,300 digits): a traceback
    "jsonl id of 5000 digits": lambda labels: _jsonl_id("1" + "0" * 5000),
    # the id was expanded to a billion digits: the import ran for minutes, then out of memory
    "jsonl id 1e999999999": lambda labels: _jsonl_id("1e999999999"),
}


@pytest.fixture(scope="module")
def regression_outcomes(bases, tmp_path_factory) -> dict[str, tuple[dict, Expected]]:
    """Every regression input run by one child (each in its own store copy): name → outcome."""
    base = bases["empty"]
    labels = {label.lower(): skill for skill, label in _skills(base)}
    jobs, expected = [], []
    for k, name in enumerate(sorted(REGRESSIONS)):
        tmp = tmp_path_factory.mktemp(f"regression{k}")
        argv, exp = REGRESSIONS[name](labels)(tmp)
        (tmp / "job").mkdir()
        jobs.append({"base": str(base), "work": str(tmp / "job"), "argv": argv})
        expected.append(exp)
    results = run_child(jobs)
    return dict(zip(sorted(REGRESSIONS), zip(results, expected, strict=True), strict=True))


@pytest.mark.parametrize("name", sorted(REGRESSIONS))
def test_inputs_that_once_failed(name, regression_outcomes):
    result, expected = regression_outcomes[name]
    check_outcome(result, expected, "flask")
