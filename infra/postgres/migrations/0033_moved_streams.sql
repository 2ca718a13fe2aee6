-- Which of the streams a decision was made on have moved past the versions it read
-- (infra/postgres/remembered_streams.py): an empty array when none has. Versions are
-- contiguous, so a stream moved on exactly when it has an event at the version after the one
-- read (0: it had none).
--
-- A function, not a join in the appends that ask it: a prepared statement over the arrays
-- themselves is estimated by their length when PostgreSQL plans it for the values at hand, and
-- by a guess when it plans it once for all, so it would never settle on the one plan and would
-- plan every execution afresh (a third of a millisecond of the database's time per create,
-- measured). One probe per stream, each a statement whose plan is the same for every value.
CREATE FUNCTION trainplate_moved(ids uuid[], versions integer[])
RETURNS uuid[] LANGUAGE plpgsql STABLE AS $$
DECLARE
    moved uuid[] := '{}';
BEGIN
    FOR i IN 1 .. coalesce(array_length(ids, 1), 0) LOOP
        IF EXISTS (SELECT FROM events e WHERE e.stream_id = ids[i] AND e.version = versions[i] + 1)
        THEN
            moved := moved || ids[i];
        END IF;
    END LOOP;
    RETURN moved;
END
$$;
