using System.ComponentModel;
using MuxWatch.Model;
namespace MuxWatch.State;

/// <summary>
/// One Redis endpoint's recent history (saves, rewrites, forks, slow commands, restarts) and the state
/// of its polling. Bounded: events that ended more than the retention ago are dropped, and at most
/// <see cref="MaxEvents"/> are kept (the oldest go first, counted in <see cref="DroppedEvents"/>).
/// </summary>
/// <remarks>Thread-safe: the poller writes it, the correlator and the API read it.</remarks>
[EditorBrowsable(EditorBrowsableState.Never)] // the probe-package contract (docs/public-api.md): for MuxWatch's own packages, not apps
public sealed partial class ServerTimeline
{
    /// <summary>The most events kept per endpoint, whatever the retention.</summary>
    public const int MaxEvents = 10_000;

    /// <summary>The witness's prompt answers kept: minutes at its calm cadence, most of a minute at its hurried one.</summary>
    internal const int MaxWitnessAnswers = 256;

    private readonly Lock _gate = new();
    private readonly List<ServerEvent> _ended = [];
    private readonly Dictionary<ServerEventKind, ServerEvent> _running = [];
    private readonly TimeSpan _retention;
    private DateTimeOffset? _completeThrough;
    private DateTimeOffset? _lastPollSuccess;
    private (string Message, DateTimeOffset Time)? _lastPollError;
    private IReadOnlyList<string> _refusedCommands = [];
    private TimeSpan? _clockOffset;
    private bool? _latencyMonitorEnabled;
    private long _dropped;
    private IReadOnlySet<string>? _clusterMembers;

    private IReadOnlyList<string> _droppedValues = [];


    /// <summary>Creates the timeline of <paramref name="endpoint"/>, keeping events for <paramref name="retention"/>.</summary>
    internal ServerTimeline(string endpoint, TimeSpan retention)
    {
        Endpoint = endpoint;
        _retention = retention;
    }

    /// <summary>The endpoint, <c>host:port</c>, as the client names it.</summary>
    public string Endpoint { get; }

    /// <summary>
    /// Every event that started before this time is in the timeline: the start of the latest poll that
    /// read everything it may read. A timeout caught before it can be correlated for good.
    /// </summary>
    public DateTimeOffset? CompleteThrough
    {
        get
        {
            lock (_gate)
            {
                return _completeThrough;
            }
        }
    }

    /// <summary>The sizes of keys the diagnosis asked about, as the server answered them (<c>MEMORY USAGE</c>, by the poller).</summary>
    internal KeySizeLedger KeySizes { get; } = new();

    /// <summary>When the newest fork the endpoint's <c>LATENCY HISTORY</c> reported was sampled, if any (the poller asks about newer ones only).</summary>
    public DateTimeOffset? LastForkSample { get; internal set; }

    /// <summary>
    /// True while an interval (a save, a rewrite, a load) is running on the endpoint: its pollers then poll at their busy
    /// cadence, to see it end (as they do when a held timeout waits: <see cref="Pipeline.IServerPollRequests.IsPollWanted"/>).
    /// </summary>
    public bool IntervalRunning
    {
        get
        {
            lock (_gate)
            {
                return _running.Count > 0;
            }
        }
    }

    /// <summary>
    /// The cluster's nodes as this node last listed them (<c>CLUSTER NODES</c>, itself and failed nodes
    /// included); null when it is not a cluster node or has not been read.
    /// </summary>
    internal IReadOnlySet<string>? ClusterMembers => Volatile.Read(ref _clusterMembers);

    /// <summary>Notes the cluster's nodes as this node listed them.</summary>
    internal void NoteClusterMembers(IReadOnlyCollection<string> members) =>
        Volatile.Write(ref _clusterMembers, members.ToHashSet(StringComparer.OrdinalIgnoreCase));

    /// <summary>Events dropped to keep within <see cref="MaxEvents"/>.</summary>
    internal long DroppedEvents => Interlocked.Read(ref _dropped);

    /// <summary>Records an event that has ended (or is instantaneous).</summary>
    internal void Add(ServerEvent ended, DateTimeOffset now)
    {
        ArgumentNullException.ThrowIfNull(ended);
        lock (_gate)
        {
            InsertByEnd(ended);
            Prune(now);
        }
    }

