-- Why a route waits for a person, as data: the code of a reason the route
-- machine acts on (a cancelled wait, a stop by you), NULL for a reason that
-- is only words. `manual_reason` keeps the words shown.
ALTER TABLE routes ADD COLUMN manual_reason_code TEXT;

-- Before this column only the sentence was stored; these are the exact
-- sentences earlier builds wrote for the two coded reasons.
UPDATE routes SET manual_reason_code = 'wait_cancelled'
WHERE manual_reason = 'wait cancelled by you; retry now, skip to the next candidate, or stop';
UPDATE routes SET manual_reason_code = 'stopped_by_you'
WHERE manual_reason = 'stopped by you';
