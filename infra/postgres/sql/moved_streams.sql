-- Which of the streams a decision was made on have moved past the versions it read (migration
-- 0033): asked in the transaction of an append that carries them as `checked`
-- (append_first_named.sql asks the same within its own statement).
-- $1 the streams, $2 the versions read (0: the stream had no events).
SELECT trainplate_moved($1::uuid[], $2::int[])
