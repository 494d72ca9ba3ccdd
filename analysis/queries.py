"""Every SQL statement of the app, with bound parameters. The schema is in schema.sql.

Filters are turned into one WHERE fragment by ``filter_sql`` so every page query applies the
sidebar the same way.
"""

from __future__ import annotations

import re

# ---------------------------------------------------------------- writes (imports)

UPSERT_SKILL = """
INSERT OR REPLACE INTO skills
    (skill, label, ability, display_order, definition, rubric, scale_min, scale_max, custom)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
"""

SKILL_SCALE = "SELECT scale_min, scale_max FROM skills WHERE skill = ?"

UPSERT_DATASET = """
INSERT OR REPLACE INTO datasets (dataset, title, source, simulated, seed, description, imported_at)
VALUES (?, ?, ?, ?, ?, ?, current_timestamp)
"""

DELETE_DATASET = [
    f"DELETE FROM {table} WHERE list_contains(?::VARCHAR[], dataset)"
    for table in ("scores", "judgments", "runs", "responses", "instances", "datasets")
]

UPSERT_INSTANCES = """
INSERT OR REPLACE INTO instances
SELECT dataset, instance_id, instruction, reference, source_task,
       difficulty::TINYINT, domains::VARCHAR[], skills::VARCHAR[], flask_hard
FROM batch_instances
"""

# Score files mention instances in passing: fill in what is missing; what is stored wins.
MERGE_INSTANCES = """
INSERT INTO instances
SELECT dataset, instance_id, instruction, reference, source_task,
       difficulty::TINYINT, domains::VARCHAR[], skills::VARCHAR[], flask_hard
FROM batch_instances
ON CONFLICT (dataset, instance_id) DO UPDATE SET
    instruction = COALESCE(instruction, excluded.instruction),
    reference = COALESCE(reference, excluded.reference),
    source_task = COALESCE(source_task, excluded.source_task),
    difficulty = COALESCE(difficulty, excluded.difficulty),
    domains = CASE WHEN list_has_all(domains, excluded.domains) THEN domains
                   ELSE list_distinct(list_concat(domains, excluded.domains)) END,
    skills = CASE WHEN list_has_all(skills, excluded.skills) THEN skills
                  ELSE list_distinct(list_concat(skills, excluded.skills)) END
"""

UPSERT_RESPONSES = """
INSERT OR REPLACE INTO responses
SELECT dataset, instance_id, model, text, length(text) FROM batch_responses
"""

MERGE_RESPONSES = """
INSERT INTO responses
SELECT dataset, instance_id, model, text, length(text) FROM batch_responses
ON CONFLICT (dataset, instance_id, model) DO UPDATE SET
    text = COALESCE(text, excluded.text),
    length = COALESCE(length, excluded.length)
"""

UPSERT_JUDGE = """
INSERT OR REPLACE INTO judges (judge, kind, backend, model, prompt_version, params)
VALUES (?, ?, ?, ?, ?, ?)
"""

RUN_EXISTS = "SELECT 1 FROM runs WHERE run_id = ? AND status = 'complete'"

INSERT_IMPORT_RUN = """
INSERT OR REPLACE INTO runs (run_id, judge, dataset, source, started_at, finished_at, status,
                  n_items, n_ok, n_failed, prompt_tokens, completion_tokens)
VALUES (?, ?, ?, ?, current_timestamp, current_timestamp, 'complete', ?, ?, ?, ?, ?)
"""

INSERT_JUDGMENTS = """
INSERT INTO judgments (run_id, dataset, instance_id, model, judge, raw_output, rationale,
                       parse_status, error, latency_ms, prompt_tokens, completion_tokens)
SELECT run_id, dataset, instance_id, model, judge, raw_output, rationale, parse_status, error,
       latency_ms::DOUBLE, prompt_tokens::INTEGER, completion_tokens::INTEGER
FROM batch_judgments
"""

# A newer run replaces the current score of each key it scores; older rows stay as history.
SUPERSEDE_SCORES = """
UPDATE scores SET superseded = true
FROM (SELECT DISTINCT dataset, instance_id, model, judge, skill FROM batch_scores) b
WHERE NOT scores.superseded
  AND scores.dataset = b.dataset AND scores.instance_id = b.instance_id
  AND scores.model = b.model AND scores.judge = b.judge AND scores.skill = b.skill
"""

