using MuxWatch.Model;

namespace MuxWatch.Diagnosis.Rules;

/// <summary>
/// Starvation already there before the request started waiting (MuxWatch's sample): every reply
/// then waited for a thread, whatever the pool looked like by the time the message was written.
/// </summary>
internal sealed class PoolBeforeWaitRule : IDiagnosisRule
{
    public void Apply(DiagnosisInput input, Findings found)
    {
        if (input.PoolBeforeWait is { } before && Starvation.Of(before.WorkerBusy, before.WorkerMin, before.QueueLength) is true)
        {
            found.Add(TimeoutCause.ThreadPoolStarvation, EvidenceWeight.Overriding,
                $"the pool was already starved just before the request started waiting (WORKER Busy={before.WorkerBusy}/Min={before.WorkerMin} with {before.QueueLength} work items queued, sampled by MuxWatch): its reply waited for a thread",
                "sampled:pool-before-wait");
        }
    }
}
