-- Operations (issue #5): SQL inspection (comments, views, indexes, a
-- read-only analyst role) and the record of dead-letter replays.

-- ---------------------------------------------------------------------------
-- Dead-letter replays: one row per `chunk-worker dlq replay` run (not dry runs).
CREATE TABLE dlq_replays (
    id            uuid        PRIMARY KEY,
    started_at    timestamptz NOT NULL DEFAULT now(),
    finished_at   timestamptz,
    operator      text        NOT NULL,
    filters       jsonb       NOT NULL DEFAULT '{}'::jsonb,
    matched       integer     NOT NULL DEFAULT 0,
    replayed      integer     NOT NULL DEFAULT 0,
    skipped       integer     NOT NULL DEFAULT 0,
    failed        integer     NOT NULL DEFAULT 0
);
CREATE INDEX dlq_replays_started_idx ON dlq_replays (started_at DESC);
COMMENT ON TABLE dlq_replays IS 'One row per `chunk-worker dlq replay` run: who replayed which dead-lettered messages, when, and with what result.';
COMMENT ON COLUMN dlq_replays.id IS 'Replay id; also sent as the x-replay-id header of every replayed message.';
COMMENT ON COLUMN dlq_replays.started_at IS 'When the replay started.';
COMMENT ON COLUMN dlq_replays.finished_at IS 'When the replay finished; NULL = still running, or killed.';
COMMENT ON COLUMN dlq_replays.operator IS 'Who ran it: --operator, else $USER.';
COMMENT ON COLUMN dlq_replays.filters IS 'The filters given: error_code, tenant, document, limit, rate.';
COMMENT ON COLUMN dlq_replays.matched IS 'Dead-lettered messages that matched the filters (within --limit).';
COMMENT ON COLUMN dlq_replays.replayed IS 'Messages republished (confirmed) to the input exchange and removed from the dead-letter queue.';
COMMENT ON COLUMN dlq_replays.skipped IS 'Messages looked at that did not match the filters (left in the dead-letter queue).';
COMMENT ON COLUMN dlq_replays.failed IS 'Matching messages that could not be republished (left in the dead-letter queue).';

-- ---------------------------------------------------------------------------
-- Comments on the columns 0001 left without one.
COMMENT ON COLUMN documents.created_at IS 'When the document was first stored.';
COMMENT ON COLUMN documents.updated_at IS 'When the current version last changed.';

COMMENT ON COLUMN source_versions.tenant_id IS 'Owning tenant.';
COMMENT ON COLUMN source_versions.document_id IS 'The document this version belongs to.';
COMMENT ON COLUMN source_versions.source_version_id IS 'Upstream version id (opaque, 1-128 characters).';
COMMENT ON COLUMN source_versions.source_version_seq IS 'Upstream ordering number, if sent: a lower one never replaces a higher current version.';
COMMENT ON COLUMN source_versions.occurred_at IS 'occurred_at of the input message.';
COMMENT ON COLUMN source_versions.source_type IS 'Upstream source type (confluence, file, ...).';
COMMENT ON COLUMN source_versions.correlation_id IS 'correlation_id of the input message, carried into logs and events.';
COMMENT ON COLUMN source_versions.profile IS 'Chunking profile used.';
COMMENT ON COLUMN source_versions.chunker_version IS 'Version of the chunking engine that produced the chunks.';
COMMENT ON COLUMN source_versions.tokenizer IS 'Tokenizer that counted the tokens (e.g. cl100k_base).';
COMMENT ON COLUMN source_versions.chunk_count IS 'Number of chunks of this version.';
COMMENT ON COLUMN source_versions.total_tokens IS 'Sum of token_count over the chunks of this version.';
COMMENT ON COLUMN source_versions.created_at IS 'When this version was chunked and stored.';

COMMENT ON COLUMN chunks.tenant_id IS 'Owning tenant.';
COMMENT ON COLUMN chunks.document_id IS 'The document.';
COMMENT ON COLUMN chunks.source_version_id IS 'The source version the chunk belongs to.';
COMMENT ON COLUMN chunks.granularity IS 'Granularity of the chunk (e.g. section, paragraph), from the profile.';
COMMENT ON COLUMN chunks.chunk_type IS 'Dominant block type (text, code, table, list, ...).';
COMMENT ON COLUMN chunks.headings_path IS 'Headings above the chunk, outermost first.';
COMMENT ON COLUMN chunks.chunk_path IS 'Breadcrumb: title and headings joined with " > ".';
COMMENT ON COLUMN chunks.token_count IS 'Exact BPE token count of chunk_text with the profile''s tokenizer.';
COMMENT ON COLUMN chunks.byte_start IS 'Start of the own span, in UTF-8 bytes of the normalized document.';
COMMENT ON COLUMN chunks.byte_end IS 'End (exclusive) of the own span, in UTF-8 bytes.';
COMMENT ON COLUMN chunks.block_start_idx IS 'Index of the first Markdown block of the chunk.';
COMMENT ON COLUMN chunks.block_end_idx IS 'Index of the last Markdown block of the chunk (inclusive).';
COMMENT ON COLUMN chunks.profile IS 'Chunking profile used.';
COMMENT ON COLUMN chunks.chunker_version IS 'Version of the chunking engine.';
COMMENT ON COLUMN chunks.tokenizer IS 'Tokenizer of token_count.';
COMMENT ON COLUMN chunks.source_url IS 'URL of the source page, from the message metadata.';
COMMENT ON COLUMN chunks.file_path IS 'Path of the source file, when it came from one.';
COMMENT ON COLUMN chunks.created_at IS 'When the chunk was stored.';

