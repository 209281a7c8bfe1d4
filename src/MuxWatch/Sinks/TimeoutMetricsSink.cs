using MuxWatch.Export;
using MuxWatch.Model;
using MuxWatch.Pipeline;

namespace MuxWatch.Sinks;

/// <summary>Publishes each diagnosed timeout to the metrics: <c>muxwatch_timeouts_total</c> and the last-seen gauges.</summary>
/// <remarks>
/// Counted once, when settled, under the final cause: a counter cannot move a past increment, and
/// counting a provisional cause then the final one would page twice. An unsettled timeout waits at most
/// <c>MuxWatch:CorrelationSettleTimeout</c>; <c>muxwatch_correlation_pending</c> shows how many wait.
/// </remarks>
internal sealed class TimeoutMetricsSink(MuxWatchMetrics metrics, TimeProvider time) : ITimeoutSink
{
    public void Publish(ObservedTimeout timeout)
    {
        if (!timeout.Settled)
        {
            metrics.CorrelationPending.Inc();
        }
    }

    public void Settled(ObservedTimeout final)
    {
        metrics.RecordTimeout(final, time.GetUtcNow());
    }

    public void Revise(ObservedTimeout previous, ObservedTimeout revised)
    {
        if (!previous.Settled && revised.Settled)
        {
            metrics.CorrelationPending.Dec();
        }
    }
}
