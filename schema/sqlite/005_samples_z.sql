-- SPDX-License-Identifier: MIT
-- schema/sqlite/005_samples_z.sql - a trial's samples in a compact lossless form.
-- Keep it in step with schema/postgres/005_samples_z.sql.

-- The samples of a trial recorded from numbers (every measurement the runner records from
-- this version on): base64 of a dictionary of the distinct values and one tag per sample
-- (format: daemon/store/store_internal.h, tt__samples_pack), ~1/5 of the JSON text.  When it
-- is set, samples_json is NULL and the store reads the samples' JSON text back from it, byte
-- for byte the text they had; rows from before this version, imports and re-measured trials
-- keep samples_json (and samples_z NULL).
ALTER TABLE trials ADD COLUMN samples_z TEXT;