    /// <summary>Starts an interval of <paramref name="kind"/> (a save, a rewrite); ignored when one is already running.</summary>
    internal void Begin(ServerEventKind kind, DateTimeOffset start)
    {
        lock (_gate)
        {
            _running.TryAdd(kind, new ServerEvent(kind, start, null));
        }
    }

    /// <summary>When the running interval of <paramref name="kind"/> began, or null when none runs.</summary>
    internal DateTimeOffset? RunningSince(ServerEventKind kind)
    {
        lock (_gate)
        {
            return _running.TryGetValue(kind, out var running) ? running.Start : null;
        }
    }

    /// <summary>True when an interval of <paramref name="kind"/> is running.</summary>
    public bool IsRunning(ServerEventKind kind)
    {
        lock (_gate)
        {
            return _running.ContainsKey(kind);
        }
    }

    /// <summary>Ends the running interval of <paramref name="kind"/>; returns it, or null when none ran.</summary>
    internal ServerEvent? End(ServerEventKind kind, DateTimeOffset end, string? outcome, DateTimeOffset now)
    {
        lock (_gate)
        {
            var ended = EndLocked(kind, end, outcome);
            Prune(now);
            return ended;
        }
    }

    /// <summary>Ends every running interval at <paramref name="end"/> (the server restarted: what ran died with it).</summary>
    internal void EndAll(DateTimeOffset end, DateTimeOffset now)
    {
        lock (_gate)
        {
            foreach (var kind in _running.Keys.ToList())
            {
                EndLocked(kind, end, "interrupted");
            }

            Prune(now);
        }
    }

    /// <summary>The events that overlap [<paramref name="from"/>, <paramref name="to"/>], by start time.</summary>
    /// <remarks>
    /// Ended events are kept in order of their end, so only those ending at or after <paramref name="from"/>
    /// are looked at: for a recent timeout, the last few, not the whole hour (CorrelationBenchmarks).
    /// </remarks>
    public IReadOnlyList<ServerEvent> Overlapping(DateTimeOffset from, DateTimeOffset to, DateTimeOffset now)
    {
        lock (_gate)
        {
            var found = new List<ServerEvent>();
            for (var i = FirstEndingAtOrAfter(from); i < _ended.Count; i++)
            {
                if (_ended[i].Start <= to)
                {
                    found.Add(_ended[i]);
                }
            }

            found.AddRange(_running.Values.Where(e => e.Overlaps(from, to, now)));
            found.Sort(static (a, b) => a.Start.CompareTo(b.Start));
            return found;
        }
    }

    /// <summary>Inserts an ended event in order of its end (almost always at the back: events end as they are seen).</summary>
    private void InsertByEnd(ServerEvent ended)
    {
        var end = ended.End ?? ended.Start;
        var at = _ended.Count;
        while (at > 0 && (_ended[at - 1].End ?? _ended[at - 1].Start) > end)
        {
            at--;
        }

        _ended.Insert(at, ended);
    }

    /// <summary>The index of the first ended event whose end is at or after <paramref name="time"/> (binary search).</summary>
    private int FirstEndingAtOrAfter(DateTimeOffset time)
    {
        int low = 0, high = _ended.Count;
        while (low < high)
        {
            var middle = (low + high) / 2;
            if ((_ended[middle].End ?? _ended[middle].Start) < time)
            {
                low = middle + 1;
            }
            else
            {
                high = middle;
            }
        }

        return low;
    }

    /// <summary>Every event kept, by start time, the newest <paramref name="limit"/>.</summary>
    public IReadOnlyList<ServerEvent> Events(int limit = int.MaxValue)
    {
        lock (_gate)
        {
            var all = _ended.Concat(_running.Values).OrderBy(e => e.Start).ToList();
            return all.Count <= limit ? all : all[^limit..];
        }
    }


    /// <summary>The most groups <see cref="SlowestCommands"/> returns: bounded like the recent list, whatever a server logs.</summary>
    internal const int MaxSlowCommandGroups = 20;

