-- The schema after every migration in infra/postgres/migrations/, to read. Generated from a
-- fresh, migrated database by `trainplate schema --output infra/postgres/schema.sql`;
-- tests/integration/test_schema_file.py holds it equal to the migrations. Change the schema
-- with a new migration, never here. Rendered by PostgreSQL 18.

CREATE SEQUENCE org_unit_ids AS bigint START 1 INCREMENT 1 MINVALUE 1 MAXVALUE 9223372036854775807 CACHE 1;

CREATE TABLE access_epoch (
    only_row boolean NOT NULL DEFAULT true,
    epoch    bigint NOT NULL,
    CONSTRAINT access_epoch_pkey PRIMARY KEY (only_row),
    CONSTRAINT access_epoch_only_row_check CHECK (only_row)
);

CREATE TABLE access_rule_holders (
    rule_id      bigint NOT NULL,
    subject_kind text NOT NULL,
    subject_id   text NOT NULL,
    CONSTRAINT access_rule_holders_pkey PRIMARY KEY (rule_id)
);

CREATE TABLE access_rules (
    rule_id      integer NOT NULL,
    subject_type text NOT NULL,
    subject_id   text NOT NULL,
    role         text NOT NULL,
    scope_kind   text NOT NULL,
    scope_id     text NOT NULL,
    created_at   timestamp with time zone NOT NULL,
    created_by   text NOT NULL,
    CONSTRAINT access_rules_pkey PRIMARY KEY (rule_id)
);
CREATE INDEX access_rules_subject_idx ON public.access_rules USING btree (subject_type, subject_id);

CREATE TABLE application_catalogue (
    application_id uuid NOT NULL,
    name           text NOT NULL,
    client_id      text NOT NULL,
    grants         jsonb NOT NULL,
    created_at     timestamp with time zone NOT NULL,
    created_by     text NOT NULL,
    version        integer NOT NULL,
    enabled        boolean NOT NULL DEFAULT true,
    updated_at     timestamp with time zone,
    CONSTRAINT application_catalogue_pkey PRIMARY KEY (application_id)
);
CREATE INDEX application_catalogue_name_idx ON public.application_catalogue USING btree (name);

CREATE TABLE application_credentials (
    application_id uuid NOT NULL,
    client_id      text NOT NULL,
    secret_hash    text NOT NULL,
    created_at     timestamp with time zone NOT NULL DEFAULT now(),
    CONSTRAINT application_credentials_pkey PRIMARY KEY (application_id),
    CONSTRAINT application_credentials_client_id_key UNIQUE (client_id)
);

CREATE TABLE asset_catalogue (
    asset_id   uuid NOT NULL,
    kind       text NOT NULL,
    name       text NOT NULL,
    meta       jsonb NOT NULL,
    spec       jsonb NOT NULL,
    created_at timestamp with time zone NOT NULL,
    created_by text NOT NULL,
    updated_at timestamp with time zone NOT NULL,
    updated_by text NOT NULL,
    version    integer NOT NULL,
    CONSTRAINT asset_catalogue_pkey PRIMARY KEY (asset_id)
);
CREATE INDEX asset_catalogue_kind_name_idx ON public.asset_catalogue USING btree (kind, name);

CREATE TABLE audit_index (
    seq             bigint GENERATED ALWAYS AS IDENTITY NOT NULL,
    global_position bigint NOT NULL,
    event_id        uuid NOT NULL,
    stream_type     text NOT NULL,
    stream_id       uuid NOT NULL,
    version         integer NOT NULL,
    type            text NOT NULL,
    actor           text NOT NULL,
    scope_kind      text NOT NULL,
    scope_id        text NOT NULL,
    recorded_at     timestamp with time zone NOT NULL,
    CONSTRAINT audit_index_pkey PRIMARY KEY (seq),
    CONSTRAINT audit_index_global_position_key UNIQUE (global_position)
);
CREATE INDEX audit_index_actor_idx ON public.audit_index USING btree (actor, seq);
CREATE INDEX audit_index_scope_idx ON public.audit_index USING btree (scope_kind, scope_id, seq);
CREATE INDEX audit_index_stream_idx ON public.audit_index USING btree (stream_id, version);
CREATE INDEX audit_index_time_idx ON public.audit_index USING btree (recorded_at);
CREATE INDEX audit_index_type_idx ON public.audit_index USING btree (type, seq);

