-- Read model column: projections/application_catalogue.py shows whether an application is enabled.
ALTER TABLE application_catalogue ADD COLUMN enabled boolean NOT NULL DEFAULT true;
ALTER TABLE application_catalogue ADD COLUMN updated_at timestamptz;
