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
import re
from dataclasses import dataclass

import pandas as pd

from analysis.core.errors import InputError
from analysis.core.filters import Filters, filter_sql
from analysis.core.store import Store
from analysis.views.scorers import JUDGES_OF_DATASET
from analysis.views.tables import for_people, header

DATASET_SKILLS = """
SELECT k.skill, COALESCE(k.label, u.skill) AS label, COALESCE(k.scale_min, 1) AS scale_min,
       COALESCE(k.scale_max, 5) AS scale_max
FROM (SELECT DISTINCT dataset, unnest(skills) AS skill FROM instances WHERE dataset = ?) u
LEFT JOIN dataset_skills k USING (dataset, skill)
ORDER BY k.display_order NULLS LAST, u.skill
"""

# Responses per judge mean (over the chosen skill, or all the response's skills when NULL).
SAMPLE_JUDGE_MEANS = """
per_judge AS (
    SELECT instance_id, model, judge, avg(score) AS mean
    FROM latest_scores
    WHERE dataset = ? AND (?::VARCHAR IS NULL OR skill = ?)
      AND list_contains(?::VARCHAR[], judge)  -- only the judges that have a range
      AND (len(?::VARCHAR[]) = 0 OR list_contains(?::VARCHAR[], model))  -- sidebar models
    GROUP BY ALL
)"""

# Largest spread (max - min across judges) of one skill's scores on a response; a skill counts
# when at least two of the compared judges (empty list = all) gave it a non-N/A score.
SAMPLE_SPREAD = """
spread AS (
    SELECT instance_id, model, max(hi - lo) AS disagreement
    FROM (
        SELECT instance_id, model, skill, max(score) AS hi, min(score) AS lo
        FROM latest_scores
        WHERE dataset = ? AND score IS NOT NULL AND (?::VARCHAR IS NULL OR skill = ?)
          AND (len(?::VARCHAR[]) = 0 OR list_contains(?::VARCHAR[], judge))
          AND (len(?::VARCHAR[]) = 0 OR list_contains(?::VARCHAR[], model))  -- sidebar models
        GROUP BY ALL
        -- two judges or more; min/max of a 64-bit hash is 5x cheaper than count(DISTINCT)
        HAVING min(hash(judge)) <> max(hash(judge))
    )
    GROUP BY ALL
)"""

SAMPLE_ORDERS = {
    # Numeric ids sort as numbers (FLASK's 1..1740), others as text after them.
    "instance": "TRY_CAST(r.instance_id AS BIGINT) NULLS LAST, r.instance_id, r.model",
    "disagreement": "disagreement DESC NULLS LAST, TRY_CAST(r.instance_id AS BIGINT) NULLS LAST, "
    "r.instance_id, r.model",
    "longest": "r.length DESC NULLS LAST, r.instance_id, r.model",
    "shortest": "r.length NULLS LAST, r.instance_id, r.model",
}

# Keys and row ids; the response snippet only when a text search reads the text anyway.
# Otherwise the page's snippets are fetched by row id afterwards, in the same read-only
# connection: reading every row's text to keep 50 of them cost more than the search itself.
SAMPLE_SELECT = """
SELECT r.instance_id, r.model, r.rowid AS rrow, i.rowid AS irow, {text_col} AS response,
       {spread_col} AS disagreement, count(*) OVER () AS total
FROM responses r
JOIN instances i USING (dataset, instance_id)
{joins}
WHERE {where}
ORDER BY {order}
LIMIT ? OFFSET ?
"""

SAMPLE_PAGE_RESPONSES = """
SELECT rowid AS rrow, {text_col} AS response, length
FROM responses WHERE rowid IN (SELECT unnest(?::BIGINT[]))
"""

SAMPLE_PAGE_INSTANCES = """
SELECT rowid AS irow, difficulty, source_task, flask_hard, left(instruction, 200) AS instruction
FROM instances WHERE list_contains(?::BIGINT[], rowid)
"""

# Scores of every judge on a page of responses (the keys zip into pairs).
SAMPLE_PAGE_SCORES = """
SELECT s.instance_id, s.model, s.judge, s.skill, s.score
FROM latest_scores s
JOIN (SELECT unnest(?::VARCHAR[]) AS instance_id, unnest(?::VARCHAR[]) AS model) k
  USING (instance_id, model)
WHERE s.dataset = ?
"""


def ilike(column: str, text: str) -> tuple[str, str]:
    """SQL and pattern for ``column`` containing ``text`` literally, ignoring case. ESCAPE only
    when the text needs it: DuckDB's escaping ILIKE is half the speed of the plain one."""
    if re.search(r"[\\%_]", text):
        return f"{column} ILIKE ? ESCAPE '\\'", "%" + re.sub(r"([\\%_])", r"\\\1", text) + "%"
    return f"{column} ILIKE ?", f"%{text}%"


