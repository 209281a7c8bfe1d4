using System.Collections.Concurrent;
using Microsoft.Extensions.Options;
using MuxWatch.Hosting;
using MuxWatch.Pipeline;
using MuxWatch.Probing;
using MuxWatch.Server;
using MuxWatch.Timeouts;

namespace MuxWatch.Correlation;

/// <summary>
/// The correlator: ties each timeout to what its endpoint's server did while the request waited
/// (<see cref="TimelineCorrelation"/>), and settles it once the server has been polled past the catch.
/// </summary>
/// <remarks>
/// The fork or slow command that explains a timeout is usually seen at the next poll, after the timeout
/// (a stalled server answers no poll either). So a timeout caught after its endpoint's last complete
/// poll is published at once with what is known, then settled when a poll that started after the catch
/// completes, or after <see cref="MuxWatchOptions.CorrelationSettleTimeout"/> with what is known then.
/// A timeout whose endpoint is not polled (posted from elsewhere, polling off) is settled at once.
/// </remarks>
internal sealed class ServerCorrelationStep : ITimeoutStep, IPeriodicProbe, IDisposable
{
    /// <summary>The most timeouts waiting at once; past it, a timeout is settled with what is known.</summary>
    internal const int MaxPending = 10_000;

    private readonly ServerTimelines _timelines;
    private readonly TimeProvider _time;
    private readonly IOptions<MuxWatchOptions> _options;
    private readonly ConcurrentDictionary<long, Pending> _pending = new();

    public ServerCorrelationStep(ServerTimelines timelines, TimeProvider time, IOptions<MuxWatchOptions> options)
    {
        _timelines = timelines;
        _time = time;
        _options = options;
        _timelines.Polled += OnPolled;
    }

    public TimeoutStepStage Stage => TimeoutStepStage.Correlate;

    public string Name => "correlation";

    /// <summary>Timeouts waiting for their endpoint's next poll.</summary>
    public int PendingCount => _pending.Count;

    public void Apply(TimeoutContext timeout)
    {
        var endpoint = timeout.Report.Endpoint ?? timeout.LiveCounters?.Endpoint;
        if (_timelines.Find(endpoint) is not { } timeline || timeout.Diagnosis is not { } before)
        {
            return;
        }

        var (from, to) = WaitingWindow.Of(timeout.Observation);
        timeout.Diagnosis = Correlate(before, timeline, from, to);
        var settleTimeout = _options.Value.CorrelationSettleTimeout;
        if (IsComplete(timeline, to) || settleTimeout <= TimeSpan.Zero || _pending.Count >= MaxPending)
        {
            return;
        }

        var deadline = _time.GetUtcNow() + settleTimeout;
        timeout.SettleLater((published, settle) =>
        {
            var pending = new Pending(published, before, timeline, from, to, deadline, settle);
            _pending[published.Id] = pending;

            // A poll may have completed between the check above and now.
            if (IsComplete(timeline, to))
            {
                SettleNow(pending);
            }
        });
    }

    /// <summary>Settles every timeout whose wait is over, with what is known.</summary>
    public void Sample(DateTimeOffset now, CancellationToken stopping)
    {
        foreach (var pending in _pending.Values)
        {
            if (pending.Deadline <= now)
            {
                SettleNow(pending);
            }
        }
    }

    public void Dispose() => _timelines.Polled -= OnPolled;

    private static bool IsComplete(ServerTimeline timeline, DateTimeOffset caught) => timeline.CompleteThrough is { } through && through >= caught;

    private TimeoutDiagnosis Correlate(TimeoutDiagnosis before, ServerTimeline timeline, DateTimeOffset from, DateTimeOffset to) =>
        TimelineCorrelation.Refine(before, timeline.Overlapping(from, to, _time.GetUtcNow()), from, to);

    private void OnPolled(ServerTimeline timeline)
    {
        foreach (var pending in _pending.Values)
        {
            if (ReferenceEquals(pending.Timeline, timeline) && IsComplete(timeline, pending.To))
            {
                SettleNow(pending);
            }
        }
    }

    private void SettleNow(Pending pending)
    {
        if (_pending.TryRemove(pending.Published.Id, out _))
        {
            pending.Settle(Correlate(pending.Before, pending.Timeline, pending.From, pending.To));
        }
    }

    private sealed record Pending(
        ObservedTimeout Published,
        TimeoutDiagnosis Before,
        ServerTimeline Timeline,
        DateTimeOffset From,
        DateTimeOffset To,
        DateTimeOffset Deadline,
        Func<TimeoutDiagnosis, ObservedTimeout> Settle);
}
