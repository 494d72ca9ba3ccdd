"""One declaration, three ways in: a judge file, the judge command's flags and the Re-judge
page's form build the same judge (same fingerprint, same name) from the same settings."""

from __future__ import annotations

import json
import shutil
from dataclasses import fields
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from analysis.cli.judge import judge, judge_config
from analysis.cli.main import main
from analysis.core.store import Store
from analysis.views import queues
from judges import config as declaration
from judges.config import JudgeConfig

REPO = Path(__file__).resolve().parents[2]
RUBRIC = [{"Skill": "Readability", "Criteria": "Is it easy to read?",
           "Scoring": {str(i): f"level {i}" for i in range(1, 6)}}]  # fmt: skip


@pytest.fixture
def demo(demo_db: Path, tmp_path: Path) -> Path:
    path = tmp_path / "demo.duckdb"
    shutil.copy(demo_db, path)
    return path


def _estimate(*args: str, capsys) -> tuple[int, str, str]:
    code = main(["judge", *args, "--estimate-only"])
    out = capsys.readouterr()
    return code, out.out, out.err


def test_a_judge_file_and_the_same_flags_make_the_same_judge(demo, tmp_path, capsys):
    rubric = tmp_path / "rubric.json"
    rubric.write_text(json.dumps(RUBRIC))
    file = tmp_path / "judge.yaml"
    file.write_text(f"backend: openai\nmodel: judge-test\ntemperature: 0.7\nmax_tokens: 300\n"
                    f"use_reference: false\nrubric: {rubric}\nname: sampler\n")  # fmt: skip
    flags = ["--backend", "openai", "--model", "judge-test", "--temperature", "0.7",
             "--max-tokens", "300", "--no-reference", "--rubric", str(rubric),
             "--name", "sampler"]  # fmt: skip
    from_file = judge_config({}, str(file))
    from_flags = judge_config(_parsed(flags), None)
    assert from_file.fingerprint() == from_flags.fingerprint()
    assert from_file.judge == from_flags.judge == "sampler"
    run = ["--db", str(demo), "--dataset", "demo", "--limit", "3"]
    code, out_file, err = _estimate(*run, "--config", str(file), capsys=capsys)
    assert code == 0, err
    code, out_flags, err = _estimate(*run, *flags, capsys=capsys)
    assert code == 0, err
    assert out_file == out_flags and out_file.startswith("Judge sampler on demo:")


def test_flags_win_over_the_file(tmp_path):
    file = tmp_path / "judge.toml"
    file.write_text('backend = "openai"\nmodel = "a"\ntemperature = 0.5\nstructured = true\n')
    config = judge_config(_parsed(["--model", "b", "--no-structured"]), str(file))
    assert (config.model, config.temperature, config.structured) == ("b", 0.5, False)
    assert config.trust_base_url is True  # the operator's own command


def _parsed(args: list[str]) -> dict:
    """The judge settings typed in ``args``, as the judge command sees them."""
    from analysis.cli.judge import _given

    ctx = judge.make_context("judge", [*args, "--dataset", "d"])
    return _given(ctx, ctx.params)


BAD_FILES = [
    ("unknown.yaml", "backend: openai\nmodel: m\ntemprature: 0.3\n",
     "field 'temprature': unknown setting; did you mean 'temperature'? known settings: backend"),
    ("type.yaml", "backend: openai\nmodel: m\nmax_tokens: lots\n",
     "field 'max_tokens': expected a whole number, got 'lots'"),
    ("range.yaml", "backend: openai\nmodel: m\ntemperature: 3\n",
     "field 'temperature': expected a value from 0 to 2, got 3"),
    ("list.yaml", "- backend\n- openai\n", "expected a mapping of settings"),
    ("broken.yaml", "backend: openai\nmodel: [m\n", "not valid YAML"),
    ("broken.json", '{"backend": "openai",}', "line 1: not valid JSON"),
]  # fmt: skip


