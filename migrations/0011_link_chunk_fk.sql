-- Issue 18: the per-row foreign-key check document_links -> chunks.
--
-- Every link row is inserted by the statement or transaction that inserted
-- its chunk rows just before (store_first_version, store_version_with_links),
-- from the same chunks, so the check never failed. It ran once per link
-- (five per median document): 4% of the write path's statement time in
-- pg_stat_statements (BENCHMARKS.md, issue 18, 2026-12-02). Nothing deletes
-- chunks. As for chunks -> source_versions (0010), the invariant stays
-- auditable: the view below lists link rows without their chunk and must
-- stay empty.
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

CREATE VIEW orphan_links WITH (security_invoker = true) AS
SELECT l.tenant_id, l.source_document_id, l.source_version_id, l.link_ordinal,
       l.chunk_granularity, l.chunk_ordinal, l.chunk_id
FROM document_links l
WHERE NOT EXISTS (
    SELECT 1 FROM chunks c
    WHERE c.tenant_id = l.tenant_id
      AND c.document_id = l.source_document_id
      AND c.source_version_id = l.source_version_id
      AND c.granularity = l.chunk_granularity
      AND c.ordinal = l.chunk_ordinal
);
COMMENT ON VIEW orphan_links IS 'Link rows whose chunk is missing: an audit that must stay empty (the per-row foreign key was dropped for write throughput, issue 18).';
GRANT SELECT ON orphan_links TO chunk_worker_analyst;