INSERT_SCORES = """
INSERT INTO scores (dataset, instance_id, model, judge, skill, score, judgment_id, run_id)
SELECT s.dataset, s.instance_id, s.model, s.judge, s.skill, s.score::DOUBLE, j.judgment_id,
       s.run_id
FROM batch_scores s
LEFT JOIN judgments j
  ON j.run_id = s.run_id AND j.dataset = s.dataset AND j.instance_id = s.instance_id
 AND j.model = s.model AND j.judge = s.judge
"""

# ---------------------------------------------------------------- reads (pages, CLI)


def filter_sql(f, *, alias: str = "s", inst: str = "i") -> tuple[str, list]:
    """WHERE fragment (without WHERE) for Filters over latest_scores ``s`` joined to instances
    ``i``; returns the SQL and its bound parameters."""
    where = [f"{alias}.dataset = ?"]
    params: list = [f.dataset]
    if f.judge:
        where.append(f"{alias}.judge = ?")
        params.append(f.judge)
    if f.models:
        where.append(f"list_contains(?::VARCHAR[], {alias}.model)")
        params.append(list(f.models))
    if f.domains:
        where.append(f"list_has_any({inst}.domains, ?::VARCHAR[])")
        params.append(list(f.domains))
    if f.difficulties:
        where.append(f"list_contains(?::INTEGER[], {inst}.difficulty::INTEGER)")
        params.append([int(d) for d in f.difficulties])
    if f.source_tasks:
        where.append(f"list_contains(?::VARCHAR[], {inst}.source_task)")
        params.append(list(f.source_tasks))
    if f.flask_hard_only:
        where.append(f"{inst}.flask_hard")
    return " AND ".join(where), params


DATASET_SUMMARY = """
SELECT d.dataset, d.title,
       (SELECT count(*) FROM instances i WHERE i.dataset = d.dataset) AS instances,
       (SELECT count(DISTINCT model) FROM responses r WHERE r.dataset = d.dataset) AS models,
       (SELECT count(*) FROM responses r WHERE r.dataset = d.dataset) AS responses,
       (SELECT count(DISTINCT judge) FROM latest_scores s WHERE s.dataset = d.dataset) AS judges,
       (SELECT count(*) FROM latest_scores s WHERE s.dataset = d.dataset) AS scores,
       d.simulated, d.seed, d.source, d.imported_at, d.description
FROM datasets d
ORDER BY d.simulated, d.imported_at DESC
"""

DATASET_NAMES = (
    "SELECT dataset, simulated, seed, title FROM datasets ORDER BY simulated, imported_at DESC"
)

JUDGES_OF_DATASET = """
SELECT s.judge, any_value(j.kind) AS kind, count(*) AS n
FROM latest_scores s LEFT JOIN judges j USING (judge)
WHERE s.dataset = ?
GROUP BY s.judge
ORDER BY (any_value(j.kind) = 'llm') DESC, n DESC, s.judge
"""

MODELS_OF_DATASET = """
SELECT model FROM (
    SELECT model FROM responses WHERE dataset = ?
    UNION SELECT model FROM latest_scores WHERE dataset = ?
) GROUP BY model ORDER BY model
"""

INSTANCE_FACETS = """
SELECT list_sort(list_distinct(flatten(list(domains)))) AS domains,
       list_sort(list_distinct(list(difficulty) FILTER (WHERE difficulty IS NOT NULL))) AS levels,
       list_sort(list_distinct(list(source_task) FILTER (WHERE source_task IS NOT NULL))) AS tasks,
       bool_or(flask_hard) AS has_hard
FROM instances WHERE dataset = ?
"""

SKILLS_TABLE = """
SELECT skill, label, ability, display_order, definition, rubric, scale_min, scale_max, custom
FROM skills ORDER BY display_order, skill
"""

