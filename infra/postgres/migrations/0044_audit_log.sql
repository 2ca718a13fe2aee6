-- Run:ai's audit log (GET /api/v1/audit/log), docs/decisions/0031-audit-log.md. Its entries
-- come from two tables with the same columns, read together: `audit_log`, a read model of the
-- events (projections/audit_log.py), and `audit_records`, what is no event (sign-ins, refused
-- writes), written by the API (infra/postgres/audit_records.py). Text a row lacks is ''.
CREATE TABLE audit_log (
    id               uuid        PRIMARY KEY,  -- the event's id
    logged_at        timestamptz NOT NULL,
    subject          text        NOT NULL,
    subject_type     text        NOT NULL,
    source_ip        text        NOT NULL DEFAULT '',
    action           text        NOT NULL,
    http_method      text        NOT NULL DEFAULT '',
    url              text        NOT NULL DEFAULT '',
    entity_type      text        NOT NULL DEFAULT '',
    entity_name      text        NOT NULL DEFAULT '',
    entity_id        text        NOT NULL DEFAULT '',
    result           text        NOT NULL,
    http_status_code integer,
    cluster_id       uuid,
    cluster_name     text        NOT NULL DEFAULT '',
    request_id       text        NOT NULL DEFAULT '',
    metadata         jsonb       NOT NULL DEFAULT '{}'::jsonb
);
-- Every query bounds the time; the page is taken in time order, or by the subject or entity
-- type an audit asks for most (compared by code point, as projections/list_sql.py does).
CREATE INDEX audit_log_time_idx ON audit_log (logged_at, id);
CREATE INDEX audit_log_subject_idx ON audit_log ((subject COLLATE "C"), logged_at);
CREATE INDEX audit_log_entity_idx ON audit_log ((entity_type COLLATE "C"), logged_at);

-- What the projection remembers of each named thing, so an entry names it when its event does
-- not (a delete): its name and cluster, by kind and id (an application's name is its subject's).
CREATE TABLE audit_log_names (
    kind       text NOT NULL,
    id         text NOT NULL,
    name       text NOT NULL,
    cluster_id uuid,
    PRIMARY KEY (kind, id)
);

-- The entries that are no event: append-only, and hash-chained in `seq` order, a chain of its
-- own beside the streams' (the link: sha256 of the previous hash, the writer's digest of the
-- row's content and its time in microseconds; the first row's previous hash is 32 zero bytes).
CREATE TABLE audit_records (
    seq              bigint      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    id               uuid        NOT NULL UNIQUE,
    logged_at        timestamptz NOT NULL,
    subject          text        NOT NULL,
    subject_type     text        NOT NULL,
    source_ip        text        NOT NULL DEFAULT '',
    action           text        NOT NULL,
    http_method      text        NOT NULL DEFAULT '',
    url              text        NOT NULL DEFAULT '',
    entity_type      text        NOT NULL DEFAULT '',
    entity_name      text        NOT NULL DEFAULT '',
    entity_id        text        NOT NULL DEFAULT '',
    result           text        NOT NULL,
    http_status_code integer,
    cluster_id       uuid,
    cluster_name     text        NOT NULL DEFAULT '',
    request_id       text        NOT NULL DEFAULT '',
    metadata         json        NOT NULL,  -- the bytes the writer digested
    prev_hash        bytea       NOT NULL,
    hash             bytea       NOT NULL
);
CREATE INDEX audit_records_time_idx ON audit_records (logged_at, id);
CREATE INDEX audit_records_subject_idx ON audit_records ((subject COLLATE "C"), logged_at);
CREATE INDEX audit_records_entity_idx ON audit_records ((entity_type COLLATE "C"), logged_at);

CREATE FUNCTION trainplate_refuse_audit_change() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION 'audit records are immutable: % refused', TG_OP USING ERRCODE = 'TP403';
END
$$;

CREATE TRIGGER audit_records_append_only BEFORE UPDATE OR DELETE ON audit_records
    FOR EACH STATEMENT EXECUTE FUNCTION trainplate_refuse_audit_change();

CREATE FUNCTION trainplate_record_link(prev_hash bytea, digest bytea, micros bigint)
RETURNS bytea
LANGUAGE sql IMMUTABLE PARALLEL SAFE
RETURN sha256(prev_hash || digest || int8send(micros));
