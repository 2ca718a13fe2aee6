-- Append several events, or events whose ids the caller chose (an idempotency key, a
-- deterministic fan-out): one statement, one round trip.
-- $1 stream_id, $2 stream_type, $3 expected version (-1: none), $4 event_ids, $5 types,
-- $6 schema_versions, $7 data, $8 metadata (one for all), $9 digests (32 bytes each, in one
-- bytea), $10 caller (NULL: the service itself).
-- One row comes back: `version` (the stream's new version) and `positions`, or on a mismatch
-- `version` NULL and `current` = the stream's actual version. If the first event id is stored
-- already, this is a retry: nothing is inserted and a second row (replayed = true) carries the
-- stored events' version and positions, with `current` = how many of the ids are stored in this
-- stream (-1 if any is stored in another).
WITH prior AS (
    SELECT e.stream_id, e.version, e.global_position, e.recorded_at
      FROM events e WHERE e.event_id = ANY ($4::uuid[])
       AND EXISTS (SELECT 1 FROM events f WHERE f.event_id = ($4::uuid[])[1])
),
head AS (SELECT * FROM trainplate_stream_head($1)),
chain AS MATERIALIZED (  -- the head's hash, then each event's link (event n's at 32 n); no row
                         -- on a mismatch or a retry
    SELECT head.version, head.hash || trainplate_chain(head.hash, $9, head.version, head.micros)
           AS links
      FROM head
     WHERE ($3 < 0 OR head.version = $3) AND NOT EXISTS (SELECT 1 FROM prior)
),
inserted AS (
    INSERT INTO events (event_id, stream_type, stream_id, version, type, schema_version, data,
                        metadata, recorded_at, prev_hash, hash, caller)
    SELECT ($4::uuid[])[u.n], $2, $1, c.version + u.n, ($5::text[])[u.n], ($6::smallint[])[u.n],
           ($7::text[])[u.n]::json, $8, now(), substring(c.links FROM 32 * u.n - 31 FOR 32),
           substring(c.links FROM 32 * u.n + 1 FOR 32), $10
      FROM chain c, generate_series(1, cardinality($4::uuid[])) AS u(n) ORDER BY u.n
    RETURNING version, global_position, hash
)
SELECT head.version AS current, max(i.version) AS version,
       (array_agg(i.hash ORDER BY i.version DESC))[1] AS hash,
       array_agg(i.global_position ORDER BY i.version) FILTER (WHERE i.version IS NOT NULL) AS positions,
       false AS replayed, now() AS recorded_at /* , notify */
  FROM head LEFT JOIN inserted i ON true
 GROUP BY head.version
UNION ALL
SELECT CASE WHEN bool_and(p.stream_id = $1) THEN count(*) ELSE -1 END, max(p.version), NULL,
       array_agg(p.global_position ORDER BY p.version), true, max(p.recorded_at) /* , notify */
  FROM prior p
HAVING count(*) > 0
