-- Read model: projections/application_catalogue.py (rebuilt from the events at any time).
CREATE TABLE application_catalogue (
    application_id uuid        PRIMARY KEY,
    name           text        NOT NULL,
    client_id      text        NOT NULL,
    grants         jsonb       NOT NULL,
    created_at     timestamptz NOT NULL,
    created_by     text        NOT NULL,
    version        integer     NOT NULL
);
CREATE INDEX application_catalogue_name_idx ON application_catalogue (name);
