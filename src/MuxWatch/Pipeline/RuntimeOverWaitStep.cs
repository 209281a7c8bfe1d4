using MuxWatch.Model;
using MuxWatch.State;

namespace MuxWatch.Pipeline;

/// <summary>
/// Adds what this process's runtime did over the wait (GC pauses, CPU, late wakes of MuxWatch's dedicated
/// thread), so that the rules can name a cause in the app beyond the pool: <c>gc-pause</c>, <c>client-cpu</c>.
/// In-process sources only: a posted message came from another process.
/// </summary>
internal sealed class RuntimeOverWaitStep(RuntimeHistory history, TimeProvider time) : ITimeoutStep
{
    public TimeoutStepStage Stage => TimeoutStepStage.Enrich;

    public void Apply(TimeoutContext timeout)
    {
        if (TimeoutSources.IsInProcess(timeout.Observation.Source))
        {
            timeout.Runtime = history.Over(timeout.Waiting.From, timeout.Waiting.To, time.GetUtcNow(), Environment.ProcessorCount);
        }
    }
}