# Instances in the filtered slice (scores of the chosen judge), counted per skill × domain.
# An instance counts toward each of its domains (FLASK's rule); no domain → "(unlabeled)".
# The second parameter restricts the columns to the domains the filter asked for (empty = all).
COVERAGE = """
WITH picked AS (
    SELECT DISTINCT s.instance_id, s.skill,
           CASE WHEN len(i.domains) = 0 THEN ['(unlabeled)'] ELSE i.domains END AS domains
    FROM latest_scores s JOIN instances i USING (dataset, instance_id)
    WHERE {where}
)
SELECT skill, domain, count(*) AS instances
FROM (SELECT skill, unnest(domains) AS domain FROM picked)
WHERE len(?::VARCHAR[]) = 0 OR list_contains(?::VARCHAR[], domain)
GROUP BY ALL
"""

# Per model × group × instance sums, the input of the instance-level (cluster) bootstrap.
SCORE_SUMS_BY_ABILITY = """
SELECT s.model, COALESCE(k.ability, k.label, s.skill) AS grp, s.instance_id,
       COALESCE(k.scale_min, 1) AS scale_min, COALESCE(k.scale_max, 5) AS scale_max,
       sum(s.score) AS total, count(s.score) AS n, count(*) - count(s.score) AS n_na,
       -- on 0-1, for pooling criteria whose scales differ
       sum((s.score - COALESCE(k.scale_min, 1)) / (COALESCE(k.scale_max, 5)
           - COALESCE(k.scale_min, 1))) AS total01
FROM latest_scores s
JOIN instances i USING (dataset, instance_id)
LEFT JOIN skills k ON k.skill = s.skill
WHERE {where}
GROUP BY ALL
"""

SCORE_SUMS_BY_SKILL = """
SELECT s.model, s.skill AS grp, s.instance_id,
       sum(s.score) AS total, count(s.score) AS n, count(*) - count(s.score) AS n_na
FROM latest_scores s
JOIN instances i USING (dataset, instance_id)
WHERE {where}
GROUP BY ALL
"""

SKILLS_OF_DATASET = "SELECT DISTINCT skill FROM latest_scores WHERE dataset = ?"
COUNT_DATASETS = "SELECT count(*) FROM datasets"
SKILL_SCALES = "SELECT skill, scale_min, scale_max FROM skills"
DATASET_IDS = "SELECT dataset FROM datasets"
JUDGE_KINDS = "SELECT judge, kind FROM judges"
SCHEMA_VERSION = "SELECT value FROM meta WHERE key = 'schema_version'"
SET_SCHEMA_VERSION = "INSERT OR REPLACE INTO meta VALUES ('schema_version', ?)"

# Scores of the chosen scorers in the filtered slice, for agreement statistics (one row per
# instance × model × skill × scorer; NULL score = N/A). The skill list is empty for "all".
AGREEMENT_SCORES = """
SELECT s.instance_id, s.model, s.skill, s.judge, s.score, i.difficulty, i.domains,
       COALESCE(k.scale_min, 1) AS scale_min, COALESCE(k.scale_max, 5) AS scale_max
FROM latest_scores s
JOIN instances i USING (dataset, instance_id)
LEFT JOIN skills k ON k.skill = s.skill
WHERE {where}
  AND list_contains(?::VARCHAR[], s.judge)
  AND (len(?::VARCHAR[]) = 0 OR list_contains(?::VARCHAR[], s.skill))
"""

# ---------------------------------------------------------------- judging runs

# Responses to judge, with their instance (skills, reference); the model list may be empty (all).
JUDGE_ITEMS = """
SELECT r.instance_id, r.model, i.instruction, i.reference, i.skills, r.text
FROM responses r JOIN instances i USING (dataset, instance_id)
WHERE r.dataset = ? AND r.text IS NOT NULL
  AND (len(?::VARCHAR[]) = 0 OR list_contains(?::VARCHAR[], r.model))
ORDER BY TRY_CAST(r.instance_id AS BIGINT) NULLS LAST, r.instance_id, r.model
LIMIT ?
"""

# Answered calls with these content keys (any judge, any run): a cache hit costs nothing.
# Unparseable answers are kept but not reused, so a rerun asks again.
CACHED_JUDGMENTS = """
SELECT cache_key, judge, dataset, instance_id, model, raw_output, prompt_tokens,
       completion_tokens
FROM judgments
WHERE list_contains(?::VARCHAR[], cache_key) AND parse_status = 'ok'
"""

