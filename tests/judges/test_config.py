"""JudgeConfig as the one declaration of a judge: fingerprints unchanged, judge files checked
against the declaration, and what a visitor of the app may not choose pinned."""

from __future__ import annotations

import json
from dataclasses import fields

import pytest

from analysis.core.errors import InputError
from judges import config as declaration
from judges.backends import BACKENDS
from judges.config import JudgeConfig, cache_key, check_settings, load_judge_file

MESSAGES = [{"role": "user", "content": "hi"}]


def test_fingerprints_and_cache_keys_are_those_already_stored():
    # Golden values from before the declaration carried metadata: stored caches rely on them.
    plain = JudgeConfig("openai", "gpt-4o-mini")
    assert plain.judge == "gpt-4o-mini (openai, flask-v1)"
    assert plain.params_json() == (
        '{"backend": "openai", "max_tokens": 1024, "model": "gpt-4o-mini", "prompt_version": '
        '"flask-v1", "rubric": "store", "structured": false, "temperature": 0.0, '
        '"use_reference": true}'
    )
    assert cache_key(plain, MESSAGES) == (
        "744fe5e2c0cd8fb1ddd78710e143dcbe3b4f34fd0af0f6cbbfdabcdf42bf3654"
    )
    sampled = JudgeConfig(
        "openai", "gpt-4o-mini", temperature=0.5, rubric="file:/r/skills.json",
        use_reference=False, name="mine",
    )  # fmt: skip
    assert sampled.fingerprint()["name"] == "mine"
    assert cache_key(sampled, MESSAGES) == (
        "8155dfb420649e939cbec9346388de31c41b6e3aa99d0eaedf2b9a4f460bbdb8"
    )


def test_every_field_is_declared_and_backends_agree():
    names = [f.name for f in fields(JudgeConfig)]
    assert [f.name for f, _ in declaration.declared()] == names
    operator = {f.name for f, _ in declaration.operator_settings()}
    assert set(names) - operator == {"trust_base_url"}  # decided by where the judge runs
    page = {f.name for f, _ in declaration.page_settings()}
    assert page <= operator and not page & {"api_key_env", "trust_base_url"}
    assert set(declaration.BACKEND_NAMES) == set(BACKENDS)


@pytest.mark.parametrize(
    ("name", "text"),
    [
        ("j.yaml", "backend: openai\nmodel: m\ntemperature: 0.5\nuse_reference: false\n"
                   "rubric: r.json\nmax_tokens: 512\n"),
        ("j.json", json.dumps({"backend": "openai", "model": "m", "temperature": 0.5,
                               "use_reference": False, "rubric": "r.json", "max_tokens": 512})),
        ("j.toml", 'backend = "openai"\nmodel = "m"\ntemperature = 0.5\nuse_reference = false\n'
                   'rubric = "r.json"\nmax_tokens = 512\n'),
    ],
)  # fmt: skip
def test_yaml_json_and_toml_files_give_the_same_judge(tmp_path, name, text):
    path = tmp_path / name
    path.write_text(text)
    config = JudgeConfig.from_mapping(load_judge_file(path), str(path))
    expected = JudgeConfig("openai", "m", rubric="file:r.json", temperature=0.5,
                           use_reference=False, max_tokens=512)  # fmt: skip
    assert config == expected and config.fingerprint() == expected.fingerprint()


def test_whole_numbers_are_numbers_but_not_booleans():
    assert check_settings({"temperature": 1}, "f") == {"temperature": 1.0}
    with pytest.raises(InputError, match="field 'max_tokens': expected a whole number"):
        check_settings({"max_tokens": True}, "f")
    with pytest.raises(InputError, match="field 'structured': expected true or false"):
        check_settings({"structured": 1}, "f")
    assert check_settings({"base_url": None}, "f") == {"base_url": None}


@pytest.mark.parametrize(
    ("data", "field", "problem"),
    [
        ({"modle": "m"}, "modle", "did you mean 'model'? known settings: backend, model"),
        ({"temperature": "hot"}, "temperature", "expected a number, got 'hot' (a string)"),
        ({"temperature": 2.5}, "temperature", "expected a value from 0 to 2, got 2.5"),
        ({"batch_size": 0}, "batch_size", "expected at least 1, got 0"),
        ({"backend": "vllm"}, "backend", "expected one of openai, openai-batch, transformers"),
        ({"trust_base_url": False}, "trust_base_url", "depends on where the judge runs"),
        (["backend", "openai"], None, "expected a mapping of settings"),
    ],
)
def test_bad_values_name_the_source_and_field(data, field, problem):
    with pytest.raises(InputError) as e:
        check_settings(data, "judge.yaml")
    assert e.value.file == "judge.yaml" and e.value.field == field
    assert problem in e.value.problem


def test_a_judge_needs_a_backend_and_a_model():
    with pytest.raises(InputError, match="field 'model': missing"):
        JudgeConfig.from_mapping({"backend": "openai"}, "judge.yaml")


def test_unreadable_and_invalid_files_name_the_file_and_line(tmp_path):
    with pytest.raises(InputError, match="cannot read the judge file"):
        load_judge_file(tmp_path / "nowhere.yaml")
    bad = tmp_path / "bad.yaml"
    bad.write_text("backend: openai\nmodel: [unclosed\n")
    with pytest.raises(InputError, match="not valid YAML") as e:
        load_judge_file(bad)
    assert e.value.file == str(bad) and e.value.line is not None
    bad_json = tmp_path / "bad.json"
    bad_json.write_text('{\n"backend": }')
    with pytest.raises(InputError, match=r"bad.json, line 2: not valid JSON"):
        load_judge_file(bad_json)


def test_a_visitor_cannot_choose_the_key_or_trust_a_server():
    page = {"backend": "openai", "model": "m", "base_url": "http://elsewhere/v1"}
    config = JudgeConfig.from_mapping(page, "the form", visitor=True)
    assert config.trust_base_url is False and config.api_key_env == "OPENAI_API_KEY"
    assert JudgeConfig.from_mapping(page, "judge.yaml").trust_base_url is True
    with pytest.raises(InputError, match="field 'api_key_env'"):
        JudgeConfig.from_mapping(page | {"api_key_env": "AWS_SECRET"}, "the form", visitor=True)


def test_a_judge_file_cannot_choose_which_secret_is_sent(tmp_path):
    """A shared judge file naming another variable would send that secret to its base_url."""
    path = tmp_path / "judge.yaml"
    path.write_text("backend: openai\nmodel: m\napi_key_env: GITHUB_TOKEN\n")
    with pytest.raises(InputError) as info:
        load_judge_file(path)
    assert info.value.field == "api_key_env" and "flag" in info.value.problem
    # From the command line (the operator) it is allowed, as a variable's name only.
    assert check_settings({"api_key_env": "MY_KEY"}, "flags") == {"api_key_env": "MY_KEY"}
    with pytest.raises(InputError) as info:
        check_settings({"api_key_env": "sk-secret value"}, "flags")
    assert "sk-secret" not in info.value.message  # a pasted key is never echoed


@pytest.mark.parametrize("given, stored", [
    ("", "store"), ("store", "store"), ("r.json", "file:r.json"), ("file:r.json", "file:r.json"),
])  # fmt: skip
def test_rubric_values_as_before(given, stored):
    assert check_settings({"rubric": given}, "flags")["rubric"] == stored
    assert JudgeConfig("openai", "m", rubric=stored).judge == (
        "m (openai, flask-v1)" if stored == "store" else "m (openai, flask-v1, rubric r.json)"
    )
