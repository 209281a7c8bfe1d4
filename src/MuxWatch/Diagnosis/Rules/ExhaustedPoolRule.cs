using MuxWatch.Model;
using static MuxWatch.Diagnosis.Rules.Figures;

namespace MuxWatch.Diagnosis.Rules;

/// <summary>
/// The pool's absolute size: a hundred or more worker threads busy is thread exhaustion whatever
/// the minimum (an app that raised its minimum to 1024 and holds 284 threads is not healthy because 284 is
/// below 1024), above all when most calls are synchronous (<c>sync-ops</c> against <c>async-ops</c>): blocked
/// callers hold the threads. The maintainers' reading (issues #2236: Busy=284 against Min=1024; #2540:
/// Busy=206 against Min=200, "a lot of synchronous ops"; #2624). It outranks the large reply (<c>in</c>,
/// <c>cur-in</c>) and the write queue (<c>qu</c>) beside it: threads that cannot run leave both behind.
/// </summary>
internal sealed class ExhaustedPoolRule : IDiagnosisRule
{
    public void Apply(DiagnosisInput input, Findings found)
    {
        var report = input.Report;
        if (report.Field("WORKER") is not { } worker || worker.Part("Busy") is not { } busy)
        {
            return;
        }

        var min = worker.Part("Min");
        var sync = report.Number("sync-ops");
        var async = report.Number("async-ops");
        double? syncShare = sync is { } s && async is { } a && s + a > 0 ? s / (s + a) : null;
        var minimum = min is { } m ? $" against a minimum of {Format(m)}" : string.Empty;
        if (busy >= Thresholds.ExhaustedWorkerThreads)
        {
            var callers = syncShare is { } share
                ? share >= 0.5 ? $"; {Format(Math.Round(share * 100))}% of its calls synchronous (sync-ops {Format(sync!.Value)}, async-ops {Format(async!.Value)}): blocked callers hold the threads" : $"; most of its calls asynchronous ({Format(Math.Round(share * 100))}% sync)"
                : string.Empty;
            Starvation.Add(found, strong: syncShare is not < 0.5, input.PoolBeforeWait,
                $"WORKER Busy={Format(busy)}{minimum}: a hundred or more worker threads busy is thread exhaustion whatever the minimum{callers} (the maintainers' reading, issues #2236, #2540)",
                "WORKER", "sync-ops", "async-ops");
        }
        else if (busy >= Thresholds.LoadedWorkerThreads && (min is null || busy * 2 >= min) && sync >= Thresholds.SynchronousOnlyOperations && syncShare >= Thresholds.SynchronousOnlyShare)
        {
            // Fewer than a hundred, but every call synchronous and the pool at half its minimum or more: each caller
            // holds a thread for its whole round trip, so a reply that takes a moment turns into busy threads. The
            // maintainer's reading of Busy=31 against Min=50 with sync-ops 128019, async-ops 0 (issue #2339): "an
            // overload on the thread pool ... it's all sync calls". Clear, not strong: below its minimum the pool
            // still hands out threads at once, so it is the likeliest reading, not a proven one.
            found.Add(TimeoutCause.ThreadPoolStarvation, EvidenceWeight.Clear,
                $"WORKER Busy={Format(busy)}{minimum} with every call synchronous (sync-ops {Format(sync!.Value)}, async-ops {Format(async!.Value)}): each caller holds a pool thread while it waits, the pool is loaded by them (the maintainer's reading, issue #2339)",
                "WORKER", "sync-ops", "async-ops");
        }
    }
}
