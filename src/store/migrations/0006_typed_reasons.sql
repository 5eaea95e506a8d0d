-- What was decided and why a route waits for a person, as data rather than
-- sentences: `decision_json` holds the evaluator's decision (routes: the
-- last one; attempt_results: that attempt's), `manual_reason_json` the coded
-- hold reason. The sentence columns stay, written beside them for people
-- reading the file; rows from before keep only those (and
-- `manual_reason_code`), and are read back from them.
ALTER TABLE routes ADD COLUMN decision_json TEXT;
ALTER TABLE routes ADD COLUMN manual_reason_json TEXT;
ALTER TABLE attempt_results ADD COLUMN decision_json TEXT;
