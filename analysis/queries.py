"""Every SQL statement of the app, with bound parameters. The schema is in schema.sql.

Filters are turned into one WHERE fragment by ``filter_sql`` so every page query applies the
sidebar the same way.
"""

from __future__ import annotations

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

COUNT_DATASETS = "SELECT count(*) FROM datasets"
SKILL_SCALES = "SELECT skill, scale_min, scale_max FROM skills"
DATASET_IDS = "SELECT dataset FROM datasets"
JUDGE_KINDS = "SELECT judge, kind FROM judges"
SCHEMA_VERSION = "SELECT value FROM meta WHERE key = 'schema_version'"
SET_SCHEMA_VERSION = "INSERT OR REPLACE INTO meta VALUES ('schema_version', ?)"

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
