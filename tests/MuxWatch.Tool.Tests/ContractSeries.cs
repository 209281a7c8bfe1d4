using System.Globalization;
using System.Text;

namespace MuxWatch.Tool.Tests;

/// <summary>
/// An hour of every series of the metric contract (docs/metrics.md), as OpenMetrics text for
/// <c>promtool tsdb create-blocks-from openmetrics</c>: two multiplexers, two endpoints, a few
/// disconnections, timeouts of several causes, a BGSAVE and its fork, a failover.
/// </summary>
internal static class ContractSeries
{
    private const string Instance = "app:9401";
    private static readonly string[] Multiplexers = ["cache", "sessions"];
    private static readonly string[] Endpoints = ["10.0.0.1:6379", "10.0.0.2:6379"];
    private static readonly double[] PingBuckets = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5];

    public static string OpenMetrics(DateTimeOffset start, DateTimeOffset end, TimeSpan step)
    {
        var times = new List<long>();
        for (var t = start; t <= end; t += step)
        {
            times.Add(t.ToUnixTimeSeconds());
        }

        var text = new StringBuilder();
        var perEndpoint = (from m in Multiplexers from e in Endpoints select $"instance=\"{Instance}\",multiplexer=\"{m}\",endpoint=\"{e}\"").ToList();
        var perServer = Endpoints.Select(e => $"instance=\"{Instance}\",endpoint=\"{e}\"").ToList();

        Gauge(text, "muxwatch_connected", perEndpoint, times, (i, n) => n == 0 && i is > 100 and < 110 ? 0 : 1);
        Counter(text, "muxwatch_timeouts_total", [.. from s in perEndpoint from c in (string[])["server-stall", "thread-pool-starvation", "persistence", "failover"] select $"{s},cause=\"{c}\""], times, (i, n) => i * (n % 3 + 1) / 4.0);
        Gauge(text, "muxwatch_sent_awaiting_response", perEndpoint, times, (i, n) => (i * 7 + n) % 40);
        Gauge(text, "muxwatch_pending_unsent", perEndpoint, times, (i, n) => (i + n) % 5);
        Counter(text, "muxwatch_operations_total", perEndpoint, times, (i, n) => i * 100.0);
        Counter(text, "muxwatch_reconnects_total", perEndpoint, times, (i, n) => i > 105 ? 2 : 1);
        Histogram(text, "muxwatch_ping_seconds", perEndpoint, times, PingBuckets);
        Gauge(text, "muxwatch_heartbeat_age_seconds", [.. Multiplexers.Select(m => $"instance=\"{Instance}\",multiplexer=\"{m}\"")], times, (i, n) => i % 3);
        Counter(text, "muxwatch_client_timeouts_total", [.. from m in Multiplexers from mode in (string[])["sync", "async"] select $"instance=\"{Instance}\",multiplexer=\"{m}\",mode=\"{mode}\""], times, (i, n) => i / 5.0);
        Counter(text, "muxwatch_connection_events_total", [.. perEndpoint.Select(s => $"{s},event=\"failed\",failure_type=\"SocketFailure\""), .. perEndpoint.Select(s => $"{s},event=\"restored\",failure_type=\"none\"")], times, (i, n) => i > 102 ? 1 : 0);
        Gauge(text, "muxwatch_last_probe_success_timestamp_seconds", perEndpoint, times, (i, n) => times[i]);
        Gauge(text, "muxwatch_threadpool_busy_threads", [$"instance=\"{Instance}\",pool=\"worker\"", $"instance=\"{Instance}\",pool=\"io\""], times, (i, n) => n == 0 ? 4 + i % 20 : 1);
        Gauge(text, "muxwatch_threadpool_min_threads", [$"instance=\"{Instance}\",pool=\"worker\"", $"instance=\"{Instance}\",pool=\"io\""], times, (i, n) => 8);
        Gauge(text, "muxwatch_threadpool_max_threads", [$"instance=\"{Instance}\",pool=\"worker\"", $"instance=\"{Instance}\",pool=\"io\""], times, (i, n) => n == 0 ? 32767 : 1000);
        Gauge(text, "muxwatch_threadpool_threads", [$"instance=\"{Instance}\""], times, (i, n) => 10 + i % 20);
        Gauge(text, "muxwatch_threadpool_queue_length", [$"instance=\"{Instance}\""], times, (i, n) => i % 13);
        Counter(text, "muxwatch_threadpool_completed_items_total", [$"instance=\"{Instance}\""], times, (i, n) => i * 500.0);
        Histogram(text, "muxwatch_probe_cycle_seconds", [$"instance=\"{Instance}\""], times, PingBuckets);

        // The fleet's recorded series (alerts/muxwatch.rules.yml, group muxwatch.fleet): Prometheus evaluates recording rules
        // going forward, never over backfilled blocks, so what they would record is written here; EndToEndTests runs the
        // rules themselves on a real scrape.
        var fleet = Endpoints.Select(e => $"endpoint=\"{e}\"").ToList();
        Gauge(text, "muxwatch:fleet_instances_watching:1m", fleet, times, (i, n) => 4);
        Gauge(text, "muxwatch:fleet_instances_affected:1m", fleet, times, (i, n) => n == 0 && i is > 100 and < 110 ? 4 : i % 17 == 0 ? 1 : 0);

        Gauge(text, "muxwatch_server_rdb_bgsave_in_progress", perServer, times, (i, n) => i is > 120 and < 140 ? 1 : 0);
        Gauge(text, "muxwatch_server_aof_rewrite_in_progress", perServer, times, (i, n) => n == 1 && i is > 60 and < 70 ? 1 : 0);
        Gauge(text, "muxwatch_server_module_fork_in_progress", perServer, times, (i, n) => 0);
        Gauge(text, "muxwatch_server_loading", perServer, times, (i, n) => 0);
        Gauge(text, "muxwatch_server_latest_fork_seconds", perServer, times, (i, n) => i > 120 ? 0.34 : 0.02);
        Counter(text, "muxwatch_server_forks_total", perServer, times, (i, n) => i > 120 ? 2 : i > 60 ? 1 : 0);
        Gauge(text, "muxwatch_server_rdb_last_bgsave_ok", perServer, times, (i, n) => 1);
        Gauge(text, "muxwatch_server_aof_last_rewrite_ok", perServer, times, (i, n) => 1);
        Gauge(text, "muxwatch_server_rdb_current_bgsave_seconds", perServer, times, (i, n) => i is > 120 and < 140 ? (i - 120) * 15 : 0);
        Gauge(text, "muxwatch_server_cow_size_bytes", perServer, times, (i, n) => i is > 120 and < 140 ? 1_048_576 * (i - 120) : 0);
        Gauge(text, "muxwatch_server_latency_monitor_enabled", perServer, times, (i, n) => n == 0 ? 1 : 0);
        Gauge(text, "muxwatch_server_latency_spike_seconds", [.. perServer.Select(s => $"{s},event=\"fork\""), .. perServer.Select(s => $"{s},event=\"command\"")], times, (i, n) => 0.05 * (n + 1));
        Counter(text, "muxwatch_server_slowlog_entries_total", perServer, times, (i, n) => i / 10);
        Gauge(text, "muxwatch_server_slowest_recent_command_seconds", perServer, times, (i, n) => 0.012 * (n + 1));

        // Replication and cluster: 10.0.0.1 the primary until a failover at step 150 promotes its replica 10.0.0.2;
        // the cluster is down from the primary's failure (step 145) to the promotion.
        Gauge(text, "muxwatch_server_role", [.. from s in perServer from r in (string[])["primary", "replica"] select $"{s},role=\"{r}\""], times,
            (i, n) => (n / 2 == 0) == (i < 150) == (n % 2 == 0) ? 1 : 0);
        Counter(text, "muxwatch_server_role_changes_total", perServer, times, (i, n) => i < 150 ? 0 : 1);
        Gauge(text, "muxwatch_server_cluster_state_ok", perServer, times, (i, n) => i is >= 145 and < 150 ? 0 : 1);
        Gauge(text, "muxwatch_server_replication_link_up", [perServer[1]], times, (i, n) => i is >= 145 and < 150 ? 0 : 1);
        Gauge(text, "muxwatch_server_replica_lag_bytes", [$"{perServer[0]},replica=\"{Endpoints[1]}\""], times, (i, n) => i % 7 * 128);

        Counter(text, "muxwatch_error_replies_total", [$"instance=\"{Instance}\",error=\"CLUSTERDOWN\"", $"instance=\"{Instance}\",error=\"other\""], times, (i, n) => i < 145 ? 0 : 12);

        text.Append("# EOF\n");
        return text.ToString();
    }

    private static void Gauge(StringBuilder text, string name, List<string> series, List<long> times, Func<int, int, double> value)
    {
        text.Append(CultureInfo.InvariantCulture, $"# TYPE {name} gauge\n");
        Samples(text, name, series, times, value);
    }

    private static void Counter(StringBuilder text, string name, List<string> series, List<long> times, Func<int, int, double> value)
    {
        var family = name[..^"_total".Length];
        text.Append(CultureInfo.InvariantCulture, $"# TYPE {family} counter\n");
        Samples(text, name, series, times, value);
    }

    private static void Histogram(StringBuilder text, string name, List<string> series, List<long> times, double[] buckets)
    {
        text.Append(CultureInfo.InvariantCulture, $"# TYPE {name} histogram\n");
        for (var n = 0; n < series.Count; n++)
        {
            for (var i = 0; i < times.Count; i++)
            {
                // i observations per series so far, spread over the buckets: counts grow with time.
                for (var b = 0; b <= buckets.Length; b++)
                {
                    var le = b < buckets.Length ? buckets[b].ToString(CultureInfo.InvariantCulture) : "+Inf";
                    var count = b < buckets.Length ? Math.Min(i * 10, i * (b + 1)) : i * 10;
                    text.Append(CultureInfo.InvariantCulture, $"{name}_bucket{{{series[n]},le=\"{le}\"}} {count} {times[i]}\n");
                }

                text.Append(CultureInfo.InvariantCulture, $"{name}_count{{{series[n]}}} {i * 10} {times[i]}\n");
                text.Append(CultureInfo.InvariantCulture, $"{name}_sum{{{series[n]}}} {(i * 0.02).ToString(CultureInfo.InvariantCulture)} {times[i]}\n");
            }
        }
    }

    private static void Samples(StringBuilder text, string name, List<string> series, List<long> times, Func<int, int, double> value)
    {
        for (var n = 0; n < series.Count; n++)
        {
            for (var i = 0; i < times.Count; i++)
            {
                text.Append(CultureInfo.InvariantCulture, $"{name}{{{series[n]}}} {value(i, n).ToString(CultureInfo.InvariantCulture)} {times[i]}\n");
            }
        }
    }
}
