-- Read model: projections/node_pool_catalogue.py, one row per live node pool (rebuilt from the
-- events at any time); `spec` holds Run:ai's fields of the pool (its label and scheduling).
CREATE TABLE node_pool_catalogue (
    nodepool_id uuid        PRIMARY KEY,
    cluster_id  uuid        NOT NULL,
    name        text        NOT NULL,
    spec        jsonb       NOT NULL,
    created_at  timestamptz NOT NULL,
    created_by  text        NOT NULL,
    updated_at  timestamptz NOT NULL,
    updated_by  text        NOT NULL,
    version     integer     NOT NULL
);
CREATE INDEX node_pool_catalogue_cluster_idx ON node_pool_catalogue (cluster_id, name COLLATE "C");

-- The template read model's facts of each cluster its combined specs rest on (a node pool, by
-- its stream), and which rows rest on them; a row worked out again when they move counts up
-- `recombined`, so no reader keeps the copy it decoded before (projections/template_catalogue.py).
CREATE TABLE template_cluster_facts (
    stream_id  uuid PRIMARY KEY,
    cluster_id uuid NOT NULL,
    kind       text NOT NULL,
    name       text NOT NULL
);
CREATE INDEX template_cluster_facts_cluster_idx ON template_cluster_facts (cluster_id);
ALTER TABLE template_catalogue ADD COLUMN cluster_facts boolean NOT NULL DEFAULT false,
                               ADD COLUMN recombined integer NOT NULL DEFAULT 0;
CREATE INDEX template_catalogue_cluster_facts_idx ON template_catalogue ((meta->>'clusterId'))
    WHERE cluster_facts;
