//! The issue-50 topic segmenters through the engine: gated behind the
//! experimental switch, a boundary between two obviously different topics,
//! byte-identical output run to run, and no panic on tiny documents.

use shared::{DocumentMeta, Engine};

const PROFILES: [&str; 5] = [
    "bayesseg-v1",
    "lda_topic-v1",
    "graph_partition-v1",
    "discourse_segmenter-v1",
    "graphrag-v1",
];

const COOKING: &str = "Start the sauce by melting butter in a heavy pan over low heat. \
Add the chopped onions and garlic and cook them until they turn soft and golden. \
A pinch of salt draws moisture out of the onions and keeps them from burning. \
Stir in the crushed tomatoes, fresh basil and a spoonful of sugar to balance the acidity. \
Let the sauce simmer gently for twenty minutes while the pasta water comes to a boil. \
Salt the boiling pasta water generously before you drop the pasta into the pot. \
Cook the pasta until it is tender but still firm to the bite. \
Reserve a cup of the starchy pasta water before you drain the pasta. \
Toss the drained pasta with the tomato sauce and loosen the sauce with the reserved water. \
Finish the pasta with grated parmesan cheese, olive oil and torn basil leaves. \
Leftover tomato sauce keeps in the fridge for a week and freezes well. \
Fresh pasta cooks faster than dried pasta, so taste it early.";

const ASTRONOMY: &str =
    "Turning to astronomy, the telescope revealed a faint galaxy far beyond the Milky Way. \
Astronomers measure the distance to such galaxies by the redshift of their light. \
Light from the most distant galaxies left its stars billions of years ago. \
Our solar system formed from a cloud of gas and dust around a young star. \
The planets orbit the sun in nearly circular orbits on a common plane. \
Jupiter is the largest planet, and its moons were first seen through a small telescope. \
Saturn's rings are made of ice and rock that orbit the planet in thin bands. \
A comet grows a bright tail of gas and dust when its orbit brings it near the sun. \
Space probes have photographed the moons of the outer planets in great detail. \
Astronomers hope the next space telescope will find planets orbiting nearby stars. \
Some of those distant planets might hold water and an atmosphere like the Earth. \
Telescopes on mountains see the stars and planets through thinner air.";

fn engine(experimental: bool) -> Engine {
    Engine::builder()
        .experimental(experimental)
        .build()
        .unwrap_or_else(|e| panic!("{e}"))
}

fn meta() -> DocumentMeta {
    DocumentMeta::default()
}

#[test]
fn the_segmenters_are_experimental_and_disabled_by_default() {
    let off = engine(false);
    for name in PROFILES {
        let p = off
            .profiles()
            .get(name)
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        assert!(p.experimental, "{name}");
        assert!(
            off.chunk(b"Some text.\n", &meta(), Some(name)).is_err(),
            "{name} ran without the experimental switch"
        );
    }
}

#[test]
fn two_topics_get_a_boundary_between_them_and_runs_are_identical() {
    let on = engine(true);
    let doc = format!("{COOKING}\n\n{ASTRONOMY}\n");
    let second = ASTRONOMY.split(". ").next().unwrap_or_default();
    // graphrag sees names, not words: its own two topics below.
    for name in PROFILES.iter().filter(|p| **p != "graphrag-v1") {
        let out = on
            .chunk(doc.as_bytes(), &meta(), Some(name))
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        let texts: Vec<&str> = out.chunks.iter().map(|c| c.chunk_text.as_str()).collect();
        assert!(texts.len() >= 2, "{name}: {texts:?}");
        assert!(
            texts.iter().any(|t| t.starts_with(second)),
            "{name}: no chunk starts the second topic: {texts:?}"
        );
        let again = on
            .chunk(doc.as_bytes(), &meta(), Some(name))
            .unwrap_or_else(|e| panic!("{e}"));
        let ids = |d: &shared::ChunkedDocument| -> Vec<(String, String)> {
            d.chunks
                .iter()
                .map(|c| (c.chunk_id.clone(), c.chunk_text.clone()))
                .collect()
        };
        assert_eq!(ids(&out), ids(&again), "{name}");
    }
}

