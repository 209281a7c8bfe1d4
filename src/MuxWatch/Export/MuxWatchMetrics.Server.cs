using System.Collections.Concurrent;
using Prometheus;

namespace MuxWatch.Export;

/// <summary>The <c>muxwatch_server_*</c> families: what each polled Redis endpoint reports of itself.</summary>
public sealed partial class MuxWatchMetrics
{
    /// <summary>
    /// At most this many distinct latency-monitor event names per endpoint beyond the ones Redis itself
    /// reports (<see cref="RedisLatencyEvents"/>, always admitted); the rest are <c>other</c>. Per endpoint, so a
    /// hostile server cannot turn a healthy one's <c>command</c> spike into <c>other</c>.
    /// </summary>
    internal const int MaxLatencyEvents = 16;

    /// <summary>The longest latency event name kept as a label; Redis's own are under 40 characters.</summary>
    internal const int MaxLatencyEventNameLength = 64;

    /// <summary>The latency events Redis 2.8 to 7.x reports (latency.c, server.c, aof.c, rdb.c, evict.c, expire.c, defrag.c, module.c).</summary>
    private static readonly HashSet<string> RedisLatencyEvents = new(StringComparer.Ordinal)
    {
        "command", "fast-command", "fork", "rdb-unlink-temp-file", "aof-fsync-always", "aof-write", "aof-write-pending-fsync",
        "aof-write-active-child", "aof-write-alone", "aof-fstat", "aof-rename", "aof-rewrite-diff-write", "aof-rewrite-done-fsync",
        "aof-rewrite-write-data-to-temp-file", "aof-rewrite-done-rename", "aof-rewrite-fsync", "active-defrag-cycle", "expire-cycle",
        "expire-del", "eviction-cycle", "eviction-del", "eviction-lazyfree", "while-blocked-cron", "module-acquire-GIL", "lazyfree-cleanup",
    };

    private readonly ConcurrentDictionary<string, BoundedLabelValues> _latencyEvents = new(StringComparer.Ordinal);

    internal Gauge ServerBgsaveInProgress { get; private set; } = null!;

    internal Gauge ServerAofRewriteInProgress { get; private set; } = null!;

    internal Gauge ServerModuleForkInProgress { get; private set; } = null!;

    internal Gauge ServerLoading { get; private set; } = null!;

    internal Gauge ServerLatestForkSeconds { get; private set; } = null!;

    internal Counter ServerForks { get; private set; } = null!;

    internal Gauge ServerRdbLastBgsaveOk { get; private set; } = null!;

    internal Gauge ServerAofLastRewriteOk { get; private set; } = null!;

    internal Gauge ServerRdbCurrentBgsaveSeconds { get; private set; } = null!;

    internal Gauge ServerCowSizeBytes { get; private set; } = null!;

    internal Gauge ServerLatencyMonitorEnabled { get; private set; } = null!;

    internal Gauge ServerLatencySpikeSeconds { get; private set; } = null!;

    internal Counter ServerSlowlogEntries { get; private set; } = null!;

    internal Gauge ServerSlowestRecentCommandSeconds { get; private set; } = null!;

    internal Counter ServerRestarts { get; private set; } = null!;

    internal Counter ServerPollFailures { get; private set; } = null!;

    internal Gauge ServerCommandRefused { get; private set; } = null!;

    internal Gauge ServerLastPollSuccess { get; private set; } = null!;

    internal Gauge ServerClockOffsetSeconds { get; private set; } = null!;

    /// <summary>
    /// The latency event's label value on <paramref name="endpoint"/>: a name Redis reports as it is; another
    /// name of letters, digits, <c>-</c> and <c>_</c> up to <see cref="MaxLatencyEventNameLength"/> characters while
    /// fewer than <see cref="MaxLatencyEvents"/> such are known for the endpoint; else <c>other</c>.
    /// </summary>
    internal string LatencyEventLabel(string endpoint, string name)
    {
        if (RedisLatencyEvents.Contains(name))
        {
            return name;
        }

        if (name.Length is 0 or > MaxLatencyEventNameLength || name.AsSpan().ContainsAnyExcept(LatencyNameCharacters))
        {
            return BoundedLabelValues.Other;
        }

        return _latencyEvents.GetOrAdd(endpoint, static _ => new BoundedLabelValues(MaxLatencyEvents)).Admit(name);
    }

    private static readonly System.Buffers.SearchValues<char> LatencyNameCharacters =
        System.Buffers.SearchValues.Create("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_");

    /// <summary>Removes every series of one endpoint (it is no longer polled).</summary>
    public void RemoveServerEndpoint(string endpoint)
    {
        lock (SeriesGate)
        {
            RemoveServerEndpointUngated(endpoint);
        }
    }

    private void RemoveServerEndpointUngated(string endpoint)
    {
        foreach (var family in FamiliesOwnedBy(SeriesOwner.PolledEndpoint))
        {
            RemoveWhere(family, endpoint);
        }

        _latencyEvents.TryRemove(endpoint, out _);
    }