CREATE TABLE audit_log (
    id               uuid NOT NULL,
    logged_at        timestamp with time zone NOT NULL,
    subject          text NOT NULL,
    subject_type     text NOT NULL,
    source_ip        text NOT NULL DEFAULT ''::text,
    action           text NOT NULL,
    http_method      text NOT NULL DEFAULT ''::text,
    url              text NOT NULL DEFAULT ''::text,
    entity_type      text NOT NULL DEFAULT ''::text,
    entity_name      text NOT NULL DEFAULT ''::text,
    entity_id        text NOT NULL DEFAULT ''::text,
    result           text NOT NULL,
    http_status_code integer,
    cluster_id       uuid,
    cluster_name     text NOT NULL DEFAULT ''::text,
    request_id       text NOT NULL DEFAULT ''::text,
    metadata         jsonb NOT NULL DEFAULT '{}'::jsonb,
    CONSTRAINT audit_log_pkey PRIMARY KEY (id)
);
CREATE INDEX audit_log_entity_idx ON public.audit_log USING btree (entity_type COLLATE "C", logged_at);
CREATE INDEX audit_log_subject_idx ON public.audit_log USING btree (subject COLLATE "C", logged_at);
CREATE INDEX audit_log_time_idx ON public.audit_log USING btree (logged_at, id);

CREATE TABLE audit_log_names (
    kind       text NOT NULL,
    id         text NOT NULL,
    name       text NOT NULL,
    cluster_id uuid,
    CONSTRAINT audit_log_names_pkey PRIMARY KEY (kind, id)
);

CREATE TABLE audit_record_anchors (
    seq       bigint NOT NULL,
    hash      bytea NOT NULL,
    logged_at timestamp with time zone NOT NULL,
    before    timestamp with time zone NOT NULL,
    pruned_at timestamp with time zone NOT NULL,
    deleted   bigint NOT NULL,
    kept      bigint NOT NULL,
    CONSTRAINT audit_record_anchors_pkey PRIMARY KEY (seq)
);

CREATE TABLE audit_records (
    seq              bigint GENERATED ALWAYS AS IDENTITY NOT NULL,
    id               uuid NOT NULL,
    logged_at        timestamp with time zone NOT NULL,
    subject          text NOT NULL,
    subject_type     text NOT NULL,
    source_ip        text NOT NULL DEFAULT ''::text,
    action           text NOT NULL,
    http_method      text NOT NULL DEFAULT ''::text,
    url              text NOT NULL DEFAULT ''::text,
    entity_type      text NOT NULL DEFAULT ''::text,
    entity_name      text NOT NULL DEFAULT ''::text,
    entity_id        text NOT NULL DEFAULT ''::text,
    result           text NOT NULL,
    http_status_code integer,
    cluster_id       uuid,
    cluster_name     text NOT NULL DEFAULT ''::text,
    request_id       text NOT NULL DEFAULT ''::text,
    metadata         json NOT NULL,
    prev_hash        bytea NOT NULL,
    hash             bytea NOT NULL,
    CONSTRAINT audit_records_pkey PRIMARY KEY (seq),
    CONSTRAINT audit_records_id_key UNIQUE (id)
);
CREATE INDEX audit_records_entity_idx ON public.audit_records USING btree (entity_type COLLATE "C", logged_at);
CREATE INDEX audit_records_subject_idx ON public.audit_records USING btree (subject COLLATE "C", logged_at);
CREATE INDEX audit_records_time_idx ON public.audit_records USING btree (logged_at, id);

CREATE TABLE audit_streams (
    stream_id  uuid NOT NULL,
    scope_kind text NOT NULL,
    scope_id   text NOT NULL,
    CONSTRAINT audit_streams_pkey PRIMARY KEY (stream_id)
);

