-- A workload's row keeps what its backend made of its latest submitted run (the Kubeflow
-- objects; none for local processes), for GET /api/v1/workloads/{id}/manifests. The workload
-- read model is replayed from the start of the log by the projector, so every row has them.
ALTER TABLE workload_catalogue ADD COLUMN manifests jsonb NOT NULL DEFAULT '[]';
TRUNCATE workload_catalogue;
DELETE FROM consumer_checkpoints WHERE name = 'projection:workload_catalogue';
DELETE FROM follower_faults WHERE name = 'projection:workload_catalogue';
