"""What an empty page says: why nothing shows, and the next step.

Every page that can come up empty asks here, with cheap counts, which cause applies and returns
one ``EmptyState``: the cause (one of the constants below), a title and a message in plain text,
the buttons the app can act on (``Action``: a page to open, its query parameters, and an optional
queue to fill first) and the exact command lines where the terminal is the way. Pages draw it
with ``pages.common.empty_state``; nothing here knows about streamlit.

Causes, from the widest to the narrowest:

- ``NO_INSTANCES``: the dataset holds no instructions at all;
- ``NO_RESPONSES``: it has instructions but no model responses to read, judge or annotate;
- ``NO_SCORES``: it has responses but nobody (judge or human) has scored them;
- ``NO_JUDGE``: it has scores, but no judge is chosen in the sidebar;
- ``FILTERED_OUT``: the chosen judge has scores, but the sidebar's filters exclude them all
  (``widen`` names each filter whose widening alone brings data back).

The data pages' states are built in ``guidance_data`` (Overview, Skill radar, Breakdowns,
Samples), the work pages' in ``guidance_work`` (a missing scorer on Human vs judge, two scorers
without common items, empty queues on Annotate and Re-judge).
"""

from __future__ import annotations

import shlex
from collections.abc import Callable
from dataclasses import dataclass, field, replace

import duckdb

from analysis.core.filters import Filters, filter_sql
from analysis.core.store import REPO_ROOT, Store, user_data_dir
from analysis.views import queues

# Counts of one dataset (one query: the widest causes need nothing else).
DATASET_FACTS = """
SELECT (SELECT count(*) FROM instances WHERE dataset = ?) AS instances,
       (SELECT count(*) FROM responses WHERE dataset = ?) AS responses,
       (SELECT count(*) FROM latest_scores WHERE dataset = ?) AS scores
"""

# What a slice holds, by unit. {where} is filter_sql's fragment: for scores with the judge, for
# responses without it (aliased s, like scores), for instances over ``i`` alone.
SLICE_COUNTS = {
    "scores": "SELECT count(*) FROM latest_scores s JOIN instances i USING (dataset, instance_id) "
    "WHERE {where}",
    "responses": "SELECT count(*) FROM responses s JOIN instances i USING (dataset, instance_id) "
    "WHERE {where}",
    "instances": "SELECT count(*) FROM instances i WHERE {where}",
}

# The first responses of the slice with a text (to queue them), optionally only those a given
# scorer has scored (so a human's labels line up with that judge's scores).
SLICE_RESPONSES = """
SELECT s.instance_id, s.model
FROM responses s JOIN instances i USING (dataset, instance_id)
WHERE {where} AND s.text IS NOT NULL
  AND (len(?::VARCHAR[]) = 0 OR EXISTS (
      SELECT 1 FROM latest_scores l
      WHERE l.dataset = s.dataset AND l.instance_id = s.instance_id AND l.model = s.model
        AND list_contains(?::VARCHAR[], l.judge)))
ORDER BY TRY_CAST(s.instance_id AS BIGINT) NULLS LAST, s.instance_id, s.model
LIMIT ?
"""

NO_INSTANCES = "no-instances"
NO_RESPONSES = "no-responses"
NO_SCORES = "no-scores"
NO_JUDGE = "no-judge"
FILTERED_OUT = "filtered-out"
UNSCORED_MODELS = "unscored-models"
NO_SHARED_INSTANCES = "no-shared-instances"

REJUDGE_PAGE = "pages/rejudge.py"
ANNOTATE_PAGE = "pages/annotate.py"
SAMPLES_PAGE = "pages/samples.py"
# The Re-judge page's URL parameter for its selection, "filters" (the sidebar's slice) or
# "queue" (analysis.views.state declares it; a link's value is applied when it arrives).
SELECT_PARAM = "source"
ANNOTATE_BATCH = 20  # responses a button queues for annotation: a sitting's worth
FLASK_DATASETS = ("flask", "flask-hard")  # what import-flask writes

