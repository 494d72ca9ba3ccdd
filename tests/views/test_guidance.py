"""Empty states and default models on real DuckDB files: each cause is told apart, the filters
named are exactly those whose widening alone brings data back (checked with pandas on the
fixture's own lists), the buttons carry the right page, parameters and queue, the commands are
exact, and the radar's defaults are the best-scored models by a pandas Overall."""

from __future__ import annotations

import shlex
from dataclasses import replace

import pandas as pd
import pytest

from analysis.core.filters import Filters
from analysis.core.store import REPO_ROOT, Store
from analysis.ingest.score_files import import_scores
from analysis.views import (
    breakdowns,
    guidance,
    guidance_data,
    guidance_work,
    overview,
    queues,
    radar,
    samples,
)
from analysis.views.agreement import AgreementQuery
from tests.guidance_fixtures import (
    BLANK_MODELS,
    INSTANCES,
    J_SCORES,
    JUDGE,
    SCORED_MODELS,
    SKILLS,
    UNSCORED,
    long_scores,
    write_guidance,
)

LABELS = guidance.FILTER_LABELS


@pytest.fixture(scope="module")
def store(tmp_path_factory) -> Store:
    s = Store(tmp_path_factory.mktemp("guidance") / "g.duckdb")
    s.ensure()
    write_guidance(s)
    return s


@pytest.fixture
def fresh(tmp_path) -> Store:
    """A private store for tests that write (queues, extra imports)."""
    s = Store(tmp_path / "g.duckdb")
    s.ensure()
    write_guidance(s)
    return s


def _inst() -> pd.DataFrame:
    rows = [(i, lv, d, t, h) for i, (lv, d, t, h) in INSTANCES.items()]
    return pd.DataFrame(rows, columns=["instance_id", "difficulty", "domains", "task", "hard"])


def _j_scores() -> pd.DataFrame:
    return long_scores(J_SCORES, JUDGE).merge(_inst(), on="instance_id")


def _keep(rows: pd.DataFrame, f: Filters) -> pd.DataFrame:
    """The sidebar's filters, applied with pandas (an instance matches a domain it lists)."""
    keep = pd.Series(True, index=rows.index)
    if f.models and "model" in rows:
        keep &= rows["model"].isin(f.models)
    if f.domains:
        keep &= rows["domains"].apply(lambda d: bool(set(d) & set(f.domains)))
    if f.difficulties:
        keep &= rows["difficulty"].isin(f.difficulties)
    if f.source_tasks:
        keep &= rows["task"].isin(f.source_tasks)
    if f.flask_hard_only:
        keep &= rows["hard"]
    return rows[keep]


def _expected_widen(rows: pd.DataFrame, f: Filters) -> dict[str, int]:
    """label → rows left when that one filter is cleared, for the filters where that helps."""
    out = {}
    for name, label in LABELS.items():
        if getattr(f, name):
            wider = replace(f, **{name: getattr(Filters(f.dataset), name)})
            n = len(_keep(rows, wider))
            if n:
                out[label] = n
    return out


def test_dataset_without_scores_offers_rejudge_annotate_and_the_import_command(store):
    es = guidance_data.scores(store, Filters("blank"))
    assert es.cause == guidance.NO_SCORES and es.blocks
    n_responses = len(INSTANCES) * len(BLANK_MODELS)
    assert f"none of its {n_responses} responses" in es.message
    rejudge, annotate = es.actions
    assert (rejudge.page, rejudge.query, rejudge.fill) == ("pages/rejudge.py",
                                                           {"source": "filters"}, None)  # fmt: skip
    assert annotate.page == "pages/annotate.py"
    assert annotate.fill == guidance.QueueFill(queues.ANNOTATE, Filters("blank"), 20)
    db = shlex.quote(str(store.path))
    assert es.commands[0] == f"finegrain import-scores FILE --dataset blank --db {db}"
    assert (
        es.commands[1]
        == f"finegrain judge --backend openai --model MODEL --dataset blank --db {db}"
    )


