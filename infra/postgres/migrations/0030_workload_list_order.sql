-- A workload list is chosen and paged in SQL (projections/workload_pages.py), newest first:
-- this index walks that order, so a page reads its rows rather than every row of its projects.
CREATE INDEX workload_catalogue_newest_idx ON workload_catalogue (created_at DESC, workload_id);
-- `filterBy=name=^...` is decided as a range of the code-point order: this index serves it.
CREATE INDEX workload_catalogue_name_idx ON workload_catalogue ((name COLLATE "C"));
