"""Empty states of the work pages: Human vs judge (a missing scorer, two scorers without common
items), Annotate and Re-judge (empty queues, an empty slice). See ``guidance`` for the records.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from analysis.core.filters import Filters, filter_sql
from analysis.core.store import Store
from analysis.views import queues
from analysis.views.criteria import labels_in
from analysis.views.guidance import (
    ANNOTATE_BATCH,
    ANNOTATE_PAGE,
    FILTERED_OUT,
    REJUDGE_PAGE,
    SELECT_PARAM,
    Action,
    EmptyState,
    QueueFill,
    annotate_slice,
    count,
    facts,
    import_command,
    judge_command,
    no_instances,
    no_responses,
    open_samples,
    plural,
    rejudge_slice,
    widen,
    widen_sentence,
)
from analysis.views.scorers import apart, resolve, scorer_options, skill_label

if TYPE_CHECKING:  # the Annotate page imports this module: no statistics (scipy) on its path
    from analysis.views.agreement import AgreementQuery

# Items (response × skill with a number) each side scored in the slice, and those both did.
ALIGNED_ITEMS = """
WITH a AS (SELECT DISTINCT s.instance_id, s.model, s.skill
           FROM latest_scores s JOIN instances i USING (dataset, instance_id)
           WHERE {where} AND list_contains(?::VARCHAR[], s.judge) AND s.score IS NOT NULL
             AND (?::VARCHAR IS NULL OR s.skill = ?)),
     b AS (SELECT DISTINCT s.instance_id, s.model, s.skill
           FROM latest_scores s JOIN instances i USING (dataset, instance_id)
           WHERE {where} AND list_contains(?::VARCHAR[], s.judge) AND s.score IS NOT NULL
             AND (?::VARCHAR IS NULL OR s.skill = ?))
SELECT (SELECT count(*) FROM a), (SELECT count(*) FROM b),
       (SELECT count(*) FROM a JOIN b USING (instance_id, model, skill))
