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
