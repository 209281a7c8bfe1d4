using Prometheus;

namespace MuxWatch.Export;

/// <summary>The <c>muxwatch_server_*</c> families: what each polled Redis endpoint reports of itself.</summary>
public sealed partial class MuxWatchMetrics
{
    /// <summary>At most this many distinct latency-monitor event names per registry; the rest are <c>other</c>.</summary>
    public const int MaxLatencyEvents = 40;

    private static readonly string[] EndpointLabel = ["endpoint"];

    private readonly BoundedLabelValues _latencyEvents = new(MaxLatencyEvents);

    internal Gauge ServerBgsaveInProgress { get; }

    internal Gauge ServerAofRewriteInProgress { get; }

    internal Gauge ServerModuleForkInProgress { get; }

    internal Gauge ServerLoading { get; }

    internal Gauge ServerLatestForkSeconds { get; }

    internal Counter ServerForks { get; }

    internal Gauge ServerRdbLastBgsaveOk { get; }

    internal Gauge ServerAofLastRewriteOk { get; }

    internal Gauge ServerRdbCurrentBgsaveSeconds { get; }

    internal Gauge ServerCowSizeBytes { get; }

    internal Gauge ServerLatencyMonitorEnabled { get; }

    internal Gauge ServerLatencySpikeSeconds { get; }

    internal Counter ServerSlowlogEntries { get; }

    internal Gauge ServerSlowestRecentCommandSeconds { get; }

    internal Counter ServerRestarts { get; }

    internal Counter ServerPollFailures { get; }

    internal Gauge ServerCommandRefused { get; }

    internal Gauge ServerLastPollSuccess { get; }

    internal Gauge ServerClockOffsetSeconds { get; }

    /// <summary>The latency event's label value: its name while fewer than <see cref="MaxLatencyEvents"/> are known, else <c>other</c>.</summary>
    internal string LatencyEventLabel(string name) => _latencyEvents.Admit(name);

    /// <summary>Removes every series of one endpoint (it is no longer polled).</summary>
    internal void RemoveServerEndpoint(string endpoint)
    {
        foreach (var collector in (Collector[])[ServerBgsaveInProgress, ServerAofRewriteInProgress, ServerModuleForkInProgress, ServerLoading,
                     ServerLatestForkSeconds, ServerForks, ServerRdbLastBgsaveOk, ServerAofLastRewriteOk, ServerRdbCurrentBgsaveSeconds,
                     ServerCowSizeBytes, ServerLatencyMonitorEnabled, ServerLatencySpikeSeconds, ServerSlowlogEntries,
                     ServerSlowestRecentCommandSeconds, ServerRestarts, ServerPollFailures, ServerCommandRefused, ServerLastPollSuccess,
                     ServerClockOffsetSeconds])
        {
            RemoveWhere(collector, endpoint);
        }
    }

    private static (Gauge, Gauge, Gauge, Gauge, Gauge, Counter, Gauge, Gauge, Gauge, Gauge, Gauge, Gauge, Counter, Gauge, Counter, Counter, Gauge, Gauge, Gauge)
        CreateServerFamilies(MetricFactory factory) =>
        (
            factory.CreateGauge("muxwatch_server_rdb_bgsave_in_progress", "1 while the endpoint runs a BGSAVE (INFO persistence rdb_bgsave_in_progress).", EndpointLabel),
            factory.CreateGauge("muxwatch_server_aof_rewrite_in_progress", "1 while the endpoint rewrites its AOF (aof_rewrite_in_progress).", EndpointLabel),
            factory.CreateGauge("muxwatch_server_module_fork_in_progress", "1 while a module's fork runs (module_fork_in_progress).", EndpointLabel),
            factory.CreateGauge("muxwatch_server_loading", "1 while the endpoint loads its dataset and refuses commands (loading).", EndpointLabel),
            factory.CreateGauge("muxwatch_server_latest_fork_seconds", "How long the latest fork() blocked the server (latest_fork_usec).", EndpointLabel),
            factory.CreateCounter("muxwatch_server_forks_total", "Forks the server made, counted across its restarts (total_forks, Redis 6.2+).", EndpointLabel),
            factory.CreateGauge("muxwatch_server_rdb_last_bgsave_ok", "1 when the last BGSAVE succeeded, 0 when it failed (rdb_last_bgsave_status).", EndpointLabel),
            factory.CreateGauge("muxwatch_server_aof_last_rewrite_ok", "1 when the last AOF rewrite succeeded, 0 when it failed (aof_last_bgrewrite_status).", EndpointLabel),
            factory.CreateGauge("muxwatch_server_rdb_current_bgsave_seconds", "How long the running BGSAVE has run; 0 when none runs (rdb_current_bgsave_time_sec).", EndpointLabel),
            factory.CreateGauge("muxwatch_server_cow_size_bytes", "Memory copied on write while a fork's child runs (current_cow_size, Redis 6.2+).", EndpointLabel),
            factory.CreateGauge("muxwatch_server_latency_monitor_enabled", "1 when latency-monitor-threshold is above 0 (CONFIG GET; absent when refused).", EndpointLabel),
            factory.CreateGauge("muxwatch_server_latency_spike_seconds", "The latest spike of each latency-monitor event (LATENCY LATEST).", ["endpoint", "event"]),
            factory.CreateCounter("muxwatch_server_slowlog_entries_total", "Slow-log entries the server added since MuxWatch started watching (by slow-log id).", EndpointLabel),
            factory.CreateGauge("muxwatch_server_slowest_recent_command_seconds", "The slowest slow-log entry of the last 5 minutes; 0 when none.", EndpointLabel),
            factory.CreateCounter("muxwatch_server_restarts_total", "Restarts seen: a new run_id, or an uptime that went back.", EndpointLabel),
            factory.CreateCounter("muxwatch_server_poll_failures_total", "Polls of the endpoint that failed as a whole, by reason (timeout, connection, error, malformed).", ["endpoint", "reason"]),
            factory.CreateGauge("muxwatch_server_command_refused", "1 when the endpoint refuses a command MuxWatch polls with (info, slowlog, latency, config, time): its figures are missing.", ["endpoint", "command"]),
            factory.CreateGauge("muxwatch_server_last_poll_success_timestamp_seconds", "When a poll last read the endpoint (unix seconds).", EndpointLabel),
            factory.CreateGauge("muxwatch_server_clock_offset_seconds", "The server's clock minus MuxWatch's, from TIME; server event times are shifted by it.", EndpointLabel)
        );
}
