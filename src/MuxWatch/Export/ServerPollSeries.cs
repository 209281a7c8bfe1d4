using System.Globalization;
using MuxWatch.Model;

namespace MuxWatch.Export;

/// <summary>
/// The series one successful poll of an endpoint sets as they stand: what the server said, projected to gauges
/// (its saves and rewrites running, fork and copy-on-write figures, replication links, a primary's replicas and
/// their lag, the cluster's view, which commands it refused, its clock). What needs memory across polls (the
/// timeline's events, restarts, forks and slow-log entries counted) is the tracker's (State).
/// </summary>
internal sealed class ServerPollSeries(MuxWatchMetrics metrics, string endpoint)
{
    private static readonly string[] PolledCommands = ["info", "slowlog", "latency", "config", "time"];

    private HashSet<string> _replicas = [];
    private readonly HashSet<string> _refused = new(StringComparer.Ordinal);

    /// <summary>
    /// A series per command the server refuses, at 1, gone once it answers again: no series at 0 for the commands
    /// it answers, which would be five of an endpoint's 60 (a sidecar of 500 endpoints scraped 2,500 of them, used
    /// by no dashboard or alert; "absent" reads the same in PromQL with <c>or vector(0)</c>).
    /// </summary>
    private void ProjectRefused(IReadOnlyCollection<string> refused)
    {
        foreach (var command in PolledCommands)
        {
            if (refused.Contains(command, StringComparer.OrdinalIgnoreCase))
            {
                metrics.ServerCommandRefused.WithLabels(endpoint, command).Set(1);
                _refused.Add(command);
            }
            else if (_refused.Remove(command))
            {
                metrics.ServerCommandRefused.RemoveLabelled(endpoint, command);
            }
        }
    }

    /// <summary>Sets the series <paramref name="poll"/> (one that succeeded) carries.</summary>
    public void Project(ServerPollResult poll)
    {
        if (poll.ClockOffset is { } offset)
        {
            metrics.ServerClockOffsetSeconds.WithLabels(endpoint).Set(offset.TotalSeconds);
        }

        ProjectRefused(poll.Refused);

        if (poll.LatencyMonitorThresholdMs is { } threshold)
        {
            metrics.ServerLatencyMonitorEnabled.WithLabels(endpoint).Set(threshold > 0 ? 1 : 0);
        }

        foreach (var spike in poll.LatencyLatest ?? [])
        {
            metrics.ServerLatencySpikeSeconds.WithLabels(endpoint, metrics.LatencyEventLabel(endpoint, spike.Event)).Set(spike.LatestMs / 1000);
        }

        if (poll.Info is { } info)
        {
            ProjectInfo(info);
        }

        if (poll.ClientTimeout is { } timeout)
        {
            metrics.ServerClientTimeoutSeconds.WithLabels(endpoint).Set(timeout.TotalSeconds);
        }

        if (poll.ClusterInfo is { } cluster)
        {
            if (Text(cluster, "cluster_state") is { } state)
            {
                metrics.ServerClusterStateOk.WithLabels(endpoint).Set(state == "ok" ? 1 : 0);
            }

            Set(metrics.ServerClusterSlotsFail, Number(cluster, "cluster_slots_fail"));
            Set(metrics.ServerClusterSlotsPfail, Number(cluster, "cluster_slots_pfail"));
            Set(metrics.ServerClusterKnownNodes, Number(cluster, "cluster_known_nodes"));
        }
    }

