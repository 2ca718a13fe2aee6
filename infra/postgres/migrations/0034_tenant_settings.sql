-- Read model: projections/tenant_settings.py, one row per tenant setting ever changed (rebuilt
-- from the events at any time); `version` is the settings stream's version that set it.
CREATE TABLE tenant_settings (
    key     text    PRIMARY KEY,
    value   boolean NOT NULL,
    version integer NOT NULL
);
