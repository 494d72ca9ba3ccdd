"""Samples data layer on a real DuckDB file: search, filters, per-judge ranges and disagreement
checked against plain pandas over the same rows (tests/samples_fixtures.py), paging, detail."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from analysis.core.errors import InputError, NotFoundError
from analysis.core.filters import Filters
from analysis.core.store import Store
from analysis.core.taxonomy import SKILLS
from analysis.views import sample_detail, samples
from analysis.views.samples import SampleQuery, ScoreRange
from tests.samples_fixtures import DATASET, write_mini

KEYS = ["instance_id", "model"]


@pytest.fixture(scope="module")
def mini(tmp_path_factory):
    store = Store(tmp_path_factory.mktemp("samples") / "mini.duckdb")
    return store, write_mini(store)


def expected(
    f: dict, *, text: str = "", fields=samples.SEARCH_FIELDS, models=(), domains=(), levels=(),
    tasks=(), hard=False, skill=None, ranges=(), min_dis=None, compared=(),
) -> list[tuple[str, str]]:  # fmt: skip
    """The same selection written independently in pandas (instance order, then model)."""
    df = f["responses"].merge(f["instances"], on=["dataset", "instance_id"])
    keep = pd.Series(True, index=df.index)
    if models:
        keep &= df["model"].isin(models)
    if domains:
        keep &= df["domains"].apply(lambda d: bool(set(d) & set(domains)))
    if levels:
        keep &= df["difficulty"].isin(levels)
    if tasks:
        keep &= df["source_task"].isin(tasks)
    if hard:
        keep &= df["flask_hard"]
    if text:
        col = {"instruction": "instruction", "reference": "reference", "response": "text"}
        hit = pd.Series(False, index=df.index)
        for field in fields:
            hit |= df[col[field]].str.lower().str.contains(text.lower(), regex=False)
        keep &= hit
    sc = f["scores"] if skill is None else f["scores"][f["scores"]["skill"] == skill]
    for judge, lo, hi in ranges:
        means = sc[sc["judge"] == judge].groupby(KEYS)["score"].mean()
        ok = set(means[(means >= lo) & (means <= hi)].index)
        keep &= np.array([k in ok for k in zip(df["instance_id"], df["model"], strict=True)])
    if min_dis is not None:
        spread = disagreement(sc, compared)
        pairs = zip(df["instance_id"], df["model"], strict=True)
        keep &= np.array([spread.get(k, np.nan) >= min_dis for k in pairs])
    out = df[keep].assign(n=lambda d: d["instance_id"].astype(int))
    return list(out.sort_values(["n", "model"])[KEYS].itertuples(index=False, name=None))


def disagreement(scores: pd.DataFrame, compared=()) -> dict:
    valid = scores.dropna(subset=["score"])
    if compared:
        valid = valid[valid["judge"].isin(compared)]
    out: dict = {}
    for (i, m, _), g in valid.groupby(["instance_id", "model", "skill"]):
        if g["judge"].nunique() >= 2:
            out[(i, m)] = max(out.get((i, m), -1), g["score"].max() - g["score"].min())
    return out


def found(store: Store, **kw) -> list[tuple[str, str]]:
    page = samples.search(store, SampleQuery(Filters(DATASET), page_size=500, **kw))
    assert page.total == len(page.rows)
    return list(page.rows[KEYS].itertuples(index=False, name=None))


def test_no_filter_lists_every_response_in_instance_order(mini):
    store, f = mini
    got = found(store)
    assert len(got) == 24 * 3
    assert got == expected(f)
    assert got[:4] == [("1", "alpha"), ("1", "beta"), ("1", "gamma"), ("2", "alpha")]


@pytest.mark.parametrize(
    "text, fields",
    [
        ("zebra", samples.SEARCH_FIELDS),
        ("HAYSTACK", samples.SEARCH_FIELDS),
        ("haystack", ("instruction", "reference")),  # only in responses: nothing
        ("50% off_sale", samples.SEARCH_FIELDS),
        ("%", samples.SEARCH_FIELDS),  # a literal percent sign, not "anything"
        ("_", ("response",)),
        ("number 1", ("instruction",)),
        ("reference for 2", ("reference",)),
    ],
)
def test_search_is_literal_case_insensitive_and_per_field(mini, text, fields):
    store, f = mini
    got = found(store, text=text, fields=fields)
    assert got == expected(f, text=text, fields=fields)
    if text == "%":
        assert 0 < len(got) < 24 * 3  # 50% in a few references + one response
    if text == "haystack":
        assert got == []


def test_sidebar_filters_apply_to_responses(mini):
    store, f = mini
    filt = Filters(DATASET, judge="judge-a", models=("alpha", "gamma"), domains=("math",),
                   difficulties=(1, 2, 3), source_tasks=("gsm8k", "mbpp"))  # fmt: skip
    page = samples.search(store, SampleQuery(filt, page_size=500))
    got = list(page.rows[KEYS].itertuples(index=False, name=None))
    want = expected(f, models=("alpha", "gamma"), domains=("math",), levels=(1, 2, 3),
                    tasks=("gsm8k", "mbpp"))  # fmt: skip
    assert got == want and len(want) > 0
    page = samples.search(store, SampleQuery(Filters(DATASET, flask_hard_only=True)))
    assert set(page.rows["instance_id"]) == {"6", "12", "18", "24"}


@pytest.mark.parametrize("skill", [None, "correctness"])
def test_score_ranges_per_judge(mini, skill):
    store, f = mini
    ranges = (ScoreRange("judge-a", 3, 5), ScoreRange("judge-b", 1, 3.5))
    got = found(store, ranges=ranges, skill=skill)
    want = expected(f, ranges=[("judge-a", 3, 5), ("judge-b", 1, 3.5)], skill=skill)
    assert got == want and len(want) > 0


@pytest.mark.parametrize("threshold, compared", [(2, ()), (4, ()), (1, ("judge-a", "human-x"))])
def test_disagreement_threshold(mini, threshold, compared):
    store, f = mini
    got = found(store, min_disagreement=threshold, compared=compared)
    assert got == expected(f, min_dis=threshold, compared=compared)
    assert 0 < len(got) < 72


def test_table_has_every_judges_mean_and_the_disagreement(mini):
    store, f = mini
    for q in (SampleQuery(Filters(DATASET), page_size=500),
              SampleQuery(Filters(DATASET), page_size=500, sort="disagreement")):  # fmt: skip
        rows = samples.search(store, q).rows.set_index(KEYS)
        means = f["scores"].groupby([*KEYS, "judge"])["score"].mean().unstack("judge")
        for judge in ("judge-a", "judge-b", "human-x"):
            col = rows[samples.judge_column(judge)]
            want = means[judge].reindex(col.index)
            assert np.allclose(col.to_numpy(float), want.to_numpy(float), equal_nan=True)
        spread = disagreement(f["scores"])
        want = [spread.get(k, np.nan) for k in rows.index]
        assert np.allclose(rows["disagreement"].to_numpy(float), want, equal_nan=True)


def test_sort_by_disagreement_and_length(mini):
    store, f = mini
    rows = samples.search(store, SampleQuery(Filters(DATASET), page_size=500,
                                             sort="disagreement")).rows  # fmt: skip
    d = rows["disagreement"].to_numpy(float)
    scored = d[~np.isnan(d)]
    assert list(scored) == sorted(scored, reverse=True) and np.isnan(d[len(scored) :]).all()
    rows = samples.search(store, SampleQuery(Filters(DATASET), page_size=500, sort="longest")).rows
    lengths = f["responses"].set_index(KEYS)["text"].str.len()
    assert rows["length"].tolist() == sorted(lengths, reverse=True)


def test_pages_cover_the_result_once_with_the_total(mini):
    store, f = mini
    want = expected(f, text="response")
    seen, page_no = [], 0
    while True:
        page = samples.search(store, SampleQuery(Filters(DATASET), text="response", page_size=10,
                                                 page=page_no))  # fmt: skip
        assert page.total == len(want) and page.pages == -(-len(want) // 10)
        if page.rows.empty:
            break
        seen += list(page.rows[KEYS].itertuples(index=False, name=None))
        page_no += 1
    assert seen == want and page_no == page.pages
    # Shown text: the first 200 characters, the instance's fields alongside.
    first = samples.search(store, SampleQuery(Filters(DATASET), page_size=1)).rows.iloc[0]
    assert first["response"] == "Response of alpha to 1."
    assert first["instruction"] == "Instruction number 1: explain the topic."
    assert first["difficulty"] == 2 and first["source_task"] == "mbpp"


def test_bad_queries_say_what_is_wrong(mini):
    store, _ = mini
    with pytest.raises(InputError, match="search in one or more"):
        samples.search(store, SampleQuery(Filters(DATASET), text="x", fields=()))
    with pytest.raises(InputError, match="sort by"):
        samples.search(store, SampleQuery(Filters(DATASET), sort="random"))
    with pytest.raises(InputError, match="low 4 is above high 2"):
        samples.search(store, SampleQuery(Filters(DATASET), ranges=(ScoreRange("judge-a", 4, 2),)))


def test_detail_has_texts_and_each_judges_scores_and_rationale(mini):
    store, f = mini
    d = sample_detail.detail(store, DATASET, "3", "beta")
    assert d.instruction == "Instruction number 3: explain the topic."
    assert d.reference == "Reference for 3."
    assert d.response == "Response of beta to 3. 100% sure_thing."
    assert d.skills == ("robustness", "correctness", "efficiency")
    views = {v.judge: v for v in d.judges}
    assert set(views) == {"judge-a", "judge-b", "human-x"}
    assert [v.kind for v in d.judges] == ["llm", "llm", "human"]  # LLM judges first
    sc = f["scores"]
    for judge, view in views.items():
        rows = sc[(sc["instance_id"] == "3") & (sc["model"] == "beta") & (sc["judge"] == judge)]
        want = {s: (None if np.isnan(v) else v) for s, v in zip(rows["skill"], rows["score"],
                                                                  strict=True)}  # fmt: skip
        assert view.scores == want
        assert list(view.scores) == list(d.skills)  # the instance's order
        assert view.rationale == f"Rationale of {judge} for 3"
        assert view.raw_output == f"raw {judge} on 3/beta"
    a = views["judge-a"].scores
    assert sample_detail.score_lines(views["judge-a"]).splitlines() == [
        f"{SKILLS[s].label}: {'N/A' if v is None else int(v)}" for s, v in a.items()
    ]
    with pytest.raises(NotFoundError, match="instance '999'"):
        sample_detail.detail(store, DATASET, "999", "beta")
    assert sample_detail.detail_link(DATASET, "3", "beta") == {
        "dataset": DATASET, "instance": "3", "model": "beta"}  # fmt: skip


def test_judge_columns_are_looked_up_or_taken_from_the_caller(mini):
    store, _ = mini
    page = samples.search(store, SampleQuery(Filters(DATASET), page_size=5))
    assert page.judges == ("judge-a", "judge-b", "human-x")  # LLM judges first, as the sidebar
    assert list(page.rows.columns) == [
        *samples.PAGE_COLUMNS, *(samples.judge_column(j) for j in page.judges)]  # fmt: skip
    given = samples.search(store, SampleQuery(Filters(DATASET), page_size=5, judges=("human-x",)))
    assert given.judges == ("human-x",)
    assert list(given.rows.columns)[-1] == samples.judge_column("human-x")
    assert samples.judge_column("judge-a") not in given.rows.columns


def test_ranges_and_disagreement_combine_with_the_sidebar_and_a_search(mini):
    store, f = mini
    filt = Filters(DATASET, models=("beta", "gamma"), difficulties=(1, 2, 4, 5))
    q = SampleQuery(filt, text="response", ranges=(ScoreRange("judge-b", 2, 5),),
                    min_disagreement=1, compared=("judge-a", "judge-b"), page_size=500)  # fmt: skip
    page = samples.search(store, q)
    got = list(page.rows[KEYS].itertuples(index=False, name=None))
    want = expected(
        f, text="response", models=("beta", "gamma"), levels=(1, 2, 4, 5),
        ranges=[("judge-b", 2, 5)], min_dis=1, compared=("judge-a", "judge-b"),
    )  # fmt: skip
    assert got == want and 0 < len(want) < 48
