using MuxWatch.Model;
using static MuxWatch.Diagnosis.Rules.Figures;

namespace MuxWatch.Diagnosis.Rules;

/// <summary>A write backlog: a write timeout, commands queued unwritten (<c>qu</c>, or the live counters), connections waiting for the writer.</summary>
internal sealed class WriteSideRule : IDiagnosisRule
{
    public void Apply(DiagnosisInput input, Findings found)
    {
        var (report, live) = (input.Report, input.Live);
        if (report.Kind == RedisErrorKind.WriteTimeout)
        {
            found.Add(TimeoutCause.WriteBacklog, EvidenceWeight.Strong, "the timeout was reached before the command could be written");
        }

        if (report.Number("qu") is { } unsent && unsent > 0)
        {
            var writer = report.Field("bw")?.Raw is { } backlog ? $", bw: {backlog}" : string.Empty;
            found.Add(TimeoutCause.WriteBacklog, EvidenceWeight.Clear, $"qu={Format(unsent)} commands queued, not yet written{writer}", "qu", "bw");
        }
        else if (live is { PendingUnsent: > 0 })
        {
            found.Add(TimeoutCause.WriteBacklog, EvidenceWeight.Clear, $"qu={live.PendingUnsent} commands queued, not yet written (live counters at the catch)", "live:qu");
        }

        if (report.Number("wq") is { } writeQueue && writeQueue > 0)
        {
            found.Add(TimeoutCause.WriteBacklog, EvidenceWeight.Clear, $"wq={Format(writeQueue)} connections waiting for the writer", "wq");
        }
    }
}
