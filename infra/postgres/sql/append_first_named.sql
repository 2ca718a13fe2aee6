-- Create a named stream: claim its name, record what it uses and append its first event (fresh
-- id) in one statement, one round trip. The event is written only when the claim took the name;
-- when another stream holds it, nothing is written and `claimed` is false. A concurrent creator
-- of the same name waits on the unique key and then finds it taken. The uses are held after the
-- claim, as the transaction path holds them (migrations 0022 and 0040: a used stream deleted
-- fails the statement with TP410, and nothing is written); a new stream's are plain rows.
-- $1 stream_id, $2 stream_type, $3 version before (0), $4 event_id, $5 type, $6 schema_version,
-- $7 data, $8 metadata, $9 digest, $10 hash before (genesis), $11 name namespace, $12 name,
-- $13 caller (NULL: the service itself), $14 the stream as its users are named, $15 the streams
-- it uses (NULL: none recorded), $16 and $17 the streams the creation was decided on and the
-- versions it read (infra/postgres/remembered_streams.py): when one of them has moved past that
-- version (migration 0033), nothing is claimed or written, and `moved` names them. $18 the
-- access epoch the writer's standing was assumed at (-1: none; NULL: not to check;
-- infra/postgres/writer_standing.py): when the epoch is another, nothing is claimed or written,
-- and `access_epoch` and `org_epoch` say what they are.
WITH moved AS (
    SELECT trainplate_moved($16::uuid[], $17::int[]) AS ids
),
standing AS (
    SELECT coalesce((SELECT epoch FROM access_epoch), -1) AS access_epoch,
           (SELECT epoch FROM org_units_epoch) AS org_epoch
),
claim AS (
    INSERT INTO stream_names (namespace, name, stream_id)
    SELECT $11, $12, $1 FROM moved, standing
     WHERE moved.ids = '{}' AND ($18::bigint IS NULL OR standing.access_epoch = $18)
    ON CONFLICT (namespace, name) DO NOTHING
    RETURNING stream_id
),
held AS (
    SELECT trainplate_hold_live($15::uuid[]) FROM claim
),
used AS (
    INSERT INTO stream_uses (used_id, user_id, user_name)
    SELECT a, $1, $14 FROM held, unnest($15::uuid[]) AS a
),
inserted AS (
    INSERT INTO events (event_id, stream_type, stream_id, version, type, schema_version, data,
                        metadata, recorded_at, prev_hash, hash, caller)
    SELECT $4, $2, $1, $3 + 1, $5, $6, $7, $8, now(), $10,
           trainplate_link($10, $9, $3 + 1, trainplate_micros(now())), $13
      FROM held
    RETURNING version, hash, global_position
)
SELECT $3 AS current, inserted.version, inserted.hash,
       CASE WHEN inserted.version IS NULL THEN NULL ELSE ARRAY[inserted.global_position] END
           AS positions,
       false AS replayed,
       inserted.version IS NOT NULL AS claimed, (SELECT ids FROM moved) AS moved,
       standing.access_epoch, standing.org_epoch,
       now() AS recorded_at /* , notify */
  FROM standing LEFT JOIN inserted ON true