COMMENT ON COLUMN chunking_failures.id IS 'Row id.';
COMMENT ON COLUMN chunking_failures.error_detail IS 'What was wrong and where (never document text).';
COMMENT ON COLUMN chunking_failures.document_id IS 'Document, when the message named one.';
COMMENT ON COLUMN chunking_failures.source_version_id IS 'Source version, when the message named one.';
COMMENT ON COLUMN chunking_failures.causation_id IS 'event_id of the failed message (or its AMQP message id).';
COMMENT ON COLUMN chunking_failures.correlation_id IS 'correlation_id of the failed message.';
COMMENT ON COLUMN chunking_failures.attempts IS 'Deliveries of the message when it failed for good.';
COMMENT ON COLUMN chunking_failures.body_sha256 IS 'sha256 (hex) of the message body; the body itself is in the dead-letter queue.';
COMMENT ON COLUMN chunking_failures.body_size IS 'Size of the message body in bytes.';
COMMENT ON COLUMN chunking_failures.first_failed_at IS 'When the message first failed (kept across replays).';
COMMENT ON COLUMN chunking_failures.failed_at IS 'When the message last failed.';

COMMENT ON COLUMN outbox.id IS 'Row id: events are published in id order.';
COMMENT ON COLUMN outbox.event_id IS 'event_id of the event (downstream dedupes on it).';
COMMENT ON COLUMN outbox.routing_key IS 'Routing key: chunking.completed or chunking.failed.';
COMMENT ON COLUMN outbox.created_at IS 'When the event was written (with the data it announces).';
COMMENT ON COLUMN outbox.attempts IS 'Publish attempts so far.';
COMMENT ON COLUMN outbox.next_attempt_at IS 'Earliest time of the next publish attempt (backoff).';
COMMENT ON COLUMN outbox.last_error IS 'Why the last publish attempt failed, if it did.';

-- The link tables belong to another issue and may change shape: comment only
-- the columns that exist, and never overwrite a comment already there.
DO $$
DECLARE
    r record;
BEGIN
    FOR r IN
        SELECT * FROM (VALUES
            ('document_links', 'tenant_id', 'Owning tenant.'),
            ('document_links', 'document_id', 'The document the link appears in.'),
            ('document_links', 'source_version_id', 'The source version the link appears in.'),
            ('document_links', 'ordinal', 'Ordinal of the chunk the link appears in.'),
            ('document_links', 'chunk_id', 'chunk_id of the chunk the link appears in.'),
            ('document_links', 'anchor_text', 'The link text.'),
            ('document_links', 'link_type', 'Kind of link (confluence_page, jira_issue, external, ...).'),
            ('document_links', 'target_space_key', 'Confluence space key of the target, when known.'),
            ('document_links', 'target_page_id', 'Confluence page id of the target, when known.'),
            ('document_links', 'target_title', 'Title of the target page, when known.'),
            ('document_links', 'resolved_at', 'When target_document_id was resolved.'),
            ('document_links', 'created_at', 'When the link was stored.'),
            ('cross_links', 'tenant_id', 'Owning tenant (both documents belong to it).'),
            ('cross_links', 'source_document_id', 'The linking document.'),
            ('cross_links', 'target_document_id', 'The linked document.'),
            ('cross_links', 'link_count', 'Links from source to target in the current version.'),
            ('cross_links', 'first_seen_at', 'When the link was first seen.'),
            ('cross_links', 'last_seen_at', 'When the link was last seen.')
        ) AS t(tbl, col, descr)
    LOOP
        IF EXISTS (
            SELECT 1 FROM information_schema.columns c
            WHERE c.table_schema = current_schema() AND c.table_name = r.tbl AND c.column_name = r.col
        ) AND col_description(format('%I', r.tbl)::regclass,
              (SELECT a.attnum FROM pg_attribute a
               WHERE a.attrelid = format('%I', r.tbl)::regclass AND a.attname = r.col)::int) IS NULL
        THEN
            EXECUTE format('COMMENT ON COLUMN %I.%I IS %L', r.tbl, r.col, r.descr);
        END IF;
    END LOOP;
END
$$;

