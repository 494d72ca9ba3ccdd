-- Finegrain store schema (DuckDB). Created on first use; every statement is idempotent.
CREATE SEQUENCE IF NOT EXISTS judgment_seq START 1;

CREATE TABLE IF NOT EXISTS meta (
    key VARCHAR PRIMARY KEY,
    value VARCHAR
);

CREATE TABLE IF NOT EXISTS datasets (
    dataset VARCHAR PRIMARY KEY,
    title VARCHAR NOT NULL,
    source VARCHAR NOT NULL,          -- folder, URL or file it came from
    simulated BOOLEAN NOT NULL DEFAULT false,
    seed BIGINT,                      -- simulation seed (simulated data only)
    description VARCHAR,
    imported_at TIMESTAMP NOT NULL DEFAULT current_timestamp
);

-- The shared taxonomy: FLASK's 12 skills (1-5), the criteria of FLASK-shaped data in every
-- dataset. A dataset's own criteria live in `criteria` below; read both through the view
-- `dataset_skills`, joined on (dataset, skill). `custom`: up to v3 custom criteria were global rows
-- here; v4 moves every one that a dataset uses into `criteria` (see the end of this file), so a
-- custom row left here is one no dataset used, kept and ignored.
CREATE TABLE IF NOT EXISTS skills (
    skill VARCHAR PRIMARY KEY,
    label VARCHAR NOT NULL,
    ability VARCHAR,
    display_order INTEGER NOT NULL,
    definition VARCHAR,
    rubric VARCHAR[],                 -- one text per integer score, lowest first
    scale_min DOUBLE NOT NULL DEFAULT 1,
    scale_max DOUBLE NOT NULL DEFAULT 5,
    custom BOOLEAN NOT NULL DEFAULT false
);

CREATE TABLE IF NOT EXISTS instances (
    dataset VARCHAR NOT NULL,
    instance_id VARCHAR NOT NULL,
    instruction VARCHAR,
    reference VARCHAR,
    source_task VARCHAR,
    difficulty TINYINT,               -- 1..5, NULL = unlabeled
    domains VARCHAR[] NOT NULL,
    skills VARCHAR[] NOT NULL,
    flask_hard BOOLEAN NOT NULL DEFAULT false,  -- also in FLASK-Hard
    PRIMARY KEY (dataset, instance_id)
);

CREATE TABLE IF NOT EXISTS responses (
    dataset VARCHAR NOT NULL,
    instance_id VARCHAR NOT NULL,
    model VARCHAR NOT NULL,
    -- Uncompressed: FSST on long free text cost 2/3 of a FLASK import's write time.
    text VARCHAR USING COMPRESSION uncompressed,
    length INTEGER,                   -- characters
    PRIMARY KEY (dataset, instance_id, model)
);

CREATE TABLE IF NOT EXISTS judges (
    judge VARCHAR PRIMARY KEY,
    kind VARCHAR NOT NULL CHECK (kind IN ('human', 'llm')),
    backend VARCHAR,                  -- openai, transformers, import, simulation, annotation
    model VARCHAR,
    prompt_version VARCHAR,
    params VARCHAR                    -- JSON, never an API key
);

CREATE TABLE IF NOT EXISTS runs (
    run_id VARCHAR PRIMARY KEY,       -- imports: a hash of judge + file content (idempotent)
    judge VARCHAR NOT NULL,
    dataset VARCHAR NOT NULL,
    source VARCHAR,
    started_at TIMESTAMP NOT NULL DEFAULT current_timestamp,
    finished_at TIMESTAMP,
    status VARCHAR NOT NULL,          -- running, complete, cancelled, failed, interrupted, expired
    n_items INTEGER DEFAULT 0,
    n_ok INTEGER DEFAULT 0,
    n_failed INTEGER DEFAULT 0,
    n_cached INTEGER DEFAULT 0,
    prompt_tokens BIGINT DEFAULT 0,
    completion_tokens BIGINT DEFAULT 0,
    cost_usd DOUBLE DEFAULT 0
);

CREATE TABLE IF NOT EXISTS judgments (
    judgment_id BIGINT PRIMARY KEY DEFAULT nextval('judgment_seq'),
    run_id VARCHAR NOT NULL,
    dataset VARCHAR NOT NULL,
    instance_id VARCHAR NOT NULL,
    model VARCHAR NOT NULL,
    judge VARCHAR NOT NULL,
    raw_output VARCHAR,               -- always kept, so parsing can be redone for free
    rationale VARCHAR,
    parse_status VARCHAR NOT NULL,    -- ok, failed (unparseable output), error (call failed)
    error VARCHAR,
    latency_ms DOUBLE,
    prompt_tokens INTEGER,
    completion_tokens INTEGER,
    created_at TIMESTAMP NOT NULL DEFAULT current_timestamp
);

