//! `chunk-worker eval`: runs the evaluation harness (the `evaluation`
//! crate) over datasets, writes `leaderboard.json` and `leaderboard.html`
//! to `--out` and prints the table.

use std::io::Write;
use std::path::{Path, PathBuf};

use evaluation::dataset::Dataset;
use evaluation::{Config, Leaderboard, System};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

use super::outcome::{deliver, OfflineError, Progress, Summary};
use super::vectors::StoredVectors;
use crate::cli::{EvalArgs, EvalText};

/// The datasets used when none is named: the repository's.
pub const DEFAULT_DATASETS: [&str; 3] =
    ["eval/retrieval", "eval/retrieval-plain", "eval/boundaries"];

/// A granularity named on the command line (clap checked the spelling).
fn parse_granularity(name: &str) -> shared::Granularity {
    shared::Granularity::ALL
        .into_iter()
        .find(|g| g.as_str() == name)
        .unwrap_or(shared::Granularity::Section)
}

/// Runs the evaluation.
pub fn run(
    args: &EvalArgs,
    progress: Progress,
    mut stdout: impl Write,
) -> Result<Summary, OfflineError> {
    if args.k.is_empty() || args.k.contains(&0) {
        return Err(OfflineError::Usage(
            "--k takes positive cut-offs, e.g. 5,10,20".into(),
        ));
    }
    // Every profile is evaluated unless some are named; semantic ones only
    // when the model is in place (loaded then).
    let every = args.profiles.is_empty() || args.all;
    let granularity = args.granularity.as_deref().map(parse_granularity);
    let named: Vec<&str> = args.profiles.iter().map(String::as_str).collect();
    let mut semantic = args.select.semantic_settings();
    let dense = args.retriever != "bm25";
    semantic.enabled = dense || (every && semantic.model_dir.join("model.safetensors").is_file());
    let engine = crate::profiles::load_engine(
        None,
        &args.select.profile_files,
        args.select.experimental,
        &semantic,
        &named,
    )
    .map_err(OfflineError::Usage)?;
    let dirs: Vec<PathBuf> = if args.datasets.is_empty() {
        DEFAULT_DATASETS.iter().map(PathBuf::from).collect()
    } else {
        args.datasets.clone()
    };
    let mut datasets = Vec::new();
    for dir in &dirs {
        let mut d = Dataset::load(dir).map_err(|e| OfflineError::Usage(e.to_string()))?;
        if let Some(half) = &args.split {
            d = d
                .restrict(half)
                .map_err(|e| OfflineError::Usage(e.to_string()))?;
        }
        datasets.push(d);
    }
    if args.budgets.is_empty() || args.budgets.contains(&0) {
        return Err(OfflineError::Usage(
            "--budgets takes positive token counts, e.g. 500,1000,2000".into(),
        ));
    }
    let rank_by = match &args.rank_by {
        Some(r) => r.clone(),
        None if datasets.iter().all(|d| d.questions.is_empty()) => "boundary_f1".to_owned(),
        None => format!("budget_recall@{}", args.budgets[args.budgets.len() / 2]),
    };
    let mut systems: Vec<System> = Vec::new();
    let names: Vec<String> = if args.profiles.is_empty() || args.all {
        engine
            .profiles()
            .iter()
            .filter(|p| !p.experimental || engine.experimental_enabled())
            .filter(|p| !p.chunker().needs_embedder() || engine.embedder().is_some())
            // A chat model is asked only when its profile is named: every
            // document costs a request to someone's endpoint.
            .filter(|p| !p.chunker().needs_chat())
            .map(|p| p.name.clone())
            .collect()
    } else {
        args.profiles.clone()
    };
    for name in names {
        let profile = engine
            .profile(Some(&name))
            .map_err(|e| OfflineError::Usage(e.to_string()))?;
        let granularities = profile.granularities();
        match granularity {
            // One row per granularity of a profile that has several.
            None if args.all && granularities.len() > 1 => {
                systems.extend(granularities.iter().map(|g| System::profile_at(&name, *g)));
            }
            None => systems.push(System::profile(&name)),
            Some(g) if granularities.contains(&g) => {
                systems.push(if g == profile.granularity && granularities.len() == 1 {
                    System::profile(&name)
                } else {
                    System::profile_at(&name, g)
                });
            }
            // Named: an error; among every profile: not one that has it.
            Some(g) if !args.profiles.is_empty() => {
                return Err(OfflineError::Usage(format!(
                    "--granularity {}: {name} has no such chunks (its granularities: {})",
                    g.as_str(),
                    granularities
                        .iter()
                        .map(|g| g.as_str())
                        .collect::<Vec<_>>()
                        .join(", ")
                )))
            }
            Some(_) => {}
        }
    }
    for spec in &args.externals {
        let (name, file) = spec.split_once('=').ok_or_else(|| {
            OfflineError::Usage(format!("--external {spec:?}: expected NAME=FILE.jsonl"))
        })?;
        let path = Path::new(file);
        let text = std::fs::read_to_string(path)
            .map_err(|e| OfflineError::Usage(format!("--external {}: {e}", path.display())))?;
        let chunks = evaluation::external::parse(path, &text, &datasets, args.split.is_some())
            .map_err(|e| OfflineError::Usage(e.to_string()))?;
        systems.push(System::External {
            name: name.to_owned(),
            chunks,
        });
    }
    let config = Config {
        ks: args.k.clone(),
        tolerance: args.tolerance,
        rank_by: rank_by.clone(),
        texts: match args.text {
            EvalText::Embed => vec![true],
            EvalText::Chunk => vec![false],
            EvalText::Both => vec![true, false],
        },
        budgets: args.budgets.clone(),
        neighbours: args.neighbours,
        jobs: args.jobs.map_or_else(
            || std::thread::available_parallelism().map_or(1, usize::from),
            usize::from,
        ),
    };
    let bar = if progress == Progress::Stderr {
        let bar =
            ProgressBar::with_draw_target(Some(systems.len() as u64), ProgressDrawTarget::stderr());
        if let Ok(style) = ProgressStyle::with_template("{bar:30} {pos}/{len} systems {wide_msg}") {
            bar.set_style(style);
        }
        bar
    } else {
        ProgressBar::hidden()
    };
    let mut retrievers = Vec::new();
    if matches!(args.retriever.as_str(), "bm25" | "both") {
        retrievers.push(evaluation::Retriever::Bm25);
    }
    std::fs::create_dir_all(&args.out).map_err(|e| {
        OfflineError::Usage(format!("cannot create --out {}: {e}", args.out.display()))
    })?;
    let store = match engine.embedder() {
        Some(model) if dense && !args.no_vector_store => {
            Some(StoredVectors::open(model, &args.out))
        }
        _ => None,
    };
    if dense {
        let model: &dyn shared::Embedder = match (&store, engine.embedder()) {
            (Some(s), _) => s,
            (None, Some(m)) => m,
            (None, None) => {
                return Err(OfflineError::Usage(format!(
                    "--retriever {} needs the embedding model",
                    args.retriever
                )))
            }
        };
        if args.retriever == "hybrid" {
            retrievers.push(evaluation::Retriever::Hybrid(model));
        } else {
            retrievers.push(evaluation::Retriever::Dense(model));
        }
    }
    let rows = evaluation::evaluate(&engine, &systems, &datasets, &config, &retrievers, |name| {
        bar.set_message(name.to_owned());
        bar.inc(1);
    })
    .map_err(|e| OfflineError::Usage(e.to_string()))?;
    bar.finish_and_clear();
    if let Some(store) = &store {
        // A store that cannot be written costs the next run time, not this
        // run its results.
        if let Err(e) = store.save() {
            tracing::warn!(path = %store.path().display(), error = %e, "vector store not saved");
        }
    }
    let dataset_names: Vec<String> = datasets.iter().map(|d| d.name.clone()).collect();
    let board = Leaderboard::new(
        dataset_names.join(", "),
        &rank_by,
        (args.k.clone(), args.budgets.clone()),
        args.tolerance,
        rows,
    )
    .map_err(OfflineError::Usage)?;
    let json = serde_json::to_string_pretty(&board).unwrap_or_default();
    for (file, content) in [
        ("leaderboard.json", json),
        ("leaderboard.html", board.html()),
    ] {
        let path = args.out.join(file);
        std::fs::write(&path, content)
            .map_err(|e| OfflineError::Usage(format!("cannot write {}: {e}", path.display())))?;
    }
    let questions: usize = datasets.iter().map(|d| d.questions.len()).sum();
    let gold: usize = datasets.iter().map(|d| d.boundaries.len()).sum();
    let docs: usize = datasets.iter().map(|d| d.documents.len()).sum();
    let stored = store.as_ref().map_or(String::new(), |s| {
        format!("; {} vectors kept in {}", s.len(), s.path().display())
    });
    let head = format!(
        "{} system(s) on {} ({docs} documents, {questions} questions, {gold} documents with boundary gold); wrote {} and {}{stored}\n",
        systems.len(),
        dataset_names.join(", "),
        args.out.join("leaderboard.json").display(),
        args.out.join("leaderboard.html").display(),
    );
    deliver(
        stdout
            .write_all(head.as_bytes())
            .and_then(|()| stdout.write_all(board.table().as_bytes()))
            .and_then(|()| stdout.flush()),
    )?;
    Ok(Summary {
        succeeded: systems.len(),
        failed: 0,
    })
}
