#!/usr/bin/env bash
# Create the Python virtualenv for the adapter parity fixtures
# (scripts/peers/adapter_parity.py: LangChain, LlamaIndex, Haystack and
# Unstructured splitters) and make tiktoken's cl100k_base work offline.
#
# Usage (from anywhere in the repository):
#   scripts/peers/setup-adapters-venv.sh
# Environment: ADAPTERS_VENV (default .venv-adapters, relative to the
# repository root), PYTHON (default python3; 3.11, the pins in
# requirements-adapters.txt are a full freeze made on 3.11.7).
#
# Only PyPI is contacted (pip install -r scripts/peers/requirements-adapters.txt,
# about 850 MB installed: Unstructured pulls spaCy, numba and friends).
# Nothing is downloaded at run time:
# - tiktoken's cl100k_base is seeded from the cargo registry's tiktoken-rs
#   crate by scripts/peers/tiktoken_offline.py (as for .venv-peers);
# - NLTK's punkt_tab data ships inside the llama-index-core wheel
#   (llama_index/core/_static/nltk_cache); adapter_parity.py points NLTK_DATA
#   there, so Haystack's sentence splitter does not call nltk.download;
# - Unstructured's only model (spaCy en_core_web_sm, fetched from GitHub on
#   first use) is not installed and not needed: see ADAPTERS.md.
# The venv gets a `.gitignore` of `*`, so git ignores it without an entry in
# the repository's .gitignore.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$root"
venv="${ADAPTERS_VENV:-.venv-adapters}"
python="${PYTHON:-python3}"

if [[ ! -x "$venv/bin/python" ]]; then
    "$python" -m venv "$venv"
fi
printf '*\n' > "$venv/.gitignore"
"$venv/bin/python" -m pip install --quiet --upgrade pip
"$venv/bin/python" -m pip install --quiet -r scripts/peers/requirements-adapters.txt

# The BPE file comes from the cargo registry; fetch the workspace's crates if
# it is not there yet (crates.io only).
if ! ls "${CARGO_HOME:-$HOME/.cargo}"/registry/src/*/tiktoken-rs-*/assets/cl100k_base.tiktoken >/dev/null 2>&1 \
    && ! ls "${CARGO_HOME:-$HOME/.cargo}"/registry/src/*/bpe-openai-*/data/cl100k_base.tiktoken.gz >/dev/null 2>&1; then
    cargo fetch --locked
fi
"$venv/bin/python" scripts/peers/tiktoken_offline.py
"$venv/bin/python" -m pip freeze --all | sed 's/^/  /'
echo "adapters venv ready: $venv"
