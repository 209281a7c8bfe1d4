using Microsoft.Extensions.Options;
using MuxWatch.Configuration;
using MuxWatch.Model;
using MuxWatch.State;

namespace MuxWatch.Pipeline;

/// <summary>
/// Adds the thread pool as sampled just before the request started waiting, so the rules can tell
/// starvation that was there first (a cause) from starvation that arose while replies did not come
/// (a consequence). In-process sources only: a posted message came from another process's pool.
/// </summary>
internal sealed class ThreadPoolBeforeWaitStep(ThreadPoolHistory history, IOptions<MuxWatchOptions> options) : ITimeoutStep
{
    /// <summary>How far before the wait a sample may be: two probe intervals at the default, and a second of slack.</summary>
    private static readonly TimeSpan Slack = TimeSpan.FromSeconds(1);

    public TimeoutStepStage Stage => TimeoutStepStage.Enrich;

    public void Apply(TimeoutContext timeout)
    {
        if (TimeoutSources.IsInProcess(timeout.Observation.Source))
        {
            timeout.ThreadPoolBeforeWait = history.At(timeout.Waiting.From, 2 * options.Value.ProbeInterval + Slack);
        }
    }
}
