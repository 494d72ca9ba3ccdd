"""``finegrain agreement --a kind:llm:each --b kind:human``: one answer whose numbers are the
per-judge single calls', value for value, as JSON and as text; every other use of
kind:llm:each is a one-paragraph error with exit status 2."""

from __future__ import annotations

import json

import pytest

from analysis.cli.main import main
from analysis.core.filters import Filters
from analysis.views import agreement_report
from analysis.views.agreement import SCOPE_ALL, AgreementQuery, agreement
from analysis.views.judge_board import CEILING
from tests.views.test_judge_board import DATASET, HOSTILE, JUDGES, build_store

FIELDS = ("value", "ci_low", "ci_high", "n", "n_instances", "n_skipped", "few_instances")


@pytest.fixture(scope="module")
def db(tmp_path_factory):
    return build_store(tmp_path_factory.mktemp("each")).path


def _run(db, capsys, *args: str) -> tuple[int, str, str]:
    code = main(["agreement", "--db", str(db), "--dataset", DATASET, *args])
    out = capsys.readouterr()
    return code, out.out, out.err


def _rows(d: dict) -> dict:
    """JSON rows by (judge, criterion or None, statistic)."""
    return {(r["judge"], r["skill"], r["statistic"]): r for r in d["rows"] if r["row"] == "judge"}


@pytest.mark.parametrize("level", ["pooled", "system"])
def test_json_equals_the_single_calls(db, capsys, level):
    code, out, _ = _run(db, capsys, "--a", "kind:llm:each", "--b", "kind:human", "--level",
                        level, "--json")  # fmt: skip
    assert code == 0
    d = json.loads(out)
    assert d["a"] == "kind:llm:each" and d["level"] == level and set(d["judges"]) == set(JUDGES)
    rows = _rows(d)
    seen = 0
    for judge in JUDGES:
        q = AgreementQuery(Filters(DATASET), judge, "kind:human", level)
        single = agreement_report.to_dict(agreement(_store(db), q, sections=("stats",)))
        per = {**single["statistics"], None: single["all_criteria"] or {}}
        for skill, stats in per.items():
            for stat, fields in stats.items():
                row = rows[(judge, skill, stat)]
                assert {k: row[k] for k in FIELDS} == {k: fields[k] for k in FIELDS}
                assert row["level"] == fields["level"]
                seen += 1
    assert seen == len(rows) and seen > 0  # nothing more, nothing less
    assert d["coverage"]["offside"] == {"aligned": 0, "instances": 0, "ceiling_items": False}
    ceiling = [r for r in d["rows"] if r["row"] == "human_ceiling"]
    q = AgreementQuery(Filters(DATASET), d["ceiling_judge"], "kind:human")
    figs = agreement_report.to_dict(agreement(_store(db), q, sections=("ceiling",)))
    want = figs["human_ceiling"]
    for r in ceiling:
        node = want["all_criteria"] if r["scope"] == SCOPE_ALL else want["statistics"][r["skill"]]
        fields = node["human_ceiling"][r["statistic"]]
        assert {k: r[k] for k in ("value", "ci_low", "ci_high", "n")} == {
            k: fields[k] for k in ("value", "ci_low", "ci_high", "n")
        }
    assert len(ceiling) == sum(len(v["human_ceiling"]) for v in want["statistics"].values()) + (
        len(want["all_criteria"]["human_ceiling"]) if want["all_criteria"] else 0
    )


def _store(db):
    from analysis.core.store import Store

    return Store(db)


def test_text_table_has_every_judge_and_the_ceiling(db, capsys):
    code, out, _ = _run(db, capsys, "--a", "kind:llm:each", "--b", "kind:human", "--skill",
                        "factuality")  # fmt: skip
    assert code == 0
    assert "Every LLM judge vs kind:human" in out
    for judge in ("judge-a", "judge-b", HOSTILE):
        assert judge in out
    assert CEILING in out and "Spearman ρ" in out and "Factuality" in out
    assert "No item aligned with the humans for: offside" in out


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (["--a", "kind:human", "--b", "kind:llm:each"], "cannot be the reference B"),
        (["--a", "kind:llm:each", "--b", "kind:human", "--by", "model"], "--by is not available"),
        (["--raters", "kind:llm:each"], "not among raters"),
        (["--a", "kind:llm:each", "--b", "kind:human", "--raters", "ann,bob"], "not among raters"),
        (["--a", "KIND:LLM:EACH", "--b", "judge-a"], "compared with the humans only"),
        (["--a", "kind:llm:each"], "needs --b kind:human"),
    ],
)
def test_other_uses_are_clear_errors(db, capsys, args, words):
    code, out, err = _run(db, capsys, *args)
    assert code == 2 and out == ""
    assert words in err and "--a kind:llm:each --b kind:human" in err
    assert "Traceback" not in err and err.strip().count("\n") <= 1  # one paragraph (+ a note)


def test_help_mentions_each(capsys):
    assert main(["agreement", "--help"]) == 0
    assert "kind:llm:each" in " ".join(capsys.readouterr().out.split())
