-- The linked-asset fan-out's own index (services/fanout.py, infra/followers/fanout_runner.py), written in the
-- same transaction as its checkpoint and the template events it appends.
CREATE TABLE fanout_links (
    template_id uuid NOT NULL,
    asset_id    uuid NOT NULL,
    PRIMARY KEY (asset_id, template_id)
);
CREATE INDEX fanout_links_template_idx ON fanout_links (template_id);

CREATE TABLE fanout_asset_versions (
    asset_id uuid    PRIMARY KEY,
    version  integer NOT NULL
);
