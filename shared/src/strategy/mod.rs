//! Chunking strategies: the [`Strategy`] trait (a named, versioned factory
//! that reads a profile's `[params]`), the configured [`Chunker`] it returns,
//! and the [`Registry`] of strategies by name.
//!
//! Each strategy lives in its own folder and ships its built-in profiles
//! there (`<strategy>/profiles/*.toml`). Adding one touches that folder and
//! one line of `builtin_strategies!` below; see ARCHITECTURE.md "Adding a
//! strategy".
//!
//! What strategies share (sentence spans, exact token ranges and windows,
//! table and code splitting, overlap copied from the preceding text, record
//! building, validation) is the toolkit in [`crate::chunk`].

pub mod params;

pub mod chunker;
pub mod limits;
pub mod pystr;

use std::sync::Arc;

pub use chunker::{ChunkInput, Chunker, Framework, Strategy};
pub use limits::{Limits, PrefixRule, Rules, NO_TOKEN_LIMIT};
pub use params::{ParamError, Params};

/// Declares the built-in strategies: for each `module::Type`, the module
/// (`strategy/<module>/`), a re-export of the type, and its registration in
/// [`Registry::builtin`], in this order. Adding a strategy is its folder and
/// one line here.
macro_rules! builtin_strategies {
    ($($module:ident :: $ty:ident),* $(,)?) => {
        $(
            pub mod $module;
            pub use $module::$ty;
        )*

        fn register_builtin(r: &mut Registry) {
            $(r.register($ty);)*
        }
    };
}

builtin_strategies! {
    structural::Structural,
    recursive::Recursive,
    token::Token,
    markdown_headers::MarkdownHeaders,
    semantic::Semantic,
    semantic_cluster::SemanticCluster,
    texttiling::TextTiling,
    c99::C99,
    bayesseg::BayesSeg,
    lda_topic::LdaTopic,
    graph_partition::GraphPartition,
    discourse_segmenter::DiscourseSegmenter,
    graphrag::GraphRag,
    sliding_window::SlidingWindow,
    section_aware::SectionAware,
    clinical_role::ClinicalRole,
    table::Table,
    document::Document,
    layout_heuristic::LayoutHeuristic,
    layout_aware::LayoutAware,
    grobid::Grobid,
    llm_chaptering::LlmChaptering,
    langchain_character::LangchainCharacter,
    langchain_token::LangchainToken,
    langchain_markdown::LangchainMarkdown,
    haystack_split::HaystackSplit,
    langchain_recursive::LangchainRecursive,
    llama_sentence::LlamaSentence,
    llama_hierarchical::LlamaHierarchical,
    llama_semantic::LlamaSemantic,
    unstructured_by_title::UnstructuredByTitle,
}

/// Strategies by name, in registration order.
#[derive(Debug, Clone, Default)]
pub struct Registry {
    strategies: Vec<Arc<dyn Strategy>>,
}

impl Registry {
    /// No strategies: for programs that register only their own.
    pub fn empty() -> Self {
        Self::default()
    }

    /// The built-in strategies (`builtin_strategies!` above), in order.
    pub fn builtin() -> Self {
        let mut r = Self::empty();
        register_builtin(&mut r);
        r
    }

    /// Adds a strategy, replacing one of the same name.
    pub fn register(&mut self, strategy: impl Strategy + 'static) {
        let strategy: Arc<dyn Strategy> = Arc::new(strategy);
        match self
            .strategies
            .iter_mut()
            .find(|s| s.name() == strategy.name())
        {
            Some(slot) => *slot = strategy,
            None => self.strategies.push(strategy),
        }
    }

    /// The strategy called `name`.
    pub fn get(&self, name: &str) -> Option<&dyn Strategy> {
        self.strategies
            .iter()
            .find(|s| s.name() == name)
            .map(|s| s.as_ref())
    }

    /// Every registered name, in registration order.
    pub fn names(&self) -> Vec<String> {
        self.strategies
            .iter()
            .map(|s| s.name().to_owned())
            .collect()
    }

    /// Every strategy, in registration order.
    pub fn iter(&self) -> impl Iterator<Item = &dyn Strategy> {
        self.strategies.iter().map(|s| s.as_ref())
    }
}
