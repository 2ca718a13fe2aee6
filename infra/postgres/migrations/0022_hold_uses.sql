-- What a stream uses, moved in one call inside the transaction of its append, so that a create
-- that claims a name, uses assets and appends its first event is one statement, one round trip
-- (infra/postgres/sql/append_first_named.sql), and an update moves its uses in one round trip.
--
-- The user holds each used stream's advisory lock shared until it commits, as a deletion holds
-- it exclusively (infra/postgres/stream_uses.py). The check that follows the locks is another
-- statement of this VOLATILE function, so under READ COMMITTED it runs on a new snapshot and
-- sees what a deletion that held a lock first committed, even when the function is called
-- from within a larger statement. A used stream deleted raises SQLSTATE TP410 with its id as
-- the detail, which aborts the whole statement or transaction: nothing is written.
-- `by_id` is the using stream, `by_name` how a refused deletion names it; `used` NULL: the
-- append does not change what the stream uses.
CREATE FUNCTION trainplate_hold_uses(by_id uuid, by_name text, used uuid[])
RETURNS boolean LANGUAGE plpgsql VOLATILE AS $$
DECLARE
    gone uuid;
BEGIN
    IF used IS NULL THEN
        RETURN true;
    END IF;
    PERFORM pg_advisory_xact_lock_shared(7301, hashtext(a::text)) FROM unnest(used) AS a;
    SELECT e.stream_id INTO gone FROM events e
     WHERE e.stream_id = ANY(used) AND e.type LIKE '%.deleted.v1' LIMIT 1;
    IF gone IS NOT NULL THEN
        RAISE EXCEPTION 'a stream used was deleted' USING ERRCODE = 'TP410', DETAIL = gone::text;
    END IF;
    DELETE FROM stream_uses s WHERE s.user_id = by_id AND NOT s.used_id = ANY(used);
    INSERT INTO stream_uses (used_id, user_id, user_name)
    SELECT a, by_id, by_name FROM unnest(used) AS a
    ON CONFLICT (used_id, user_id) DO UPDATE SET user_name = excluded.user_name;
    RETURN true;
END
$$;
