-- The combined specs and `runnable` follow more of the guide's rules (the master shows the
-- workload-wide values that run, the image pull policy follows Kubernetes, runnable holds the
-- rules a submission holds): the template read model is replayed from the start of the log by
-- the projector, so every row is worked out again. The asset states it keeps are written
-- idempotently on the way.
TRUNCATE template_catalogue;
DELETE FROM consumer_checkpoints WHERE name = 'projection:template_catalogue';
DELETE FROM follower_faults WHERE name = 'projection:template_catalogue';
