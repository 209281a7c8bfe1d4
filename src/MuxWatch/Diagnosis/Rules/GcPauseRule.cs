using System.Globalization;
using MuxWatch.Model;

namespace MuxWatch.Diagnosis.Rules;

/// <summary>
/// The app itself paused (in-process only): blocking garbage collections stopped every thread of
/// the process for a share of the wait (<c>GC.GetTotalPauseDuration</c> over it). The server answered; nothing
/// of the client ran to read it, so the unread bytes (<c>in</c>), a busy pool or a missed heartbeat that
/// the message shows are the pause's doing.
/// </summary>
internal sealed class GcPauseRule : IDiagnosisRule
{
    /// <summary>Pauses shorter than this in total are noise whatever the wait.</summary>
    private const double MinimumPauseMs = 50;

    /// <summary>GC pause in the seconds before the wait from which a connection lost meanwhile counts as its consequence.</summary>
    private const double PauseBeforeLostConnectionMs = 500;

    public void Apply(DiagnosisInput input, Findings found)
    {
        if (input.Runtime is not { } runtime)
        {
            return;
        }

        if (runtime.GcPauseBeforeMs >= PauseBeforeLostConnectionMs && found.Has(TimeoutCause.ConnectionLoss) && !found.Has(TimeoutCause.ConnectionLoss, EvidenceWeight.Configuration)
            && runtime.GcPauseShare < Thresholds.ExplainingGcPauseShare)
        {
            // The connection was lost while the app was paused (3.x gives up on one whose replies go unread),
            // and this request waited for it after the pause: the pause explains the lost connection.
            found.Add(TimeoutCause.GcPause, EvidenceWeight.Overriding, string.Create(CultureInfo.InvariantCulture,
                $"blocking garbage collections paused every thread of this process for {runtime.GcPauseBeforeMs:0} ms in the {RuntimeOverWait.Before.TotalSeconds:0} s before this request started waiting (GC.GetTotalPauseDuration, sampled by MuxWatch): the connection this request waited for was lost while the app was paused, so the lost connection is the pause's consequence"),
                "sampled:gc-pause");
            return;
        }

        if (runtime.GcPauseMs < MinimumPauseMs || runtime.GcPauseShare < Thresholds.ContributingGcPauseShare)
        {
            return;
        }

        var share = runtime.GcPauseShare;
        var weight = share >= 2 * Thresholds.ExplainingGcPauseShare ? EvidenceWeight.Overriding
            : share >= Thresholds.ExplainingGcPauseShare ? EvidenceWeight.Strong
            : EvidenceWeight.Weak;
        var head = string.Create(CultureInfo.InvariantCulture,
            $"blocking garbage collections paused every thread of this process for {runtime.GcPauseMs:0} ms of the {runtime.WaitMs:0} ms around the wait ({share * 100:0}%; GC.GetTotalPauseDuration, sampled by MuxWatch): ");
        if (input.Report.Number("cur-in") is { } reading && reading >= Thresholds.CollectingReplyBytes)
        {
            // The client was reading a huge reply: allocating it is what set the collections off, so they are the
            // large payload's consequence, never a cause beside it (a tie broken by the order named gc-pause once).
            found.Add(TimeoutCause.GcPause, EvidenceWeight.Weak, head + string.Create(CultureInfo.InvariantCulture,
                $"while the client read a reply of {reading:N0} bytes (cur-in), whose own allocation sets such collections off: the large reply's consequence, contributing"),
                "sampled:gc-pause");
            return;
        }

        found.Add(TimeoutCause.GcPause, weight, head
            + (weight >= EvidenceWeight.Strong
                ? "the server's reply could not be read while the process was stopped"
                : "contributing, not enough on its own"),
            "sampled:gc-pause");
    }
}