def test_no_instances_and_no_judge_are_their_own_causes(store):
    hollow = guidance_data.scores(store, Filters("hollow"))
    assert hollow.cause == guidance.NO_INSTANCES and not hollow.actions
    assert hollow.commands[0].startswith("finegrain import-scores FILE --dataset hollow")
    nojudge = guidance_data.scores(store, Filters("scored"))
    assert nojudge.cause == guidance.NO_JUDGE and "Judge box" in nojudge.message
    assert f"scorers here: {JUDGE}" in nojudge.message


@pytest.mark.parametrize(
    "f",
    [
        # Domain alone does not help (a has no level-5 scores in any domain): not named.
        Filters("scored", JUDGE, models=("a",), domains=("Math",), difficulties=(5,)),
        Filters("scored", JUDGE, domains=("Coding",), difficulties=(1,), flask_hard_only=True),
        Filters("scored", JUDGE, models=(UNSCORED,)),
        Filters("scored", JUDGE, source_tasks=("T3",), models=("b", "c")),
    ],
)
def test_filters_that_exclude_everything_name_the_ones_to_widen(store, f):
    scores = _j_scores()
    assert _keep(scores, f).empty  # the slice is empty indeed
    expected = _expected_widen(scores, f)
    es = guidance_data.scores(store, f)
    assert es.cause == guidance.FILTERED_OUT
    assert es.message.startswith("No scores match the current filters.")
    assert dict.fromkeys(es.widen) == dict.fromkeys(expected)  # same filters, sidebar order
    for label, n in expected.items():
        assert f"{label} ({n} score{'s' if n != 1 else ''} without it)" in es.message
    assert f"has {len(scores)} scores in dataset scored" in es.message
    # Responses the judge has not scored in the slice: offered for re-judging.
    responses = pd.DataFrame(
        [(i, m) for i in INSTANCES for m in SCORED_MODELS], columns=["instance_id", "model"]
    ).merge(_inst(), on="instance_id")
    unscored = len(_keep(responses, f))
    assert bool(es.actions) == bool(unscored)
    if unscored:
        assert f"{unscored} response{'s' if unscored != 1 else ''} {JUDGE} has not" in es.message


def test_example_where_domain_is_not_the_filter_to_widen(store):
    f = Filters("scored", JUDGE, models=("a",), domains=("Math",), difficulties=(5,))
    es = guidance_data.scores(store, f)
    assert es.widen == ("Models", "Difficulty")
    assert "Models is a and Domain is Math and Difficulty is 5" in es.message


def test_coverage_needs_no_scores_and_its_empty_state_names_the_filter(store):
    cov = overview.coverage(store, Filters("blank"))
    per_domain = _inst().explode("domains").groupby("domains")["instance_id"].nunique()
    expected = {  # every instance needs both skills
        (skill, domain): int(n) for domain, n in per_domain.items() for skill in SKILLS
    }
    assert {(r.skill, r.domain): r.instances for r in cov.itertuples()} == expected
    f = Filters("blank", domains=("Coding",), difficulties=(1,), flask_hard_only=True)
    assert overview.coverage(store, f).empty
    es = guidance_data.instances(store, f)
    expected_widen = _expected_widen(_inst(), f)
    assert dict.fromkeys(es.widen) == dict.fromkeys(expected_widen)
    assert "No instances match the current filters" in es.message
    assert guidance_data.instances(store, Filters("hollow")).cause == guidance.NO_INSTANCES


def test_flask_hard_comparison_says_why_it_is_empty(store, tmp_path):
    inst = _inst()
    hard = inst[inst["hard"]]
    f = Filters("scored", JUDGE, difficulties=(1,))
    assert breakdowns.hard_vs_full(store, f).empty
    es = guidance_data.hard_instances(store, f)
    assert es.cause == guidance.FILTERED_OUT and not es.blocks and es.widen == ("Difficulty",)
    assert f"None of the {len(hard)} FLASK-Hard instances of scored" in es.message
    f = Filters("scored", JUDGE, models=("d",))  # d is scored on 1-3, none of them hard
    assert breakdowns.hard_vs_full(store, f).empty
    es = guidance_data.hard_instances(store, f)
    assert es.cause == guidance_data.HARD_UNSCORED
    assert f"has not scored the {len(hard)} FLASK-Hard instances" in es.message
    s = Store(tmp_path / "c.duckdb")
    csv = tmp_path / "c.csv"
    csv.write_text("instance_id,model,judge,skill,score\n1,a,j,correctness,4\n")
    import_scores(s, csv, dataset="c")
    es = guidance_data.hard_instances(s, Filters("c", "j"))
    assert es.cause == guidance_data.NO_FLASK_HARD and "No instance of c is marked" in es.message


