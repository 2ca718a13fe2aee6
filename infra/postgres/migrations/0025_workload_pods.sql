-- Read model: the replicas (pods) of each workload's current run, as its backend last reported
-- them (projections/workload_pods.py, written with the workload catalogue), for
-- GET /api/v1/workloads/{id}/pods, /api/v1/workloads/pods and its count. The workload read
-- models are replayed from the start of the log by the projector, so every workload has them.
CREATE TABLE workload_pods (
    workload_id    uuid        NOT NULL,
    name           text        NOT NULL,
    run            integer     NOT NULL,
    project_id     text        NOT NULL,
    cluster_id     uuid        NOT NULL,
    node_name      text,
    phase          text        NOT NULL,
    created_at     timestamptz NOT NULL,
    completed_at   timestamptz,
    updated_at     timestamptz NOT NULL,
    deleted_at     timestamptz,
    workload_name  text        NOT NULL,
    project_name   text        NOT NULL,
    priority_class text        NOT NULL,
    pod            jsonb       NOT NULL,   -- the backend's report (domain PodObserved)
    requested      jsonb       NOT NULL,   -- the replica's requested resources, from its spec
    PRIMARY KEY (workload_id, name)
);
CREATE INDEX workload_pods_project_idx ON workload_pods (project_id, created_at);
TRUNCATE workload_catalogue;
DELETE FROM consumer_checkpoints WHERE name = 'projection:workload_catalogue';
DELETE FROM follower_faults WHERE name = 'projection:workload_catalogue';