START_RUN = """
INSERT INTO runs (run_id, judge, dataset, source, status, n_items)
VALUES (?, ?, ?, ?, 'running', ?)
"""

RUNS_IN_PROGRESS = "SELECT run_id, judge, dataset FROM runs WHERE status = 'running'"

FINISH_RUN = """
UPDATE runs SET status = ?, finished_at = current_timestamp WHERE run_id = ?
"""

# Counters follow what is stored, so they stay right whatever was resumed or replayed.
REFRESH_RUN_COUNTS = """
UPDATE runs SET
    n_ok = (SELECT count(*) FROM judgments j WHERE j.run_id = runs.run_id
            AND j.parse_status = 'ok'),
    n_failed = (SELECT count(*) FROM judgments j WHERE j.run_id = runs.run_id
                AND j.parse_status <> 'ok'),
    n_cached = ?,
    prompt_tokens = (SELECT COALESCE(sum(prompt_tokens), 0) FROM judgments j
                     WHERE j.run_id = runs.run_id),
    completion_tokens = (SELECT COALESCE(sum(completion_tokens), 0) FROM judgments j
                         WHERE j.run_id = runs.run_id),
    cost_usd = ?
WHERE run_id = ?
"""

# One judgment per (run, item): a later answer replaces an earlier failed call of the run.
DROP_FAILED_CALLS = """
DELETE FROM judgments WHERE parse_status = 'error'
  AND EXISTS (SELECT 1 FROM pending_judgments p
              WHERE p.run_id = judgments.run_id AND p.dataset = judgments.dataset
                AND p.instance_id = judgments.instance_id AND p.model = judgments.model)
"""

MARK_INTERRUPTED = """
UPDATE runs SET status = 'interrupted', finished_at = current_timestamp
WHERE run_id = ? AND status = 'running'
"""

INSERT_PENDING_JUDGMENTS = """
INSERT INTO judgments (run_id, dataset, instance_id, model, judge, raw_output, rationale,
                       parse_status, error, latency_ms, prompt_tokens, completion_tokens,
                       cache_key)
SELECT p.run_id, p.dataset, p.instance_id, p.model, p.judge, p.raw_output, p.rationale,
       p.parse_status, p.error, p.latency_ms, p.prompt_tokens, p.completion_tokens, p.cache_key
FROM pending_judgments p
WHERE NOT EXISTS (SELECT 1 FROM judgments j
                  WHERE j.run_id = p.run_id AND j.dataset = p.dataset
                    AND j.instance_id = p.instance_id AND j.model = p.model)
"""

# Answers supersede older runs' scores only: a killed run's journal replayed after a newer run
# of the same judge must not hide the newer answers (runs are ordered by their start).
SUPERSEDE_PENDING_SCORES = """
UPDATE scores SET superseded = true
FROM (SELECT DISTINCT p.dataset, p.instance_id, p.model, p.judge, p.skill, r.started_at
      FROM pending_scores p JOIN runs r USING (run_id)) b
WHERE NOT scores.superseded
  AND scores.dataset = b.dataset AND scores.instance_id = b.instance_id
  AND scores.model = b.model AND scores.judge = b.judge AND scores.skill = b.skill
  AND COALESCE((SELECT started_at FROM runs x WHERE x.run_id = scores.run_id), b.started_at)
      <= b.started_at
"""

INSERT_PENDING_SCORES = """
INSERT INTO scores (dataset, instance_id, model, judge, skill, score, judgment_id, run_id,
                    superseded)
SELECT s.dataset, s.instance_id, s.model, s.judge, s.skill, s.score::DOUBLE, j.judgment_id,
       s.run_id,
       -- still current: a newer run's score for the same key (left by the update above)
       EXISTS (SELECT 1 FROM scores x
               WHERE NOT x.superseded AND x.dataset = s.dataset
                 AND x.instance_id = s.instance_id AND x.model = s.model
                 AND x.judge = s.judge AND x.skill = s.skill)
FROM pending_scores s
JOIN judgments j ON j.run_id = s.run_id AND j.dataset = s.dataset
 AND j.instance_id = s.instance_id AND j.model = s.model
"""