def test_samples_search_names_the_constraint_to_relax(store):
    q = samples.SampleQuery(Filters("scored", models=("a",)), text="no such words")
    assert samples.search(store, q).total == 0
    es = guidance_data.samples_search(store, q)
    assert es.widen == ("the search 'no such words'",)
    assert f"({len(INSTANCES)} matches without it)" in es.message  # a's responses
    f = Filters("scored", models=("a",), difficulties=(1,), flask_hard_only=True)
    narrow = samples.SampleQuery(f)
    assert samples.search(store, narrow).total == 0
    es = guidance_data.samples_search(store, narrow)
    responses = pd.DataFrame([(i, "a") for i in INSTANCES], columns=["instance_id", "model"])
    expected = _expected_widen(responses.merge(_inst(), on="instance_id"), narrow.filters)
    assert list(expected) == ["Difficulty", "FLASK-Hard only"]  # not Models
    assert es.widen == tuple(f"the sidebar's {label}" for label in expected)
    hollow = guidance_data.samples_search(store, samples.SampleQuery(Filters("hollow")))
    assert hollow.cause == guidance.NO_INSTANCES


def test_two_models_without_shared_instances_say_what_each_has(store):
    es = guidance_data.compare_overlap(store, Filters("scored", JUDGE), "d", "e")
    scored = _j_scores().dropna(subset=["score"])
    n_d = scored.loc[scored["model"] == "d", "instance_id"].nunique()
    n_e = scored.loc[scored["model"] == "e", "instance_id"].nunique()
    assert es.cause == guidance.NO_SHARED_INSTANCES
    assert f"(d: {n_d} instances, e: {n_e} instances)" in es.message
    assert radar.compare(store, Filters("scored", JUDGE), "d", "e", n_boot=50).empty


def test_human_vs_judge_names_the_missing_scorer(store, fresh, tmp_path):
    one = guidance_work.scorers_gap(store, Filters("scored"))
    assert one.cause == guidance_work.MISSING_SCORER and one.blocks
    assert f"Only the LLM judge {JUDGE}" in one.message and "missing: human labels" in one.message
    annotate = one.actions[0]
    assert annotate.fill.queue == queues.ANNOTATE and annotate.fill.scored_by == (JUDGE,)
    assert "--kind human --judge NAME" in one.commands[0]
    none = guidance_work.scorers_gap(store, Filters("blank"))
    assert none.cause == guidance_work.MISSING_SCORER and "both are missing" in none.message
    note = guidance_work.scorers_gap(store, Filters("twin"))
    assert note.cause == guidance_work.NO_HUMANS and not note.blocks
    assert "(j, k)" in note.message
    csv = tmp_path / "h.csv"
    csv.write_text("instance_id,model,skill,score\n1,x,correctness,4\n2,x,correctness,2\n")
    import_scores(fresh, csv, dataset="humans", judge="hana", kind="human")
    human = guidance_work.scorers_gap(fresh, Filters("humans"))
    assert "Only the human annotator hana" in human.message
    assert "missing: an LLM judge" in human.message
    rejudge = human.actions[0]
    assert rejudge.query == {"source": "queue"} and rejudge.fill.queue == queues.REJUDGE
    assert rejudge.fill.scored_by == ("hana",)


