-- The version of the projection that built each read model's rows (`version` beside its name in
-- projections/__init__.py). The projector compares it at start-up and rebuilds a read model
-- whose projection moved on, blue/green, recording the new version in the swap
-- (infra/followers/read_model_versions.py). No row: version 1, which every read model was when
-- versions were first declared. So no migration need truncate a read model to have it replayed.
CREATE TABLE read_model_versions (
    name        text        PRIMARY KEY,
    version     integer     NOT NULL,
    recorded_at timestamptz NOT NULL DEFAULT now()
);