# The sidebar's filters: Filters field → the label the sidebar shows.
FILTER_LABELS = {
    "models": "Models",
    "domains": "Domain",
    "difficulties": "Difficulty",
    "source_tasks": "Source task",
    "flask_hard_only": "FLASK-Hard only",
}
INSTANCE_FILTERS = ("domains", "difficulties", "source_tasks", "flask_hard_only")


@dataclass(frozen=True)
class QueueFill:
    """Before opening the page, queue the first ``limit`` responses of ``filters``' slice (only
    those ``scored_by`` one of these scorers, when given)."""

    queue: str
    filters: Filters
    limit: int
    scored_by: tuple[str, ...] = ()


@dataclass(frozen=True)
class Action:
    """A next step the app can take: open ``page`` with ``query`` (after ``fill``, if any)."""

    label: str
    page: str
    query: dict[str, str] = field(default_factory=dict)
    fill: QueueFill | None = None
    icon: str | None = None


@dataclass(frozen=True)
class EmptyState:
    """Why a page (or a part of it) shows nothing, and what to do about it. ``message`` and
    ``commands`` are plain text (they carry dataset, judge and model names: render as text).
    ``blocks``: the page cannot go on (else it is a note above a page that still works)."""

    cause: str
    title: str
    message: str
    actions: tuple[Action, ...] = ()
    commands: tuple[str, ...] = ()
    widen: tuple[str, ...] = ()  # labels of the sidebar filters whose widening alone helps
    blocks: bool = True


@dataclass(frozen=True)
class Facts:
    instances: int
    responses: int
    scores: int


# ---------------------------------------------------------------- commands


def _db_flag(store: Store) -> list[str]:
    """``--db PATH`` unless a terminal without $FINEGRAIN_DB would open this store anyway."""
    checkout = REPO_ROOT / "data" / "finegrain.duckdb"
    default = checkout if (REPO_ROOT / "app.py").is_file() else user_data_dir() / "finegrain.duckdb"
    return [] if store.path.resolve() == default.resolve() else ["--db", str(store.path)]


PLACEHOLDERS = ("FILE", "NAME", "MODEL")  # what the user replaces in a command line


def _line(parts: list[str]) -> str:
    """One command line: names and paths quoted for a POSIX shell, placeholders left bare."""
    return " ".join(p if p in PLACEHOLDERS else shlex.quote(p) for p in parts)


def import_command(store: Store, dataset: str, *, human: bool = False) -> str:
    """The command that imports a scores file into this dataset (human labels: ``human``)."""
    extra = ["--kind", "human", "--judge", "NAME"] if human else []
    return _line(["finegrain", "import-scores", "FILE", "--dataset", dataset, *extra,
                  *_db_flag(store)])  # fmt: skip


def judge_command(store: Store, f: Filters) -> str:
    """The command that scores the dataset's responses (the sidebar's models) with an LLM."""
    models = ["--models", ",".join(f.models)] if f.models else []
    return _line(["finegrain", "judge", "--backend", "openai", "--model", "MODEL", "--dataset",
                  f.dataset, *models, *_db_flag(store)])  # fmt: skip


def flask_command(store: Store) -> str:
    return _line(["finegrain", "import-flask", *_db_flag(store)])


# ---------------------------------------------------------------- counting


def facts(con: duckdb.DuckDBPyConnection, dataset: str) -> Facts:
    return Facts(*con.execute(DATASET_FACTS, [dataset] * 3).fetchone())


def count(con: duckdb.DuckDBPyConnection, unit: str, f: Filters) -> int:
    """Scores (of ``f.judge``), responses or instances in the sidebar's slice."""
    if unit == "instances":
        where, params = filter_sql(replace(f, judge=None, models=()), alias="i")
    elif unit == "responses":
        where, params = filter_sql(replace(f, judge=None))
    else:
        where, params = filter_sql(f)
    return con.execute(SLICE_COUNTS[unit].format(where=where), params).fetchone()[0]


def active_filters(f: Filters, names: tuple[str, ...] = tuple(FILTER_LABELS)) -> list[str]:
    return [n for n in names if getattr(f, n)]


