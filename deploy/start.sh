#!/usr/bin/env bash
# Start N Streamlit processes of the app on consecutive loopback ports and HAProxy in front
# of them, with sticky sessions, all sharing one class store. Runs in the foreground (like a
# service's main process): Ctrl-C or SIGTERM stops everything it started. A Streamlit process
# that dies is started again on its port (its students reconnect, through the proxy, to the
# others meanwhile; their class is in the shared store); if HAProxy exits, it stops the rest
# and exits non-zero, so systemd or a container runtime can restart the whole set.
#
#   deploy/start.sh N                    # N >= 1 processes, proxy on 0.0.0.0:8501
#   KLRL_PORT=8080 deploy/start.sh 4
#   deploy/stop.sh                       # from another shell (same KLRL_PORT / KLRL_RUN_DIR)
#
# Settings (environment):
#   KLRL_PORT           port the proxy listens on (default 8501)
#   KLRL_BIND           address the proxy listens on (default 0.0.0.0; 127.0.0.1 for tests)
#   KLRL_BACKEND_PORT   first Streamlit port; the N processes use it and the next N-1
#                       ports, on 127.0.0.1 only (default 8511)
#   KLRL_APP_DIR        the app's folder (default: this script's parent folder)
#   KLRL_PYTHON         Python with the app's requirements (default: $KLRL_APP_DIR/.venv's,
#                       else python3 on PATH)
#   KLRL_RUN_DIR        pid files, logs, rendered haproxy.cfg
#                       (default /tmp/klrl-deploy-$KLRL_PORT)
#   KLRL_STREAMLIT_ARGS extra `streamlit run` options, e.g.
#                       "--server.disconnectedSessionTTL 300"
#   KLRL_PROXY_LOG=1    HAProxy logs every request to its log file
#   KLRL_HEALTH_TIMEOUT seconds to wait for each process's health check (default 120)
#   KLRL_RESTART=0      a Streamlit process that exits stops everything (default 1: it is
#                       started again)
# The class store, passed to every process so that they all share one class:
#   KLRL_CLASS_DB_URL   a PostgreSQL URL (postgresql+psycopg://user:password@host/db), or
#   KLRL_DATA_DIR       the folder of the SQLite file class.db (WAL mode; default
#                       $KLRL_APP_DIR/.klrl-data). One machine only: SQLite over a network
#                       file system is not safe; several machines need PostgreSQL.
set -euo pipefail

N=${1:-}
if ! [[ "$N" =~ ^[1-9][0-9]*$ ]]; then
    echo "usage: $0 N   (N >= 1 Streamlit processes behind HAProxy)" >&2
    exit 2
fi
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
APP_DIR=$(cd "${KLRL_APP_DIR:-$here/..}" && pwd)
PORT=${KLRL_PORT:-8501}
BIND=${KLRL_BIND:-0.0.0.0}
FIRST=${KLRL_BACKEND_PORT:-8511}
RUN_DIR=${KLRL_RUN_DIR:-/tmp/klrl-deploy-$PORT}
HEALTH_TIMEOUT=${KLRL_HEALTH_TIMEOUT:-120}
if [[ -n "${KLRL_PYTHON:-}" ]]; then
    PY=$KLRL_PYTHON
elif [[ -x "$APP_DIR/.venv/bin/python" ]]; then
    PY=$APP_DIR/.venv/bin/python
else
    PY=python3
fi
HAPROXY=${KLRL_HAPROXY:-haproxy}
command -v "$HAPROXY" >/dev/null || { echo "haproxy not found (Debian: apt-get install haproxy)" >&2; exit 2; }
read -r -a EXTRA <<< "${KLRL_STREAMLIT_ARGS:-}"

# The class store: one for every process (exported: each process reads it from its environment)
if [[ -n "${KLRL_CLASS_DB_URL:-}" ]]; then
    export KLRL_CLASS_DB_URL
    unset KLRL_DATA_DIR
else
    export KLRL_DATA_DIR=${KLRL_DATA_DIR:-$APP_DIR/.klrl-data}
    mkdir -p "$KLRL_DATA_DIR"
    KLRL_DATA_DIR=$(cd "$KLRL_DATA_DIR" && pwd)
fi

mkdir -p "$RUN_DIR"
if [[ -f "$RUN_DIR/start.pid" ]] && kill -0 "$(cat "$RUN_DIR/start.pid")" 2>/dev/null; then
    echo "already running (pid $(cat "$RUN_DIR/start.pid"), $RUN_DIR); deploy/stop.sh first" >&2
    exit 1
