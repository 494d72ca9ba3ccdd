"""Every CSV download on every page, through AppTest on a store whose names are hostile to
spreadsheets: a model called ``=HYPERLINK("x")``, domains, source tasks and instructions that
start with ``+``, ``-`` or ``@``, and judges whose names already carry brackets.

Each export must parse back with pandas into the values of the table it exports (the table on
the page, or, where the page draws a chart instead, the numbers recomputed here with plain
pandas from the fixture's own score list), lists must come back by splitting on ``;``, every
text cell a spreadsheet would run as a formula must start with ``'``, and numbers must stay
numbers. The tables people read must show labels, readable headers, blanks (never "None") and
one number format per column."""

from __future__ import annotations

import io
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import streamlit as st
from streamlit.runtime.memory_media_file_storage import MemoryMediaFileStorage
from streamlit.testing.v1 import AppTest

from analysis.core.store import Store
from analysis.core.taxonomy import SKILLS
from analysis.core.writer import (
    INSTANCE_COLS,
    JUDGMENT_COLS,
    RESPONSE_COLS,
    SCORE_COLS,
    Batch,
    DatasetRecord,
    JudgeRecord,
    RunRecord,
    write_batch,
)

REPO = Path(__file__).resolve().parents[2]
APP = str(REPO / "app.py")
DATASET = "evil"
M_LINK, M_AT, M_PLAIN = '=HYPERLINK("x")', "@model", "plain"
MODELS = [M_LINK, M_AT, M_PLAIN]
JUDGE = "gpt-4 (simulated)"
HUMANS = ["-alice", "@bob (lab)"]
SKILL_IDS = ["correctness", "readability", "factuality"]
# instance: (difficulty, domains, source task, FLASK-Hard, instruction)
INSTANCES = {
    "1": (1, ["+1", "Math"], "-cmd", False, "=1+1 is two"),
    "2": (2, ["@SUM(A1)"], "Mbpp", False, "+1 to the answer"),
    "3": (3, ["-cmd", "Coding"], "Gsm8k", False, "-cmd: run it"),
    "4": (None, [], "@SUM(A1)", False, "@SUM(A1) in a sheet"),
    "5": (5, ["Math"], "Mbpp", True, "Prove it."),
    "6": (5, ["+1"], "Gsm8k", True, "Explain."),
    "7": (4, ["Culture", "Language"], "Koala", False, "Tell a story."),
    "8": (2, ["Math"], "-cmd", False, "Sum it."),
}
FORMULA = ("=", "+", "-", "@", "\t", "\r")
# The downloads the pages offer and the page each is on (a new one must be added here).
PAGES = {
    "pages/radar.py": {"radar_csv", "compare_csv"},
    "pages/breakdowns.py": {
        "csv_by_difficulty",
        "csv_by_domain",
        "csv_by_source_task",
        "csv_hard_vs_full",
    },
    "pages/agreement.py": {"agr_dl_stats", "agr_dl_pairs", "agr_dl_ceiling"},
    # On this store (one LLM judge, two humans, no family mapping, no repeat run, no verbosity
    # check): Self-preference, Stability and Verbosity show their empty states, not a table;
    # their downloads are checked in tests/pages/test_judges_*.py.
    "pages/judges.py": {"jd_dl_board", "jd_ln_dl", "jd_ln_dist_dl", "jd_fl_dl", "jd_lb_dl"},
    "pages/overview.py": set(),  # the report's Save button comes only after a click
}
# The Judges page draws each tab from its own module (pages/judges_*.py): their downloads are
# the page's.
JUDGES_SECTIONS = (
    "Leaderboard", "Leniency", "Failures", "Length bias", "Self-preference", "Stability",
    "Verbosity",
)  # fmt: skip


def _clip(v: int) -> int:
    return min(5, max(1, v))


