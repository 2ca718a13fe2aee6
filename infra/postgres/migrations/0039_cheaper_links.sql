-- The links of several events appended to one stream, in one call: `digests` holds one 32-byte
-- digest per event, the answer one 32-byte link per event, in order, each computed by
-- trainplate_link (0001) after `head`, for versions `version_before` + 1, + 2, ... and the
-- time `micros`. The chain is sequential, each link hashing the one before; computed by a
-- recursive CTE in the multi-event appends, each step of the recursion cost about twice this
-- loop's: a 100-event append's database CPU measured 6.3 us per event with the CTE against
-- 5.7 with this function (medians of 7 rounds of 1,500 appends, commits not waiting for the
-- disk).
CREATE FUNCTION trainplate_chain(head bytea, digests bytea, version_before integer, micros bigint)
RETURNS bytea LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE AS $$
DECLARE
    link bytea := head;
    links bytea := '';
BEGIN
    FOR i IN 0 .. length(digests) / 32 - 1 LOOP
        link := trainplate_link(link, substring(digests FROM 32 * i + 1 FOR 32),
                                version_before + i + 1, micros);
        links := links || link;
    END LOOP;
    RETURN links;
END
$$;

-- The same microseconds as 0001's definition, computed inline. That one reads a timestamptz's
-- fields, which depends on the session's time zone (extract() on a timestamptz is STABLE): in a
-- function declared IMMUTABLE, the planner does not inline it, and every link paid a SQL
-- function call, and numeric arithmetic besides. Here the time is first read at UTC (an
-- IMMUTABLE conversion), and its parts by date_part on a plain timestamp (IMMUTABLE too, and a
-- float8, exact for both parts: whole seconds since the epoch, and the seconds field in
-- microseconds, below 61e6). date_trunc rounds toward the past, so a time before the epoch
-- keeps its microseconds positive, as the numeric floor did. A call measured 320 ns against
-- 950 (200,000 rows summed in one query).
CREATE OR REPLACE FUNCTION trainplate_micros(at timestamptz) RETURNS bigint
LANGUAGE sql IMMUTABLE PARALLEL SAFE
RETURN date_part('epoch', date_trunc('second', at AT TIME ZONE 'UTC'))::bigint * 1000000
       + date_part('microseconds', at AT TIME ZONE 'UTC')::bigint % 1000000;
