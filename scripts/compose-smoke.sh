#!/usr/bin/env bash
# Checks docker-compose.yml end to end, the way a user runs it: build, `up -d`, three healthy
# services, the status-code table with curl on the published port, the agent's task as the
# one-shot service, then `down` and nothing left running. It uses its own project name, free
# ports and random secrets in a temporary env file, so it never touches your .env or your stack.
#   usage: scripts/compose-smoke.sh      (needs a Docker engine; COMPOSE="docker compose" for v2)
set -euo pipefail
cd "$(dirname "$0")/.."
read -r -a COMPOSE <<<"${COMPOSE:-docker-compose}"
PROJECT=agentwire-smoke-$$
envfile=$(mktemp)
free_port() { node -e "const s=require('net').createServer().listen(0,'127.0.0.1',()=>{console.log(s.address().port);s.close()})"; }
api_port=$(free_port)
gateway_port=$(free_port)
prometheus_port=$(free_port)
auth_port=$(free_port)
script_secret=$(node -e "console.log(require('crypto').randomBytes(18).toString('hex'))")
cat >"$envfile" <<ENV
TOY_API_KEY=$(node -e "console.log(require('crypto').randomBytes(18).toString('hex'))")
MCP_GATEWAY_TOKEN=$(node -e "console.log(require('crypto').randomBytes(18).toString('hex'))")
REDIS_PASSWORD=$(node -e "console.log(require('crypto').randomBytes(18).toString('hex'))")
TOY_API_PORT=$api_port
MCP_GATEWAY_PORT=$gateway_port
PROMETHEUS_PORT=$prometheus_port
AUTH_PORT=$auth_port
DEMO_PASSWORD=$(node -e "console.log(require('crypto').randomBytes(9).toString('hex'))")
SCRIPT_CLIENT_SECRET=$script_secret
ENV
dc() { "${COMPOSE[@]}" -p "$PROJECT" --env-file "$envfile" "$@"; }
cleanup() {
  dc --profile agent --profile observability down --volumes --remove-orphans >/dev/null 2>&1 || true
  rm -f "$envfile"
}
trap cleanup EXIT
log() { printf '== %s\n' "$*"; }

log "config and build"
dc --profile agent config -q
dc --profile agent build -q 2>/dev/null || dc --profile agent build

log "up -d (with the observability profile: Prometheus)"
dc --profile observability up -d
deadline=$((SECONDS + 120))
while :; do
  states=$(for id in $(dc ps -q); do docker inspect --format '{{.Name}} {{if .State.Health}}{{.State.Health.Status}}{{else}}{{.State.Status}}{{end}}' "$id"; done)
  healthy=$(grep -c ' healthy$' <<<"$states" || true)
  [ "$healthy" = 4 ] && break
  if [ $SECONDS -ge $deadline ]; then
    echo "compose-smoke: services not healthy after 120 s:" >&2
    echo "$states" >&2
    dc logs --tail 30 >&2
    exit 1
  fi
  sleep 1
done
echo "$states"

log "redis: a password, a memory limit, and the password in no process list or log"
redis_password=$(sed -n 's/^REDIS_PASSWORD=//p' "$envfile")
noauth=$(dc exec -T redis redis-cli ping 2>&1 || true)
grep -q NOAUTH <<<"$noauth" || { echo "compose-smoke: redis answered without a password: $noauth" >&2; exit 1; }
policy=$(dc exec -T -e REDISCLI_AUTH="$redis_password" redis redis-cli config get maxmemory-policy | tail -1)
[ "$policy" = noeviction ] || { echo "compose-smoke: maxmemory-policy is '$policy', not noeviction" >&2; exit 1; }
if dc exec -T redis cat /proc/1/cmdline | tr '\0' ' ' | grep -qF "$redis_password" || dc logs 2>&1 | grep -qF "$redis_password"; then
  echo "compose-smoke: the Redis password shows in a command line or a log" >&2
  exit 1
fi
echo "redis: NOAUTH without the password, maxmemory-policy $policy"

log "status codes with curl on 127.0.0.1:$api_port"
table=$(TOY_API_KEY=$(sed -n 's/^TOY_API_KEY=//p' "$envfile") bash scripts/status-table.sh "http://127.0.0.1:$api_port")
echo "$table"
for expected in '200  -' '401  authentication_error' '404  not_found_error' '400  invalid_request_error' '503  api_error'; do
  grep -q -- "$expected" <<<"$table" || { echo "compose-smoke: no '$expected' row" >&2; exit 1; }
