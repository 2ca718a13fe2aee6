-- Retention of the audit records (`trainplate audit prune`, docs/decisions/0037): the records
-- logged before a date are deleted in one transaction, and an anchor kept of where the cut is,
-- so the rest of the chain verifies from it: the last deleted record's `seq` and `hash` (the
-- first kept record's `prev_hash`), its time, when it was cut, and how many went and stayed.
-- Anchors are append-only; the newest is where the chain now starts.
CREATE TABLE audit_record_anchors (
    seq       bigint      PRIMARY KEY,
    hash      bytea       NOT NULL,
    logged_at timestamptz NOT NULL,
    before    timestamptz NOT NULL,
    pruned_at timestamptz NOT NULL,
    deleted   bigint      NOT NULL,
    kept      bigint      NOT NULL
);

CREATE TRIGGER audit_record_anchors_append_only BEFORE UPDATE OR DELETE ON audit_record_anchors
    FOR EACH STATEMENT EXECUTE FUNCTION trainplate_refuse_audit_change();

-- A record is still never changed; it is deleted only once an anchor covers it (its `seq` at
-- most the newest anchor's), so a cut is always at the chain's head and always said.
DROP TRIGGER audit_records_append_only ON audit_records;

CREATE TRIGGER audit_records_unchanged BEFORE UPDATE ON audit_records
    FOR EACH STATEMENT EXECUTE FUNCTION trainplate_refuse_audit_change();

CREATE FUNCTION trainplate_refuse_unanchored_delete() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    IF EXISTS (SELECT 1 FROM gone
                WHERE gone.seq > coalesce((SELECT max(seq) FROM audit_record_anchors), 0)) THEN
        RAISE EXCEPTION 'audit records are immutable: DELETE refused past the newest anchor'
            USING ERRCODE = 'TP403';
    END IF;
    RETURN NULL;
END
$$;

CREATE TRIGGER audit_records_anchored_deletes AFTER DELETE ON audit_records
    REFERENCING OLD TABLE AS gone
    FOR EACH STATEMENT EXECUTE FUNCTION trainplate_refuse_unanchored_delete();
