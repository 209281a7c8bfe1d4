using MuxWatch.Export;
using MuxWatch.Model;
using MuxWatch.State;

namespace MuxWatch.Sources;

/// <summary>Samples the .NET thread pool each cycle into the <c>muxwatch_threadpool_*</c> families and the <see cref="ThreadPoolHistory"/>.</summary>
internal sealed class ThreadPoolProbe(MuxWatchMetrics metrics, ThreadPoolHistory history) : IPeriodicProbe
{
    public string Name => "threadpool";

    public void Sample(DateTimeOffset now, CancellationToken stopping)
    {
        var pool = ThreadPoolSnapshot.Capture();
        metrics.RecordThreadPool(pool);
        history.Add(now, pool);
    }
}
