-- One lease row per engine instead of a lease renewed on every route it
-- owns. The heartbeat rewrote `routes.lease_until` of all its routes every
-- 5 s: with 10 000 waiting routes about 3 500 pages (14 MB of WAL) each
-- time, most of an idle engine's work. Now it renews its own row; a route's
-- lease is the later of what its last transition or takeover wrote in
-- `routes.lease_until` and its owner's row here (`store::routes::leases`).
-- A row whose lease ran out may be removed by any engine: the route's own
-- lease is then what counts, and that ran out no later.
CREATE TABLE engine_leases (
    owner       TEXT PRIMARY KEY,
    lease_until TEXT NOT NULL
) WITHOUT ROWID;
