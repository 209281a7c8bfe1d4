using System.Globalization;
using MuxWatch.Export;
using MuxWatch.Model;

namespace MuxWatch.State;

/// <summary>
/// Turns one endpoint's successive polls into timeline events and <c>muxwatch_server_*</c> samples.
/// Pure bookkeeping on what the client's typed calls returned: no network, no clock of its own.
/// </summary>
/// <remarks>
/// Intervals are widened to what two polls can prove, never narrowed: a save seen running starts no
/// later than the poll before could have missed it, and ends no earlier than the poll that saw it done.
/// The correlator then never misses an event for lack of precision; the cost is at most one poll
/// interval of width (one second where Redis counts in seconds).
/// </remarks>
public sealed class ServerStateTracker
{
    private static readonly TimeSpan SecondResolution = TimeSpan.FromSeconds(1);

    /// <summary>
    /// The longest span a server figure is believed as (ten years of uptime, a save's running time): a
    /// hostile or broken server can send 2^63-1 or 10^11 seconds, which no clock arithmetic survives.
    /// </summary>
    private static readonly TimeSpan Plausible = TimeSpan.FromDays(3650);
    private static readonly TimeSpan SlowestRecentWindow = TimeSpan.FromMinutes(5);

    /// <summary>Slow-log entries taken from one poll: what the poller asks for (<c>SLOWLOG GET 64</c>).</summary>
    public const int MaxSlowlogEntriesPerPoll = 64;

    /// <summary>Slow-log durations kept for the slowest-of-five-minutes gauge: five minutes of full polls at 200 ms.</summary>
    private const int MaxRecentSlow = 1024;
    private static readonly string[] PolledCommands = ["info", "slowlog", "latency", "config", "time"];

    private readonly ServerTimeline _timeline;
    private readonly MuxWatchMetrics _metrics;
    private readonly string _endpoint;
    private readonly List<(DateTimeOffset Time, double Seconds)> _recentSlow = [];
    private readonly HashSet<ServerEventKind> _endedThisPoll = [];

    private DateTimeOffset? _previousStart;
    private string? _runId;

    /// <summary>The replicas the endpoint, a primary, listed at its last poll (their lag series exist).</summary>
    private HashSet<string> _replicas = [];
    private string? _role;
    private string? _master;
    private long? _uptimeSeconds;
    private long? _totalForks;
    private long? _latestForkUsec;
    private long? _rdbSaves;
    private long? _rdbLastSaveTime;
    private long? _aofRewrites;
    private long? _lastSlowlogId;
    private DateTimeOffset? _lastForkSample;
    private TimeSpan _clockOffset;

    /// <summary>Tracks <paramref name="timeline"/>'s endpoint, exporting to <paramref name="metrics"/>.</summary>
    public ServerStateTracker(ServerTimeline timeline, MuxWatchMetrics metrics)
    {
        ArgumentNullException.ThrowIfNull(timeline);
        ArgumentNullException.ThrowIfNull(metrics);
        _timeline = timeline;
        _metrics = metrics;
        _endpoint = timeline.Endpoint;
    }

    /// <summary>Slow-log durations kept for the slowest-of-five-minutes gauge (bounded).</summary>
    internal int RecentSlowCount => _recentSlow.Count;

    /// <summary>The newest fork sample already in the timeline; the poller reads <c>LATENCY HISTORY fork</c> only past it.</summary>
    public DateTimeOffset? LastForkSample => _lastForkSample;

    /// <summary>Applies one poll. Returns true when it read everything the endpoint allows (the timeline is complete up to its start).</summary>
    /// <remarks>
    /// Every figure is parsed defensively (out-of-range times and durations are not believed); should a
    /// reply still carry something no arithmetic survives, the poll is reported failed with the reason
    /// (<c>malformed</c> in <c>muxwatch_server_poll_failures_total</c>, the message in <c>/api/targets</c>),
    /// never left to fail silently on every poll.
    /// </remarks>
    public bool Apply(ServerPollResult poll)
    {
        ArgumentNullException.ThrowIfNull(poll);
        try
        {
            return ApplyPoll(poll);
        }
        catch (Exception ex) when (ex is ArgumentException or OverflowException or FormatException)
        {
            _metrics.ServerPollFailures.WithLabels(_endpoint, "malformed").Inc();
            _timeline.PollFailed($"the server's reply could not be used ({ex.GetType().Name}): a value out of range", poll.Finished);
            return false;
        }
    }

