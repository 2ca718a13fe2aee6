-- Credential values, sealed (AES-256-GCM, the asset id as associated data) and never in events.
-- Written in the same transaction as the credential's creating event, and deleted with its
-- deleting event, so deleting a credential destroys its values (infra/postgres/credential_vault.py).
CREATE TABLE credential_secrets (
    asset_id   uuid        PRIMARY KEY,
    key_id     integer     NOT NULL,
    nonce      bytea       NOT NULL,
    sealed     bytea       NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now()
);
