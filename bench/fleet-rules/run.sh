#!/usr/bin/env bash
# What the fleet rules (alerts/muxwatch.rules.yml, group muxwatch.fleet) cost one Prometheus: a synthetic fleet of
# INSTANCES instances each watching ENDPOINTS endpoints, exported as MuxWatch exports them (muxwatch_connected, and
# muxwatch_timeouts_total for every cause and source, 0 until a timeout), a tenth of the instances timing out on the first
# endpoint; scraped (honor_labels: one target stands for the fleet) and evaluated every 15 s, as Prometheus' defaults
# and most users have it. Prints each group's evaluation time as Prometheus measures it (/api/v1/rules), the series the
# fleet group records, and Prometheus' resident memory.
# Usage: bench/fleet-rules/run.sh INSTANCES ENDPOINTS [EVALUATIONS]   (Debian's prometheus and python3)
set -euo pipefail
instances=${1:?instances}; endpoints=${2:?endpoints}; evaluations=${3:-6}
root=$(cd "$(dirname "$0")/../.." && pwd)
work=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null || true; wait 2>/dev/null || true; rm -rf "$work"' EXIT
port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()'; }
exporter=$(port); prom=$(port)

python3 "$root/bench/fleet-rules/fleet_exporter.py" "$exporter" "$instances" "$endpoints" &
cat > "$work/prometheus.yml" <<YAML
global: {scrape_interval: 15s, evaluation_interval: 15s}
rule_files: ["$root/alerts/muxwatch.rules.yml"]
scrape_configs:
  - job_name: fleet
    honor_labels: true
    scrape_timeout: 14s
    static_configs: [{targets: ["127.0.0.1:$exporter"]}]
YAML
prometheus --config.file="$work/prometheus.yml" --storage.tsdb.path="$work/tsdb" --web.listen-address="127.0.0.1:$prom" --log.level=warn &
pid=$!
until curl -sf "http://127.0.0.1:$prom/-/ready" >/dev/null; do sleep 1; done
# Wait for EVALUATIONS evaluations after the first scrape (the 1m windows need two samples).
sleep $(( 15 * (evaluations + 1) ))
python3 - "$prom" "$pid" "$instances" "$endpoints" <<'PY'
import json, sys, urllib.request
prom, pid, instances, endpoints = sys.argv[1:]
get = lambda path: json.load(urllib.request.urlopen(f"http://127.0.0.1:{prom}{path}"))
groups = {g["name"]: g for g in get("/api/v1/rules")["data"]["groups"]}
q = lambda expr: get("/api/v1/query?query=" + urllib.parse.quote(expr))["data"]["result"]
import urllib.parse
scraped = float(q('scrape_samples_scraped')[0]["value"][1])
recorded = sum(float(r["value"][1]) for r in q('count({__name__=~"muxwatch:fleet_.*"})'))
rss = int(open(f"/proc/{pid}/status").read().split("VmRSS:")[1].split()[0]) // 1024
print(f"{instances} instances x {endpoints} endpoints: {scraped:.0f} series scraped, {recorded:.0f} recorded by the fleet group; "
      f"evaluation muxwatch.fleet {groups['muxwatch.fleet']['evaluationTime']*1000:.1f} ms, "
      f"muxwatch.alerts {groups['muxwatch.alerts']['evaluationTime']*1000:.1f} ms (every 15 s); Prometheus resident {rss} MB")
verdicts = q('count(muxwatch:fleet_verdict:instance_side)')
print("instance-side verdicts:", verdicts[0]["value"][1] if verdicts else 0)
PY