    private bool ApplyPoll(ServerPollResult poll)
    {
        if (poll.Error is not null)
        {
            _metrics.ServerPollFailures.WithLabels(_endpoint, poll.ErrorReason ?? "error").Inc();
            _timeline.PollFailed(poll.Error, poll.Finished);
            return false;
        }

        if (poll.ClockOffset is { } offset)
        {
            _clockOffset = offset;
            _metrics.ServerClockOffsetSeconds.WithLabels(_endpoint).Set(offset.TotalSeconds);
        }

        foreach (var command in PolledCommands)
        {
            var refused = poll.Refused.Contains(command, StringComparer.OrdinalIgnoreCase);
            _metrics.ServerCommandRefused.WithLabels(_endpoint, command).Set(refused ? 1 : 0);
        }

        bool? monitorOn = poll.LatencyMonitorThresholdMs is { } threshold ? threshold > 0 : null;
        if (monitorOn is { } on)
        {
            _metrics.ServerLatencyMonitorEnabled.WithLabels(_endpoint).Set(on ? 1 : 0);
        }

        _timeline.Describe(poll.Refused, poll.ClockOffset, monitorOn);
        _timeline.NoteDropped(poll.Dropped);
        if (poll.Info is { } info)
        {
            ApplyInfo(info, poll);
        }

        if (poll.ClusterInfo is { } cluster)
        {
            ApplyClusterInfo(cluster, poll);
        }

        if (poll.ClusterMembers is { } members)
        {
            _timeline.NoteClusterMembers(members);
        }

        var forkSeen = poll.ForkHistory is { } history && ApplyForkHistory(history, poll.Finished);
        if (poll.LatencyLatest is { } latest)
        {
            foreach (var spike in latest)
            {
                _metrics.ServerLatencySpikeSeconds.WithLabels(_endpoint, _metrics.LatencyEventLabel(_endpoint, spike.Event)).Set(spike.LatestMs / 1000);
            }
        }

        if (poll.Info is { } fields)
        {
            ApplyForkCounters(fields, poll, forkSeen);
        }

        if (poll.Slowlog is { } slowlog)
        {
            ApplySlowlog(slowlog, poll.Finished);
        }

        _previousStart = poll.Started;
        _metrics.ServerLastPollSuccess.WithLabels(_endpoint).Set(poll.Finished.ToUnixTimeMilliseconds() / 1000.0);
        _timeline.PollCompleted(poll.Started, poll.Finished);
        return true;
    }

    /// <summary>A server time (its clock) on the client's clock.</summary>
    private DateTimeOffset ToClient(DateTimeOffset serverTime) => Shift(serverTime, -_clockOffset);

    /// <summary><paramref name="time"/> moved by <paramref name="by"/>, held at the calendar's ends rather than thrown past them.</summary>
    private static DateTimeOffset Shift(DateTimeOffset time, TimeSpan by) =>
        by >= TimeSpan.Zero
            ? (DateTimeOffset.MaxValue - time > by ? time + by : DateTimeOffset.MaxValue)
            : (time - DateTimeOffset.MinValue > by.Duration() ? time + by : DateTimeOffset.MinValue);

    /// <summary>A count of seconds a server reported, when it is one a clock can use (see <see cref="Plausible"/>).</summary>
    private static TimeSpan? Seconds(long? seconds) =>
        seconds is >= 0 && seconds.Value <= (long)Plausible.TotalSeconds ? TimeSpan.FromSeconds(seconds.Value) : null;

