//! Lexical topic segmentation: where a text's vocabulary shifts.
//!
//! Classical algorithms over a text already split into sentences, all
//! pure functions of their input:
//! - [`texttiling()`] (Hearst 1997): lexical cohesion between the blocks on
//!   either side of each gap; boundaries at deep valleys. Linear time.
//! - [`c99()`] (Choi 2000): a rank-transformed sentence similarity matrix
//!   divided top-down to maximise inside density. Quadratic in a bounded
//!   window.
//! - [`bayesseg()`] (Eisenstein & Barzilay 2008): Dirichlet-compound-
//!   multinomial segment likelihoods, the best cut into `K` segments by
//!   dynamic programming.
//! - [`lda_topic()`] (LDA by collapsed Gibbs sampling, boundaries where the
//!   dominant topic changes, as in Riedl & Biemann's TopicTiling).
//! - [`graph_partition()`] (Malioutov & Barzilay 2006): the minimum
//!   normalised cut of a sentence-similarity graph into contiguous segments,
//!   by dynamic programming.
//! - [`discourse()`]: discourse cues at sentence starts (English and Russian
//!   lexicon with a confidence per cue).
//!
//! The lexical ones share the tokenization of [`words`] (Unicode words,
//! English and Russian stopwords, a light stemmer).
//!
//! A boundary index `i` (in `1..n` for `n` sentences) means a topic boundary
//! falls between sentence `i - 1` and sentence `i`. Results are ascending,
//! without duplicates, deterministic (no hash-order dependence, no threads)
//! and never panic, whatever the input.

pub mod bayesseg;
pub mod c99;
pub mod discourse;
pub mod entity_graph;
pub mod graph_partition;
pub mod lda;
mod stats;
pub mod texttiling;
pub mod words;

pub use bayesseg::{bayesseg, BayesSegParams, SegmentCount};
pub use c99::{c99, C99Params};
pub use discourse::{cue, discourse, Cue, DiscourseParams};
pub use entity_graph::{entity_communities, EntityGraphParams};
pub use graph_partition::{graph_partition, GraphParams};
pub use lda::{lda_topic, LdaParams};
pub use texttiling::{texttiling, Cutoff, TextTilingParams};

/// Documents with known topic boundaries, shared by the segmenters' tests.
#[cfg(test)]
pub(crate) mod fixtures {
    const COOKING: &[&str] = &[
        "Start the sauce by melting butter in a heavy pan over low heat.",
        "Add the chopped onions and garlic and cook them until they turn soft and golden.",
        "A pinch of salt draws moisture out of the onions and keeps them from burning.",
        "Stir in the crushed tomatoes, fresh basil and a spoonful of sugar to balance the acidity.",
        "Let the sauce simmer gently for twenty minutes while the pasta water comes to a boil.",
        "Salt the boiling water generously before you drop the pasta into the pot.",
        "Cook the pasta until it is tender but still firm to the bite.",
        "Reserve a cup of the starchy cooking water before you drain the pasta.",
        "Toss the drained pasta with the tomato sauce and loosen it with the reserved water.",
        "Finish the dish with grated parmesan cheese, olive oil and torn basil leaves.",
    ];
    const ASTRONOMY: &[&str] = &[
        "The telescope revealed a faint galaxy far beyond the edge of our own Milky Way.",
        "Astronomers measure the distance to such galaxies by the redshift of their light.",
        "Light from the most distant galaxies left its stars billions of years ago.",
        "Our solar system formed from a cloud of gas and dust around a young star.",
        "The planets orbit the sun in nearly circular paths on a common plane.",
        "Jupiter is the largest planet, and its moons were first seen through a small telescope.",
        "Saturn's rings are made of ice and rock that orbit the planet in thin bands.",
        "A comet grows a bright tail of gas and dust when its orbit brings it near the sun.",
        "Space probes have photographed the moons of the outer planets in great detail.",
        "Astronomers hope the next space telescope will find planets orbiting nearby stars.",
        "Some of those distant planets might hold water and an atmosphere like the Earth.",
    ];
    const FOOTBALL: &[&str] = &[
        "The football match kicked off in front of a crowd of sixty thousand fans.",
        "The home team pressed high and the striker forced the goalkeeper into an early save.",
        "Midway through the first half a defender fouled the winger inside the penalty area.",
        "The referee pointed to the spot and the captain scored the penalty with a calm shot.",
        "The visiting team equalised after the break with a header from a corner kick.",
        "Both coaches made substitutions as the players tired on the heavy pitch.",
        "A young midfielder came off the bench and passed the ball through to the striker.",
        "The striker beat the goalkeeper with a low shot to score the winning goal.",
        "The fans sang for the team long after the referee blew the final whistle.",
    ];
    const PROGRAMMING: &[&str] = &[
        "The compiler rejects the program because a variable is borrowed after it was moved.",
        "Rust functions declare the types of their arguments and return values explicitly.",
        "A struct groups related fields, and methods on the struct live in an impl block.",
        "The borrow checker makes sure that references never outlive the data they point to.",
        "Unit tests sit next to the code in a module that the compiler builds only for tests.",
        "Run the test suite with cargo before you push a commit to the repository.",
        "A trait describes behaviour that several types can implement in their own way.",
        "Generic functions accept any type that implements the traits the function requires.",
        "The compiler monomorphises generic code, so calling a generic function costs nothing at runtime.",
        "Error values are returned in a Result type instead of being thrown as exceptions.",
        "The question mark operator returns early from the function when a Result holds an error.",
        "Good error messages from the compiler point to the exact line of code that failed.",
    ];

