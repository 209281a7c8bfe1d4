using MuxWatch.Model;
using MuxWatch.State;

namespace MuxWatch.Pipeline;

/// <summary>
/// Adds what this process's runtime did over the wait (GC pauses, CPU, late wakes of MuxWatch's dedicated
/// thread), so that the rules can name a cause in the app beyond the pool: <c>gc-pause</c>, <c>client-cpu</c>; and
/// the thread pool's own adjustments around it, by the runtime's reason (threads blocked on tasks, starvation).
/// In-process sources only: a posted message came from another process.
/// </summary>
internal sealed class RuntimeOverWaitStep(RuntimeHistory history, ThreadPoolAdjustments adjustments, TimeProvider time) : ITimeoutStep
{
    private static readonly TimeSpan AdjustmentsBefore = TimeSpan.FromSeconds(1);

    public TimeoutStepStage Stage => TimeoutStepStage.Enrich;

    public void Apply(TimeoutContext timeout)
    {
        if (TimeoutSources.IsInProcess(timeout.Observation.Source))
        {
            var (from, to) = timeout.Waiting;
            timeout.Runtime = history.Over(from, to, time.GetUtcNow(), Environment.ProcessorCount) is { } runtime
                ? runtime with
                {
                    // A second before the wait too: the pool adds threads once blocked ones have held it a while.
                    BlockedThreadAdjustments = adjustments.Count(ThreadPoolAdjustmentReason.CooperativeBlocking, from - AdjustmentsBefore, to),
                    StarvedThreadAdjustments = adjustments.Count(ThreadPoolAdjustmentReason.Starvation, from - AdjustmentsBefore, to),
                }
                : null;
        }
    }
}
