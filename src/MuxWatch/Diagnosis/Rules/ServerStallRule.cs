using MuxWatch.Model;
using static MuxWatch.Diagnosis.Rules.Figures;

namespace MuxWatch.Diagnosis.Rules;

/// <summary>
/// The server did not answer: requests sent and unanswered (<c>qs</c>, or the live counters where
/// 3.x writes 0), nothing arrived. It holds only when the client was able to read and nothing large was in
/// the way: a starved pool, a busy reader or a big reply explains unanswered requests as well (weak
/// evidence of those does not: Busy one over Min cannot hold a reply for seconds).
/// </summary>
internal sealed class ServerStallRule : IDiagnosisRule
{
    public void Apply(DiagnosisInput input, Findings found)
    {
        if (found.Has(TimeoutCause.ThreadPoolStarvation, EvidenceWeight.Clear) || found.Has(TimeoutCause.ClientInputBacklog, EvidenceWeight.Clear)
            || found.Has(TimeoutCause.LargePayload) || found.Has(TimeoutCause.ClientCpu, EvidenceWeight.Strong)
            || found.Has(TimeoutCause.GcPause, EvidenceWeight.Strong))
        {
            return;
        }

        var (report, live, sampled) = (input.Report, input.Live, input.SampledThreadPool);
        var sent = report.Number("qs") ?? 0;
        var sentFrom = string.Empty;
        if (sent <= 0 && live is { SentAwaitingResponse: > 0 })
        {
            // The text says nothing is outstanding but the live multiplexer disagrees: 3.4.35 writes qs: 0
            // in its timeout messages while every reply is still awaited (measured), so the counters win.
            sent = live.SentAwaitingResponse;
            sentFrom = report.Number("qs") is null
                ? " (live counters at the catch; the message has no qs)"
                : " (live counters at the catch; the message says qs: 0, as 3.x clients write it)";
        }

        if (sent <= 0)
        {
            return;
        }

        var inBytes = report.Number("in");
        var inPipe = report.Number("in-pipe");
        if (inBytes is > 0 || inPipe is > 0)
        {
            return;
        }

        // Some inbound KiB while waiting are replies to earlier commands: the server answered those, not this one.
        var nothingArrived = inBytes is null && inPipe is null
            ? "the message does not say whether bytes arrived"
            : report.Number("inbound") is { } inbound and > 0 ? $"nothing waiting to be read (inbound={Format(inbound)}KiB were earlier replies)" : "nothing arrived";
        var pool = input.PoolAboveMinimum
            ? "thread pool only a little above its minimum"
            : report.Field("WORKER") is not null || report.Field("IOCP") is not null
            ? "thread pool within its minimum"
            : sampled is not null ? "thread pool within its minimum (sampled by MuxWatch)" : "no thread-pool figures to blame";
        string[] fields = sentFrom.Length == 0 ? ["qs", "in", "in-pipe"] : ["live:qs", "qs", "in", "in-pipe"];

        // qs above 0 is in nearly every timeout: a symptom, not proof the server stalled. When only the text
        // says so (no live counters, no earlier replies arriving while this one did not) and the pool is above
        // its minimum, the documented reading is thread-pool throttling (Timeouts.md's own worked example:
        // "qs: 6, in: 0, IOCP: (Busy=6,...,Min=4,...)"): the stall is held weakly, and the pool comes first.
        var onlyTheText = live is null && sentFrom.Length == 0 && report.Number("inbound") is not > 0;
        if (input.PoolAboveMinimum && onlyTheText)
        {
            found.Add(TimeoutCause.ServerStall, EvidenceWeight.Weak,
                $"qs={Format(sent)} sent and unanswered, {nothingArrived}, {pool}: qs above 0 is in nearly every timeout, so with the pool above its minimum it is no proof the server stalled",
                fields);
            return;
        }

        found.Add(TimeoutCause.ServerStall, EvidenceWeight.Clear, $"qs={Format(sent)}{sentFrom} sent and unanswered, {nothingArrived}, {pool}", fields);
    }
}
