using MuxWatch.Export;
using MuxWatch.Model;

namespace MuxWatch.Sources;

/// <summary>
/// Exports the catcher's counts each cycle: what it dropped (<c>muxwatch_capture_dropped_total</c>: drops are
/// never silent) and the error replies it counted (<c>muxwatch_error_replies_total</c>).
/// </summary>
internal sealed class CaptureQueueProbe(FirstChanceRedisErrorCatcher catcher, MuxWatchMetrics metrics) : IPeriodicProbe
{
    public string Name => "capture";

    public void Sample(DateTimeOffset now, CancellationToken stopping)
    {
        metrics.CaptureDropped.IncTo(catcher.Dropped);
        for (var i = 0; i < ErrorReplies.Codes.Count; i++)
        {
            metrics.ErrorReplyCounters[i].IncTo(catcher.ErrorRepliesOf(i));
        }
    }
}
