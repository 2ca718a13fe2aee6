-- The check that the streams an append comes to use are live, on its own: their advisory locks
-- held shared until the transaction commits, then (a new snapshot: another statement of this
-- VOLATILE function) no deletion among them, else SQLSTATE TP410 with the deleted one's id as
-- the detail (0022 has why). A named stream's creation (infra/postgres/sql/
-- append_first_named.sql) calls it and writes its uses as plain rows of its own statement: a
-- new stream has no uses to take back or update, and trainplate_hold_uses's DELETE and
-- INSERT ... ON CONFLICT DO UPDATE cost a create about a tenth of its database CPU: with 10
-- connections creating at once, 447 and 416 us per create against 405 and 382 with plain rows
-- in the statement (two runs, medians of 9 rounds; a bare one-row insert took 95 us there).
CREATE FUNCTION trainplate_hold_live(used uuid[])
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
    RETURN true;
END
$$;

-- Every other append that moves what a stream uses: the same check, then the rows replaced.
CREATE OR REPLACE FUNCTION trainplate_hold_uses(by_id uuid, by_name text, used uuid[])
RETURNS boolean LANGUAGE plpgsql VOLATILE AS $$
BEGIN
    IF used IS NULL THEN
        RETURN true;
    END IF;
    PERFORM trainplate_hold_live(used);
    DELETE FROM stream_uses s WHERE s.user_id = by_id AND NOT s.used_id = ANY(used);
    INSERT INTO stream_uses (used_id, user_id, user_name)
    SELECT a, by_id, by_name FROM unnest(used) AS a
    ON CONFLICT (used_id, user_id) DO UPDATE SET user_name = excluded.user_name;
    RETURN true;
END
$$;
