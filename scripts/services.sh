#!/usr/bin/env bash
# PostgreSQL and Redis for the test run (and nginx for the multi-process
# tests), on loopback, in a throwaway directory; Debian packages.
#
#   scripts/services.sh install   install postgresql, redis-server, nginx if missing
#   scripts/services.sh start     install, then start a private PostgreSQL cluster and a
#                                 Redis on free ports; prints shell assignments:
#                                   BOZKA_TEST_DATABASE_URL=...  BOZKA_TEST_REDIS_URL=...
#   scripts/services.sh env       print the same assignments for running services
#   scripts/services.sh stop      stop both and delete the directory
#   scripts/services.sh restart-postgres
#                                 restart PostgreSQL at once (fast shutdown: open
#                                 connections are cut), same port (the fault test)
#   scripts/services.sh run CMD   start, run CMD with both variables exported, stop
#                                 (even when CMD fails); exits with CMD's status
#
# State lives in $BOZKA_SERVICES_DIR (default /tmp/bozka-services-$UID), so
# `start` twice reuses what runs. Nothing touches the system's own clusters or
# services: PostgreSQL runs as the `postgres` user with a data directory in the
# state folder (as root) or as the caller (not root).
set -euo pipefail

STATE="${BOZKA_SERVICES_DIR:-/tmp/bozka-services-$(id -u)}"
PGDATA="$STATE/pg"
PGSOCK="$STATE/sock"
DBNAME=bozka_test
DBUSER=bozka
DBPASS=bozka-test

log() { echo "services: $*" >&2; }

as_root() {
  if [ "$(id -u)" = 0 ]; then "$@"; else sudo "$@"; fi
}

