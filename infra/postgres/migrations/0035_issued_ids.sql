-- The org unit id issued to each create sent with an Idempotency-Key (infra/postgres/names.py
-- PostgresIdSequence): a retry under the same key is issued the same id, so it reaches the
-- stream its first attempt made, as every other create's retry does (services/idempotency.py).
CREATE TABLE issued_ids (
    creation_id uuid   PRIMARY KEY,
    id          bigint NOT NULL
);
