-- Append several events after a head the writer already knows (version $10 with hash $9): a new
-- stream, or one this process has just read or written, so the head need not be looked up. The
-- database stamps the time and links the chain (trainplate_chain, one trainplate_link per
-- event), as every append does. Events are immutable, so a known head stays true; if another
-- writer got there first, unique (stream_id, version) refuses the rows and the caller falls
-- back to append_many.sql, which reads the head and reports the actual version.
-- The batch comes packed: a few values, not seven arrays of one element per event, whose
-- encoding in the driver measured as the largest part of a 100-event append's gap to a bare
-- insert. Ids are 16 bytes each in one bytea, digests 32 bytes each in another; tags, schema
-- versions and payloads are one per line (compact JSON escapes every newline). The answer is
-- the events' positions and the last one's hash.
-- $1 stream_id, $2 stream_type, $3 event ids, $4 types, $5 schema versions, $6 data,
-- $7 metadata (one for all), $8 digests, $9 the head's hash, $10 version before,
-- $11 caller (NULL: the service itself).
WITH batch AS (
    SELECT n::int AS n, type, schema_version::smallint, data
      FROM unnest(string_to_array($4, E'\n'), string_to_array($5, E'\n'),
                  string_to_array($6, E'\n'))
           WITH ORDINALITY AS u(type, schema_version, data, n)
),
chain AS MATERIALIZED (  -- the head's hash, then each event's link: event n's are at 32 n
    SELECT $9::bytea || trainplate_chain($9::bytea, $8::bytea, $10, trainplate_micros(now()))
           AS links
),
inserted AS (
    INSERT INTO events (event_id, stream_type, stream_id, version, type, schema_version, data,
                        metadata, recorded_at, prev_hash, hash, caller)
    SELECT encode(substring($3::bytea FROM 16 * b.n - 15 FOR 16), 'hex')::uuid, $2, $1,
           $10 + b.n, b.type, b.schema_version, b.data::json, $7, now(),
           substring(c.links FROM 32 * b.n - 31 FOR 32), substring(c.links FROM 32 * b.n + 1 FOR 32),
           $11
      FROM batch b, chain c
    RETURNING global_position
)
SELECT (SELECT array_agg(global_position ORDER BY global_position) FROM inserted) AS positions,
       substring(links FROM length(links) - 31) AS hash, now() AS recorded_at /* , notify */
  FROM chain
