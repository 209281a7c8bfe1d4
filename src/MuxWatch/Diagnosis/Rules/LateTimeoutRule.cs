using MuxWatch.Model;
using static MuxWatch.Diagnosis.Rules.Figures;

namespace MuxWatch.Diagnosis.Rules;

/// <summary>
/// An async timeout noticed far later than its timeout (<c>20969ms elapsed, timeout is 2000ms</c>): the
/// client checks async timeouts on a timer that needs a pool thread, so a check many timeouts late says
/// the pool was exhausted (a maintainer's reading in #1092) or, with commands queued unwritten, that the
/// writer or the connection was stuck for that long.
/// </summary>
internal sealed class LateTimeoutRule : IDiagnosisRule
{
    public void Apply(DiagnosisInput input, Findings found)
    {
        var report = input.Report;
        if (report.ElapsedMilliseconds is not { } elapsed || report.TimeoutMilliseconds is not { } timeout || timeout <= 0
            || elapsed - timeout < Math.Max(2 * timeout, Thresholds.LateCheckMilliseconds))
        {
            return;
        }

        var late = $"{Format(elapsed)} ms elapsed against a {Format(timeout)} ms timeout ({Format(Math.Round(elapsed / timeout, 1))}x)";
        if (report.Number("qu") is > 0)
        {
            found.Add(TimeoutCause.WriteBacklog, EvidenceWeight.Strong,
                $"{late} with qu: {Format(report.Number("qu")!.Value)} queued unwritten: the writer or the connection was stuck for many timeouts' worth of time", "elapsed", "timeout", "qu");
        }
        else if (input.PoolAboveMinimum)
        {
            found.Add(TimeoutCause.ThreadPoolStarvation, EvidenceWeight.Clear,
                $"{late}: async timeouts are checked on a timer that needs a pool thread, so a check this late says the pool was exhausted", "elapsed", "timeout", "WORKER", "IOCP");
        }
        else
        {
            found.Add(TimeoutCause.WriteBacklog, EvidenceWeight.Weak,
                $"{late}: the timeout was noticed many timeouts late; the connection or the client's own timer was stuck", "elapsed", "timeout");
        }
    }
}