def score_list() -> pd.DataFrame:
    """Every score of the fixture (NaN = N/A): the test's own truth."""
    rows = []
    for iid, (_, _, _, hard, _) in INSTANCES.items():
        i = int(iid)
        for mi, model in enumerate(MODELS):
            for si, skill in enumerate(SKILL_IDS):
                base = _clip(4 - mi + (i + si) % 3 - 1 - (2 if hard else 0))
                na = (i * 7 + si + mi) % 11 == 0
                alice = _clip(base + (i + si) % 3 - 1)
                bob = _clip(base + (i + mi) % 2)
                for judge, v in ((JUDGE, base), (HUMANS[0], alice), (HUMANS[1], bob)):
                    miss = na or (judge == HUMANS[1] and (i + si) % 5 == 0)
                    rows.append((iid, model, judge, skill, np.nan if miss else float(v)))
    return pd.DataFrame(rows, columns=["instance_id", "model", "judge", "skill", "score"])


def write_evil(store: Store) -> pd.DataFrame:
    inst = pd.DataFrame(
        [
            (DATASET, iid, text, "A reference.", task, level, domains, SKILL_IDS, hard)
            for iid, (level, domains, task, hard, text) in INSTANCES.items()
        ],
        columns=INSTANCE_COLS,
    )
    resp = pd.DataFrame(
        [(DATASET, iid, m, f"-cmd answer of {m} to {iid}") for iid in INSTANCES for m in MODELS],
        columns=RESPONSE_COLS,
    )
    scores = score_list().assign(dataset=DATASET, run_id=lambda d: "run-" + d["judge"])
    keys = scores[["run_id", "dataset", "instance_id", "model", "judge"]].drop_duplicates()
    judgments = keys.assign(
        raw_output="{}", rationale="@rationale", parse_status="ok", error=None,
        latency_ms=None, prompt_tokens=None, completion_tokens=None,
    )[JUDGMENT_COLS]  # fmt: skip
    judges = [JudgeRecord(JUDGE, "llm")] + [JudgeRecord(h, "human") for h in HUMANS]
    batch = Batch(
        datasets=[DatasetRecord(DATASET, "Hostile names", "tests/pages/test_downloads.py")],
        instances=inst,
        responses=resp,
        judges=judges,
        runs=[RunRecord(f"run-{j.judge}", j.judge, DATASET, "tests") for j in judges],
        judgments=judgments,
        scores=scores[SCORE_COLS],
    )
    write_batch(store, batch, "tests")
    return score_list()


@pytest.fixture
def evil(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    path = tmp_path / "evil.duckdb"
    write_evil(Store(path))
    monkeypatch.setenv("FINEGRAIN_DB", str(path))
    st.cache_data.clear()
    yield path
    st.cache_data.clear()


@pytest.fixture
def files(monkeypatch: pytest.MonkeyPatch) -> dict[str, bytes]:
    """The bytes behind every download button AppTest renders, by media file id."""
    seen: dict[str, bytes] = {}
    original = MemoryMediaFileStorage.load_and_get_id

    def record(self, path_or_data, mimetype, kind, filename=None):
        file_id = original(self, path_or_data, mimetype, kind, filename)
        seen[file_id] = path_or_data
        return file_id

    monkeypatch.setattr(MemoryMediaFileStorage, "load_and_get_id", record)
    return seen


def open_page(page: str, state: dict | None = None) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=120)
    for key, value in (state or {}).items():
        at.session_state[key] = value
    at.run()
    at.switch_page(page)
    at.run()
    assert not at.exception, [e.message for e in at.exception]
    return at


# Breakdowns computes and draws only its open tab: its tests visit each.
BREAKDOWN_SECTIONS = (
    "By difficulty", "Difficulty trends", "By domain", "By source task", "FLASK-Hard vs full",
)  # fmt: skip


def open_sections(page: str) -> list[AppTest]:
    """The page once per tab when only the open tab runs (Breakdowns; Human vs judge's human
    ceiling, after its default tab), the radar with its comparison section open, else once."""
    if page == "pages/agreement.py":
        return [open_page(page), open_page(page, {"agr_section": "Human ceiling"})]
    if page == "pages/radar.py":
        return [open_page(page, {"radar_compare": True})]
    if page == "pages/judges.py":
        return [open_page(page, {"jd_section": name}) for name in JUDGES_SECTIONS]
    if page != "pages/breakdowns.py":
        return [open_page(page)]
    return [open_page(page, {"bd_section": name}) for name in BREAKDOWN_SECTIONS]