    /// <summary>The earliest moment something first seen by this poll can have started: the previous poll's start.</summary>
    private DateTimeOffset EarliestSince(ServerPollResult poll, TimeSpan? runningFor = null)
    {
        var earliest = _previousStart ?? Shift(poll.Started, -((runningFor ?? TimeSpan.Zero) + SecondResolution));
        if (runningFor is { } running)
        {
            // The server says how long it has run (in whole seconds): it cannot have started before that.
            var byServer = Shift(poll.Started, -(running + SecondResolution));
            earliest = byServer > earliest ? byServer : earliest;
        }

        return earliest;
    }

    private void ApplyInfo(IReadOnlyDictionary<string, string> info, ServerPollResult poll)
    {
        DetectRestart(info, poll);
        ApplyReplication(info, poll);

        Interval(info, "rdb_bgsave_in_progress", ServerEventKind.Bgsave, _metrics.ServerBgsaveInProgress, poll,
            Seconds(Number(info, "rdb_current_bgsave_time_sec")),
            () => Text(info, "rdb_last_bgsave_status"));
        Interval(info, "aof_rewrite_in_progress", ServerEventKind.AofRewrite, _metrics.ServerAofRewriteInProgress, poll,
            Seconds(Number(info, "aof_current_rewrite_time_sec")),
            () => Text(info, "aof_last_bgrewrite_status"));
        Interval(info, "module_fork_in_progress", ServerEventKind.ModuleFork, _metrics.ServerModuleForkInProgress, poll, null, () => null);
        Interval(info, "loading", ServerEventKind.Loading, _metrics.ServerLoading, poll, null, () => null);

        SetGauge(_metrics.ServerRdbCurrentBgsaveSeconds, Number(info, "rdb_current_bgsave_time_sec") is { } current ? Math.Max(0, current) : null);
        SetGauge(_metrics.ServerCowSizeBytes, Number(info, "current_cow_size"));
        SetGauge(_metrics.ServerLatestForkSeconds, Number(info, "latest_fork_usec") / 1e6);
        SetGauge(_metrics.ServerRdbLastBgsaveOk, Text(info, "rdb_last_bgsave_status") is { } rdb ? (rdb == "ok" ? 1 : 0) : null);
        SetGauge(_metrics.ServerAofLastRewriteOk, Text(info, "aof_last_bgrewrite_status") is { } aof ? (aof == "ok" ? 1 : 0) : null);

        // A save or rewrite that started and ended between two polls left only its counters behind.
        var rdbSaves = Number(info, "rdb_saves");
        var lastSave = Number(info, "rdb_last_save_time");
        var savedBetween = rdbSaves is { } saves
            ? _rdbSaves is { } before && saves > before
            : lastSave is { } at && _rdbLastSaveTime is { } previous && at != previous;
        if (savedBetween && !_timeline.IsRunning(ServerEventKind.Bgsave) && !_endedThisPoll.Contains(ServerEventKind.Bgsave))
        {
            AddBetweenPolls(ServerEventKind.Bgsave, poll, Text(info, "rdb_last_bgsave_status"));
        }

        var aofRewrites = Number(info, "aof_rewrites");
        if (aofRewrites is { } rewrites && _aofRewrites is { } rewritesBefore && rewrites > rewritesBefore
            && !_timeline.IsRunning(ServerEventKind.AofRewrite) && !_endedThisPoll.Contains(ServerEventKind.AofRewrite))
        {
            AddBetweenPolls(ServerEventKind.AofRewrite, poll, Text(info, "aof_last_bgrewrite_status"));
        }

        _rdbSaves = rdbSaves;
        _rdbLastSaveTime = lastSave;
        _aofRewrites = aofRewrites;
        _endedThisPoll.Clear();
    }