def sample_search_sql(
    f,
    *,
    text: str,
    fields: tuple[str, ...],
    skill: str | None,
    ranges: tuple,
    min_disagreement: float | None,
    compared: tuple[str, ...],
    order: str,
    limit: int,
    offset: int,
) -> tuple[str, list]:
    """The Samples page query: responses (joined to their instance) that pass the sidebar
    filters (``f``, its judge ignored), a literal case-insensitive text search over ``fields``,
    per-judge ranges of the mean score (``ranges``: objects with judge, low, high) and a
    minimum judge disagreement; one page of them, each row with the total count."""
    ctes: list[str] = []
    joins: list[str] = []
    params: list = []
    if ranges:
        ctes.append(SAMPLE_JUDGE_MEANS)
        models = list(f.models)
        params += [f.dataset, skill, skill, [r.judge for r in ranges], models, models]
        ors = " OR ".join("(judge = ? AND mean BETWEEN ? AND ?)" for _ in ranges)
        ctes.append(
            f"ranged AS (SELECT instance_id, model FROM per_judge WHERE {ors} "
            "GROUP BY ALL HAVING count(*) = ?)"
        )
        for r in ranges:
            params += [r.judge, r.low, r.high]
        params.append(len(ranges))
        joins.append("JOIN ranged USING (instance_id, model)")
    need_spread = min_disagreement is not None or order == "disagreement"
    if need_spread:
        ctes.append(SAMPLE_SPREAD)
        models = list(f.models)
        params += [f.dataset, skill, skill, list(compared), list(compared), models, models]
        kind = "JOIN" if min_disagreement is not None else "LEFT JOIN"
        joins.append(f"{kind} spread USING (instance_id, model)")
    where, wparams = filter_sql(f, alias="r", inst="i")
    if min_disagreement is not None:
        where += " AND spread.disagreement >= ?"
        wparams.append(min_disagreement)
    if text:
        # Instance text is matched once per instance, not once per response to it.
        inst_fields = [c for c in fields if c != "response"]
        if inst_fields:
            likes = [ilike(c, text) for c in inst_fields]
            ors = " OR ".join(sql for sql, _ in likes)
            ctes.append(
                f"ihit AS (SELECT instance_id FROM instances WHERE dataset = ? AND ({ors}))"
            )
            params += [f.dataset, *(pattern for _, pattern in likes)]
            joins.append("LEFT JOIN ihit ON ihit.instance_id = r.instance_id")
        hits = ["ihit.instance_id IS NOT NULL"] if inst_fields else []
        if "response" in fields:
            sql, pattern = ilike("r.text", text)
            hits.append(sql)
            wparams.append(pattern)
        where += f" AND ({' OR '.join(hits)})"
    sql = SAMPLE_SELECT.format(
        text_col="left(r.text, 200)" if text and "response" in fields else "NULL::VARCHAR",
        spread_col="spread.disagreement" if need_spread else "NULL::DOUBLE",
        joins="\n".join(joins),
        where=where,
        order=SAMPLE_ORDERS[order],
    )
    if ctes:
        sql = "WITH " + ",\n".join(c.strip() for c in ctes) + sql
    return sql, [*params, *wparams, limit, offset]


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


def dataset_skills(store: Store, dataset: str) -> pd.DataFrame:
    """skill, label, scale_min, scale_max of the skills a dataset's instances use."""
    with store.read() as con:
        return con.execute(DATASET_SKILLS, [dataset]).df()


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
    sql, params = sample_search_sql(
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
            SAMPLE_PAGE_RESPONSES.format(
                text_col="NULL::VARCHAR" if have_text else "left(text, 200)"
            ),
            [keys["rrow"].tolist()],
        ).df()
        insts = con.execute(SAMPLE_PAGE_INSTANCES, [keys["irow"].tolist()]).df()
        scores = con.execute(SAMPLE_PAGE_SCORES, [ids, models, f.dataset]).df()
        if q.judges:
            names = q.judges
        else:
            rows_j = con.execute(JUDGES_OF_DATASET, [f.dataset]).fetchall()
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


def display_rows(page: SamplePage) -> pd.DataFrame:
    """The page's rows for reading, in the same order (a table selection's positions index
    ``page.rows``): readable headers, source tasks by their proper names, each judge's column
    headed by the judge's name, scores with 2 decimals, blanks where a judge gave none."""
    fixed = {header(c) for c in page.rows.columns}
    names = {judge_column(j): j if j not in fixed else f"{j} · judge" for j in page.judges}
    return for_people(page.rows, headers=names)


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
