-- Whose stream holds each access rule still in force, on the write side, so revoking a rule
-- resolves its subject from what has been written (a rule granted a moment ago is found), not
-- from the access rules' read model. Kept by a trigger in the transaction of the grant or the
-- revocation, whichever statement appends it.
CREATE TABLE access_rule_holders (
    rule_id      bigint PRIMARY KEY,
    subject_kind text   NOT NULL,  -- 'application' or 'user'
    subject_id   text   NOT NULL   -- the application's id, or the user's subject
);

CREATE FUNCTION trainplate_hold_access_rule() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    data jsonb := NEW.data::jsonb;
BEGIN
    IF NEW.type IN ('application.role_granted.v1', 'user.role_granted.v1') THEN
        INSERT INTO access_rule_holders (rule_id, subject_kind, subject_id)
        VALUES ((data->'rule'->>'ruleId')::bigint, NEW.stream_type,
                CASE NEW.stream_type WHEN 'user' THEN data->>'subject'
                                     ELSE NEW.stream_id::text END)
        ON CONFLICT (rule_id) DO NOTHING;
    ELSE
        DELETE FROM access_rule_holders WHERE rule_id = (data->>'ruleId')::bigint;
    END IF;
    RETURN NULL;
END
$$;

CREATE TRIGGER events_access_rule_holders AFTER INSERT ON events FOR EACH ROW
    WHEN (NEW.type IN ('application.role_granted.v1', 'user.role_granted.v1',
                       'application.role_revoked.v1', 'user.role_revoked.v1'))
    EXECUTE FUNCTION trainplate_hold_access_rule();

INSERT INTO access_rule_holders (rule_id, subject_kind, subject_id)
SELECT (g.data::jsonb->'rule'->>'ruleId')::bigint, g.stream_type,
       CASE g.stream_type WHEN 'user' THEN g.data::jsonb->>'subject' ELSE g.stream_id::text END
  FROM events g
 WHERE g.type IN ('application.role_granted.v1', 'user.role_granted.v1')
   AND NOT EXISTS (
       SELECT FROM events r
        WHERE r.stream_id = g.stream_id
          AND r.type IN ('application.role_revoked.v1', 'user.role_revoked.v1')
          AND r.data::jsonb->>'ruleId' = g.data::jsonb->'rule'->>'ruleId')
ON CONFLICT (rule_id) DO NOTHING;
