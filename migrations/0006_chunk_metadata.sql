-- Issue 9: the message's document metadata (already stored once per source
-- version in source_versions.metadata) beside every current chunk, and the
-- strategy that made each chunk easy to group by.
CREATE OR REPLACE VIEW current_chunks AS
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
COMMENT ON VIEW current_chunks IS 'Chunks of every document''s current source version only, with the document metadata of the message that produced them (stored once per source version, not per chunk).';
COMMENT ON COLUMN current_chunks.document_metadata IS 'The input message''s metadata object (title, source_url, space_key, page_id, labels, author, updated_at, ...), from source_versions.metadata.';
