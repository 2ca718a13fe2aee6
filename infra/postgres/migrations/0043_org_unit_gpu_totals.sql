-- A unit's `totalGpuQuota` (the sum of its node pools' GPU quotas), for the lists' `filterBy`
-- in SQL: as a number, and as the text Python writes of it ('' when there is none), which the
-- text operators read. The org_units projection's version 2 fills them (decision 0007).
ALTER TABLE org_units ADD COLUMN total_gpu_quota double precision,
                      ADD COLUMN total_gpu_quota_text text NOT NULL DEFAULT '';
