//! The queries of docs/links.md, verbatim, and
//! the rows they answer.

/// docs/links.md: which documents link to X.
pub(crate) const README_INCOMING: &str = "\
SELECT c.source_document_id, c.link_count, d.title
FROM cross_links c
JOIN documents d ON d.tenant_id = c.tenant_id AND d.document_id = c.source_document_id
WHERE c.tenant_id = 'acme-prod' AND c.target_document_id = 'confluence:OPS:200'
ORDER BY c.link_count DESC, c.source_document_id;";

/// docs/links.md: what X links to (every link occurrence, resolved or not).
pub(crate) const README_OUTGOING: &str = "\
SELECT l.link_ordinal, l.link_type, l.url, l.target_document_id, l.chunk_id
FROM document_links l
WHERE l.tenant_id = 'acme-prod' AND l.source_document_id = 'confluence:ENG:100'
ORDER BY l.link_ordinal;";

/// docs/links.md: broken links (Confluence targets never ingested).
pub(crate) const README_BROKEN: &str = "\
SELECT l.source_document_id, l.link_ordinal, l.link_type, l.target_space_key,
       l.target_page_id, l.target_title, l.url
FROM document_links l
WHERE l.tenant_id = 'acme-prod' AND l.target_document_id IS NULL
  AND l.link_type IN ('confluence_page', 'confluence_tiny', 'confluence_attachment')
ORDER BY l.source_document_id, l.link_ordinal;";

/// docs/links.md: most-linked pages per space (top 10 by incoming link occurrences).
pub(crate) const README_MOST_LINKED: &str = "\
SELECT space_key, document_id, title, linking_documents, incoming_links
FROM (
  SELECT d.space_key, d.document_id, d.title,
         count(*) AS linking_documents,
         sum(c.link_count) AS incoming_links,
         rank() OVER (PARTITION BY d.space_key ORDER BY sum(c.link_count) DESC) AS rank
  FROM cross_links c
  JOIN documents d ON d.tenant_id = c.tenant_id AND d.document_id = c.target_document_id
  WHERE c.tenant_id = 'acme-prod'
  GROUP BY d.space_key, d.document_id, d.title
) ranked
WHERE rank <= 10
ORDER BY space_key, incoming_links DESC, document_id;";

/// A row of [`README_BROKEN`].
pub(crate) type BrokenRow = (
    String,
    i32,
    String,
    Option<String>,
    Option<String>,
    Option<String>,
    String,
);

/// A row of [`README_MOST_LINKED`].
pub(crate) type MostLinkedRow = (Option<String>, String, Option<String>, i64, i64);
