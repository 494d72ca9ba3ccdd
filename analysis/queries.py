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

# Score files mention instances in passing: fill in what is missing, never blank out.
MERGE_INSTANCES = """
INSERT INTO instances
SELECT dataset, instance_id, instruction, reference, source_task,
       difficulty::TINYINT, domains::VARCHAR[], skills::VARCHAR[], flask_hard
FROM batch_instances
ON CONFLICT (dataset, instance_id) DO UPDATE SET
    instruction = COALESCE(excluded.instruction, instruction),
    reference = COALESCE(excluded.reference, reference),
    source_task = COALESCE(excluded.source_task, source_task),
    difficulty = COALESCE(excluded.difficulty, difficulty),
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
    text = COALESCE(excluded.text, text),
    length = COALESCE(excluded.length, length)
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
