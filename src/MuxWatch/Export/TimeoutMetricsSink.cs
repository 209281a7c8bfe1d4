using MuxWatch.Pipeline;
using MuxWatch.Timeouts;

namespace MuxWatch.Export;

/// <summary>Publishes each diagnosed timeout to the metrics: <c>muxwatch_timeouts_total</c> and the last-seen gauges.</summary>
/// <remarks>A revision is not counted again: a counter cannot move a past increment, and counting twice would page twice.</remarks>
internal sealed class TimeoutMetricsSink(MuxWatchMetrics metrics) : ITimeoutSink
{
    public void Publish(ObservedTimeout timeout) => metrics.RecordTimeout(timeout);
}
