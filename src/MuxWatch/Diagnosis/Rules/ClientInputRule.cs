using MuxWatch.Model;
using static MuxWatch.Diagnosis.Rules.Figures;

namespace MuxWatch.Diagnosis.Rules;

/// <summary>Replies received but not read: <c>in</c>, <c>in-pipe</c>, and thread theft (the reader running a caller's continuation).</summary>
internal sealed class ClientInputRule : IDiagnosisRule
{
    public void Apply(DiagnosisInput input, Findings found)
    {
        var report = input.Report;
        foreach (var name in (string[])["in", "in-pipe"])
        {
            if (report.Number(name) is { } bytes && bytes > 0)
            {
                // A few KB arriving from a managed cache reached over the network are the round trip's (ManagedCloudRule).
                var clear = (name == "in-pipe" || bytes >= Thresholds.ClearInputBytes) && !ManagedCloudEndpoint.IsLatencyToProvider(report);
                found.Add(TimeoutCause.ClientInputBacklog, clear ? EvidenceWeight.Clear : EvidenceWeight.Weak, $"{name}={Format(bytes)}: reply bytes received but not yet processed", name);
            }
        }

        var readState = report.Field("rs")?.Raw;
        if (report.ThreadTheftIndicated || readState?.StartsWith("CompletePendingMessage", StringComparison.Ordinal) == true)
        {
            found.Add(TimeoutCause.ClientInputBacklog, EvidenceWeight.Strong,
                $"thread theft: the reader was running a caller's continuation{(readState is null ? string.Empty : $" (rs: {readState})")}", "rs");
        }
    }
}
