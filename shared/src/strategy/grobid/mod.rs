//! The experimental `grobid` strategy (profile `grobid-v1`): papers as
//! GROBID's TEI XML. The input side is [`crate::tei`]: a `*.tei.xml` file
//! (CLI) or `markdown_uri` (worker) is read from TEI into Markdown, which is
//! the document every offset refers to. The strategy chunks that Markdown
//! by its sections (`structural`'s packer: formulas and tables whole, the
//! numbered headings as the heading path) and numbers the chunks' pages
//! from the `<!-- page N -->` comments the `pb` elements became, which
//! stay out of `embed_text`. A page break does not end a chunk: a paper's
//! sections run across pages. No GROBID server is needed: the TEI is the
//! input.

use std::sync::Arc;

use crate::strategy::chunker::{Chunker, Strategy};
use crate::strategy::layout_heuristic::{LayoutChunker, Mode};
use crate::strategy::params::{ParamError, Params};
use crate::strategy::structural::StructuralParams;

/// Papers read from GROBID's TEI.
#[derive(Debug, Clone, Copy, Default)]
pub struct Grobid;

impl Strategy for Grobid {
    fn name(&self) -> &'static str {
        "grobid"
    }

    fn version(&self) -> &'static str {
        "1.0.0"
    }

    fn summary(&self) -> &'static str {
        "GROBID TEI XML papers (*.tei.xml): sections from the TEI, formulas and tables whole, page numbers from <pb>"
    }

    fn experimental(&self) -> bool {
        true
    }

    fn param_keys(&self) -> &'static [&'static str] {
        &[
            "target_tokens",
            "soft_max_tokens",
            "hard_max_tokens",
            "min_tokens",
            "overlap",
        ]
    }

    fn builtin_profiles(&self) -> &'static [&'static str] {
        &[include_str!("profiles/grobid-v1.toml")]
    }

    fn configure(&self, params: &Params<'_>) -> Result<Arc<dyn Chunker>, ParamError> {
        let params = StructuralParams::parse(params)?;
        Ok(Arc::new(LayoutChunker::new(params, Mode::PageNumbers)))
    }
}