def widen(
    f: Filters, counter: Callable[[Filters], int], names: tuple[str, ...] = tuple(FILTER_LABELS)
) -> list[tuple[str, int]]:
    """(label, count) for each active filter whose widening alone brings something back."""
    out = []
    for name in active_filters(f, names):
        n = counter(replace(f, **{name: getattr(Filters(f.dataset), name)}))  # "all" again
        if n:
            out.append((FILTER_LABELS[name], n))
    return out


def describe(f: Filters, names: tuple[str, ...] = tuple(FILTER_LABELS)) -> str:
    """The active filters in words: 'Difficulty is 1 and FLASK-Hard only'."""
    parts = []
    for name in active_filters(f, names):
        value = getattr(f, name)
        if name == "flask_hard_only":
            parts.append("FLASK-Hard only")
        else:
            parts.append(f"{FILTER_LABELS[name]} is {' or '.join(str(v) for v in value)}")
    return " and ".join(parts)


def widen_sentence(
    found: list[tuple[str, int]], unit: str, f: Filters, names: tuple[str, ...] = ()
) -> str:
    """Which filters to widen, with what each brings back (``unit``: a plural noun); when no
    single one helps, the active ones (among ``names``, default all) to clear together."""
    names = names or tuple(FILTER_LABELS)
    if found:
        options = " or ".join(
            f"{label} ({plural(n, unit[:-1], unit)} without it)" for label, n in found
        )
        return f"Widen {options} in the sidebar."
    labels = [FILTER_LABELS[n] for n in active_filters(f, names)]
    if len(labels) > 1:
        return f"No single filter brings {unit} back: clear several of {', '.join(labels)}."
    return f"Clear {labels[0]} in the sidebar." if labels else ""


def plural(n: int, word: str, many: str | None = None) -> str:
    return f"{n:,} {word if n == 1 else many or word + 's'}"


# ---------------------------------------------------------------- next steps the app can take


def rejudge_slice() -> Action:
    return Action("Re-judge this slice", REJUDGE_PAGE, {SELECT_PARAM: "filters"},
                  icon=":material/gavel:")  # fmt: skip


def annotate_slice(f: Filters, scored_by: tuple[str, ...] = (), label: str = "") -> Action:
    """Queue responses of the slice for annotation (only those ``scored_by`` scored, so the
    labels line up with theirs), then open Annotate."""
    fill = QueueFill(queues.ANNOTATE, f, ANNOTATE_BATCH, tuple(scored_by))
    label = label or f"Annotate {ANNOTATE_BATCH} responses of this slice"
    return Action(label, ANNOTATE_PAGE, fill=fill, icon=":material/edit_note:")


def open_samples() -> Action:
    return Action("Open Samples", SAMPLES_PAGE, icon=":material/search:")


def fill_queue(store: Store, fill: QueueFill) -> int:
    """Queue the first responses of a slice (the click behind an Action); returns how many
    were added (already queued ones keep their place)."""
    where, params = filter_sql(replace(fill.filters, judge=None))
    scored_by = list(fill.scored_by)
    with store.read() as con:
        keys = con.execute(
            SLICE_RESPONSES.format(where=where), [*params, scored_by, scored_by, fill.limit]
        ).fetchall()
    return queues.add(store, fill.queue, fill.filters.dataset, keys) if keys else 0


# ---------------------------------------------------------------- causes every page shares


def no_instances(store: Store, dataset: str) -> EmptyState:
    commands = [import_command(store, dataset)]
    commands += [flask_command(store)] if dataset in FLASK_DATASETS else []
    return EmptyState(
        NO_INSTANCES,
        "No instances.",
        f"The dataset {dataset} holds no instructions, so there is nothing to show. Import a "
        "scores file whose rows name the instruction and the response (optional columns "
        "instruction, reference, response, domain, difficulty), or choose another dataset "
        "in the sidebar.",
        commands=tuple(commands),
    )


def no_responses(store: Store, dataset: str, n_instances: int) -> EmptyState:
    commands = [flask_command(store)] if dataset in FLASK_DATASETS else []
    return EmptyState(
        NO_RESPONSES,
        "No responses.",
        f"The dataset {dataset} has {plural(n_instances, 'instance')} but no model responses to "
        "read, judge or annotate. Import them with the scores that refer to them (a scores "
        "file with a response column).",
        commands=(*commands, import_command(store, dataset)),
    )
