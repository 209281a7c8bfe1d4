#!/usr/bin/env bash
# The test command: installs what the tests need, builds, runs every test project, and ends with
# the totals alone on a line ("N passed, N failed[, N skipped]"). Exits non-zero on any failure.
set -uo pipefail
cd "$(dirname "$0")"

log() { printf '==> %s\n' "$*" >&2; }

# Stopped by Ctrl-C or SIGTERM (the same either way: started in the background, the script inherits
# SIGINT ignored and bash cannot trap it, so CI and `kill` use SIGTERM), every process the tests
# started goes with it: the whole tree under this script, test hosts, redis-servers, Prometheus.
descendants() { local child; for child in $(pgrep -P "$1" 2>/dev/null); do descendants "$child"; echo "$child"; done; }
interrupted() {
  trap - INT TERM
  log "interrupted: stopping every process the tests started"
  # Freeze the tree first, until a scan finds nothing new, so that nothing a test is starting at this
  # moment (a Prometheus, a redis-server) escapes as an orphan; then end it all.
  local pids="" previous="x"
  for _ in 1 2 3 4 5 6 7 8; do
    pids="$(descendants $$)"
    if [ -n "$pids" ]; then kill -STOP $pids 2>/dev/null || true; fi
    if [ "$pids" = "$previous" ]; then break; fi
    previous="$pids"
  done
  # Killed while frozen, never let run again: a test host sent SIGTERM and then SIGCONT went on with its
  # test for a moment and started processes this scan never saw (seen: six cluster nodes left behind,
  # re-parented to init once the host died).
  if [ -n "$pids" ]; then
    kill -KILL $pids 2>/dev/null || true
  fi
  if [ -n "$session" ]; then pkill -KILL -s "$session" 2>/dev/null || true; fi
  echo "0 passed, 1 failed"
  exit 130
}
trap interrupted INT TERM

# Runs a command in the background and waits for it, so that a signal reaches the trap at once (bash
# runs traps only between foreground commands, and a test run can take minutes). The command gets a
# session of its own (setsid: a background job of a script is no group leader, so it is not forked and
# the session's id is $!), and whatever is left in that session when it ends is stopped: a test host
# killed by the hang guard below leaves its redis-servers to init, outside this script's tree (seen).
session=""
run() {
  local rc
  setsid "$@" & session=$!
  wait "$session"; rc=$?
  pkill -KILL -s "$session" 2>/dev/null || true
  session=""
  return "$rc"
}

# A test that hangs ends its project's run after this long without a test starting or finishing (the
# longest test takes about five minutes here) instead of holding CI until its own limit: the run is
# reported as aborted, naming the test that hung (blame's sequence file).
hang_guard=(--blame-hang-timeout "${MUXWATCH_TEST_HANG_TIMEOUT:-15m}" --blame-hang-dump-type none)

