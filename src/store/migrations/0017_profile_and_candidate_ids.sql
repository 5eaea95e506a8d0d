-- Profile and candidate ids are never given again either (as route ids,
-- 0016). A route reads its candidates' policies and accounts by id while it
-- runs (`machine::with_policies`), so a candidate removed from a profile
-- whose id went to the next new candidate, of any profile, would have lent
-- that route a stranger's policy and account; and the app's default profile
-- (kept by id in its settings file) would have become whichever profile
-- took a deleted one's id.
--
-- Each mark starts at the largest id the file still knows of: the profiles
-- (a route's profile_id is cleared with its profile, so it adds none), and
-- the candidates with what route snapshots and attempts recorded of them.
CREATE TABLE profile_ids (
    id   INTEGER PRIMARY KEY CHECK (id = 1),
    last INTEGER NOT NULL
);
INSERT INTO profile_ids (id, last) VALUES (1, IFNULL((SELECT MAX(id) FROM profiles), 0));

CREATE TABLE candidate_ids (
    id   INTEGER PRIMARY KEY CHECK (id = 1),
    last INTEGER NOT NULL
);
INSERT INTO candidate_ids (id, last) VALUES (1, MAX(
    IFNULL((SELECT MAX(id) FROM candidates), 0),
    IFNULL((SELECT MAX(candidate_id) FROM attempts), 0),
    IFNULL((SELECT MAX(json_extract(c.value, '$.id'))
            FROM route_snapshots s, json_each(s.candidates_json) c), 0)
));

CREATE TRIGGER profiles_id_never_reused AFTER INSERT ON profiles
BEGIN
    SELECT RAISE(ABORT, 'profile ids are never reused')
    WHERE NEW.id <= (SELECT last FROM profile_ids);
    UPDATE profile_ids SET last = NEW.id;
END;

CREATE TRIGGER candidates_id_never_reused AFTER INSERT ON candidates
BEGIN
    SELECT RAISE(ABORT, 'candidate ids are never reused')
    WHERE NEW.id <= (SELECT last FROM candidate_ids);
    UPDATE candidate_ids SET last = NEW.id;
END;
