# A synthetic fleet's MuxWatch series in one exposition, for bench/fleet-rules/run.sh: INSTANCES instances, each
# watching ENDPOINTS endpoints (muxwatch_connected, and muxwatch_timeouts_total for every cause and source as MuxWatch
# exports them); every tenth instance times out on the first endpoint, 30 more each scrape.
import http.server, sys
port, instances, endpoints = (int(a) for a in sys.argv[1:4])
causes = ["unknown", "thread-pool-starvation", "client-input-backlog", "large-payload", "write-backlog", "server-stall",
          "connection-loss", "slow-command", "persistence", "client-cpu", "failover", "gc-pause", "client-defect", "other"]
scrapes = 0
class Fleet(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        global scrapes
        scrapes += 1
        lines = ["# TYPE muxwatch_connected gauge", "# TYPE muxwatch_timeouts_total counter"]
        for i in range(instances):
            for e in range(endpoints):
                where = f'instance="app-{i}:8080",multiplexer="cache",endpoint="redis-{e}:6379"'
                lines.append(f"muxwatch_connected{{{where}}} 1")
                for cause in causes:
                    for source in ("first-chance", "probe"):
                        value = 30 * scrapes if (i % 10 == 0 and e == 0 and cause == "thread-pool-starvation" and source == "first-chance") else 0
                        lines.append(f'muxwatch_timeouts_total{{{where},cause="{cause}",source="{source}"}} {value}')
        body = ("\n".join(lines) + "\n").encode()
        self.send_response(200)
        self.send_header("Content-Type", "text/plain; version=0.0.4")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
    def log_message(self, *args):
        pass
http.server.ThreadingHTTPServer(("127.0.0.1", port), Fleet).serve_forever()