-- ---------------------------------------------------------------------------
-- Indexes for the common questions.
CREATE INDEX source_versions_created_idx ON source_versions (tenant_id, created_at DESC);
CREATE INDEX chunking_failures_failed_at_idx ON chunking_failures (failed_at DESC);
CREATE INDEX chunking_failures_tenant_code_idx ON chunking_failures (tenant_id, error_code, failed_at DESC);
CREATE INDEX chunks_tenant_type_idx ON chunks (tenant_id, chunk_type);
CREATE INDEX outbox_created_pending_idx ON outbox (created_at) WHERE published_at IS NULL;

-- ---------------------------------------------------------------------------
-- Views.
CREATE VIEW document_overview AS
SELECT
    d.tenant_id,
    d.document_id,
    d.current_source_version_id,
    sv.profile,
    sv.chunk_count,
    sv.total_tokens,
    cs.min_tokens,
    cs.avg_tokens,
    cs.max_tokens,
    (SELECT count(*) FROM source_versions v
      WHERE v.tenant_id = d.tenant_id AND v.document_id = d.document_id) AS version_count,
    sv.created_at AS last_chunked_at,
    lf.error_code AS last_failure_code,
    lf.failed_at AS last_failed_at
FROM documents d
LEFT JOIN source_versions sv
  ON sv.tenant_id = d.tenant_id
 AND sv.document_id = d.document_id
 AND sv.source_version_id = d.current_source_version_id
LEFT JOIN LATERAL (
    SELECT min(c.token_count) AS min_tokens,
           round(avg(c.token_count), 1) AS avg_tokens,
           max(c.token_count) AS max_tokens
    FROM chunks c
    WHERE c.tenant_id = d.tenant_id
      AND c.document_id = d.document_id
      AND c.source_version_id = d.current_source_version_id
) cs ON true
LEFT JOIN LATERAL (
    SELECT f.error_code, f.failed_at
    FROM chunking_failures f
    WHERE f.tenant_id = d.tenant_id AND f.document_id = d.document_id
    ORDER BY f.failed_at DESC
    LIMIT 1
) lf ON true;
COMMENT ON VIEW document_overview IS 'Per document: current version, chunk count, token stats of the current chunks, versions stored, last chunked, last failure.';
COMMENT ON COLUMN document_overview.chunk_count IS 'Chunks of the current version.';
COMMENT ON COLUMN document_overview.total_tokens IS 'Tokens of the current version.';
COMMENT ON COLUMN document_overview.min_tokens IS 'Smallest chunk of the current version, in tokens.';
COMMENT ON COLUMN document_overview.avg_tokens IS 'Average chunk of the current version, in tokens.';
COMMENT ON COLUMN document_overview.max_tokens IS 'Largest chunk of the current version, in tokens.';
COMMENT ON COLUMN document_overview.version_count IS 'Source versions stored for the document.';
COMMENT ON COLUMN document_overview.last_chunked_at IS 'When the current version was stored.';
COMMENT ON COLUMN document_overview.last_failure_code IS 'Error code of the most recent failure of the document, if any.';
COMMENT ON COLUMN document_overview.last_failed_at IS 'When the document last failed, if ever.';

CREATE VIEW failure_summary AS
SELECT
    tenant_id,
    error_code,
    count(*) AS failures,
    count(DISTINCT document_id) AS documents,
    min(first_failed_at) AS first_failed_at,
    max(failed_at) AS last_failed_at
FROM chunking_failures
GROUP BY tenant_id, error_code;
COMMENT ON VIEW failure_summary IS 'Dead-lettered failures per tenant and error code, with the documents affected and the time range.';
COMMENT ON COLUMN failure_summary.tenant_id IS 'Tenant; NULL for messages too broken to name one.';
COMMENT ON COLUMN failure_summary.failures IS 'Distinct failed messages (chunking_failures rows).';
COMMENT ON COLUMN failure_summary.documents IS 'Distinct documents among them.';

CREATE VIEW outbox_backlog AS
SELECT
    routing_key,
    count(*) AS pending,
    min(created_at) AS oldest_created_at,
    coalesce(extract(epoch FROM now() - min(created_at)), 0)::double precision AS oldest_age_seconds,
    max(attempts) AS max_attempts
FROM outbox
WHERE published_at IS NULL
GROUP BY routing_key;
COMMENT ON VIEW outbox_backlog IS 'Events written but not yet confirmed by the broker, per routing key, with the age of the oldest.';

-- ---------------------------------------------------------------------------
-- A read-only role for analysts. Roles are cluster-wide: create it once,
-- grant per database. Grant it to a login role: GRANT chunk_worker_analyst TO alice;
DO $$
BEGIN
    IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'chunk_worker_analyst') THEN
        BEGIN
            CREATE ROLE chunk_worker_analyst NOLOGIN;
        EXCEPTION
            -- Another database's migration created it concurrently.
            WHEN duplicate_object OR unique_violation THEN NULL;
        END;
    END IF;
END
$$;
GRANT USAGE ON SCHEMA public TO chunk_worker_analyst;
GRANT SELECT ON ALL TABLES IN SCHEMA public TO chunk_worker_analyst;
ALTER DEFAULT PRIVILEGES IN SCHEMA public GRANT SELECT ON TABLES TO chunk_worker_analyst;
