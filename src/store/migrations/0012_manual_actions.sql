-- Every manual action a person took on a route (retry now, skip now,
-- cancel wait, stop, resume, continue, hand over): who (the app or the
-- command line), when, which action, from which state, and what it led to
-- (the attempt it started, the wait it cancelled, the stop), as
-- `record_json`. Written in the transaction of the transition the action
-- caused; append-only, gone only with its route (see `route_purges`,
-- migration 0009).
CREATE TABLE manual_actions (
    id          INTEGER PRIMARY KEY,
    route_id    INTEGER NOT NULL REFERENCES routes(id),
    -- The route's generation after the action's transition.
    generation  INTEGER NOT NULL,
    action      TEXT NOT NULL,
    actor       TEXT NOT NULL,
    at          TEXT NOT NULL,
    record_json TEXT NOT NULL
);
CREATE INDEX manual_actions_by_route ON manual_actions (route_id);
CREATE TRIGGER manual_actions_no_update BEFORE UPDATE ON manual_actions
BEGIN SELECT RAISE(ABORT, 'manual actions are append-only'); END;
CREATE TRIGGER manual_actions_no_delete BEFORE DELETE ON manual_actions
WHEN NOT EXISTS (SELECT 1 FROM route_purges WHERE route_id = OLD.route_id)
BEGIN SELECT RAISE(ABORT, 'manual actions are append-only'); END;

-- A route stopped while its agent ran, before stops recorded that: sending
-- its work again may repeat what the agent did, so its hold says so.
UPDATE routes SET manual_reason_json = json_object(
    'kind', 'stopped_by_you',
    'risk', json_object('kind', 'stopped_while_running', 'attempt',
        (SELECT MAX(number) FROM attempts WHERE route_id = routes.id)))
WHERE state = 'stopped'
  AND (SELECT r.outcome FROM attempts a JOIN attempt_results r ON r.attempt_id = a.id
       WHERE a.route_id = routes.id ORDER BY a.number DESC LIMIT 1) = 'killed';