    /// <summary>
    /// <c>INFO replication</c>: the role (a change is a failover or a demotion, on the timeline), a
    /// replica's link and sync (intervals: a link down, a full resync), a primary's replicas and their lag.
    /// </summary>
    private void ApplyReplication(IReadOnlyDictionary<string, string> info, ServerPollResult poll)
    {
        var role = Text(info, "role") switch
        {
            "master" => "primary",
            "slave" => "replica",
            _ => null,
        };
        if (role is null)
        {
            return; // an INFO without the replication section (refused, or not a Redis)
        }

        var primary = role == "primary";
        var master = Text(info, "master_host") is { } host && Number(info, "master_port") is { } port and > 0 and <= 65535
            ? (host.Contains(':', StringComparison.Ordinal) ? $"[{host}]:{port}" : $"{host}:{port}")
            : null;
        if (_role is { } before && before != role)
        {
            // The failover window: from when this replica lost its primary (its link went down) to the poll
            // that saw it promoted. A promoted replica has no primary link any more: that interval ends here.
            var since = _timeline.RunningSince(ServerEventKind.ReplicationLinkDown) ?? EarliestSince(poll);
            _timeline.End(ServerEventKind.ReplicationLinkDown, poll.Finished, "promoted", poll.Finished);
            _timeline.End(ServerEventKind.FullSync, poll.Finished, "promoted", poll.Finished);
            _timeline.Add(new ServerEvent(ServerEventKind.RoleChange, primary ? since : EarliestSince(poll), poll.Finished)
            {
                Outcome = primary ? MuxWatch.Diagnosis.TimelineCorrelation.PromotedOutcome : "demoted to replica",
                Peer = primary ? _master : master,
            }, poll.Finished);
            _metrics.ServerRoleChanges.WithLabels(_endpoint).Inc();
            _metrics.RemoveRoleSeries(_endpoint, primary);
        }
        else if (_role is null)
        {
            _metrics.ServerRoleChanges.WithLabels(_endpoint).Inc(0); // the series exists from the first poll
        }

        _role = role;
        _master = primary ? null : master ?? _master;
        _metrics.ServerRole.WithLabels(_endpoint, role).Set(1);
        if (primary)
        {
            SetGauge(_metrics.ServerConnectedReplicas, Number(info, "connected_slaves"));
            ApplyReplicas(info);
            return;
        }

        var linkUp = Text(info, "master_link_status") is { } link ? link == "up" : (bool?)null;
        if (linkUp is { } up)
        {
            _metrics.ServerReplicationLinkUp.WithLabels(_endpoint).Set(up ? 1 : 0);
            if (!up)
            {
                _timeline.Begin(ServerEventKind.ReplicationLinkDown, EarliestSince(poll));
            }
            else
            {
                _timeline.End(ServerEventKind.ReplicationLinkDown, poll.Finished, "up", poll.Finished);
            }
        }

        Interval(info, "master_sync_in_progress", ServerEventKind.FullSync, _metrics.ServerReplicationSyncInProgress, poll, null, () => null);
        SetGauge(_metrics.ServerReplicationLastIo, Number(info, "master_last_io_seconds_ago") is { } io and >= 0 ? io : null);
    }

    /// <summary><c>CLUSTER INFO</c>: the node's view of the cluster; while it says fail, a <c>cluster-fail</c> interval (it refuses commands).</summary>
    private void ApplyClusterInfo(IReadOnlyDictionary<string, string> cluster, ServerPollResult poll)
    {
        if (Text(cluster, "cluster_state") is { } state)
        {
            var ok = state == "ok";
            _metrics.ServerClusterStateOk.WithLabels(_endpoint).Set(ok ? 1 : 0);
            if (!ok)
            {
                _timeline.Begin(ServerEventKind.ClusterFail, EarliestSince(poll));
            }
            else
            {
                _timeline.End(ServerEventKind.ClusterFail, poll.Finished, "ok", poll.Finished);
            }
        }

        SetGauge(_metrics.ServerClusterSlotsFail, Number(cluster, "cluster_slots_fail"));
        SetGauge(_metrics.ServerClusterSlotsPfail, Number(cluster, "cluster_slots_pfail"));
        SetGauge(_metrics.ServerClusterKnownNodes, Number(cluster, "cluster_known_nodes"));
    }

