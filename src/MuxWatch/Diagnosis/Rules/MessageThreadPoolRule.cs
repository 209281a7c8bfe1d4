using MuxWatch.Model;
using static MuxWatch.Diagnosis.Rules.Figures;

namespace MuxWatch.Diagnosis.Rules;

/// <summary>Starvation from the message: <c>WORKER</c>/<c>IOCP</c> busy against their minimum, <c>POOL</c> queued items, 2.x's <c>mgr</c>.</summary>
internal sealed class MessageThreadPoolRule : IDiagnosisRule
{
    public void Apply(DiagnosisInput input, Findings found)
    {
        var report = input.Report;
        var starved = false;
        var queued = report.Field("POOL")?.Part("QueuedItems") ?? 0;
        foreach (var pool in (string[])["WORKER", "IOCP"])
        {
            var tuple = report.Field(pool);
            if (tuple?.Part("Busy") is { } busy && tuple.Part("Min") is { } min && Starvation.Of(busy, min, queued) is { } strong)
            {
                // A modest pool in front of a managed cache reached over the network: the round trip to the
                // provider is the maintainers' first reading, not a dozen threads over a minimum of 2 (ManagedCloudRule).
                strong &= !ManagedCloudEndpoint.IsLatencyToProvider(report);
                var why = !strong && busy - min >= Thresholds.StrongStarvationExcess ? $"{Format(busy - min)} over the minimum, but {Format(busy)} busy is a modest pool in front of a managed cache reached over the network (ManagedCloudRule)"
                    : busy - min >= Thresholds.StrongStarvationExcess ? $"{Format(busy - min)} over the minimum, work waited seconds for threads"
                    : busy <= min ? $"every thread up to the minimum busy with {Format(queued)} work items queued: from here the pool adds one thread about every 500 ms"
                    : strong ? $"{Format(busy - min)} over the minimum with {Format(queued)} work items queued"
                    : $"{Format(busy - min)} over the minimum, little delay from that alone";
                var relation = busy > min ? ">" : "=";
                Starvation.Add(found, strong, overriding: busy - min >= Thresholds.StrongStarvationExcess || queued >= Thresholds.OverridingStarvationQueuedItems, input.PoolBeforeWait, $"{pool} Busy={Format(busy)} {relation} Min={Format(min)} ({(strong ? "strong" : "weak")}: {why})", pool, "POOL");
                starved = true;
            }
        }

        // 2.x ran its own dedicated pool: "mgr: 0 of 10 available" means every one of its threads was busy.
        if (report.Field("mgr")?.Raw is { } mgr && mgr.StartsWith("0 of ", StringComparison.Ordinal))
        {
            found.Add(TimeoutCause.ThreadPoolStarvation, EvidenceWeight.Strong, $"mgr: {mgr} (the client's dedicated pool had no free thread)", "mgr");
            starved = true;
        }

        // Items queued on the pool are the work that waited; worth showing beside the busy counts.
        if (starved && queued > 0)
        {
            found.Add(TimeoutCause.ThreadPoolStarvation, EvidenceWeight.Weak, $"POOL QueuedItems={Format(queued)} work items waiting for a thread", "POOL");
        }
    }
}