    private void ProjectInfo(IReadOnlyDictionary<string, string> info)
    {
        // Running now (an older Redis without the field: not exported).
        Set(metrics.ServerBgsaveInProgress, Flag(info, "rdb_bgsave_in_progress"));
        Set(metrics.ServerAofRewriteInProgress, Flag(info, "aof_rewrite_in_progress"));
        Set(metrics.ServerModuleForkInProgress, Flag(info, "module_fork_in_progress"));
        Set(metrics.ServerLoading, Flag(info, "loading"));

        Set(metrics.ServerRdbCurrentBgsaveSeconds, Number(info, "rdb_current_bgsave_time_sec") is { } current ? Math.Max(0, current) : null);
        Set(metrics.ServerCowSizeBytes, Number(info, "current_cow_size"));
        Set(metrics.ServerLatestForkSeconds, Number(info, "latest_fork_usec") / 1e6);
        Set(metrics.ServerRdbLastBgsaveOk, Text(info, "rdb_last_bgsave_status") is { } rdb ? (rdb == "ok" ? 1 : 0) : null);
        Set(metrics.ServerAofLastRewriteOk, Text(info, "aof_last_bgrewrite_status") is { } aof ? (aof == "ok" ? 1 : 0) : null);

        switch (Text(info, "role"))
        {
            case "master":
                Set(metrics.ServerConnectedReplicas, Number(info, "connected_slaves"));
                ProjectReplicas(info);
                break;
            case "slave":
                if (Text(info, "master_link_status") is { } link)
                {
                    metrics.ServerReplicationLinkUp.WithLabels(endpoint).Set(link == "up" ? 1 : 0);
                }

                Set(metrics.ServerReplicationSyncInProgress, Flag(info, "master_sync_in_progress"));
                Set(metrics.ServerReplicationLastIo, Number(info, "master_last_io_seconds_ago") is { } io and >= 0 ? io : null);
                break;
            default:
                break; // an INFO without the replication section (refused, or not a Redis)
        }
    }

    /// <summary>A primary's <c>slaveN:ip=...,port=...,state=online,offset=...,lag=...</c> lines: each replica's lag (at most <see cref="MuxWatchMetrics.MaxReplicasPerPrimary"/>).</summary>
    private void ProjectReplicas(IReadOnlyDictionary<string, string> info)
    {
        var primaryOffset = Number(info, "master_repl_offset");
        var listed = new HashSet<string>(StringComparer.Ordinal);
        for (var i = 0; i < MuxWatchMetrics.MaxReplicasPerPrimary; i++)
        {
            if (Text(info, string.Create(CultureInfo.InvariantCulture, $"slave{i}")) is not { } line)
            {
                break;
            }

            var parts = line.Split(',').Select(p => p.Split('=', 2)).Where(p => p.Length == 2).ToDictionary(p => p[0], p => p[1], StringComparer.Ordinal);
            if (!parts.TryGetValue("ip", out var ip) || !parts.TryGetValue("port", out var port) || !int.TryParse(port, NumberStyles.None, CultureInfo.InvariantCulture, out _)
                || ip.Length > 64 || !ip.All(c => char.IsAsciiLetterOrDigit(c) || c is '.' or ':' or '-'))
            {
                continue; // not a replica line one can label by
            }

            var replica = ip.Contains(':', StringComparison.Ordinal) ? $"[{ip}]:{port}" : $"{ip}:{port}";
            listed.Add(replica);
            if (primaryOffset is { } mine && parts.TryGetValue("offset", out var offsetText) && long.TryParse(offsetText, NumberStyles.None, CultureInfo.InvariantCulture, out var theirs))
            {
                metrics.ServerReplicaLagBytes.WithLabels(endpoint, replica).Set(Math.Max(0, mine - theirs));
            }

            if (parts.TryGetValue("lag", out var lagText) && long.TryParse(lagText, NumberStyles.None, CultureInfo.InvariantCulture, out var lag))
            {
                metrics.ServerReplicaAckAge.WithLabels(endpoint, replica).Set(lag);
            }
        }

        // A replica the primary no longer lists (gone, moved to another primary, removed from the cluster) leaves no series.
        foreach (var gone in _replicas.Where(r => !listed.Contains(r)))
        {
            metrics.RemoveReplicaSeries(endpoint, gone);
        }

        _replicas = listed;
    }

    private void Set(Prometheus.Gauge gauge, double? value)
    {
        if (value is { } known)
        {
            gauge.WithLabels(endpoint).Set(known);
        }
    }

    private static double? Flag(IReadOnlyDictionary<string, string> info, string field) => Number(info, field) is { } flag ? (flag > 0 ? 1 : 0) : null;

    private static string? Text(IReadOnlyDictionary<string, string> info, string field) =>
        info.TryGetValue(field, out var value) ? value.Trim() : null;

    private static long? Number(IReadOnlyDictionary<string, string> info, string field) =>
        info.TryGetValue(field, out var value) && long.TryParse(value, NumberStyles.Integer, CultureInfo.InvariantCulture, out var number) ? number : null;
}
