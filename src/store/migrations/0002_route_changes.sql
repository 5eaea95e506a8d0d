-- A change counter on routes, so an engine re-reads only the routes that
-- changed since it last looked, and an index on state, so finding the
-- active routes does not scan the finished ones.

ALTER TABLE routes ADD COLUMN change_seq INTEGER NOT NULL DEFAULT 0;
UPDATE routes SET change_seq = id;
CREATE INDEX routes_by_change ON routes (change_seq);
CREATE INDEX routes_by_state ON routes (state);

-- Every insert, and every write of state, generation or owner, takes the
-- next counter value. A lease renewal (lease_until only) is not a change.
-- Writers hold the write lock, so values only grow; routes are never deleted
-- (their append-only attempts refer to them), so the maximum never drops.
CREATE TRIGGER routes_change_on_insert AFTER INSERT ON routes
BEGIN
    UPDATE routes SET change_seq = (SELECT MAX(change_seq) FROM routes) + 1
    WHERE id = NEW.id;
END;
CREATE TRIGGER routes_change_on_update AFTER UPDATE OF state, generation, owner ON routes
BEGIN
    UPDATE routes SET change_seq = (SELECT MAX(change_seq) FROM routes) + 1
    WHERE id = NEW.id;
END;
