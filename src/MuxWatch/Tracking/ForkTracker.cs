using MuxWatch.Export;
using MuxWatch.Model;
using MuxWatch.State;

namespace MuxWatch.Tracking;

/// <summary>
/// One endpoint's forks across polls: each <c>LATENCY HISTORY fork</c> sample on the timeline as a <c>fork</c>
/// interval; without one, a fork the counters show (<c>total_forks</c>, or before 6.2 a new <c>latest_fork_usec</c>)
/// placed between the two polls; the forks counted.
/// </summary>
internal sealed class ForkTracker(ServerTimeline timeline, MuxWatchMetrics metrics)
{
    private long? _totalForks;
    private long? _latestForkUsec;
    private double? _secondsPerGigabyte;

    /// <summary>The newest fork sample already on the timeline (kept there: the poller reads <c>LATENCY HISTORY fork</c> only past it).</summary>
    public DateTimeOffset? LastSample
    {
        get => timeline.LastForkSample;
        private set => timeline.LastForkSample = value;
    }

    /// <summary>The server restarted: its counters start again from zero, and its samples with them.</summary>
    public void ServerRestarted()
    {
        _totalForks = 0;
        _latestForkUsec = null;
        _secondsPerGigabyte = null;
        LastSample = null;
    }

    /// <summary>New samples become fork events (<paramref name="serverClock"/>: placed on the client's clock). Returns true when there was one.</summary>
    public bool ApplyHistory(IReadOnlyList<LatencySample> history, DateTimeOffset now, LoggedTime serverClock)
    {
        var any = false;
        foreach (var sample in history.OrderBy(s => s.Time))
        {
            if (LastSample is { } last && sample.Time <= last)
            {
                continue;
            }

            // Logged in whole seconds once the fork returned: it ran within [t - ms, t + 1 s].
            var (start, end) = serverClock.Ran(sample.Time, TimeSpan.FromMilliseconds(Math.Clamp(sample.Ms, 0, ServerStateTracker.Plausible.TotalMilliseconds)));
            timeline.Log.Add(new ServerEvent(ServerEventKind.Fork, start, end) { DurationMs = sample.Ms }, now);
            LastSample = sample.Time;
            any = true;
        }

        return any;
    }

    /// <summary>
    /// <c>total_forks</c> counts every fork; without a latency sample for it (<paramref name="seenByLatencyMonitor"/>),
    /// the fork is placed between the two polls, from <paramref name="earliest"/> to <paramref name="finished"/>. The
    /// latest fork's cost and <paramref name="residentBytes"/> (<c>used_memory_rss</c>) foretell the next one's.
    /// </summary>
    public void ApplyCounters(long? totalForks, long? latestForkUsec, double? residentBytes, DateTimeOffset earliest, DateTimeOffset finished, bool seenByLatencyMonitor)
    {
        var forked = false;
        if (totalForks is { } total)
        {
            if (_totalForks is { } before && total > before)
            {
                metrics.ServerForks.WithLabels(timeline.Endpoint).Inc((double)total - before); // as a double: a hostile count must not wrap
                forked = true;
            }
            else
            {
                metrics.ServerForks.WithLabels(timeline.Endpoint).Inc(0); // the series exists from the first poll
            }

            _totalForks = total;
        }
        else if (latestForkUsec is { } usec && _latestForkUsec is { } previousUsec && usec != previousUsec)
        {
            forked = true; // before 6.2: a new latest_fork_usec is the only trace of a fork
        }

        _latestForkUsec = latestForkUsec;
        Foretell(latestForkUsec, residentBytes, forked);
        if (forked && !seenByLatencyMonitor)
        {
            timeline.Log.Add(new ServerEvent(ServerEventKind.Fork, earliest, finished)
            {
                BetweenPolls = true,
                DurationMs = latestForkUsec / 1000.0,
            }, finished);
        }
    }

    /// <summary>
    /// The cost per GB is taken from each new fork and the memory the poll that saw it read (from the first poll, the
    /// latest fork's, at today's memory: when it forked is not known); the next fork's pause is that cost at today's
    /// memory (<see cref="ForkCost"/>, the judgement the doctor shares).
    /// </summary>
    private void Foretell(long? latestForkUsec, double? residentBytes, bool forked)
    {
        if (residentBytes is not { } resident || resident <= 0)
        {
            return; // no memory figure (an older or odd server): nothing to spread the cost over
        }

        if ((forked || _secondsPerGigabyte is null) && latestForkUsec is { } usec && ForkCost.SecondsPerGigabyte(usec, resident) is { } cost)
        {
            _secondsPerGigabyte = cost;
        }

        if (_secondsPerGigabyte is { } perGigabyte)
        {
            var endpoint = timeline.Endpoint;
            metrics.ServerForkSecondsPerGigabyte.WithLabels(endpoint).Set(perGigabyte);
            metrics.ServerNextForkProjectedSeconds.WithLabels(endpoint).Set(ForkCost.ProjectedSeconds(perGigabyte, resident));
        }
    }
}
