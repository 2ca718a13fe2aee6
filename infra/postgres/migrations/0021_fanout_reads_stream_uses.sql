-- The fan-out asks the write side which templates use an asset (stream_uses, kept in each
-- template append's own transaction) instead of keeping a copy of its own in step with the log.
DROP TABLE fanout_links;
