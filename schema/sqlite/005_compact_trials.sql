-- SPDX-License-Identifier: MIT
-- schema/sqlite/005_compact_trials.sql - fewer bytes per recorded trial: its samples in a compact
-- lossless form, its job link in one B-tree.
-- Keep it in step with schema/postgres/005_compact_trials.sql.

-- The samples of a trial recorded from numbers (every measurement the runner records from
-- this version on): base64 of a dictionary of the distinct values and one tag per sample
-- (format: daemon/store/store_internal.h, tt__samples_pack), ~1/5 of the JSON text.  When it
-- is set, samples_json is NULL and the store reads the samples' JSON text back from it, byte
-- for byte the text they had; rows from before this version, imports and re-measured trials
-- keep samples_json (and samples_z NULL).
ALTER TABLE trials ADD COLUMN samples_z TEXT;

-- job_trials keyed by (job_id, seq) alone: WITHOUT ROWID stores each row once in its primary
-- key's B-tree (a rowid table kept it twice: the table and the key's index), and the index on
-- trial_id goes: no query looks links up by trial (migration 003's merge, the only one, ran
-- before this version; trials are never deleted), so each recorded trial writes one B-tree
-- entry for its link instead of three.
CREATE TABLE job_trials_005 (
    job_id   INTEGER NOT NULL REFERENCES jobs (id) ON DELETE CASCADE,
    seq      INTEGER NOT NULL,
    trial_id INTEGER NOT NULL REFERENCES trials (id),
    reused   INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (job_id, seq)
) WITHOUT ROWID;
INSERT INTO job_trials_005 (job_id, seq, trial_id, reused)
    SELECT job_id, seq, trial_id, reused FROM job_trials;
DROP TABLE job_trials;
ALTER TABLE job_trials_005 RENAME TO job_trials;
