-- Every chunk of every profile carries chunk_key and is_table (issue 45);
-- before, only multi-granularity and granularity-aware profiles set them and
-- the rest stored NULL. Stored rows are back-filled with the same formulas
-- the engine uses: chunk_key = {document_id}:{strategy}:{granularity}:{ordinal}
-- (the strategy is the part of chunker_version before its colon) and
-- is_table = granularity 'table' or chunk type 'table'. The columns stay
-- nullable so that a worker of the previous release can still write during
-- a rolling upgrade (this migration can be run again to fill its rows).
UPDATE chunks
   SET chunk_key = document_id || ':' || split_part(chunker_version, ':', 1) || ':'
                   || granularity || ':' || ordinal,
       is_table  = (granularity = 'table' OR chunk_type = 'table')
 WHERE chunk_key IS NULL OR is_table IS NULL;

COMMENT ON COLUMN chunks.chunk_key IS 'Readable key {document_id}:{strategy}:{granularity}:{ordinal}, on every chunk (rows stored before 0013 were back-filled).';
COMMENT ON COLUMN chunks.is_table IS 'The chunk holds (a piece of) a table: granularity table or chunk type table; on every chunk.';
