//! Multi-granularity profiles (issue 10, the Chunking System specification "Multi-Granularity
//! Pipeline"): besides its primary strategy, a profile may name auxiliary
//! strategies, each producing chunks of its own granularity from the same
//! analysed document.
//!
//! ```toml
//! strategy = "structural"          # the primary
//! granularity = "section"
//! multi_granularity = true         # default; false runs the primary alone
//!
//! [[auxiliary]]
//! strategy = "sliding_window"
//! granularity = "window"
//! params = { target_tokens = 128, overlap_ratio = 0.25, tables = "windows" }
//! ```
//!
//! Each auxiliary becomes a sub-profile (the main profile's name, tokenizer,
//! id formula, breadcrumbs and embedder window; its own strategy, granularity
//! and parameters). An auxiliary keeps only the chunks of its granularity
//! (the `table` strategy's prose is the primary's business). Every chunk of
//! the profile carries one `chunker_version` naming all the strategies
//! (`structural:1.3.0+sliding_window:1.0.0`), so a change in any of them
//! shows.

use serde::Deserialize;

use crate::chunk::record::Granularity;
use crate::profile::model::{Auxiliary, Profile};
use crate::strategy::params::Params;
use crate::strategy::Registry;

/// An `[[auxiliary]]` table as written.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawAuxiliary {
    strategy: String,
    granularity: Granularity,
    #[serde(default)]
    params: toml::Table,
}

/// Builds the auxiliaries of `main` (already parsed); an error is the
/// reason, worded for the person who wrote the profile.
pub(crate) fn parse_auxiliaries(
    raw: &[RawAuxiliary],
    main: &Profile,
    registry: &Registry,
) -> Result<Vec<Auxiliary>, String> {
    let mut seen = vec![main.granularity];
    let mut out = Vec::with_capacity(raw.len());
    for (i, a) in raw.iter().enumerate() {
        let at = format!("auxiliary[{i}]");
        let strategy = registry.get(&a.strategy).ok_or_else(|| {
            format!(
                "{at}.strategy {:?} is unknown; valid strategies: {}",
                a.strategy,
                registry.names().join(", ")
            )
        })?;
        if let Some(g) = strategy.fixed_granularity().filter(|g| *g != a.granularity) {
            return Err(format!(
                "{at}: the {} strategy produces {} chunks only; set granularity = {:?}",
                a.strategy,
                g.as_str(),
                g.as_str()
            ));
        }
        if seen.contains(&a.granularity) {
            return Err(format!(
                "{at}.granularity {:?} repeats a granularity the profile already has ({}); each granularity comes from one strategy",
                a.granularity.as_str(),
                seen.iter().map(|g| g.as_str()).collect::<Vec<_>>().join(", ")
            ));
        }
        seen.push(a.granularity);
        let params = Params::new(&a.params, &format!("{at}.params"));
        let chunker = strategy
            .configure(&params)
            .and_then(|c| params.finish(strategy.param_keys()).map(|()| c))
            .map_err(|e| e.0)?;
        if chunker.needs_embedder() || chunker.needs_chat() {
            return Err(format!(
                "{at}: strategy {} needs the embedding model or a chat model, which auxiliaries cannot use yet",
                a.strategy
            ));
        }
        let mut sub = Profile::with_chunker(&main.name, strategy, chunker);
        sub.description = format!("{} ({} granularity)", main.name, a.granularity.as_str());
        sub.tokenizer = main.tokenizer;
        sub.normalization = main.normalization;
        sub.granularity = a.granularity;
        sub.id_primary = main.granularity;
        sub.id_formula = main.id_formula;
        sub.breadcrumb = main.breadcrumb;
        sub.origin = main.origin.clone();
        sub.embedder = main.embedder.clone();
        out.push(Auxiliary { profile: sub });
    }
    Ok(out)
}
