-- Accounts, limit marks, the dispatch queue and concurrency limits.
-- (Numbered 0008: 0007 is the transcripts migration.)

-- The random key derived account ids are hashed with (HMAC-SHA-256), made
-- once per database by SQLite's own generator and never exported: a profile
-- document carries only an account label.
CREATE TABLE install_key (
    id  INTEGER PRIMARY KEY CHECK (id = 1),
    key BLOB NOT NULL
);
INSERT INTO install_key (id, key) VALUES (1, randomblob(32));

-- Each candidate's account (its label, or derived from its kind, config dir
-- and credentials when it was saved) and its concurrency limit, as columns
-- so counting and limits read no JSON. NULL until the engine derives it.
ALTER TABLE candidates ADD COLUMN account TEXT;
ALTER TABLE candidates ADD COLUMN max_concurrent INTEGER;
CREATE INDEX candidates_by_account ON candidates (account);

-- The account of a route's current candidate (what a running route counts
-- against), and its place in the queue while it is `queued`.
ALTER TABLE routes ADD COLUMN account TEXT;
ALTER TABLE routes ADD COLUMN queued_json TEXT;
ALTER TABLE routes ADD COLUMN queued_at TEXT;
CREATE INDEX routes_by_account ON routes (state, account);

-- The account each attempt ran as, for the accounts view's chart.
ALTER TABLE attempts ADD COLUMN account TEXT;
CREATE INDEX attempts_by_start ON attempts (started_at);

-- What a failed attempt said about its account: one mark per account and
-- model ('' for the whole account), replaced by the next one on the same
-- scope. `until` NULL: until a person clears it. The probe is the one route
-- dispatched after the reset, at the generation of its attempt.
CREATE TABLE limit_marks (
    id               INTEGER PRIMARY KEY,
    account          TEXT NOT NULL,
    model            TEXT NOT NULL DEFAULT '',
    mark_json        TEXT NOT NULL,
    until            TEXT,
    probe_route      INTEGER,
    probe_generation INTEGER,
    UNIQUE (account, model)
);

-- Moved by every write of a mark: a dispatch planned from the marks as they
-- were commits only while they still are.
CREATE TABLE limit_version (
    id      INTEGER PRIMARY KEY CHECK (id = 1),
    version INTEGER NOT NULL
);
INSERT INTO limit_version (id, version) VALUES (1, 0);
CREATE TRIGGER limit_marks_inserted AFTER INSERT ON limit_marks
BEGIN UPDATE limit_version SET version = version + 1; END;
CREATE TRIGGER limit_marks_updated AFTER UPDATE ON limit_marks
BEGIN UPDATE limit_version SET version = version + 1; END;
CREATE TRIGGER limit_marks_deleted AFTER DELETE ON limit_marks
BEGIN UPDATE limit_version SET version = version + 1; END;

-- Dispatches a mark held back, each with the mark and what the policy
-- decided: the "not dispatched" lines of a route's history. Append-only.
CREATE TABLE dispatch_holds (
    id              INTEGER PRIMARY KEY,
    route_id        INTEGER NOT NULL REFERENCES routes(id),
    generation      INTEGER NOT NULL,
    candidate_index INTEGER NOT NULL,
    candidate_name  TEXT NOT NULL,
    mark_json       TEXT NOT NULL,
    decision_json   TEXT NOT NULL,
    at              TEXT NOT NULL
);
CREATE INDEX dispatch_holds_by_route ON dispatch_holds (route_id);
CREATE TRIGGER dispatch_holds_no_update BEFORE UPDATE ON dispatch_holds
BEGIN SELECT RAISE(ABORT, 'dispatch holds are append-only'); END;
CREATE TRIGGER dispatch_holds_no_delete BEFORE DELETE ON dispatch_holds
BEGIN SELECT RAISE(ABORT, 'dispatch holds are append-only'); END;

-- Settings every process on this database obeys (the global maximum of
-- running agents): here rather than in the app's settings file.
CREATE TABLE shared_settings (
    key   TEXT PRIMARY KEY,
    value TEXT NOT NULL
);
