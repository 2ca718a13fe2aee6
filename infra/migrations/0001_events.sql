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
    data            jsonb       NOT NULL,
    metadata        jsonb       NOT NULL,
    recorded_at     timestamptz NOT NULL,
    prev_hash       bytea       NOT NULL,
    hash            bytea       NOT NULL,
    CONSTRAINT events_event_id_key UNIQUE (event_id),
    -- The optimistic-concurrency guard: exactly one writer wins each version of a stream.
    CONSTRAINT events_stream_version_key UNIQUE (stream_id, version)
);

CREATE INDEX events_cursor_idx ON events (transaction_id, global_position);

-- The bytes the per-stream hash chain covers: a JSON array of every stored column but the
-- positions, rendered by jsonb, so any verifier can rebuild them from the row alone.
-- hash = sha256(prev_hash || trainplate_event_bytes(...)); the first event's prev_hash is 32 zero bytes.
CREATE FUNCTION trainplate_event_bytes(
    p_event_id uuid, p_stream_type text, p_stream_id uuid, p_version integer, p_type text,
    p_schema_version smallint, p_recorded_at timestamptz, p_data jsonb, p_metadata jsonb
) RETURNS bytea
LANGUAGE sql IMMUTABLE PARALLEL SAFE
RETURN convert_to(
    jsonb_build_array(
        p_event_id, p_stream_type, p_stream_id, p_version, p_type, p_schema_version,
        (extract(epoch FROM p_recorded_at) * 1000000)::bigint, p_data, p_metadata
    )::text,
    'UTF8'
);

-- One round trip per append: the idempotency check, the expected-version check (before any
-- position is drawn), the hash chain, the inserts and the wake-up of the readers.
-- p_expected < 0 means "no expectation". Errors: TP409 = version conflict (DETAIL: actual
-- version), TP422 = the event ids were already used for another append.
CREATE FUNCTION trainplate_append(
    p_stream_id uuid, p_stream_type text, p_expected integer, p_event_ids uuid[],
    p_types text[], p_schema_versions smallint[], p_data text[], p_metadata jsonb
) RETURNS TABLE (version integer, global_position bigint, replayed boolean)
LANGUAGE plpgsql AS $$
DECLARE
    v_count   integer := coalesce(array_length(p_event_ids, 1), 0);
    v_current integer;
    v_prev    bytea;
    v_hash    bytea;
    v_data    jsonb;
    v_now     timestamptz := now();
    v_stored  integer;
BEGIN
    IF v_count = 0 THEN
        RETURN;
    END IF;

    -- An idempotent retry: the same event ids were stored by an earlier, committed append.
    SELECT count(*) INTO v_stored FROM events e WHERE e.event_id = ANY (p_event_ids);
    IF v_stored > 0 THEN
        IF v_stored <> v_count OR EXISTS (
            SELECT 1 FROM events e
             WHERE e.event_id = ANY (p_event_ids) AND e.stream_id <> p_stream_id
        ) THEN
            RAISE EXCEPTION USING ERRCODE = 'TP422',
                MESSAGE = 'event ids already used for a different append';
        END IF;
        RETURN QUERY
            SELECT e.version, e.global_position, true FROM events e
             WHERE e.event_id = ANY (p_event_ids) ORDER BY e.version;
        RETURN;
    END IF;

    SELECT e.version, e.hash INTO v_current, v_prev
      FROM events e WHERE e.stream_id = p_stream_id ORDER BY e.version DESC LIMIT 1;
    IF NOT FOUND THEN
        v_current := 0;
        v_prev := '\x0000000000000000000000000000000000000000000000000000000000000000'::bytea;
    END IF;
    IF p_expected >= 0 AND v_current <> p_expected THEN
        RAISE EXCEPTION USING ERRCODE = 'TP409',
            MESSAGE = format('stream %s is at version %s, expected %s', p_stream_id, v_current, p_expected),
            DETAIL = v_current::text;
    END IF;

    FOR i IN 1 .. v_count LOOP
        version := v_current + i;
        v_data := p_data[i]::jsonb;
        v_hash := sha256(v_prev || trainplate_event_bytes(
            p_event_ids[i], p_stream_type, p_stream_id, version, p_types[i],
            p_schema_versions[i], v_now, v_data, p_metadata));
        INSERT INTO events AS e (event_id, stream_type, stream_id, version, type, schema_version,
                                 data, metadata, recorded_at, prev_hash, hash)
        VALUES (p_event_ids[i], p_stream_type, p_stream_id, version, p_types[i],
                p_schema_versions[i], v_data, p_metadata, v_now, v_prev, v_hash)
        RETURNING e.global_position INTO global_position;
        replayed := false;
        RETURN NEXT;
        v_prev := v_hash;
    END LOOP;

    -- Readers LISTEN on this channel; notifications are delivered at commit and coalesced.
    PERFORM pg_notify('trainplate_events', '');
END
$$;

-- Where each consumer of the global log has got to, keyed by consumer name.
CREATE TABLE consumer_checkpoints (
    name            text        PRIMARY KEY,
    transaction_id  xid8        NOT NULL,
    global_position bigint      NOT NULL,
    updated_at      timestamptz NOT NULL DEFAULT now()
);
