-- The console sessions signed out before their token expired (infra/postgres/signed_out.py). A
-- console sign-in's token names its session (`sid`); signing out writes the session here, and
-- from then on neither the session cookie nor the token it held is taken, whoever replays them,
-- while the application's other tokens and sessions stay good. A row outlives its token by
-- nothing: once the token has expired it is refused anyway, so the row is deleted then.
--
-- Writing a row moves the access epoch (migration 0017) in the same transaction, so every API
-- process reloads what it keeps about sessions on its next request: a sign-out applies at once,
-- everywhere.
CREATE TABLE signed_out_sessions (
    session_id uuid        PRIMARY KEY,
    expires_at timestamptz NOT NULL
);

CREATE TRIGGER signed_out_sessions_access_epoch AFTER INSERT ON signed_out_sessions
    FOR EACH STATEMENT EXECUTE FUNCTION bump_access_epoch();
