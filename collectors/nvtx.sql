-- collectors/nvtx.sql: the NVTX collector's tables (the program's own ranges), created after
-- schema/schema.sql (conventions there); embedded at build time.

-- The application's NVTX ranges. kind 1 push/pop, 2 start/end, 3 mark.
CREATE TABLE nvtx_domains (id INTEGER PRIMARY KEY, name_id INTEGER);

CREATE TABLE nvtx_ranges (
    id INTEGER PRIMARY KEY, tid INTEGER, domain INTEGER, kind INTEGER, start INTEGER,
    end INTEGER, text_id INTEGER, category INTEGER, color INTEGER, depth INTEGER,
    parent INTEGER, phase INTEGER, end_tid INTEGER
);
