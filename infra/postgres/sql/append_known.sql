-- Append one event after a head the writer already knows (hash $10): a new stream, or one this
-- process has just read or written, so the head need not be looked up. The database stamps the
-- time and links the event (trainplate_link), as every append does. Events are immutable, so a
-- known head stays true; if another writer got there first, unique (stream_id, version)
-- refuses the row and the caller falls back to append_one.sql, which reads the head and
-- reports the actual version. The answer is the event's position, its hash and its time.
-- $1 stream_id, $2 stream_type, $3 event_id, $4 version, $5 type, $6 schema_version, $7 data,
-- $8 metadata, $9 digest, $10 prev_hash, $11 caller (NULL: the service itself).
INSERT INTO events (event_id, stream_type, stream_id, version, type, schema_version, data,
                    metadata, recorded_at, prev_hash, hash, caller)
VALUES ($3, $2, $1, $4, $5, $6, $7, $8, now(), $10,
        trainplate_link($10, $9, $4, trainplate_micros(now())), $11)
RETURNING global_position, hash, recorded_at /* , notify */