-- Full score history; a newer run marks the rows it replaces as superseded.
CREATE TABLE IF NOT EXISTS scores (
    dataset VARCHAR NOT NULL,
    instance_id VARCHAR NOT NULL,
    model VARCHAR NOT NULL,
    judge VARCHAR NOT NULL,
    skill VARCHAR NOT NULL,
    score DOUBLE,                     -- NULL = N/A
    judgment_id BIGINT,
    run_id VARCHAR NOT NULL,
    superseded BOOLEAN NOT NULL DEFAULT false
);

-- What every page reads: the latest score per (dataset, instance, model, judge, skill).
CREATE OR REPLACE VIEW latest_scores AS
SELECT dataset, instance_id, model, judge, skill, score, judgment_id, run_id
FROM scores
WHERE NOT superseded;

-- v2: the content key of a judge call (same prompt + same judge configuration → same key), so
-- a repeated or resumed run reuses what was paid for. Added in place to v1 stores.
ALTER TABLE judgments ADD COLUMN IF NOT EXISTS cache_key VARCHAR;

-- Work lists the pages share ("rejudge", "annotate"): one row per queued response, kept in the
-- store so a queue survives page switches, a browser refresh and a restart. seq keeps the order
-- items were added in.
CREATE SEQUENCE IF NOT EXISTS queue_seq START 1;

CREATE TABLE IF NOT EXISTS queue_items (
    queue VARCHAR NOT NULL,
    dataset VARCHAR NOT NULL,
    instance_id VARCHAR NOT NULL,
    model VARCHAR NOT NULL,
    added_at TIMESTAMP NOT NULL DEFAULT current_timestamp,
    seq BIGINT NOT NULL DEFAULT nextval('queue_seq'),
    PRIMARY KEY (queue, dataset, instance_id, model)
);

-- v4: criteria belong to their dataset. The same name may carry different scales, labels and
-- rubrics in two datasets (coherence 1-3 in one, 1-5 in another); FLASK's skills stay shared.
-- A dataset may also give a FLASK skill's name its own scale (HelpSteer's correctness is 0-4):
-- its row here then wins over the shared one for that dataset only.
CREATE TABLE IF NOT EXISTS criteria (
    dataset VARCHAR NOT NULL,
    skill VARCHAR NOT NULL,
    label VARCHAR NOT NULL,
    ability VARCHAR,                  -- NULL: the criterion is its own group on ability views
    display_order INTEGER NOT NULL,
    definition VARCHAR,
    rubric VARCHAR[],                 -- one text per integer score, lowest first
    scale_min DOUBLE NOT NULL,
    scale_max DOUBLE NOT NULL,
    PRIMARY KEY (dataset, skill)
);

-- What every query joins to read a score's scale, label, ability and rubric:
--     LEFT JOIN dataset_skills k ON k.dataset = s.dataset AND k.skill = s.skill
-- One row per (dataset, skill): the dataset's own criterion, else the shared skill. Small
-- (datasets x 12 + own criteria), so the join costs what the old one on `skills` did.
CREATE OR REPLACE VIEW dataset_skills AS
SELECT dataset, skill, label, ability, display_order, definition, rubric, scale_min, scale_max,
       true AS custom
FROM criteria
UNION ALL
SELECT d.dataset, k.skill, k.label, k.ability, k.display_order, k.definition, k.rubric,
       k.scale_min, k.scale_max, false AS custom
FROM datasets d CROSS JOIN skills k
WHERE NOT k.custom
  AND NOT EXISTS (SELECT 1 FROM criteria c WHERE c.dataset = d.dataset AND c.skill = k.skill);

