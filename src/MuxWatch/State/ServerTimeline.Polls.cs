using MuxWatch.Export;

namespace MuxWatch.State;

/// <content>The bookkeeping of the endpoint's polls, kept with its timeline: one per endpoint, gone with it.</content>
public sealed partial class ServerTimeline
{
    private ServerStateTracker? _tracker;

    /// <summary>The sizes of keys the diagnosis asked about, measured by the poller (<c>MEMORY USAGE</c>).</summary>
    internal KeySizeLedger KeySizes { get; } = new();

    /// <summary>When the newest fork the endpoint's <c>LATENCY HISTORY</c> reported was sampled, if any (the poller asks about newer ones only).</summary>
    public DateTimeOffset? LastForkSample => Volatile.Read(ref _tracker)?.LastForkSample;

    /// <summary>The bookkeeping that turns this endpoint's polls into events and series, created on the first poll.</summary>
    internal ServerStateTracker TrackedBy(MuxWatchMetrics metrics) =>
        Volatile.Read(ref _tracker) ?? Interlocked.CompareExchange(ref _tracker, new ServerStateTracker(this, metrics), null) ?? _tracker;
}
