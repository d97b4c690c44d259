#!/usr/bin/env bash
# The chaos run: brings up docker-compose.scale.yml (3 gateways, 2 toy APIs, HAProxy, Redis
# with AOF) under its own project name, free ports and random secrets, waits until every
# replica is healthy, runs scripts/chaos.mjs (44 agents while a gateway, a toy API and Redis
# fail one after another, then a sick phase: the API fails half its calls and the gateways'
# shared breaker must open on all three), prints its figures, and takes the stack down. Bounded: the agents
# run CHAOS_SECONDS (60: the note agents write for a minute), the whole script a few minutes. Exit 1 when a check fails.
#   usage: scripts/chaos.sh      (needs a Docker engine and a built repo: pnpm build)
set -euo pipefail
cd "$(dirname "$0")/.."
read -r -a COMPOSE <<<"${COMPOSE:-docker-compose}"
PROJECT=agentwire-chaos-$$
envfile=$(mktemp)
free_port() { node -e "const s=require('net').createServer().listen(0,'127.0.0.1',()=>{console.log(s.address().port);s.close()})"; }
secret() { node -e "console.log(require('crypto').randomBytes(18).toString('hex'))"; }
api_port=$(free_port)
mcp_port=$(free_port)
mcp_tls_port=$(free_port)
auth_tls_port=$(free_port)
script_secret=$(secret)
# TLS ends at HAProxy: a self-signed certificate for 127.0.0.1, trusted by this run's clients.
tlsdir=$(mktemp -d)
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 2 -subj /CN=127.0.0.1 \
  -addext subjectAltName=IP:127.0.0.1,DNS:localhost -keyout "$tlsdir/key.pem" -out "$tlsdir/cert.pem" 2>/dev/null
cat "$tlsdir/cert.pem" "$tlsdir/key.pem" >"$tlsdir/tls.pem"
chmod 644 "$tlsdir/tls.pem"
cat >"$envfile" <<ENV
TOY_API_KEY=$(secret)
TOY_API_ADMIN=1
MCP_GATEWAY_TOKEN=$(secret)
REDIS_PASSWORD=$(secret)
APPROVAL_KEY=$(secret)$(secret)
SCALE_API_PORT=$api_port
SCALE_MCP_PORT=$mcp_port
SCALE_MCP_TLS_PORT=$mcp_tls_port
SCALE_AUTH_TLS_PORT=$auth_tls_port
SCALE_TLS_PEM=$tlsdir/tls.pem
DEMO_PASSWORD=$(secret)
SCRIPT_CLIENT_SECRET=$script_secret
ACCESS_TOKEN_TTL_S=3600
LOG_LEVEL=info
ENV
dc_line="${COMPOSE[*]} -p $PROJECT -f docker-compose.scale.yml --env-file $envfile"
dc() { "${COMPOSE[@]}" -p "$PROJECT" -f docker-compose.scale.yml --env-file "$envfile" "$@"; }
cleanup() {
  dc down --volumes --remove-orphans >/dev/null 2>&1 || true
  rm -f "$envfile"
  rm -rf "$tlsdir"
}
trap cleanup EXIT
log() { printf '== %s\n' "$*"; }

log "build and up -d (3 gateways, 2 toy APIs, the authorization server, HAProxy with TLS, Redis with appendonly)"
dc config -q
dc build -q 2>/dev/null || dc build
dc up -d
deadline=$((SECONDS + 180))
while :; do
  states=$(for id in $(dc ps -q); do docker inspect --format '{{.Name}} {{if .State.Health}}{{.State.Health.Status}}{{else}}{{.State.Status}}{{end}}' "$id"; done)
  healthy=$(grep -c ' healthy$' <<<"$states" || true)
  [ "$healthy" = 7 ] && break
  if [ $SECONDS -ge $deadline ]; then
    echo "chaos: the scaled stack is not healthy after 180 s:" >&2
    echo "$states" >&2
    dc logs --tail 30 >&2
    exit 1
  fi
  sleep 1
done
echo "$states"
aof=$(dc exec -T -e REDISCLI_AUTH="$(sed -n 's/^REDIS_PASSWORD=//p' "$envfile")" redis redis-cli config get appendonly | tail -1)
[ "$aof" = yes ] || { echo "chaos: Redis runs without its append-only file (appendonly $aof)" >&2; exit 1; }

log "the balancer answers, round robin, before any fault"
for _ in 1 2 3; do curl -fsS "http://127.0.0.1:$mcp_port/health" >/dev/null; done

set -a
# shellcheck disable=SC1090
. "$envfile"
set +a
export CHAOS_API_URL="http://127.0.0.1:$api_port" CHAOS_MCP_URL="http://127.0.0.1:$mcp_port/mcp" CHAOS_COMPOSE="$dc_line"
export NODE_EXTRA_CA_CERTS="$tlsdir/cert.pem" CHAOS_AUTH_URL="https://127.0.0.1:$auth_tls_port" CHAOS_CLIENT_SECRET="$script_secret"

log "OAuth through TLS at the balancer: the official SDK clients v1 and v2 discover the gateway, every advertised URL https"
node apps/agent-cli/scripts/oauth-through-tls.mjs "https://127.0.0.1:$mcp_tls_port/mcp" "https://127.0.0.1:$auth_tls_port" "$script_secret"

# The gateways take access tokens: the agents use one, from client credentials (an hour long).
MCP_GATEWAY_TOKEN=$(curl -fsS --cacert "$tlsdir/cert.pem" -u "agentwire-scripts:$script_secret" -d grant_type=client_credentials \
  -d "resource=$CHAOS_MCP_URL" -d "scope=emails:read digest:read replies:write" "https://127.0.0.1:$auth_tls_port/token" |
  node -e 'let s="";process.stdin.on("data",c=>s+=c).on("end",()=>console.log(JSON.parse(s).access_token))')
export MCP_GATEWAY_TOKEN
if [ "${SCALE_MEASURE:-1}" != 0 ]; then
  log "measurements for docs/SCALING.md (before any fault)"
  node scripts/scale-measure.mjs
fi

log "agents and faults"
if ! node scripts/chaos.mjs; then
  # Enough to diagnose from the CI log alone: which replica is still up, and what each one said
  # last that was not an ordinary request line (warnings, errors, a crash's stack trace).
  log "a check failed: the replicas now, and their last warnings, errors and crash output"
  for id in $(dc ps -q); do
    docker inspect --format '{{.Name}} {{.State.Status}} exit={{.State.ExitCode}} restarts={{.RestartCount}} health={{if .State.Health}}{{.State.Health.Status}}{{end}}' "$id"
  done
  for service in gateway-1 gateway-2 gateway-3 toy-api-1 toy-api-2 auth-server lb; do
    echo "-- $service"
    dc logs --no-color "$service" 2>&1 | grep -v -E '"level":(10|20|30),' | tail -n 25 || true
  done
  exit 1
fi
