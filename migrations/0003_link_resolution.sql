-- Confluence link artifacts and their resolution (docs/contract.md#links).
--
-- 0002 created `document_links` / `cross_links` empty and nothing ever wrote
-- to them, so they are recreated here in their final shape (one row per link
-- occurrence of a document's CURRENT version, keyed by the document-wide
-- link ordinal) instead of being altered column by column.
--
-- Resolution: a link resolves to a document of the SAME tenant, by page id
-- (page, tiny link, attachment's owning page) or else by space key + title
-- (case-insensitive). The keys of a document come from the message metadata
-- of its current version (page_id, space_key, title), stored on `documents`.
--
-- Concurrency: every write to these two tables happens while holding the
-- tenant's link lock (pg_advisory_xact_lock(7400, hashtext(tenant_id))),
-- always taken AFTER the writer's own `documents` row lock and never followed
-- by another row lock on `documents`, so link writers of one tenant serialize
-- without deadlocks.

ALTER TABLE documents
    ADD COLUMN page_id   text,
    ADD COLUMN space_key text,
    ADD COLUMN title     text;
COMMENT ON COLUMN documents.page_id IS 'Confluence page id of the current version (metadata.page_id, else parsed from metadata.source_url); links resolve to this document by it.';
COMMENT ON COLUMN documents.space_key IS 'Confluence space key of the current version (metadata.space_key, else parsed from metadata.source_url).';
COMMENT ON COLUMN documents.title IS 'Title of the current version (metadata.title); with space_key, resolves /display/KEY/Title links (case-insensitive).';
CREATE INDEX documents_page_id_idx ON documents (tenant_id, page_id) WHERE page_id IS NOT NULL;
CREATE INDEX documents_space_title_idx ON documents (tenant_id, upper(space_key), lower(title))
    WHERE space_key IS NOT NULL AND title IS NOT NULL;

DROP TABLE document_links;
DROP TABLE cross_links;

CREATE TABLE document_links (
    tenant_id             text        NOT NULL,
    source_document_id    text        NOT NULL,
    source_version_id     text        NOT NULL,
    link_ordinal          integer     NOT NULL CHECK (link_ordinal >= 0),
    chunk_ordinal         integer     NOT NULL,
    chunk_id              text        NOT NULL,
    url                   text        NOT NULL,
    resolved_url          text,
    anchor_text           text        NOT NULL,
    link_type             text        NOT NULL CHECK (link_type IN ('confluence_page', 'confluence_space',
                              'confluence_attachment', 'confluence_tiny', 'jira_issue', 'anchor', 'external', 'relative')),
    is_image              boolean     NOT NULL DEFAULT false,
    target_space_key      text,
    target_page_id        text,
    target_title          text,
    target_anchor         text,
    target_issue_key      text,
    target_document_id    text,
    resolved_at           timestamptz,
    char_start            bigint      NOT NULL,
    byte_start            bigint      NOT NULL,
    byte_end              bigint      NOT NULL,
    created_at            timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (tenant_id, source_document_id, link_ordinal),
    FOREIGN KEY (tenant_id, source_document_id, source_version_id, chunk_ordinal)
        REFERENCES chunks (tenant_id, document_id, source_version_id, ordinal),
    CHECK (target_document_id IS NULL OR link_type IN ('confluence_page', 'confluence_tiny', 'confluence_attachment'))
);
-- Outgoing links of a document: the primary key. Incoming links of a document:
CREATE INDEX document_links_target_idx ON document_links (tenant_id, target_document_id)
    WHERE target_document_id IS NOT NULL;
-- Unresolved Confluence targets, looked up when a document with that page id
-- or space + title arrives (and for the "broken links" report).
CREATE INDEX document_links_unresolved_page_idx ON document_links (tenant_id, target_page_id)
    WHERE target_document_id IS NULL AND target_page_id IS NOT NULL;
CREATE INDEX document_links_unresolved_title_idx ON document_links (tenant_id, upper(target_space_key), lower(target_title))
    WHERE target_document_id IS NULL AND target_page_id IS NULL AND target_title IS NOT NULL;
COMMENT ON TABLE document_links IS 'One row per link occurrence in the current version of a document, with the chunk holding it (docs/contract.md#links). A new current version replaces the rows of its document.';
COMMENT ON COLUMN document_links.tenant_id IS 'Tenant of the source document; targets resolve only within it.';
COMMENT ON COLUMN document_links.source_document_id IS 'The document containing the link.';
COMMENT ON COLUMN document_links.source_version_id IS 'The (current) source version the link was extracted from.';
COMMENT ON COLUMN document_links.link_ordinal IS 'Position among the document''s links, 0..n-1, in document order.';
COMMENT ON COLUMN document_links.chunk_ordinal IS 'Ordinal of the chunk whose own span holds the link.';
COMMENT ON COLUMN document_links.chunk_id IS 'chunk_id of that chunk (chunks.chunk_id).';
COMMENT ON COLUMN document_links.url IS 'The URL exactly as written in the markdown.';
COMMENT ON COLUMN document_links.resolved_url IS 'The absolute URL after resolving against the document''s source_url (NULL for anchors and unresolvable relative links).';
COMMENT ON COLUMN document_links.anchor_text IS 'Link text (or image alt text), plain, whitespace collapsed.';
COMMENT ON COLUMN document_links.link_type IS 'confluence_page | confluence_space | confluence_attachment | confluence_tiny | jira_issue | anchor | relative | external.';
COMMENT ON COLUMN document_links.is_image IS 'The link is an image (attachments and relative images only).';
COMMENT ON COLUMN document_links.target_space_key IS 'Confluence space key parsed from the URL.';
COMMENT ON COLUMN document_links.target_page_id IS 'Confluence page id parsed from the URL (decoded for tiny links; the owning page for attachments).';
COMMENT ON COLUMN document_links.target_title IS 'Page title parsed from the URL (decoded), or the attachment''s file name.';
COMMENT ON COLUMN document_links.target_anchor IS 'URL fragment (#section), decoded.';
COMMENT ON COLUMN document_links.target_issue_key IS 'Jira issue key (jira_issue links).';
COMMENT ON COLUMN document_links.target_document_id IS 'The same-tenant document the link resolves to; NULL until that document is known (page/tiny/attachment links only).';
COMMENT ON COLUMN document_links.resolved_at IS 'When target_document_id was set.';
COMMENT ON COLUMN document_links.char_start IS 'Code point offset of the link in source_versions.normalized_markdown.';
COMMENT ON COLUMN document_links.byte_start IS 'Byte offset of the link in the normalized document.';
COMMENT ON COLUMN document_links.byte_end IS 'Byte end (exclusive) of the link in the normalized document.';

CREATE TABLE cross_links (
    tenant_id              text        NOT NULL,
    source_document_id     text        NOT NULL,
    target_document_id     text        NOT NULL,
    link_count             integer     NOT NULL CHECK (link_count > 0),
    first_seen_at          timestamptz NOT NULL DEFAULT now(),
    last_seen_at           timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (tenant_id, source_document_id, target_document_id),
    CHECK (source_document_id <> target_document_id)
);
CREATE INDEX cross_links_target_idx ON cross_links (tenant_id, target_document_id);
COMMENT ON TABLE cross_links IS 'Resolved document -> document edges of the current versions, aggregated from document_links (self-links excluded); never across tenants.';
COMMENT ON COLUMN cross_links.tenant_id IS 'Tenant of both documents.';
COMMENT ON COLUMN cross_links.source_document_id IS 'The linking document (outgoing: primary key prefix).';
COMMENT ON COLUMN cross_links.target_document_id IS 'The linked document (incoming: cross_links_target_idx).';
COMMENT ON COLUMN cross_links.link_count IS 'Number of resolved link occurrences from source to target in the source''s current version.';
COMMENT ON COLUMN cross_links.first_seen_at IS 'When the edge first appeared.';
COMMENT ON COLUMN cross_links.last_seen_at IS 'When link_count last changed.';