    const BAKING_RU: &[&str] = &[
        "Тесто для пирогов замешивают на тёплом молоке с дрожжами и сахаром.",
        "Муку просеивают, чтобы тесто получилось пышным и мягким.",
        "Готовое тесто накрывают полотенцем и оставляют подниматься в тёплом месте.",
        "Для начинки обжаривают лук с грибами на сливочном масле.",
        "Грибы солят, перчат и остужают перед тем, как класть начинку в пироги.",
        "Пироги смазывают взбитым яйцом, чтобы корочка стала румяной.",
        "Пироги выпекают в духовке около получаса до золотистого цвета.",
        "Горячие пироги подают к столу с крепким чаем и сметаной.",
        "Остывшее тесто хорошо хранится в холодильнике до следующего дня.",
    ];
    const SPACE_RU: &[&str] = &[
        "Телескоп позволяет увидеть далёкие галактики и туманности.",
        "Свет далёких звёзд идёт до Земли миллионы лет.",
        "Планеты Солнечной системы вращаются вокруг Солнца по своим орбитам.",
        "Юпитер является самой большой планетой, у него десятки спутников.",
        "Кольца Сатурна состоят из льда и камней, которые вращаются вокруг планеты.",
        "Кометы приближаются к Солнцу, и у них появляется яркий хвост из газа.",
        "Астрономы наблюдают звёзды и планеты с помощью мощных телескопов.",
        "Космические аппараты сфотографировали спутники далёких планет.",
        "Учёные ищут планеты у соседних звёзд, где может быть вода.",
        "Новый космический телескоп увидит самые первые галактики.",
    ];
    const HOCKEY_RU: &[&str] = &[
        "Хоккейный матч начался при полных трибунах болельщиков.",
        "Нападающие хозяев сразу атаковали ворота гостей.",
        "Вратарь гостей отбил несколько опасных бросков по воротам.",
        "В середине первого периода защитник удалился на две минуты.",
        "В большинстве хозяева забросили шайбу точным броском от синей линии.",
        "Гости сравняли счёт во втором периоде после быстрой контратаки.",
        "Тренер хозяев взял тайм-аут и поменял звенья нападающих.",
        "За минуту до конца матча капитан забросил победную шайбу.",
        "Болельщики долго аплодировали команде после финальной сирены.",
    ];

