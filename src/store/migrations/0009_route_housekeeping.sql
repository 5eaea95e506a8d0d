-- Route housekeeping: archiving hides a route at rest from the everyday
-- lists and keeps it with its history; deleting removes it with its history.
--
-- The attempt history stays append-only for every route that is not being
-- deleted: a deletion writes the route's id into `route_purges` inside its
-- own transaction, and only rows of a route named there may go. The row is
-- removed again before that transaction commits.
ALTER TABLE routes ADD COLUMN archived_at TEXT;

CREATE TABLE route_purges (route_id INTEGER PRIMARY KEY);

DROP TRIGGER attempts_no_delete;
CREATE TRIGGER attempts_no_delete BEFORE DELETE ON attempts
WHEN NOT EXISTS (SELECT 1 FROM route_purges WHERE route_id = OLD.route_id)
BEGIN SELECT RAISE(ABORT, 'attempts are append-only'); END;

DROP TRIGGER attempt_results_no_delete;
CREATE TRIGGER attempt_results_no_delete BEFORE DELETE ON attempt_results
WHEN NOT EXISTS (
    SELECT 1 FROM attempts a JOIN route_purges p ON p.route_id = a.route_id
    WHERE a.id = OLD.attempt_id
)
BEGIN SELECT RAISE(ABORT, 'attempt results are append-only'); END;

-- The list's filters and counts leave archived routes out (or show only
-- them): both indexes lead with `archived_at`, so a page, a count or a
-- search still reads an index, not the route rows.
DROP INDEX routes_by_text;
CREATE INDEX routes_by_text ON routes (archived_at, state, profile_name, prompt);
CREATE INDEX routes_by_archive ON routes (archived_at, state);