CREATE TABLE consumer_checkpoints (
    name            text NOT NULL,
    transaction_id  xid8 NOT NULL,
    global_position bigint NOT NULL,
    updated_at      timestamp with time zone NOT NULL DEFAULT now(),
    CONSTRAINT consumer_checkpoints_pkey PRIMARY KEY (name)
);

CREATE TABLE credential_secrets (
    asset_id   uuid NOT NULL,
    key_id     integer NOT NULL,
    nonce      bytea NOT NULL,
    sealed     bytea NOT NULL,
    created_at timestamp with time zone NOT NULL DEFAULT now(),
    CONSTRAINT credential_secrets_pkey PRIMARY KEY (asset_id)
);

CREATE TABLE data_volume_catalogue (
    datavolume_id       uuid NOT NULL,
    name                text NOT NULL,
    description         text,
    project_id          text NOT NULL,
    department_id       text,
    cluster_id          uuid NOT NULL,
    origin_pvc_name     text NOT NULL,
    use_original_volume boolean NOT NULL,
    shared_scopes       jsonb NOT NULL DEFAULT '[]'::jsonb,
    created_at          timestamp with time zone NOT NULL,
    created_by          text NOT NULL,
    updated_at          timestamp with time zone NOT NULL,
    updated_by          text NOT NULL,
    version             integer NOT NULL,
    CONSTRAINT data_volume_catalogue_pkey PRIMARY KEY (datavolume_id)
);
CREATE INDEX data_volume_catalogue_project_idx ON public.data_volume_catalogue USING btree (project_id, name);

CREATE TABLE downstream_marks (
    principal       text NOT NULL,
    transaction_id  xid8 NOT NULL,
    global_position bigint NOT NULL,
    CONSTRAINT downstream_marks_pkey PRIMARY KEY (principal)
);

CREATE TABLE events (
    global_position bigint GENERATED ALWAYS AS IDENTITY NOT NULL,
    transaction_id  xid8 NOT NULL DEFAULT pg_current_xact_id(),
    event_id        uuid NOT NULL,
    stream_type     text NOT NULL,
    stream_id       uuid NOT NULL,
    version         integer NOT NULL,
    type            text NOT NULL,
    schema_version  smallint NOT NULL,
    data            json NOT NULL,
    metadata        json NOT NULL,
    recorded_at     timestamp with time zone NOT NULL,
    prev_hash       bytea NOT NULL,
    hash            bytea NOT NULL,
    caller          text,
    CONSTRAINT events_pkey PRIMARY KEY (global_position),
    CONSTRAINT events_event_id_key UNIQUE (event_id),
    CONSTRAINT events_stream_version_key UNIQUE (stream_id, version),
    CONSTRAINT events_version_check CHECK ((version > 0))
);
CREATE INDEX events_by_caller ON public.events USING btree (caller, transaction_id, global_position) WHERE (caller IS NOT NULL);
CREATE INDEX events_cursor_idx ON public.events USING btree (transaction_id, global_position);
CREATE INDEX events_deletions ON public.events USING btree (stream_id) WHERE (type ~~ '%.deleted.v1'::text);

CREATE TABLE fanout_asset_versions (
    asset_id uuid NOT NULL,
    version  integer NOT NULL,
    CONSTRAINT fanout_asset_versions_pkey PRIMARY KEY (asset_id)
);

CREATE TABLE follower_faults (
    name            text NOT NULL,
    transaction_id  xid8 NOT NULL,
    global_position bigint NOT NULL,
    event_id        uuid NOT NULL,
    event_type      text NOT NULL,
    reason          text NOT NULL,
    since           timestamp with time zone NOT NULL DEFAULT now(),
    CONSTRAINT follower_faults_pkey PRIMARY KEY (name)
);

CREATE TABLE issued_ids (
    creation_id uuid NOT NULL,
    id          bigint NOT NULL,
    CONSTRAINT issued_ids_pkey PRIMARY KEY (creation_id)
);

