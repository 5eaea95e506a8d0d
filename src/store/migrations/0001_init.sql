-- Profiles, their ordered candidates, routes with their durable state, and
-- append-only attempt history. Times are RFC 3339 UTC text.

CREATE TABLE profiles (
    id          INTEGER PRIMARY KEY,
    name        TEXT NOT NULL UNIQUE,
    -- bumped by every candidate save; the editor sends the revision it loaded
    revision    INTEGER NOT NULL DEFAULT 1,
    created_at  TEXT NOT NULL,
    updated_at  TEXT NOT NULL
);

CREATE TABLE candidates (
    id              INTEGER PRIMARY KEY,
    profile_id      INTEGER NOT NULL REFERENCES profiles(id) ON DELETE CASCADE,
    position        INTEGER NOT NULL,
    name            TEXT NOT NULL,
    enabled         INTEGER NOT NULL,
    agent_json      TEXT NOT NULL,
    policy_json     TEXT NOT NULL,
    -- bumped whenever policy_json changes; attempts record the revision they used
    policy_revision INTEGER NOT NULL DEFAULT 1,
    UNIQUE (profile_id, position)
);

CREATE TABLE routes (
    id               INTEGER PRIMARY KEY,
    profile_id       INTEGER REFERENCES profiles(id) ON DELETE SET NULL,
    profile_name     TEXT NOT NULL,
    prompt           TEXT NOT NULL,
    cwd              TEXT,
    state            TEXT NOT NULL,
    generation       INTEGER NOT NULL,
    candidate_index  INTEGER NOT NULL,
    -- candidate snapshot taken at start (ids, names, agents, policies)
    candidates_json  TEXT NOT NULL,
    -- route cycle: per-class retry ordinals, reset-wait usage, exclusion set
    cycle_json       TEXT NOT NULL,
    classification_json TEXT,
    -- policy document the last decision was made with
    policy_json      TEXT,
    decision         TEXT,
    -- absolute UTC deadline of a pending wait or retry
    deadline         TEXT,
    pending_outcome  TEXT,
    manual_reason    TEXT,
    -- cross-process ownership lease (see docs/engine.md)
    owner            TEXT,
    lease_until      TEXT,
    created_at       TEXT NOT NULL,
    updated_at       TEXT NOT NULL
);

CREATE INDEX routes_by_owner ON routes (owner);

-- One row per dispatched attempt, written before the agent is launched.
CREATE TABLE attempts (
    id             INTEGER PRIMARY KEY,
    route_id       INTEGER NOT NULL REFERENCES routes(id),
    number         INTEGER NOT NULL,
    generation     INTEGER NOT NULL,
    candidate_index INTEGER NOT NULL,
    candidate_id   INTEGER,
    candidate_name TEXT NOT NULL,
    invocation_id  TEXT NOT NULL UNIQUE,
    started_at     TEXT NOT NULL,
    UNIQUE (route_id, number)
);

-- The outcome of an attempt, written once when it ends.
CREATE TABLE attempt_results (
    attempt_id        INTEGER PRIMARY KEY REFERENCES attempts(id),
    finished_at       TEXT NOT NULL,
    outcome           TEXT NOT NULL,
    code              TEXT,
    class             TEXT,
    rule_id           TEXT,
    catalogue_version TEXT,
    classification_json TEXT,
    effect_json       TEXT,
    policy_revision   INTEGER,
    policy_json       TEXT,
    decision          TEXT,
    -- sanitized, bounded evidence only
    evidence_json     TEXT,
    excerpt           TEXT
);

CREATE TRIGGER attempts_no_update BEFORE UPDATE ON attempts
BEGIN SELECT RAISE(ABORT, 'attempts are append-only'); END;
CREATE TRIGGER attempts_no_delete BEFORE DELETE ON attempts
BEGIN SELECT RAISE(ABORT, 'attempts are append-only'); END;
CREATE TRIGGER attempt_results_no_update BEFORE UPDATE ON attempt_results
BEGIN SELECT RAISE(ABORT, 'attempt results are append-only'); END;
CREATE TRIGGER attempt_results_no_delete BEFORE DELETE ON attempt_results
BEGIN SELECT RAISE(ABORT, 'attempt results are append-only'); END;
