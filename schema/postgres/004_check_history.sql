-- SPDX-License-Identifier: MIT
-- schema/postgres/004_check_history.sql - every CI verdict of POST /v1/check, for the shape
-- page of the web view (/ui/shapes).  Keep it in step with schema/sqlite/004_check_history.sql.
CREATE TABLE check_history (
    id            BIGSERIAL PRIMARY KEY,
    created_at    DOUBLE PRECISION NOT NULL,
    template_name TEXT NOT NULL,
    target        TEXT NOT NULL,
    problem_key   TEXT NOT NULL,
    verdict       TEXT NOT NULL,
    token_name    TEXT NOT NULL DEFAULT '',
    entry_json    TEXT NOT NULL
);
CREATE INDEX check_history_shape ON check_history (template_name, target, problem_key, id);
