"""Empty states of the data pages: Overview, Skill radar, Breakdowns, Samples (see
``guidance`` for the records and the causes)."""

from __future__ import annotations

from dataclasses import replace

from analysis.core.filters import Filters, filter_sql
from analysis.core.store import Store
from analysis.views import samples
from analysis.views.guidance import (
    FILTER_LABELS,
    FILTERED_OUT,
    FLASK_DATASETS,
    INSTANCE_FILTERS,
    NO_JUDGE,
    NO_SCORES,
    NO_SHARED_INSTANCES,
    UNSCORED_MODELS,
    EmptyState,
    Facts,
    active_filters,
    annotate_slice,
    count,
    describe,
    facts,
    flask_command,
    import_command,
    judge_command,
    no_instances,
    no_responses,
    plural,
    rejudge_slice,
    widen,
    widen_sentence,
)

HARD_WIDEN = ("domains", "difficulties", "source_tasks")  # instance filters but the toggle
NO_FLASK_HARD = "no-flask-hard"
HARD_UNSCORED = "hard-unscored"

# Everyone with scores in the slice (the judge filter left out), most scores first.
SCORERS_IN_SLICE = """
SELECT s.judge, count(*) AS n
FROM latest_scores s JOIN instances i USING (dataset, instance_id)
WHERE {where}
GROUP BY s.judge ORDER BY n DESC, s.judge
"""

# Instances the judge scored (a number, not N/A) for each of two models, and those both have.
PAIR_INSTANCES = """
WITH per AS (
    SELECT DISTINCT s.model, s.instance_id
    FROM latest_scores s JOIN instances i USING (dataset, instance_id)
    WHERE {where} AND s.score IS NOT NULL AND list_contains(?::VARCHAR[], s.model)
)
SELECT count(*) FILTER (WHERE model = ?) AS a, count(*) FILTER (WHERE model = ?) AS b,
       (SELECT count(*) FROM (SELECT instance_id FROM per GROUP BY instance_id
                              HAVING count(DISTINCT model) = 2)) AS shared
FROM per
"""


def _no_scores(store: Store, con, f: Filters, fx: Facts) -> EmptyState:
    if not fx.responses:
        return no_responses(store, f.dataset, fx.instances)
    in_slice = count(con, "responses", f)
    if in_slice:
        how = (
            "Score them here: re-judge the sidebar's slice "
            f"({plural(in_slice, 'response')}) with an LLM judge, or annotate it yourself; "
            "or import scores from a file."
        )
        actions = (rejudge_slice(), annotate_slice(f))
    else:
        found = widen(f, lambda g: count(con, "responses", g))
        how = "The sidebar's filters leave no response to score. " + widen_sentence(
            found, "responses", f
        )
        actions = ()
    commands = [import_command(store, f.dataset), judge_command(store, f)]
    if f.dataset in FLASK_DATASETS:  # FLASK's own GPT-4 reviews, from a source that has them
        commands.append(flask_command(store))
    return EmptyState(
        NO_SCORES,
        "No scores yet.",
        f"The dataset {f.dataset} has no scores at all: none of its "
        f"{plural(fx.responses, 'response')} has been judged or annotated. {how}",
        actions=actions,
        commands=tuple(commands),
    )


def scores(store: Store, f: Filters) -> EmptyState:
    """Why a page of one judge's scores under the sidebar's filters (Overview's leaderboard,
    Skill radar, Breakdowns) has nothing to show, and what to do next."""
    with store.read() as con:
        fx = facts(con, f.dataset)
        if not fx.instances and not fx.scores:
            return no_instances(store, f.dataset)
        if not fx.scores:
            return _no_scores(store, con, f, fx)
        where, params = filter_sql(replace(f, judge=None))
        others = con.execute(SCORERS_IN_SLICE.format(where=where), params).fetchall()
        if not f.judge:
            names = ", ".join(j for j, _ in others) or "none under these filters"
            return EmptyState(
                NO_JUDGE,
                "No judge chosen.",
                f"The dataset {f.dataset} has scores, but no judge is chosen: pick one in the "
                f"sidebar's Judge box (scorers here: {names}).",
            )
        return _filtered_out(con, f, others)


def _filtered_out(con, f: Filters, others: list) -> EmptyState:
    total = count(con, "scores", Filters(f.dataset, f.judge))
    found = widen(f, lambda g: count(con, "scores", g))
    where = describe(f)
    head = (
        f"No scores match the current filters. Judge {f.judge} has {plural(total, 'score')} in "
        f"dataset {f.dataset}, none where {where}. {widen_sentence(found, 'scores', f)}"
        if where
        else f"Judge {f.judge} has no scores in {f.dataset}."
    )
    rest, actions = [], []
    unscored = count(con, "responses", f)
    if unscored:
        rest.append(
            f"This slice has {plural(unscored, 'response')} {f.judge} has not scored: re-judge "
            "them with an LLM judge, or annotate them."
        )
        actions = [rejudge_slice(), annotate_slice(f)]
    shown = [f"{j} ({n:,})" for j, n in others if j != f.judge][:5]
    if shown:
        rest.append(
            f"Other scorers have scores here: {', '.join(shown)}; choose one in the sidebar's "
            "Judge box."
        )
    return EmptyState(
        FILTERED_OUT,
        "Nothing in this slice.",
        " ".join([head, *rest]),
        actions=tuple(actions),
        widen=tuple(label for label, _ in found),
    )