    /// <summary>
    /// The slow commands of the last hour (of the timeline's retention, if shorter) grouped by command name and
    /// client name, the group with the slowest entry first, at most <see cref="MaxSlowCommandGroups"/>.
    /// </summary>
    /// <remarks>Read from the events the timeline keeps anyway: no second copy of the slow log is held.</remarks>
    public IReadOnlyList<SlowCommandGroup> SlowestCommands(DateTimeOffset now)
    {
        List<ServerEvent> slow;
        lock (_gate)
        {
            var from = now - TimeSpan.FromHours(1);
            slow = [.. _ended.Skip(FirstEndingAtOrAfter(from)).Where(e => e.Kind == ServerEventKind.SlowCommand)];
        }

        return [.. slow
            .GroupBy(e => (e.Command ?? "?", e.ClientName))
            .Select(group =>
            {
                var slowest = group.MaxBy(e => e.DurationMs ?? 0)!;
                return new SlowCommandGroup(group.Key.Item1, group.Key.ClientName, group.Count(), group.Sum(e => e.DurationMs ?? 0),
                    slowest.DurationMs ?? 0, group.Max(e => e.End ?? e.Start))
                {
                    Argument = slowest.Argument,
                    ClientAddress = slowest.ClientAddress,
                    SentBy = slowest.SentBy,
                };
            })
            .OrderByDescending(g => g.SlowestMs)
            .ThenByDescending(g => g.LastLogged)
            .Take(MaxSlowCommandGroups)];
    }

    /// <summary>A poll read what it may: every event that started before <paramref name="started"/> has been seen.</summary>
    internal void PollCompleted(DateTimeOffset started, DateTimeOffset finished)
    {
        lock (_gate)
        {
            if (_completeThrough is null || started > _completeThrough)
            {
                _completeThrough = started;
            }

            _lastPollSuccess = finished;
        }
    }

    /// <summary>A poll failed as a whole (timed out, no connection): reported, and the timeline is not complete past it.</summary>
    internal void PollFailed(string message, DateTimeOffset time)
    {
        lock (_gate)
        {
            _lastPollError = (message, time);
        }
    }

    /// <summary>Notes what the last poll dropped as not believable (<see cref="ServerPollingStatus.Dropped"/>).</summary>
    internal void NoteDropped(IReadOnlyList<string> dropped)
    {
        lock (_gate)
        {
            _droppedValues = dropped;
        }
    }

    /// <summary>Notes what the endpoint refuses, its clock offset and whether its latency monitor is on.</summary>
    internal void Describe(IReadOnlyList<string> refusedCommands, TimeSpan? clockOffset, bool? latencyMonitorEnabled)
    {
        lock (_gate)
        {
            _refusedCommands = refusedCommands;
            _clockOffset = clockOffset ?? _clockOffset;
            _latencyMonitorEnabled = latencyMonitorEnabled ?? _latencyMonitorEnabled;
        }
    }

    /// <summary>The polling state, for <c>/api/targets</c>.</summary>
    public ServerPollingStatus Status()
    {
        lock (_gate)
        {
            return new ServerPollingStatus(
                _lastPollSuccess,
                _lastPollError?.Message,
                _lastPollError?.Time,
                _refusedCommands,
                _clockOffset?.TotalMilliseconds,
                _latencyMonitorEnabled,
                _ended.Count + _running.Count)
            {
                Dropped = _droppedValues,
                WitnessAnsweredAt = _answers.Last?.Answered,
                WitnessRoundTripMs = _answers.Last is { } last ? (last.Answered - last.Sent).TotalMilliseconds : null,
                WitnessSilentSince = _running.TryGetValue(ServerEventKind.Silence, out var silence) ? silence.Start
                    : _running.TryGetValue(ServerEventKind.Unreachable, out var gone) ? gone.Start : null,
                WitnessRefused = Volatile.Read(ref _witnessRefused),
            };
        }
    }

    private ServerEvent? EndLocked(ServerEventKind kind, DateTimeOffset end, string? outcome)
    {
        if (!_running.Remove(kind, out var running))
        {
            return null;
        }

        var ended = running with
        {
            End = end < running.Start ? running.Start : end,
            DurationMs = Math.Max(0, (end - running.Start).TotalMilliseconds),
            Outcome = outcome,
        };
        InsertByEnd(ended);
        return ended;
    }

    private void Prune(DateTimeOffset now)
    {
        var horizon = now - _retention;
        var expired = 0;
        while (expired < _ended.Count && (_ended[expired].End ?? now) < horizon)
        {
            expired++;
        }

        var over = Math.Max(0, _ended.Count - expired - MaxEvents);
        if (expired + over > 0)
        {
            _ended.RemoveRange(0, expired + over);
            Interlocked.Add(ref _dropped, over);
        }
    }
}
