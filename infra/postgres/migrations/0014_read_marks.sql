-- Read-your-writes by default (infra/postgres/read_marks.py): a caller's read waits until the
-- read models have applied the caller's own last event. Every append writes who will read it
-- back (`caller`: the user's or application's subject; NULL for the service's own writes, such
-- as the fan-out's thousands at a time), and that event is found with this index, the newest in
-- the followers' order. A plain column, so no JSON is parsed on the write path; events from
-- before this migration have none (they were read back long since).
ALTER TABLE events ADD COLUMN caller text;
CREATE INDEX events_by_caller ON events (caller, transaction_id, global_position)
 WHERE caller IS NOT NULL;

-- What the caller's writes caused downstream: the last template event the linked-asset fan-out
-- appended for an event of theirs, written in the fan-out's own transaction with its checkpoint.
CREATE TABLE downstream_marks (
    principal       text   PRIMARY KEY,
    transaction_id  xid8   NOT NULL,
    global_position bigint NOT NULL
);
