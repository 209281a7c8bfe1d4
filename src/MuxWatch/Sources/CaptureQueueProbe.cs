using MuxWatch.Export;

namespace MuxWatch.Sources;

/// <summary>Exports the catcher's dropped count each cycle (<c>muxwatch_capture_dropped_total</c>): drops are never silent.</summary>
internal sealed class CaptureQueueProbe(FirstChanceTimeoutCatcher catcher, MuxWatchMetrics metrics) : IPeriodicProbe
{
    public string Name => "capture";

    public void Sample(DateTimeOffset now, CancellationToken stopping) => metrics.CaptureDropped.IncTo(catcher.Dropped);
}