STORED_ITEMS = """
SELECT dataset, instance_id, model FROM judgments
WHERE run_id = ? AND parse_status <> 'error'
"""

JUDGE_ROW = "SELECT kind, backend FROM judges WHERE judge = ?"

UPSERT_RUN_JUDGE = """
INSERT INTO judges (judge, kind, backend, model, prompt_version, params)
VALUES (?, 'llm', ?, ?, ?, ?)
ON CONFLICT (judge) DO UPDATE SET backend = excluded.backend, model = excluded.model,
    prompt_version = excluded.prompt_version, params = excluded.params
"""

# ---------------------------------------------------------------- queues (analysis/queues.py)

QUEUE_ADD = """
INSERT INTO queue_items (queue, dataset, instance_id, model)
SELECT ?, ?, k.instance_id, k.model
FROM (SELECT unnest(?::VARCHAR[]) AS instance_id, unnest(?::VARCHAR[]) AS model,
             generate_subscripts(?::VARCHAR[], 1) AS pos) k
ORDER BY k.pos
ON CONFLICT DO NOTHING
"""

# Which of the given (instance, model) pairs have no response in the dataset.
QUEUE_MISSING_RESPONSES = """
SELECT k.instance_id, k.model
FROM (SELECT unnest(?::VARCHAR[]) AS instance_id, unnest(?::VARCHAR[]) AS model,
             generate_subscripts(?::VARCHAR[], 1) AS pos) k
ANTI JOIN responses r ON r.dataset = ? AND r.instance_id = k.instance_id AND r.model = k.model
ORDER BY k.pos
"""

QUEUE_REMOVE = """
DELETE FROM queue_items q
USING (SELECT unnest(?::VARCHAR[]) AS instance_id, unnest(?::VARCHAR[]) AS model) k
WHERE q.queue = ? AND q.dataset = ? AND q.instance_id = k.instance_id AND q.model = k.model
"""

QUEUE_CLEAR = "DELETE FROM queue_items WHERE queue = ? AND dataset = ?"

QUEUE_LIST = """
SELECT queue, dataset, instance_id, model, added_at
FROM queue_items WHERE queue = ? AND dataset = ?
ORDER BY seq
"""

QUEUE_COUNTS = """
SELECT queue, count(*) AS n FROM queue_items WHERE dataset = ? GROUP BY queue ORDER BY queue
"""

# ---------------------------------------------------------------- samples (analysis/samples.py)

DATASET_SKILLS = """
SELECT k.skill, COALESCE(k.label, u.skill) AS label, COALESCE(k.scale_min, 1) AS scale_min,
       COALESCE(k.scale_max, 5) AS scale_max
FROM (SELECT DISTINCT unnest(skills) AS skill FROM instances WHERE dataset = ?) u
LEFT JOIN skills k USING (skill)
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

SAMPLE_INSTANCE = """
SELECT instruction, reference, source_task, difficulty, domains, skills, flask_hard
FROM instances WHERE dataset = ? AND instance_id = ?
"""

SAMPLE_RESPONSE = "SELECT text FROM responses WHERE dataset = ? AND instance_id = ? AND model = ?"

# Each judge's current judgment of one response: the one its current scores come from, else
# its newest (a judgment whose output could not be parsed has no scores).
SAMPLE_JUDGMENTS = """
WITH cur AS (
    SELECT judge, max(judgment_id) AS jid FROM latest_scores
    WHERE dataset = ? AND instance_id = ? AND model = ? GROUP BY judge
), newest AS (
    SELECT judge, max(judgment_id) AS jid FROM judgments
    WHERE dataset = ? AND instance_id = ? AND model = ? GROUP BY judge
)
SELECT x.judge, COALESCE(j.kind, 'llm') AS kind, g.rationale, g.raw_output,
       COALESCE(g.parse_status, 'ok') AS parse_status, g.error, g.created_at
FROM (SELECT judge, COALESCE(cur.jid, newest.jid) AS jid
      FROM cur FULL JOIN newest USING (judge)) x
