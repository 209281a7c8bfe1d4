using MuxWatch.Export;
using MuxWatch.Model;
using MuxWatch.State;

namespace MuxWatch.Tracking;

/// <summary>
/// One endpoint's slow log across polls: each new entry (by id) on the timeline as a <c>slow-command</c>
/// interval, the entries counted, and the slowest of the last five minutes exported. Bounded whatever the
/// server sends: no more entries per poll than were asked for, no more durations kept than five minutes of
/// full polls need.
/// </summary>
internal sealed class SlowlogTracker(ServerTimeline timeline, MuxWatchMetrics metrics)
{
    /// <summary>Slow-log entries taken from one poll: what the poller asks for (<c>SLOWLOG GET 64</c>).</summary>
    public const int MaxEntriesPerPoll = 64;

    /// <summary>Slow-log durations kept for the slowest-of-five-minutes gauge: five minutes of full polls at 200 ms.</summary>
    private const int MaxRecent = 1024;

    private static readonly TimeSpan SlowestRecentWindow = TimeSpan.FromMinutes(5);

    private readonly List<(DateTimeOffset Time, double Seconds)> _recent = [];
    private long? _lastId;

    /// <summary>Durations kept for the slowest-of-five-minutes gauge.</summary>
    public int RecentCount => _recent.Count;

    /// <summary>The server restarted: its slow-log ids start again from zero.</summary>
    public void ServerRestarted() => _lastId = -1;

    /// <summary>Takes one poll's entries, read at <paramref name="now"/>; <paramref name="serverClock"/> places a server time on the client's clock.</summary>
    public void Apply(IReadOnlyList<SlowlogEntry> entries, DateTimeOffset now, LoggedTime serverClock)
    {
        var endpoint = timeline.Endpoint;
        var newest = entries.Count == 0 ? -1 : entries.Max(e => e.Id);
        if (_lastId is { } last && newest > last)
        {
            // Ids grow by one per entry, so the count is exact even when more arrived than one read returns.
            metrics.ServerSlowlogEntries.WithLabels(endpoint).Inc((double)newest - last); // as a double: a hostile id of 2^63-1 must not wrap
        }
        else
        {
            metrics.ServerSlowlogEntries.WithLabels(endpoint).Inc(0);
        }

        // No more than was asked for, however many the server sent (the newest by id), and kept by when MuxWatch
        // saw it when the server stamps it in the future: a hostile server cannot grow what is kept.
        foreach (var entry in entries.Where(e => e.Id > (_lastId ?? -1)).OrderByDescending(e => e.Id).Take(MaxEntriesPerPoll).OrderBy(e => e.Id))
        {
            // Logged in whole seconds once it had run: it ran within [t - duration, t + 1 s].
            var ran = entry.Duration < TimeSpan.Zero || entry.Duration > ServerStateTracker.Plausible ? ServerStateTracker.Plausible : entry.Duration;
            var (start, end) = serverClock.Ran(entry.Time, ran);
            timeline.Log.Add(new ServerEvent(ServerEventKind.SlowCommand, start, end)
            {
                DurationMs = entry.Duration.TotalMilliseconds,
                Command = entry.Command,
                SlowlogId = entry.Id,
                Argument = entry.Argument,
                ClientAddress = entry.ClientAddress,
                ClientName = entry.ClientName,
                SentBy = entry.SentBy,
                SentByMultiplexer = entry.SentByMultiplexer,
            }, now);
            _recent.Add((end > now ? now : end, entry.Duration.TotalSeconds));
        }

        if (_recent.Count > MaxRecent)
        {
            _recent.RemoveRange(0, _recent.Count - MaxRecent);
        }

        _lastId = Math.Max(_lastId ?? -1, newest);
        _recent.RemoveAll(slow => slow.Time < now - SlowestRecentWindow);
        metrics.ServerSlowestRecentCommandSeconds.WithLabels(endpoint).Set(_recent.Count == 0 ? 0 : _recent.Max(slow => slow.Seconds));
    }
}
