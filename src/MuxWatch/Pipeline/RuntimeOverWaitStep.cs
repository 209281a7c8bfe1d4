using MuxWatch.Model;
using MuxWatch.State;

namespace MuxWatch.Pipeline;

/// <summary>
/// Adds what this process's runtime did over the wait (GC pauses, CPU, late wakes of MuxWatch's dedicated
/// thread), so that the rules can name a cause in the app beyond the pool: <c>gc-pause</c>, <c>client-cpu</c>; and the
/// runtime's thread-pool adjustments over the wait and over the starvation that led up to it (<see cref="RuntimeReasonStep"/>).
/// In-process sources only: a posted message came from another process. The figures are differences of samples
/// at the wait's start and end, so they lie inside the wait by construction (InTheWait's rule); the pauses of the
/// 5 s before it are kept apart, as context, and weigh only for a connection the message says was lost (the loss,
/// inside the wait, is the evidence; the pauses say why it happened: docs/diagnosis.md, "Evidence in the wait").
/// </summary>
internal sealed class RuntimeOverWaitStep(RuntimeHistory history, ThreadPoolHistory pool, TimeProvider time) : ITimeoutStep
{
    public TimeoutStepStage Stage => TimeoutStepStage.Enrich;

    public void Apply(TimeoutContext timeout)
    {
        if (TimeoutSources.IsInProcess(timeout.Observation.Source))
        {
            // The starvation the wait lies in, if one leads up to it (a probe sample within two cycles before the wait):
            // the runtime's word about it was said when its workers blocked, maybe seconds before this wait began.
            var starvedSince = pool.StarvedSince(timeout.Waiting.From, TimeSpan.FromSeconds(2));
            timeout.Runtime = history.Over(timeout.Waiting.From, timeout.Waiting.To, time.GetUtcNow(), Environment.ProcessorCount, starvedSince);
        }
    }
}