CREATE TABLE node_pool_catalogue (
    nodepool_id uuid NOT NULL,
    cluster_id  uuid NOT NULL,
    name        text NOT NULL,
    spec        jsonb NOT NULL,
    created_at  timestamp with time zone NOT NULL,
    created_by  text NOT NULL,
    updated_at  timestamp with time zone NOT NULL,
    updated_by  text NOT NULL,
    version     integer NOT NULL,
    CONSTRAINT node_pool_catalogue_pkey PRIMARY KEY (nodepool_id)
);
CREATE INDEX node_pool_catalogue_cluster_idx ON public.node_pool_catalogue USING btree (cluster_id, name COLLATE "C");

CREATE TABLE org_units (
    kind                 text NOT NULL,
    id                   text NOT NULL,
    name                 text NOT NULL,
    cluster_id           uuid NOT NULL,
    department_id        text,
    description          text NOT NULL DEFAULT ''::text,
    details              jsonb NOT NULL,
    created_at           timestamp with time zone NOT NULL,
    created_by           text NOT NULL,
    updated_at           timestamp with time zone NOT NULL,
    updated_by           text NOT NULL,
    version              integer NOT NULL,
    total_gpu_quota      double precision,
    total_gpu_quota_text text NOT NULL DEFAULT ''::text,
    CONSTRAINT org_units_pkey PRIMARY KEY (kind, id)
);
CREATE INDEX org_units_cluster_idx ON public.org_units USING btree (cluster_id);
CREATE INDEX org_units_department_idx ON public.org_units USING btree (department_id);

CREATE TABLE org_units_epoch (
    only_row boolean NOT NULL DEFAULT true,
    epoch    bigint NOT NULL,
    CONSTRAINT org_units_epoch_pkey PRIMARY KEY (only_row),
    CONSTRAINT org_units_epoch_only_row_check CHECK (only_row)
);

CREATE TABLE policy_catalogue (
    policy_id     uuid NOT NULL,
    name          text NOT NULL,
    workload_type text NOT NULL,
    scope_kind    text NOT NULL,
    scope_id      text NOT NULL,
    cluster_id    uuid,
    department_id text,
    project_id    text,
    body          jsonb NOT NULL,
    created_at    timestamp with time zone NOT NULL,
    created_by    text NOT NULL,
    updated_at    timestamp with time zone NOT NULL,
    updated_by    text NOT NULL,
    version       integer NOT NULL,
    CONSTRAINT policy_catalogue_pkey PRIMARY KEY (policy_id),
    CONSTRAINT policy_catalogue_workload_type_scope_kind_scope_id_key UNIQUE (workload_type, scope_kind, scope_id)
);

CREATE TABLE policy_epoch (
    only_row boolean NOT NULL DEFAULT true,
    epoch    bigint NOT NULL,
    CONSTRAINT policy_epoch_pkey PRIMARY KEY (only_row),
    CONSTRAINT policy_epoch_only_row_check CHECK (only_row)
);

CREATE TABLE read_model_versions (
    name        text NOT NULL,
    version     integer NOT NULL,
    recorded_at timestamp with time zone NOT NULL DEFAULT now(),
    CONSTRAINT read_model_versions_pkey PRIMARY KEY (name)
);

CREATE TABLE schema_migrations (
    version    integer NOT NULL,
    name       text NOT NULL,
    applied_at timestamp with time zone NOT NULL DEFAULT now(),
    CONSTRAINT schema_migrations_pkey PRIMARY KEY (version)
);

CREATE TABLE service_account_answers (
    application_id uuid NOT NULL,
    key_id         integer NOT NULL,
    nonce          bytea NOT NULL,
    sealed         bytea NOT NULL,
    created_at     timestamp with time zone NOT NULL DEFAULT now(),
    CONSTRAINT service_account_answers_pkey PRIMARY KEY (application_id)
);
CREATE INDEX service_account_answers_by_age ON public.service_account_answers USING btree (created_at);

