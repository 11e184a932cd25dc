#!/usr/bin/env bash
# API contract test: serves the API on an embedded data directory, checks that
# the served OpenAPI document is valid (openapi-spec-validator), then lets
# Schemathesis drive every operation with every check, once with the operator
# key and once with a publisher key. Fails on any failure.
#   deploy/dev/api-contract.sh            (MAX_EXAMPLES=20 by default)
# The tools are installed once into a pinned venv under
# ${XDG_CACHE_HOME:-$HOME/.cache}/copyhound/ and reused.
#
# Custom `format`s and media types of the document (cursor, cron, charset,
# css-selector, url-pattern, heading-regex, EPUB, JSON lines, TXT) get their
# valid values from deploy/dev/api_contract_hooks.py: no JSON Schema keyword
# can say that a cron expression fires or that a zip is an EPUB. Status lists
# widened for a reason (413 as a rejection; 400 for cursors the server did not
# issue) are in deploy/dev/api-contract.toml, with the reasons.
set -euo pipefail
cd "$(dirname "$0")/../.."
ROOT=$(pwd)

SCHEMATHESIS_VERSION=4.32.5
VALIDATOR_VERSION=0.9.0
MAX_EXAMPLES=${MAX_EXAMPLES:-20}
VENV="${XDG_CACHE_HOME:-$HOME/.cache}/copyhound/api-contract-venv-st${SCHEMATHESIS_VERSION}"

if ! "$VENV/bin/python" -c 'import schemathesis, openapi_spec_validator' 2>/dev/null; then
  echo "api-contract: installing schemathesis $SCHEMATHESIS_VERSION into $VENV" >&2
  python3 -m venv "$VENV"
  "$VENV/bin/pip" install -q "schemathesis==$SCHEMATHESIS_VERSION" \
    "openapi-spec-validator==$VALIDATOR_VERSION"
fi

cargo build -q --locked -p copyhound-cli --bin copyhound
BIN="${CARGO_TARGET_DIR:-$ROOT/target}/debug/copyhound"

WORK=$(mktemp -d)
PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
BASE="http://127.0.0.1:$PORT"
OPERATOR_KEY="operator-$(python3 -c 'import secrets; print(secrets.token_hex(16))')"
SERVER_PID=""
cleanup() {
  if [ -n "$SERVER_PID" ]; then kill "$SERVER_PID" 2>/dev/null || true; wait "$SERVER_PID" 2>/dev/null || true; fi
  rm -rf "$WORK"
}
trap cleanup EXIT

# Generated book-source files name arbitrary sites: suggested, never contacted.
COPYHOUND_DATA_DIR="$WORK/data" COPYHOUND_SERVER_LISTEN="127.0.0.1:$PORT" \
  COPYHOUND_SERVER_ADMIN_KEY="$OPERATOR_KEY" COPYHOUND_CRAWLER_VERIFY_SUGGESTIONS=false RUST_LOG=warn \
  "$BIN" serve --workers 1 > "$WORK/server.log" 2>&1 &
SERVER_PID=$!
for _ in $(seq 1 100); do
  curl -fsS "$BASE/health" > /dev/null 2>&1 && break
  kill -0 "$SERVER_PID" 2>/dev/null || { cat "$WORK/server.log" >&2; exit 1; }
  sleep 0.2
done

api() { # api METHOD PATH BODY -> JSON answer, fails on a non-2xx
  curl -fsS -X "$1" "$BASE$2" -H "Authorization: Bearer $OPERATOR_KEY" \
    -H 'Content-Type: application/json' -d "$3"
}
api POST /api/v1/admin/publishers '{"id": "pub_contract", "name": "Contract", "kind": "books"}' > /dev/null
PUBLISHER_KEY=$(api POST /api/v1/admin/publishers/pub_contract/keys '{"role": "admin"}' \
  | python3 -c 'import json, sys; print(json.load(sys.stdin)["key"])')

curl -fsS "$BASE/api/v1/openapi.json" -o "$WORK/openapi.json"
"$VENV/bin/openapi-spec-validator" "$WORK/openapi.json"

status=0
for who in operator publisher; do
  key=$OPERATOR_KEY
  [ "$who" = publisher ] && key=$PUBLISHER_KEY
  echo "api-contract: schemathesis as the $who" >&2
  # Run in the temp dir: Schemathesis keeps its cache (`.schemathesis/`) in the
  # working directory, and it must neither land in the repository nor replay
  # an old run's cases.
  (cd "$WORK" && SCHEMATHESIS_HOOKS=api_contract_hooks PYTHONPATH="$ROOT/deploy/dev" \
    "$VENV/bin/st" --config-file "$ROOT/deploy/dev/api-contract.toml" run "$WORK/openapi.json" \
    --url "$BASE" -H "Authorization: Bearer $key" --checks all --max-examples "$MAX_EXAMPLES" \
    --seed 1 --no-color --report-dir "$WORK/report-$who") || status=1
done
if grep -q "panicked" "$WORK/server.log"; then
  echo "api-contract: the server panicked:" >&2
  grep -B2 -A8 panicked "$WORK/server.log" >&2
  status=1
fi
exit $status
