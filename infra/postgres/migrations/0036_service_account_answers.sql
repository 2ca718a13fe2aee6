-- The secret a service account created under an Idempotency-Key was first answered with, sealed
-- (AES-256-GCM under a key of its own, the account's id as associated data), so that a retry of
-- the create answers the same secret, as a retry of any other create answers its first result.
-- Written in the transaction of the account's creating event. Kept a day (a retry after that is
-- answered 409, and the row is purged by the next keyed create), and deleted at once when the
-- secret is replaced or the account deleted: a secret that logs in no more is answered to no one
-- (infra/postgres/application_registry.py).
CREATE TABLE service_account_answers (
    application_id uuid        PRIMARY KEY,
    key_id         integer     NOT NULL,
    nonce          bytea       NOT NULL,
    sealed         bytea       NOT NULL,
    created_at     timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX service_account_answers_by_age ON service_account_answers (created_at);