LEFT JOIN judgments g ON g.judgment_id = x.jid
LEFT JOIN judges j ON j.judge = x.judge
ORDER BY (COALESCE(j.kind, 'llm') = 'llm') DESC, x.judge
"""

SAMPLE_SCORES = """
SELECT judge, skill, score FROM latest_scores
WHERE dataset = ? AND instance_id = ? AND model = ?
"""

INSTANCE_RUBRIC = """
SELECT u.skill, COALESCE(k.label, u.skill) AS label, k.definition, k.rubric,
       COALESCE(k.scale_min, 1) AS scale_min, COALESCE(k.scale_max, 5) AS scale_max
FROM (SELECT unnest(skills) AS skill, generate_subscripts(skills, 1) AS pos
      FROM instances WHERE dataset = ? AND instance_id = ?) u
LEFT JOIN skills k USING (skill)
ORDER BY u.pos
"""

# ------------------------------------------------------------ annotation (analysis/annotation.py)

JUDGE_KIND = "SELECT kind FROM judges WHERE judge = ?"

INSERT_ANNOTATOR = """
INSERT INTO judges (judge, kind, backend, params) VALUES (?, 'human', 'annotation', '{}')
ON CONFLICT DO NOTHING
"""

# One run per annotator and dataset; each saved form bumps its counts and finish time.
UPSERT_ANNOTATION_RUN = """
INSERT INTO runs (run_id, judge, dataset, source, started_at, finished_at, status, n_items, n_ok)
VALUES (?, ?, ?, 'annotate page', current_timestamp, current_timestamp, 'complete', 1, 1)
ON CONFLICT (run_id) DO UPDATE SET
    finished_at = now()::TIMESTAMP, n_items = runs.n_items + 1, n_ok = runs.n_ok + 1
"""

INSERT_ANNOTATION_JUDGMENT = """
INSERT INTO judgments (run_id, dataset, instance_id, model, judge, raw_output, rationale,
                       parse_status, latency_ms)
VALUES (?, ?, ?, ?, ?, ?, ?, 'ok', ?)
RETURNING judgment_id
"""

# Re-saving an item replaces the annotator's previous answer (kept as history).
SUPERSEDE_ANSWER = """
UPDATE scores SET superseded = true
WHERE NOT superseded AND dataset = ? AND instance_id = ? AND model = ? AND judge = ?
"""

INSERT_ANSWER_SCORES = """
INSERT INTO scores (dataset, instance_id, model, judge, skill, score, judgment_id, run_id)
SELECT ?, ?, ?, ?, unnest(?::VARCHAR[]), unnest(?::DOUBLE[]), ?, ?
"""

# The annotator's current answers on a dataset: one row per (instance, model, skill).
ANNOTATOR_ANSWERS = """
SELECT s.instance_id, s.model, s.skill, s.score, g.rationale AS comment, g.created_at
FROM latest_scores s LEFT JOIN judgments g ON g.judgment_id = s.judgment_id
WHERE s.dataset = ? AND s.judge = ?
"""

# Queue items with whether this annotator has answered them, in queue order.
ANNOTATION_QUEUE = """
SELECT q.instance_id, q.model,
       EXISTS (SELECT 1 FROM latest_scores s
               WHERE s.dataset = q.dataset AND s.instance_id = q.instance_id
                 AND s.model = q.model AND s.judge = ?) AS answered
FROM queue_items q
WHERE q.queue = ? AND q.dataset = ?
ORDER BY q.seq
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


# ---------------------------------------------------------------- re-judging

# Responses in the sidebar's slice (no judge condition), the "by filters" re-judge selection.
REJUDGE_CANDIDATES = """
SELECT s.instance_id, s.model
FROM responses s JOIN instances i USING (dataset, instance_id)
WHERE {where} AND s.text IS NOT NULL
ORDER BY TRY_CAST(s.instance_id AS BIGINT) NULLS LAST, s.instance_id, s.model
LIMIT ?
"""

