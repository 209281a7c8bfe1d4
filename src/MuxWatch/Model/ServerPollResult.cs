using System.Collections.Frozen;
using System.Globalization;

namespace MuxWatch.Model;

/// <summary>
/// What one poll of one endpoint read, as the client's typed calls returned it. Times are the server's
/// clock; <c>ServerStateTracker</c> (State) converts them. A part is null when it was not read (refused,
/// or not asked for).
/// </summary>
/// <param name="Endpoint">The endpoint, <c>host:port</c>.</param>
/// <param name="Started">When the poll started (client clock).</param>
/// <param name="Finished">When its last reply arrived (client clock).</param>
public sealed record ServerPollResult(string Endpoint, DateTimeOffset Started, DateTimeOffset Finished)
{
    /// <summary>
    /// The <c>INFO</c> fields MuxWatch reads from a poll, and so the only ones a poll needs to keep in <see cref="Info"/>: the
    /// server's identity and uptime, its saves, rewrites, forks and loading, its memory as the fork sees it, its role and
    /// replication (each replica's line up to the 16 exported), and whether it is a cluster node.
    /// </summary>
    /// <remarks>
    /// A default <c>INFO</c> is about 180 fields; a poll that kept all of them made two strings of each, every poll of every
    /// endpoint: at 500 endpoints that was two thirds of what the sidecar allocated, and the collections it paid for
    /// (issue 52). The trackers read nothing else (a test feeds them a real server's whole <c>INFO</c> and checks).
    /// </remarks>
    public static FrozenSet<string> InfoFields { get; } = FrozenSet.Create(StringComparer.Ordinal,
    [
        "run_id", "uptime_in_seconds", "loading", "cluster_enabled", "used_memory_rss",
        "rdb_bgsave_in_progress", "rdb_current_bgsave_time_sec", "rdb_last_bgsave_status", "rdb_saves", "rdb_last_save_time",
        "aof_rewrite_in_progress", "aof_current_rewrite_time_sec", "aof_last_bgrewrite_status", "aof_rewrites",
        "module_fork_in_progress", "current_cow_size", "total_forks", "latest_fork_usec",
        "role", "connected_slaves", "master_repl_offset", "master_host", "master_port", "master_link_status",
        "master_last_io_seconds_ago", "master_sync_in_progress",
        .. Enumerable.Range(0, 16).Select(i => string.Create(CultureInfo.InvariantCulture, $"slave{i}")),
    ]);

    /// <summary>The fields of <c>INFO</c> (its default sections) by name, those named in <see cref="InfoFields"/>.</summary>
    public IReadOnlyDictionary<string, string>? Info { get; init; }

    /// <summary>The fields of <c>CLUSTER INFO</c>, read when <c>INFO</c> says <c>cluster_enabled:1</c>.</summary>
    public IReadOnlyDictionary<string, string>? ClusterInfo { get; init; }

    /// <summary>
    /// The endpoints (<c>host:port</c>) of the nodes this cluster node's <c>CLUSTER NODES</c> lists, itself and
    /// failed nodes included (a failed node is still a member until the cluster forgets it); null when not a
    /// cluster node or not read.
    /// </summary>
    public IReadOnlyCollection<string>? ClusterMembers { get; init; }

    /// <summary><c>latency-monitor-threshold</c> in milliseconds, from <c>CONFIG GET</c>.</summary>
    public long? LatencyMonitorThresholdMs { get; init; }

    /// <summary><c>LATENCY LATEST</c>: the latest spike of each event.</summary>
    public IReadOnlyList<LatencySpike>? LatencyLatest { get; init; }

    /// <summary><c>LATENCY HISTORY fork</c>, read when <c>LATENCY LATEST</c> showed a fork newer than the last seen.</summary>
    public IReadOnlyList<LatencySample>? ForkHistory { get; init; }

    /// <summary><c>SLOWLOG GET</c>: the newest entries.</summary>
    public IReadOnlyList<SlowlogEntry>? Slowlog { get; init; }

    /// <summary>The server's clock minus the client's, from <c>TIME</c> (the reply taken at the middle of its round trip).</summary>
    public TimeSpan? ClockOffset { get; init; }

    /// <summary>How far <see cref="ClockOffset"/> may be off: half the round trip of the <c>TIME</c> it was read from.</summary>
    public TimeSpan? ClockUncertainty { get; init; }

    /// <summary>Commands the endpoint refused (<c>INFO</c>, <c>SLOWLOG</c>, <c>LATENCY</c>, <c>CONFIG</c>, <c>TIME</c>).</summary>
    public IReadOnlyList<string> Refused { get; init; } = [];

    /// <summary>Why the poll failed as a whole (a timeout, no connection); null when it read the server.</summary>
    public string? Error { get; init; }

    /// <summary>What the poll left out because it could not be believed (an absurd slow-log timestamp or duration), each with its reason; the rest stands.</summary>
    public IReadOnlyList<string> Dropped { get; init; } = [];

    /// <summary>
    /// The smallest timeout of the multiplexers watching the endpoint (their <c>syncTimeout</c> and <c>asyncTimeout</c>):
    /// a pause of the server this long times their requests out. Null when none is known.
    /// </summary>
    public TimeSpan? ClientTimeout { get; init; }

    /// <summary>The sizes of the keys the diagnosis asked about (<c>MEMORY USAGE</c>), at most one a poll.</summary>
    public IReadOnlyList<KeySize> KeySizes { get; init; } = [];

    /// <summary>Reasons a poll fails, a fixed set for the metric label.</summary>
    public string? ErrorReason { get; init; }
}
