-- A template list compares names by code point, equality included (projections/list_sql.py),
-- so template_catalogue_name_c_idx serves every name condition and the sort; the index of the
-- names in the database's collation served none, and cost the projection a write a row.
DROP INDEX template_catalogue_name_idx;
