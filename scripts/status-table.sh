#!/usr/bin/env bash
# The lecture's status-code table, with curl against a running toy API (the compose stack's
# published port by default). The key comes from TOY_API_KEY, or from .env when it is not set;
# it is sent in a header and never printed.
#   usage: scripts/status-table.sh [BASE_URL]      (default http://127.0.0.1:${TOY_API_PORT:-8080})
set -euo pipefail
cd "$(dirname "$0")/.."
if [ -z "${TOY_API_KEY:-}" ] && [ -f .env ]; then
  TOY_API_KEY=$(sed -n 's/^TOY_API_KEY=//p' .env | tail -1)
  TOY_API_PORT=${TOY_API_PORT:-$(sed -n 's/^TOY_API_PORT=//p' .env | tail -1)}
fi
[ -n "${TOY_API_KEY:-}" ] || { echo "status-table: set TOY_API_KEY (or create .env from .env.example)" >&2; exit 2; }
BASE=${1:-http://127.0.0.1:${TOY_API_PORT:-8080}}
BASE=${BASE%/}
run="status-table-$$-$RANDOM"

# row LABEL ADVICE curl-args...: one request, then its status and the envelope's error type.
row() {
  local label=$1 advice=$2 body status type
  shift 2
  body=$(mktemp)
  status=$(curl -sS -o "$body" -w '%{http_code}' --max-time 10 "$@") || status=000
  type=$(grep -o '"type":"[a-z_]*"' "$body" | head -1 | cut -d'"' -f4 || true)
  rm -f "$body"
  printf '%-34s %6s  %-22s %s\n' "$label" "$status" "${type:--}" "$advice"
}
auth=(-H "Authorization: Bearer $TOY_API_KEY")
json=(-H 'Content-Type: application/json')

printf '%-34s %6s  %-22s %s\n' request status 'error type' 'what the client does'
row 'GET /health (no auth needed)' 'go on' "$BASE/health"
row 'GET /emails without a token' 'fix the request' "$BASE/emails"
row 'GET /nope (no such path)' 'fix the request' "${auth[@]}" "$BASE/nope"
row 'POST /digest without date' 'fix the request' "${auth[@]}" "${json[@]}" -d '{}' "$BASE/digest"
row 'POST /digest with a bad date' 'fix the request' "${auth[@]}" "${json[@]}" -d '{"date":"June 10"}' "$BASE/digest"
row 'GET /flaky (temporary failure)' 'retry with backoff' "${auth[@]}" "$BASE/flaky?fail_times=1&run=$run"
row 'GET /flaky again' 'go on' "${auth[@]}" "$BASE/flaky?fail_times=1&run=$run"