done

log "the authorization server: a client-credentials token for the API, its audience checked, its keys kept across a restart"
token_for() {
  curl -fsS -u "agentwire-scripts:$script_secret" -d grant_type=client_credentials -d "resource=$1" -d scope=emails:read \
    "http://127.0.0.1:$auth_port/token" | node -e 'let s="";process.stdin.on("data",c=>s+=c).on("end",()=>console.log(JSON.parse(s).access_token))'
}
api_token=$(token_for "http://127.0.0.1:$api_port")
code=$(curl -s -o /dev/null -w '%{http_code}' -H "Authorization: Bearer $api_token" "http://127.0.0.1:$api_port/emails?limit=1")
[ "$code" = 200 ] || { echo "compose-smoke: the API answered $code to its own token" >&2; dc logs --tail 20 toy-api auth-server >&2; exit 1; }
gateway_token=$(token_for "http://127.0.0.1:$gateway_port/mcp")
code=$(curl -s -o /dev/null -w '%{http_code}' -H "Authorization: Bearer $gateway_token" "http://127.0.0.1:$api_port/emails?limit=1")
[ "$code" = 401 ] || { echo "compose-smoke: the API answered $code to the gateway's token (want 401)" >&2; exit 1; }
kids() { curl -fsS "http://127.0.0.1:$auth_port/jwks" | grep -o '"kid":"[^"]*"' | sort | tr '\n' ' '; }
before=$(kids)
dc restart auth-server >/dev/null
for _ in $(seq 1 30); do curl -fsS "http://127.0.0.1:$auth_port/jwks" >/dev/null 2>&1 && break; sleep 1; done
after=$(kids)
[ -n "$before" ] && [ "$before" = "$after" ] || { echo "compose-smoke: the signing keys changed across a restart ($before -> $after)" >&2; exit 1; }
code=$(curl -s -o /dev/null -w '%{http_code}' -H "Authorization: Bearer $api_token" "http://127.0.0.1:$api_port/emails?limit=1")
[ "$code" = 200 ] || { echo "compose-smoke: a token from before the restart was refused ($code)" >&2; exit 1; }
echo "API token 200, the gateway's token at the API 401, keys $before kept across a restart"

log "docker compose run --rm agent triage"
dc run --rm agent triage

log "Prometheus: the tool calls of that run, through its HTTP API (PromQL)"
query='sum(mcp_gateway_tool_calls_total)'
calls=""
for _ in $(seq 1 30); do
  calls=$(curl -fsS --get --data-urlencode "query=$query" "http://127.0.0.1:$prometheus_port/api/v1/query" |
    node -e 'let s="";process.stdin.on("data",c=>s+=c).on("end",()=>{const r=JSON.parse(s).data.result;console.log(r.length?r[0].value[1]:"")})')
  [ -n "$calls" ] && [ "$calls" != 0 ] && break
  sleep 1
done
[ -n "$calls" ] && [ "$calls" != 0 ] || { echo "compose-smoke: Prometheus has no tool calls after the run ($query)" >&2; dc logs --tail 20 prometheus >&2; exit 1; }
echo "$query = $calls"
# A target's health is the result of its last scrape: poll until both are up
# (one may not have been scraped since it started), as the count above does.
targets=0
for _ in $(seq 1 30); do
  targets=$(curl -fsS "http://127.0.0.1:$prometheus_port/api/v1/targets" | grep -o '"health":"up"' | wc -l)
  [ "$targets" = 2 ] && break
  sleep 1
done
[ "$targets" = 2 ] || { echo "compose-smoke: $targets of 2 scrape targets up after 30 s" >&2; curl -fsS "http://127.0.0.1:$prometheus_port/api/v1/targets" >&2 || true; exit 1; }
echo "scrape targets up: $targets of 2"

log "down"
dc --profile agent --profile observability down --volumes --remove-orphans
left=$(docker ps -aq --filter "label=com.docker.compose.project=$PROJECT")
networks=$(docker network ls -q --filter "label=com.docker.compose.project=$PROJECT")
if [ -n "$left$networks" ]; then
  echo "compose-smoke: left behind: containers [$left] networks [$networks]" >&2
  exit 1
fi
log "ok: nothing left running"
