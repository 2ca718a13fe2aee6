-- Statistics of the scope key a template page filters on ((scope_kind || '/' || scope_id) =
-- ANY(...), projections/template_pages.py). Without them the planner takes the filter to keep
-- 0.5 % of the rows and sorts a scan of the whole catalogue for a page rather than walking the
-- name index: 2.4 to 3.9 ms a page at 10,000 templates, against 0.03 to 0.09 ms with them.
CREATE STATISTICS template_catalogue_scope_key ON ((scope_kind || '/' || scope_id))
    FROM template_catalogue;

ANALYZE template_catalogue;
