-- Write-path tuning (issue #3, measured in BENCHMARKS.md).

-- The relay claims due rows in id order. A partial index on id alone lets it
-- use a plain index scan, which marks the entries of rows published since
-- (dead to the index) as killed on the way, so the next claim skips them; the
-- old (next_attempt_at, id) index was read with a bitmap scan, which never
-- kills entries, and every claim walked all rows published since the last
-- vacuum (4 ms per claim after 15,000 events).
CREATE INDEX outbox_due_idx ON outbox (id) WHERE published_at IS NULL;
DROP INDEX outbox_pending_idx;

-- Every published event leaves a dead row version behind: vacuum the outbox
-- after a fixed number of them rather than a fraction of a growing table.
ALTER TABLE outbox SET (autovacuum_vacuum_scale_factor = 0, autovacuum_vacuum_threshold = 2000);

-- lz4 instead of pglz for the large text columns: pglz was the largest single
-- cost of the database on the write path. Existing values keep their
-- compression; new ones use lz4. Servers built without lz4 keep pglz.
DO $$
BEGIN
    ALTER TABLE source_versions ALTER COLUMN normalized_markdown SET COMPRESSION lz4;
    ALTER TABLE chunks ALTER COLUMN chunk_text SET COMPRESSION lz4;
    ALTER TABLE chunks ALTER COLUMN embed_text SET COMPRESSION lz4;
    ALTER TABLE outbox ALTER COLUMN payload SET COMPRESSION lz4;
EXCEPTION WHEN feature_not_supported THEN
    RAISE NOTICE 'lz4 is not available on this server; TOAST compression stays pglz';
END $$;

-- Nothing reads chunks by content hash across documents: the worker compares
-- hashes with the previous version through the primary key, and the README's
-- per-document questions are served by the key's (tenant_id, document_id)
-- prefix. The index cost one more insert per chunk.
DROP INDEX chunks_content_hash_idx;

-- Foreign-key checks choose their index when a backend first runs them and
-- keep that plan. On a young table (no statistics yet) an index that leads
-- with tenant_id alone looked as good as the key, and every check of a
-- document_links row then walked all of the tenant's chunks (4.7 million
-- index entries read for 380 checks in one benchmark). Indexes that share
-- only tenant_id with a foreign key give way: the analysts' chunk-type
-- question reads current_chunks of one tenant through the primary key, and
-- recent versions are found by time first.
DROP INDEX chunks_tenant_type_idx;
DROP INDEX source_versions_created_idx;
CREATE INDEX source_versions_created_idx ON source_versions (created_at DESC);

-- The oldest pending event is found through outbox_due_idx (lowest id); this
-- index only served that question and cost a write per insert and publish.
DROP INDEX outbox_created_pending_idx;