pg_bin() {
  local dir
  for dir in /usr/lib/postgresql/*/bin; do
    [ -x "$dir/initdb" ] && { echo "$dir"; return 0; }
  done
  return 1
}

install_packages() {
  local missing=()
  pg_bin >/dev/null || missing+=(postgresql)
  command -v redis-server >/dev/null 2>&1 || [ -x /usr/bin/redis-server ] || missing+=(redis-server)
  command -v nginx >/dev/null 2>&1 || [ -x /usr/sbin/nginx ] || missing+=(nginx)
  [ ${#missing[@]} -eq 0 ] && return 0
  log "installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  # Packages must not start their own system services (no init here, or not wanted).
  local policy=/usr/sbin/policy-rc.d created_policy=""
  if [ ! -e "$policy" ]; then
    printf '#!/bin/sh\nexit 101\n' | as_root tee "$policy" >/dev/null
    as_root chmod 755 "$policy"
    created_policy=1
  fi
  local attempt
  for attempt in 1 2 3 4 5 6 7 8 9 10; do
    # Another apt may hold the lock: wait and retry.
    if as_root apt-get update -qq && as_root apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null; then
      break
    fi
    [ "$attempt" = 10 ] && { [ -n "$created_policy" ] && as_root rm -f "$policy"; log "apt-get failed"; exit 1; }
    log "apt-get busy or failed; retrying in 10 s"
    sleep 10
  done
  [ -n "$created_policy" ] && as_root rm -f "$policy"
  return 0
}

free_port() {
  python3 - <<'EOF'
import socket
with socket.socket() as s:
    s.bind(("127.0.0.1", 0))
    print(s.getsockname()[1])
EOF
}

# Run a command as the owner of the cluster.
as_pg() {
  if [ "$(id -u)" = 0 ]; then
    (cd / && runuser -u postgres -- "$@")
  else
    "$@"
  fi
}

pg_running() {
  [ -f "$STATE/pg.port" ] && as_pg "$(pg_bin)/pg_ctl" -D "$PGDATA" status >/dev/null 2>&1
}

redis_running() {
  [ -f "$STATE/redis.port" ] && redis-cli -h 127.0.0.1 -p "$(cat "$STATE/redis.port")" ping 2>/dev/null | grep -q PONG
}

start_postgres() {
  local bin port
  bin="$(pg_bin)"
  if pg_running; then return 0; fi
  mkdir -p "$STATE"
  if [ "$(id -u)" = 0 ]; then chown postgres "$STATE"; chmod 755 "$STATE"; fi
  if [ ! -f "$PGDATA/PG_VERSION" ]; then
    rm -rf "$PGDATA"
    as_pg mkdir -p "$PGDATA" "$PGSOCK"
    as_pg "$bin/initdb" -D "$PGDATA" -A trust -U postgres -E UTF8 --locale=C.UTF-8 >/dev/null
  fi
  as_pg mkdir -p "$PGSOCK"
  port="$(free_port)"
  # A test server: no durability needed (fsync off), loopback only.
  as_pg "$bin/pg_ctl" -D "$PGDATA" -l "$STATE/pg.log" -w -t 60 start -o \
    "-c listen_addresses=127.0.0.1 -p $port -k $PGSOCK -c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=300 -c shared_buffers=128MB" >/dev/null
  echo "$port" >"$STATE/pg.port"
  as_pg "$bin/psql" -h "$PGSOCK" -p "$port" -U postgres -qAt -v ON_ERROR_STOP=1 -d postgres >/dev/null <<EOF
DO \$\$ BEGIN
  IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = '$DBUSER') THEN
    CREATE ROLE $DBUSER LOGIN PASSWORD '$DBPASS' CREATEDB;
  END IF;
END \$\$;
EOF
  if ! as_pg "$bin/psql" -h "$PGSOCK" -p "$port" -U postgres -qAt -d postgres \
      -c "SELECT 1 FROM pg_database WHERE datname = '$DBNAME'" | grep -q 1; then
    as_pg "$bin/createdb" -h "$PGSOCK" -p "$port" -U postgres -O "$DBUSER" "$DBNAME"
  fi
  log "PostgreSQL on 127.0.0.1:$port ($PGDATA)"
}

start_redis() {
  if redis_running; then return 0; fi
  mkdir -p "$STATE"
  local port
  port="$(free_port)"
  redis-server --bind 127.0.0.1 --port "$port" --save '' --appendonly no --daemonize yes \
    --pidfile "$STATE/redis.pid" --logfile "$STATE/redis.log" --dir "$STATE" >/dev/null
  echo "$port" >"$STATE/redis.port"
  local i
  for i in $(seq 1 50); do
    redis_running && { log "Redis on 127.0.0.1:$port"; return 0; }
    sleep 0.1
  done
  log "Redis did not start; see $STATE/redis.log"
  exit 1
}

print_env() {
  echo "BOZKA_TEST_DATABASE_URL=postgresql+psycopg://$DBUSER:$DBPASS@127.0.0.1:$(cat "$STATE/pg.port")/$DBNAME"
  echo "BOZKA_TEST_REDIS_URL=redis://127.0.0.1:$(cat "$STATE/redis.port")/0"
}

restart_postgres() {
  pg_running || { log "PostgreSQL is not running"; exit 1; }
  # pg_ctl restart keeps the options the server was started with.
  as_pg "$(pg_bin)/pg_ctl" -D "$PGDATA" -l "$STATE/pg.log" -m fast -w -t 60 restart >/dev/null
  log "PostgreSQL restarted"
}

stop_all() {
  if [ -f "$STATE/redis.port" ]; then
    redis-cli -h 127.0.0.1 -p "$(cat "$STATE/redis.port")" shutdown nosave >/dev/null 2>&1 || true
  fi
  if [ -f "$PGDATA/PG_VERSION" ]; then
    as_pg "$(pg_bin)/pg_ctl" -D "$PGDATA" -m fast -w stop >/dev/null 2>&1 || true
  fi
  rm -rf "$STATE"
  log "stopped"
}

case "${1:-}" in
  install) install_packages ;;
  start) install_packages; start_postgres; start_redis; print_env ;;
  env) pg_running && redis_running || { log "not running (scripts/services.sh start)"; exit 1; }; print_env ;;
  stop) stop_all ;;
  restart-postgres) restart_postgres ;;
  run)
    shift
    install_packages; start_postgres; start_redis
    set -a; eval "$(print_env)"; set +a
    trap stop_all EXIT
    status=0
    "$@" || status=$?
    exit "$status"
    ;;
  *) echo "usage: $0 install|start|env|stop|restart-postgres|run CMD..." >&2; exit 2 ;;
esac
