-- Dispatch holds are a route's history like its attempts: append-only for
-- every route that is not being deleted, and gone with a route that is
-- (deleted by a person or by retention). Migration 0008 refused every
-- delete, so deleting or pruning a route a mark had held back failed; the
-- trigger now lets a hold go only while its route's id is in
-- `route_purges` (migration 0009), as the attempts' trigger does.
DROP TRIGGER dispatch_holds_no_delete;
CREATE TRIGGER dispatch_holds_no_delete BEFORE DELETE ON dispatch_holds
WHEN NOT EXISTS (SELECT 1 FROM route_purges WHERE route_id = OLD.route_id)
BEGIN SELECT RAISE(ABORT, 'dispatch holds are append-only'); END;