CREATE TABLE signed_out_sessions (
    session_id uuid NOT NULL,
    expires_at timestamp with time zone NOT NULL,
    CONSTRAINT signed_out_sessions_pkey PRIMARY KEY (session_id)
);

CREATE TABLE storage_class_catalogue (
    cluster_id uuid NOT NULL,
    name       text NOT NULL,
    spec       jsonb NOT NULL,
    version    integer NOT NULL,
    CONSTRAINT storage_class_catalogue_pkey PRIMARY KEY (cluster_id, name)
);

CREATE TABLE storage_class_configuration_catalogue (
    configuration_id uuid NOT NULL,
    cluster_id       uuid NOT NULL,
    name             text NOT NULL,
    rules            jsonb NOT NULL,
    created_at       timestamp with time zone NOT NULL,
    created_by       text NOT NULL,
    updated_at       timestamp with time zone NOT NULL,
    updated_by       text NOT NULL,
    version          integer NOT NULL,
    CONSTRAINT storage_class_configuration_catalogue_pkey PRIMARY KEY (configuration_id)
);
CREATE INDEX storage_class_configuration_catalogue_class_idx ON public.storage_class_configuration_catalogue USING btree (cluster_id, name);

CREATE TABLE stream_names (
    namespace text NOT NULL,
    name      text NOT NULL,
    stream_id uuid NOT NULL,
    CONSTRAINT stream_names_pkey PRIMARY KEY (namespace, name)
);
CREATE INDEX stream_names_stream_idx ON public.stream_names USING btree (stream_id);

CREATE TABLE stream_uses (
    used_id   uuid NOT NULL,
    user_id   uuid NOT NULL,
    user_name text NOT NULL,
    CONSTRAINT stream_uses_pkey PRIMARY KEY (used_id, user_id)
);
CREATE INDEX stream_uses_user_idx ON public.stream_uses USING btree (user_id);

CREATE TABLE template_asset_states (
    asset_id uuid NOT NULL,
    version  integer NOT NULL,
    kind     text NOT NULL,
    meta     jsonb NOT NULL,
    spec     jsonb NOT NULL,
    deleted  boolean NOT NULL,
    CONSTRAINT template_asset_states_pkey PRIMARY KEY (asset_id, version)
);

CREATE TABLE template_catalogue (
    template_id   uuid NOT NULL,
    name          text NOT NULL,
    scope_kind    text NOT NULL,
    scope_id      text NOT NULL,
    meta          jsonb NOT NULL,
    body          jsonb NOT NULL,
    asset_ids     uuid[] NOT NULL,
    created_at    timestamp with time zone NOT NULL,
    created_by    text NOT NULL,
    updated_at    timestamp with time zone NOT NULL,
    updated_by    text NOT NULL,
    version       integer NOT NULL,
    combined      jsonb NOT NULL,
    cluster_facts boolean NOT NULL DEFAULT false,
    recombined    integer NOT NULL DEFAULT 0,
    CONSTRAINT template_catalogue_pkey PRIMARY KEY (template_id)
);
CREATE INDEX template_catalogue_asset_ids_idx ON public.template_catalogue USING gin (asset_ids);
CREATE INDEX template_catalogue_cluster_facts_idx ON public.template_catalogue USING btree (((meta ->> 'clusterId'::text))) WHERE cluster_facts;
CREATE INDEX template_catalogue_name_c_idx ON public.template_catalogue USING btree (name COLLATE "C", template_id);
CREATE INDEX template_catalogue_runnable_idx ON public.template_catalogue USING btree ((((combined -> 'runnable'::text) ->> 'isRunnable'::text)));
CREATE STATISTICS public.template_catalogue_scope_key ON ((scope_kind || '/'::text) || scope_id) FROM template_catalogue;

CREATE TABLE template_cluster_facts (
    stream_id  uuid NOT NULL,
    cluster_id uuid NOT NULL,
    kind       text NOT NULL,
    name       text NOT NULL,
    detail     jsonb,
    CONSTRAINT template_cluster_facts_pkey PRIMARY KEY (stream_id)
);
CREATE INDEX template_cluster_facts_cluster_idx ON public.template_cluster_facts USING btree (cluster_id);