    private List<Collector> FamiliesOwnedBy(SeriesOwner owner)
    {
        lock (_families)
        {
            return [.. _families.Where(declared => declared.Owner == owner).Select(declared => declared.Family)];
        }
    }

    private void DeclareServerFamilies()
    {
        ServerBgsaveInProgress = Gauge(SeriesOwner.PolledEndpoint, "muxwatch_server_rdb_bgsave_in_progress",
            "1 while the endpoint runs a BGSAVE (INFO persistence rdb_bgsave_in_progress).", "endpoint");
        ServerAofRewriteInProgress = Gauge(SeriesOwner.PolledEndpoint, "muxwatch_server_aof_rewrite_in_progress",
            "1 while the endpoint rewrites its AOF (aof_rewrite_in_progress).", "endpoint");
        ServerModuleForkInProgress = Gauge(SeriesOwner.PolledEndpoint, "muxwatch_server_module_fork_in_progress",
            "1 while a module's fork runs (module_fork_in_progress).", "endpoint");
        ServerLoading = Gauge(SeriesOwner.PolledEndpoint, "muxwatch_server_loading",
            "1 while the endpoint loads its dataset and refuses commands (loading).", "endpoint");
        ServerLatestForkSeconds = Gauge(SeriesOwner.PolledEndpoint, "muxwatch_server_latest_fork_seconds",
            "How long the latest fork() blocked the server (latest_fork_usec).", "endpoint");
        ServerForks = Counter(SeriesOwner.PolledEndpoint, "muxwatch_server_forks_total",
            "Forks the server made, counted across its restarts (total_forks, Redis 6.2+).", "endpoint");
        ServerRdbLastBgsaveOk = Gauge(SeriesOwner.PolledEndpoint, "muxwatch_server_rdb_last_bgsave_ok",
            "1 when the last BGSAVE succeeded, 0 when it failed (rdb_last_bgsave_status).", "endpoint");
        ServerAofLastRewriteOk = Gauge(SeriesOwner.PolledEndpoint, "muxwatch_server_aof_last_rewrite_ok",
            "1 when the last AOF rewrite succeeded, 0 when it failed (aof_last_bgrewrite_status).", "endpoint");
        ServerRdbCurrentBgsaveSeconds = Gauge(SeriesOwner.PolledEndpoint, "muxwatch_server_rdb_current_bgsave_seconds",
            "How long the running BGSAVE has run; 0 when none runs (rdb_current_bgsave_time_sec).", "endpoint");
        ServerCowSizeBytes = Gauge(SeriesOwner.PolledEndpoint, "muxwatch_server_cow_size_bytes",
            "Memory copied on write while a fork's child runs (current_cow_size, Redis 6.2+).", "endpoint");
        ServerLatencyMonitorEnabled = Gauge(SeriesOwner.PolledEndpoint, "muxwatch_server_latency_monitor_enabled",
            "1 when latency-monitor-threshold is above 0 (CONFIG GET; absent when refused).", "endpoint");
        ServerLatencySpikeSeconds = Gauge(SeriesOwner.PolledEndpoint, "muxwatch_server_latency_spike_seconds",
            "The latest spike of each latency-monitor event (LATENCY LATEST).", "endpoint", "event");
        ServerSlowlogEntries = Counter(SeriesOwner.PolledEndpoint, "muxwatch_server_slowlog_entries_total",
            "Slow-log entries the server added since MuxWatch started watching (by slow-log id).", "endpoint");
        ServerSlowestRecentCommandSeconds = Gauge(SeriesOwner.PolledEndpoint, "muxwatch_server_slowest_recent_command_seconds",
            "The slowest slow-log entry of the last 5 minutes; 0 when none.", "endpoint");
        ServerRestarts = Counter(SeriesOwner.PolledEndpoint, "muxwatch_server_restarts_total",
            "Restarts seen: a new run_id, or an uptime that went back.", "endpoint");
        ServerPollFailures = Counter(SeriesOwner.PolledEndpoint, "muxwatch_server_poll_failures_total",
            "Polls of the endpoint that failed as a whole, by reason (timeout, connection, error, malformed).", "endpoint", "reason");
        ServerCommandRefused = Gauge(SeriesOwner.PolledEndpoint, "muxwatch_server_command_refused",
            "1 when the endpoint refuses a command MuxWatch polls with (info, slowlog, latency, config, time): its figures are missing.", "endpoint", "command");
        ServerLastPollSuccess = Gauge(SeriesOwner.PolledEndpoint, "muxwatch_server_last_poll_success_timestamp_seconds",
            "When a poll last read the endpoint (unix seconds).", "endpoint");
        ServerClockOffsetSeconds = Gauge(SeriesOwner.PolledEndpoint, "muxwatch_server_clock_offset_seconds",
            "The server's clock minus MuxWatch's, from TIME; server event times are shifted by it.", "endpoint");
    }
}
