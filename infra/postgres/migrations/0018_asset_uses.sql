-- Which streams use which assets, on the write side (infra/postgres/asset_uses.py): written in
-- the transaction of each append that changes it and read in the transaction of each deletion,
-- so "an asset in use cannot be deleted" never rests on a read model that trails the writes.
-- `user_name` is how the user is named in the refusal ("template my-run", "s3 my-bucket").
CREATE TABLE asset_uses (
    asset_id  uuid NOT NULL,
    user_id   uuid NOT NULL,
    user_name text NOT NULL,
    PRIMARY KEY (asset_id, user_id)
);
CREATE INDEX asset_uses_user_idx ON asset_uses (user_id);

-- What the log says so far. A live template uses the assets its last creation or update
-- recorded versions of (a linked-asset update moves a version, never the set).
WITH last AS (
    SELECT DISTINCT ON (stream_id) stream_id, type, data::jsonb AS data
      FROM events
     WHERE type IN ('template.created.v1', 'template.updated.v1', 'template.deleted.v1')
     ORDER BY stream_id, version DESC
)
INSERT INTO asset_uses (asset_id, user_id, user_name)
SELECT DISTINCT (v->>'assetId')::uuid, l.stream_id,
       'template ' || coalesce(l.data->'meta'->>'name', l.data->>'name')
  FROM last l
 CROSS JOIN LATERAL jsonb_array_elements(coalesce(l.data->'assetVersions', '[]'::jsonb)) AS v
 WHERE l.type <> 'template.deleted.v1';

-- A live environment uses the credentials its variables read; S3, Git and secret-volume data
-- sources those their specs name.
WITH last AS (
    SELECT DISTINCT ON (stream_id) stream_id, stream_type, type, data::jsonb AS data
      FROM events
     WHERE stream_type IN ('environment', 'datasource')
     ORDER BY stream_id, version DESC
)
INSERT INTO asset_uses (asset_id, user_id, user_name)
SELECT DISTINCT r.ref::uuid, l.stream_id,
       CASE l.stream_type WHEN 'environment' THEN 'environment' ELSE l.data->'spec'->>'kind' END
       || ' ' || coalesce(l.data->'meta'->>'name', l.data->>'name')
  FROM last l
 CROSS JOIN LATERAL (
    SELECT jsonb_path_query(l.data, '$.spec.environmentVariables[*].credential.assetId') #>> '{}'
    UNION ALL
    SELECT l.data->'spec'->>k
      FROM unnest(ARRAY['accessKeyAssetId', 'credentialId', 'passwordAssetId',
                        'credentialAssetId']) AS k
 ) AS r(ref)
 WHERE l.type NOT LIKE '%.deleted.v1' AND r.ref IS NOT NULL;
