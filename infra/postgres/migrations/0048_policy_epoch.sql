-- The policy read model's epoch, moved by its projection with every policy event, in the
-- transaction that changes the rows (projections/policy_catalogue.py): a request's standing
-- carries it, and readers keep a lineage's effective policy until it moves.
CREATE TABLE policy_epoch (
    only_row boolean PRIMARY KEY DEFAULT true CHECK (only_row),
    epoch    bigint  NOT NULL
);

INSERT INTO policy_epoch (epoch) VALUES (pg_current_xact_id()::text::bigint);
