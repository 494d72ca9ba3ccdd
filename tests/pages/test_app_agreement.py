"""The Human-vs-judge page through AppTest on the simulated demo: the same numbers as the CLI,
the fair human ceiling in its own section, changed widgets, and a slice that leaves nothing."""

from __future__ import annotations

import base64
import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

from analysis.cli.main import main
from analysis.core.store import Store
from analysis.core.taxonomy import SKILLS
from analysis.stats.agreement import LABELS
from tests.app_fixtures import open_page

REPO = Path(__file__).resolve().parents[2]
APP = str(REPO / "app.py")
PAGE = "pages/agreement.py"
JUDGE = "gpt-4 (simulated)"


@pytest.fixture
def db(app_db: Path) -> Path:
    return app_db


def _page(state: dict | None = None) -> AppTest:
    return open_page(PAGE, state)


def _exact(at: AppTest) -> pd.DataFrame:
    return _table(at, {"Scope", "Statistic", "Level", "Value"})


def _table(at: AppTest, columns: set[str]) -> pd.DataFrame:
    for df in at.dataframe:
        if columns <= set(df.value.columns):
            return df.value
    raise AssertionError(
        f"no table with {columns}: {[list(d.value.columns) for d in at.dataframe]}"
    )


def _cli(db: Path, capsys, *extra: str) -> dict:
    args = ["agreement", "--db", str(db), "--dataset", "demo", "--a", JUDGE, "--b", "kind:human"]
    assert main([*args, *extra, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


_SKILL_IDS = {s.label: k for k, s in SKILLS.items()}
_STAT_IDS = {v: k for k, v in LABELS.items()}


def _arr(v) -> np.ndarray:
    """Plotly 7 ships numeric arrays as {'dtype', 'bdata'} (base64) in the figure JSON."""
    if isinstance(v, dict) and "bdata" in v:
        return np.frombuffer(base64.b64decode(v["bdata"]), dtype=v["dtype"])
    return np.asarray(v)


def _charts(at: AppTest) -> list[dict]:
    return [json.loads(el.proto.spec) for el in at.get("plotly_chart")]


def test_page_shows_the_same_numbers_as_the_cli(db, capsys):
    at = _page()
    assert [t.value for t in at.title] == ["Human vs judge"]
    page = _exact(at)
    cli = _cli(db, capsys, "--by", "domain")
    per_criterion = sum(len(v) for v in cli["statistics"].values())
    assert len(page) == per_criterion + len(cli["all_criteria"]) == 13 * 9
    for rec in page.to_dict("records"):
        stat = _STAT_IDS[rec["Statistic"]]
        if rec["Scope"] == "all_criteria":
            got = cli["all_criteria"][stat]
        else:
            got = cli["statistics"][_SKILL_IDS[rec["Skill"]]][stat]
        assert f"{got['value']:.3f}" == rec["Value"]  # the page writes 3 decimals
        assert f"{got['ci_low']:.3f}" == rec["95% CI low"]
        assert got["n"] == rec["n"] and got["level"] == rec["Level"] == "pooled"
    charts = _charts(at)
    assert len(charts) == 3  # agreement bars, heatmap, scatter (the ceiling is in its tab)
    bars = charts[0]["data"]
    assert len(bars) == 1 and bars[0]["type"] == "bar"  # A vs B only: no unfair ceiling beside
    alpha = [cli["statistics"][s]["alpha_ordinal"]["value"] for s in cli["statistics"]]
    alpha.append(cli["all_criteria"]["alpha_ordinal"]["value"])
    assert list(_arr(bars[0]["y"])) == alpha  # identical, not approximately equal
    assert charts[0]["layout"]["xaxis"]["ticktext"][-1].replace("<br>", " ") == (
        "All criteria (pooled)"
    )
    assert charts[1]["data"][0]["type"] == "heatmap"


def test_the_human_ceiling_section_sets_like_beside_like(db, capsys):
    """The ceiling has its own section, chart and table: one human against the mean of the
    other humans, and the judge against that same mean on the same items, as the JSON says."""
    at = _page({"agr_stat": "spearman", "agr_section": "Human ceiling"})
    assert "Human ceiling (leave-one-out)" in [h.value for h in at.subheader]
    words = " ".join(c.value for c in at.caption)
    assert "mean of the **other** humans" in words and "on the same items" in words
    assert "cannot be set beside agreement between single humans" in words
    cli = _cli(db, capsys)["human_ceiling"]
    assert cli["humans"] == ["annotator_1", "annotator_2", "annotator_3"] and cli["judge"] == JUDGE
    skills = list(cli["statistics"])
    want = {
        fig: [cli["statistics"][s][fig]["spearman"]["value"] for s in skills]
        + [cli["all_criteria"][fig]["spearman"]["value"]]
        for fig in ("human_ceiling", "judge_same_reference")
    }
    titles = [c["layout"]["title"]["text"].replace("<br>", " ") for c in _charts(at)]
    chart = _charts(at)[next(i for i, t in enumerate(titles) if "other humans" in t)]
    human, judge = chart["data"]
    assert human["name"] == "one human vs the other humans (ceiling)"
    assert judge["name"] == f"{JUDGE} vs the same humans"
    assert list(_arr(human["y"])) == want["human_ceiling"]
    assert list(_arr(judge["y"])) == want["judge_same_reference"]
    table = _table(at, {"Human vs the other humans (ceiling)"}).set_index("Skill")
    pooled = table.loc["All criteria (pooled)"]
    gap = cli["all_criteria"]["judge_minus_human"]["spearman"]
    assert pooled["Judge − human (paired 95% CI)"] == (
        f"{gap['value']:.3f} [{gap['ci_low']:.3f}, {gap['ci_high']:.3f}]"
    )
    assert pooled["Pairs (item × held-out human)"] == gap["n"]
    # Beside the ceiling, the judge is held to the same reference: its figure there is below
    # its agreement with the mean of all three humans (the A-vs-B bars above).
    main_bars = _arr(_charts(at)[0]["data"][0]["y"])
    assert (np.array(want["judge_same_reference"]) < main_bars).all()


def test_changed_widgets_change_the_numbers(db):
    at = _page(
        {
            "agr_a::demo": "annotator_1",
            "agr_b::demo": "kind:human",
            "agr_level": "system",
            "agr_skill::demo": "correctness",
            "agr_by": "model",
        }
    )
    page = _exact(at)
    assert set(page["Skill"]) == {"Logical Correctness"} and set(page["Scope"]) == {"criterion"}
    corr = page[page["Statistic"] == "Pearson r"].iloc[0]
    assert corr["Level"] == "system" and corr["n"] == 8  # over 8 model means
    captions = " ".join(c.value for c in at.caption)
    assert "excludes annotator" in captions and "annotator" in captions
    slices = [df.value for df in at.dataframe if "Slice" in df.value.columns][0]
    assert len(slices) == 8  # one row per model


def test_only_the_open_section_is_computed_and_switching_keeps_the_rest(db, monkeypatch):
    """The slices, the human ceiling and the rank stability are tabs: the open one is computed
    (the slices at first), and switching tabs computes the new one without redoing the rest."""
    from analysis.views import agreement

    calls = []
    real = agreement.agreement

    def counted(store, q, sections=agreement.SECTIONS):
        calls.append(tuple(sections))
        return real(store, q, sections)

    monkeypatch.setattr(agreement, "agreement", counted)
    at = _page()
    assert calls == [("stats",), ("slices_shown",)]
    assert "By domain (pooled)" in [h.value for h in at.subheader]
    assert "Human ceiling (leave-one-out)" not in [h.value for h in at.subheader]
    slices = _table(at, {"Slice"})
    assert len(slices) == 10  # one row per domain, all criteria pooled
    at.session_state["agr_section"] = "Human ceiling"
    at.run()
    assert calls[2:] == [("ceiling",)]  # the rest comes from the cache
    assert "Human ceiling (leave-one-out)" in [h.value for h in at.subheader]
    assert not [df for df in at.dataframe if "Slice" in df.value.columns]
    assert len(_charts(at)) == 4


def test_a_slice_with_no_human_labels_says_so(db):
    # FLASK-Hard-only with difficulty 1: the simulated annotators rated none of those.
    at = _page({"hard::demo": True, "levels::demo": [1]})
    infos = " ".join(i.value for i in at.info)
    assert "no aligned scores" in infos
    assert not at.get("plotly_chart")


def test_worst_disagreements_go_to_the_re_judge_queue(db):
    from analysis.views import queues

    at = _page({"agr_skill::demo": "correctness", "agr_queue_n": 5})
    next(b for b in at.button if b.label == "Add them to the re-judge queue").click().run()
    assert "5 responses added" in " ".join(s.value for s in at.success)
    queued = [i.key for i in queues.items(Store(db), queues.REJUDGE, "demo")]
    worst = [df.value for df in at.dataframe if "|A − B|" in df.value.columns][0]
    assert set(worst["Skill"]) == {"Logical Correctness"}  # the label, as the charts show it
    pairs = zip(worst["Instance"], worst["Model"], strict=True)
    assert queued == list(dict.fromkeys(pairs))[:5]


def test_every_table_shows_labels_and_readable_headers(db):
    """Criteria by their labels (as the charts show them), never their ids, and no raw
    column name, in every table of the page."""
    at = _page()
    labels = {s.label for s in SKILLS.values()}
    wide = _table(at, {"Skill", LABELS["spearman"]})
    assert set(wide["Skill"]) == labels | {"All criteria (pooled)"}
    tabs = [_page({"agr_section": t}) for t in ("Human ceiling", "Rank stability")]
    ranks = _table(tabs[1], {"Skill", LABELS["kendall"]})
    assert set(ranks["Skill"]) <= labels | {"All criteria (pooled)"} and len(ranks) == 13
    counts = _table(at, {"Skill", "Aligned items", "N/A from A", "Scored by B only"})
    assert set(counts["Skill"]) == labels
    worst = _table(at, {"Sample", "|A − B|", "Instance", "Model", "Difficulty (1–5)"})
    assert set(worst["Skill"]) <= labels
    raw = {"skill", "slice", "abs_diff", "instance_id", "a_na", "b_only", "link", "difficulty"}
    for df in [*at.dataframe, *tabs[0].dataframe, *tabs[1].dataframe]:
        assert not raw & set(df.value.columns), list(df.value.columns)
        assert not set(df.value.astype(str).stack()) & {"None", "nan", "NaN"}


def _overall_store(db: Path) -> None:
    """Dataset "ov" beside the demo: a criterion literally named "overall" (J agrees with the
    humans) and "fluency" (J runs against them), so the pooled aggregate is far from it."""
    rng = np.random.default_rng(11)
    out = []
    for i in range(12):
        for m in ("m1", "m2", "m3"):
            for skill in ("overall", "fluency"):
                t = int(rng.integers(1, 6))
                base = dict(instance_id=f"i{i}", model=m, skill=skill)
                out.append(
                    base | dict(judge="J", kind="llm", score=t if skill == "overall" else 6 - t)
                )
                for h in ("h1", "h2", "h3"):
                    s = int(np.clip(t + rng.integers(-1, 2), 1, 5))
                    out.append(base | dict(judge=h, kind="human", score=s))
    path = db.parent / "ov.csv"
    pd.DataFrame(out).to_csv(path, index=False)
    from analysis.ingest.score_files import import_scores

    import_scores(Store(db), path, dataset="ov", scale=(1, 5))


def test_a_criterion_named_overall_is_its_own_row_beside_the_pooled_one(db, capsys):
    _overall_store(db)
    args = ["agreement", "--db", str(db), "--dataset", "ov", "--a", "J", "--b", "kind:human"]
    assert main([*args, "--json"]) == 0
    cli = json.loads(capsys.readouterr().out)
    own = cli["statistics"]["overall"]["alpha_ordinal"]["value"]
    pooled = cli["all_criteria"]["alpha_ordinal"]["value"]
    assert own > 0.5 > pooled  # far apart: a swap could not go unnoticed
    at = _page({"dataset": "ov", "agr_stat": "alpha_ordinal"})
    bars = _charts(at)[0]
    ticks = [t.replace("<br>", " ") for t in bars["layout"]["xaxis"]["ticktext"]]
    values = dict(zip(ticks, _arr(bars["data"][0]["y"]), strict=True))
    assert values == {"overall": own, "fluency": pytest.approx(values["fluency"]),
                      "All criteria (pooled)": pooled}  # fmt: skip
    wide = _table(at, {"Skill", LABELS["alpha_ordinal"]}).set_index("Skill")
    assert wide.loc["overall", LABELS["alpha_ordinal"]].startswith(f"{own:.3f}")
    assert wide.loc["All criteria (pooled)", LABELS["alpha_ordinal"]].startswith(f"{pooled:.3f}")
    # Picking the criterion "overall" shows that criterion alone, never the aggregate.
    one = _page({"dataset": "ov", "agr_skill::ov": "overall"})
    page = _exact(one)
    assert set(page["Skill"]) == {"overall"} and set(page["Scope"]) == {"criterion"}
    alpha = page[page["Statistic"] == LABELS["alpha_ordinal"]]["Value"]
    assert alpha.tolist() == [f"{own:.3f}"]


def test_a_link_opens_a_section_and_the_open_section_goes_into_the_url(db):
    at = AppTest.from_file(APP, default_timeout=180)
    at.query_params["section"] = "Human ceiling"
    at.run()
    at.switch_page(PAGE)
    at.run()
    assert "Human ceiling (leave-one-out)" in [h.value for h in at.subheader]
    at.session_state["agr_section"] = "Rank stability"
    at.run()
    assert at.query_params["section"] == "Rank stability"
    assert _table(at, {"Skill", LABELS["kendall"]}).shape[0] == 13
