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

-- FLASK's 12 skills and any custom criteria, each with its own scale.
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
    status VARCHAR NOT NULL,          -- running, complete, cancelled, failed
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
