-- Template lists sort and filter in SQL (projections/template_pages.py) by code point, as Run:ai's
-- grammar is read here: the name in that order, ties by id, so a page is an index range.
CREATE INDEX template_catalogue_name_c_idx
    ON template_catalogue ((name COLLATE "C"), template_id);
