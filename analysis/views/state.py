"""The view in the URL: the query-parameter contract, how a link's values are read back, and the
defaults a session opens with. Pure logic (no streamlit); ``pages.common`` holds the glue.

Every page's URL carries the sidebar's view, so a reload, a new tab, a bookmark or a link opened
on another server show the same thing:

    dataset   the dataset id                      judge     the sidebar's judge
    models    sidebar model filter (repeated)     domains   domain filter (repeated)
    levels    difficulty levels 1-5 (repeated)    tasks     source-task filter (repeated)
    hard      1 = FLASK-Hard only

and each page adds its own picks (repeated = the parameter appears once per value):

    Overview      rank (the leaderboard's "Rank by" group)
    Skill radar   radar (models, repeated), axes (skill | ability), published (1 = overlay),
                  compare (1 = the comparison open), ca, cb (the two models compared)
    Breakdowns    model (the heatmaps' model), section (the open tab)
    Human vs j.   a, b (scorers: a judge or kind:human / kind:llm), level, skill, stat, by
    Judges        section (the open tab), stat, level (the leaderboard's statistic and level),
                  alpha (Stability's α level)
    Samples       q (search text), in (fields searched, repeated), skill, sort,
                  instance + model (the response shown in the detail view)
    Annotate      annotator
    Re-judge      source (queue | filters), limit (responses taken by the filters)

Example: ``/radar?dataset=flask&judge=gpt-4&domains=Math&radar=vicuna-13b&radar=alpaca-13b
&axes=ability``. A value the store does not have (an unknown dataset, judge or model) falls back
to the default and the page says so in a short note; it never raises.

A link's values are applied once, when they arrive (a new session, or a link followed inside
one); afterwards the widgets own the view and every rerun writes it back to the URL, so a
sidebar change is never undone by the URL.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import pandas as pd

from analysis.core.store import Store
from analysis.ingest.demo import DEMO_DATASET


@dataclass(frozen=True)
class Param:
    """One query parameter: its name, what it is called in a note, and its value type."""

    name: str
    what: str
    kind: type = str  # str, int or bool
    multi: bool = False  # repeated parameter → a list of values


GLOBAL_PARAMS = (
    Param("dataset", "dataset"),
    Param("judge", "judge"),
    Param("models", "model", multi=True),
    Param("domains", "domain", multi=True),
    Param("levels", "difficulty level", int, multi=True),
    Param("tasks", "source task", multi=True),
    Param("hard", "FLASK-Hard setting", bool),
)
PAGE_PARAMS: dict[str, tuple[Param, ...]] = {
    "overview": (Param("rank", "leaderboard group"),),
    "radar": (
        Param("radar", "radar model", multi=True),
        Param("axes", "axes"),
        Param("published", "published overlay", bool),
        Param("compare", "comparison section", bool),
        Param("ca", "model A"),
        Param("cb", "model B"),
    ),
    "breakdowns": (Param("model", "model"), Param("section", "section")),
    "agreement": (
        Param("a", "scorer A"),
        Param("b", "scorer B"),
        Param("level", "correlation level"),
        Param("skill", "skill"),
        Param("stat", "statistic"),
        Param("by", "slice"),
        Param("section", "section"),
    ),
    # Each section adds its own picks here (its widgets' keys start with jd_).
    "judges": (
        Param("section", "section"),
        Param("stat", "statistic"),
        Param("level", "level"),
        Param("alpha", "stability's α level"),  # Stability: ordinal or interval
        # Length bias: correlation method, level shown, the scatter's scorer and criterion;
        # Self-preference: the reference (humans or the other judges).
        Param("method", "correlation method"),
        Param("lblevel", "length-bias level"),
        Param("lbscorer", "scatter scorer"),
        Param("lbskill", "scatter criterion"),
        Param("spref", "self-preference reference"),
        # Leniency: the distributions' criterion; Failures: the rates' criterion.
        Param("lnskill", "distribution criterion"),
        Param("flskill", "failures criterion"),
    ),
    "samples": (
        Param("q", "search"),
        Param("in", "search field", multi=True),
        Param("skill", "skill"),
        Param("sort", "sort order"),
        Param("instance", "instance"),
        Param("model", "model"),
    ),
    "annotate": (Param("annotator", "annotator"),),
    "rejudge": (Param("source", "selection"), Param("limit", "limit", int)),
}
GLOBAL_NAMES = tuple(p.name for p in GLOBAL_PARAMS)


def param(name: str, page: str | None = None) -> Param:
    """The declaration of a global parameter or of one of ``page``'s."""
    for p in (*GLOBAL_PARAMS, *PAGE_PARAMS.get(page or "", ())):
        if p.name == name:
            return p
    raise KeyError(f"undeclared query parameter {name!r} (page {page!r})")


