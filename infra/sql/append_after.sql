-- Append one event after a head the writer already knows (version $3 with hash $11): a new
-- stream (version 0, the zero hash), or one this process has just read or written. Events are
-- immutable (the table refuses UPDATE and DELETE), so a known head stays true; if another writer
-- got there first, unique (stream_id, version) refuses the row and the caller falls back to
-- append_one.sql, which reads the head and reports the actual version.
-- $1 stream_id, $2 stream_type, $3 version before, $4 event_id, $5 type, $6 schema_version,
-- $7 data, $8 metadata, $9 digest, $10 whether to NOTIFY the log's readers at commit,
-- $11 hash before.
INSERT INTO events (event_id, stream_type, stream_id, version, type, schema_version, data,
                    metadata, recorded_at, prev_hash, hash)
VALUES ($4, $2, $1, $3 + 1, $5, $6, $7, $8, now(), $11,
        trainplate_link($11, $9, $3 + 1, trainplate_micros(now())))
RETURNING $3 AS current, version, hash, ARRAY[global_position] AS positions, false AS replayed,
          (SELECT true FROM pg_notify('trainplate_events', '') WHERE $10) AS notified