const KUBERNETES: &str =
    "The Kubernetes scheduler places each Pod on a Node that has room for it. \
A Pod asks the Kubernetes API Server for CPU and memory in its resource requests. \
The kubelet on each Node starts the containers of a Pod and reports back to the API Server. \
When a Node fails, the Kubernetes controller manager moves its Pods to another Node. \
Operators watch Pods and Nodes with kubectl and the Kubernetes dashboard. \
A DaemonSet runs one Pod on every Node of the Kubernetes cluster.";

const POSTGRES: &str = "PostgreSQL stores the rows of a table in Heap pages of eight kilobytes. \
Each Heap page of PostgreSQL holds tuples, their line pointers and a page header. \
The PostgreSQL VACUUM command frees the space of dead tuples in Heap pages. \
An index of PostgreSQL points at tuples in the Heap by their TID. \
The WAL of PostgreSQL records every change to a Heap page before it is written. \
Replicas of PostgreSQL replay the WAL to follow the primary server.";

#[test]
fn graphrag_cuts_where_the_entities_change() {
    let on = engine(true);
    // Each topic over the 120-token minimum a chunk must hold.
    let doc = format!("{KUBERNETES} {KUBERNETES} {POSTGRES} {POSTGRES}\n");
    let out = on
        .chunk(doc.as_bytes(), &meta(), Some("graphrag-v1"))
        .unwrap_or_else(|e| panic!("{e}"));
    let texts: Vec<&str> = out.chunks.iter().map(|c| c.chunk_text.as_str()).collect();
    assert!(
        texts.iter().any(|t| t.starts_with("PostgreSQL stores")),
        "no chunk starts the second topic: {texts:?}"
    );
    let again = on
        .chunk(doc.as_bytes(), &meta(), Some("graphrag-v1"))
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(out.chunks, again.chunks);
}

#[test]
fn tiny_documents_do_not_panic() {
    let on = engine(true);
    for name in PROFILES {
        for doc in [
            "",
            "One sentence.",
            "# Title\n",
            "# A\n\nFirst, one.\n\n# B\n\nIn conclusion, two.\n",
        ] {
            let out = on.chunk(doc.as_bytes(), &meta(), Some(name));
            if let Ok(d) = out {
                assert!(d.chunks.len() <= 2, "{name}: {doc:?}");
            }
        }
    }
}

#[test]
fn bad_params_are_named_with_their_valid_range() {
    use shared::{Profile, ProfileOrigin, Registry};
    let cases = [
        (
            "bayesseg",
            "prior = 0.0",
            "params.prior = 0 is out of range",
        ),
        (
            "bayesseg",
            "segments = 0",
            "params.segments = 0 is out of range",
        ),
        (
            "lda_topic",
            "topics = 1",
            "params.topics = 1 is out of range",
        ),
        (
            "lda_topic",
            "alpha = \"x\"",
            "params.alpha = \"x\" is a string",
        ),
        (
            "graph_partition",
            "max_distance = 0",
            "params.max_distance = 0 is out of range",
        ),
        (
            "discourse_segmenter",
            "threshold = 2",
            "params.threshold = 2 is out of range",
        ),
        ("discourse_segmenter", "cues = 1", "unknown key params.cues"),
        (
            "graphrag",
            "min_mentions = 0",
            "params.min_mentions = 0 is out of range",
        ),
    ];
    for (strategy, line, want) in cases {
        let src = format!("name = \"x\"\nstrategy = \"{strategy}\"\n[params]\n{line}\n");
        match Profile::parse(&src, ProfileOrigin::Builtin, &Registry::builtin()) {
            Ok(_) => panic!("{strategy}: {line} accepted"),
            Err(e) => assert!(e.to_string().contains(want), "{strategy}: {e}"),
        }
    }
}
