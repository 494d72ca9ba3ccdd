"""The Human-vs-judge page through AppTest on the simulated demo: the same numbers as the CLI,
changed widgets, and a slice that leaves nothing."""

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

REPO = Path(__file__).resolve().parents[2]
APP = str(REPO / "app.py")
PAGE = "pages/agreement.py"
JUDGE = "gpt-4 (simulated)"


@pytest.fixture
def db(app_db: Path) -> Path:
    return app_db


def _page(state: dict | None = None) -> AppTest:
    """Run the router once (it sets the sidebar's filters), then the page. Widget state is set
    before the first run: AppTest drops the router's widgets on later runs."""
    at = AppTest.from_file(APP, default_timeout=180)
    for k, v in (state or {}).items():
        at.session_state[k] = v
    at.run()
    at.switch_page(PAGE)
    at.run()
    assert not at.exception, [e.message for e in at.exception]
    return at


def _exact(at: AppTest) -> pd.DataFrame:
    for df in at.dataframe:
        if {"statistic", "level", "value"} <= set(df.value.columns):
            return df.value
    raise AssertionError("no long statistics table on the page")


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
    code = main(
        [
            "agreement",
            "--db",
            str(db),
            "--dataset",
            "demo",
            "--a",
            JUDGE,
            "--b",
            "kind:human",
            "--by",
            "domain",
            "--json",
        ]
    )
    assert code == 0
    cli = json.loads(capsys.readouterr().out)
    assert len(page) == sum(len(v) for v in cli["statistics"].values()) == 13 * 9
    for rec in page.to_dict("records"):
        got = cli["statistics"][rec["skill"]][rec["statistic"]]
        assert got["value"] == rec["value"]  # identical, not approximately equal
        assert got["ci_low"] == rec["ci_low"] and got["ci_high"] == rec["ci_high"]
        assert got["n"] == rec["n"] and got["level"] == rec["level"] == "pooled"
    charts = _charts(at)
    assert len(charts) == 3
    bars = charts[0]["data"]
    assert bars[0]["type"] == "bar" and len(_arr(bars[0]["y"])) == 13  # 12 skills + overall
    alpha = page[page["statistic"] == "alpha_ordinal"]["value"].to_numpy()
    assert _arr(bars[0]["y"]) == pytest.approx(alpha)  # the bars draw the table's numbers
    assert bars[1]["name"].startswith("human–human")  # the ceiling is drawn beside
    assert charts[1]["data"][0]["type"] == "heatmap"


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
    assert set(page["skill"]) == {"correctness"}
    corr = page[page["statistic"] == "pearson"].iloc[0]
    assert corr["level"] == "system" and corr["n"] == 8  # over 8 model means
    captions = " ".join(c.value for c in at.caption)
    assert "excludes annotator" in captions and "annotator" in captions
    slices = [df.value for df in at.dataframe if "slice" in df.value.columns][0]
    assert len(slices) == 8  # one row per model


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
    worst = [df.value for df in at.dataframe if "abs_diff" in df.value.columns][0]
    pairs = zip(worst["instance_id"], worst["model"], strict=True)
    assert queued == list(dict.fromkeys(pairs))[:5]