class _Missing:
    def __repr__(self) -> str:
        return "MISSING"


MISSING: Any = _Missing()  # "no such value" (None is a legitimate widget value)
ALWAYS: Any = _Missing()  # ``absent=ALWAYS``: every value is written, even an empty list


def _parse(kind: type, raw: str) -> Any:
    if kind is bool:
        if raw.lower() in ("1", "true", "yes", "on"):
            return True
        if raw.lower() in ("0", "false", "no", "off", ""):
            return False
        raise ValueError(raw)
    return kind(raw)


def decode(p: Param, raw: Sequence[str]) -> tuple[Any, list[str]]:
    """A parameter's raw values → (value, the raw values that did not parse). A repeated
    parameter gives a list (``[""]`` is an explicitly empty list); a single one its last value."""
    bad: list[str] = []
    values = []
    for r in raw if p.multi else list(raw)[-1:]:
        if p.multi and r == "":
            continue
        try:
            values.append(_parse(p.kind, r))
        except ValueError:
            bad.append(r)
    if p.multi:
        return list(dict.fromkeys(values)), bad
    return (values[0] if values else MISSING), bad


def encode(p: Param, value: Any, absent: Any = None) -> list[str]:
    """A value → the parameter's raw values; ``[]`` removes the parameter. ``absent`` is the
    value that the missing parameter stands for (False for a toggle, an empty list for a filter,
    ALWAYS when every value must be written)."""
    if p.multi:  # absent: None (no values), ALWAYS, or the list the missing parameter means
        values = [str(v) for v in value or ()]
        if isinstance(absent, list | tuple) and set(values) == {str(v) for v in absent}:
            return []
        if values or absent is None:
            return values
        return [""]  # an explicitly empty selection, distinct from "the default"
    if absent is not ALWAYS and value == absent:
        return []
    if value is None:
        return []
    if p.kind is bool:
        return ["1" if value else "0"]
    return [str(value)]


@dataclass(frozen=True)
class Resolved:
    """What a widget shows this run: ``value``; ``store`` = it must be written into the widget's
    state before the widget is created; ``note`` = why a link's value was not used."""

    value: Any
    store: bool
    note: str | None = None


def _fits(value: Any, options: Sequence | None, valid: Callable[[Any], bool] | None) -> bool:
    try:
        return (options is None or value in options) and (valid is None or bool(valid(value)))
    except (TypeError, ValueError):
        return False


def _clean(p: Param, value: Any, options, valid) -> Any:
    """A value made acceptable to the widget: a list keeps its known items; MISSING if unusable."""
    if value is MISSING:
        return MISSING
    if p.multi:
        if not isinstance(value, list | tuple):
            return MISSING
        return [v for v in dict.fromkeys(value) if _fits(v, options, valid)]
    return value if _fits(value, options, valid) else MISSING


NOTE_CHARS = 40  # a link's value is quoted in a note up to this length


def _quoted(value: Any) -> str:
    text = str(value)
    return f"'{text if len(text) <= NOTE_CHARS else text[: NOTE_CHARS - 1] + '…'}'"


def _instead(p: Param, shown: Any) -> str:
    """The end of a note: what the widget shows instead of the link's value."""
    if p.multi:
        return "left out"
    if p.kind is bool:
        return f"showing {'on' if shown else 'off'} instead"
    if shown is None or shown == "":
        return "left empty" if shown == "" else "showing the default instead"
    return f"showing {_quoted(shown)} instead"


