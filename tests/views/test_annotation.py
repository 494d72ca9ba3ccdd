"""Human annotation on a real store: each answer lands as a human judge's scores, a re-save
replaces the current answer and keeps history, two annotators are both kept, bad answers change
nothing, the queue resumes at the first unanswered item, and other pages see the labels."""

from __future__ import annotations

import pytest

from analysis.core.errors import InputError, NotFoundError
from analysis.core.filters import Filters
from analysis.core.store import Store
from analysis.views import annotate as annotation
from analysis.views import overview, queues
from analysis.views.annotate import Answer
from tests.samples_fixtures import DATASET, write_mini

SKILLS_3 = ("robustness", "correctness", "efficiency")  # instance 3 (i % 3 == 0)


@pytest.fixture
def store(tmp_path):
    s = Store(tmp_path / "a.duckdb")
    write_mini(s)
    return s


def rows(store, sql, params=()):
    with store.read() as con:
        return con.execute(sql, list(params)).fetchall()


def counts(store):
    return {t: rows(store, f"SELECT count(*) FROM {t}")[0][0]
            for t in ("judges", "runs", "judgments", "scores")}  # fmt: skip


def answer(name="alice", scores=(4, None, 2), comment="", instance="3", model="beta"):
    return Answer(name, DATASET, instance, model, dict(zip(SKILLS_3, scores, strict=True)),
                  comment)  # fmt: skip


def test_rubric_is_the_instances_skills_in_order(store):
    r = annotation.rubric(store, DATASET, "3")
    assert [s.skill for s in r] == list(SKILLS_3)
    assert r[0].label == "Logical Robustness" and len(r[0].rubric) == 5
    assert r[0].choices == (1, 2, 3, 4, 5)


def test_answer_is_saved_as_the_humans_scores(store):
    jid = annotation.save_answer(store, answer(comment="clear but slow"))
    assert rows(store, "SELECT kind, backend FROM judges WHERE judge = 'alice'") == [
        ("human", "annotation")
    ]
    run = annotation.run_id("alice", DATASET)
    got = rows(store, "SELECT judge, dataset, status, n_items FROM runs WHERE run_id = ?", [run])
    assert got == [("alice", DATASET, "complete", 1)]
    j = rows(store, "SELECT instance_id, model, judge, rationale, parse_status FROM judgments "
             "WHERE judgment_id = ?", [jid])  # fmt: skip
    assert j == [("3", "beta", "alice", "clear but slow", "ok")]
    got = rows(store, "SELECT skill, score, judgment_id FROM latest_scores WHERE judge = 'alice' "
               "ORDER BY skill")  # fmt: skip
    assert got == sorted([("robustness", 4.0, jid), ("correctness", None, jid),
                          ("efficiency", 2.0, jid)])  # fmt: skip  # N/A is NULL


def test_resave_replaces_the_answer_and_keeps_history(store):
    first = annotation.save_answer(store, answer(scores=(4, None, 2), comment="v1"))
    second = annotation.save_answer(store, answer(scores=(1, 5, 3), comment="v2"))
    assert second > first
    current = rows(store, "SELECT skill, score, judgment_id FROM latest_scores "
                   "WHERE judge = 'alice' ORDER BY skill")  # fmt: skip
    assert current == sorted([("robustness", 1.0, second), ("correctness", 5.0, second),
                              ("efficiency", 3.0, second)])  # fmt: skip
    history = rows(store, "SELECT count(*), count(*) FILTER (WHERE superseded) FROM scores "
                   "WHERE judge = 'alice'")  # fmt: skip
    assert history == [(6, 3)]
    assert rows(store, "SELECT rationale FROM judgments WHERE judge = 'alice' "
                "ORDER BY judgment_id") == [("v1",), ("v2",)]  # fmt: skip
    assert rows(store, "SELECT n_items FROM runs WHERE judge = 'alice'") == [(2,)]
    prev = annotation.previous_answer(store, "alice", DATASET, "3", "beta")
    assert prev.scores == {"robustness": 1.0, "correctness": 5.0, "efficiency": 3.0}
    assert prev.comment == "v2"