def instances(store: Store, f: Filters) -> EmptyState:
    """Why Coverage (instances per skill × domain, no judge needed) is empty."""
    with store.read() as con:
        fx = facts(con, f.dataset)
        if not fx.instances:
            return no_instances(store, f.dataset)
        found = widen(f, lambda g: count(con, "instances", g), INSTANCE_FILTERS)
    return EmptyState(
        FILTERED_OUT,
        "No instances in this slice.",
        f"No instances match the current filters: {f.dataset} has "
        f"{plural(fx.instances, 'instance')}, none where {describe(f, INSTANCE_FILTERS)}. "
        f"{widen_sentence(found, 'instances', f, INSTANCE_FILTERS)}",
        widen=tuple(label for label, _ in found),
    )


def _search_variants(q: samples.SampleQuery) -> list[tuple[str, samples.SampleQuery]]:
    """The page's own constraints, each left out in turn."""
    out = []
    if q.text.strip():
        out.append((f"the search '{q.text.strip()}'", replace(q, text="")))
    if q.ranges:
        out.append(("the score ranges", replace(q, ranges=())))
    if q.min_disagreement is not None:
        out.append(("the disagreement threshold", replace(q, min_disagreement=None)))
    for name in active_filters(q.filters):
        wider = replace(q.filters, **{name: getattr(Filters(q.filters.dataset), name)})
        out.append((f"the sidebar's {FILTER_LABELS[name]}", replace(q, filters=wider)))
    return out


def samples_search(store: Store, q: samples.SampleQuery) -> EmptyState:
    """Why the Samples page lists no response: no responses at all, or which of the search,
    the score ranges, the disagreement threshold and the sidebar's filters to relax."""
    with store.read() as con:
        fx = facts(con, q.filters.dataset)
    if not fx.instances:
        return no_instances(store, q.filters.dataset)
    if not fx.responses:
        return no_responses(store, q.filters.dataset, fx.instances)
    found = []
    for label, variant in _search_variants(q):
        n = samples.search(store, replace(variant, page=0, page_size=1)).total
        if n:
            found.append((label, n))
    if found:
        hint = "Relax " + " or ".join(f"{label} ({plural(n, 'match', 'matches')} without it)"
                                      for label, n in found) + "."  # fmt: skip
    else:
        hint = "No single constraint brings responses back: clear the search and several filters."
    return EmptyState(
        FILTERED_OUT,
        "Nothing matches.",
        f"No responses match the search and filters ({plural(fx.responses, 'response')} in "
        f"{q.filters.dataset}). {hint}",
        widen=tuple(label for label, _ in found),
    )


def unscored_models(f: Filters, picked: tuple[str, ...], ranked: tuple[str, ...]) -> EmptyState:
    """The radar's picks all lack scores from the judge under the filters (pure: the page has
    the ranking of the models that do)."""
    best = ", ".join(ranked[:6]) + (", …" if len(ranked) > 6 else "")
    return EmptyState(
        UNSCORED_MODELS,
        "No scores for these models.",
        f"None of the picked models ({', '.join(picked)}) has scores from judge {f.judge} "
        f"under the current filters. Pick models that do (best Overall first): {best}.",
    )


def compare_overlap(store: Store, f: Filters, a: str, b: str) -> EmptyState:
    """Why two models have no paired comparison: the instances each has scores on from the
    judge under the filters, and which filter to widen for shared ones."""

    def pair_counts(g: Filters) -> tuple[int, int, int]:
        where, params = filter_sql(replace(g, models=()))
        return con.execute(PAIR_INSTANCES.format(where=where), [*params, [a, b], a, b]).fetchone()

    with store.read() as con:
        n_a, n_b, _ = pair_counts(f)
        found = widen(f, lambda g: pair_counts(g)[2], INSTANCE_FILTERS)
    hint = widen_sentence(found, "shared instances", f, INSTANCE_FILTERS) if found else (
        "Choose another pair: by default Model A and Model B are the two best-scored models."
    )  # fmt: skip
    return EmptyState(
        NO_SHARED_INSTANCES,
        "No shared instances.",
        f"{a} and {b} share no instance scored by judge {f.judge} under the current filters "
        f"({a}: {plural(n_a, 'instance')}, {b}: {plural(n_b, 'instance')}), so there is "
        f"nothing to pair. {hint}",
        widen=tuple(label for label, _ in found),
    )


def hard_instances(store: Store, f: Filters) -> EmptyState:
    """Why Breakdowns' FLASK-Hard comparison is empty: the dataset marks no FLASK-Hard
    instance, the filters exclude them, or the judge has not scored those in the slice."""
    hard = replace(f, flask_hard_only=True)
    with store.read() as con:
        total = count(con, "instances", Filters(f.dataset, flask_hard_only=True))
        in_slice = count(con, "instances", hard) if total else 0
        found = [] if in_slice else widen(hard, lambda g: count(con, "instances", g), HARD_WIDEN)
    if not total:
        why = (
            f"No instance of {f.dataset} is marked FLASK-Hard (FLASK's own data marks them), "
            "so there is nothing to compare with the full set."
        )
    elif not in_slice:
        why = (
            f"None of the {plural(total, 'FLASK-Hard instance')} of {f.dataset} is in this "
            f"slice ({describe(f, HARD_WIDEN)}). "
            f"{widen_sentence(found, 'FLASK-Hard instances', f, HARD_WIDEN)}"
        )
    else:
        why = (
            f"Judge {f.judge} has not scored the {plural(in_slice, 'FLASK-Hard instance')} of "
            "this slice: re-judge them, or choose another judge in the sidebar."
        )
    return EmptyState(
        HARD_UNSCORED if in_slice else FILTERED_OUT if total else NO_FLASK_HARD,
        "No FLASK-Hard scores here.",
        why,
        widen=tuple(label for label, _ in found),
        blocks=False,
    )