def downloads(at: AppTest, files: dict[str, bytes], fmt: str = "csv") -> dict[str, pd.DataFrame]:
    """{button key: its CSV parsed by pandas}; "NA"/"None" stay text, only "" is missing.
    ``fmt="parquet"``: the Parquet twins instead ({CSV key: the Parquet file read back})."""
    out = {}
    for button in at.get("download_button"):
        key = button.proto.id.split("-", 2)[-1]
        data = files[Path(button.proto.url).stem]
        if key.endswith("_parquet") != (fmt == "parquet"):
            continue
        if fmt == "parquet":
            out[key.removesuffix("_parquet")] = pd.read_parquet(io.BytesIO(data))
        else:
            out[key] = pd.read_csv(io.BytesIO(data), keep_default_na=False, na_values=[""])
    return out


def tables(at: AppTest) -> list[pd.DataFrame]:
    return [d.value for d in at.dataframe]


def table_with(at: AppTest, *headers: str, without: tuple[str, ...] = ()) -> pd.DataFrame:
    for t in tables(at):
        if set(headers) <= set(t.columns) and not set(without) & set(t.columns):
            return t
    raise AssertionError(f"no table with {headers}: {[list(t.columns) for t in tables(at)]}")


def same_columns(at: AppTest, csv: pd.DataFrame) -> pd.DataFrame:
    """The table on the page with exactly the CSV's columns."""
    for t in tables(at):
        if list(t.columns) == [plain_text(c) for c in csv.columns]:
            return t
    raise AssertionError(f"no table with the columns {list(csv.columns)}")


def plain_text(cell: str) -> str:
    """A CSV cell as it was before neutralising."""
    return cell[1:] if cell.startswith("'") and cell[1:].startswith(FORMULA) else cell


def assert_neutralised(frame: pd.DataFrame, where: str) -> None:
    for col in frame.columns:
        assert not str(col).startswith(FORMULA), f"{where}: header {col!r}"
        for cell in frame[col]:
            if isinstance(cell, str):
                assert not cell.startswith(FORMULA), f"{where}: {col} = {cell!r}"


NUMBER = re.compile(r"^-?\d+(\.(\d+))?$")


def assert_one_format_per_column(table: pd.DataFrame, where: str) -> None:
    """Blanks, never None/nan; numbers in a column written with one number of decimals."""
    for col in table.columns:
        values = table[col].tolist()
        assert not any(v is None or (isinstance(v, float) and np.isnan(v)) for v in values), (
            f"{where}: missing value shown as None in {col!r}"
        )
        texts = [v for v in values if isinstance(v, str)]
        assert not {"None", "nan", "NaN", "<NA>"} & set(texts), f"{where}: {col!r}"
        places = {len(m.group(2) or "") for m in map(NUMBER.match, texts) if m}
        assert len(places) <= 1, f"{where}: {col!r} mixes {places} decimals"


def assert_mirrors(shown: pd.DataFrame, csv: pd.DataFrame, where: str) -> None:
    """The table on the page and its CSV hold the same rows and values: a number shown with k
    decimals is the CSV's number rounded to k; a blank is an empty cell; a list shown 'a, b'
    is the CSV's 'a;b'."""
    assert len(shown) == len(csv), where
    for col in shown.columns:
        assert col in csv.columns, f"{where}: {col!r} missing from the CSV {list(csv.columns)}"
        for s, c in zip(shown[col], csv[col], strict=True):
            at = f"{where}: {col!r} shows {s!r}, CSV {c!r}"
            if isinstance(c, (bool, np.bool_)):
                assert s == ("yes" if c else "no"), at
            elif isinstance(c, (int, float, np.number)) and not pd.isna(c):
                if isinstance(s, str):
                    places = len(s.partition(".")[2])
                    assert abs(float(s) - c) <= 0.5 * 10**-places + 1e-9, at
                else:
                    assert s == c, at
            elif pd.isna(c):
                assert s == "", at
            elif col in ("Domains", "Skills"):
                assert s.split(", ") == plain_text(c).split(";"), at
            else:
                assert s == plain_text(c), at


