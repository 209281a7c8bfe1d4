using System.Globalization;
using MuxWatch.Model;

namespace MuxWatch.Diagnosis.Rules;

/// <summary>
/// Rule 2c, the runtime's own word (in-process only): the thread pool changed its thread count around the wait
/// and said why. Threads blocked waiting on tasks (<c>CooperativeBlocking</c>: sync over async) or queued work
/// that made no progress (<c>Starvation</c>) is starvation by the pool's own account, stronger than busy
/// threads against the minimum, and it tells blocked threads from busy ones.
/// </summary>
internal sealed class ThreadPoolAdjustmentRule : IDiagnosisRule
{
    public void Apply(DiagnosisInput input, Findings found)
    {
        if (input.Runtime is not { } runtime || runtime.BlockedThreadAdjustments + runtime.StarvedThreadAdjustments == 0)
        {
            return;
        }

        // A connection the client gave up on while its pool was starved (3.x drops one whose replies go unread) is
        // the starvation's consequence; a server really gone is told by the witness afterwards (unreachable), and
        // a refused password outranks everything.
        var lostMeanwhile = found.Has(TimeoutCause.ConnectionLoss) && !found.Has(TimeoutCause.ConnectionLoss, EvidenceWeight.Configuration);
        var consequence = lostMeanwhile ? ": the connection the client dropped meanwhile is its consequence (3.x gives up on a connection whose replies go unread)" : "";
        var weight = lostMeanwhile ? EvidenceWeight.Overriding : EvidenceWeight.Strong;
        found.Add(TimeoutCause.ThreadPoolStarvation, weight, runtime.BlockedThreadAdjustments > 0
            ? string.Create(CultureInfo.InvariantCulture,
                $"the runtime's thread pool added threads {runtime.BlockedThreadAdjustments} time(s) around the wait because pool threads were blocked waiting on tasks (its reason: CooperativeBlocking, heard by MuxWatch): sync over async (.Result, .Wait(), GetAwaiter().GetResult()) held the threads the replies needed{consequence}")
            : string.Create(CultureInfo.InvariantCulture,
                $"the runtime's thread pool added threads {runtime.StarvedThreadAdjustments} time(s) around the wait because queued work made no progress (its reason: Starvation, heard by MuxWatch): every pool thread was blocked or busy{consequence}"),
            "runtime:threadpool-adjustment");
    }
}
