-- SPDX-License-Identifier: MIT
-- schema/postgres/003_integrity.sql - template ownership, stranded imports, the per-owner job count.
-- Keep it in step with schema/sqlite/003_integrity.sql.  The store also rewrites every
-- stored key into its canonical form in this migration's transaction (daemon/store/
-- store_rekey.c: names in byte order, duplicates merged), see schema/README.md.

-- The token that first stored a template name ('' for built-ins and open daemons): only it or
-- an admin may store another version under that name.
ALTER TABLE templates ADD COLUMN owner TEXT NOT NULL DEFAULT '';

-- Imports are one transaction from now on; an import cut by a crash before this version left
-- a running job that a worker would claim and fail ("unknown backend 'import:...'").
UPDATE jobs SET state = 'failed', error = 'import interrupted (before schema 003)',
       finished_at = tt_now(), lease_owner = '', lease_expires = 0
 WHERE strategy = 'import' AND state IN ('queued', 'running');

-- The per-token job limit counts these at every submission.
CREATE INDEX jobs_owner_state ON jobs (owner, state);
