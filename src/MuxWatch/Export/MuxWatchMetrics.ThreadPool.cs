using MuxWatch.Model;
using Prometheus;

namespace MuxWatch.Export;

/// <summary>The thread pool's families (<c>muxwatch_threadpool_*</c>): the process's own pool, sampled each probe cycle.</summary>
public sealed partial class MuxWatchMetrics
{
    internal Gauge ThreadPoolBusy { get; private set; } = null!;

    internal Gauge ThreadPoolMin { get; private set; } = null!;

    internal Gauge ThreadPoolMax { get; private set; } = null!;

    internal Gauge ThreadPoolThreads { get; private set; } = null!;

    internal Gauge ThreadPoolQueueLength { get; private set; } = null!;

    internal Counter ThreadPoolCompleted { get; private set; } = null!;

    internal Counter ThreadPoolAdjustments { get; private set; } = null!;

    internal Counter ThreadPoolStackCaptures { get; private set; } = null!;

    /// <summary>What a stack capture of the pool's workers came to: <c>captured</c>, <c>failed</c> (this once), <c>unavailable</c> (never in this process).</summary>
    internal static readonly string[] StackCaptureOutcomes = ["captured", "failed", "unavailable"];

    /// <summary>Sets the thread-pool families from one sample.</summary>
    internal void RecordThreadPool(ThreadPoolSnapshot pool)
    {
        ThreadPoolBusy.WithLabels("worker").Set(pool.WorkerBusy);
        ThreadPoolBusy.WithLabels("io").Set(pool.IoBusy);
        ThreadPoolMin.WithLabels("worker").Set(pool.WorkerMin);
        ThreadPoolMin.WithLabels("io").Set(pool.IoMin);
        ThreadPoolMax.WithLabels("worker").Set(pool.WorkerMax);
        ThreadPoolMax.WithLabels("io").Set(pool.IoMax);
        ThreadPoolThreads.Set(pool.Threads);
        ThreadPoolQueueLength.Set(pool.QueueLength);
        ThreadPoolCompleted.IncTo(pool.CompletedItems);
    }

    /// <summary>Counts one thread-count change the runtime's pool made, under its reason.</summary>
    internal void RecordThreadPoolAdjustment(ThreadPoolAdjustmentReason reason) =>
        ThreadPoolAdjustments.WithLabels(Enum.IsDefined(reason) ? KebabCaseNames<ThreadPoolAdjustmentReason>.Of(reason, "other") : "other").Inc();

    /// <summary>Every reason's series at 0 from the start, as <c>increase()</c> needs (a reason the runtime adds later goes to <c>other</c>).</summary>
    private static void InitializeAdjustments(Counter adjustments)
    {
        foreach (var reason in Enum.GetValues<ThreadPoolAdjustmentReason>())
        {
            adjustments.WithLabels(KebabCaseNames<ThreadPoolAdjustmentReason>.Of(reason, "other")).Inc(0);
        }

        adjustments.WithLabels("other").Inc(0);
    }

    private void DeclareThreadPoolFamilies()
    {
        ThreadPoolBusy = Gauge(SeriesOwner.Process, "muxwatch_threadpool_busy_threads",
            "Threads in use (Max minus Available, as StackExchange.Redis computes it), by pool (worker, io).", "pool");
        ThreadPoolMin = Gauge(SeriesOwner.Process, "muxwatch_threadpool_min_threads",
            "The pool's minimum: above it, threads are added slowly and work waits.", "pool");
        ThreadPoolMax = Gauge(SeriesOwner.Process, "muxwatch_threadpool_max_threads", "The pool's maximum.", "pool");
        ThreadPoolThreads = Gauge(SeriesOwner.Process, "muxwatch_threadpool_threads", "Threads the pool has now.");
        ThreadPoolQueueLength = Gauge(SeriesOwner.Process, "muxwatch_threadpool_queue_length", "Work items queued and not yet started.");
        ThreadPoolCompleted = Counter(SeriesOwner.Process, "muxwatch_threadpool_completed_items_total", "Work items the pool completed.");
        ThreadPoolAdjustments = Counter(SeriesOwner.Process, "muxwatch_threadpool_adjustments_total",
            "Thread-count changes the runtime's thread pool made, by its own reason (its ThreadPoolWorkerThreadAdjustmentAdjustment event): "
            + "cooperative-blocking (pool threads blocked waiting on tasks: sync over async), starvation (queued work made no progress), "
            + "the hill climbing's warmup, initializing, random-move, climbing-move, change-point, stabilizing, thread-timed-out; other.", "reason");
        InitializeAdjustments(ThreadPoolAdjustments);
        ThreadPoolStackCaptures = Counter(SeriesOwner.Process, "muxwatch_threadpool_stack_captures_total",
            "Stack captures of the pool's workers, taken in-process when the pool starved, by outcome: captured, failed (this once), "
            + "unavailable (never in this process: diagnostics disabled, Native AOT).", "outcome");
        foreach (var outcome in StackCaptureOutcomes)
        {
            ThreadPoolStackCaptures.WithLabels(outcome).Inc(0);
        }
    }

    /// <summary>Counts one stack capture by its outcome (one of <see cref="StackCaptureOutcomes"/>).</summary>
    internal void RecordStackCapture(string outcome) => ThreadPoolStackCaptures.WithLabels(outcome).Inc();
}