-- v3 -> v4, in the same transaction as the statements above: each global custom criterion is
-- copied to every dataset that uses it (in its scores or its instances' skill lists), then its
-- global row goes. Idempotent: a second run finds no used custom row left in `skills`.
INSERT INTO criteria (dataset, skill, label, ability, display_order, definition, rubric,
                      scale_min, scale_max)
SELECT u.dataset, k.skill, k.label, k.ability, k.display_order, k.definition, k.rubric,
       k.scale_min, k.scale_max
FROM skills k
JOIN (SELECT DISTINCT dataset, skill FROM scores
      UNION SELECT DISTINCT dataset, unnest(skills) AS skill FROM instances) u USING (skill)
WHERE k.custom
ON CONFLICT DO NOTHING;

DELETE FROM skills
WHERE custom
  AND (skill IN (SELECT skill FROM scores) OR skill IN (SELECT unnest(skills) FROM instances));

-- v5: per model × instance sums of the latest scores, the inner step of every page that pools
-- several scores of an instance (abilities, source tasks, Overall) with the instance as the
-- unit. One row per (dataset, judge, model, instance, ability group) and one with grp NULL
-- pooling all the instance's skills. Derived data, kept current by every write in its own
-- transaction (analysis/core/score_sums.py).
CREATE TABLE IF NOT EXISTS score_sums (
    dataset VARCHAR NOT NULL,
    judge VARCHAR NOT NULL,
    model VARCHAR NOT NULL,
    instance_id VARCHAR NOT NULL,
    grp VARCHAR,                      -- COALESCE(ability, label, skill); NULL = all pooled
    total DOUBLE,                     -- sum of the non-N/A scores; NULL when all are N/A
    n BIGINT NOT NULL,                -- non-N/A scores
    n_rows BIGINT NOT NULL            -- all scores, N/A included
);

-- v4 -> v5 (after the criteria moved above, which decide the groups): fill it from the
-- scores. Idempotent: a filled table is left alone; an empty one means no current scores.
INSERT INTO score_sums (dataset, judge, model, instance_id, grp, total, n, n_rows)
SELECT s.dataset, s.judge, s.model, s.instance_id, COALESCE(k.ability, k.label, s.skill) AS grp,
       sum(s.score), count(s.score), count(*)
FROM latest_scores s
LEFT JOIN dataset_skills k ON k.dataset = s.dataset AND k.skill = s.skill
WHERE NOT EXISTS (SELECT 1 FROM score_sums)
GROUP BY GROUPING SETS ((s.dataset, s.judge, s.model, s.instance_id, grp),
                        (s.dataset, s.judge, s.model, s.instance_id));

-- v6: the family of each LLM judge and of each model ("openai", "anthropic", ...), which the
-- Judges page's self-preference section reads: does a judge score its own family's models
-- higher than the humans do? Edited by people (analysis/views/judge_family.py); a name without
-- a row has no family and is left out of that comparison. Names are not foreign keys: a
-- mapping may be written before the judge's or model's scores are imported.
CREATE TABLE IF NOT EXISTS families (
    kind VARCHAR NOT NULL CHECK (kind IN ('judge', 'model')),
    name VARCHAR NOT NULL,
    family VARCHAR NOT NULL,
    PRIMARY KEY (kind, name)
);

-- v6: a repeat run (the Judges page's Stability: a judge asked again at temperature > 0 on
-- items it scored) has its number here. Its scores are history from the moment they are
-- written (superseded), so the judge's current scores, and every page but Stability, never
-- mix in resampled answers. NULL: any other run.
ALTER TABLE runs ADD COLUMN IF NOT EXISTS repeat_number INTEGER;

-- v7: a judging run sent through the OpenAI Batch API (judges/batch_run.py): its request files
-- ("parts", split at the service's limits). Every part and its requests are written with the run
-- row, before anything is sent (a local copy of each file waits in the journal folder until the
-- service has it); then each part's uploaded file id, then its batch id, each as soon as the
-- service gives it. So a killed process (or the app restarted) sends what was never sent and
-- picks the batches up again instead of submitting them twice (a batch made but not yet written
-- here is found by its input file). `status`: 'planned', 'uploaded', then the service's
-- (validating, in_progress, finalizing, completed, failed, expired, cancelling, cancelled), or
-- 'failed'/'cancelled'/'forgotten' set here for a part that never got a batch or was given up;
-- `stored_at` is set once every answer and error of the part is in `judgments` (written in the
-- same transaction).
CREATE TABLE IF NOT EXISTS batches (
    run_id VARCHAR NOT NULL,
    part INTEGER NOT NULL,
    base_url VARCHAR NOT NULL,        -- the service's API (never a key)
    key_env VARCHAR,                  -- the variable whose key it gets (NULL: no key is sent)
    n_requests INTEGER NOT NULL,
    n_bytes BIGINT NOT NULL,
    input_file_id VARCHAR,
    batch_id VARCHAR,
    status VARCHAR NOT NULL,
    n_completed INTEGER NOT NULL DEFAULT 0,
    n_failed INTEGER NOT NULL DEFAULT 0,
    output_file_id VARCHAR,
    error_file_id VARCHAR,
    errors VARCHAR,                   -- why the service failed or ended the batch
    updated_at TIMESTAMP NOT NULL DEFAULT current_timestamp,
    stored_at TIMESTAMP,              -- NULL: answers still to store (a pending batch)
    PRIMARY KEY (run_id, part)
);

-- v7: what each request line of a batch part asks: the items sharing one prompt (its cache key,
-- the line's custom_id) and the skills it scores, so answers are stored without planning again.
CREATE TABLE IF NOT EXISTS batch_requests (
    run_id VARCHAR NOT NULL,
    part INTEGER NOT NULL,
    custom_id VARCHAR NOT NULL,
    instance_id VARCHAR NOT NULL,
    model VARCHAR NOT NULL,
    skills VARCHAR[] NOT NULL
);
