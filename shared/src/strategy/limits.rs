//! The sizes a configured chunker keeps ([`Limits`]) and the validation
//! rules it declares ([`Rules`]).

/// Sizes a configured chunker keeps, for listings, metrics and validation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// What chunks aim at.
    pub target_tokens: usize,
    /// No chunk is ever larger (tokens of `chunk_text`).
    pub hard_max_tokens: usize,
    /// The smallest size the strategy aims to keep (0: none).
    pub min_tokens: usize,
    /// Overlap in tokens (0: none; an upper bound where it is in sentences).
    pub overlap_tokens: usize,
}

/// What a chunk's prefix may be.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PrefixRule {
    /// docs/contract.md#chunk-record by chunk type: lists and quotes none, prose only the text
    /// right before the own span, a table its header rows, code a re-opened
    /// fence; a suffix only closes a fence.
    Typed,
    /// Only overlap: the document text right before the own span; no suffix.
    PrecedingText,
    /// Overlap as in `PrecedingText`, except that a table chunk may instead
    /// carry its header rows (a table split by rows); no suffix.
    PrecedingOrTableHeader,
}

/// The validation rules a strategy declares on top of the universal ones
/// (docs/contract.md#validation and #strategies). The universal ones always apply: hard max, no empty
/// chunk, contiguous ordinals, `chunk_text == prefix + own span + suffix`,
/// own spans increasing, nothing lost outside front matter and thematic
/// breaks, ids recomputed equal.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Rules {
    /// What prefixes and suffixes may hold.
    pub prefixes: PrefixRule,
    /// No chunk opens a code fence it does not close.
    pub fences_closed: bool,
    /// A table chunk starts with its header row.
    pub table_header: bool,
    /// A chunk under a heading has a headings path.
    pub headings_path: bool,
    /// The Russian enterprise specification's minimum: below-min chunks only where a boundary forces them.
    pub min_tokens: Option<usize>,
    /// Heading lines may be left out of every own span (`strip_headers`):
    /// they travel as metadata instead.
    pub headings_as_metadata: bool,
    /// `chunk_text` is prefix + own span + suffix. `false`: the strategy
    /// renders its own span as a framework does (LangChain's Markdown
    /// header splitter strips lines and joins blocks with `"  \n"`), and
    /// the chunk text's non-whitespace characters are the span's, in order,
    /// some (invisible characters, header lines) left out.
    pub verbatim_text: bool,
}

impl Rules {
    /// Valid Markdown in every chunk, by block type (strategies that keep
    /// blocks whole and split them as the structural strategy does): typed
    /// prefixes, fences closed, tables from their header row.
    pub const TYPED: Rules = Rules {
        prefixes: PrefixRule::Typed,
        fences_closed: true,
        table_header: true,
        headings_path: true,
        min_tokens: None,
        headings_as_metadata: false,
        verbatim_text: true,
    };

    /// Only the universal rules, overlap as the only prefix.
    pub const UNIVERSAL: Rules = Rules {
        prefixes: PrefixRule::PrecedingText,
        fences_closed: false,
        table_header: false,
        headings_path: true,
        min_tokens: None,
        headings_as_metadata: false,
        verbatim_text: true,
    };
}

/// A hard max no chunk reaches: a splitter that measures in characters
/// (or not at all), as its framework does, sets no token limit.
pub const NO_TOKEN_LIMIT: usize = 1 << 30;
