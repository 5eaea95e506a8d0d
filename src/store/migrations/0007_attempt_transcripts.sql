-- What each attempt's agent said and did (its transcript: sanitized and
-- bounded, ~256 KiB at most) and the files of its working directory it
-- changed, in their own table: the route list never reads it, a route's
-- detail reads only the summary columns, one attempt's page the whole.
-- Written once per attempt, never changed.
CREATE TABLE attempt_transcripts (
    attempt_id      INTEGER PRIMARY KEY REFERENCES attempts(id),
    transcript_json TEXT NOT NULL,
    files_json      TEXT,
    session_id      TEXT,
    answer_excerpt  TEXT,
    tool_calls      INTEGER NOT NULL DEFAULT 0,
    refused_json    TEXT NOT NULL DEFAULT '[]',
    input_tokens    INTEGER NOT NULL DEFAULT 0,
    output_tokens   INTEGER NOT NULL DEFAULT 0,
    cost_usd        REAL,
    files_changed   INTEGER
);

CREATE TRIGGER attempt_transcripts_no_update BEFORE UPDATE ON attempt_transcripts
BEGIN SELECT RAISE(ABORT, 'attempt transcripts are written once'); END;
