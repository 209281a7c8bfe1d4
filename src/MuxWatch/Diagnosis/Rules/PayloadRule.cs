using MuxWatch.Model;
using static MuxWatch.Diagnosis.Rules.Figures;

namespace MuxWatch.Diagnosis.Rules;

/// <summary>A large payload: KiB moved while waiting, a large reply or pipe, a full socket buffer (or, with the pool above its minimum, a reader waiting for a thread).</summary>
internal sealed class PayloadRule : IDiagnosisRule
{
    public void Apply(DiagnosisInput input, Findings found)
    {
        var report = input.Report;
        foreach (var name in (string[])["outbound", "inbound"])
        {
            if (report.Number(name) is { } kib && kib >= Thresholds.LargeTransferKiB)
            {
                found.Add(TimeoutCause.LargePayload, EvidenceWeight.Strong, $"{name}={Format(kib)}KiB moved while the request waited (>= {Format(Thresholds.LargeTransferKiB)}KiB)", name);
            }
        }

        var inBytes = report.Number("in") ?? 0;
        var movedWhileWaiting = report.Number("outbound") >= Thresholds.LargeTransferKiB || report.Number("inbound") >= Thresholds.LargeTransferKiB || inBytes >= Thresholds.FullSocketBytes;
        string? largeReply = null;
        foreach (var name in (string[])["last-in", "cur-in", "in-pipe", "out-pipe"])
        {
            if (report.Number(name) is { } bytes && bytes >= Thresholds.LargeReplyBytes)
            {
                // A pipe's bytes are waiting to be read or sent; a reply's size (last-in, cur-in) says only that it was
                // large: short of tens of MB, moving it is milliseconds, so alone it does not show where the wait went.
                var sizeOnly = name is "last-in" or "cur-in" && !movedWhileWaiting && bytes < Thresholds.SecondsLongReplyBytes;
                found.Add(TimeoutCause.LargePayload, sizeOnly ? EvidenceWeight.Clear : EvidenceWeight.Strong,
                    sizeOnly ? $"{name}={Format(bytes)} bytes (>= {Format(Thresholds.LargeReplyBytes)}): a large reply, but with nothing moved while the request waited its size alone is milliseconds of transfer (clear, not strong)"
                        : $"{name}={Format(bytes)} bytes (>= {Format(Thresholds.LargeReplyBytes)})",
                    name);
                largeReply ??= name is "out-pipe" ? null : name;
            }
        }

        if (inBytes >= Thresholds.FullSocketBytes && largeReply is not null)
        {
            // The reader already holds a huge reply (in its pipe, or the one it is reading): the socket fills
            // behind it because it is busy with those bytes, whatever the pool. Read as a reader waiting for a
            // thread, a 94 MB in-pipe beside Busy=3/Min=2 was once named starvation (3.4.35, a live test).
            found.Add(TimeoutCause.LargePayload, EvidenceWeight.Strong,
                $"in={Format(inBytes)} bytes fill the socket buffer behind the large reply the reader is working through ({largeReply})", "in", largeReply);
        }
        else if (inBytes >= Thresholds.FullSocketBytes && input.PoolAboveMinimum)
        {
            // A full socket with the pool above its minimum is a reader waiting for a thread, not a big
            // reply: Azure's troubleshooting guide reads "in: 64221" beside Busy > Min that way.
            found.Add(TimeoutCause.ThreadPoolStarvation, EvidenceWeight.Overriding,
                $"in={Format(inBytes)} bytes fill the socket buffer while the pool is above its minimum: the reader was waiting for a thread", "in", "WORKER", "IOCP");
        }
        else if (inBytes >= Thresholds.FullSocketBytes)
        {
            found.Add(TimeoutCause.LargePayload, EvidenceWeight.Strong,
                $"in={Format(inBytes)} bytes: the socket buffer is full (>= {Format(Thresholds.FullSocketBytes)}) with the pool within its minimum: a large reply arriving", "in");
        }
        else if (inBytes >= Thresholds.ArrivingReplyBytes && report.Field("rs")?.Raw is "ReadAsync" && report.Number("qs") is 0)
        {
            found.Add(TimeoutCause.LargePayload, EvidenceWeight.Clear,
                $"in={Format(inBytes)} bytes waiting while the reader waits on the socket and nothing else is outstanding: a sizable reply still arriving (>= {Format(Thresholds.ArrivingReplyBytes)})",
                "in", "rs", "qs");
        }
    }
}
