using System.Globalization;
using MuxWatch.Model;

namespace MuxWatch.Pipeline;

/// <summary>
/// Adds the runtime's own word to a timeout settled as <c>thread-pool-starvation</c>: how many times the pool added
/// threads because pool threads blocked on tasks (sync over async) while the request waited, or in the starvation that
/// led up to the wait (the runtime adds a thread as a worker blocks, and says nothing more while it stays blocked: a wait
/// late in a long starvation hears nothing of its own); or that it never did in either (CPU-bound work, or blocking on
/// locks, synchronous I/O, sleeps).
/// </summary>
/// <remarks>
/// It names no cause and weighs nothing: run after the correlation, on the cause that stood. The runtime blocks
/// on tasks whenever the app does, also while a stalled server holds every reply (measured: the sidecar's slow
/// command, a sample app), so as evidence of a cause it would have outranked the server; beside a starvation that
/// stood, it says which kind, and the advice follows it. In-process only (<see cref="RuntimeOverWait"/>).
/// </remarks>
internal sealed class RuntimeReasonStep : ITimeoutStep
{
    /// <summary>The field its evidence line cites: the runtime's adjustment event.</summary>
    internal const string Field = "runtime:ThreadPoolWorkerThreadAdjustment";

    public TimeoutStepStage Stage => TimeoutStepStage.Correlate;

    public void Apply(TimeoutContext timeout)
    {
        if (timeout.Diagnosis is not { Cause: TimeoutCause.ThreadPoolStarvation } diagnosis || timeout.Runtime is not { } runtime
            || (runtime.BlockingAdjustments == 0 && !runtime.RuntimeEventsHeard))
        {
            return;
        }

        var window = timeout.Waiting;
        var starvedSince = runtime.StarvedSince is { } since
            ? string.Create(CultureInfo.InvariantCulture, $"since {since.UtcDateTime:HH:mm:ss.f}, {window.Relation(since, since)}")
            : null;
        var (text, advice) = runtime.BlockingAdjustments > 0
            ? (string.Create(CultureInfo.InvariantCulture,
                $"the runtime added pool threads {Times(runtime.BlockingAdjustments)} while the request waited because pool threads were blocked on tasks (its CooperativeBlocking reason: sync over async)"),
               BlockedOnTasksAdvice)
            : runtime.BlockingAdjustmentsBefore > 0
            // A wait late in a long starvation: the workers blocked (and the runtime said so) before it began, and stay blocked.
            ? (string.Create(CultureInfo.InvariantCulture,
                $"the runtime added pool threads {Times(runtime.BlockingAdjustmentsBefore)} in the starvation this request waited in ({starvedSince}, the pool starved at every sample) because pool threads were blocked on tasks (its CooperativeBlocking reason: sync over async); none while it waited: the runtime adds a thread as a worker blocks, not again while it stays blocked"),
               BlockedOnTasksAdvice)
            : (string.Create(CultureInfo.InvariantCulture,
                $"the runtime reported no pool thread blocked on a task while the request waited{(starvedSince is null ? string.Empty : $" or in the starvation before it ({starvedSince})")} (it adds a thread as each worker blocks on a task{(runtime.OtherAdjustments > 0 ? $"; it adjusted the pool {Times(runtime.OtherAdjustments)} for other reasons" : string.Empty)}): the threads were busy (CPU-bound work) or blocked on something other than a task (locks, synchronous I/O, Thread.Sleep)"),
               "The pool's threads were busy, not blocked on tasks: look for CPU-bound work or synchronous waits (locks, file or network I/O, Thread.Sleep) on pool threads. ");
        var line = new Evidence(EvidenceRole.Finding, TimeoutCause.ThreadPoolStarvation, diagnosis.WeightOf(TimeoutCause.ThreadPoolStarvation), text)
        {
            Fields = [Field],
        };
        var at = diagnosis.Evidence.ToList().FindIndex(e => e.Cause == TimeoutCause.ThreadPoolStarvation) is var found and >= 0 ? found + 1 : 0;
        timeout.Diagnosis = diagnosis with { Evidence = [.. diagnosis.Evidence.Take(at), line, .. diagnosis.Evidence.Skip(at)] };
        timeout.Advise(AdviceRank.Kind, advice);
    }

    private const string BlockedOnTasksAdvice =
        "The runtime saw pool threads blocked on tasks: find the sync-over-async call (.Result, .Wait(), GetAwaiter().GetResult() on an async method) and await it instead. ";

    private static string Times(int count) => count == 1 ? "once" : string.Create(CultureInfo.InvariantCulture, $"{count} times");
}
