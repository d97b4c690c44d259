#!/usr/bin/env bash
# Prepares THIS kind of machine (Debian 12, root, no Docker engine, no image registry) to run
# agentwire's Docker files unchanged. On a normal Docker host you need none of this: `docker
# compose up` pulls node:20-bookworm-slim and redis:7-bookworm from Docker Hub.
#
# What it does, each step only if needed:
#   1. installs Debian's docker.io, docker-compose (the v1 CLI) and debootstrap;
#   2. starts dockerd in the background, publishing ports on 127.0.0.1 by default
#      (log: /var/log/agentwire-dockerd.log);
#   3. makes local stand-ins for the base images the Dockerfile and compose files name,
#      from Debian bookworm with debootstrap: node:20-bookworm-slim (this machine's Node 20,
#      npm and the machine's CA bundle, so that `npm install` inside a build reaches the
#      registry through this network's TLS proxy), redis:7-bookworm (Debian's redis-server,
#      with a /data the redis user owns, as in the official image) and haproxy:2.6-bookworm
#      (Debian's HAProxy 2.6, for docker-compose.scale.yml's balancer), and prom/prometheus:v2.42.0
#      (Debian's Prometheus 2.42, for docker-compose.yml's observability profile).
set -euo pipefail

NODE_IMAGE=node:20-bookworm-slim
REDIS_IMAGE=redis:7-bookworm
HAPROXY_IMAGE=haproxy:2.6-bookworm
PROMETHEUS_IMAGE=prom/prometheus:v2.42.0
CA_BUNDLE=/etc/ssl/certs/ca-certificates.crt
WORK=${AGENTWIRE_DOCKER_WORK:-/var/tmp/agentwire-docker-host}

log() { printf '== %s\n' "$*" >&2; }
[ "$(id -u)" = 0 ] || { echo "prepare-docker-host: run as root (it installs packages and starts dockerd)" >&2; exit 2; }

