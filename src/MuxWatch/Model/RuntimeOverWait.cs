namespace MuxWatch.Model;

/// <summary>
/// What this process's runtime did while a request waited, from the samples of MuxWatch's dedicated
/// thread (in-process only): how long garbage collections paused every thread, how much CPU the process
/// used, and how late a thread that only sleeps woke (the process not given the CPU).
/// </summary>
/// <param name="WaitMs">The span the figures cover, in milliseconds (the wait, to the samples' precision).</param>
/// <param name="GcPauseMs">Milliseconds every managed thread was paused by blocking collections (<c>GC.GetTotalPauseDuration</c>).</param>
/// <param name="CpuMs">CPU milliseconds the process used (user and system).</param>
/// <param name="LateWakeMs">Milliseconds MuxWatch's sleeping thread woke late in total, GC pauses taken out.</param>
/// <param name="Cores">The cores the process may use (<c>Environment.ProcessorCount</c>: a container's CPU limit included).</param>
internal sealed record RuntimeOverWait(double WaitMs, double GcPauseMs, double CpuMs, double LateWakeMs, int Cores)
{
    /// <summary>The span before the wait that <see cref="GcPauseBeforeMs"/> covers.</summary>
    public static readonly TimeSpan Before = TimeSpan.FromSeconds(5);

    /// <summary>
    /// Milliseconds of GC pause in the <see cref="Before"/> before the request started waiting: a connection the
    /// client gave up on while the app was paused leaves requests that wait for it after the pause.
    /// </summary>
    public double GcPauseBeforeMs { get; init; }

    /// <summary>
    /// Times the runtime added pool threads over the wait because pool threads blocked waiting on tasks (its
    /// <c>CooperativeBlocking</c> reason: sync over async); 0 when it did not, or its events are not heard.
    /// </summary>
    public int BlockingAdjustments { get; init; }

    /// <summary>
    /// Times the runtime adjusted the pool over the wait for any other reason (queued work made no progress, its hill
    /// climbing): that it did shows its events were heard; that none was for threads blocked on tasks, that the pool's
    /// threads were busy or blocked on something other than a task.
    /// </summary>
    public int OtherAdjustments { get; init; }

    /// <summary>
    /// When the starvation this wait lies in began (the pool starved at every probe sample from then to the wait's
    /// start); null when the pool was calm, or not sampled, just before the wait.
    /// </summary>
    public DateTimeOffset? StarvedSince { get; init; }

    /// <summary>
    /// Times the runtime added pool threads for threads blocked on tasks in that starvation before the wait began
    /// (from <see cref="StarvedSince"/>): it adds one as each worker blocks and none for as long as it stays blocked,
    /// so a wait late in a long starvation may see none of its own.
    /// </summary>
    public int BlockingAdjustmentsBefore { get; init; }

    /// <summary>
    /// True once this process has heard any of the runtime's thread-pool adjustments (it makes some from the start):
    /// its events arrive, so none for threads blocked on tasks over a wait means none happened.
    /// </summary>
    public bool RuntimeEventsHeard { get; init; }

    /// <summary>The share of the wait spent in GC pauses, 0 to 1.</summary>
    public double GcPauseShare => WaitMs <= 0 ? 0 : Math.Min(1, GcPauseMs / WaitMs);

    /// <summary>The share of the cores the process used over the wait, 0 to 1.</summary>
    public double CpuShare => WaitMs <= 0 || Cores <= 0 ? 0 : Math.Min(1, CpuMs / (WaitMs * Cores));

    /// <summary>The share of the wait MuxWatch's thread lost waiting for a CPU, 0 to 1.</summary>
    public double LateWakeShare => WaitMs <= 0 ? 0 : Math.Min(1, LateWakeMs / WaitMs);
}