    /// Concatenates topics; returns the sentences and the true boundaries.
    pub(crate) fn join(topics: &[&[&'static str]]) -> (Vec<&'static str>, Vec<usize>) {
        let mut sentences = Vec::new();
        let mut boundaries = Vec::new();
        for topic in topics {
            if !sentences.is_empty() {
                boundaries.push(sentences.len());
            }
            sentences.extend_from_slice(topic);
        }
        (sentences, boundaries)
    }

    /// The four English topics: cooking, astronomy, football, programming.
    pub(crate) const ENGLISH_TOPICS: [&[&str]; 4] = [COOKING, ASTRONOMY, FOOTBALL, PROGRAMMING];

    /// Four English topics: cooking, astronomy, football, programming.
    pub(crate) fn english() -> (Vec<&'static str>, Vec<usize>) {
        join(&[COOKING, ASTRONOMY, FOOTBALL, PROGRAMMING])
    }

    /// The same topics in another order, each appearing twice.
    pub(crate) fn english_repeated() -> (Vec<&'static str>, Vec<usize>) {
        join(&[
            PROGRAMMING,
            COOKING,
            FOOTBALL,
            ASTRONOMY,
            COOKING,
            PROGRAMMING,
        ])
    }

    /// Three Russian topics: baking, astronomy, ice hockey.
    pub(crate) fn russian() -> (Vec<&'static str>, Vec<usize>) {
        join(&[BAKING_RU, SPACE_RU, HOCKEY_RU])
    }

    /// `(true boundaries found within one sentence, found ones matching none)`.
    pub(crate) fn hits(found: &[usize], truth: &[usize]) -> (usize, usize) {
        let near = |a: usize, b: usize| a.abs_diff(b) <= 1;
        let hit = truth
            .iter()
            .filter(|&&t| found.iter().any(|&f| near(f, t)))
            .count();
        let extra = found
            .iter()
            .filter(|&&f| !truth.iter().any(|&t| near(f, t)))
            .count();
        (hit, extra)
    }

    /// Asserts that `found` hits all but at most one of `truth` within one
    /// sentence and holds at most two boundaries that match no true one.
    pub(crate) fn assert_close(found: &[usize], truth: &[usize]) {
        let (hit, extra) = hits(found, truth);
        assert!(
            hit + 1 >= truth.len() && extra <= 2,
            "found {found:?}, truth {truth:?}: {hit} hit, {extra} extra"
        );
    }

    /// Asserts the output contract: ascending, distinct, in `1..n`.
    pub(crate) fn assert_valid(found: &[usize], n: usize) {
        assert!(found.windows(2).all(|w| w[0] < w[1]), "{found:?}");
        assert!(found.iter().all(|&b| b >= 1 && b < n), "{found:?} for {n}");
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use std::path::{Path, PathBuf};
    use std::time::Instant;

    use proptest::prelude::*;

    use super::{c99, texttiling, C99Params, Cutoff, TextTilingParams};
    use crate::sentence::sentence_spans;

    /// Words mixing topics, scripts, stopwords, numbers and punctuation.
    const WORDS: &[&str] = &[
        "planet",
        "planets",
        "star",
        "pasta",
        "sauce",
        "goal",
        "striker",
        "compiler",
        "trait",
        "the",
        "and",
        "of",
        "42",
        "x",
        "...",
        "",
        "планета",
        "звёзды",
        "шайба",
        "и",
        "東京",
        "🚀",
        "naïve",
        "İ",
        "\u{301}",
        "--",
        "\n\n",
    ];

    /// Sentences of random words.
    fn sentences() -> impl Strategy<Value = Vec<String>> {
        let sentence =
            prop::collection::vec(prop::sample::select(WORDS), 0..12).prop_map(|w| w.join(" "));
        prop::collection::vec(sentence, 0..80)
    }

    proptest! {
        #![proptest_config(ProptestConfig {
            cases: 64,
            failure_persistence: None,
            ..ProptestConfig::default()
        })]

        #[test]
        fn any_input_gives_valid_deterministic_boundaries(
            owned in sentences(),
            block_words in 0usize..200,
            smoothing in (0usize..4, 0usize..3),
            min_gap in 0usize..6,
            liberal in any::<bool>(),
            rank_mask in 0usize..15,
            max_window in 0usize..40,
            min_segment in 0usize..5,
            stop_coefficient in -1.0f64..3.0,
        ) {
            let sentences: Vec<&str> = owned.iter().map(String::as_str).collect();
            let n = sentences.len();
            let tt = TextTilingParams {
                block_words,
                smoothing_width: smoothing.0,
                smoothing_rounds: smoothing.1,
                cutoff: if liberal { Cutoff::Liberal } else { Cutoff::Conservative },
                min_gap,
                ..TextTilingParams::default()
            };
            let cp = C99Params { rank_mask, max_window, min_segment, stop_coefficient, ..C99Params::default() };
            for found in [texttiling(&sentences, &tt), c99(&sentences, &cp)] {
                prop_assert!(found.windows(2).all(|w| w[0] < w[1]), "{:?}", found);
                prop_assert!(found.iter().all(|&b| b >= 1 && b < n), "{:?}", found);
            }
            let spaced = texttiling(&sentences, &tt);
            prop_assert!(spaced.windows(2).all(|w| w[1] - w[0] >= min_gap), "{:?}", spaced);
            prop_assert_eq!(texttiling(&sentences, &tt), spaced);
            prop_assert_eq!(c99(&sentences, &cp), c99(&sentences, &cp));
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig {
            cases: 32,
            failure_persistence: None,
            ..ProptestConfig::default()
        })]

