-- Application secrets live here, never in events: only a slow salted hash (argon2id), so a leak of
-- this table does not reveal them and deleting the row destroys the credential. Written in the
-- same transaction as the application's event (infra/postgres/application_registry.py).
CREATE TABLE application_credentials (
    application_id uuid        PRIMARY KEY,
    client_id      text        NOT NULL,
    secret_hash    text        NOT NULL,
    created_at     timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT application_credentials_client_id_key UNIQUE (client_id)
);
