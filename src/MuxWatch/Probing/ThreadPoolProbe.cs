using MuxWatch.Export;
using MuxWatch.Timeouts;

namespace MuxWatch.Probing;

/// <summary>Samples the .NET thread pool each cycle into the <c>muxwatch_threadpool_*</c> families.</summary>
internal sealed class ThreadPoolProbe(MuxWatchMetrics metrics) : IPeriodicProbe
{
    public string Name => "threadpool";

    public void Sample(DateTimeOffset now, CancellationToken stopping) => metrics.RecordThreadPool(ThreadPoolSnapshot.Capture());
}
