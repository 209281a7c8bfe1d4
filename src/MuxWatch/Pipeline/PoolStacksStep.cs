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
/// named only when it holds a share of the starved workers one can defend (<see cref="IsCulprit"/>): never one thread
/// of a host's or a test runner's own wait beside the app's blocking code.
/// </remarks>
internal sealed class PoolStacksStep(PoolStackCaptures captures, ThreadPoolHistory history) : ITimeoutStep
{
    /// <summary>The most sites one evidence line names.</summary>
    private const int SitesShown = 3;

    /// <summary>The least share of the blocked (or busy) workers a site must hold to be named: a tenth, and two threads.</summary>
    internal const double CulpritShare = 0.1;

    public TimeoutStepStage Stage => TimeoutStepStage.Correlate;

    /// <summary>True when <paramref name="site"/> holds enough of <paramref name="of"/> workers to be named: two threads at least, and a tenth of them.</summary>
    internal static bool IsCulprit(PoolThreadSite site, int of) => site.Threads >= 2 && site.Threads >= CulpritShare * of;

    public void Apply(TimeoutContext timeout)
    {
        if (timeout.Diagnosis is not { Cause: TimeoutCause.ThreadPoolStarvation } diagnosis || !TimeoutSources.IsInProcess(timeout.Observation.Source))
        {
            return;
        }

        var window = timeout.Waiting;
        var (from, to) = (window.From, window.To);
        if (captures.For(from, to) is not { } capture)
        {
            if (captures.CapturingFor(to) && (timeout.Report.Endpoint ?? timeout.LiveCounters?.Endpoint) is { } endpoint)
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
        if (!sameStarvation)
        {
            Add(timeout, diagnosis, Evidence.Note(string.Create(CultureInfo.InvariantCulture,
                $"the pool's stacks were captured {capture.At.UtcDateTime:HH:mm:ss.f}, {window.Relation(capture.At, capture.At)}, with the pool calm (or not sampled) in between: another moment than this starvation, so nobody is named from them")), advice: null);
            return;
        }

        var blocked = capture.Sites.Where(site => site.Blocked && IsCulprit(site, capture.BlockedWorkers)).ToList();
        var busy = capture.Sites.Where(site => !site.Blocked && IsCulprit(site, capture.BusyWorkers)).ToList();
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
