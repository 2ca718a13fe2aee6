-- Read-your-writes by default (infra/http/consistency.py): a caller's read waits until the read
-- models have applied the caller's own last event. That event is found with this index (the
-- newest in the followers' order, transaction id then position), so a write costs no extra
-- statement and any API process finds it. Only callers' events are indexed: the service's own
-- writes (the fan-out's thousands at a time, the submitter's) have no caller to read them back.
CREATE INDEX events_by_actor
    ON events ((metadata->>'actorSubject'), transaction_id, global_position)
 WHERE metadata->>'actorKind' <> 'system';

-- What the caller's writes caused downstream: the last template event the linked-asset fan-out
-- appended for an event of theirs, written in the fan-out's own transaction with its checkpoint.
CREATE TABLE downstream_marks (
    principal       text   PRIMARY KEY,
    transaction_id  xid8   NOT NULL,
    global_position bigint NOT NULL
);