def test_two_annotators_on_one_item_are_both_kept(store):
    annotation.save_answer(store, answer("alice", (4, 4, 4)))
    annotation.save_answer(store, answer("bob", (2, 2, None)))
    got = rows(store, "SELECT judge, count(*), sum(score) FROM latest_scores "
               "WHERE judge IN ('alice', 'bob') GROUP BY judge ORDER BY judge")  # fmt: skip
    assert got == [("alice", 3, 12.0), ("bob", 3, 4.0)]
    # The LLM judges' scores on the same response are untouched.
    assert rows(store, "SELECT count(*) FROM latest_scores WHERE instance_id = '3' AND "
                "model = 'beta' AND judge = 'judge-a'") == [(3,)]  # fmt: skip


@pytest.mark.parametrize(
    "bad, error, message",
    [
        (answer(name="  "), InputError, "enter your name"),
        (answer(name="x" * 61), InputError, "at most 60 characters"),
        (answer(name="judge-a"), InputError, "name of an LLM judge"),
        (Answer("alice", DATASET, "3", "beta", {"robustness": 4, "correctness": 2}), InputError,
         "no answer for efficiency"),
        (Answer("alice", DATASET, "3", "beta", {**dict.fromkeys(SKILLS_3, 3), "readability": 3}),
         InputError, "readability is not a skill of this instance"),
        (answer(scores=(6, 1, 1)), InputError, "6 is not a score on 1-5"),
        (answer(scores=(True, 1, 1)), InputError, "True is not a score"),
        (answer(instance="999"), NotFoundError, "instance '999'"),
    ],
)  # fmt: skip
def test_bad_answer_changes_nothing(store, bad, error, message):
    before = counts(store)
    with pytest.raises(error, match=message):
        annotation.save_answer(store, bad)
    assert counts(store) == before


def test_progress_resumes_at_the_first_unanswered_item(store):
    items = [("3", "beta"), ("6", "alpha"), ("9", "gamma"), ("12", "alpha")]
    queues.add(store, queues.ANNOTATE, DATASET, items)
    p = annotation.progress(store, "alice", DATASET)
    assert (p.total, p.done, p.next_index) == (4, 0, 0)
    annotation.save_answer(store, answer())
    skills_9 = [s.skill for s in annotation.rubric(store, DATASET, "9")]
    annotation.save_answer(
        store, Answer("alice", DATASET, "9", "gamma", dict.fromkeys(skills_9, 3))
    )
    p = annotation.progress(store, "alice", DATASET)
    assert p.items == tuple(items)
    assert p.answered == (True, False, True, False) and (p.done, p.next_index) == (2, 1)
    # Another annotator starts from the beginning; the LLM judges do not count as answers.
    assert annotation.progress(store, "bob", DATASET).next_index == 0


def test_labels_reach_the_sidebar_and_statistics_with_no_extra_step(store):
    annotation.save_answer(store, answer("alice", (4, None, 2)))
    skills_6 = [s.skill for s in annotation.rubric(store, DATASET, "6")]
    annotation.save_answer(
        store, Answer("alice", DATASET, "6", "alpha", dict.fromkeys(skills_6, 5))
    )
    opts = overview.filter_options(store, DATASET)
    assert "alice" in opts.judges and opts.judge_kinds["alice"] == "human"
    board = overview.leaderboard(store, Filters(DATASET, judge="alice"), n_boot=50)
    overall = board[board["group"] == overview.OVERALL].set_index("model")
    assert overall.loc["beta", "mean"] == pytest.approx((4 + 2) / 2)
    assert overall.loc["beta", "n"] == 2 and overall.loc["beta", "n_na"] == 1
    assert overall.loc["alpha", "mean"] == pytest.approx(5.0)
