-- chunk-worker storage (SPEC section 4). One transaction per source version.

CREATE TABLE documents (
    tenant_id                    text        NOT NULL,
    document_id                  text        NOT NULL,
    current_source_version_id    text,
    current_source_version_seq   bigint,
    current_occurred_at          timestamptz,
    created_at                   timestamptz NOT NULL DEFAULT now(),
    updated_at                   timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (tenant_id, document_id),
    -- A document id belongs to exactly one tenant: another tenant sending the
    -- same id is TENANT_MISMATCH, never a second document.
    CONSTRAINT documents_document_id_key UNIQUE (document_id)
);
COMMENT ON TABLE documents IS 'One row per document; points at its current (newest) source version.';
COMMENT ON COLUMN documents.tenant_id IS 'Owning tenant (^[a-z0-9-]{3,64}$).';
COMMENT ON COLUMN documents.document_id IS 'Opaque upstream document id, unique across tenants.';
COMMENT ON COLUMN documents.current_source_version_id IS 'The newest stored source version; an older one never replaces it.';
COMMENT ON COLUMN documents.current_source_version_seq IS 'source_version_seq of the current version, if upstream sent one.';
COMMENT ON COLUMN documents.current_occurred_at IS 'occurred_at of the current version, if upstream sent one.';

CREATE TABLE source_versions (
    tenant_id            text        NOT NULL,
    document_id          text        NOT NULL,
    source_version_id    text        NOT NULL,
    source_version_seq   bigint,
    occurred_at          timestamptz,
    source_type          text,
    causation_id         text        NOT NULL,
    correlation_id       text,
    content_sha256       text        NOT NULL,
    normalized_markdown  text        NOT NULL,
    metadata             jsonb       NOT NULL DEFAULT '{}'::jsonb,
    profile              text        NOT NULL,
    chunker_version      text        NOT NULL,
    tokenizer            text        NOT NULL,
    chunk_count          integer     NOT NULL,
    total_tokens         bigint      NOT NULL,
    status               text        NOT NULL CHECK (status IN ('current', 'superseded')),
    created_at           timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (tenant_id, document_id, source_version_id),
    FOREIGN KEY (tenant_id, document_id) REFERENCES documents (tenant_id, document_id)
);
COMMENT ON TABLE source_versions IS 'One row per chunked source version, with the normalized document all chunk offsets refer to.';
COMMENT ON COLUMN source_versions.content_sha256 IS 'sha256 (hex) of the markdown bytes as received.';
COMMENT ON COLUMN source_versions.normalized_markdown IS 'The normalized document (docs/contract.md#normalization); substring(normalized_markdown from char_start+1 for char_end-char_start) is a chunk''s own span.';
COMMENT ON COLUMN source_versions.metadata IS 'The input message metadata object.';
COMMENT ON COLUMN source_versions.status IS 'current: documents.current_source_version_id points here; superseded: a newer version is current.';
COMMENT ON COLUMN source_versions.causation_id IS 'event_id of the input message that produced this version.';

