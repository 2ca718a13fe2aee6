-- Read model: projections/audit_index.py (rebuilt from the events at any time).
-- One row per event with what audits filter on; `seq` orders rows as they were indexed, so a
-- cursor over it never skips an event whose transaction committed late.
CREATE TABLE audit_index (
    seq            bigint      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    global_position bigint     NOT NULL UNIQUE,
    event_id       uuid        NOT NULL,
    stream_type    text        NOT NULL,
    stream_id      uuid        NOT NULL,
    version        integer     NOT NULL,
    type           text        NOT NULL,
    actor          text        NOT NULL,
    scope_kind     text        NOT NULL,
    scope_id       text        NOT NULL,
    recorded_at    timestamptz NOT NULL
);
CREATE INDEX audit_index_stream_idx ON audit_index (stream_id, version);
CREATE INDEX audit_index_type_idx ON audit_index (type, seq);
CREATE INDEX audit_index_actor_idx ON audit_index (actor, seq);
CREATE INDEX audit_index_scope_idx ON audit_index (scope_kind, scope_id, seq);
CREATE INDEX audit_index_time_idx ON audit_index (recorded_at);

-- The scope each stream lives in, as its first event said (later events do not repeat it).
CREATE TABLE audit_streams (
    stream_id  uuid PRIMARY KEY,
    scope_kind text NOT NULL,
    scope_id   text NOT NULL
);
