-- Append several events, or events whose ids the caller chose (an idempotency key, a
-- deterministic fan-out): one statement, one round trip.
-- $1 stream_id, $2 stream_type, $3 expected version (-1: none), $4 event_ids, $5 types,
-- $6 schema_versions, $7 data, $8 metadata (one for all), $9 digests, $10 caller (NULL: the
-- service itself).
-- One row comes back: `version` (the stream's new version) and `positions`, or on a mismatch
-- `version` NULL and `current` = the stream's actual version. If the first event id is stored
-- already, this is a retry: nothing is inserted and a second row (replayed = true) carries the
-- stored events' version and positions, with `current` = how many of the ids are stored in this
-- stream (-1 if any is stored in another).
WITH RECURSIVE prior AS (
    SELECT e.stream_id, e.version, e.global_position, e.recorded_at
      FROM events e WHERE e.event_id = ANY ($4::uuid[])
       AND EXISTS (SELECT 1 FROM events f WHERE f.event_id = ($4::uuid[])[1])
),
head AS (SELECT * FROM trainplate_stream_head($1)),
chain AS (  -- the links, one after another; empty on a mismatch or a retry
    SELECT 1 AS n, head.version + 1 AS version, head.micros, head.hash AS prev_hash,
           trainplate_link(head.hash, ($9::bytea[])[1], head.version + 1, head.micros) AS hash
      FROM head
     WHERE ($3 < 0 OR head.version = $3) AND NOT EXISTS (SELECT 1 FROM prior)
    UNION ALL
    SELECT c.n + 1, c.version + 1, c.micros, c.hash,
           trainplate_link(c.hash, ($9::bytea[])[c.n + 1], c.version + 1, c.micros)
      FROM chain c WHERE c.n < cardinality($4::uuid[])
),
inserted AS (
    INSERT INTO events (event_id, stream_type, stream_id, version, type, schema_version, data,
                        metadata, recorded_at, prev_hash, hash, caller)
    SELECT ($4::uuid[])[c.n], $2, $1, c.version, ($5::text[])[c.n], ($6::smallint[])[c.n],
           ($7::text[])[c.n]::json, $8, now(), c.prev_hash, c.hash, $10
      FROM chain c ORDER BY c.n
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
