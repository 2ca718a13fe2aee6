-- The event store: one table, the only source of truth. See DESIGN.md section 3.
CREATE TABLE events (
    global_position bigint      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    -- With global_position, the readers' cursor: rows are read only below the transaction-id
    -- horizon, so a transaction that drew an earlier position but commits later is never skipped.
    transaction_id  xid8        NOT NULL DEFAULT pg_current_xact_id(),
    event_id        uuid        NOT NULL,
    stream_type     text        NOT NULL,
    stream_id       uuid        NOT NULL,
    version         integer     NOT NULL CHECK (version > 0),
    type            text        NOT NULL,
    schema_version  smallint    NOT NULL,
    -- json, not jsonb: the exact bytes the writer hashed and the relay publishes. Read models,
    -- not this table, answer queries on payload fields.
    data            json        NOT NULL,
    metadata        json        NOT NULL,
    recorded_at     timestamptz NOT NULL,
    prev_hash       bytea       NOT NULL,
    hash            bytea       NOT NULL,
    CONSTRAINT events_event_id_key UNIQUE (event_id),
    -- The optimistic-concurrency guard: exactly one writer wins each version of a stream.
    CONSTRAINT events_stream_version_key UNIQUE (stream_id, version)
);

CREATE INDEX events_cursor_idx ON events (transaction_id, global_position);

-- History is append-only: the store never updates or deletes an event, and refuses to be made
-- to. (Writers also rely on it: a stream head they have seen stays the head until they append.)
CREATE FUNCTION trainplate_refuse_change() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION 'events are immutable: % refused', TG_OP USING ERRCODE = 'TP403';
END
$$;

CREATE TRIGGER events_append_only BEFORE UPDATE OR DELETE ON events
    FOR EACH STATEMENT EXECUTE FUNCTION trainplate_refuse_change();

-- One link of a stream's hash chain. `digest` is the writer's sha256 over the event's identity and
-- stored bytes (infra/postgres/hashchain.py); the link adds what only the database knows at insert time:
-- the version and recorded_at (as microseconds since the epoch, from trainplate_micros).
-- The first event's prev_hash is 32 zero bytes.
CREATE FUNCTION trainplate_micros(at timestamptz) RETURNS bigint
LANGUAGE sql IMMUTABLE PARALLEL SAFE
RETURN (extract(epoch FROM at) * 1000000)::bigint;

CREATE FUNCTION trainplate_link(prev_hash bytea, digest bytea, version integer, micros bigint)
RETURNS bytea
LANGUAGE sql IMMUTABLE PARALLEL SAFE
RETURN sha256(prev_hash || digest || int4send(version) || int8send(micros));

-- A stream's head: its version and last hash, or 0 and the zero hash when it has no events yet.
-- (A set-returning SQL function of one SELECT, so the planner inlines it into the appends.)
CREATE FUNCTION trainplate_stream_head(p_stream_id uuid)
RETURNS TABLE (version integer, hash bytea, micros bigint)
LANGUAGE sql STABLE
AS $$
    SELECT coalesce(max(last.version), 0),
           coalesce(max(last.hash), '\x0000000000000000000000000000000000000000000000000000000000000000'::bytea),
           trainplate_micros(now())
      FROM (SELECT e.version, e.hash FROM events e
             WHERE e.stream_id = p_stream_id ORDER BY e.version DESC LIMIT 1) AS last
$$;

-- Where each consumer of the global log has got to, keyed by consumer name.
CREATE TABLE consumer_checkpoints (
    name            text        PRIMARY KEY,
    transaction_id  xid8        NOT NULL,
    global_position bigint      NOT NULL,
    updated_at      timestamptz NOT NULL DEFAULT now()
);