        #[test]
        fn issue_50_segmenters_give_valid_deterministic_boundaries(
            owned in sentences(),
            sizes in prop::collection::vec(0usize..80, 0..80),
            target in 0usize..400,
            segments in 0usize..12,
            fixed in any::<bool>(),
            prior in 0.0f64..2.0,
            max_window in 0usize..40,
            topics in 0usize..6,
            window in 0usize..5,
            seed in any::<u64>(),
            threshold in 0.0f64..1.0,
        ) {
            use super::{bayesseg, discourse, graph_partition, lda_topic};
            use super::{BayesSegParams, DiscourseParams, GraphParams, LdaParams, SegmentCount};
            let sentences: Vec<&str> = owned.iter().map(String::as_str).collect();
            let n = sentences.len();
            let bp = BayesSegParams {
                prior,
                segments: if fixed { SegmentCount::Fixed(segments) } else { SegmentCount::PerTokens(target) },
                max_window,
                ..BayesSegParams::default()
            };
            let gp = GraphParams { max_segment_tokens: target, max_window, ..GraphParams::default() };
            let lp = LdaParams { topics, window, seed, iterations: 20, ..LdaParams::default() };
            let dp = DiscourseParams { threshold };
            let runs = [
                bayesseg(&sentences, &sizes, &bp),
                graph_partition(&sentences, &sizes, &gp),
                lda_topic(&sentences, &lp),
                discourse(&sentences, &dp),
            ];
            for found in &runs {
                prop_assert!(found.windows(2).all(|w| w[0] < w[1]), "{:?}", found);
                prop_assert!(found.iter().all(|&b| b >= 1 && b < n), "{:?}", found);
            }
            prop_assert_eq!(&bayesseg(&sentences, &sizes, &bp), &runs[0]);
            prop_assert_eq!(&graph_partition(&sentences, &sizes, &gp), &runs[1]);
            prop_assert_eq!(&lda_topic(&sentences, &lp), &runs[2]);
        }
    }

    /// Most corpus bytes the throughput check reads.
    const CORPUS_BUDGET: usize = 5 << 20;

    fn markdown_files(dir: &Path, out: &mut Vec<PathBuf>) {
        let Ok(entries) = std::fs::read_dir(dir) else {
            return;
        };
        let mut paths: Vec<PathBuf> = entries.filter_map(|e| e.ok().map(|e| e.path())).collect();
        // Sorted so that the same files are read on every run.
        paths.sort();
        for path in paths {
            if path.is_dir() {
                markdown_files(&path, out);
            } else if path.extension().is_some_and(|e| e == "md") {
                out.push(path);
            }
        }
    }

    /// Throughput on up to 5 MB of the shared corpus, one call per document,
    /// sentence splitting excluded from the timings. Prints; asserts only the
    /// output contract. Run it in release:
    /// `cargo test --release -p shared --lib segment -- --ignored --nocapture`.
    #[test]
    #[ignore = "throughput report over the shared corpus; run in release"]
    fn corpus_throughput() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../shared/corpus");
        if !root.is_dir() {
            println!("skipped: no corpus at {}", root.display());
            return;
        }
        let mut files = Vec::new();
        markdown_files(&root, &mut files);
        // Every k-th file, so that the sample spans the whole corpus (both
        // languages) rather than its alphabetically first folders.
        let total: u64 = files
            .iter()
            .filter_map(|f| std::fs::metadata(f).ok())
            .map(|m| m.len())
            .sum();
        let stride = usize::try_from(total / CORPUS_BUDGET as u64)
            .unwrap()
            .max(1);
        let mut docs = Vec::new();
        let mut bytes = 0;
        for path in files.iter().step_by(stride) {
            if bytes >= CORPUS_BUDGET {
                break;
            }
            let Ok(text) = std::fs::read_to_string(path) else {
                continue;
            };
            bytes += text.len();
            docs.push(text);
        }
        let split: Vec<Vec<&str>> = docs
            .iter()
            .map(|d| sentence_spans(d).into_iter().map(|r| &d[r]).collect())
            .collect();
        let sentences: usize = split.iter().map(Vec::len).sum();
        let max = split.iter().map(Vec::len).max().unwrap_or(0);
        println!(
            "corpus: {} documents, {:.2} MB, {sentences} sentences (largest document {max})",
            docs.len(),
            bytes as f64 / 1e6
        );
        let mb = bytes as f64 / 1e6;

        let t = Instant::now();
        let mut found = 0;
        for s in &split {
            let b = texttiling(s, &TextTilingParams::default());
            assert!(b.windows(2).all(|w| w[0] < w[1]));
            found += b.len();
        }
        let secs = t.elapsed().as_secs_f64();
        println!(
            "texttiling: {:.1} MB/s ({secs:.3} s, {found} boundaries)",
            mb / secs
        );

        let t = Instant::now();
        let mut found = 0;
        for s in &split {
            let b = c99(s, &C99Params::default());
            assert!(b.windows(2).all(|w| w[0] < w[1]));
            found += b.len();
        }
        let secs = t.elapsed().as_secs_f64();
        println!(
            "c99: {:.1} MB/s ({secs:.3} s, {found} boundaries)",
            mb / secs
        );

        // The issue-50 segmenters; sizes are bytes / 4, near cl100k counts
        // for English prose.
        let sizes: Vec<Vec<usize>> = split
            .iter()
            .map(|s| s.iter().map(|t| t.len() / 4).collect())
            .collect();
        type Run<'a> = &'a dyn Fn(&[&str], &[usize]) -> Vec<usize>;
        let runs: [(&str, Run); 4] = [
            ("bayesseg", &|s, z| {
                super::bayesseg(s, z, &super::BayesSegParams::default())
            }),
            ("lda_topic", &|s, _| {
                super::lda_topic(s, &super::LdaParams::default())
            }),
            ("graph_partition", &|s, z| {
                super::graph_partition(s, z, &super::GraphParams::default())
            }),
            ("discourse", &|s, _| {
                super::discourse(s, &super::DiscourseParams::default())
            }),
        ];
        for (name, run) in runs {
            let t = Instant::now();
            let mut found = 0;
            for (s, z) in split.iter().zip(&sizes) {
                let b = run(s, z);
                assert!(b.windows(2).all(|w| w[0] < w[1]));
                found += b.len();
            }
            let secs = t.elapsed().as_secs_f64();
            println!(
                "{name}: {:.1} MB/s ({secs:.3} s, {found} boundaries)",
                mb / secs
            );
        }
    }
}