CREATE TABLE tenant_admins (
    stream_id uuid NOT NULL,
    CONSTRAINT tenant_admins_pkey PRIMARY KEY (stream_id)
);

CREATE TABLE tenant_settings (
    key     text NOT NULL,
    value   boolean NOT NULL,
    version integer NOT NULL,
    number  integer,
    CONSTRAINT tenant_settings_pkey PRIMARY KEY (key)
);

CREATE TABLE workload_catalogue (
    workload_id      uuid NOT NULL,
    name             text NOT NULL,
    project_id       text NOT NULL,
    department_id    text,
    cluster_id       uuid NOT NULL,
    template_id      uuid,
    framework        text,
    request          jsonb NOT NULL,
    desired_phase    text NOT NULL,
    actual_phase     text NOT NULL,
    phase_message    text,
    run              integer NOT NULL,
    submitted_run    integer NOT NULL,
    backend          text,
    created_at       timestamp with time zone NOT NULL,
    created_by       text NOT NULL,
    updated_at       timestamp with time zone NOT NULL,
    phase_updated_at timestamp with time zone NOT NULL,
    completed_at     timestamp with time zone,
    deleted_at       timestamp with time zone,
    version          integer NOT NULL,
    manifests        jsonb NOT NULL DEFAULT '[]'::jsonb,
    CONSTRAINT workload_catalogue_pkey PRIMARY KEY (workload_id)
);
CREATE INDEX workload_catalogue_name_idx ON public.workload_catalogue USING btree (name COLLATE "C");
CREATE INDEX workload_catalogue_newest_idx ON public.workload_catalogue USING btree (created_at DESC, workload_id);
CREATE INDEX workload_catalogue_project_idx ON public.workload_catalogue USING btree (project_id, created_at);
CREATE INDEX workload_catalogue_template_idx ON public.workload_catalogue USING btree (template_id);

CREATE TABLE workload_pods (
    workload_id    uuid NOT NULL,
    name           text NOT NULL,
    run            integer NOT NULL,
    project_id     text NOT NULL,
    cluster_id     uuid NOT NULL,
    node_name      text,
    phase          text NOT NULL,
    created_at     timestamp with time zone NOT NULL,
    completed_at   timestamp with time zone,
    updated_at     timestamp with time zone NOT NULL,
    deleted_at     timestamp with time zone,
    workload_name  text NOT NULL,
    project_name   text NOT NULL,
    priority_class text NOT NULL,
    pod            jsonb NOT NULL,
    requested      jsonb NOT NULL,
    CONSTRAINT workload_pods_pkey PRIMARY KEY (workload_id, name)
);
CREATE INDEX workload_pods_project_idx ON public.workload_pods USING btree (project_id, created_at);

CREATE OR REPLACE FUNCTION public.bump_access_epoch()
 RETURNS trigger
 LANGUAGE plpgsql
AS $function$
BEGIN
    INSERT INTO access_epoch (epoch) VALUES (pg_current_xact_id()::text::bigint)
    ON CONFLICT (only_row) DO UPDATE SET epoch = excluded.epoch;
    RETURN NULL;
END
$function$;

CREATE OR REPLACE FUNCTION public.trainplate_chain(head bytea, digests bytea, version_before integer, micros bigint)
 RETURNS bytea
 LANGUAGE plpgsql
 IMMUTABLE PARALLEL SAFE
AS $function$
DECLARE
    link bytea := head;
    links bytea := '';
BEGIN
    FOR i IN 0 .. length(digests) / 32 - 1 LOOP
        link := trainplate_link(link, substring(digests FROM 32 * i + 1 FOR 32),
                                version_before + i + 1, micros);
        links := links || link;
    END LOOP;
    RETURN links;
END
$function$;

CREATE OR REPLACE FUNCTION public.trainplate_follow_access()
 RETURNS trigger
 LANGUAGE plpgsql
