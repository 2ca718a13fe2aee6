-- Which streams use which, on the write side (infra/postgres/stream_uses.py): written in the
-- transaction of each append that changes it and read in the transaction of each deletion, so
-- "a thing in use cannot be deleted" never rests on a read model that trails the writes.
-- A template uses its assets, an environment or data source the credentials it reads, and
-- every thing the org unit it lives in (a department its cluster, a project its department or
-- cluster, a workload its project). `user_name` is how the user is named in a refusal
-- ("template my-run", "s3 my-bucket").
CREATE TABLE stream_uses (
    used_id   uuid NOT NULL,
    user_id   uuid NOT NULL,
    user_name text NOT NULL,
    PRIMARY KEY (used_id, user_id)
);
CREATE INDEX stream_uses_user_idx ON stream_uses (user_id);

-- What the log says so far: every live stream of a kind that uses others, where it lives (its
-- first event says), what it is called (its last naming event says) and what it reads.
CREATE TEMPORARY TABLE migrating_users ON COMMIT DROP AS
WITH firsts AS (
    SELECT stream_id, stream_type, data::jsonb AS data
      FROM events
     WHERE version = 1
       AND stream_type IN ('template', 'environment', 'compute', 'datasource', 'credential',
                           'workload', 'department', 'project')
)
SELECT f.stream_id, f.stream_type, f.data AS first, n.data AS named
  FROM firsts f
 CROSS JOIN LATERAL (
    SELECT e.data::jsonb AS data FROM events e
     WHERE e.stream_id = f.stream_id
       AND e.type IN ('template.created.v1', 'template.updated.v1', 'environment.created.v1',
                      'environment.updated.v1', 'compute.created.v1', 'compute.updated.v1',
                      'datasource.created.v1', 'datasource.updated.v1', 'credential.created.v1',
                      'credential.updated.v1', 'workload.requested.v1', 'department.created.v1',
                      'project.created.v1')
     ORDER BY e.version DESC LIMIT 1
 ) AS n
 WHERE NOT EXISTS (
    SELECT FROM events e WHERE e.stream_id = f.stream_id AND e.type LIKE '%.deleted.v1'
 );

ALTER TABLE migrating_users ADD COLUMN label text;
UPDATE migrating_users SET label =
    CASE stream_type
        WHEN 'datasource' THEN first->'spec'->>'kind'
        WHEN 'credential' THEN first->>'kind'
        ELSE stream_type
    END || ' ' || coalesce(named->'meta'->>'name', named->>'name');

-- The org units, by kind and id, and their streams.
CREATE TEMPORARY TABLE migrating_units ON COMMIT DROP AS
SELECT 'cluster' AS kind, data::jsonb->>'clusterId' AS id, stream_id
  FROM events WHERE type = 'cluster.created.v1'
UNION ALL
SELECT 'department', data::jsonb->>'departmentId', stream_id
  FROM events WHERE type = 'department.created.v1'
UNION ALL
SELECT 'project', data::jsonb->>'projectId', stream_id
  FROM events WHERE type = 'project.created.v1';

-- Where each lives.
INSERT INTO stream_uses (used_id, user_id, user_name)
SELECT u.stream_id, p.stream_id, p.label
  FROM (
    SELECT m.stream_id, m.label,
           CASE
               WHEN m.stream_type = 'workload' THEN 'project'
               WHEN m.stream_type = 'department' THEN 'cluster'
               WHEN m.stream_type = 'project' THEN
                   CASE WHEN m.first->>'departmentId' IS NULL THEN 'cluster' ELSE 'department' END
               ELSE m.first->'meta'->>'scope'
           END AS kind,
           CASE
               WHEN m.stream_type = 'workload' THEN m.first->>'projectId'
               WHEN m.stream_type = 'department' THEN m.first->>'clusterId'
               WHEN m.stream_type = 'project' THEN
                   coalesce(m.first->>'departmentId', m.first->>'clusterId')
               WHEN m.first->'meta'->>'scope' = 'cluster' THEN m.first->'meta'->>'clusterId'
               WHEN m.first->'meta'->>'scope' = 'department' THEN m.first->'meta'->>'departmentId'
               ELSE m.first->'meta'->>'projectId'
           END AS id
      FROM migrating_users m
  ) AS p
  JOIN migrating_units u USING (kind, id)
ON CONFLICT DO NOTHING;

-- A template uses the assets its last creation or update recorded versions of.
INSERT INTO stream_uses (used_id, user_id, user_name)
SELECT DISTINCT (v->>'assetId')::uuid, m.stream_id, m.label
  FROM migrating_users m
 CROSS JOIN LATERAL jsonb_array_elements(coalesce(m.named->'assetVersions', '[]'::jsonb)) AS v
 WHERE m.stream_type = 'template'
ON CONFLICT DO NOTHING;

-- An environment the credentials its variables read; S3, Git and secret-volume data sources
-- those their specs name.
INSERT INTO stream_uses (used_id, user_id, user_name)
SELECT DISTINCT r.ref::uuid, m.stream_id, m.label
  FROM migrating_users m
 CROSS JOIN LATERAL (
    SELECT jsonb_path_query(m.named, '$.spec.environmentVariables[*].credential.assetId') #>> '{}'
    UNION ALL
    SELECT m.named->'spec'->>k
      FROM unnest(ARRAY['accessKeyAssetId', 'credentialId', 'passwordAssetId',
                        'credentialAssetId']) AS k
 ) AS r(ref)
 WHERE m.stream_type IN ('environment', 'datasource') AND r.ref IS NOT NULL
ON CONFLICT DO NOTHING;
