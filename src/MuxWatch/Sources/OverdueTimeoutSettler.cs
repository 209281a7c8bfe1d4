using MuxWatch.Pipeline;

namespace MuxWatch.Sources;

/// <summary>Each cycle, settles the timeouts held for a server poll that never came in time (<c>MuxWatch:CorrelationSettleTimeout</c>).</summary>
internal sealed class OverdueTimeoutSettler(TimeoutPipeline pipeline) : IPeriodicProbe
{
    public string Name => "correlation";

    public void Sample(DateTimeOffset now, CancellationToken stopping) => pipeline.SettleOverdue(now);
}