AS $function$
DECLARE
    data jsonb;
BEGIN
    -- The access epoch moves with every such event (0017).
    INSERT INTO access_epoch (epoch) VALUES (pg_current_xact_id()::text::bigint)
    ON CONFLICT (only_row) DO UPDATE SET epoch = excluded.epoch;
    -- Whose stream holds each access rule in force (0020).
    IF NEW.type IN ('application.role_granted.v1', 'user.role_granted.v1') THEN
        data := NEW.data::jsonb;
        INSERT INTO access_rule_holders (rule_id, subject_kind, subject_id)
        VALUES ((data->'rule'->>'ruleId')::bigint, NEW.stream_type,
                CASE NEW.stream_type WHEN 'user' THEN data->>'subject'
                                     ELSE NEW.stream_id::text END)
        ON CONFLICT (rule_id) DO NOTHING;
    ELSIF NEW.type IN ('application.role_revoked.v1', 'user.role_revoked.v1') THEN
        data := NEW.data::jsonb;
        DELETE FROM access_rule_holders WHERE rule_id = (data->>'ruleId')::bigint;
    END IF;
    -- The tenant keeps an enabled admin (0019).
    IF trainplate_is_tenant_admin(NEW.stream_id) THEN
        INSERT INTO tenant_admins (stream_id) VALUES (NEW.stream_id) ON CONFLICT DO NOTHING;
    ELSE
        DELETE FROM tenant_admins WHERE stream_id = NEW.stream_id;
        IF FOUND AND NOT EXISTS (SELECT FROM tenant_admins) THEN
            RAISE EXCEPTION 'the tenant would be left without an enabled admin'
                USING ERRCODE = 'TP409';
        END IF;
    END IF;
    RETURN NULL;
END
$function$;

CREATE OR REPLACE FUNCTION public.trainplate_hold_live(used uuid[])
 RETURNS boolean
 LANGUAGE plpgsql
AS $function$
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
$function$;

CREATE OR REPLACE FUNCTION public.trainplate_hold_uses(by_id uuid, by_name text, used uuid[])
 RETURNS boolean
 LANGUAGE plpgsql
AS $function$
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
$function$;

CREATE OR REPLACE FUNCTION public.trainplate_is_tenant_admin(subject uuid)
 RETURNS boolean
 LANGUAGE sql
 STABLE
AS $function$
    WITH s AS (SELECT version, type, data::jsonb AS data FROM events WHERE stream_id = subject)
    SELECT NOT EXISTS (SELECT FROM s WHERE type = 'application.deleted.v1')
       AND coalesce((SELECT (data->>'enabled')::boolean FROM s
                      WHERE type = 'application.enablement_changed.v1'
                      ORDER BY version DESC LIMIT 1), true)
       AND (EXISTS (SELECT FROM s, jsonb_array_elements(s.data->'grants') AS g
                     WHERE s.type = 'application.created.v1'
                       AND g->>'role' = 'admin' AND g->>'scopeKind' = 'tenant')
            OR EXISTS (SELECT FROM s AS granted
                        WHERE granted.type IN ('application.role_granted.v1',
                                               'user.role_granted.v1')
                          AND granted.data->'rule'->'grant'->>'role' = 'admin'
                          AND granted.data->'rule'->'grant'->>'scopeKind' = 'tenant'
                          AND NOT EXISTS (
                              SELECT FROM s AS revoked
                               WHERE revoked.type IN ('application.role_revoked.v1',
                                                      'user.role_revoked.v1')
                                 AND revoked.data->>'ruleId' = granted.data->'rule'->>'ruleId'
                                 AND revoked.version > granted.version)))
$function$;

CREATE OR REPLACE FUNCTION public.trainplate_link(prev_hash bytea, digest bytea, version integer, micros bigint)
 RETURNS bytea
 LANGUAGE sql
 IMMUTABLE PARALLEL SAFE
RETURN sha256((((prev_hash || digest) || int4send(version)) || int8send(micros)));

