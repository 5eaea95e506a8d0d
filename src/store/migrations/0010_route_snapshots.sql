-- A route's candidate snapshot is written once, when the route starts, in a
-- table of its own. In the route row, every transition rewrote it (SQLite
-- writes a changed row whole, overflow pages and all): 779 KiB per attempt
-- with 1 000 candidates.
--
-- The snapshot keeps which variables each candidate's `env` set, never their
-- values (each value becomes ''): the engine reads them from the profile when
-- it dispatches, so a key removed from a profile is gone from the file. Rows
-- written before this migration lose their values here (`secure_delete` is
-- on, so the old cells and pages are zeroed, not just freed).
CREATE TABLE route_snapshots (
    route_id        INTEGER PRIMARY KEY REFERENCES routes(id),
    candidates_json TEXT NOT NULL
);

INSERT INTO route_snapshots (route_id, candidates_json)
SELECT r.id, (
    SELECT json_group_array(json(CASE
        WHEN json_type(c.value, '$.agent.env') = 'object' THEN json_set(
            c.value, '$.agent.env',
            json((SELECT json_group_object(e.key, '') FROM json_each(c.value, '$.agent.env') e)))
        ELSE c.value END) ORDER BY c.key)
    FROM json_each(r.candidates_json) c)
FROM routes r;

ALTER TABLE routes DROP COLUMN candidates_json;
