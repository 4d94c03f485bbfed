-- Table and column comments cite docs/contract.md (the repository's own
-- contract) and name the source documents, in databases whose earlier
-- migrations set them with section numbers and working names (those files are
-- reworded too; store::migrations accepts their old checksums).
-- Comments only: no data or structure changes.
COMMENT ON COLUMN source_versions.normalized_markdown IS 'The normalized document (docs/contract.md#normalization); substring(normalized_markdown from char_start+1 for char_end-char_start) is a chunk''s own span.';
COMMENT ON TABLE chunks IS 'Chunk records (docs/contract.md#chunk-record) of every stored source version; chunks of different versions never mix.';
COMMENT ON COLUMN chunks.chunk_id IS 'Stable id (docs/contract.md#ids): identical to `chunk-worker chunk` on the same input.';
COMMENT ON TABLE chunking_failures IS 'One row per dead-lettered message (docs/contract.md#failures); the message itself is in the chunking.failed queue.';
COMMENT ON COLUMN chunking_failures.error_code IS 'Error code (docs/contract.md#error-codes), as in the x-error-code header.';
COMMENT ON TABLE document_links IS 'One row per link occurrence in the current version of a document, with the chunk holding it (docs/contract.md#links). A new current version replaces the rows of its document.';
COMMENT ON COLUMN chunks.granularity IS 'Granularity of the chunk: document, section, paragraph, window or table (the Chunking System specification).';
