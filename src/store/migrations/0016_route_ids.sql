-- A route's number is never given to another route. Since routes can be
-- deleted (0009), SQLite's own choice of id (one more than the largest
-- left) gave a deleted newest route's number to the next run, so an old
-- link, notification or command in a shell's history named a different
-- run. `route_ids.last` is the largest route id there has ever been: a new
-- route takes the one after it (`store::routes::create_route`), and an
-- insert at or below it is refused, whoever makes it.
--
-- A mark instead of rebuilding `routes` with AUTOINCREMENT: the same
-- guarantee without copying the largest table and re-creating its
-- indexes and triggers, which a migration cannot do with foreign keys on.
--
-- The mark starts at the largest id this file still knows of: its routes,
-- the deletions recorded since 0015 and a limit mark's probe route. A
-- route deleted before 0015 whose number is above all of them left no
-- trace, so that one number may still be given again, once.
CREATE TABLE route_ids (
    id   INTEGER PRIMARY KEY CHECK (id = 1),
    last INTEGER NOT NULL
);
INSERT INTO route_ids (id, last) VALUES (1, MAX(
    IFNULL((SELECT MAX(id) FROM routes), 0),
    IFNULL((SELECT MAX(route_id) FROM route_removals), 0),
    IFNULL((SELECT MAX(probe_route) FROM limit_marks), 0)
));

CREATE TRIGGER routes_id_never_reused AFTER INSERT ON routes
BEGIN
    SELECT RAISE(ABORT, 'route ids are never reused')
    WHERE NEW.id <= (SELECT last FROM route_ids);
    UPDATE route_ids SET last = NEW.id;
END;