install_prerequisites() {
  local missing=()
  command -v redis-server >/dev/null 2>&1 || missing+=(redis-server)
  command -v redis-cli >/dev/null 2>&1 || missing+=(redis-tools)
  command -v promtool >/dev/null 2>&1 || missing+=(prometheus)
  command -v prometheus-alertmanager >/dev/null 2>&1 || missing+=(prometheus-alertmanager)
  command -v prometheus-redis-exporter >/dev/null 2>&1 || missing+=(prometheus-redis-exporter)
  command -v docker-compose >/dev/null 2>&1 || missing+=(docker-compose)
  python3 -c "import yaml" >/dev/null 2>&1 || missing+=(python3-yaml)
  command -v curl >/dev/null 2>&1 || missing+=(curl)
  command -v openssl >/dev/null 2>&1 || missing+=(openssl)
  command -v clang >/dev/null 2>&1 || missing+=(clang) # links the container's native (AOT) build
  dpkg -s zlib1g-dev >/dev/null 2>&1 || missing+=(zlib1g-dev)
  command -v chromium >/dev/null 2>&1 || missing+=(chromium)
  command -v node >/dev/null 2>&1 || missing+=(nodejs)
  command -v npm >/dev/null 2>&1 || missing+=(npm)
  if [ ${#missing[@]} -eq 0 ]; then return 0; fi
  log "installing ${missing[*]} from Debian's packages"
  local sudo=""
  if [ "$(id -u)" -ne 0 ]; then sudo="sudo"; fi
  $sudo apt-get update -qq && DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}" >/dev/null
}

if ! command -v dotnet >/dev/null 2>&1; then
  log "the .NET SDK is required (see global.json)"; echo "0 passed, 1 failed"; exit 1
fi
if ! install_prerequisites; then
  log "could not install the test prerequisites"; echo "0 passed, 1 failed"; exit 1
fi

log "installing the dashboard schema checker (npm ci)"
if ! run bash -c 'cd dashboards/schema-check && npm ci --no-audit --no-fund --loglevel=error >/dev/null'; then
  log "npm ci failed in dashboards/schema-check"; echo "0 passed, 1 failed"; exit 1
fi

log "installing dotnet-counters (a test points it at a running app, as a user would)"
if [ ! -x artifacts/tools/dotnet-counters ] && ! run dotnet tool install dotnet-counters --version 10.0.750501 --tool-path artifacts/tools; then
  log "dotnet tool install dotnet-counters failed"; echo "0 passed, 1 failed"; exit 1
fi

# ./test.sh --fast: the contributors' loop. The same installs and build, then every project's tests but those that
# take minutes or drive whole processes and stacks (Speed=Minutes, LiveProbe, EndToEnd, Soak, ServiceProcess), and no
# second client version or native build: about five minutes here. CI runs the full command.
fast=""
if [ "${1:-}" = "--fast" ]; then
  fast="Speed!=Minutes&Category!=LiveProbe&Category!=EndToEnd&Category!=Soak&Category!=ServiceProcess"
fi

configuration="${CONFIGURATION:-Release}"
results="artifacts/test-results"
rm -rf "$results"; mkdir -p "$results"

log "building ($configuration)"
if ! run dotnet build MuxWatch.slnx -c "$configuration" -nologo -v quiet; then
  log "build failed"; echo "0 passed, 1 failed"; exit 1
fi

status=0
for project in tests/*.Tests/*.csproj; do
  name="$(basename "$project" .csproj)"
  log "testing $name"
  run dotnet test "$project" -c "$configuration" --no-build -nologo "${hang_guard[@]}" ${fast:+--filter "$fast"} \
    --logger "trx;LogFileName=$name.trx" --results-directory "$results" || status=1
done

# The container's app: ContainerBuildTests replayed the Dockerfile's native (AOT) publish into
# artifacts/container-app; the tests that start the service as a process run once more on that build.
native="$PWD/artifacts/container-app/MuxWatch.Tool"
if [ -n "$fast" ]; then
  log "fast loop: the native build and the floor of the client range are left to the full command"
elif [ -x "$native" ]; then
  log "testing MuxWatch.Tool.Tests (process tests, on the container's native build)"
  run env MUXWATCH_SERVICE_EXECUTABLE="$native" dotnet test tests/MuxWatch.Tool.Tests/MuxWatch.Tool.Tests.csproj \
    -c "$configuration" --no-build -nologo "${hang_guard[@]}" --filter "Category=ServiceProcess" \
    --logger "trx;LogFileName=MuxWatch.Tool.Tests-native.trx" --results-directory "$results" || status=1
else
  log "the container's native build is missing: $native"; status=1
  echo '<Counters total="1" executed="1" passed="0" failed="1" />' > "$results/native-build.trx"
fi

# The live probe tests once more on the floor of the supported client range (the first run used the
# newest, Directory.Packages.props' StackExchangeRedisVersion): the library is built against the floor.
floor="2.6.90"
if [ -n "$fast" ]; then
  :
elif log "building with StackExchange.Redis $floor (the supported floor)" && run dotnet build MuxWatch.slnx -c "$configuration" -nologo -v quiet -p:StackExchangeRedisVersion="$floor"; then
  for project in tests/*.Tests/*.csproj; do
    name="$(basename "$project" .csproj)"
    log "testing $name (live probe tests, StackExchange.Redis $floor)"
    run dotnet test "$project" -c "$configuration" --no-build -nologo "${hang_guard[@]}" --filter "Category=LiveProbe" \
      --logger "trx;LogFileName=$name-$floor.trx" --results-directory "$results" || status=1
  done
else
  log "build with StackExchange.Redis $floor failed"; status=1
  echo '<Counters total="1" executed="1" passed="0" failed="1" />' > "$results/floor-build.trx"
fi

passed=0; failed=0; skipped=0; files=0; aborted_runs=()
for trx in "$results"/*.trx; do
  [ -f "$trx" ] || continue
  files=$((files + 1))
  counters="$(grep -o '<Counters [^>]*>' "$trx" | head -1)"
  value() { local v; v="$(printf '%s' "$counters" | sed -n "s/.* $1=\"\([0-9]*\)\".*/\1/p")"; echo "${v:-0}"; }
  total="$(value total)"; executed="$(value executed)"
  passed=$((passed + $(value passed)))
  failed=$((failed + $(value failed) + $(value error) + $(value timeout) + $(value aborted)))
  skipped=$((skipped + total - executed))
  # A run the hang guard (or a crash) aborted counts no failed test of its own: it counts as one.
  if grep -q '<ResultSummary outcome="Failed"' "$trx" && [ "$(value failed)$(value error)$(value timeout)$(value aborted)" = "0000" ]; then
    failed=$((failed + 1))
    aborted_runs+=("$trx")
  fi
