#!/usr/bin/env bash
# Stop what deploy/start.sh started (same KLRL_PORT / KLRL_RUN_DIR as when it was started).
set -uo pipefail
PORT=${KLRL_PORT:-8501}
RUN_DIR=${KLRL_RUN_DIR:-/tmp/klrl-deploy-$PORT}
if [[ ! -f "$RUN_DIR/start.pid" ]]; then
    echo "nothing to stop in $RUN_DIR" >&2
    exit 0
fi
main=$(cat "$RUN_DIR/start.pid")
kill -TERM "$main" 2>/dev/null || true
# start.sh stops its children within 15 s; wait a little longer, then stop any left by pid
for _ in $(seq 200); do
    kill -0 "$main" 2>/dev/null || break
    sleep 0.1
done
for f in "$RUN_DIR"/streamlit-*.pid "$RUN_DIR"/haproxy.pid; do
    [[ -f "$f" ]] || continue
    kill -KILL "$(cat "$f")" 2>/dev/null || true
    rm -f "$f"
done
rm -f "$RUN_DIR/start.pid" "$RUN_DIR/ready"
echo "stopped ($RUN_DIR)"
