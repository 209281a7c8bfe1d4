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
    }
}
