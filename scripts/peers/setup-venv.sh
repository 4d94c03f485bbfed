#!/usr/bin/env bash
# Create the Python virtualenv for the peer scripts (LangChain parity fixtures,
# throughput benchmark, and the evaluation harness's peer chunks,
# eval_peers.py) and make tiktoken's cl100k_base work offline.
#
# Usage (from anywhere in the repository):
#   scripts/peers/setup-venv.sh
# Environment: PEERS_VENV (default .venv-peers, relative to the repository
# root), PYTHON (default python3, 3.9 or newer), PEERS_EVAL (default 1; 0
# skips requirements-eval.txt: LlamaIndex, chonkie, semantic-text-splitter,
# some 250 MB more, only eval_peers.py needs them).
#
# Only PyPI is contacted (pip install -r scripts/peers/requirements.txt
# [-r scripts/peers/requirements-eval.txt]).
# tiktoken would download cl100k_base.tiktoken from OpenAI on first use, which
# is not reachable here; scripts/peers/tiktoken_offline.py instead seeds
# tiktoken's cache (<venv>/tiktoken-cache/<sha1 of the URL>) from the copy the
# tiktoken-rs crate ships in the cargo registry (a workspace dependency, so
# `cargo fetch` brings it), checked against tiktoken's SHA-256. The peer
# scripts call the same function on start, so the cache is re-seeded if it
# goes missing.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$root"
venv="${PEERS_VENV:-.venv-peers}"
python="${PYTHON:-python3}"

if [[ ! -x "$venv/bin/python" ]]; then
    "$python" -m venv "$venv"
fi
"$venv/bin/python" -m pip install --quiet --upgrade pip
reqs=(-r scripts/peers/requirements.txt)
if [[ "${PEERS_EVAL:-1}" != 0 ]]; then
    reqs+=(-r scripts/peers/requirements-eval.txt)
fi
"$venv/bin/python" -m pip install --quiet "${reqs[@]}"

# The BPE file comes from the cargo registry; fetch the workspace's crates if
# it is not there yet (crates.io only).
if ! ls "${CARGO_HOME:-$HOME/.cargo}"/registry/src/*/tiktoken-rs-*/assets/cl100k_base.tiktoken >/dev/null 2>&1 \
    && ! ls "${CARGO_HOME:-$HOME/.cargo}"/registry/src/*/bpe-openai-*/data/cl100k_base.tiktoken.gz >/dev/null 2>&1; then
    cargo fetch --locked
fi
"$venv/bin/python" scripts/peers/tiktoken_offline.py
"$venv/bin/python" -m pip freeze --all | sed 's/^/  /'
echo "peers venv ready: $venv"
