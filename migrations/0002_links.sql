-- Link artifacts (docs/contract.md#links). Created empty here so the schema is
-- complete; the link-extraction issue fills them.

CREATE TABLE document_links (
    tenant_id             text        NOT NULL,
    document_id           text        NOT NULL,
    source_version_id     text        NOT NULL,
    ordinal               integer     NOT NULL,
    link_idx              integer     NOT NULL,
    chunk_id              text        NOT NULL,
    url                   text        NOT NULL,
    anchor_text           text        NOT NULL,
    link_type             text        NOT NULL CHECK (link_type IN ('confluence_page', 'confluence_space',
                              'confluence_attachment', 'confluence_tiny', 'jira_issue', 'anchor', 'external', 'relative')),
    target_space_key      text,
    target_page_id        text,
    target_title          text,
    target_document_id    text,
    resolved_at           timestamptz,
    created_at            timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (tenant_id, document_id, source_version_id, ordinal, link_idx),
    FOREIGN KEY (tenant_id, document_id, source_version_id, ordinal)
        REFERENCES chunks (tenant_id, document_id, source_version_id, ordinal)
);
CREATE INDEX document_links_unresolved_idx ON document_links (tenant_id, target_page_id)
    WHERE target_document_id IS NULL;
COMMENT ON TABLE document_links IS 'One row per link occurrence, with the chunk it appears in (docs/contract.md#links).';
COMMENT ON COLUMN document_links.link_idx IS 'Position of the link within its chunk, from 0.';
COMMENT ON COLUMN document_links.url IS 'The original URL as written in the markdown.';
COMMENT ON COLUMN document_links.target_document_id IS 'The same-tenant document the link resolves to; NULL until that document is known.';

CREATE TABLE cross_links (
    tenant_id              text        NOT NULL,
    source_document_id     text        NOT NULL,
    target_document_id     text        NOT NULL,
    link_count             integer     NOT NULL,
    first_seen_at          timestamptz NOT NULL DEFAULT now(),
    last_seen_at           timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (tenant_id, source_document_id, target_document_id)
);
COMMENT ON TABLE cross_links IS 'Resolved document -> document links of the current versions (docs/contract.md#links); never across tenants.';
