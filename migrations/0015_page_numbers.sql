-- Page numbers of chunks of documents that carry page markers (the
-- layout_heuristic strategy: `<!-- page N -->` comments, "Page N of M"
-- footers, page-number lines); NULL elsewhere. Both or neither.
ALTER TABLE chunks
    ADD COLUMN page_start integer,
    ADD COLUMN page_end   integer,
    ADD CONSTRAINT chunks_pages_check CHECK (
        (page_start IS NULL) = (page_end IS NULL) AND (page_start IS NULL OR page_start <= page_end)
    );
COMMENT ON COLUMN chunks.page_start IS 'First page (inclusive) of the chunk''s own content, when the document carries page markers (layout_heuristic); NULL otherwise.';
COMMENT ON COLUMN chunks.page_end IS 'Last page (inclusive) of the chunk''s own content; set exactly when page_start is.';
COMMENT ON COLUMN chunks.facet_json IS 'The table strategy''s digest of a table (mode, rows, grouping, column statistics, the full table for summaries); the clinical_role strategy''s {"facet_type", "role_confidence", "roles"} on every chunk.';

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
GRANT SELECT ON current_chunks TO chunk_worker_service;