def test_scorers_without_common_items(store, fresh, tmp_path):
    q = AgreementQuery(Filters("twin", models=("b",)), "j", "k")
    es = guidance_work.aligned_items(store, q)
    j_items = _j_scores().dropna(subset=["score"])
    assert es.cause == guidance_work.NO_ALIGNED_ITEMS and es.widen == ("Models",)
    assert f"A scored {(j_items['model'] == 'b').sum()} items here and B 0 items" in es.message
    # A human who labelled nothing in the slice: annotate what the judge scored there.
    csv = tmp_path / "h.csv"
    csv.write_text("instance_id,model,skill,score\n3,a,correctness,4\n")
    import_scores(fresh, csv, dataset="twin", judge="hana", kind="human")
    q = AgreementQuery(Filters("twin", difficulties=(1,)), "j", "kind:human")
    es = guidance_work.aligned_items(fresh, q)
    assert "B 0 items" in es.message
    assert [a.fill.scored_by for a in es.actions] == [("j",)]


def test_annotate_queue_button_fills_the_first_responses_of_the_slice(fresh):
    f = Filters("blank", domains=("Math",))
    es = guidance_work.annotate_queue(fresh, f, "alice")
    assert es.cause == guidance_work.ANNOTATE_QUEUE_EMPTY
    assert "The annotate queue of this dataset is empty (blank)" in es.message
    queue_here, samples_page = es.actions
    assert queue_here.query == {"annotator": "alice"} and samples_page.page == "pages/samples.py"
    assert guidance.fill_queue(fresh, queue_here.fill) == 12
    inst = _inst()
    math = inst[inst["domains"].apply(lambda d: "Math" in d)]["instance_id"]
    expected = [(i, m) for i in sorted(math, key=int) for m in sorted(BLANK_MODELS)]
    assert [q.key for q in queues.items(fresh, queues.ANNOTATE, "blank")] == expected
    # Only what a scorer scored: the judge's first five responses, in instance order.
    fill = guidance.QueueFill(queues.ANNOTATE, Filters("scored"), 5, (JUDGE,))
    assert guidance.fill_queue(fresh, fill) == 5
    scored = sorted(J_SCORES, key=lambda k: (int(k[0]), k[1]))[:5]
    assert [q.key for q in queues.items(fresh, queues.ANNOTATE, "scored")] == scored


def test_rejudge_empty_queue_and_empty_slice(store):
    es = guidance_work.rejudge_selection(store, Filters("blank"), "queue")
    assert es.cause == guidance_work.REJUDGE_QUEUE_EMPTY
    assert es.actions[0].query == {"source": "filters"}
    f = Filters("blank", domains=("Math",), difficulties=(1,), source_tasks=("T2",))
    es = guidance_work.rejudge_selection(store, f, "filters")
    pairs = [(i, m) for i in INSTANCES for m in BLANK_MODELS]
    responses = pd.DataFrame(pairs, columns=["instance_id", "model"])
    responses = responses.merge(_inst(), on="instance_id")
    assert dict.fromkeys(es.widen) == dict.fromkeys(_expected_widen(responses, f))


def test_commands_are_exact_and_quoted(tmp_path):
    default = Store(REPO_ROOT / "data" / "finegrain.duckdb")  # not opened: only its path
    assert (
        guidance.import_command(default, "my set")
        == "finegrain import-scores FILE --dataset 'my set'"
    )
    assert guidance.import_command(default, "flask", human=True) == (
        "finegrain import-scores FILE --dataset flask --kind human --judge NAME"
    )
    f = Filters("flask", models=("vicuna-13b", "gpt 4"))
    assert guidance.judge_command(Store(tmp_path / "x y.duckdb"), f) == (
        "finegrain judge --backend openai --model MODEL --dataset flask "
        f"--models 'vicuna-13b,gpt 4' --db '{tmp_path / 'x y.duckdb'}'"
    )


# ---------------------------------------------------------------- the radar's defaults


def _pandas_ranking(store: Store, f: Filters) -> list[str]:
    """Models by Overall (mean of the judge's non-N/A scores in the slice), ties by name."""
    with store.read() as con:
        rows = con.execute(
            "SELECT s.model, s.score, i.difficulty FROM latest_scores s "
            "JOIN instances i USING (dataset, instance_id) WHERE s.dataset = ? AND s.judge = ?",
            [f.dataset, f.judge],
        ).df()
    if f.difficulties:
        rows = rows[rows["difficulty"].isin(f.difficulties)]
    means = rows.dropna(subset=["score"]).groupby("model")["score"].mean()
    return sorted(means.index, key=lambda m: (-means[m], m))


