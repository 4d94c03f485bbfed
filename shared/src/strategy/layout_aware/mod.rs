//! The experimental `layout_aware` strategy (profile `layout_aware-v1`):
//! what "layout-aware chunking" can mean for normalized Markdown, where the
//! page geometry is gone: the layout annotations a converter leaves in the
//! text (page header, footer, number and break comments, page separators,
//! form feeds) decide page boundaries and furniture, and each page starts a
//! chunk. The analysis is `layout_heuristic`'s annotated mode
//! (`layout_heuristic/annotated.rs`); packing is `structural`'s.

use std::sync::Arc;

use crate::strategy::chunker::{Chunker, Strategy};
use crate::strategy::layout_heuristic::{LayoutChunker, Mode};
use crate::strategy::params::{ParamError, Params};
use crate::strategy::structural::StructuralParams;

/// Pages and furniture from a converter's layout annotations.
#[derive(Debug, Clone, Copy, Default)]
pub struct LayoutAware;

impl Strategy for LayoutAware {
    fn name(&self) -> &'static str {
        "layout_aware"
    }

    fn version(&self) -> &'static str {
        "1.0.0"
    }

    fn summary(&self) -> &'static str {
        "converter layout annotations (page header/footer/number/break comments, page separators): a chunk per page at most, annotations out of embed text"
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
        &[include_str!("profiles/layout_aware-v1.toml")]
    }

    fn configure(&self, params: &Params<'_>) -> Result<Arc<dyn Chunker>, ParamError> {
        let params = StructuralParams::parse(params)?;
        Ok(Arc::new(LayoutChunker::new(params, Mode::Annotations)))
    }
}
