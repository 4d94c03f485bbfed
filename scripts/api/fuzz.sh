#!/usr/bin/env bash
# Schema-driven fuzzing of the synchronous API: starts `chunk-worker serve`
# with a fresh HS256 secret, mints a token for it, and runs Schemathesis
# (pinned in scripts/api/requirements.txt, installed from PyPI into
# .venv-api-fuzz on first use) against the served /v1/openapi.json with every
# check (`--checks all`): a request the description allows must be accepted,
# one it forbids refused with a 4xx problem, every answer must match its
# documented status, media type and schema, and nothing may answer 500.
#
#   scripts/api/fuzz.sh [BINARY] [MAX_EXAMPLES]
#
# BINARY defaults to target/debug/chunk-worker, MAX_EXAMPLES (per operation
# and phase) to 100. Exit 0 when Schemathesis finds nothing, 1 otherwise.
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
binary="${1:-$root/target/debug/chunk-worker}"
examples="${2:-100}"
venv="$root/.venv-api-fuzz"
[[ -x $binary ]] || { echo "api fuzz: $binary is not built (cargo build -p worker)" >&2; exit 1; }

if ! "$venv/bin/schemathesis" --version >/dev/null 2>&1; then
    echo "api fuzz: installing Schemathesis into $venv"
    python3 -m venv "$venv"
    "$venv/bin/pip" install --quiet --disable-pip-version-check -r "$root/scripts/api/requirements.txt"
fi

secret="$(python3 -c 'import secrets; print(secrets.token_hex(32))')"
port="$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"
log="$(mktemp)"
CHUNK_WORKER_CONFIG_DIR="$root/config" \
CHUNK_WORKER__HTTP__ADDR="127.0.0.1:$port" \
CHUNK_WORKER__API__ENABLED=true \
CHUNK_WORKER__API__JWT__HS256_SECRET="$secret" \
CHUNK_WORKER__API__RATE_LIMITS__BURST=1000000 \
CHUNK_WORKER__API__RATE_LIMITS__PER_TENANT_PER_MINUTE=1000000 \
CHUNK_WORKER__API__RATE_LIMITS__PER_USER_PER_MINUTE=1000000 \
CHUNK_WORKER__LOG__LEVEL=warn \
    "$binary" serve 2>"$log" &
server=$!
trap 'kill "$server" 2>/dev/null || true; rm -f "$log"' EXIT
for _ in $(seq 1 100); do
    python3 -c "import socket; socket.create_connection(('127.0.0.1', $port), 0.2)" 2>/dev/null && break
    kill -0 "$server" 2>/dev/null || { cat "$log" >&2; echo "api fuzz: the server did not start" >&2; exit 1; }
    sleep 0.1
done

token="$(SECRET="$secret" python3 - <<'PY'
import base64, hashlib, hmac, json, os, time
def part(data):
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()
header = part(json.dumps({"alg": "HS256", "typ": "JWT"}).encode())
claims = part(json.dumps({"sub": "fuzzer", "tenant_id": "acme-prod", "scope": "ingest:write",
                          "exp": int(time.time()) + 3600}).encode())
signature = hmac.new(os.environ["SECRET"].encode(), f"{header}.{claims}".encode(), hashlib.sha256).digest()
print(f"{header}.{claims}.{part(signature)}")
PY
)"

echo "api fuzz: Schemathesis $("$venv/bin/schemathesis" --version | awk '{print $NF}') against http://127.0.0.1:$port/v1/openapi.json ($examples examples an operation)"
# A generated string in `tei` becomes a small real TEI paper (scripts/api/hooks.py).
SCHEMATHESIS_HOOKS=hooks PYTHONPATH="$root/scripts/api${PYTHONPATH:+:$PYTHONPATH}" \
"$venv/bin/schemathesis" run "http://127.0.0.1:$port/v1/openapi.json" \
    --checks all \
    --header "Authorization: Bearer $token" \
    --max-examples "$examples" \
    --seed 20261205 \
    --workers 2 \
    --request-timeout 30 \
    --no-color
