using System.Globalization;
using MuxWatch.Export;
using MuxWatch.Model;
using MuxWatch.State;

namespace MuxWatch.Tracking;

/// <summary>
/// Turns one endpoint's successive polls into timeline events: saves, rewrites, loading, restarts, role
/// changes, replication and cluster intervals here; the slow log (<see cref="SlowlogTracker"/>) and forks
/// (<see cref="ForkTracker"/>) in rooms of their own; what a poll says as it stands goes to the export side
/// (<see cref="ServerPollSeries"/>). Bookkeeping on what the client's typed calls returned: no network, no
/// clock of its own; it counts only what takes memory across polls (restarts, role changes, poll failures).
/// </summary>
/// <remarks>
/// Intervals are widened to what two polls can prove, never narrowed: a save seen running starts no
/// later than the poll before could have missed it, and ends no earlier than the poll that saw it done.
/// The correlator then never misses an event for lack of precision; the cost is at most one poll
/// interval of width (one second where Redis counts in seconds).
/// </remarks>
internal sealed class ServerStateTracker
{
    internal static readonly TimeSpan SecondResolution = TimeSpan.FromSeconds(1);

    /// <summary>
    /// The longest span a server figure is believed as (ten years of uptime, a save's running time): a
    /// hostile or broken server can send 2^63-1 or 10^11 seconds, which no clock arithmetic survives.
    /// </summary>
    internal static readonly TimeSpan Plausible = TimeSpan.FromDays(3650);

    /// <summary>Slow-log entries taken from one poll: what the poller asks for (<c>SLOWLOG GET 64</c>).</summary>
    internal const int MaxSlowlogEntriesPerPoll = SlowlogTracker.MaxEntriesPerPoll;

    private readonly ServerTimeline _timeline;
    private readonly MuxWatchMetrics _metrics;
    private readonly ServerPollSeries _series;
    private readonly string _endpoint;
    private readonly SlowlogTracker _slowlog;
    private readonly ForkTracker _forks;
    private readonly HashSet<ServerEventKind> _endedThisPoll = [];

    private DateTimeOffset? _previousStart;
    private string? _runId;

    /// <summary>The replicas the endpoint, a primary, listed at its last poll (their lag series exist).</summary>
    private string? _role;
    private string? _master;
    private long? _uptimeSeconds;
    private long? _rdbSaves;
    private long? _rdbLastSaveTime;
    private long? _aofRewrites;
    private TimeSpan _clockOffset;

    /// <summary>How far <see cref="_clockOffset"/> may be off (half its reading's round trip), widening what the server logged by a second at most.</summary>
    private TimeSpan _clockUncertainty;

    /// <summary>Tracks <paramref name="timeline"/>'s endpoint, exporting to <paramref name="metrics"/>.</summary>
    public ServerStateTracker(ServerTimeline timeline, MuxWatchMetrics metrics)
    {
        ArgumentNullException.ThrowIfNull(timeline);
        ArgumentNullException.ThrowIfNull(metrics);
        _timeline = timeline;
        _metrics = metrics;
        _endpoint = timeline.Endpoint;
        _series = new ServerPollSeries(metrics, _endpoint);
        _slowlog = new SlowlogTracker(timeline, metrics);
        _forks = new ForkTracker(timeline, metrics);
    }

