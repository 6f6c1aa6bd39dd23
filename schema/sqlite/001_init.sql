-- SPDX-License-Identifier: MIT
-- schema/sqlite/001_init.sql - the initial tiletune schema for SQLite (embedded engine).
-- Times are unix seconds (REAL).  Never edit this file once released: add 002_*.sql.
-- Keep it in step with schema/postgres/001_init.sql (same tables, columns and meanings).

CREATE TABLE templates (
    name        TEXT NOT NULL,
    hash        TEXT NOT NULL,              -- 16 hex digits of the canonical document
    version     TEXT NOT NULL DEFAULT '',
    doc         TEXT NOT NULL,              -- canonical JSON text
    seq         INTEGER NOT NULL,           -- insertion order: the latest per name wins
    created_at  REAL NOT NULL,
    PRIMARY KEY (name, hash)
);
CREATE INDEX templates_latest ON templates (name, seq);

CREATE TABLE jobs (
    id               INTEGER PRIMARY KEY AUTOINCREMENT,   -- ids are never reused
    template_name    TEXT NOT NULL,
    template_hash    TEXT NOT NULL,
    target           TEXT NOT NULL,
    backend          TEXT NOT NULL,
    backend_fp       TEXT NOT NULL,
    strategy         TEXT NOT NULL,
    problem_key      TEXT NOT NULL,
    problem_json     TEXT NOT NULL,
    options_json     TEXT,
    budget_trials    INTEGER NOT NULL DEFAULT 0,
    budget_seconds   REAL NOT NULL DEFAULT 0,
    seed             INTEGER NOT NULL DEFAULT 0,
    state            TEXT NOT NULL DEFAULT 'queued'
                     CHECK (state IN ('queued', 'running', 'done', 'failed', 'cancelled')),
    planned          INTEGER NOT NULL DEFAULT 0,
    done             INTEGER NOT NULL DEFAULT 0,
    best_trial       INTEGER NOT NULL DEFAULT 0,
    best_us          REAL NOT NULL DEFAULT 0,
    best_pred_us     REAL NOT NULL DEFAULT 0,
    best_config_json TEXT,
    error            TEXT,
    owner            TEXT NOT NULL DEFAULT '',
    lease_owner      TEXT NOT NULL DEFAULT '',
    lease_expires    REAL NOT NULL DEFAULT 0,
    created_at       REAL NOT NULL,
    started_at       REAL NOT NULL DEFAULT 0,
    finished_at      REAL NOT NULL DEFAULT 0
);
CREATE INDEX jobs_state ON jobs (state, id);
CREATE INDEX jobs_template ON jobs (template_name);

-- One measurement per key; config_hash is the config's 64-bit hash reinterpreted
-- as a signed 64-bit integer (SQLite integers are signed).
CREATE TABLE trials (
    id            INTEGER PRIMARY KEY,
    template_hash TEXT NOT NULL,
    problem_key   TEXT NOT NULL,
    target        TEXT NOT NULL,
    backend_fp    TEXT NOT NULL,
    config_hash   INTEGER NOT NULL,
    config_key    TEXT NOT NULL,
    config_json   TEXT NOT NULL,
    status        TEXT NOT NULL,            -- API code string of tt_rc: 'ok', 'build_failed', ...
    error         TEXT,
    median_us     REAL NOT NULL DEFAULT 0,
    spread_us     REAL NOT NULL DEFAULT 0,
    min_us        REAL NOT NULL DEFAULT 0,
    samples_json  TEXT,
    predicted_us  REAL NOT NULL DEFAULT 0,
    compile_s     REAL NOT NULL DEFAULT 0,
    measure_s     REAL NOT NULL DEFAULT 0,
    job_id        INTEGER NOT NULL DEFAULT 0,  -- job that measured it first (0: none)
    created_at    REAL NOT NULL,
    UNIQUE (template_hash, problem_key, target, backend_fp, config_hash)
);

CREATE TABLE job_trials (
    job_id   INTEGER NOT NULL REFERENCES jobs (id) ON DELETE CASCADE,
    seq      INTEGER NOT NULL,
    trial_id INTEGER NOT NULL REFERENCES trials (id),
    reused   INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (job_id, seq)
);
CREATE INDEX job_trials_trial ON job_trials (trial_id);

CREATE TABLE best (
    template_name TEXT NOT NULL,
    template_hash TEXT NOT NULL,
    problem_key   TEXT NOT NULL,
    problem_json  TEXT,
    target        TEXT NOT NULL,
    backend_fp    TEXT NOT NULL,
    trial_id      INTEGER NOT NULL,
    job_id        INTEGER NOT NULL DEFAULT 0,
    config_json   TEXT NOT NULL,
    median_us     REAL NOT NULL,
    spread_us     REAL NOT NULL DEFAULT 0,
    predicted_us  REAL NOT NULL DEFAULT 0,
    updated_at    REAL NOT NULL,
    PRIMARY KEY (template_name, template_hash, problem_key, target, backend_fp)
);
CREATE INDEX best_lookup ON best (template_name, target, problem_key, median_us);

CREATE TABLE calibrations (
    target     TEXT NOT NULL,
    backend_fp TEXT NOT NULL,
    calib_json TEXT NOT NULL,
    npoints    INTEGER NOT NULL DEFAULT 0,
    error      REAL NOT NULL DEFAULT 0,
    updated_at REAL NOT NULL,
    PRIMARY KEY (target, backend_fp)
);

CREATE TABLE tokens (
    name       TEXT PRIMARY KEY,
    sha256     TEXT NOT NULL UNIQUE,        -- hex SHA-256 of the secret, never the secret
    scopes     TEXT NOT NULL DEFAULT '',
    created_at REAL NOT NULL
);

-- Named, pinned copies of best rows for CI regression checks (tlctl check --baseline).
CREATE TABLE baselines (
    name          TEXT NOT NULL,
    template_name TEXT NOT NULL,
    template_hash TEXT NOT NULL,
    problem_key   TEXT NOT NULL,
    problem_json  TEXT,
    target        TEXT NOT NULL,
    backend_fp    TEXT NOT NULL,
    trial_id      INTEGER NOT NULL DEFAULT 0,
    config_json   TEXT NOT NULL,
    median_us     REAL NOT NULL,
    spread_us     REAL NOT NULL DEFAULT 0,
    created_at    REAL NOT NULL,
    PRIMARY KEY (name, template_name, problem_key, target, backend_fp)
);
