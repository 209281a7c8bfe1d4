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
internal sealed class PoolStacksStep(PoolStackCaptures captures) : ITimeoutStep
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

        var (from, to) = (timeout.Waiting.From, timeout.Waiting.To);
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

        var when = string.Create(CultureInfo.InvariantCulture, $"stacks captured {capture.At.UtcDateTime:HH:mm:ss.f}, {Relative(capture.At, from, to)}");
        var blocked = capture.Sites.Where(site => site.Blocked).ToList();
        var busy = capture.Sites.Where(site => !site.Blocked).ToList();
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
        else
        {
            var sites = busy.Count == 0 ? "none in the app's code" : string.Join("; ", busy.Take(SitesShown).Select(site => string.Create(CultureInfo.InvariantCulture,
                $"{site.Method}, {site.Threads} of {capture.BusyWorkers}")));
            Add(timeout, diagnosis,
                Evidence.Finding(TimeoutCause.ThreadPoolStarvation, diagnosis.WeightOf(TimeoutCause.ThreadPoolStarvation), string.Create(CultureInfo.InvariantCulture,
                    $"no pool worker was blocked in the app's code ({when}): {capture.BusyWorkers} of {capture.Workers} were busy running work: {sites}"), "stacks:pool"),
                busy.Count == 0 ? null : $"{busy[0].Method} keeps pool threads busy: move CPU-bound work off the pool or make it cheaper. ");
        }
    }

    /// <summary>Puts <paramref name="line"/> after the runtime's word (or the starvation's first line), and <paramref name="advice"/> first.</summary>
    private static void Add(TimeoutContext timeout, TimeoutDiagnosis diagnosis, Evidence line, string? advice)
    {
        var evidence = diagnosis.Evidence.ToList();
        var runtime = evidence.FindIndex(e => e.Fields.Contains(RuntimeReasonStep.Field));
        var at = runtime >= 0 ? runtime + 1
            : evidence.FindIndex(e => e.Cause == TimeoutCause.ThreadPoolStarvation) is var found and >= 0 ? found + 1 : 0;
        evidence.Insert(at, line);
        timeout.Diagnosis = diagnosis with { Evidence = evidence, Advice = advice + diagnosis.Advice };
    }

    private static string Relative(DateTimeOffset at, DateTimeOffset from, DateTimeOffset to) =>
        at < from ? string.Create(CultureInfo.InvariantCulture, $"{(from - at).TotalSeconds:F1} s before the wait")
        : at > to ? string.Create(CultureInfo.InvariantCulture, $"{(at - to).TotalSeconds:F1} s after the timeout")
        : "during the wait";
}
