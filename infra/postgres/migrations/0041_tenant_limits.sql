-- A tenant setting that is a number (workloads.maxWorkers, `tenant.limit_changed.v1`) keeps it
-- here, its `value` true; a switch keeps NULL.
ALTER TABLE tenant_settings ADD COLUMN number integer;
