-- Issue 17: profiles that name their embedder ([embedder] in the profile)
-- fit every chunk's embed_text to the embedder's window; the count in the
-- embedder's own tokens is stored beside token_count (NULL for profiles
-- without an embedder).
ALTER TABLE chunks ADD COLUMN embed_token_count integer;
COMMENT ON COLUMN chunks.embed_token_count IS 'Tokens of embed_text in the profile''s embedder tokenizer ([embedder] tokenizer), special tokens included; never above its max_tokens. NULL when the profile names no embedder.';

-- current_chunks selects c.*: recreated so that it shows the new column
-- (a view keeps the column list it was created with).
DROP VIEW current_chunks;
CREATE VIEW current_chunks AS
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
GRANT SELECT ON current_chunks TO chunk_worker_analyst;
