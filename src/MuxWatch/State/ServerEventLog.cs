using MuxWatch.Model;

namespace MuxWatch.State;

/// <summary>
/// One endpoint's events (saves, rewrites, forks, slow commands, restarts, the witness's silences): those running and
/// those ended, by their end. Bounded: events that ended more than the retention ago are dropped, and at most
/// <see cref="MaxEvents"/> are kept (the oldest go first, counted in <see cref="DroppedEvents"/>).
/// </summary>
/// <remarks>Thread-safe: the poller and the witness write it, the correlator and the API read it.</remarks>
internal sealed class ServerEventLog(TimeSpan retention)
{
    /// <summary>The most events kept per endpoint, whatever the retention.</summary>
    internal const int MaxEvents = 10_000;

    private readonly Lock _gate = new();
    private readonly List<ServerEvent> _ended = [];
    private readonly Dictionary<ServerEventKind, ServerEvent> _running = [];
    private long _dropped;

    /// <summary>True while any interval runs (a save, a rewrite, a load, a silence).</summary>
    internal bool AnyRunning
    {
        get
        {
            lock (_gate)
            {
                return _running.Count > 0;
            }
        }
    }

    /// <summary>The events kept, running and ended.</summary>
    internal int Count
    {
        get
        {
            lock (_gate)
            {
                return _ended.Count + _running.Count;
            }
        }
    }

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
    internal bool IsRunning(ServerEventKind kind)
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
    internal IReadOnlyList<ServerEvent> Overlapping(DateTimeOffset from, DateTimeOffset to, DateTimeOffset now)
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
    internal IReadOnlyList<ServerEvent> Events(int limit = int.MaxValue)
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
    internal IReadOnlyList<SlowCommandGroup> SlowestCommands(DateTimeOffset now)
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
        var horizon = now - retention;
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
