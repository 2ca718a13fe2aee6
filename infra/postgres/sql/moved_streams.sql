-- Which of the streams a decision was made on have moved past the versions it read: asked in
-- the transaction of an append that carries them as `checked` (append_first_named.sql asks the
-- same within its own statement). Versions are contiguous, so a stream moved on exactly when it
-- has an event at the version after the one read.
-- $1 the streams, $2 the versions read (0: the stream had no events).
SELECT r.id FROM unnest($1::uuid[], $2::int[]) AS r(id, version)
 WHERE EXISTS (SELECT FROM events e WHERE e.stream_id = r.id AND e.version = r.version + 1)
