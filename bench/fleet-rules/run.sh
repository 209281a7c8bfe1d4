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
# The 1m windows need two scrapes; then each group's evaluation time is read after each of EVALUATIONS evaluations.
sleep 35
python3 - "$prom" "$pid" "$instances" "$endpoints" "$evaluations" <<'PY'
import json, statistics, sys, time, urllib.parse, urllib.request
prom, pid, instances, endpoints, evaluations = sys.argv[1:]
get = lambda path: json.load(urllib.request.urlopen(f"http://127.0.0.1:{prom}{path}"))
q = lambda expr: get("/api/v1/query?query=" + urllib.parse.quote(expr))["data"]["result"]
times, rules, seen = {}, {}, {}
while min((len(v) for v in times.values()), default=0) < int(evaluations):
    for g in get("/api/v1/rules")["data"]["groups"]:
        if g["lastEvaluation"] != seen.get(g["name"]):
            seen[g["name"]] = g["lastEvaluation"]
            times.setdefault(g["name"], []).append(g["evaluationTime"] * 1000)
            for r in g["rules"]:
                rules.setdefault(r["name"], []).append(r["evaluationTime"] * 1000)
    time.sleep(1)
scraped = float(q('scrape_samples_scraped')[0]["value"][1])
recorded = float(q('count({__name__=~"muxwatch:fleet_.*"})')[0]["value"][1])
rss = int(open(f"/proc/{pid}/status").read().split("VmRSS:")[1].split()[0]) // 1024
print(f"{instances} instances x {endpoints} endpoints: {scraped:.0f} series scraped, {recorded:.0f} recorded by the fleet group, Prometheus resident {rss} MB")
for name, values in sorted(times.items()):
    print(f"  group {name}: median {statistics.median(values):.1f} ms, max {max(values):.1f} ms over {len(values)} evaluations (every 15 s)")
heaviest = sorted(((statistics.median(v), n) for n, v in rules.items()), reverse=True)[:4]
print("  heaviest rules (median ms): " + ", ".join(f"{n} {m:.1f}" for m, n in heaviest))
PY
