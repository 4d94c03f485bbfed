//! What an evaluation measures.

/// What to measure.
#[derive(Debug, Clone)]
pub struct Config {
    /// Cut-offs for the @K metrics.
    pub ks: Vec<usize>,
    /// Boundary tolerance in code points.
    pub tolerance: u32,
    /// The metric rows are sorted by (`ndcg@10`, `recall@5`, ...).
    pub rank_by: String,
    /// Index `embed_text` (`true`) and/or `chunk_text` (`false`).
    pub texts: Vec<bool>,
    /// Context budgets in cl100k tokens: the ranked chunks' texts fill each
    /// (`budget_recall@B`, `budget_precision@B`, `budget_iou@B`).
    pub budgets: Vec<u32>,
    /// Small-to-big: each ranked chunk brings this many chunks on each side
    /// of it in its document into the budget (`shared::retrieval::
    /// with_neighbours`); 0 gives the ranked chunks alone.
    pub neighbours: usize,
    /// Systems evaluated side by side, each on its own thread (1: one at a
    /// time, for latencies measured on an otherwise idle machine).
    pub jobs: usize,
}
