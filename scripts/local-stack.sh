#!/usr/bin/env bash
# The compose stack without a container engine, from Debian's packages: redis-server, the MuxWatch
# service, Prometheus with MuxWatch's rules, Alertmanager. Prints the URLs; Ctrl-C (or SIGTERM, for a
# run in the background, where SIGINT arrives ignored) stops everything and leaves nothing running. Ports can be moved with REDIS_PORT, MUXWATCH_PORT, PROMETHEUS_PORT and
# ALERTMANAGER_PORT (defaults 6379, 9401, 9090, 9093).
#   apt-get install redis-server prometheus prometheus-alertmanager   # once
#   scripts/local-stack.sh
set -euo pipefail
cd "$(dirname "$0")/.."
root="$PWD"

redis_port="${REDIS_PORT:-6379}"
muxwatch_port="${MUXWATCH_PORT:-9401}"
prometheus_port="${PROMETHEUS_PORT:-9090}"
alertmanager_port="${ALERTMANAGER_PORT:-9093}"

for program in redis-server prometheus prometheus-alertmanager dotnet; do
  command -v "$program" >/dev/null || { echo "local-stack: $program is missing (apt-get install redis-server prometheus prometheus-alertmanager; the .NET SDK)" >&2; exit 1; }
done

work="$(mktemp -d -t muxwatch-stack-XXXXXX)"
pids=()
stop() {
  trap - INT TERM EXIT
  echo "local-stack: stopping"
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null || true; done
  rm -rf "$work"
}
trap stop INT TERM EXIT

wait_for() { # url, what
  for _ in $(seq 1 240); do
    if curl -fsS -o /dev/null "$1" 2>/dev/null; then return 0; fi
    sleep 0.5
  done
  echo "local-stack: $2 did not come up ($1); logs in $work" >&2
  exit 1
}

# MUXWATCH_DLL runs a service already built (the tests do); otherwise it is built here.
dll="${MUXWATCH_DLL:-src/MuxWatch.Tool/bin/Release/net10.0/MuxWatch.Tool.dll}"
if [ -z "${MUXWATCH_DLL:-}" ]; then
  echo "local-stack: building MuxWatch"
  dotnet build src/MuxWatch.Tool -c Release -nologo -v quiet >"$work/build.log" 2>&1 || { cat "$work/build.log" >&2; exit 1; }
fi

redis-server --port "$redis_port" --bind 127.0.0.1 --save "" --appendonly no --dir "$work" \
  --latency-monitor-threshold 100 --enable-debug-command local >"$work/redis.log" 2>&1 &
pids+=($!)

dotnet "$dll" --urls "http://127.0.0.1:$muxwatch_port" \
  --MuxWatch:Targets:0:Name=local --MuxWatch:Targets:0:ConnectionString="127.0.0.1:$redis_port" >"$work/muxwatch.log" 2>&1 &
pids+=($!)

cat >"$work/alertmanager.yml" <<YAML
route:
  receiver: demo
  group_by: [alertname, instance, multiplexer, endpoint]
  group_wait: 5s
  group_interval: 30s
receivers:
  - name: demo
YAML
prometheus-alertmanager --config.file="$work/alertmanager.yml" --storage.path="$work/alertmanager" \
  --web.listen-address="127.0.0.1:$alertmanager_port" --cluster.listen-address= >"$work/alertmanager.log" 2>&1 &
pids+=($!)

cat >"$work/prometheus.yml" <<YAML
global:
  scrape_interval: 5s
  evaluation_interval: 5s
rule_files: ["$root/alerts/muxwatch.rules.yml"]
alerting:
  alertmanagers:
    - static_configs: [{targets: ["127.0.0.1:$alertmanager_port"]}]
scrape_configs:
  - job_name: muxwatch
    static_configs: [{targets: ["127.0.0.1:$muxwatch_port"]}]
YAML
prometheus --config.file="$work/prometheus.yml" --storage.tsdb.path="$work/prometheus" \
  --web.listen-address="127.0.0.1:$prometheus_port" >"$work/prometheus.log" 2>&1 &
pids+=($!)

wait_for "http://127.0.0.1:$muxwatch_port/healthz" "MuxWatch"
wait_for "http://127.0.0.1:$prometheus_port/-/ready" "Prometheus"
wait_for "http://127.0.0.1:$alertmanager_port/-/ready" "Alertmanager"

cat <<TEXT
local-stack: up (logs in $work)
  Redis         127.0.0.1:$redis_port
  MuxWatch      http://127.0.0.1:$muxwatch_port/metrics   /api/timeouts   /api/events   /api/targets
  Prometheus    http://127.0.0.1:$prometheus_port/alerts
  Alertmanager  http://127.0.0.1:$alertmanager_port
Make a timeout: redis-cli -p $redis_port DEBUG SLEEP 12   (MuxWatch's PING times out after the client's 5 s)
Ctrl-C stops everything.
TEXT
wait -n "${pids[@]}" || true
echo "local-stack: a component exited; see $work" >&2
