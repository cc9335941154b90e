-- The trace store as rows: the same files and folders as the folder store (docs/team.md).

-- Milliseconds since the Unix epoch by the database's clock: one clock for every instance.
CREATE FUNCTION store_now_ms() RETURNS bigint LANGUAGE sql VOLATILE
    AS $$ SELECT (extract(epoch FROM clock_timestamp()) * 1000)::bigint $$;

-- One row per file. `dir` is the folder holding it ('' at the trace root), in the "C" collation
-- so that a folder's subtree is one range of the index.
CREATE TABLE store_files (
    path text COLLATE "C" PRIMARY KEY,
    dir text COLLATE "C" NOT NULL,
    name text COLLATE "C" NOT NULL,
    modified_ms bigint NOT NULL,
    size bigint NOT NULL
);
CREATE INDEX store_files_dir ON store_files (dir, name);

-- A file's bytes, in order: an append is one more row; a whole-file write replaces them.
CREATE TABLE store_chunks (
    path text COLLATE "C" NOT NULL REFERENCES store_files (path) ON DELETE CASCADE ON UPDATE CASCADE,
    seq bigserial NOT NULL,
    data bytea NOT NULL,
    PRIMARY KEY (path, seq)
);

-- Which process holds a trace (its owner lock) until when, by the database's clock.
CREATE TABLE store_leases (
    path text COLLATE "C" PRIMARY KEY,
    holder text NOT NULL,
    expires_at timestamptz NOT NULL
);
CREATE INDEX store_leases_holder ON store_leases (holder);

-- A file's text as jsonb; NULL when it is not JSON (one damaged file never breaks a view).
CREATE FUNCTION store_jsonb(data bytea) RETURNS jsonb LANGUAGE plpgsql IMMUTABLE AS $$
BEGIN
    RETURN convert_from(data, 'UTF8')::jsonb;
EXCEPTION WHEN OTHERS THEN
    RETURN NULL;
END $$;

-- For people who query the database: one row per session (a trace folder's meta.json).
CREATE VIEW store_sessions AS
SELECT f.dir AS trace_id,
       meta ->> 'status' AS status,
       meta ->> 'person' AS person,
       (meta ->> 'calls')::bigint AS calls,
       to_timestamp((meta ->> 'updated_at')::bigint / 1000.0) AS updated,
       meta
FROM store_files f
CROSS JOIN LATERAL (
    SELECT store_jsonb(string_agg(c.data, ''::bytea ORDER BY c.seq)) AS meta
    FROM store_chunks c WHERE c.path = f.path
) m
WHERE f.name = 'meta.json' AND f.dir <> '' AND position('/' IN f.dir) = 0;
