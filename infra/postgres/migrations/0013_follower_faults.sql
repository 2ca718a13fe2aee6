-- A follower of the log that met an event it cannot apply stops there and says so here
-- (infra/followers/faults.py): readiness, metrics and `trainplate projections status` read it.
CREATE TABLE follower_faults (
    name            text        PRIMARY KEY,
    transaction_id  xid8        NOT NULL,
    global_position bigint      NOT NULL,
    event_id        uuid        NOT NULL,
    event_type      text        NOT NULL,
    reason          text        NOT NULL,
    since           timestamptz NOT NULL DEFAULT now()
);
