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
/// <remarks>
/// The pool is a state sampled every probe cycle, not an event with a span: its state as the wait began is the
/// newest sample at or before the start, when it is no older than two probe intervals and the slack of the one
/// rule (<see cref="Diagnosis.InTheWait.Slack"/>); an older one is not read at all. With none (MuxWatch started during
/// the wait), the first sample inside the wait stands for it: starvation it did not see arose during the wait too (seen
/// in CI: a connection dropped in a server stall seconds after start, its 14 failed calls' continuations queued at the
/// catch, was named starvation over the witness's silence for want of a sample before the wait). It only ever lowers a
/// starvation seen in the message (one that arose during the wait is a possible consequence), or confirms one.
/// </remarks>
internal sealed class ThreadPoolBeforeWaitStep(ThreadPoolHistory history, IOptions<MuxWatchOptions> options) : ITimeoutStep
{
    public TimeoutStepStage Stage => TimeoutStepStage.Enrich;

    public void Apply(TimeoutContext timeout)
    {
        if (TimeoutSources.IsInProcess(timeout.Observation.Source))
        {
            var waiting = timeout.Waiting;
            timeout.ThreadPoolBeforeWait = history.At(waiting.From, 2 * options.Value.ProbeInterval + Diagnosis.InTheWait.Slack)
                ?? history.FirstBetween(waiting.From, waiting.To);
        }
    }
}
