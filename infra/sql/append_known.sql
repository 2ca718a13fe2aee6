-- Append events after a head the writer already knows (version $11 with hash `prev` of the first
-- row): a new stream, or one this process has just read or written. The writer stamped the time
-- and linked the chain itself (the same arithmetic as trainplate_link, see infra/hashchain.py),
-- so this is a plain insert. Events are immutable, so a known head stays true; if another writer
-- got there first, unique (stream_id, version) refuses the rows and the caller falls back to a
-- statement that reads the head and reports the actual version.
-- $1 stream_id, $2 stream_type, $3 event_ids, $4 versions, $5 types, $6 schema_versions, $7 data,
-- $8 metadata (one for all), $9 recorded_at, $10 prev_hashes, $11 hashes, $12 version before,
-- $13 whether to NOTIFY the log's readers at commit.
WITH inserted AS (
    INSERT INTO events (event_id, stream_type, stream_id, version, type, schema_version, data,
                        metadata, recorded_at, prev_hash, hash)
    SELECT e, $2, $1, v, t, s, d::json, $8, $9, p, h
      FROM unnest($3::uuid[], $4::int[], $5::text[], $6::smallint[], $7::text[], $10::bytea[],
                  $11::bytea[]) AS u(e, v, t, s, d, p, h)
    RETURNING version, global_position, hash
)
SELECT $12::int AS current, max(version) AS version,
       (array_agg(hash ORDER BY version DESC))[1] AS hash,
       array_agg(global_position ORDER BY version) AS positions, false AS replayed,
       (SELECT true FROM pg_notify('trainplate_events', '') WHERE $13) AS notified
  FROM inserted