CREATE TABLE chunks (
    tenant_id             text        NOT NULL,
    document_id           text        NOT NULL,
    source_version_id     text        NOT NULL,
    ordinal               integer     NOT NULL CHECK (ordinal >= 0),
    chunk_id              text        NOT NULL,
    granularity           text        NOT NULL,
    chunk_type            text        NOT NULL,
    headings_path         text[]      NOT NULL,
    chunk_path            text        NOT NULL,
    chunk_text            text        NOT NULL,
    embed_text            text        NOT NULL,
    token_count           integer     NOT NULL,
    char_start            bigint      NOT NULL,
    char_end              bigint      NOT NULL,
    byte_start            bigint      NOT NULL,
    byte_end              bigint      NOT NULL,
    block_start_idx       integer     NOT NULL,
    block_end_idx         integer     NOT NULL,
    overlap_prefix_chars  integer     NOT NULL,
    closing_suffix_chars  integer     NOT NULL,
    content_hash          text        NOT NULL,
    profile               text        NOT NULL,
    chunker_version       text        NOT NULL,
    tokenizer             text        NOT NULL,
    source_url            text,
    file_path             text,
    created_at            timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (tenant_id, document_id, source_version_id, ordinal),
    FOREIGN KEY (tenant_id, document_id, source_version_id)
        REFERENCES source_versions (tenant_id, document_id, source_version_id)
);
CREATE INDEX chunks_chunk_id_idx ON chunks (chunk_id);
CREATE INDEX chunks_content_hash_idx ON chunks (tenant_id, document_id, content_hash);
COMMENT ON TABLE chunks IS 'Chunk records (docs/contract.md#chunk-record) of every stored source version; chunks of different versions never mix.';
COMMENT ON COLUMN chunks.chunk_id IS 'Stable id (docs/contract.md#ids): identical to `chunk-worker chunk` on the same input.';
COMMENT ON COLUMN chunks.ordinal IS 'Position in the version, 0..chunk_count-1, contiguous.';
COMMENT ON COLUMN chunks.chunk_text IS 'The Markdown to display: overlap prefix + own span + closing suffix.';
COMMENT ON COLUMN chunks.embed_text IS 'Breadcrumb-prefixed text for the embedder.';
COMMENT ON COLUMN chunks.char_start IS 'Start of the own span, in code points of source_versions.normalized_markdown.';
COMMENT ON COLUMN chunks.char_end IS 'End (exclusive) of the own span, in code points.';
COMMENT ON COLUMN chunks.content_hash IS 'sha256 of canonical text + headings path, without ordinal: equal across versions when the content is unchanged.';
COMMENT ON COLUMN chunks.overlap_prefix_chars IS 'Leading characters of chunk_text that are not from the own span.';
COMMENT ON COLUMN chunks.closing_suffix_chars IS 'Trailing characters of chunk_text added to close a split code fence.';

CREATE VIEW current_chunks AS
SELECT c.*
FROM chunks c
JOIN documents d
  ON d.tenant_id = c.tenant_id
 AND d.document_id = c.document_id
 AND d.current_source_version_id = c.source_version_id;
COMMENT ON VIEW current_chunks IS 'Chunks of every document''s current source version only.';

CREATE TABLE chunking_failures (
    id                  bigserial   PRIMARY KEY,
    failure_key         text        NOT NULL UNIQUE,
    error_code          text        NOT NULL,
    error_detail        text        NOT NULL,
    tenant_id           text,
    document_id         text,
    source_version_id   text,
    causation_id        text,
    correlation_id      text,
    attempts            integer     NOT NULL,
    body_sha256         text        NOT NULL,
    body_size           integer     NOT NULL,
    first_failed_at     timestamptz NOT NULL,
    failed_at           timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX chunking_failures_code_idx ON chunking_failures (error_code, failed_at);
CREATE INDEX chunking_failures_doc_idx ON chunking_failures (tenant_id, document_id);
COMMENT ON TABLE chunking_failures IS 'One row per dead-lettered message (docs/contract.md#failures); the message itself is in the chunking.failed queue.';
COMMENT ON COLUMN chunking_failures.failure_key IS 'sha256 of the body and error code: re-processing the same message never adds a second row.';
COMMENT ON COLUMN chunking_failures.error_code IS 'Error code (docs/contract.md#error-codes), as in the x-error-code header.';
COMMENT ON COLUMN chunking_failures.tenant_id IS 'NULL when the message was too broken to name a tenant.';

CREATE TABLE outbox (
    id               bigserial   PRIMARY KEY,
    event_id         uuid        NOT NULL UNIQUE,
    exchange         text        NOT NULL,
    routing_key      text        NOT NULL,
    payload          text        NOT NULL,
    headers          jsonb       NOT NULL DEFAULT '{}'::jsonb,
    created_at       timestamptz NOT NULL DEFAULT now(),
    attempts         integer     NOT NULL DEFAULT 0,
    next_attempt_at  timestamptz NOT NULL DEFAULT now(),
    last_error       text,
    published_at     timestamptz
);
CREATE INDEX outbox_pending_idx ON outbox (next_attempt_at, id) WHERE published_at IS NULL;
COMMENT ON TABLE outbox IS 'Transactional outbox: events written with the data they announce, published by the relay with publisher confirms.';
COMMENT ON COLUMN outbox.exchange IS 'Logical exchange name (without the deployment topology prefix).';
COMMENT ON COLUMN outbox.payload IS 'The exact JSON bytes to publish; re-publishes are byte-identical duplicates.';
COMMENT ON COLUMN outbox.headers IS 'AMQP headers of the event (W3C traceparent/tracestate continuing the input''s trace).';
COMMENT ON COLUMN outbox.published_at IS 'Set once the broker confirmed the publish; NULL = pending.';
