-- Read model: projections/access_rules.py (rebuilt from the events at any time).
CREATE TABLE access_rules (
    rule_id      integer     PRIMARY KEY,
    subject_type text        NOT NULL,   -- app or user
    subject_id   text        NOT NULL,   -- an application id, or a user's token subject
    role         text        NOT NULL,
    scope_kind   text        NOT NULL,
    scope_id     text        NOT NULL,
    created_at   timestamptz NOT NULL,
    created_by   text        NOT NULL
);
CREATE INDEX access_rules_subject_idx ON access_rules (subject_type, subject_id);