# Latest scores of some scorers (with their kind) on one dataset, for before/after tables.
SCORES_OF_JUDGES = """
SELECT s.instance_id, s.model, s.skill, s.judge, s.score, COALESCE(j.kind, 'llm') AS kind
FROM latest_scores s LEFT JOIN judges j USING (judge)
WHERE s.dataset = ? AND (list_contains(?::VARCHAR[], s.judge) OR j.kind = 'human')
"""

# Work a user added to a dataset (annotations, judging runs): runs the demo did not write.
USER_RUNS_OF_DATASET = """
SELECT r.judge, count(DISTINCT j.judgment_id) AS judgments
FROM runs r JOIN judgments j USING (run_id)
WHERE r.dataset = ? AND NOT starts_with(r.run_id, ?)
GROUP BY r.judge ORDER BY r.judge
"""

# ---------------------------------------------------------------- cell moments (radar, breakdowns)
# Per-cell moments for stats.moment_means: the mean and its instance-clustered CI in one pass.
# {groups} are CELL_GROUPS expressions AS their names, {join} the joins they need; the WHERE
# comes from filter_sql. Columns: group aliases, total, n, total_sq, cross, n_sq, n_instances,
# n_na, lowest / highest (extreme per-instance means: the CI is kept inside them, as a
# bootstrap's would be).

CELL_GROUPS = {  # group name → its SQL expression (selected AS the name)
    "model": "s.model",
    "skill": "s.skill",
    "ability": "COALESCE(k.ability, k.label, s.skill)",
    "difficulty": "i.difficulty::INTEGER",
    "domain": "d.domain",
    "source_task": "COALESCE(i.source_task, '(none)')",
    "flask_hard": "i.flask_hard",
}
JOIN_INSTANCES = "JOIN instances i USING (dataset, instance_id)"
JOIN_SKILLS = "LEFT JOIN skills k ON k.skill = s.skill"
# FLASK's rule: an instance counts toward each of its domains; no domain → "(unlabeled)".
JOIN_DOMAINS = """JOIN (
    SELECT dataset, instance_id,
           unnest(CASE WHEN len(domains) = 0 THEN ['(unlabeled)'] ELSE domains END) AS domain
    FROM instances WHERE dataset = ?
) d USING (dataset, instance_id)"""

# A cell that holds at most one score per instance (its groups include the skill and one judge
# is chosen: latest_scores is unique per dataset, instance, model, judge, skill): the rows are
# the per-instance sums already, so no inner aggregate is needed.
CELL_MOMENTS_PER_SCORE = """
SELECT {groups},
       sum(s.score) AS total, count(s.score) AS n, sum(s.score * s.score) AS total_sq,
       sum(s.score) AS cross, count(s.score) AS n_sq, count(s.score) AS n_instances,
       count(*) - count(s.score) AS n_na, min(s.score) AS lowest, max(s.score) AS highest
FROM latest_scores s {join}
WHERE {where}
GROUP BY ALL
"""

# Cells that pool several scores of an instance: sum per instance first, so the CI treats the
# instance as the unit. {per_instance} is one of the CTE bodies below.
_OUTER_MOMENTS = """
       sum(t) AS total, sum(c) AS n, sum(t * t) AS total_sq, sum(t * c) AS cross,
       sum(c * c) AS n_sq, count(*) FILTER (WHERE c > 0) AS n_instances, sum(na) AS n_na,
       min(t / c) AS lowest, max(t / c) AS highest"""

# Any groups: one inner group per cell × instance (the general case, e.g. no judge chosen).
CELL_MOMENTS_PER_INSTANCE = (
    """
WITH per_instance AS (
    SELECT {groups}, s.instance_id,
           sum(s.score) AS t, count(s.score) AS c, count(*) - count(s.score) AS na
    FROM latest_scores s {join}
    WHERE {where}
    GROUP BY ALL
)
SELECT {aliases},"""
    + _OUTER_MOMENTS
    + """
FROM per_instance
GROUP BY ALL
"""
)