@pytest.mark.parametrize(("name", "text", "message"), BAD_FILES)
def test_a_bad_judge_file_is_one_paragraph_and_exit_2(tmp_path, capsys, name, text, message):
    file = tmp_path / name
    file.write_text(text)
    db = tmp_path / "untouched.duckdb"
    code, _, err = _estimate("--db", str(db), "--dataset", "demo", "--config", str(file),
                             capsys=capsys)  # fmt: skip
    assert code == 2
    assert err.startswith(f"error: Bad input: {file}") and message in err
    assert "Nothing was written to the store." in err and "Traceback" not in err
    assert not db.exists()


def test_backend_and_model_are_required_somewhere(tmp_path, capsys):
    file = tmp_path / "half.yaml"
    file.write_text("backend: openai\n")
    code, _, err = _estimate("--dataset", "demo", "--config", str(file), capsys=capsys)
    assert code == 2 and "Missing option --model" in err
    code, _, err = _estimate("--dataset", "demo", capsys=capsys)
    assert code == 2 and "Missing option --backend and --model" in err


def test_every_setting_is_an_option_and_a_form_widget(app_db):
    options = {p.name for p in judge.params}
    settings = {f.name for f, _ in declaration.operator_settings()}
    assert settings <= options
    assert {f.name for f in fields(JudgeConfig)} - options == {"trust_base_url"}
    at = _rejudge_page(app_db, {})
    widgets = {w.label: w.key for kind in ("selectbox", "text_input", "number_input", "toggle")
               for w in at.get(kind)}  # fmt: skip
    for f, s in declaration.page_settings():
        assert s.label in widgets, f"{f.name} has no widget on the Re-judge page"
    keys = set(widgets.values())
    assert {
        "rj_backend",
        "rj_model",
        "rj_base_url",
        "rj_temperature",
        "rj_prompt",
        "rj_prompt_file",
        "rj_rubric",
        "rj_ref",
        "rj_name",
        "rj_concurrency",
    } <= keys
    assert not {"rj_api_key_env", "rj_trust_base_url", "rj_api_key"} & keys


def _rejudge_page(db: Path, state: dict) -> AppTest:
    store = Store(db)
    with store.read() as con:
        items = con.execute("SELECT DISTINCT instance_id, model FROM latest_scores "
                            "ORDER BY ALL LIMIT 2").fetchall()  # fmt: skip
    queues.add(store, queues.REJUDGE, "demo", items)
    at = AppTest.from_file(str(REPO / "app.py"), default_timeout=180)
    at.run()
    at.switch_page("pages/rejudge.py")
    for k, v in state.items():
        at.session_state[k] = v
    at.run()
    assert not at.exception, [e.message for e in at.exception]
    assert not at.error, [e.value for e in at.error]
    return at


def test_the_page_form_makes_the_same_judge_as_the_command_line(app_db, tmp_path):
    rubric = app_db.parent / "rubric.json"  # the page takes files in the store's folder only
    rubric.write_text(json.dumps(RUBRIC))
    form = {"rj_backend": "openai", "rj_model": "judge-test", "rj_temperature": 0.4,
            "rj_prompt": "flask-v1", "rj_rubric": "rubric.json", "rj_ref": False,
            "rj_name": "form judge", "rj_base_url": "http://127.0.0.1:9/v1"}  # fmt: skip
    page = _rejudge_page(app_db, form).session_state["rj_config"]
    flags = ["--backend", "openai", "--model", "judge-test", "--temperature", "0.4",
             "--prompt", "flask-v1", "--rubric", str(rubric.resolve()), "--no-reference",
             "--name", "form judge", "--base-url", "http://127.0.0.1:9/v1"]  # fmt: skip
    cli = judge_config(_parsed(flags), None)
    assert page.fingerprint() == cli.fingerprint() and page.judge == cli.judge == "form judge"
    assert page.base_url == cli.base_url
    assert (page.trust_base_url, cli.trust_base_url) == (False, True)  # who typed the URL
