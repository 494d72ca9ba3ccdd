"""Data behind the Samples page: search and filter responses, one page at a time, with every
judge's scores; and the detail of one response (instruction, reference, response, and each
judge's scores and rationale).

Everything returned here is untrusted text from model and judge outputs: pages show it as text.

Search is a literal, case-insensitive substring match (DuckDB ILIKE with ``%`` and ``_``
escaped) over the chosen fields, with the sidebar filters pushed into the same query and only
one page of rows fetched (plus the total count); ``bench/samples_search.py`` measures it on 1M
scores / 100k responses.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field

import pandas as pd

from analysis import queries
from analysis.errors import InputError, NotFoundError
from analysis.filters import Filters
from analysis.store import Store

SEARCH_FIELDS = ("instruction", "reference", "response")
SORTS = {
    "instance": "Instance",
    "disagreement": "Largest judge disagreement",
    "longest": "Longest response",
    "shortest": "Shortest response",
}
MAX_PAGE_SIZE = 500
PAGE_COLUMNS = (
    "instance_id model difficulty source_task flask_hard instruction response length disagreement"
).split()


@dataclass(frozen=True)
class ScoreRange:
    """Keep responses whose mean score from ``judge`` (over the chosen skill, or over all the
    response's skills) lies in [low, high]; a response that judge did not score is dropped."""

    judge: str
    low: float
    high: float


@dataclass(frozen=True)
class SampleQuery:
    filters: Filters
    text: str = ""
    fields: tuple[str, ...] = SEARCH_FIELDS
    skill: str | None = None  # None = all of a response's skills
    ranges: tuple[ScoreRange, ...] = ()
    min_disagreement: float | None = None  # max - min across judges on one skill, >= this
    compared: tuple[str, ...] = ()  # judges the disagreement compares; () = all
    sort: str = "instance"
    page: int = 0
    page_size: int = 50
    # The judge columns, when the caller already knows the dataset's judges (the page has them
    # from the sidebar's cached options); () = look them up, one more query.
    judges: tuple[str, ...] = ()


@dataclass
class SamplePage:
    """One page of matching responses and how many match in all.

    ``rows``: instance_id, model, difficulty, source_task, flask_hard, instruction and response
    (first 200 characters), length, disagreement, then one column per judge (named by
    ``judge_column``) with its mean score on the response (NaN: not scored or all N/A)."""

    rows: pd.DataFrame
    total: int
    judges: tuple[str, ...]
    page: int
    page_size: int

    @property
    def pages(self) -> int:
        return max(1, -(-self.total // self.page_size))


@dataclass(frozen=True)
class JudgeView:
    """One judge's current view of one response."""

    judge: str
    kind: str
    scores: dict[str, float | None]  # skill -> score (None = N/A), in the instance's order
    rationale: str | None
    raw_output: str | None
    parse_status: str
    error: str | None


@dataclass(frozen=True)
class SampleDetail:
    dataset: str
    instance_id: str
    model: str
    instruction: str
    reference: str
    response: str | None
    source_task: str | None
    difficulty: int | None
    domains: tuple[str, ...]
    skills: tuple[str, ...]
    flask_hard: bool
    judges: tuple[JudgeView, ...] = field(default=())


def dataset_skills(store: Store, dataset: str) -> pd.DataFrame:
    """skill, label, scale_min, scale_max of the skills a dataset's instances use."""
    with store.read() as con:
        return con.execute(queries.DATASET_SKILLS, [dataset]).df()


def _check(q: SampleQuery) -> None:
    bad = [f for f in q.fields if f not in SEARCH_FIELDS]
    if bad or (q.text and not q.fields):
        raise InputError(
            "search", None, "fields", f"search in one or more of {', '.join(SEARCH_FIELDS)}"
        )
    if q.sort not in SORTS:
        raise InputError("search", None, "sort", f"sort by one of {', '.join(SORTS)}")
    if not 1 <= q.page_size <= MAX_PAGE_SIZE or q.page < 0:
        raise InputError(
            "search", None, "page", f"page >= 0 and page size 1..{MAX_PAGE_SIZE} expected"
        )
    for r in q.ranges:
        if r.low > r.high:
            raise InputError(
                "search", None, "range", f"{r.judge}: low {r.low:g} is above high {r.high:g}"
            )


def search(store: Store, q: SampleQuery) -> SamplePage:
    """One page of the responses matching ``q``, with every judge's mean score on each."""
    _check(q)
    f = dataclasses.replace(q.filters, judge=None)  # rows are responses, not one judge's scores
    sql, params = queries.sample_search_sql(
        f,
        text=q.text.strip(),
        fields=q.fields,
        skill=q.skill,
        ranges=q.ranges,
        min_disagreement=q.min_disagreement,
        compared=q.compared,
        order=q.sort,
        limit=q.page_size,
        offset=q.page * q.page_size,
    )
    first = None
    with store.read() as con:
        keys = con.execute(sql, params).df()
        ids, models = keys["instance_id"].tolist(), keys["model"].tolist()
        have_text = bool(q.text.strip()) and "response" in q.fields
        texts = con.execute(
            queries.SAMPLE_PAGE_RESPONSES.format(
                text_col="NULL::VARCHAR" if have_text else "left(text, 200)"
            ),
            [keys["rrow"].tolist()],
        ).df()
        insts = con.execute(queries.SAMPLE_PAGE_INSTANCES, [keys["irow"].tolist()]).df()
        scores = con.execute(queries.SAMPLE_PAGE_SCORES, [ids, models, f.dataset]).df()
        if q.judges:
            names = q.judges
        else:
            rows_j = con.execute(queries.JUDGES_OF_DATASET, [f.dataset]).fetchall()
            names = tuple(j for j, _, _ in rows_j)
        if keys.empty and q.page > 0:  # past the last page: the count still comes from page 1
            first = con.execute(sql, [*params[:-2], 1, 0]).fetchone()
    total = int(keys["total"].iloc[0]) if len(keys) else 0
    if keys.empty and q.page > 0 and first is not None:
        total = int(first[-1])
    texts = texts.drop(columns="response") if have_text else texts
    rows = keys.drop(columns="response") if not have_text else keys
    rows = rows.merge(insts, on="irow", how="left").merge(texts, on="rrow", how="left")
    rows = rows[PAGE_COLUMNS].astype({"disagreement": float})
    if q.skill is not None:
        scores = scores[scores["skill"] == q.skill]
    table = _with_judge_columns(rows, scores, names, q.compared)
    return SamplePage(table, total, names, q.page, q.page_size)


def _with_judge_columns(
    rows: pd.DataFrame, scores: pd.DataFrame, judges: tuple[str, ...], compared: tuple[str, ...]
) -> pd.DataFrame:
    """Add one mean-score column per judge, and the disagreement where the query did not
    compute it (same rule as SAMPLE_SPREAD, on this page's scores only)."""
    keys = ["instance_id", "model"]
    if rows.empty:
        return rows.assign(**{judge_column(j): pd.Series(dtype=float) for j in judges})
    means = scores.groupby([*keys, "judge"])["score"].mean().unstack("judge")
    means = means.reindex(columns=list(judges)).rename(columns=judge_column)
    out = rows.merge(means, how="left", left_on=keys, right_index=True)
    if out["disagreement"].isna().all() and len(scores):
        valid = scores.dropna(subset=["score"])
        if compared:
            valid = valid[valid["judge"].isin(compared)]
        per_skill = valid.groupby([*keys, "skill"]).agg(
            hi=("score", "max"), lo=("score", "min"), n=("judge", "nunique")
        )
        per_skill = per_skill[per_skill["n"] >= 2]
        spread = (per_skill["hi"] - per_skill["lo"]).groupby(level=keys).max()
        out["disagreement"] = out.set_index(keys).index.map(spread).astype(float)
    return out.reset_index(drop=True)


def judge_column(judge: str) -> str:
    """The column of ``SamplePage.rows`` holding a judge's mean score (prefixed, so a judge
    named like a fixed column cannot clash with it)."""
    return f"score::{judge}"


def detail(store: Store, dataset: str, instance_id: str, model: str) -> SampleDetail:
    """Everything about one response; NotFoundError when it does not exist."""
    key = [dataset, instance_id, model]
    with store.read() as con:
        inst = con.execute(queries.SAMPLE_INSTANCE, [dataset, instance_id]).fetchone()
        resp = con.execute(queries.SAMPLE_RESPONSE, key).fetchone()
        judgments = con.execute(queries.SAMPLE_JUDGMENTS, key + key).fetchall()
        scores = con.execute(queries.SAMPLE_SCORES, key).fetchall()
    if inst is None or (resp is None and not judgments):
        raise NotFoundError(
            f"No response of model '{model}' to instance '{instance_id}' in dataset "
            f"'{dataset}'. The link may be out of date, or the dataset was rebuilt."
        )
    instruction, reference, task, level, domains, skills, hard = inst
    order = {s: i for i, s in enumerate(skills or ())}
    by_judge: dict[str, dict[str, float | None]] = {}
    for judge, skill, score in sorted(scores, key=lambda r: (order.get(r[1], 99), r[1])):
        by_judge.setdefault(judge, {})[skill] = None if score is None else float(score)
    views = tuple(
        JudgeView(j, kind, by_judge.get(j, {}), rationale, raw, status, error)
        for j, kind, rationale, raw, status, error, _ in judgments
    )
    seen = {v.judge for v in views}  # scores without a judgment row (bare score imports)
    views += tuple(JudgeView(j, "llm", s, None, None, "ok", None)
                   for j, s in by_judge.items() if j not in seen)  # fmt: skip
    return SampleDetail(
        dataset, instance_id, model, instruction or "", reference or "",
        None if resp is None else resp[0], task, None if level is None else int(level),
        tuple(domains or ()), tuple(skills or ()), bool(hard), views,
    )  # fmt: skip


def detail_link(dataset: str, instance_id: str, model: str) -> dict[str, str]:
    """Query parameters that open this response on the Samples page (see pages/samples.py)."""
    return {"dataset": dataset, "instance": instance_id, "model": model}


def score_scale(skills: pd.DataFrame, skill: str | None) -> tuple[float, float]:
    """The score scale the range sliders offer: the skill's, or the widest of the dataset's."""
    rows = skills if skill is None else skills[skills["skill"] == skill]
    if rows.empty:
        return (1.0, 5.0)
    return float(rows["scale_min"].min()), float(rows["scale_max"].max())


def keys_at(page: SamplePage, positions: list[int]) -> list[tuple[str, str]]:
    """(instance_id, model) of the page's rows at these positions (a table selection)."""
    n = len(page.rows)
    return [
        (str(page.rows["instance_id"].iat[p]), str(page.rows["model"].iat[p]))
        for p in positions
        if 0 <= p < n
    ]


def score_lines(view: JudgeView) -> str:
    """A judge's scores as plain text, one 'skill: score' line per skill (N/A spelled out)."""
    if not view.scores:
        return "(no scores)"
    return "\n".join(f"{s}: {'N/A' if v is None else f'{v:g}'}" for s, v in view.scores.items())
