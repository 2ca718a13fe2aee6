-- What an API process may keep in memory about who may see what, and how it knows it is still
-- true (infra/http/access_cache.py): one small query per request reads both epochs. An epoch is
-- the id of the last transaction that changed what it covers, not a counter: ids are never
-- reused, so a value a process holds cannot come back for other contents (a counter would,
-- after a rebuild or an emptied table). No row: nothing changed yet.
--
-- The write side's epoch moves in the transaction of every event of an application's or a
-- user's stream (a grant, a revocation, a rotated secret, a disabling), so a request that
-- starts after that transaction committed sees a new epoch and reloads the caller from its
-- stream: a revocation applies at once, on every process, as when the stream was read on every
-- request. The trigger keeps it in one place, whichever statement appends.
CREATE TABLE access_epoch (
    only_row boolean PRIMARY KEY DEFAULT true CHECK (only_row),
    epoch    bigint  NOT NULL
);

CREATE FUNCTION bump_access_epoch() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO access_epoch (epoch) VALUES (pg_current_xact_id()::text::bigint)
    ON CONFLICT (only_row) DO UPDATE SET epoch = excluded.epoch;
    RETURN NULL;
END
$$;

CREATE TRIGGER events_access_epoch AFTER INSERT ON events FOR EACH ROW
    WHEN (NEW.stream_type IN ('application', 'user'))
    EXECUTE FUNCTION bump_access_epoch();

-- The org tree read model's epoch, moved by its projection when a unit comes or goes
-- (projections/org_units.py), in the transaction that changes the rows: lineages read from the
-- read model are kept until it moves.
CREATE TABLE org_units_epoch (
    only_row boolean PRIMARY KEY DEFAULT true CHECK (only_row),
    epoch    bigint  NOT NULL
);
