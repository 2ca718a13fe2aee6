-- Read model: projections/policy_catalogue.py, one row per scope's live policy of a workload
-- type (rebuilt from the events at any time). `body` holds what the scope sets, as the
-- policy.applied.v1 event has it: {workerDefaults, masterDefaults, rules}.
CREATE TABLE policy_catalogue (
    policy_id     uuid        PRIMARY KEY,
    name          text        NOT NULL,
    workload_type text        NOT NULL,
    scope_kind    text        NOT NULL,
    scope_id      text        NOT NULL,
    cluster_id    uuid,
    department_id text,
    project_id    text,
    body          jsonb       NOT NULL,
    created_at    timestamptz NOT NULL,
    created_by    text        NOT NULL,
    updated_at    timestamptz NOT NULL,
    updated_by    text        NOT NULL,
    version       integer     NOT NULL,
    UNIQUE (workload_type, scope_kind, scope_id)
);
