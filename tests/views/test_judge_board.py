"""The judge leaderboard (views/judge_board.py): every judge's numbers are those of the single
call ``agreement(store, AgreementQuery(f, judge, "kind:human", level), sections=("stats",))``,
bit for bit, at every level and under filters; the ceiling row is the ceiling section's; an
independent check with scipy on a hand-built store with ties; empty states."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import stats as sps

from analysis.core.filters import Filters
from analysis.core.store import Store
from analysis.ingest.score_files import import_scores
from analysis.views import judge_board_report as report
from analysis.views.agreement import SCOPE_ALL, AgreementQuery, agreement
from analysis.views.judge_board import (
    CEILING,
    EACH,
    NO_ALIGNED,
    NO_HUMANS,
    NO_LLM_JUDGE,
    BoardQuery,
    judge_board,
)
from analysis.views.scorers import scorer_choices

DATASET = "tiny"
SKILLS = ["correctness", "factuality", "readability", "conciseness"]
HOSTILE = "<b>judge-c</b> & 100%"  # a judge's name is untrusted text
JUDGES = ("judge-a", "judge-b", HOSTILE, "offside")  # offside scores no item humans scored
HUMANS = ("ann", "bob", "cid")
MODELS = ("m1", "m2", "m3", "m4")


def board_rows(seed: int = 3, humans: tuple[str, ...] = HUMANS, judges=JUDGES) -> pd.DataFrame:
    """Integer 1–5 scores with many ties: 10 instances × 4 models × 3 of 4 skills; humans on
    q01–q07 (cid on q01–q05 only), judges on everything but offside (q08–q10 only), some
    N/A on every side."""
    rng = np.random.default_rng(seed)
    rows = []
    for i in range(1, 11):
        skills = [SKILLS[(i + k) % 4] for k in range(3)]
        for m in MODELS:
            for s in skills:
                truth = int(rng.integers(1, 6))
                for who, kind, noise in [*((h, "human", 1) for h in humans),
                                         *((j, "llm", 2) for j in judges)]:  # fmt: skip
                    if kind == "human" and (i > 7 or (who == "cid" and i > 5)):
                        continue
                    if who == "offside" and i <= 7:
                        continue
                    score = int(np.clip(truth + rng.integers(-1, noise), 1, 5))
                    na = rng.random() < 0.05
                    rows.append((f"q{i:02d}", m, who, kind, s, "" if na else score))
    return pd.DataFrame(rows, columns=["instance_id", "model", "judge", "kind", "skill", "score"])


def build_store(folder: Path, rows: pd.DataFrame | None = None) -> Store:
    """A store written through the real importer (CSV → import_scores)."""
    path = folder / "scores.csv"
    (board_rows() if rows is None else rows).to_csv(path, index=False)
    store = Store(folder / "board.duckdb")
    import_scores(store, path, dataset=DATASET)
    return store


@pytest.fixture(scope="module")
def store(tmp_path_factory) -> Store:
    return build_store(tmp_path_factory.mktemp("board"))


def _single(store: Store, f: Filters, judge: str, level: str, skill=None) -> pd.DataFrame:
    q = AgreementQuery(f, judge, "kind:human", level, skill)
    return agreement(store, q, sections=("stats",)).stats


def _same(mine: pd.DataFrame, theirs: pd.DataFrame) -> None:
    mine, theirs = mine.reset_index(drop=True), theirs.reset_index(drop=True)
    assert list(mine.columns) == list(theirs.columns)
    pd.testing.assert_frame_equal(mine, theirs, check_exact=True, check_dtype=False)
    for col in ("value", "ci_low", "ci_high"):  # bit for bit, NaN where NaN
        a, b = mine[col].to_numpy(float), theirs[col].to_numpy(float)
        assert [x.hex() for x in a] == [x.hex() for x in b]


@pytest.mark.parametrize("level", ["pooled", "instance", "system"])
def test_every_judge_equals_its_single_call(store, level):
    f = Filters(DATASET)
    board = judge_board(store, BoardQuery(f, level))
    assert set(board.judges) == set(JUDGES)
    assert board.humans == HUMANS and board.empty is None
    for judge in board.judges:
        theirs = _single(store, f, judge, level)
        mine = board.stats[board.stats["judge"] == judge].drop(columns="judge")
        if judge == "offside":  # no item aligned with the humans: no row, zero coverage
            assert theirs.empty and mine.empty
            continue
        assert not theirs.empty
        _same(mine, theirs)
    cov = board.coverage.set_index("judge")
    assert cov.loc["offside", "aligned"] == 0 and cov.loc["judge-a", "aligned"] > 0


def test_ceiling_rows_equal_the_ceiling_section(store):
    f = Filters(DATASET)
    board = judge_board(store, BoardQuery(f))
    assert board.ceiling_judge in JUDGES and board.ceiling_judge != "offside"
    cov = board.coverage.set_index("judge")["aligned"]
    assert cov[board.ceiling_judge] == cov.max()
    r = agreement(store, AgreementQuery(f, board.ceiling_judge, "kind:human"), ("ceiling",))
    c = r.ceiling[r.ceiling["figure"] == "human_ceiling"].drop(columns="figure")
    _same(board.ceiling, c[list(board.ceiling.columns)])
    rows = report.long_frame(board)
    ceiling = rows[rows["row"] == report.CEILING_ROW]
    assert len(ceiling) == len(c) and ceiling["judge"].isna().all()
    # A gap to the ceiling only where the judge's aligned items are the ceiling judge's (the
    # item sets from pandas alone): elsewhere it would compare different items.
    items = {j: set(map(tuple, _independent(store, j, None)[["instance_id", "model", "skill"]]
                        .to_numpy().tolist())) for j in board.judges}  # fmt: skip
    judged = rows[(rows["row"] == report.JUDGE_ROW) & (rows["statistic"] == "mae")]
    for judge, part in judged.groupby("judge"):
        same = items[judge] == items[board.ceiling_judge]
        assert part["gap_to_ceiling"].notna().all() == same, judge
    assert any(items[j] != items[board.ceiling_judge] for j in judged["judge"].unique())


def _independent(store: Store, judge: str, skill: str | None) -> pd.DataFrame:
    """A judge's score and the humans' mean per item, from the store with pandas alone."""
    with store.read() as con:
        rows = con.execute(
            "SELECT s.instance_id, s.model, s.skill, s.judge, s.score, j.kind "
            "FROM latest_scores s JOIN judges j USING (judge) WHERE s.dataset = ?",
            [DATASET],
        ).df()
    rows = rows[rows["score"].notna()]
    key = ["instance_id", "model", "skill"]
    human = rows[rows["kind"] == "human"].groupby(key)["score"].mean().rename("h")
    mine = rows[rows["judge"] == judge].set_index(key)["score"].rename("j")
    both = pd.concat([mine, human], axis=1, join="inner").reset_index()
    return both if skill is None else both[both["skill"] == skill]


@pytest.mark.parametrize("skill", ["factuality", None])
def test_spearman_kendall_mae_against_scipy(store, skill):
    board = judge_board(store, BoardQuery(Filters(DATASET)))
    both = _independent(store, "judge-b", skill)
    assert both["j"].duplicated().any() and both["h"].duplicated().any()  # ties on both sides
    part = board.stats[board.stats["judge"] == "judge-b"]
    part = part[part["scope"] == SCOPE_ALL] if skill is None else part[part["skill"] == skill]
    got = part.set_index("statistic")
    assert got.loc["spearman", "value"] == pytest.approx(
        sps.spearmanr(both["j"], both["h"]).statistic, abs=1e-12
    )
    tau = sps.kendalltau(both["j"], both["h"], variant="b").statistic
    assert got.loc["kendall", "value"] == pytest.approx(tau, abs=1e-12)
    assert got.loc["mae", "value"] == pytest.approx((both["j"] - both["h"]).abs().mean())
    assert got.loc["spearman", "n"] == len(both)
    assert got.loc["spearman", "n_instances"] == both["instance_id"].nunique()
    lo, hi = got.loc["spearman", ["ci_low", "ci_high"]]
    assert lo <= got.loc["spearman", "value"] <= hi


@pytest.mark.parametrize("level", ["pooled", "instance"])
def test_filters_and_skill_apply_as_in_the_single_call(store, level):
    f = Filters(DATASET, models=("m1", "m3", "m4"))
    board = judge_board(store, BoardQuery(f, level, skill="readability"))
    assert set(board.stats["skill"]) == {"readability"}  # one criterion: no pooled row
    full = judge_board(store, BoardQuery(Filters(DATASET), level))
    for judge in ("judge-a", HOSTILE):
        mine = board.stats[board.stats["judge"] == judge].drop(columns="judge")
        _same(mine, _single(store, f, judge, level, "readability"))
        whole = full.stats[(full.stats["judge"] == judge) & (full.stats["skill"] == "readability")]
        assert mine["n"].max() < whole["n"].max()


def test_no_aligned_items_in_the_slice(store):
    board = judge_board(store, BoardQuery(Filters(DATASET, models=("nobody",))))
    assert board.empty is not None and board.empty.cause == NO_ALIGNED
    assert board.stats.empty and (board.coverage["aligned"] == 0).all()
    assert report.to_dict(board)["rows"] == []


def test_no_humans_and_no_llm_judge(tmp_path):
    rows = board_rows()
    (tmp_path / "a").mkdir()
    no_humans = build_store(tmp_path / "a", rows[rows["kind"] == "llm"])
    board = judge_board(no_humans, BoardQuery(Filters(DATASET)))
    assert board.empty.cause == NO_HUMANS and board.stats.empty
    (tmp_path / "b").mkdir()
    no_llm = build_store(tmp_path / "b", rows[rows["kind"] == "human"])
    board = judge_board(no_llm, BoardQuery(Filters(DATASET)))
    assert board.empty.cause == NO_LLM_JUDGE and board.judges == ()


def test_one_human_has_no_ceiling(tmp_path):
    rows = board_rows()
    store = build_store(tmp_path, rows[rows["judge"].isin(["ann", "judge-a"])])
    board = judge_board(store, BoardQuery(Filters(DATASET)))
    assert board.empty is None and board.ceiling.empty and not board.stats.empty
    assert any("no human ceiling" in n for n in report.notes(board))


def test_report_rows_and_gap(store):
    board = judge_board(store, BoardQuery(Filters(DATASET), "instance"))
    d = report.to_dict(board)
    assert d["a"] == EACH and d["b"] == "kind:human"
    judge_rows = [r for r in d["rows"] if r["row"] == report.JUDGE_ROW]
    assert len(judge_rows) == len(board.stats)
    c = board.ceiling.set_index(["skill", "statistic"])
    like = set(board.coverage.loc[board.coverage["ceiling_items"], "judge"])
    for r in judge_rows:
        if r["scope"] == SCOPE_ALL:
            assert r["skill"] is None
        if r["level"] == "instance" or r["judge"] not in like:
            # a correlation within instances, or other items: no gap to the ceiling's figure
            assert r["gap_to_ceiling"] is None
        elif r["scope"] != SCOPE_ALL and r["value"] is not None:
            want = r["value"] - c.loc[(r["skill"], r["statistic"]), "value"]
            assert r["gap_to_ceiling"] == pytest.approx(want)
    text = report.text_table(board)
    assert CEILING in text and HOSTILE in text


def test_each_is_not_a_pickable_scorer(store):
    choices = scorer_choices(store, DATASET)
    assert EACH not in choices.options and EACH not in choices.labels


def test_csv_holds_every_row_at_full_precision_with_formulas_neutralised(tmp_path):
    import io

    rows = board_rows().replace({"judge": {"judge-b": '=HYPERLINK("x")'}})
    store = build_store(tmp_path, rows)
    board = judge_board(store, BoardQuery(Filters(DATASET)))
    back = pd.read_csv(io.BytesIO(report.board_csv(board)), encoding="utf-8-sig")
    frame = report.long_frame(board)
    assert len(back) == len(frame)
    np.testing.assert_array_equal(back["Value"].to_numpy(float), frame["value"].to_numpy(float))
    assert '\'=HYPERLINK("x")' in set(back["Judge"]) and CEILING in set(back["Judge"])
    table = report.board_table(board, "kendall")
    assert table["Value"].dtype == float  # numbers stay numbers: the column sorts by value
    assert set(table["Judge"]) >= {'=HYPERLINK("x")', CEILING}


def test_demo_panel_every_judge_equals_its_single_call(demo_db):
    store, f = Store(demo_db), Filters("demo")
    board = judge_board(store, BoardQuery(f, "system"))
    from analysis.ingest.demo_panel import JUDGE, JUDGES

    assert set(board.judges) == {JUDGE, *(j.name for j in JUDGES)}
    assert len(board.humans) == 3 and not board.ceiling.empty
    for judge in board.judges:
        mine = board.stats[board.stats["judge"] == judge].drop(columns="judge")
        _same(mine, _single(store, f, judge, "system"))


@pytest.mark.parametrize("stat", ["spearman", "mae"])
def test_ranked_best_first_over_all_criteria(store, stat):
    board = judge_board(store, BoardQuery(Filters(DATASET)))
    pooled = board.stats[(board.stats["scope"] == SCOPE_ALL) & (board.stats["statistic"] == stat)]
    want = list(pooled.sort_values("value", ascending=stat == "mae")["judge"])
    assert report.ranked(board, stat) == want and "offside" not in want
    table = report.board_table(board, stat)
    assert list(dict.fromkeys(table["Judge"])) == [*want, CEILING]
