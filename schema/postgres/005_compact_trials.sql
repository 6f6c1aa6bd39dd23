-- SPDX-License-Identifier: MIT
-- schema/postgres/005_compact_trials.sql - fewer bytes per recorded trial: its samples in a compact
-- lossless form, its job link in one B-tree.
-- Keep it in step with schema/sqlite/005_compact_trials.sql.

-- The samples of a trial recorded from numbers (every measurement the runner records from
-- this version on): base64 of a dictionary of the distinct values and one tag per sample
-- (format: daemon/store/store_internal.h, tt__samples_pack), ~1/5 of the JSON text.  When it
-- is set, samples_json is NULL and the store reads the samples' JSON text back from it, byte
-- for byte the text they had; rows from before this version, imports and re-measured trials
-- keep samples_json (and samples_z NULL).
ALTER TABLE trials ADD COLUMN samples_z TEXT;

-- The index on job_trials.trial_id goes: no query looks links up by trial (migration 003's
-- merge, the only one, ran before this version; trials are never deleted).  SQLite also
-- rebuilds job_trials WITHOUT ROWID here (a storage detail PostgreSQL does not have).
DROP INDEX job_trials_trial;