CREATE OR REPLACE FUNCTION public.trainplate_micros(at timestamp with time zone)
 RETURNS bigint
 LANGUAGE sql
 IMMUTABLE PARALLEL SAFE
RETURN (((date_part('epoch'::text, date_trunc('second'::text, (at AT TIME ZONE 'UTC'::text))))::bigint * 1000000) + ((date_part('microseconds'::text, (at AT TIME ZONE 'UTC'::text)))::bigint % (1000000)::bigint));

CREATE OR REPLACE FUNCTION public.trainplate_moved(ids uuid[], versions integer[])
 RETURNS uuid[]
 LANGUAGE plpgsql
 STABLE
AS $function$
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
$function$;

CREATE OR REPLACE FUNCTION public.trainplate_record_link(prev_hash bytea, digest bytea, micros bigint)
 RETURNS bytea
 LANGUAGE sql
 IMMUTABLE PARALLEL SAFE
RETURN sha256(((prev_hash || digest) || int8send(micros)));

CREATE OR REPLACE FUNCTION public.trainplate_refuse_audit_change()
 RETURNS trigger
 LANGUAGE plpgsql
AS $function$
BEGIN
    RAISE EXCEPTION 'audit records are immutable: % refused', TG_OP USING ERRCODE = 'TP403';
END
$function$;

CREATE OR REPLACE FUNCTION public.trainplate_refuse_change()
 RETURNS trigger
 LANGUAGE plpgsql
AS $function$
BEGIN
    RAISE EXCEPTION 'events are immutable: % refused', TG_OP USING ERRCODE = 'TP403';
END
$function$;

CREATE OR REPLACE FUNCTION public.trainplate_refuse_unanchored_delete()
 RETURNS trigger
 LANGUAGE plpgsql
AS $function$
BEGIN
    IF EXISTS (SELECT 1 FROM gone
                WHERE gone.seq > coalesce((SELECT max(seq) FROM audit_record_anchors), 0)) THEN
        RAISE EXCEPTION 'audit records are immutable: DELETE refused past the newest anchor'
            USING ERRCODE = 'TP403';
    END IF;
    RETURN NULL;
END
$function$;

CREATE OR REPLACE FUNCTION public.trainplate_stream_head(p_stream_id uuid)
 RETURNS TABLE(version integer, hash bytea, micros bigint)
 LANGUAGE sql
 STABLE
AS $function$
    SELECT coalesce(max(last.version), 0),
           coalesce(max(last.hash), '\x0000000000000000000000000000000000000000000000000000000000000000'::bytea),
           trainplate_micros(now())
      FROM (SELECT e.version, e.hash FROM events e
             WHERE e.stream_id = p_stream_id ORDER BY e.version DESC LIMIT 1) AS last
$function$;

CREATE TRIGGER audit_record_anchors_append_only BEFORE DELETE OR UPDATE ON public.audit_record_anchors FOR EACH STATEMENT EXECUTE FUNCTION trainplate_refuse_audit_change();
CREATE TRIGGER audit_records_anchored_deletes AFTER DELETE ON public.audit_records REFERENCING OLD TABLE AS gone FOR EACH STATEMENT EXECUTE FUNCTION trainplate_refuse_unanchored_delete();
CREATE TRIGGER audit_records_unchanged BEFORE UPDATE ON public.audit_records FOR EACH STATEMENT EXECUTE FUNCTION trainplate_refuse_audit_change();
CREATE TRIGGER events_append_only BEFORE DELETE OR UPDATE ON public.events FOR EACH STATEMENT EXECUTE FUNCTION trainplate_refuse_change();
CREATE TRIGGER events_follow_access AFTER INSERT ON public.events FOR EACH ROW WHEN ((new.stream_type = ANY (ARRAY['application'::text, 'user'::text]))) EXECUTE FUNCTION trainplate_follow_access();
CREATE TRIGGER signed_out_sessions_access_epoch AFTER INSERT ON public.signed_out_sessions FOR EACH STATEMENT EXECUTE FUNCTION bump_access_epoch();
