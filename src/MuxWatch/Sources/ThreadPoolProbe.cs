using MuxWatch.Export;
using MuxWatch.Model;
using MuxWatch.State;

namespace MuxWatch.Sources;

/// <summary>
/// Samples the .NET thread pool each cycle into the <c>muxwatch_threadpool_*</c> families and the <see cref="ThreadPoolHistory"/>;
/// a pool that stays starved with work queued asks for its workers' stacks (<see cref="PoolStackCapturer"/>), and a pool
/// other than calm keeps the runtime's thread-pool events heard (<see cref="ThreadPoolEvents"/>); and it notes whether the
/// process is busy (<see cref="ProcessActivity"/>).
/// </summary>
/// <remarks>
/// The runtime's own word (<see cref="ThreadPoolEventListener"/>) asks first when threads block on tasks; CPU-bound
/// work that keeps every thread busy makes the pool climb without its starvation reason (measured: the busy test app,
/// 300 items of 300 ms on 2 cores, gave none), so MuxWatch's own sample asks too.
/// </remarks>
internal sealed class ThreadPoolProbe(MuxWatchMetrics metrics, ThreadPoolHistory history, PoolStackCapturer? capturer = null, ThreadPoolEvents? events = null, ProcessActivity? activity = null) : IPeriodicProbe
{
    /// <summary>How long the pool must stay busy over its minimum with work queued before its stacks are asked for.</summary>
    internal static readonly TimeSpan StarvedFor = TimeSpan.FromSeconds(1);

    /// <summary>How long the pool must stay calm (nothing queued, no more busy than its minimum) before a new starvation is another episode.</summary>
    internal static readonly TimeSpan CalmFor = TimeSpan.FromSeconds(5);

    private DateTimeOffset? _starvedSince;
    private DateTimeOffset? _calmSince;

    public string Name => "threadpool";

    public void Sample(DateTimeOffset now, CancellationToken stopping)
    {
        var pool = ThreadPoolSnapshot.Capture();
        metrics.RecordThreadPool(pool);
        history.Add(now, pool);
        events?.PoolSampled(now, pool.IsCalm);
        activity?.NoteBusy(now, pool.IsCalm); // with the witness off, the probe loop alone says whether the process is quiet

        if (pool.IsCalm)
        {
            if ((_calmSince ??= now) <= now - CalmFor)
            {
                capturer?.PoolCalm();
            }
        }
        else
        {
            _calmSince = null;
        }

        if (!(pool.IsStarved && pool.QueueLength > 0))
        {
            _starvedSince = null;
        }
        else if ((_starvedSince ??= now) <= now - StarvedFor)
        {
            capturer?.Request("work-queued");
        }
    }
}
