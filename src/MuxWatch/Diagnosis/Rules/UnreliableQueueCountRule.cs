using MuxWatch.Model;

namespace MuxWatch.Diagnosis.Rules;

/// <summary>
/// The last: 3.x writes <c>qs: 0</c> while replies are awaited (measured on 3.4.35). With nothing
/// arrived and nothing else to blame, the server not answering is still the likeliest reading, held weakly.
/// </summary>
internal sealed class UnreliableQueueCountRule : IDiagnosisRule
{
    public void Apply(DiagnosisInput input, Findings found)
    {
        var report = input.Report;
        if (found.Count == 0 && input.Generation.QueueCountUnreliable && report.Number("qs") is 0 && report.Number("in") is null or 0
            && report.Field("WORKER") is not null && report.Kind is RedisErrorKind.SyncTimeout or RedisErrorKind.AsyncTimeout)
        {
            found.Add(TimeoutCause.ServerStall, EvidenceWeight.Weak,
                $"qs: 0, nothing arrived, thread pool within its minimum; {input.Generation.Name} writes qs: 0 even with replies outstanding, so the server not answering is the likeliest reading, not a certain one",
                "qs", "in", "WORKER", "v");
        }
    }
}