fi
rm -f "$RUN_DIR"/*.pid "$RUN_DIR/ready"
echo $$ > "$RUN_DIR/start.pid"

# One secret for every process: the XSRF cookie one process signs is then valid on all of
# them (a student re-routed after a process failure keeps working). Kept out of the command
# line, so `ps` does not show it.
export STREAMLIT_SERVER_COOKIE_SECRET=${STREAMLIT_SERVER_COOKIE_SECRET:-$(head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n')}

# Make the store's tables now (and, for SQLite, its WAL mode, which the file keeps), and say
# which store the processes share; stop here if it cannot be reached.
(cd "$APP_DIR" && "$PY" - > "$RUN_DIR/store.log" 2>&1 <<'PYEOF'
import sqlalchemy as sa
from klrl_app.classroom import store
s = store.get_store()
if s.sqlite:
    with s.engine.connect() as conn:
        mode = conn.exec_driver_sql("PRAGMA journal_mode").scalar()
    assert mode == "wal", f"{s.engine.url.database} is in {mode} mode, not WAL"
    print(f"class store: SQLite {s.engine.url.database} (WAL)")
else:
    print(f"class store: {s.engine.url.render_as_string(hide_password=True)}")
PYEOF
) || { echo "the class store cannot be reached:" >&2; tail -n 5 "$RUN_DIR/store.log" >&2
       rm -f "$RUN_DIR/start.pid"; exit 1; }
cat "$RUN_DIR/store.log"

children=()
stopping=0
stop_all() {
    stopping=1
    trap - INT TERM
    local pid
    for pid in "${children[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
    # bounded wait: 15 s, then SIGKILL whatever is left
    for _ in $(seq 150); do
        local alive=0
        for pid in "${children[@]}"; do kill -0 "$pid" 2>/dev/null && alive=1; done
        [[ $alive == 0 ]] && break
        sleep 0.1
    done
    for pid in "${children[@]}"; do kill -KILL "$pid" 2>/dev/null || true; done
    rm -f "$RUN_DIR"/*.pid "$RUN_DIR/ready"
}
trap 'stop_all; exit 143' INT TERM
trap 'if [[ $stopping == 0 ]]; then stop_all; fi' EXIT

start_one() {   # start_one PORT: one Streamlit process; its pid in $! and the pid file
    local port=$1
    (cd "$APP_DIR" && exec "$PY" -m streamlit run app.py \
        --server.port "$port" --server.address 127.0.0.1 --server.headless true \
        --server.fileWatcherType none --browser.gatherUsageStats false "${EXTRA[@]}") \
        >> "$RUN_DIR/streamlit-$port.log" 2>&1 < /dev/null &
    echo $! > "$RUN_DIR/streamlit-$port.pid"
}

servers=""
for ((i = 0; i < N; i++)); do
    port=$((FIRST + i))
    start_one "$port"
    children+=($!)
    servers+="    server s$((i + 1)) 127.0.0.1:$port check cookie s$((i + 1))"$'\n'
done

for ((i = 0; i < N; i++)); do
    port=$((FIRST + i))
    deadline=$((SECONDS + HEALTH_TIMEOUT))
    until "$PY" -c "import sys, urllib.request; urllib.request.urlopen('http://127.0.0.1:$port/_stcore/health', timeout=2)" 2>/dev/null; do
        if ! kill -0 "${children[$i]}" 2>/dev/null; then
            echo "streamlit on port $port exited; its log:" >&2
            tail -n 30 "$RUN_DIR/streamlit-$port.log" >&2
            exit 1
        fi
        if ((SECONDS > deadline)); then
            echo "streamlit on port $port not healthy after $HEALTH_TIMEOUT s" >&2
            exit 1
        fi
        sleep 0.3
    done
done

log=""
[[ "${KLRL_PROXY_LOG:-0}" == 1 ]] && log="    log stdout format raw local0"$'\n'"    # (request log)"
cfg=$RUN_DIR/haproxy.cfg
"$PY" - "$here/haproxy.cfg.in" "$cfg" "$BIND" "$PORT" "$servers" "$log" <<'PYEOF'
import sys
src, dst, bind, port, servers, log = sys.argv[1:]
text = open(src).read()
for key, value in (("@BIND@", bind), ("@PORT@", port), ("@SERVERS@", servers.rstrip("\n")),
                   ("@LOG@", log)):
    text = text.replace(key, value)
open(dst, "w").write(text)
PYEOF
if [[ -n "$log" ]]; then
    sed -i 's/^defaults$/defaults\n    log global\n    option httplog/' "$cfg"
fi
"$HAPROXY" -c -f "$cfg" > "$RUN_DIR/haproxy-check.log" 2>&1 || { cat "$RUN_DIR/haproxy-check.log" >&2; exit 1; }
"$HAPROXY" -db -f "$cfg" > "$RUN_DIR/haproxy.log" 2>&1 < /dev/null &
children+=($!)
echo $! > "$RUN_DIR/haproxy.pid"

deadline=$((SECONDS + 30))
until "$PY" -c "import urllib.request; urllib.request.urlopen('http://127.0.0.1:$PORT/_stcore/health', timeout=2)" 2>/dev/null; do
    if ((SECONDS > deadline)) || ! kill -0 "${children[-1]}" 2>/dev/null; then
        echo "haproxy did not come up on port $PORT; its log:" >&2
        tail -n 30 "$RUN_DIR/haproxy.log" >&2
        exit 1
    fi
    sleep 0.2
done
touch "$RUN_DIR/ready"
echo "ready: http://$BIND:$PORT/ -> $N Streamlit process(es) on 127.0.0.1:$FIRST-$((FIRST + N - 1)) (run dir $RUN_DIR)"

# Stay in the foreground: a Streamlit process that exits is started again on its port (after
# a second, so a process that cannot start does not spin); HAProxy exiting stops everything.
set +e
proxy=${children[-1]}
while true; do
    wait -n -p gone "${children[@]}"
    code=$?
    [[ $stopping == 1 ]] && exit 143
    if [[ "$gone" == "$proxy" || "${KLRL_RESTART:-1}" != 1 ]]; then
        echo "a child process exited (pid $gone, code $code); stopping the others" >&2
        stop_all
        exit 1
    fi
    for ((i = 0; i < N; i++)); do
        if [[ "${children[$i]}" == "$gone" ]]; then
            port=$((FIRST + i))
            echo "$(date '+%F %T') streamlit on port $port exited (code $code); starting it again" >&2
            sleep 1
            start_one "$port"
            children[$i]=$!
        fi
    done
done
