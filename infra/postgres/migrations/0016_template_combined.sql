-- The template read model holds each template's combined specs and whether it is runnable
-- (projections/template_catalogue.py), worked out by the projection when the template or the
-- version of an asset it uses moves, so a read is one row and runnable filters in SQL.
-- To work them out the projection keeps every asset's state at each of its versions: a template
-- follows the version its stream records, not the latest.
CREATE TABLE template_asset_states (
    asset_id uuid    NOT NULL,
    version  integer NOT NULL,
    kind     text    NOT NULL,
    meta     jsonb   NOT NULL,
    spec     jsonb   NOT NULL,
    deleted  boolean NOT NULL,
    PRIMARY KEY (asset_id, version)
);

-- The rows have no combined specs yet: the read model is replayed from the start of the log by
-- the projector (the asset states above are built on the way).
TRUNCATE template_catalogue;
DELETE FROM consumer_checkpoints WHERE name = 'projection:template_catalogue';
DELETE FROM follower_faults WHERE name = 'projection:template_catalogue';
ALTER TABLE template_catalogue ADD COLUMN combined jsonb NOT NULL;
CREATE INDEX template_catalogue_runnable_idx
    ON template_catalogue (((combined->'runnable'->>'isRunnable')));