done
if [ "$files" -eq 0 ]; then failed=$((failed + 1)); status=1; fi
if [ "$failed" -gt 0 ]; then
  log "failed tests:"
  grep -ho '<UnitTestResult [^>]*outcome="Failed"[^>]*>' "$results"/*.trx 2>/dev/null \
    | sed -n 's/.*testName="\([^"]*\)".*/    \1/p' >&2 || true
fi
if [ "$failed" -gt 0 ]; then
  # Each failure's message (its first lines, 1,200 characters of each: enough for a live test's timeout and its evidence
  # lines, which are what says why it failed), so that a CI log cut at its tail still says why each test failed.
  log "why they failed:"
  awk '
    /<UnitTestResult / { failing = ($0 ~ /outcome="Failed"/); if (failing) { name = $0; sub(/.*testName="/, "", name); sub(/".*/, "", name); print "  -- " name } }
    failing && /<Message>/ { inmsg = 1; shown = 0; sub(/.*<Message>/, "") }
    failing && inmsg { line = $0; done = sub(/<\/Message>.*/, "", line); gsub(/&quot;/, "\"", line); gsub(/&lt;/, "<", line); gsub(/&gt;/, ">", line); gsub(/&amp;/, "\\&", line);
      if (shown < 6) { print "     " substr(line, 1, 1200); shown++ } if (done) { inmsg = 0; failing = 0 } }
  ' "$results"/*.trx >&2 || true
fi
for trx in "${aborted_runs[@]}"; do
  log "aborted: $(basename "$trx" .trx): $(grep -o '<Text>[^<]*</Text>' "$trx" | sed 's/<[^>]*>//g' | paste -sd ' ' -)"
  # The test that was running: the last one in the sequence file blame attached to this run.
  sequence="$(grep -o 'Sequence_[0-9a-f]*\.xml' "$trx" | head -1)"
  hung=""
  if [ -n "$sequence" ]; then
    hung="$(find "$results" -name "$sequence" -exec grep -ho '<Test Name="[^"]*"' {} + 2>/dev/null | tail -1 | sed 's/<Test Name="//; s/"$//')"
  fi
  [ -n "$hung" ] && log "    the test running when it ended: $hung"
done
if [ "$failed" -gt 0 ]; then status=1; fi

if [ "$skipped" -gt 0 ]; then
  echo "$passed passed, $failed failed, $skipped skipped"
else
  echo "$passed passed, $failed failed"
fi
exit "$status"
