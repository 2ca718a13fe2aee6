-- The tenant always keeps one enabled admin: the principals that hold the admin role on the
-- tenant, kept by a trigger in the transaction of every event of an application's or a user's
-- stream, whichever statement appends it. An event that would leave none (the last admin
-- deleted, disabled or stripped of the role) fails its transaction with SQLSTATE TP409, which
-- the store raises as LastTenantAdminError (infra/postgres/connections.py).
--
-- Two such transactions cannot both remove "one of two": each first moves the access epoch
-- (migration 0017; its trigger's name sorts first, so it fires first), which holds that row
-- until commit, and the count below is a new statement that sees what the other committed.
CREATE TABLE tenant_admins (
    stream_id uuid PRIMARY KEY
);

-- Whether the application or user whose stream this is holds the tenant admin role now: live
-- and enabled (a user is always), granted at creation or by an access rule not revoked since.
CREATE FUNCTION trainplate_is_tenant_admin(subject uuid) RETURNS boolean
LANGUAGE sql STABLE AS $$
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
$$;

CREATE FUNCTION trainplate_keep_a_tenant_admin() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
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
$$;

CREATE TRIGGER events_tenant_admins AFTER INSERT ON events FOR EACH ROW
    WHEN (NEW.stream_type IN ('application', 'user'))
    EXECUTE FUNCTION trainplate_keep_a_tenant_admin();

INSERT INTO tenant_admins (stream_id)
SELECT DISTINCT stream_id FROM events
 WHERE stream_type IN ('application', 'user') AND trainplate_is_tenant_admin(stream_id);
