-- Append one event with a fresh event id (the common case): one statement, one round trip.
-- $1 stream_id, $2 stream_type, $3 expected version (-1: none), $4 event_id, $5 type,
-- $6 schema_version, $7 data, $8 metadata, $9 digest, $10 caller (NULL: the service itself).
-- The expected version is checked before the row (and its position) is drawn; on a mismatch
-- nothing is inserted and the result's `version` is NULL, with the stream's actual version in
-- `current`. A concurrent winner is stopped by unique (stream_id, version). `recorded_at` is the
-- event's time, the transaction's.
WITH head AS (SELECT * FROM trainplate_stream_head($1)),
inserted AS (
    INSERT INTO events (event_id, stream_type, stream_id, version, type, schema_version, data,
                        metadata, recorded_at, prev_hash, hash, caller)
    SELECT $4, $2, $1, head.version + 1, $5, $6, $7, $8, now(), head.hash,
           trainplate_link(head.hash, $9, head.version + 1, head.micros), $10
      FROM head
     WHERE $3 < 0 OR head.version = $3
    RETURNING version, global_position, hash
)
SELECT head.version AS current, inserted.version, inserted.hash,
       CASE WHEN inserted.version IS NULL THEN NULL ELSE ARRAY[inserted.global_position] END AS positions,
       false AS replayed, now() AS recorded_at /* , notify */
  FROM head LEFT JOIN inserted ON true
