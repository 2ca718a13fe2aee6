-- Read model: projections/workload_catalogue.py (rebuilt from the events at any time).
CREATE TABLE workload_catalogue (
    workload_id      uuid        PRIMARY KEY,
    name             text        NOT NULL,
    project_id       text        NOT NULL,
    department_id    text,
    cluster_id       uuid        NOT NULL,
    template_id      uuid,
    framework        text,
    request          jsonb       NOT NULL,   -- the workload.requested.v1 payload: the snapshot
    desired_phase    text        NOT NULL,
    actual_phase     text        NOT NULL,
    phase_message    text,
    run              integer     NOT NULL,
    submitted_run    integer     NOT NULL,
    backend          text,
    created_at       timestamptz NOT NULL,
    created_by       text        NOT NULL,
    updated_at       timestamptz NOT NULL,
    phase_updated_at timestamptz NOT NULL,
    completed_at     timestamptz,
    deleted_at       timestamptz,
    version          integer     NOT NULL
);
CREATE INDEX workload_catalogue_project_idx ON workload_catalogue (project_id, created_at);
CREATE INDEX workload_catalogue_template_idx ON workload_catalogue (template_id);
