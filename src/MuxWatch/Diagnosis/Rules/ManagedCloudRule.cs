using MuxWatch.Model;
using static MuxWatch.Diagnosis.Rules.Figures;

namespace MuxWatch.Diagnosis.Rules;

/// <summary>
/// A managed cache reached over the network with a modest pool and a few KB arriving
/// (<see cref="ManagedCloudEndpoint"/>): the round trip to the provider, not the pool, is the reading
/// (<c>server-stall</c>, clear: the server or the network did not answer in time). The pool's few threads
/// over its minimum and the few KB unread are held weakly by their rules in this case.
/// </summary>
internal sealed class ManagedCloudRule : IDiagnosisRule
{
    public void Apply(DiagnosisInput input, Findings found)
    {
        var report = input.Report;
        if (!ManagedCloudEndpoint.IsLatencyToProvider(report) || found.Has(TimeoutCause.ConnectionLoss) || found.Has(TimeoutCause.LargePayload)
            || found.Has(TimeoutCause.ThreadPoolStarvation, EvidenceWeight.Clear))
        {
            return;
        }

        var arriving = report.Number("in") is { } bytes and > 0 ? $", {Format(bytes)} bytes arriving" : string.Empty;
        var timeout = report.TimeoutMilliseconds is { } ms ? $"; a {Format(ms)} ms timeout may be too short for the round trip" : string.Empty;
        found.Add(TimeoutCause.ServerStall, EvidenceWeight.Clear,
            $"qs={Format(report.Number("qs")!.Value)} unanswered from a managed cache reached over the network ({ManagedCloudEndpoint.Of(report)}), with a modest pool (WORKER Busy={Format(report.Field("WORKER")!.Part("Busy")!.Value)}){arriving}: "
            + $"the round trip to the provider, not the pool (the maintainers' reading, issue #1223){timeout}",
            "serverEndpoint", "qs", "WORKER", "in");
    }
}
