-- Read model: projections/storage_class_catalogue.py, one row per storage class a cluster has
-- and one per configuration of a class (rebuilt from the events at any time).
CREATE TABLE storage_class_catalogue (
    cluster_id uuid    NOT NULL,
    name       text    NOT NULL,
    spec       jsonb   NOT NULL,
    version    integer NOT NULL,
    PRIMARY KEY (cluster_id, name)
);
CREATE TABLE storage_class_configuration_catalogue (
    configuration_id uuid        PRIMARY KEY,
    cluster_id       uuid        NOT NULL,
    name             text        NOT NULL,
    rules            jsonb       NOT NULL,
    created_at       timestamptz NOT NULL,
    created_by       text        NOT NULL,
    updated_at       timestamptz NOT NULL,
    updated_by       text        NOT NULL,
    version          integer     NOT NULL
);
CREATE INDEX storage_class_configuration_catalogue_class_idx
    ON storage_class_configuration_catalogue (cluster_id, name);

-- The template read model keeps a cluster's classes and their configurations' rules as facts
-- too (projections/template_facts.py): `detail` holds a configuration's rules.
ALTER TABLE template_cluster_facts ADD COLUMN detail jsonb;