    /// <summary>A primary's <c>slaveN:ip=...,port=...,state=online,offset=...,lag=...</c> lines: each replica's lag (at most <see cref="MuxWatchMetrics.MaxReplicasPerPrimary"/>).</summary>
    private void ApplyReplicas(IReadOnlyDictionary<string, string> info)
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
                _metrics.ServerReplicaLagBytes.WithLabels(_endpoint, replica).Set(Math.Max(0, mine - theirs));
            }

            if (parts.TryGetValue("lag", out var lagText) && long.TryParse(lagText, NumberStyles.None, CultureInfo.InvariantCulture, out var lag))
            {
                _metrics.ServerReplicaAckAge.WithLabels(_endpoint, replica).Set(lag);
            }
        }

        // A replica the primary no longer lists (gone, moved to another primary, removed from the cluster) leaves no series.
        foreach (var gone in _replicas.Where(r => !listed.Contains(r)))
        {
            _metrics.RemoveReplicaSeries(_endpoint, gone);
        }

        _replicas = listed;
    }

    private void DetectRestart(IReadOnlyDictionary<string, string> info, ServerPollResult poll)
    {
        var runId = Text(info, "run_id");
        var uptime = Number(info, "uptime_in_seconds");
        var restarted = (_runId is not null && runId is not null && runId != _runId)
            || (_uptimeSeconds is { } before && uptime is { } now && now < before);
        if (restarted)
        {
            var at = Seconds(uptime) is { } up ? Shift(poll.Finished, -(up + SecondResolution)) : _previousStart ?? poll.Started;
            _timeline.EndAll(at, poll.Finished);
            _timeline.Add(new ServerEvent(ServerEventKind.Restart, at, poll.Finished), poll.Finished);
            _metrics.ServerRestarts.WithLabels(_endpoint).Inc();

            // Its counters and slow-log ids start again from zero.
            _totalForks = 0;
            _rdbSaves = null;
            _rdbLastSaveTime = null;
            _aofRewrites = null;
            _lastSlowlogId = -1;
            _lastForkSample = null;
            _latestForkUsec = null;
        }
        else
        {
            _metrics.ServerRestarts.WithLabels(_endpoint).Inc(0); // the series exists from the first poll
        }

        _runId = runId ?? _runId;
        _uptimeSeconds = uptime;
    }

    private void Interval(
        IReadOnlyDictionary<string, string> info,
        string field,
        ServerEventKind kind,
        Prometheus.Gauge gauge,
        ServerPollResult poll,
        TimeSpan? runningFor,
        Func<string?> outcome)
    {
        if (Number(info, field) is not { } flag)
        {
            return; // an older Redis without the field: not exported
        }

        gauge.WithLabels(_endpoint).Set(flag > 0 ? 1 : 0);
        if (flag > 0)
        {
            _timeline.Begin(kind, EarliestSince(poll, runningFor));
        }
        else if (_timeline.End(kind, poll.Finished, outcome(), poll.Finished) is not null)
        {
            _endedThisPoll.Add(kind);
        }
    }

    private void AddBetweenPolls(ServerEventKind kind, ServerPollResult poll, string? outcome)
    {
        var start = EarliestSince(poll);
        _timeline.Add(new ServerEvent(kind, start, poll.Finished)
        {
            BetweenPolls = true,
            Outcome = outcome,
            DurationMs = (poll.Finished - start).TotalMilliseconds,
        }, poll.Finished);
    }

    /// <summary>New <c>LATENCY HISTORY fork</c> samples become fork events. Returns true when there was one.</summary>
    private bool ApplyForkHistory(IReadOnlyList<LatencySample> history, DateTimeOffset now)
    {
        var any = false;
        foreach (var sample in history.OrderBy(s => s.Time))
        {
            if (_lastForkSample is { } last && sample.Time <= last)
            {
                continue;
            }

            // Logged in whole seconds once the fork returned: it ran within [t - ms, t + 1 s].
            var end = Shift(ToClient(sample.Time), SecondResolution);
            var start = Shift(ToClient(sample.Time), -TimeSpan.FromMilliseconds(Math.Clamp(sample.Ms, 0, Plausible.TotalMilliseconds)));
            _timeline.Add(new ServerEvent(ServerEventKind.Fork, start, end) { DurationMs = sample.Ms }, now);
            _lastForkSample = sample.Time;
            any = true;
        }

        return any;
    }

    /// <summary><c>total_forks</c> counts every fork; without a latency sample for it, the fork is placed between the two polls.</summary>
    private void ApplyForkCounters(IReadOnlyDictionary<string, string> info, ServerPollResult poll, bool forkSeenByLatencyMonitor)
    {
        var totalForks = Number(info, "total_forks");
        var latestForkUsec = Number(info, "latest_fork_usec");
        var forked = false;
        if (totalForks is { } total)
        {
            if (_totalForks is { } before && total > before)
            {
                _metrics.ServerForks.WithLabels(_endpoint).Inc((double)total - before); // as a double: a hostile count must not wrap
                forked = true;
            }
            else
            {
                _metrics.ServerForks.WithLabels(_endpoint).Inc(0); // the series exists from the first poll
            }

            _totalForks = total;
        }
        else if (latestForkUsec is { } usec && _latestForkUsec is { } previousUsec && usec != previousUsec)
        {
            forked = true; // before 6.2: a new latest_fork_usec is the only trace of a fork
        }

        _latestForkUsec = latestForkUsec;
        if (forked && !forkSeenByLatencyMonitor)
        {
            var start = EarliestSince(poll);
            _timeline.Add(new ServerEvent(ServerEventKind.Fork, start, poll.Finished)
            {
                BetweenPolls = true,
                DurationMs = latestForkUsec / 1000.0,
            }, poll.Finished);
        }
    }

    private void ApplySlowlog(IReadOnlyList<SlowlogEntry> entries, DateTimeOffset now)
    {
        var newest = entries.Count == 0 ? -1 : entries.Max(e => e.Id);
        if (_lastSlowlogId is { } last && newest > last)
        {
            // Ids grow by one per entry, so the count is exact even when more arrived than one read returns.
            _metrics.ServerSlowlogEntries.WithLabels(_endpoint).Inc((double)newest - last); // as a double: a hostile id of 2^63-1 must not wrap
        }
        else
        {
            _metrics.ServerSlowlogEntries.WithLabels(_endpoint).Inc(0);
        }

        // No more than was asked for, however many the server sent (the newest by id), and kept by when MuxWatch
        // saw it when the server stamps it in the future: a hostile server cannot grow what is kept.
        foreach (var entry in entries.Where(e => e.Id > (_lastSlowlogId ?? -1)).OrderByDescending(e => e.Id).Take(MaxSlowlogEntriesPerPoll).OrderBy(e => e.Id))
        {
            // Logged in whole seconds once it had run: it ran within [t - duration, t + 1 s].
            var end = Shift(ToClient(entry.Time), SecondResolution);
            var start = Shift(ToClient(entry.Time), -(entry.Duration < TimeSpan.Zero || entry.Duration > Plausible ? Plausible : entry.Duration));
            _timeline.Add(new ServerEvent(ServerEventKind.SlowCommand, start, end)
            {
                DurationMs = entry.Duration.TotalMilliseconds,
                Command = entry.Command,
                SlowlogId = entry.Id,
            }, now);
            _recentSlow.Add((end > now ? now : end, entry.Duration.TotalSeconds));
        }

        if (_recentSlow.Count > MaxRecentSlow)
        {
            _recentSlow.RemoveRange(0, _recentSlow.Count - MaxRecentSlow);
        }

        _lastSlowlogId = Math.Max(_lastSlowlogId ?? -1, newest);
        _recentSlow.RemoveAll(slow => slow.Time < now - SlowestRecentWindow);
        _metrics.ServerSlowestRecentCommandSeconds.WithLabels(_endpoint).Set(_recentSlow.Count == 0 ? 0 : _recentSlow.Max(slow => slow.Seconds));
    }

    private void SetGauge(Prometheus.Gauge gauge, double? value)
    {
        if (value is { } known)
        {
            gauge.WithLabels(_endpoint).Set(known);
        }
    }

    private static string? Text(IReadOnlyDictionary<string, string> info, string field) =>
        info.TryGetValue(field, out var value) ? value.Trim() : null;

    private static long? Number(IReadOnlyDictionary<string, string> info, string field) =>
        info.TryGetValue(field, out var value) && long.TryParse(value, NumberStyles.Integer, CultureInfo.InvariantCulture, out var number) ? number : null;
}