# Model × attributes of the instance (source task, difficulty …): sum per model × instance
# first, straight off the scores (3× fewer groups than with a skill, and no join yet), then join
# the instances for their attributes and filters. {inner_where} holds the score-level filters,
# {where} all of them (alias s = the per-instance rows).
CELL_MOMENTS_BY_INSTANCE = (
    """
WITH per_instance AS (
    SELECT s.dataset, s.model, s.instance_id,
           sum(s.score) AS t, count(s.score) AS c, count(*) - count(s.score) AS na
    FROM latest_scores s
    WHERE {inner_where}
    GROUP BY s.dataset, s.model, s.instance_id
)
SELECT s.model AS model, {attrs},"""
    + _OUTER_MOMENTS
    + """
FROM per_instance s JOIN instances i USING (dataset, instance_id)
WHERE {where}
GROUP BY ALL
"""
)

# Model × ability: per model × instance one sum/count per ability (FILTER on the ability's
# position g in the bound list), then one row per ability again (unnest). {inner} / {outer}
# repeat per ability j; {join} adds the instances when the filters need them.
ABILITY_NAMES = "SELECT DISTINCT COALESCE(ability, label, skill) FROM skills ORDER BY 1"
ABILITY_INNER = """sum(score) FILTER (WHERE g = {g}) AS t{j},
    count(score) FILTER (WHERE g = {g}) AS c{j}, count(*) FILTER (WHERE g = {g}) AS r{j}"""
ABILITY_OUTER = """struct_pack(ability := ?::VARCHAR, total := sum(t{j}), n := sum(c{j}),
    total_sq := sum(t{j} * t{j}), cross := sum(t{j} * c{j}), n_sq := sum(c{j} * c{j}),
    n_instances := count(*) FILTER (WHERE c{j} > 0), n_na := sum(r{j}) - sum(c{j}),
    n_rows := sum(r{j}), lowest := min(t{j} / c{j}), highest := max(t{j} / c{j}))"""
CELL_MOMENTS_BY_ABILITY = (
    """
WITH rows AS (
    SELECT s.dataset, s.model, s.instance_id, s.score,
           list_position(?::VARCHAR[], """
    + CELL_GROUPS["ability"]
    + """) AS g
    FROM latest_scores s LEFT JOIN skills k ON k.skill = s.skill
    WHERE {inner_where}
), per_instance AS (
    SELECT dataset, model, instance_id, {inner}
    FROM rows GROUP BY dataset, model, instance_id
), wide AS (
    SELECT s.model, [{outer}] AS cells
    FROM per_instance s {join}
    WHERE {where}
    GROUP BY s.model
)
SELECT model, unnest(cells, recursive := true) FROM wide
"""
)

# Two models' scores of one skill side by side, counted per distinct pair (one judge: one score
# per instance, model and skill, so no per-instance sums are needed).
PAIRED_SCORES = """
WITH a AS (SELECT s.instance_id, s.skill, s.score FROM latest_scores s {join}
           WHERE {where} AND s.model = ? AND s.score IS NOT NULL),
     b AS (SELECT s.instance_id, s.skill, s.score FROM latest_scores s {join}
           WHERE {where} AND s.model = ? AND s.score IS NOT NULL)
SELECT a.skill AS grp, a.score AS s_a, 1.0 AS c_a, b.score AS s_b, 1.0 AS c_b, count(*) AS count
FROM a JOIN b USING (instance_id, skill)
GROUP BY ALL
"""

# Two models' per-instance sums side by side, counted per distinct pattern: the input of the
# paired bootstrap (stats.paired_bootstrap). {grp} is a CELL_GROUPS expression aliased grp.
PAIRED_PATTERNS = """
WITH per_instance AS (
    SELECT s.model, {grp}, s.instance_id, sum(s.score) AS t, count(s.score) AS c
    FROM latest_scores s {join}
    WHERE {where}
    GROUP BY ALL
), a AS (SELECT * FROM per_instance WHERE model = ?),
   b AS (SELECT * FROM per_instance WHERE model = ?)
SELECT a.grp, a.t AS s_a, a.c AS c_a, b.t AS s_b, b.c AS c_b, count(*) AS count
FROM a JOIN b USING (grp, instance_id)
WHERE a.c > 0 AND b.c > 0
GROUP BY ALL
"""

SKILL_LABELS = """
SELECT skill, label, ability, display_order, scale_min, scale_max, custom FROM skills
"""
