//! [`EndReason`]: the rule that ended a chunk.

use serde::{Deserialize, Serialize};

/// Why a chunk ends where it does. The JSON form is tagged by `rule`
/// (`{"rule":"heading","level":2,"text":"Setup"}`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "rule", rename_all = "snake_case")]
pub enum EndReason {
    /// The last chunk: the document ends.
    EndOfDocument,
    /// The next chunk starts at a heading.
    Heading {
        /// 1 for `#`.
        level: u8,
        /// The heading's plain text.
        text: String,
    },
    /// Another unit would have passed the size budget.
    SizeBudget {
        /// Tokens of this chunk.
        tokens: u32,
        /// What chunks aim at.
        target: u32,
        /// What no chunk passes.
        hard_max: u32,
    },
    /// The chunk ends at a table's edge.
    TableBoundary,
    /// The chunk ends at a code block's edge.
    CodeBoundary,
    /// The chunk ends where a list ends.
    ListExit,
    /// The chunk ends at the end of a paragraph.
    Paragraph,
    /// The chunk ends at the end of a sentence inside a paragraph.
    Sentence,
    /// A splitter's separator (recursive and framework splitters).
    Separator {
        /// The separator, as configured (`"\n\n"`).
        text: String,
    },
    /// Sentence-embedding coherence drops below the threshold here.
    SemanticDip {
        /// The coherence at the boundary (cosine, 4 decimals).
        score: f32,
        /// The threshold it fell below.
        threshold: f32,
    },
    /// A chat model proposed a section boundary here (`llm_chaptering`),
    /// and the coherence dips there.
    ModelBoundary {
        /// The model that proposed it.
        model: String,
        /// The coherence at the boundary (4 decimals).
        score: f32,
    },
    /// A topic segmenter put a boundary here.
    TopicBoundary {
        /// The lexical coherence at the boundary (4 decimals).
        score: f32,
        /// The discourse cue that opens the next chunk
        /// (`discourse_segmenter`).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        cue: Option<String>,
        /// That cue's confidence (0..1).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        confidence: Option<f64>,
    },
    /// The clinical role of the text changes.
    RoleChange {
        /// The role of this chunk.
        from: String,
        /// The role of the next chunk.
        to: String,
    },
    /// The next chunk starts at a line the layout marks as a heading.
    InferredHeading {
        /// The line's text.
        text: String,
        /// The inferred level.
        level: u8,
    },
    /// The next chunk starts on a new page.
    PageBreak {
        /// The page the next chunk starts on.
        page: u32,
    },
    /// An auxiliary chunk of a multi-granularity profile: its extent is its
    /// granularity (the document, a window, a table).
    Granularity {
        /// `document`, `window`, `table`, ...
        granularity: String,
    },
}

impl EndReason {
    /// The tag (`size_budget`).
    pub fn rule(&self) -> &'static str {
        match self {
            Self::EndOfDocument => "end_of_document",
            Self::Heading { .. } => "heading",
            Self::SizeBudget { .. } => "size_budget",
            Self::TableBoundary => "table_boundary",
            Self::CodeBoundary => "code_boundary",
            Self::ListExit => "list_exit",
            Self::Paragraph => "paragraph",
            Self::Sentence => "sentence",
            Self::Separator { .. } => "separator",
            Self::SemanticDip { .. } => "semantic_dip",
            Self::ModelBoundary { .. } => "model_boundary",
            Self::TopicBoundary { .. } => "topic_boundary",
            Self::RoleChange { .. } => "role_change",
            Self::InferredHeading { .. } => "inferred_heading",
            Self::PageBreak { .. } => "page_break",
            Self::Granularity { .. } => "granularity",
        }
    }
}

impl std::fmt::Display for EndReason {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::EndOfDocument => f.write_str("the document ends"),
            Self::Heading { level, text } => {
                write!(f, "the next chunk starts at heading (level {level}) \"{text}\"")
            }
            Self::SizeBudget {
                tokens,
                target,
                hard_max,
            } => write!(
                f,
                "size budget: {tokens} tokens (target {target}, hard max {hard_max}); the next unit would not fit"
            ),
            Self::TableBoundary => f.write_str("a table starts or ends here"),
            Self::CodeBoundary => f.write_str("a code block starts or ends here"),
            Self::ListExit => f.write_str("the list ends here"),
            Self::Paragraph => f.write_str("the paragraph ends here"),
            Self::Sentence => f.write_str("a sentence ends here"),
            Self::Separator { text } => write!(f, "split at separator {text:?}"),
            Self::SemanticDip { score, threshold } => write!(
                f,
                "semantic dip: coherence {score:.4} below threshold {threshold:.4}"
            ),
            Self::ModelBoundary { model, score } => write!(
                f,
                "the model {model} proposed a section boundary here (coherence {score:.4}, a dip)"
            ),
            Self::TopicBoundary {
                score,
                cue: Some(cue),
                confidence,
            } => write!(
                f,
                "topic boundary: the next chunk opens with the cue \"{cue}\" (confidence {:.2}; coherence {score:.4})",
                confidence.unwrap_or_default()
            ),
            Self::TopicBoundary { score, .. } => {
                write!(f, "topic boundary (coherence {score:.4})")
            }
            Self::RoleChange { from, to } => write!(f, "the clinical role changes from {from} to {to}"),
            Self::InferredHeading { text, level } => write!(
                f,
                "the next chunk starts at an inferred heading (level {level}) \"{text}\""
            ),
            Self::PageBreak { page } => write!(f, "the next chunk starts on page {page}"),
            Self::Granularity { granularity } => {
                write!(f, "a {granularity} chunk: its extent is its granularity")
            }
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn the_json_is_tagged_by_rule_and_the_tag_matches_rule() {
        let r = EndReason::Heading {
            level: 2,
            text: "Setup".into(),
        };
        let v = serde_json::to_value(&r).unwrap();
        assert_eq!(
            v,
            serde_json::json!({"rule": "heading", "level": 2, "text": "Setup"})
        );
        assert_eq!(r.rule(), "heading");
        let back: EndReason = serde_json::from_value(v).unwrap();
        assert_eq!(back, r);
        assert_eq!(
            serde_json::to_value(EndReason::EndOfDocument).unwrap(),
            serde_json::json!({"rule": "end_of_document"})
        );
        assert!(r.to_string().contains("\"Setup\""));
    }
}
