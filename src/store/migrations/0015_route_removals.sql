-- Archiving and deleting reach other processes' engines (and so their
-- windows) like any transition. Writing `archived_at` takes the next change
-- value, and a deleted route leaves its id with the change value of its
-- deletion, so an engine reading the changes since its mark sees it gone.
-- Routes are deleted since 0009, so the counter is the highest value in
-- either table: deleting the newest route never hands its value to the next
-- change, which an engine that had read it would then miss.
CREATE TABLE route_removals (
    route_id   INTEGER PRIMARY KEY,
    change_seq INTEGER NOT NULL
);
CREATE INDEX route_removals_by_change ON route_removals (change_seq);

DROP TRIGGER routes_change_on_insert;
DROP TRIGGER routes_change_on_update;
CREATE TRIGGER routes_change_on_insert AFTER INSERT ON routes
BEGIN
    UPDATE routes SET change_seq = MAX(
        IFNULL((SELECT MAX(change_seq) FROM routes), 0),
        IFNULL((SELECT MAX(change_seq) FROM route_removals), 0)
    ) + 1
    WHERE id = NEW.id;
END;
CREATE TRIGGER routes_change_on_update
AFTER UPDATE OF state, generation, owner, archived_at ON routes
BEGIN
    UPDATE routes SET change_seq = MAX(
        IFNULL((SELECT MAX(change_seq) FROM routes), 0),
        IFNULL((SELECT MAX(change_seq) FROM route_removals), 0)
    ) + 1
    WHERE id = NEW.id;
END;
-- After the delete the route's own value is gone from `routes`: it counts
-- too, or the deletion of the newest route would take that very value.
CREATE TRIGGER routes_change_on_delete AFTER DELETE ON routes
BEGIN
    INSERT OR REPLACE INTO route_removals (route_id, change_seq) VALUES (
        OLD.id,
        MAX(
            OLD.change_seq,
            IFNULL((SELECT MAX(change_seq) FROM routes), 0),
            IFNULL((SELECT MAX(change_seq) FROM route_removals), 0)
        ) + 1
    );
END;