missing=()
command -v dockerd >/dev/null || missing+=(docker.io)
command -v docker-compose >/dev/null || missing+=(docker-compose)
command -v debootstrap >/dev/null || missing+=(debootstrap)
if [ ${#missing[@]} -gt 0 ]; then
  log "installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}" iptables >/dev/null
fi

if ! docker info >/dev/null 2>&1; then
  log "starting dockerd"
  # --ip: ports that containers publish without an address (testcontainers publishes that
  # way) are bound on loopback, not on every interface.
  nohup dockerd --ip 127.0.0.1 >/var/log/agentwire-dockerd.log 2>&1 &
  for _ in $(seq 1 100); do docker info >/dev/null 2>&1 && break; sleep 0.2; done
  docker info >/dev/null 2>&1 || { echo "dockerd did not start; see /var/log/agentwire-dockerd.log" >&2; exit 1; }
fi

have_image() { docker image inspect "$1" >/dev/null 2>&1; }

# A redis stand-in made before it had /data (for the append-only file) is made again.
if have_image "$REDIS_IMAGE" && ! docker run --rm --entrypoint /bin/sh "$REDIS_IMAGE" -c 'test -d /data' 2>/dev/null; then
  log "remaking $REDIS_IMAGE: it has no /data"
  docker rmi -f "$REDIS_IMAGE" >/dev/null
fi

# The Debian mirror apt already uses on this machine (deb822 or one-line sources), or
# DEBIAN_MIRROR. No address is written into this script: a machine that reaches Debian's packages
# has its mirror in its apt sources.
mirror() {
  local uri=${DEBIAN_MIRROR:-}
  # deb822: the first stanza for bookworm with the main component (not, say, Docker's own repo).
  [ -n "$uri" ] || uri=$(cat /etc/apt/sources.list.d/*.sources 2>/dev/null | awk '
    BEGIN { RS = "" }
    /(^|\n)Suites:[^\n]*bookworm([ \t\n]|$)/ && /(^|\n)Components:[^\n]*main/ {
      if (match($0, /URIs:[ \t]*[^ \t\n]+/)) { u = substr($0, RSTART, RLENGTH); sub(/URIs:[ \t]*/, "", u); print u; exit }
    }' || true)
  # One-line sources: `deb [options] URI bookworm main ...`.
  [ -n "$uri" ] || uri=$(cat /etc/apt/sources.list /etc/apt/sources.list.d/*.list 2>/dev/null |
    sed -E -n 's/^deb[ \t]+(\[[^]]*\][ \t]+)?([^ \t]+)[ \t]+bookworm[ \t].*\bmain\b.*/\2/p' | head -n1 || true)
  if [ -z "$uri" ]; then
    echo "prepare-docker-host: no Debian mirror for bookworm in /etc/apt/sources.list or /etc/apt/sources.list.d/, so the local base images cannot be made. Set DEBIAN_MIRROR to the URL of a Debian mirror this machine reaches." >&2
    return 1
  fi
  echo "$uri"
}

if ! have_image "$NODE_IMAGE" || ! have_image "$REDIS_IMAGE" || ! have_image "$HAPROXY_IMAGE" || ! have_image "$PROMETHEUS_IMAGE"; then
  MIRROR=$(mirror) || exit 1
fi

base_root() {
  local root=$WORK/bookworm
  if [ ! -x "$root/bin/sh" ]; then
    log "debootstrap bookworm (minbase) from $MIRROR"
    rm -rf "$root" && mkdir -p "$WORK"
    debootstrap --variant=minbase bookworm "$root" "$MIRROR" >/dev/null
    rm -rf "$root"/var/cache/apt/archives/*.deb "$root"/var/lib/apt/lists/*
  fi
  echo "$root"
}

if ! have_image "$NODE_IMAGE"; then
  base=$(base_root)
  root=$WORK/node
  log "making $NODE_IMAGE from this machine's Node $(node --version)"
  rm -rf "$root" && cp -a "$base" "$root"
  mkdir -p "$root/usr/local/bin" "$root/usr/local/lib/node_modules" "$root/etc/ssl/certs"
  cp "$(command -v node)" "$root/usr/local/bin/node"
  npm_root=$(npm root -g)
  for pkg in npm corepack; do
    [ -d "$npm_root/$pkg" ] && cp -a "$npm_root/$pkg" "$root/usr/local/lib/node_modules/"
  done
  ln -sf ../lib/node_modules/npm/bin/npm-cli.js "$root/usr/local/bin/npm"
  ln -sf ../lib/node_modules/npm/bin/npx-cli.js "$root/usr/local/bin/npx"
  [ -d "$root/usr/local/lib/node_modules/corepack" ] &&
    ln -sf ../lib/node_modules/corepack/dist/corepack.js "$root/usr/local/bin/corepack"
  cp "$CA_BUNDLE" "$root/etc/ssl/certs/ca-certificates.crt"
  # The official image has a `node` user (uid 1000); the Dockerfile runs as it.
  chroot "$root" groupadd --gid 1000 node
  chroot "$root" useradd --uid 1000 --gid node --shell /bin/bash --create-home node
  tar -C "$root" -c . | docker import \
    -c "ENV NODE_EXTRA_CA_CERTS=$CA_BUNDLE" \
    -c 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
    -c 'CMD ["node"]' - "$NODE_IMAGE" >/dev/null
  rm -rf "$root"
fi

if ! have_image "$REDIS_IMAGE"; then
  base=$(base_root)
  root=$WORK/redis
  log "making $REDIS_IMAGE from Debian's redis-server"
  rm -rf "$root" && cp -a "$base" "$root"
  echo "deb $MIRROR bookworm main" >"$root/etc/apt/sources.list"
  cp /etc/resolv.conf "$root/etc/resolv.conf"
  chroot "$root" apt-get update -qq
  DEBIAN_FRONTEND=noninteractive chroot "$root" apt-get install -y -qq --no-install-recommends redis-server >/dev/null
  rm -rf "$root"/var/lib/apt/lists/* "$root"/var/cache/apt/archives/*.deb
  chroot "$root" install -d -o redis -g redis /data
  tar -C "$root" -c . | docker import \
    -c 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
    -c 'WORKDIR /data' \
    -c 'EXPOSE 6379' \
    -c 'CMD ["redis-server", "--protected-mode", "no"]' - "$REDIS_IMAGE" >/dev/null
  rm -rf "$root"
fi

if ! have_image "$HAPROXY_IMAGE"; then
  base=$(base_root)
  root=$WORK/haproxy
  log "making $HAPROXY_IMAGE from Debian's haproxy"
  rm -rf "$root" && cp -a "$base" "$root"
  echo "deb $MIRROR bookworm main" >"$root/etc/apt/sources.list"
  cp /etc/resolv.conf "$root/etc/resolv.conf"
  chroot "$root" apt-get update -qq
  DEBIAN_FRONTEND=noninteractive chroot "$root" apt-get install -y -qq --no-install-recommends haproxy >/dev/null
  rm -rf "$root"/var/lib/apt/lists/* "$root"/var/cache/apt/archives/*.deb
  # The official image reads /usr/local/etc/haproxy/haproxy.cfg and runs as the haproxy user.
  mkdir -p "$root/usr/local/etc/haproxy"
  tar -C "$root" -c . | docker import \
    -c 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
    -c 'USER haproxy' \
    -c 'CMD ["haproxy", "-W", "-db", "-f", "/usr/local/etc/haproxy/haproxy.cfg"]' - "$HAPROXY_IMAGE" >/dev/null
  rm -rf "$root"
fi

if ! have_image "$PROMETHEUS_IMAGE"; then
  base=$(base_root)
  root=$WORK/prometheus
  log "making $PROMETHEUS_IMAGE from Debian's prometheus"
  rm -rf "$root" && cp -a "$base" "$root"
  echo "deb $MIRROR bookworm main" >"$root/etc/apt/sources.list"
  cp /etc/resolv.conf "$root/etc/resolv.conf"
  chroot "$root" apt-get update -qq
  DEBIAN_FRONTEND=noninteractive chroot "$root" apt-get install -y -qq --no-install-recommends prometheus >/dev/null
  rm -rf "$root"/var/lib/apt/lists/* "$root"/var/cache/apt/archives/*.deb
  # The official image: /bin/prometheus as its entrypoint, run as nobody.
  [ -e "$root/bin/prometheus" ] || ln -s /usr/bin/prometheus "$root/bin/prometheus"
  tar -C "$root" -c . | docker import \
    -c 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
    -c 'USER nobody' \
    -c 'EXPOSE 9090' \
    -c 'ENTRYPOINT ["/bin/prometheus"]' \
    -c 'CMD ["--config.file=/etc/prometheus/prometheus.yml", "--storage.tsdb.path=/prometheus"]' - "$PROMETHEUS_IMAGE" >/dev/null
  rm -rf "$root"
fi

if [ -f /.dockerenv ]; then
  # testcontainers takes a machine with /.dockerenv for a container and then looks for the
  # stack at the bridge's gateway address; ports here are on loopback.
  log "this machine has /.dockerenv: export TESTCONTAINERS_HOST_OVERRIDE=127.0.0.1 before the container tests"
fi
log "ready: $(docker version --format 'engine {{.Server.Version}}'), images: $NODE_IMAGE, $REDIS_IMAGE, $HAPROXY_IMAGE, $PROMETHEUS_IMAGE"
