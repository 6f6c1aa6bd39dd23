-- SPDX-License-Identifier: MIT
-- schema/postgres/002_measured_by.sql - who measured each trial, and how a job was last claimed.
-- Keep it in step with schema/sqlite/002_measured_by.sql.

-- The lease owner name of the worker that measured the trial ("host:pid/wN"); '' for trials
-- recorded before this migration or imported from files.
ALTER TABLE trials ADD COLUMN measured_by TEXT NOT NULL DEFAULT '';

-- Set by each claim: NULL when the job was queued, '' when it was running without a lease
-- (released at a restart: a resume), else the owner whose lease had expired (a takeover).
ALTER TABLE jobs ADD COLUMN claimed_from TEXT;