def test_radar_defaults_are_the_best_scored_models(store):
    f = Filters("scored", JUDGE)
    ranking = radar.model_ranking(store, f, tuple(sorted(SCORED_MODELS)))
    expected = _pandas_ranking(store, f)
    assert list(ranking.ranked) == expected == ["a", "e", "b", "c", "d"]  # b, c tie: by name
    assert ranking.defaults(4) == expected[:4]
    assert UNSCORED not in ranking.defaults(4) and ranking.unscored == (UNSCORED,)
    assert ranking.options[-1] == UNSCORED  # offered last, labelled
    assert ranking.label(UNSCORED) == f"{UNSCORED} (no scores from {JUDGE})"
    assert ranking.label("a") == "a"
    assert ranking.order(["d", UNSCORED, "c", "a"])[:2] == ["a", "c"]  # Compare's defaults
    assert ranking.order(ranking.defaults(4))[:2] == expected[:2]


def test_compare_defaults_to_the_top_two_unless_they_share_nothing(store):
    f = Filters("scored", JUDGE)
    ordered = radar.model_ranking(store, f, tuple(SCORED_MODELS)).defaults(4)
    assert radar.compare_defaults(store, f, tuple(ordered)) == tuple(ordered[:2])
    assert not radar.compare(store, f, *ordered[:2], n_boot=50).empty
    # Levels 1 and 5: a (1-2) and e (5-6) still rank first and second but share nothing; b is
    # the best-ranked model that shares instances with a.
    ends = Filters("scored", JUDGE, difficulties=(1, 5))
    ordered = radar.model_ranking(store, ends, tuple(SCORED_MODELS)).defaults(4)
    assert ordered == _pandas_ranking(store, ends)[:4] == ["a", "e", "b", "c"]
    assert radar.compare(store, ends, "a", "e", n_boot=50).empty
    assert radar.compare_defaults(store, ends, tuple(ordered)) == ("a", "b")
    assert radar.compare_defaults(store, f, ("e", "d")) == ("e", "d")  # none shares: the second


def test_radar_ranking_follows_filters_and_the_sidebar_models(store):
    hard = Filters("scored", JUDGE, difficulties=(5,))
    ranking = radar.model_ranking(store, hard, tuple(SCORED_MODELS))
    assert list(ranking.ranked) == _pandas_ranking(store, hard) == ["e"]  # e alone on 5-6
    assert set(ranking.unscored) == set(SCORED_MODELS) - {"e"}
    picked = radar.model_ranking(store, Filters("scored", JUDGE, models=("d", "b")),
                                 tuple(SCORED_MODELS))  # fmt: skip
    assert picked.options == ["b", "d"]
    nojudge = radar.model_ranking(store, Filters("scored"), tuple(SCORED_MODELS))
    assert nojudge.ranked == () and nojudge.defaults() == []


def test_radar_ranking_pools_mixed_scales_on_zero_to_one(tmp_path):
    s = Store(tmp_path / "c.duckdb")
    csv = tmp_path / "custom.csv"
    csv.write_text(
        "instance_id,model,judge,skill,score,scale_min,scale_max\n"
        "1,a,j,helpful,10,1,10\n2,a,j,helpful,1,1,10\n1,a,j,safe,0,0,1\n2,a,j,safe,0,0,1\n"
        "1,b,j,helpful,4,1,10\n2,b,j,helpful,4,1,10\n1,b,j,safe,1,0,1\n2,b,j,safe,1,0,1\n"
    )
    import_scores(s, csv, dataset="c")
    ranking = radar.model_ranking(s, Filters("c", "j"), ("a", "b"))
    # a: (1 + 0 + 0 + 0) / 4 = 0.25; b: (1/3 + 1/3 + 1 + 1) / 4 = 2/3 (a raw mean would rank a)
    assert ranking.ranked == ("b", "a")
    assert ranking.overall["a"] == pytest.approx(0.25)
    assert ranking.overall["b"] == pytest.approx((2 / 3 + 2) / 4)
