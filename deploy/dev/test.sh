#!/usr/bin/env bash
# The whole test suite, with the real services it needs: starts Redis and the
# MongoDB-compatible test server on loopback (installing them on first use),
# runs every test of the workspace against them, stops them again.
#   deploy/dev/test.sh [extra cargo test args]
# Under CI=true a test that needs a service it cannot reach fails; it never skips.
set -euo pipefail
cd "$(dirname "$0")/../.."

started_here=0
if [ -z "${COPYHOUND_TEST_REDIS_URL:-}" ] || [ -z "${COPYHOUND_TEST_MONGODB_URL:-}" ] \
  || [ -z "${COPYHOUND_TEST_REDIS_CLUSTER_URL:-}" ] || [ -z "${COPYHOUND_TEST_WARCIO:-}" ] \
  || [ -z "${COPYHOUND_TEST_SMTP_URL:-}" ] || [ -z "${COPYHOUND_TEST_SMTP_MAILDIR:-}" ]; then
  eval "$(deploy/dev/services.sh start)"
  started_here=1
fi
cleanup() { [ "$started_here" = 1 ] && deploy/dev/services.sh stop || true; }
trap cleanup EXIT

echo "test: redis at $COPYHOUND_TEST_REDIS_URL, redis cluster at $COPYHOUND_TEST_REDIS_CLUSTER_URL, mongodb at $COPYHOUND_TEST_MONGODB_URL" >&2
cargo test --workspace --locked --no-fail-fast "$@"
deploy/dev/api-contract.sh
