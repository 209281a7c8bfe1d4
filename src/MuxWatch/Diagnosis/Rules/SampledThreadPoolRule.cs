using MuxWatch.Model;

namespace MuxWatch.Diagnosis.Rules;

/// <summary>Starvation from MuxWatch's own sample at the catch, for messages without pool figures (1.x on .NET Core).</summary>
internal sealed class SampledThreadPoolRule : IDiagnosisRule
{
    public void Apply(DiagnosisInput input, Findings found)
    {
        if (input.SampledThreadPool is not { } pool || input.Report.Field("WORKER") is not null || input.Report.Field("IOCP") is not null)
        {
            return;
        }

        const string sampled = "(sampled by MuxWatch when the exception was thrown)";
        var starved = false;
        foreach (var (name, busy, min, queued) in ((string, int, int, long)[])[("WORKER", pool.WorkerBusy, pool.WorkerMin, pool.QueueLength), ("IOCP", pool.IoBusy, pool.IoMin, 0)])
        {
            if (Starvation.Of(busy, min, queued) is { } strong)
            {
                Starvation.Add(found, strong, input.PoolBeforeWait, $"{name} Busy={busy} {(busy > min ? ">" : "=")} Min={min} {sampled}, {(strong ? "strong" : "weak")}", "sampled:pool");
                starved = true;
            }
        }

        if (starved && pool.QueueLength > 0)
        {
            found.Add(TimeoutCause.ThreadPoolStarvation, EvidenceWeight.Weak, $"{pool.QueueLength} work items waiting for a thread {sampled}", "sampled:pool");
        }
    }
}
