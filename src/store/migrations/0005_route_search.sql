-- The route list's text search (route id, profile name, prompt) reads this
-- index instead of the route rows: with 100 000 routes a search for text no
-- route holds read the whole 570 MB table (over 200 ms), the index is a
-- few MB. `state` first, so a filtered search reads only its states.
CREATE INDEX routes_by_text ON routes (state, profile_name, prompt);