def label(skill: str) -> str:
    return SKILLS[skill].label


def judge_rows(scores: pd.DataFrame) -> pd.DataFrame:
    rows = scores[scores["judge"] == JUDGE]
    info = pd.DataFrame(
        [(i, lv, d) for i, (lv, d, *_) in INSTANCES.items()],
        columns=["instance_id", "difficulty", "domains"],
    )
    return rows.merge(info, on="instance_id")


def expected_cells(scores: pd.DataFrame, by: str) -> pd.DataFrame:
    """Mean, n and N/A per model × skill × ``by`` with plain pandas (FLASK's rule: an instance
    counts in each of its domains; none → "(unlabeled)")."""
    rows = judge_rows(scores)
    if by == "domain":
        rows = rows.assign(domain=[d if d else ["(unlabeled)"] for d in rows["domains"]]).explode(
            "domain"
        )
    rows = rows.assign(skill=rows["skill"].map(label))
    g = rows.groupby(["model", "skill", by], dropna=False)["score"]
    return pd.DataFrame({"mean": g.mean(), "n": g.count(), "n_na": g.size() - g.count()})


def check_cells(csv: pd.DataFrame, scores: pd.DataFrame, by: str, column: str) -> None:
    want = expected_cells(scores, by)
    assert len(csv) == len(want)
    for rec in csv.to_dict("records"):
        key_value = rec[column]
        if by == "domain":
            key_value = plain_text(key_value)
        key = (plain_text(rec["Model"]), rec["Skill"], key_value)
        if by == "difficulty" and pd.isna(key_value):
            key = (key[0], key[1], np.nan)
        exp = want.loc[key] if not pd.isna(key[2]) else want.xs(key[:2]).loc[[np.nan]].iloc[0]
        assert rec["Scores (n)"] == exp["n"] and rec["N/A scores"] == exp["n_na"], key
        if exp["n"]:
            assert rec["Mean"] == pytest.approx(exp["mean"], abs=1e-12), key
        else:
            assert pd.isna(rec["Mean"]), key


def check_pairs(csv: pd.DataFrame, scores: pd.DataFrame) -> None:
    """The disagreement list: every item both sides scored, A = the judge, B = the mean of the
    humans' scores, worst first; domains back by splitting on ';'."""
    wide = scores.pivot_table(
        index=["instance_id", "model", "skill"], columns="judge", values="score", dropna=False
    )
    a = wide[JUDGE]
    b = wide[HUMANS].mean(axis=1)
    both = pd.DataFrame({"a": a, "b": b}).dropna()
    assert len(csv) == len(both)
    a_col = next(c for c in csv.columns if c.startswith("A"))
    b_col = next(c for c in csv.columns if c.startswith("B"))
    diffs = csv["|A − B|"].tolist()
    assert diffs == sorted(diffs, reverse=True)
    for rec in csv.to_dict("records"):
        skill = next(s for s in SKILL_IDS if label(s) == rec["Skill"])
        iid = str(rec["Instance"])
        key = (iid, plain_text(rec["Model"]), skill)
        assert rec[a_col] == both.loc[key, "a"] and rec[b_col] == pytest.approx(both.loc[key, "b"])
        assert rec["|A − B|"] == pytest.approx(abs(both.loc[key, "a"] - both.loc[key, "b"]))
        got = [] if pd.isna(rec["Domains"]) else plain_text(rec["Domains"]).split(";")
        assert got == INSTANCES[iid][1], key