    /// <summary>Slow-log durations kept for the slowest-of-five-minutes gauge (bounded).</summary>
    internal int RecentSlowCount => _slowlog.RecentCount;

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
            _timeline.Polling.PollFailed($"the server's reply could not be used ({ex.GetType().Name}): a value out of range", poll.Finished);
            return false;
        }
    }

    private bool ApplyPoll(ServerPollResult poll)
    {
        if (poll.Error is not null)
        {
            _metrics.ServerPollFailures.WithLabels(_endpoint, poll.ErrorReason ?? "error").Inc();
            _timeline.Polling.PollFailed(poll.Error, poll.Finished);
            return false;
        }

        if (poll.ClockOffset is { } offset)
        {
            _clockOffset = offset;
            _clockUncertainty = poll.ClockUncertainty is not { } within || within <= TimeSpan.Zero ? TimeSpan.Zero : within < SecondResolution ? within : SecondResolution;
        }

        bool? monitorOn = poll.LatencyMonitorThresholdMs is { } threshold ? threshold > 0 : null;
        _timeline.Polling.Describe(poll.Refused, poll.ClockOffset, poll.ClockUncertainty, monitorOn);
        _timeline.Polling.NoteDropped(poll.Dropped);
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

        var forkSeen = poll.ForkHistory is { } history && _forks.ApplyHistory(history, poll.Finished, ServerClock);

        if (poll.Info is { } fields)
        {
            _forks.ApplyCounters(Number(fields, "total_forks"), Number(fields, "latest_fork_usec"), Number(fields, "used_memory_rss"), EarliestSince(poll), poll.Finished, forkSeen);
        }

        if (poll.Slowlog is { } slowlog)
        {
            _slowlog.Apply(slowlog, poll.Finished, ServerClock);
        }

        foreach (var size in poll.KeySizes)
        {
            _timeline.KeySizes.Note(size, poll.Finished);
        }

        _series.Project(poll); // what the poll says as it stands, on the export side
        _previousStart = poll.Started;
        _metrics.ServerLastPollSuccess.WithLabels(_endpoint).Set(poll.Finished.ToUnixTimeMilliseconds() / 1000.0);
        _timeline.Polling.PollCompleted(poll.Started, poll.Finished);
        return true;
    }

    /// <summary>The server's clock as last read, to place what it logged on the client's.</summary>
    private LoggedTime ServerClock => new(_clockOffset, _clockUncertainty);

    /// <summary><paramref name="time"/> moved by <paramref name="by"/>, held at the calendar's ends rather than thrown past them.</summary>
    internal static DateTimeOffset Shift(DateTimeOffset time, TimeSpan by) =>
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

        Interval(info, "rdb_bgsave_in_progress", ServerEventKind.Bgsave, poll,
            Seconds(Number(info, "rdb_current_bgsave_time_sec")),
            () => Text(info, "rdb_last_bgsave_status"));
        Interval(info, "aof_rewrite_in_progress", ServerEventKind.AofRewrite, poll,
            Seconds(Number(info, "aof_current_rewrite_time_sec")),
            () => Text(info, "aof_last_bgrewrite_status"));
        Interval(info, "module_fork_in_progress", ServerEventKind.ModuleFork, poll, null, () => null);
        Interval(info, "loading", ServerEventKind.Loading, poll, null, () => null);

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
            var since = _timeline.Log.RunningSince(ServerEventKind.ReplicationLinkDown) ?? EarliestSince(poll);
            _timeline.Log.End(ServerEventKind.ReplicationLinkDown, poll.Finished, "promoted", poll.Finished);
            _timeline.Log.End(ServerEventKind.FullSync, poll.Finished, "promoted", poll.Finished);
            _timeline.Log.Add(new ServerEvent(ServerEventKind.RoleChange, primary ? since : EarliestSince(poll), poll.Finished)
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
            return;
        }

        var linkUp = Text(info, "master_link_status") is { } link ? link == "up" : (bool?)null;
        if (linkUp is { } up)
        {
            if (!up)
            {
                _timeline.Log.Begin(ServerEventKind.ReplicationLinkDown, EarliestSince(poll));
            }
            else
            {
                _timeline.Log.End(ServerEventKind.ReplicationLinkDown, poll.Finished, "up", poll.Finished);
            }
        }

        Interval(info, "master_sync_in_progress", ServerEventKind.FullSync, poll, null, () => null);
    }

    /// <summary><c>CLUSTER INFO</c>: the node's view of the cluster; while it says fail, a <c>cluster-fail</c> interval (it refuses commands).</summary>
    private void ApplyClusterInfo(IReadOnlyDictionary<string, string> cluster, ServerPollResult poll)
    {
        if (Text(cluster, "cluster_state") is { } state)
        {
            if (state != "ok")
            {
                _timeline.Log.Begin(ServerEventKind.ClusterFail, EarliestSince(poll));
            }
            else
            {
                _timeline.Log.End(ServerEventKind.ClusterFail, poll.Finished, "ok", poll.Finished);
            }
        }
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
            _timeline.Log.EndAll(at, poll.Finished);
            _timeline.Log.Add(new ServerEvent(ServerEventKind.Restart, at, poll.Finished), poll.Finished);
            _metrics.ServerRestarts.WithLabels(_endpoint).Inc();

            // Its counters and slow-log ids start again from zero.
            _forks.ServerRestarted();
            _rdbSaves = null;
            _rdbLastSaveTime = null;
            _aofRewrites = null;
            _slowlog.ServerRestarted();
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
        ServerPollResult poll,
        TimeSpan? runningFor,
        Func<string?> outcome)
    {
        if (Number(info, field) is not { } flag)
        {
            return; // an older Redis without the field: not exported
        }

        if (flag > 0)
        {
            _timeline.Log.Begin(kind, EarliestSince(poll, runningFor));
        }
        else if (_timeline.Log.End(kind, poll.Finished, outcome(), poll.Finished) is not null)
        {
            _endedThisPoll.Add(kind);
        }
    }

    private void AddBetweenPolls(ServerEventKind kind, ServerPollResult poll, string? outcome)
    {
        var start = EarliestSince(poll);
        _timeline.Log.Add(new ServerEvent(kind, start, poll.Finished)
        {
            BetweenPolls = true,
            Outcome = outcome,
            DurationMs = (poll.Finished - start).TotalMilliseconds,
        }, poll.Finished);
    }

    private static string? Text(IReadOnlyDictionary<string, string> info, string field) =>
        info.TryGetValue(field, out var value) ? value.Trim() : null;

    private static long? Number(IReadOnlyDictionary<string, string> info, string field) =>
        info.TryGetValue(field, out var value) && long.TryParse(value, NumberStyles.Integer, CultureInfo.InvariantCulture, out var number) ? number : null;
}
