-- SPDX-License-Identifier: MIT
-- schema/sqlite/006_trial_keys.sql - a trial names its measurement key by one integer.
-- Keep it in step with schema/postgres/006_trial_keys.sql.

-- The measurement keys (template hash, problem, target, backend fingerprint), once each.  A
-- trial held the four texts itself, and its unique index repeated them: every recorded trial
-- wrote ~70 bytes of key twice and compared them at each step of the index's B-tree.  Now
-- the index is (key_id, config_hash), two integers.  Keys are never deleted.
CREATE TABLE trial_keys (
    id            INTEGER PRIMARY KEY,
    template_hash TEXT NOT NULL,
    problem_key   TEXT NOT NULL,
    target        TEXT NOT NULL,
    backend_fp    TEXT NOT NULL,
    UNIQUE (template_hash, problem_key, target, backend_fp)
);
INSERT INTO trial_keys (template_hash, problem_key, target, backend_fp)
    SELECT DISTINCT template_hash, problem_key, target, backend_fp FROM trials
     ORDER BY template_hash, problem_key, target, backend_fp;

-- SQLite cannot drop a UNIQUE constraint or a column of it: trials is rebuilt (same ids,
-- same column order after key_id), and job_trials with it, since its rows reference trials
-- (rebuilt first and renamed last, so that no foreign key is ever broken in between).
CREATE TABLE trials_006 (
    id            INTEGER PRIMARY KEY,
    key_id        INTEGER NOT NULL REFERENCES trial_keys (id),
    config_hash   INTEGER NOT NULL,
    config_key    TEXT NOT NULL,
    config_json   TEXT NOT NULL,
    status        TEXT NOT NULL,
    error         TEXT,
    median_us     REAL NOT NULL DEFAULT 0,
    spread_us     REAL NOT NULL DEFAULT 0,
    min_us        REAL NOT NULL DEFAULT 0,
    samples_json  TEXT,
    predicted_us  REAL NOT NULL DEFAULT 0,
    compile_s     REAL NOT NULL DEFAULT 0,
    measure_s     REAL NOT NULL DEFAULT 0,
    job_id        INTEGER NOT NULL DEFAULT 0,
    created_at    REAL NOT NULL,
    measured_by   TEXT NOT NULL DEFAULT '',
    samples_z     TEXT,
    UNIQUE (key_id, config_hash)
);
INSERT INTO trials_006 (id, key_id, config_hash, config_key, config_json, status, error,
                        median_us, spread_us, min_us, samples_json, predicted_us, compile_s,
                        measure_s, job_id, created_at, measured_by, samples_z)
    SELECT t.id, k.id, t.config_hash, t.config_key, t.config_json, t.status, t.error,
           t.median_us, t.spread_us, t.min_us, t.samples_json, t.predicted_us, t.compile_s,
           t.measure_s, t.job_id, t.created_at, t.measured_by, t.samples_z
      FROM trials t JOIN trial_keys k ON k.template_hash = t.template_hash AND
           k.problem_key = t.problem_key AND k.target = t.target AND
           k.backend_fp = t.backend_fp
     ORDER BY t.id;

CREATE TABLE job_trials_006 (
    job_id   INTEGER NOT NULL REFERENCES jobs (id) ON DELETE CASCADE,
    seq      INTEGER NOT NULL,
    trial_id INTEGER NOT NULL REFERENCES trials_006 (id),
    reused   INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (job_id, seq)
) WITHOUT ROWID;
INSERT INTO job_trials_006 (job_id, seq, trial_id, reused)
    SELECT job_id, seq, trial_id, reused FROM job_trials;

DROP TABLE job_trials;
DROP TABLE trials;
-- renaming trials_006 rewrites job_trials_006's reference to it (SQLite >= 3.26)
ALTER TABLE trials_006 RENAME TO trials;
ALTER TABLE job_trials_006 RENAME TO job_trials;