def test_every_download_parses_back_and_is_neutralised(evil, files):
    scores = score_list()
    found: dict[str, pd.DataFrame] = {}
    for page, keys in PAGES.items():
        runs = open_sections(page)
        at = runs[0]
        got = {key: csv for run in runs for key, csv in downloads(run, files).items()}
        assert set(got) == keys, f"{page}: downloads {sorted(got)}; this test knows {keys}"
        found |= got
        for key, csv in got.items():
            assert_neutralised(csv, key)
        if page == "pages/radar.py":
            shown = table_with(at, "Scale")
            assert_one_format_per_column(shown, "radar table")
            assert_mirrors(shown, got["radar_csv"], "radar")
            assert "'" + M_LINK in set(got["radar_csv"]["Model"])
            diff = table_with(at, "p (Holm)")
            shared = [c for c in diff.columns if c in got["compare_csv"].columns]
            assert {"Mean A", "Mean B", "p", "p (Holm)"} <= set(shared)
            assert_mirrors(diff[shared], got["compare_csv"][shared], "compare")
        if page == "pages/breakdowns.py":
            model = at.selectbox(key="bd_model").value
            tasks = table_with(runs[3], "Source task", without=("Model",))
            assert_one_format_per_column(tasks, "task table")
            mine = got["csv_by_source_task"]
            mine = mine[mine["Model"].map(plain_text) == model].drop(columns="Model")
            assert_mirrors(tasks, mine.reset_index(drop=True), "source tasks")
            hard = table_with(runs[4], "Change (%)")
            assert_one_format_per_column(hard, "hard table")
            assert_mirrors(hard, got["csv_hard_vs_full"], "FLASK-Hard")
            check_cells(got["csv_by_domain"], scores, "domain", "Domain")
            check_cells(got["csv_by_difficulty"], scores, "difficulty", "Difficulty (1–5)")
        if page == "pages/agreement.py":
            exact = table_with(at, "Statistic", "Level")
            assert_one_format_per_column(exact, "agreement statistics")
            assert_mirrors(exact, got["agr_dl_stats"], "agreement statistics")
            check_pairs(got["agr_dl_pairs"], scores)
            ceiling = same_columns(runs[1], got["agr_dl_ceiling"])
            assert_one_format_per_column(ceiling, "human ceiling")
            assert_mirrors(ceiling, got["agr_dl_ceiling"], "human ceiling")
    # The hostile texts came through, neutralised, in the exports that carry them.
    texts = {
        plain_text(c): c
        for csv in found.values()
        for col in csv.columns
        for c in csv[col]
        if isinstance(c, str)
    }
    for raw in (M_LINK, M_AT, "+1", "-cmd", "@SUM(A1)"):
        assert texts.get(raw) == "'" + raw, raw
    assert "'+1;Math" in set(found["agr_dl_pairs"]["Domains"])  # a list cell: neutralised once
    # Numbers stay numbers, negative ones included (FLASK-Hard scores are lower here).
    change = found["csv_hard_vs_full"]["Change (%)"]
    assert change.dtype == float and (change < 0).any()


def test_every_page_with_a_download_is_covered():
    """A new download button on any page must be added to PAGES (and so to the test above)."""
    with_buttons = {
        "pages/judges.py" if p.name.startswith("judges_") else f"pages/{p.name}"
        for p in (REPO / "pages").glob("*.py")
        if p.name != "common.py"  # defines ``downloads``, the two buttons of a table
        and ("download_button(" in p.read_text() or "downloads(" in p.read_text())
    }
    assert with_buttons == set(PAGES)


def test_tables_show_labels_headers_and_blanks(evil):
    overview = open_page("pages/overview.py")
    sets = table_with(overview, "Instances", "Scores")
    assert_one_format_per_column(sets, "datasets")
    row = sets[sets["Dataset"] == DATASET].iloc[0]
    assert row["Seed"] == "" and row["Simulated"] == "no"  # blank, not None
    samples = open_page("pages/samples.py")
    shown = table_with(samples, "Instance", "Source task")
    assert_one_format_per_column(shown, "samples")
    assert set(shown["Source task"]) == {"-cmd", "MBPP", "GSM8K", "@SUM(A1)", "Koala"}
    assert JUDGE in shown.columns and set(HUMANS) <= set(shown.columns)
    raw = {"ci_low", "ci_high", "n_na", "n_instances", "mean_full", "source_task", "instance_id"}
    for page in ("pages/radar.py", "pages/breakdowns.py"):
        for t in (t for run in open_sections(page) for t in tables(run)):
            assert not raw & set(t.columns), (page, list(t.columns))
            assert not {s for s in SKILL_IDS} & set(t.get("Skill", ())), page