def _note(p: Param, unknown: Sequence[Any], tail: str) -> str:
    names = ", ".join(_quoted(u) for u in unknown)
    many = len(unknown) > 1
    return (
        f"The link's {p.what}{'s' if many else ''} {names} {'are' if many else 'is'} not "
        f"available here: {tail}."
    )


def resolve(
    p: Param,
    *,
    link: Sequence[str] | None,
    current: Any = MISSING,
    kept: Any = MISSING,
    default: Any = None,
    options: Sequence | None = None,
    valid: Callable[[Any], bool] | None = None,
) -> Resolved:
    """The value a URL-bound widget shows, in this order: a link's value that just arrived, the
    widget's current value, the value it had when last shown in this session (``kept``), the
    default. Values the widget cannot take (unknown options, out of range) are dropped; only a
    link's are reported, in the note."""
    if link is None:
        return _fallback(p, current, kept, default, options, valid)
    value, bad = decode(p, link)
    clean = _clean(p, value, options, valid)
    if p.multi:
        unknown = bad + [v for v in value if v not in clean]
        if clean or not unknown:  # something usable, or an explicitly empty selection
            note = _note(p, unknown, "left out") if unknown else None
            return Resolved(clean, True, note)
    elif clean is not MISSING:
        return Resolved(clean, True)
    else:
        unknown = bad + ([] if value is MISSING or bad else [value])
    shown = _fallback(p, current, kept, default, options, valid).value
    return Resolved(shown, True, _note(p, unknown, _instead(p, shown)) if unknown else None)


def _fallback(p: Param, current, kept, default, options, valid) -> Resolved:
    now = _clean(p, current, options, valid)
    if now is not MISSING and (not p.multi or len(now) == len(current)):
        return Resolved(now, False)
    if now is not MISSING:  # a list that lost values the widget no longer offers
        return Resolved(now, True)
    before = _clean(p, kept, options, valid)
    if before is not MISSING and (not p.multi or len(before) == len(kept)):
        return Resolved(before, True)
    value = _clean(p, default, options, valid)
    if value is MISSING:
        value = [] if p.multi else (options[0] if options else None)
    return Resolved(value, True)


def pending(incoming: dict[str, list[str]], written: dict[str, list[str]] | None) -> dict:
    """The parameters a link just brought: everything on a session's first run, afterwards those
    whose values differ from what the app itself last wrote into the URL."""
    if written is None:
        return dict(incoming)
    return {k: v for k, v in incoming.items() if written.get(k) != v}


def default_dataset(sets: pd.DataFrame) -> str | None:
    """A stable default: the real (not simulated) dataset with the most scores, else the demo,
    else the first dataset by name. Never "the newest import": an accidental test import must
    not become everyone's default. ``sets`` has dataset, simulated and scores columns."""
    if sets.empty:
        return None
    real = sets[~sets["simulated"].astype(bool) & (sets["scores"] > 0)]
    if not real.empty:
        top = real.sort_values(["scores", "dataset"], ascending=[False, True], kind="stable")
        return str(top["dataset"].iloc[0])
    if DEMO_DATASET in set(sets["dataset"]):
        return DEMO_DATASET
    return str(sorted(sets["dataset"])[0])


# The judges of a dataset that have latest scores, newest run first (import, CLI or in-app
# judging, annotation: every source writes a run).
JUDGES_BY_RECENCY = """
SELECT r.judge, max(COALESCE(r.finished_at, r.started_at)) AS last
FROM runs r
WHERE r.dataset = ?
  AND EXISTS (SELECT 1 FROM latest_scores s WHERE s.dataset = r.dataset AND s.judge = r.judge)
GROUP BY r.judge
ORDER BY last DESC, r.judge
"""


def newest_judge(store: Store, dataset: str) -> str | None:
    """The judge whose scores arrived last in a dataset (None when it has no scores)."""
    with store.read() as con:
        row = con.execute(JUDGES_BY_RECENCY, [dataset]).fetchone()
    return None if row is None else row[0]
