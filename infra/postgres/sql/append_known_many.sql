-- Append several events after a head the writer already knows (version $11 with hash $9): a new
-- stream, or one this process has just read or written. The writer stamped the time and linked
-- the chain itself (the arithmetic of trainplate_link, see infra/postgres/hashchain.py), so this is a
-- plain insert. Events are immutable, so a known head stays true; if another writer got there
-- first, unique (stream_id, version) refuses the rows and the caller falls back to
-- append_many.sql, which reads the head and reports the actual version.
-- The batch comes packed: a few values, not seven arrays of one element per event, whose
-- encoding in the driver measured as the largest part of a 100-event append's gap to a bare
-- insert. Ids are 16 bytes
-- each in one bytea, links 32 bytes each in another; tags, schema versions and payloads are
-- one per line (compact JSON escapes every newline). The answer is the events' positions.
-- $1 stream_id, $2 stream_type, $3 event ids, $4 types, $5 schema versions, $6 data,
-- $7 metadata (one for all), $8 recorded_at, $9 the head's hash, $10 hashes, $11 version before,
-- $12 caller (NULL: the service itself).
WITH batch AS (
    SELECT n::int AS n, type, schema_version::smallint, data
      FROM unnest(string_to_array($4, E'\n'), string_to_array($5, E'\n'),
                  string_to_array($6, E'\n'))
           WITH ORDINALITY AS u(type, schema_version, data, n)
),
inserted AS (
    INSERT INTO events (event_id, stream_type, stream_id, version, type, schema_version, data,
                        metadata, recorded_at, prev_hash, hash, caller)
    SELECT encode(substring($3::bytea FROM 16 * n - 15 FOR 16), 'hex')::uuid, $2, $1, $11 + n,
           type, schema_version, data::json, $7, $8,
           CASE n WHEN 1 THEN $9::bytea ELSE substring($10::bytea FROM 32 * n - 63 FOR 32) END,
           substring($10::bytea FROM 32 * n - 31 FOR 32), $12
      FROM batch
    RETURNING global_position
)
SELECT array_agg(global_position ORDER BY global_position) AS positions /* , notify */
  FROM inserted