def test_judge_pickers_show_one_pair_of_brackets(evil):
    at = open_page("pages/agreement.py")
    judge = at.sidebar.selectbox(key=f"judge::{DATASET}")
    assert list(judge.options) == ["gpt-4 (simulated, llm)", "-alice (human)", "@bob (lab, human)"]
    pickers = [s for s in at.selectbox if s.label.startswith(("A (", "B ("))]
    assert len(pickers) == 2
    for picker in pickers:
        assert "gpt-4 (simulated, llm)" in picker.options
        assert all(o.count("(") <= 1 for o in picker.options), picker.options


def test_source_tasks_by_their_proper_names(evil):
    at = open_page("pages/breakdowns.py", {"bd_section": "By source task"})
    tasks = at.sidebar.multiselect(key=f"tasks::{DATASET}")
    assert sorted(tasks.options) == sorted(["-cmd", "@SUM(A1)", "GSM8K", "Koala", "MBPP"])
    shown = table_with(at, "Source task", without=("Model",))
    assert set(shown["Source task"]) == {"-cmd", "@SUM(A1)", "GSM8K", "Koala", "MBPP"}


def as_spreadsheet_text(frame: pd.DataFrame) -> pd.DataFrame:
    """What the CSV twin of a typed frame holds: lists ``;``-joined, formula text neutralised."""
    out = frame.copy()
    for col in out.columns:
        if pd.api.types.is_object_dtype(out[col]) or pd.api.types.is_string_dtype(out[col]):
            out[col] = (
                out[col]
                .astype(object)
                .map(lambda v: ";".join(map(str, v)) if isinstance(v, list | np.ndarray) else v)
            )
            out[col] = out[col].map(
                lambda v: "'" + v if isinstance(v, str) and v.startswith(FORMULA) else v
            )
    return out.replace("", np.nan)


def test_every_table_also_downloads_as_typed_parquet(evil, files):
    """Each CSV download has a Parquet twin: the same headers and rows, numbers as numbers,
    lists as lists, text as typed (no leading ')."""
    for page, keys in PAGES.items():
        csv: dict[str, pd.DataFrame] = {}
        parquet: dict[str, pd.DataFrame] = {}
        for run in open_sections(page):
            csv |= downloads(run, files)
            parquet |= downloads(run, files, "parquet")
        assert set(parquet) == set(csv) == keys, page
        for key, typed in parquet.items():
            assert list(typed.columns) == list(csv[key].columns), key
            numbers = [c for c in typed.columns if pd.api.types.is_numeric_dtype(typed[c])]
            # Typed: what reads back from the CSV as numbers is numbers (ids stay text).
            read_as_numbers = {  # an all-blank column reads as numbers from any CSV
                c
                for c in csv[key].columns
                if pd.api.types.is_numeric_dtype(csv[key][c]) and csv[key][c].notna().any()
            }
            assert read_as_numbers - {"Instance"} <= set(numbers), key
            text = csv[key].copy()
            for col in typed.columns:  # ids are text in Parquet; pandas reads "1" as 1 from CSV
                if not pd.api.types.is_numeric_dtype(typed[col]):
                    text[col] = text[col].map(lambda v: v if pd.isna(v) else str(v))
            pd.testing.assert_frame_equal(
                as_spreadsheet_text(typed), text, check_dtype=False, obj=key
            )
    domains = parquet_domains(files)
    assert ["+1", "Math"] in domains  # a list stays a list, its text as typed


def parquet_domains(files: dict[str, bytes]) -> list[list[str]]:
    run = open_sections("pages/agreement.py")[0]
    pairs = downloads(run, files, "parquet")["agr_dl_pairs"]
    return [list(v) for v in pairs["Domains"]]