"""

MISSING_SCORER = "missing-scorer"
NO_HUMANS = "no-humans"
NO_LLM_JUDGE = "no-llm-judge"
NO_ALIGNED_ITEMS = "no-aligned-items"
ANNOTATE_QUEUE_EMPTY = "annotate-queue-empty"
REJUDGE_QUEUE_EMPTY = "rejudge-queue-empty"
REJUDGE_BATCH = 50  # responses a button queues for re-judging (the page's own default)
WHY_HUMANS = "Human labels show how far an LLM judge can be trusted."


def rejudge_scored_by(f: Filters, judges: tuple[str, ...], who: str) -> Action:
    """Queue the responses these scorers scored, then open Re-judge on its queue."""
    fill = QueueFill(queues.REJUDGE, f, REJUDGE_BATCH, judges)
    return Action(f"Re-judge {REJUDGE_BATCH} responses {who} scored", REJUDGE_PAGE,
                  {SELECT_PARAM: "queue"}, fill=fill, icon=":material/gavel:")  # fmt: skip


def scorers_gap(store: Store, f: Filters) -> EmptyState | None:
    """What Human vs judge lacks: nothing (None); a second scorer (``blocks``); or, as a note
    above a page that works, human labels (two LLM judges) or an LLM judge (two humans)."""
    known = scorer_options(store, f.dataset)
    kinds = dict(zip(known["judge"], known["kind"].fillna("llm"), strict=True))
    llms = tuple(j for j, k in kinds.items() if k == "llm")
    humans = tuple(j for j, k in kinds.items() if k == "human")
    if llms and humans:
        return None
    if not kinds:
        return _no_scorers(store, f)
    if len(kinds) == 1 and llms:
        return EmptyState(
            MISSING_SCORER,
            "One scorer only.",
            f"Human vs judge compares two scorers on the same items. Only the LLM judge "
            f"{llms[0]} has scores in dataset {f.dataset}; missing: human labels (or a second "
            f"judge). {WHY_HUMANS} Annotate responses {llms[0]} scored, or import labels from a "
            "file.",
            actions=(
                annotate_slice(f, llms, f"Annotate {ANNOTATE_BATCH} responses it scored"),
                rejudge_slice(),
            ),
            commands=(import_command(store, f.dataset, human=True), judge_command(store, f)),
        )
    if len(kinds) == 1:
        return EmptyState(
            MISSING_SCORER,
            "One scorer only.",
            f"Human vs judge compares two scorers on the same items. Only the human annotator "
            f"{humans[0]} has scores in dataset {f.dataset}; missing: an LLM judge (or a second "
            f"annotator). Re-judge the responses {humans[0]} scored, or import a judge's "
            "scores from a file.",
            actions=(
                rejudge_scored_by(f, humans, "they"),
                annotate_slice(f, humans, f"Annotate {ANNOTATE_BATCH} responses they scored"),
            ),
            commands=(judge_command(store, f), import_command(store, f.dataset)),
        )
    if not humans:
        return EmptyState(
            NO_HUMANS,
            "No human labels yet.",
            f"{f.dataset} has no human labels, so A and B can only be LLM judges "
            f"({', '.join(llms)}). {WHY_HUMANS}",
            actions=(
                annotate_slice(
                    f, llms[:1], f"Annotate {ANNOTATE_BATCH} responses {llms[0]} scored"
                ),
            ),
            commands=(import_command(store, f.dataset, human=True),),
            blocks=False,
        )
    return EmptyState(
        NO_LLM_JUDGE,
        "No LLM judge yet.",
        f"{f.dataset} has no LLM judge's scores, so A and B can only be human annotators "
        f"({', '.join(humans)}). Re-judge what they scored to see how a judge compares.",
        actions=(rejudge_scored_by(f, humans, "they"),),
        commands=(judge_command(store, f),),
        blocks=False,
    )


def _no_scorers(store: Store, f: Filters) -> EmptyState:
    with store.read() as con:
        fx = facts(con, f.dataset)
    if not fx.instances:
        return no_instances(store, f.dataset)
    if not fx.responses:
        return no_responses(store, f.dataset, fx.instances)
    return EmptyState(
        MISSING_SCORER,
        "No scorers yet.",
        f"Human vs judge compares two scorers on the same items, usually an LLM judge against "
        f"human labels. {f.dataset} has no scores yet: both are missing. Re-judge the "
        "sidebar's slice and annotate the same responses, or import scores from files.",
        actions=(rejudge_slice(), annotate_slice(f)),
        commands=(judge_command(store, f), import_command(store, f.dataset, human=True)),
    )


def _is_human(spec: str, judges: tuple[str, ...], kinds: dict[str, str]) -> bool:
    return spec == "kind:human" or all(kinds.get(j) == "human" for j in judges)


def aligned_items(store: Store, q: AgreementQuery) -> EmptyState:
    """Why A and B have no aligned scores in the slice: what each side scored here, and the
    filter (or skill) whose widening gives them common items; buttons to fill the gap."""
    known = scorer_options(store, q.filters.dataset)
    kinds = dict(zip(known["judge"], known["kind"].fillna("llm"), strict=True))
    a, b, _ = apart(resolve(q.a, known), resolve(q.b, known))
    f = replace(q.filters, judge=None)

    def sides(g: Filters, skill: str | None) -> tuple[int, int, int]:
        where, params = filter_sql(g)
        args = [*params, list(a.judges), skill, skill, *params, list(b.judges), skill, skill]
        return con.execute(ALIGNED_ITEMS.format(where=where), args).fetchone()

    with store.read() as con:
        n_a, n_b, _ = sides(f, q.skill)
        found = widen(f, lambda g: sides(g, q.skill)[2])
        labels = labels_in(con, f.dataset)
        any_skill = sides(f, None)[2] if q.skill else 0
    hints = [widen_sentence(found, "aligned items", f)] if found else []
    if any_skill:
        hints.append(f"Or choose All skills ({plural(any_skill, 'aligned item')}).")
    actions = []
    if n_a and not n_b and _is_human(q.b, b.judges, kinds):
        actions.append(annotate_slice(f, a.judges, f"Annotate {ANNOTATE_BATCH} responses A scored"))
    if n_b and not n_a and not _is_human(q.a, a.judges, kinds):
        actions.append(rejudge_scored_by(f, b.judges, "B"))
    if not hints and not actions:
        hints.append("Choose another pair of scorers, or score the same responses with both.")
    skill = f" on {skill_label(q.skill, labels)}" if q.skill else ""
    return EmptyState(
        NO_ALIGNED_ITEMS,
        "No common items.",
        f"{q.a} and {q.b} have no aligned scores in this slice{skill}: A scored "
        f"{plural(n_a, 'item')} here and B {plural(n_b, 'item')}, none of them the same item "
        f"(an item is a response × skill with a score, not N/A). {' '.join(hints)}",
        actions=tuple(actions),
        widen=tuple(label for label, _ in found),
    )


def annotate_queue(store: Store, f: Filters, annotator: str = "") -> EmptyState:
    """The annotate queue is empty: fill it from Samples, or with the sidebar's slice here."""
    with store.read() as con:
        fx = facts(con, f.dataset)
        in_slice = count(con, "responses", f) if fx.responses else 0
        found = [] if in_slice else widen(f, lambda g: count(con, "responses", g))
    if not fx.instances:
        return no_instances(store, f.dataset)
    if not fx.responses:
        return no_responses(store, f.dataset, fx.instances)
    how = (
        f"or queue the first {ANNOTATE_BATCH} of the sidebar's slice "
        f"({plural(in_slice, 'response')}) here."
        if in_slice
        else "(the sidebar's filters leave no response here: "
        f"{widen_sentence(found, 'responses', f)})"
    )
    fill = QueueFill(queues.ANNOTATE, f, ANNOTATE_BATCH)
    query = {"annotator": annotator} if annotator else {}
    queue_here = Action(f"Queue {ANNOTATE_BATCH} responses of this slice", ANNOTATE_PAGE, query,
                        fill=fill, icon=":material/playlist_add:")  # fmt: skip
    return EmptyState(
        ANNOTATE_QUEUE_EMPTY,
        "Nothing to annotate.",
        f"The annotate queue of this dataset is empty ({f.dataset}). Select responses on the "
        f"Samples page and press Add to annotate queue, {how}",
        actions=((queue_here,) if in_slice else ()) + (open_samples(),),
        widen=tuple(label for label, _ in found),
    )


