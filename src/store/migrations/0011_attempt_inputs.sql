-- What an attempt sent its agent when it was not the route's prompt in a
-- fresh session: a continuation of an earlier attempt's CLI session (that
-- attempt's number, the session id and the message sent) or a hand-over to
-- the next candidate (the continuation package sent after the prompt). JSON
-- of `route::AttemptInput`; NULL for the plain prompt, so every attempt
-- stored before continuation existed reads as what it was. Written with the
-- attempt row, which stays append-only.
ALTER TABLE attempts ADD COLUMN input_json TEXT;
