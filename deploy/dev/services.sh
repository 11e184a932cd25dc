#!/usr/bin/env bash
# Installs (if missing) and starts, on loopback, the services the tests need:
# Redis (Debian redis-server) and a MongoDB-compatible server (SecantusDB, a test
# server from PyPI; production uses real MongoDB via docker compose); it also
# installs headless Chromium and a CJK font for the UI and report tests.
#
#   deploy/dev/services.sh start     # prints `export ...` lines; use: eval "$(deploy/dev/services.sh start)"
#   deploy/dev/services.sh stop
#   deploy/dev/services.sh status
#
# It also starts a real 3-primary Redis Cluster (redis-server's own cluster mode,
# one process per node) for the cluster suites and the cluster end-to-end run.
#
# Ports: COPYHOUND_TEST_REDIS_PORT (default 6390), COPYHOUND_TEST_MONGO_PORT
# (default 27027), COPYHOUND_TEST_REDIS_CLUSTER_PORT (first of three, default
# 6391) — not the standard ones, so a developer's own servers are untouched.
set -euo pipefail

STATE_DIR="${COPYHOUND_SERVICES_DIR:-${TMPDIR:-/tmp}/copyhound-services}"
REDIS_PORT="${COPYHOUND_TEST_REDIS_PORT:-6390}"
MONGO_PORT="${COPYHOUND_TEST_MONGO_PORT:-27027}"
CLUSTER_PORT="${COPYHOUND_TEST_REDIS_CLUSTER_PORT:-6391}"
SMTP_PORT="${COPYHOUND_TEST_SMTP_PORT:-2526}"
CLUSTER_PORTS="$CLUSTER_PORT $((CLUSTER_PORT + 1)) $((CLUSTER_PORT + 2))"
VENV="${COPYHOUND_MONGO_VENV:-${TMPDIR:-/tmp}/copyhound-mongo-venv}"
SECANTUS_VERSION="0.7.0b3"
# The independent WARC reader the evidence-package tests check with.
WARCIO_VERSION="1.8.1"
# The SMTP sink the e-mail alert tests deliver to (it keeps a Maildir).
AIOSMTPD_VERSION="1.4.6"

log() { echo "services: $*" >&2; }

as_root() {
  if [ "$(id -u)" = 0 ]; then "$@"; elif command -v sudo >/dev/null; then sudo "$@"; else
    log "need root to run: $*"; return 1; fi
}

install_redis() {
  command -v redis-server >/dev/null && return 0
  log "installing redis-server (apt)"
  as_root env DEBIAN_FRONTEND=noninteractive apt-get update -qq >&2
  as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq redis-server >&2
}

install_browser() {
  # Headless Chromium and a CJK font: UI and report tests render pages with them.
  if command -v chromium >/dev/null && fc-list 2>/dev/null | grep -qi "wenquanyi"; then return 0; fi
  log "installing chromium and fonts-wqy-microhei (apt)"
  as_root env DEBIAN_FRONTEND=noninteractive apt-get update -qq >&2
  as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium fonts-wqy-microhei >&2
}

install_mongo() {
  if [ -x "$VENV/bin/python" ] && "$VENV/bin/python" -c "import secantus, warcio, aiosmtpd" 2>/dev/null; then return 0; fi
  log "installing secantusdb $SECANTUS_VERSION, warcio $WARCIO_VERSION and aiosmtpd $AIOSMTPD_VERSION (pip, venv $VENV)"
  python3 -m venv "$VENV" >&2
  "$VENV/bin/pip" install -q --disable-pip-version-check "secantusdb==$SECANTUS_VERSION" \
    "warcio==$WARCIO_VERSION" "aiosmtpd==$AIOSMTPD_VERSION" >&2
}

