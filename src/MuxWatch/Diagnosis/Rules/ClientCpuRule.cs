using MuxWatch.Model;
using static MuxWatch.Diagnosis.Figures;

namespace MuxWatch.Diagnosis.Rules;

/// <summary>Rule 5, <c>Local-CPU</c> (1.x, early 2.x): the client machine's CPU; near 100% nothing of the client runs on time.</summary>
internal sealed class ClientCpuRule : IDiagnosisRule
{
    public void Apply(DiagnosisInput input, Findings found)
    {
        if (input.Report.Number("Local-CPU") is { } cpu && cpu >= TimeoutDiagnoser.BusyCpuPercent)
        {
            var saturated = cpu >= TimeoutDiagnoser.SaturatedCpuPercent;
            found.Add(TimeoutCause.ClientCpu, saturated ? EvidenceWeight.Strong : EvidenceWeight.Weak,
                $"Local-CPU: {Format(cpu)}%: the client machine's CPU was {(saturated ? "saturated, so the reader and the app's continuations could not run on time" : "busy, contributing")}",
                "Local-CPU");
        }
    }
}
