-- Issue 10: several granularities of one document (multi-granularity
-- profiles such as hierarchy-v1; window-v1 and the table profiles keep
-- tables as `table` chunks). Ordinals run 0..n-1 per granularity, so a
-- version's chunks are keyed by (granularity, ordinal); links name the
-- granularity of the chunk that holds them; the record's new optional
-- fields get columns.

-- Links point at chunks by (granularity, ordinal) from now on.
DO $$
DECLARE fk text;
BEGIN
    SELECT conname INTO fk
    FROM pg_constraint
    WHERE conrelid = 'document_links'::regclass
      AND contype = 'f'
      AND confrelid = 'chunks'::regclass;
    IF fk IS NOT NULL THEN
        EXECUTE format('ALTER TABLE document_links DROP CONSTRAINT %I', fk);
    END IF;
END $$;

ALTER TABLE document_links ADD COLUMN chunk_granularity text;
UPDATE document_links dl
   SET chunk_granularity = c.granularity
  FROM chunks c
 WHERE c.tenant_id = dl.tenant_id
   AND c.document_id = dl.source_document_id
   AND c.source_version_id = dl.source_version_id
   AND c.ordinal = dl.chunk_ordinal;
UPDATE document_links SET chunk_granularity = 'section' WHERE chunk_granularity IS NULL;
ALTER TABLE document_links ALTER COLUMN chunk_granularity SET NOT NULL;
COMMENT ON COLUMN document_links.chunk_granularity IS 'Granularity of the chunk whose own span holds the link: the coarsest granularity below document that covers it (section for hierarchy-v1).';
COMMENT ON COLUMN document_links.chunk_ordinal IS 'Ordinal, within chunk_granularity, of the chunk whose own span holds the link.';

ALTER TABLE chunks DROP CONSTRAINT chunks_pkey;
ALTER TABLE chunks ADD PRIMARY KEY (tenant_id, document_id, source_version_id, granularity, ordinal);
ALTER TABLE document_links
    ADD FOREIGN KEY (tenant_id, source_document_id, source_version_id, chunk_granularity, chunk_ordinal)
    REFERENCES chunks (tenant_id, document_id, source_version_id, granularity, ordinal);

ALTER TABLE chunks
    ADD COLUMN chunk_key       text,
    ADD COLUMN parent_chunk_id text,
    ADD COLUMN is_table        boolean,
    ADD COLUMN facet_json      jsonb;
-- "The children of chunk Y" (a retriever merging small chunks into their
-- parent); "the parent of chunk Y" is a lookup by chunk_id (chunks_chunk_id_idx);
-- "the section chunks of document X" is the primary key's prefix.
CREATE INDEX chunks_parent_idx ON chunks (tenant_id, parent_chunk_id) WHERE parent_chunk_id IS NOT NULL;
COMMENT ON COLUMN chunks.ordinal IS 'Position in the version within its granularity, 0..n-1, contiguous per granularity.';
COMMENT ON COLUMN chunks.granularity IS 'Granularity of the chunk: document, section, paragraph, window or table (the Chunking System specification).';
COMMENT ON COLUMN chunks.chunk_key IS 'The readable key of the Chunking System specification, {document_id}:{strategy}:{granularity}:{ordinal}; NULL for the section-only profiles.';
COMMENT ON COLUMN chunks.parent_chunk_id IS 'chunk_id of the chunk of the nearest coarser granularity whose own span contains this chunk''s own span (multi-granularity profiles), if any.';
COMMENT ON COLUMN chunks.is_table IS 'The chunk holds (a piece of) a table; set where chunk_key is.';
COMMENT ON COLUMN chunks.facet_json IS 'The table strategy''s digest of a table: mode, rows, grouping (and any fallback), column statistics, the full table for summaries.';

-- current_chunks selects c.*: recreated so that it shows the new columns.
DROP VIEW current_chunks;
CREATE VIEW current_chunks WITH (security_invoker = true) AS
SELECT c.*, sv.metadata AS document_metadata
FROM chunks c
JOIN documents d
  ON d.tenant_id = c.tenant_id
 AND d.document_id = c.document_id
 AND d.current_source_version_id = c.source_version_id
JOIN source_versions sv
  ON sv.tenant_id = c.tenant_id
 AND sv.document_id = c.document_id
 AND sv.source_version_id = c.source_version_id;
COMMENT ON VIEW current_chunks IS 'Chunks of every document''s current source version only (every granularity: filter on granularity), with the document metadata of the message that produced them (stored once per source version, not per chunk).';
COMMENT ON COLUMN current_chunks.document_metadata IS 'The input message''s metadata object (title, source_url, space_key, page_id, labels, author, updated_at, ...), from source_versions.metadata.';
GRANT SELECT ON current_chunks TO chunk_worker_analyst;
