-- The agent process of each attempt, so another process (an adopting
-- engine, a stop from the CLI) can make sure it is gone: its process group
-- id (the agent leads its own group) and the leader's start time in clock
-- ticks since boot (/proc/PID/stat field 22), which tells a reused pid apart.
-- Its own table, written once when the process started: attempts stay
-- append-only.
CREATE TABLE attempt_processes (
    attempt_id INTEGER PRIMARY KEY REFERENCES attempts(id),
    pid        INTEGER NOT NULL,
    pid_start  INTEGER NOT NULL
);
CREATE TRIGGER attempt_processes_no_update BEFORE UPDATE ON attempt_processes
BEGIN SELECT RAISE(ABORT, 'attempt processes are append-only'); END;