wait_port() { # name port seconds
  local name=$1 port=$2 deadline=$((SECONDS + $3))
  until (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; do
    if [ $SECONDS -ge $deadline ]; then log "$name did not answer on 127.0.0.1:$port"; return 1; fi
    sleep 0.2
  done
}

cluster_ok() {
  redis-cli -p "$CLUSTER_PORT" cluster info 2>/dev/null | grep -q "cluster_state:ok"
}

start_cluster() {
  cluster_ok && return 0
  local nodes=() port dir
  for port in $CLUSTER_PORTS; do
    redis-cli -p "$port" shutdown nosave >/dev/null 2>&1 || true
    dir="$STATE_DIR/cluster/$port"
    rm -rf "$dir"; mkdir -p "$dir"
    redis-server --port "$port" --bind 127.0.0.1 --cluster-enabled yes \
      --cluster-config-file "$dir/nodes.conf" --cluster-node-timeout 2000 --dir "$dir" \
      --save "" --appendonly no --daemonize yes --pidfile "$dir/redis.pid" \
      --logfile "$dir/redis.log" >&2
    wait_port "redis cluster node" "$port" 20
    until redis-cli -p "$port" ping 2>/dev/null | grep -q PONG; do sleep 0.2; done
    nodes+=("127.0.0.1:$port")
  done
  redis-cli --cluster create "${nodes[@]}" --cluster-replicas 0 --cluster-yes >&2
  local deadline=$((SECONDS + 30))
  until cluster_ok; do
    if [ $SECONDS -ge $deadline ]; then log "redis cluster did not reach cluster_state:ok"; return 1; fi
    sleep 0.2
  done
}

start() {
  mkdir -p "$STATE_DIR"
  install_redis
  install_mongo
  install_browser
  if ! redis-cli -p "$REDIS_PORT" ping >/dev/null 2>&1; then
    redis-server --port "$REDIS_PORT" --bind 127.0.0.1 --save "" --appendonly no \
      --daemonize yes --pidfile "$STATE_DIR/redis.pid" --logfile "$STATE_DIR/redis.log" >&2
  fi
  wait_port redis "$REDIS_PORT" 20
  until redis-cli -p "$REDIS_PORT" ping 2>/dev/null | grep -q PONG; do sleep 0.2; done
  if ! (exec 3<>"/dev/tcp/127.0.0.1/$MONGO_PORT") 2>/dev/null; then
    nohup "$VENV/bin/python" -m secantus --host 127.0.0.1 --port "$MONGO_PORT" --storage-path :memory: \
      --log-level WARNING >"$STATE_DIR/mongo.log" 2>&1 &
    echo $! >"$STATE_DIR/mongo.pid"
  fi
  if ! (exec 3<>"/dev/tcp/127.0.0.1/$SMTP_PORT") 2>/dev/null; then
    mkdir -p "$STATE_DIR/maildir/tmp" "$STATE_DIR/maildir/new" "$STATE_DIR/maildir/cur"
    nohup "$VENV/bin/python" -m aiosmtpd -n -l "127.0.0.1:$SMTP_PORT" \
      -c aiosmtpd.handlers.Mailbox "$STATE_DIR/maildir" >"$STATE_DIR/smtp.log" 2>&1 &
    echo $! >"$STATE_DIR/smtp.pid"
  fi
  start_cluster
  wait_port mongo "$MONGO_PORT" 60
  wait_port smtp "$SMTP_PORT" 30
  log "redis on 127.0.0.1:$REDIS_PORT, redis cluster on 127.0.0.1:${CLUSTER_PORTS// /,}, mongodb-compatible server on 127.0.0.1:$MONGO_PORT"
  echo "export COPYHOUND_TEST_REDIS_URL=redis://127.0.0.1:$REDIS_PORT"
  echo "export COPYHOUND_TEST_REDIS_CLUSTER_URL=redis://127.0.0.1:$CLUSTER_PORT"
  echo "export COPYHOUND_TEST_MONGODB_URL=mongodb://127.0.0.1:$MONGO_PORT"
  echo "export COPYHOUND_TEST_WARCIO=$VENV/bin/warcio"
  echo "export COPYHOUND_TEST_SMTP_URL=smtp://127.0.0.1:$SMTP_PORT"
  echo "export COPYHOUND_TEST_SMTP_MAILDIR=$STATE_DIR/maildir"
}

stop() {
  redis-cli -p "$REDIS_PORT" shutdown nosave >/dev/null 2>&1 || true
  for port in $CLUSTER_PORTS; do redis-cli -p "$port" shutdown nosave >/dev/null 2>&1 || true; done
  local name pid
  for name in mongo smtp; do
    [ -f "$STATE_DIR/$name.pid" ] || continue
    pid=$(cat "$STATE_DIR/$name.pid")
    kill "$pid" 2>/dev/null || true
    for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    rm -f "$STATE_DIR/$name.pid"
  done
  log "stopped"
}

status() {
  redis-cli -p "$REDIS_PORT" ping 2>/dev/null || echo "redis: down"
  cluster_ok && echo "redis cluster: ok" || echo "redis cluster: down"
  (exec 3<>"/dev/tcp/127.0.0.1/$MONGO_PORT") 2>/dev/null && echo "mongo: up" || echo "mongo: down"
  (exec 3<>"/dev/tcp/127.0.0.1/$SMTP_PORT") 2>/dev/null && echo "smtp: up" || echo "smtp: down"
}

case "${1:-start}" in
  start) start ;;
  stop) stop ;;
  status) status ;;
  *) echo "usage: $0 start|stop|status" >&2; exit 2 ;;
esac
