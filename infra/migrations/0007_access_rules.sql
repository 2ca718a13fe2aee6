-- Read model: projections/access_rules.py (rebuilt from the events at any time).
CREATE TABLE access_rules (
    rule_id        integer     PRIMARY KEY,
    application_id uuid        NOT NULL,
    role           text        NOT NULL,
    scope_kind     text        NOT NULL,
    scope_id       text        NOT NULL,
    created_at     timestamptz NOT NULL,
    created_by     text        NOT NULL
);
CREATE INDEX access_rules_application_idx ON access_rules (application_id);