def rejudge_selection(store: Store, f: Filters, source: str) -> EmptyState:
    """Nothing to re-judge: the queue is empty (fill it, or use the filters), or the sidebar's
    filters leave no response (which filter to widen)."""
    with store.read() as con:
        fx = facts(con, f.dataset)
        in_slice = count(con, "responses", f) if fx.responses else 0
        found = [] if in_slice else widen(f, lambda g: count(con, "responses", g))
    if not fx.instances:
        return no_instances(store, f.dataset)
    if not fx.responses:
        return no_responses(store, f.dataset, fx.instances)
    if source == "queue":
        by_filters = Action("Re-judge by the sidebar's filters", REJUDGE_PAGE,
                            {SELECT_PARAM: "filters"}, icon=":material/filter_alt:")  # fmt: skip
        slice_note = f" ({plural(in_slice, 'response')})" if in_slice else ""
        return EmptyState(
            REJUDGE_QUEUE_EMPTY,
            "Nothing to re-judge.",
            f"The re-judge queue of this dataset is empty ({f.dataset}). Add responses to the "
            "re-judge queue on the Samples page (or from Human vs judge's worst "
            f"disagreements), or re-judge by the sidebar's filters{slice_note}.",
            actions=((by_filters,) if in_slice else ()) + (open_samples(),),
        )
    return EmptyState(
        FILTERED_OUT,
        "Nothing in this slice.",
        f"The sidebar's filters leave no response of {f.dataset} to re-judge. "
        f"{widen_sentence(found, 'responses', f)}",
        widen=tuple(label for label, _ in found),
    )
