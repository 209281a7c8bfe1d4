using System.Globalization;
using MuxWatch.Model;
using MuxWatch.State;

namespace MuxWatch.Pipeline;

/// <summary>
/// Names, beside a timeout settled as <c>thread-pool-starvation</c>, the app's code the pool's workers were found in
/// when MuxWatch captured their stacks during the starvation (<see cref="PoolStackCaptures"/>): where they were
/// blocked, and through what (<c>GetAwaiter().GetResult()</c>), or that they were busy, not blocked. A capture still
/// under way holds the timeout open as a server poll does. In-process only: a posted message came from another process.
/// </summary>
/// <remarks>
/// A capture speaks for a wait only when it was taken in the same starvation: inside the wait (<see cref="WaitingWindow.Weighs"/>),
/// or with the pool starved at every sample between the two (<see cref="ThreadPoolHistory.CalmOrUnknownBetween"/>). A
/// capture from before a recovery (a start-up blip) or after one is context, said as such, and names nobody. A site is
/// named only when it holds a share of the starved workers one can defend (<see cref="PoolStackCaptures.IsCulprit"/>):
/// never one thread of a host's or a test runner's own wait beside the app's blocking code. A timeout left without a
/// culprit while its pool still starves and a capture may still come in time (<see cref="PoolStackCaptures.MayBeginBy"/>)
/// is held open for it, as for a server poll.
/// </remarks>
internal sealed class PoolStacksStep(PoolStackCaptures captures, ThreadPoolHistory history) : ITimeoutStep
{
    /// <summary>The most sites one evidence line names.</summary>
    private const int SitesShown = 3;

    public TimeoutStepStage Stage => TimeoutStepStage.Correlate;

    public void Apply(TimeoutContext timeout)
    {
        if (timeout.Diagnosis is not { Cause: TimeoutCause.ThreadPoolStarvation } diagnosis || !TimeoutSources.IsInProcess(timeout.Observation.Source))
        {
            return;
        }

        var window = timeout.Waiting;
        var (from, to) = (window.From, window.To);
        var endpoint = timeout.Report.Endpoint ?? timeout.LiveCounters?.Endpoint;
        if (captures.For(from, to) is not { } capture)
        {
            if (endpoint is not null && (captures.CapturingFor(to) || MayStillBeCaptured(to)))
            {
                timeout.AwaitTimeline(endpoint); // the capture ends in about a second: held as for a poll, settled with it
            }
            else if ((captures.Unavailable ?? captures.LastFailure) is { } reason)
            {
                Add(timeout, diagnosis, Evidence.Note($"no stacks of the pool's workers were captured: {reason}"), advice: null);
            }

            return;
        }

        var when = string.Create(CultureInfo.InvariantCulture, $"stacks captured {capture.At.UtcDateTime:HH:mm:ss.f}, {window.Relation(capture.At, capture.At)}");
        var sameStarvation = window.Weighs(capture.At, capture.At)
            || !(capture.At < from ? history.CalmOrUnknownBetween(capture.At, from) : history.CalmOrUnknownBetween(to, capture.At));
        var blocked = PoolStackCaptures.BlockedCulprits(capture);
        var busy = PoolStackCaptures.BusyCulprits(capture);
        if ((!sameStarvation || (blocked.Count == 0 && busy.Count == 0)) && endpoint is not null && (captures.CapturingFor(to) || MayStillBeCaptured(to)))
        {
            // Nobody named from this capture (another moment, or one taken before the app's code filled the pool), while the
            // pool still starves and the next capture may come in time to speak for this wait: held for it, as for a poll.
            timeout.AwaitTimeline(endpoint);
        }

        if (!sameStarvation)
        {
            Add(timeout, diagnosis, Evidence.Note(string.Create(CultureInfo.InvariantCulture,
                $"the pool's stacks were captured {capture.At.UtcDateTime:HH:mm:ss.f}, {window.Relation(capture.At, capture.At)}, with the pool calm (or not sampled) in between: another moment than this starvation, so nobody is named from them")), advice: null);
            return;
        }

        if (blocked.Count > 0)
        {
            var sites = string.Join("; ", blocked.Take(SitesShown).Select(site => string.Create(CultureInfo.InvariantCulture,
                $"{site.Method}, {site.Threads} of {capture.BlockedWorkers} blocked workers, via {site.BlockedVia}")));
            var more = blocked.Count > SitesShown ? string.Create(CultureInfo.InvariantCulture, $"; {blocked.Count - SitesShown} more") : string.Empty;
            var top = blocked[0];
            Add(timeout, diagnosis,
                Evidence.Finding(TimeoutCause.ThreadPoolStarvation, diagnosis.WeightOf(TimeoutCause.ThreadPoolStarvation),
                    $"pool workers blocked in the app's code ({when}): {sites}{more}", "stacks:pool"),
                $"{top.Method} blocks a pool thread on {top.BlockedVia}: make it async and await the call instead. ");
        }
        else if (busy.Count > 0 || capture.BlockedWorkers == 0)
        {
            var sites = busy.Count == 0 ? "no site of the app's code holds a share of them" : string.Join("; ", busy.Take(SitesShown).Select(site => string.Create(CultureInfo.InvariantCulture,
                $"{site.Method}, {site.Threads} of {capture.BusyWorkers}")));
            Add(timeout, diagnosis,
                Evidence.Finding(TimeoutCause.ThreadPoolStarvation, diagnosis.WeightOf(TimeoutCause.ThreadPoolStarvation), string.Create(CultureInfo.InvariantCulture,
                    $"no pool worker was blocked in the app's code ({when}): {capture.BusyWorkers} of {capture.Workers} were busy running work: {sites}"), "stacks:pool"),
                busy.Count == 0 ? null : $"{busy[0].Method} keeps pool threads busy: move CPU-bound work off the pool or make it cheaper. ");
        }
        else
        {
            // Workers were blocked, but in no one place of the app's code (a thread here and there: a host's, a library's own waits).
            Add(timeout, diagnosis, Evidence.Note(string.Create(CultureInfo.InvariantCulture,
                $"{capture.BlockedWorkers} of {capture.Workers} pool workers were blocked ({when}), no site of the app's code holding a share of them that names it")), advice: null);
        }
    }

    /// <summary>
    /// True when the pool still starves (its newest sample) and a capture may begin in time to speak for a request that
    /// timed out at <paramref name="to"/> (<see cref="PoolStackCaptures.ReachForward"/>).
    /// </summary>
    private bool MayStillBeCaptured(DateTimeOffset to) => history.NewestIsStarved() && captures.MayBeginBy(to + PoolStackCaptures.ReachForward);

    /// <summary>Puts <paramref name="line"/> after the runtime's word (or the starvation's first line); <paramref name="advice"/> names the culprit.</summary>
    private static void Add(TimeoutContext timeout, TimeoutDiagnosis diagnosis, Evidence line, string? advice)
    {
        var evidence = diagnosis.Evidence.ToList();
        var runtime = evidence.FindIndex(e => e.Fields.Contains(RuntimeReasonStep.Field));
        var at = runtime >= 0 ? runtime + 1
            : evidence.FindIndex(e => e.Cause == TimeoutCause.ThreadPoolStarvation) is var found and >= 0 ? found + 1 : 0;
        evidence.Insert(at, line);
        timeout.Diagnosis = diagnosis with { Evidence = evidence };
        if (advice is not null)
        {
            timeout.Advise(AdviceRank.Culprit, advice);
        }
    }
}
