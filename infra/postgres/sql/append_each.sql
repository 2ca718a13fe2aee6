-- Append one event to each of several streams of one type, each after the version its writer
-- read (the linked-asset fan-out): one statement, one round trip, however many streams.
-- A stream that has moved on gets nothing, and neither does one that already holds the event
-- id (a replay); a concurrent writer of the same stream is waited for, then wins. The caller
-- learns which streams took their event and reads the others anew.
-- $1 stream_ids, $2 expected versions, $3 event_ids, $4 types, $5 schema_versions, $6 data,
-- $7 digests, $8 stream_type, $9 metadata (one for all), $10 caller (NULL: the service itself).
WITH wanted AS (
    SELECT *
      FROM unnest($1::uuid[], $2::int[], $3::uuid[], $4::text[], $5::smallint[], $6::text[],
                  $7::bytea[])
           AS w(stream_id, expected, event_id, type, schema_version, data, digest)
),
heads AS (
    SELECT w.*, h.version AS head_version, h.hash AS head_hash, h.micros
      FROM wanted w CROSS JOIN LATERAL trainplate_stream_head(w.stream_id) h
),
inserted AS (
    INSERT INTO events (event_id, stream_type, stream_id, version, type, schema_version, data,
                        metadata, recorded_at, prev_hash, hash, caller)
    SELECT event_id, $8, stream_id, head_version + 1, type, schema_version, data::json, $9,
           now(), head_hash, trainplate_link(head_hash, digest, head_version + 1, micros), $10
      FROM heads
     WHERE head_version = expected
    ON CONFLICT DO NOTHING
    RETURNING global_position, stream_id
)
SELECT coalesce(array_agg(stream_id), '{}') AS appended, max(global_position) AS last_position
       /* , notify */
  FROM inserted
