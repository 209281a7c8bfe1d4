namespace MuxWatch.Model;

/// <summary>
/// The .NET thread pool at one moment, with Busy computed as StackExchange.Redis computes it for its
/// timeout messages (Max minus Available), so the figures match the <c>WORKER</c> and <c>IOCP</c> text.
/// </summary>
/// <param name="WorkerBusy">Worker threads in use (Max minus Available).</param>
/// <param name="WorkerMin">The worker minimum: above it the pool adds threads slowly (about one per 500 ms).</param>
/// <param name="WorkerMax">The worker maximum.</param>
/// <param name="IoBusy">I/O completion threads in use (Max minus Available).</param>
/// <param name="IoMin">The I/O minimum.</param>
/// <param name="IoMax">The I/O maximum.</param>
/// <param name="Threads">Threads the pool has now.</param>
/// <param name="QueueLength">Work items queued and not yet started.</param>
/// <param name="CompletedItems">Work items completed since the process started.</param>
public readonly record struct ThreadPoolSnapshot(
    int WorkerBusy,
    int WorkerMin,
    int WorkerMax,
    int IoBusy,
    int IoMin,
    int IoMax,
    int Threads,
    long QueueLength,
    long CompletedItems)
{
    /// <summary>Reads the pool now: a handful of cheap calls, safe on any thread.</summary>
    public static ThreadPoolSnapshot Capture()
    {
        ThreadPool.GetAvailableThreads(out var workerAvailable, out var ioAvailable);
        ThreadPool.GetMaxThreads(out var workerMax, out var ioMax);
        ThreadPool.GetMinThreads(out var workerMin, out var ioMin);
        return new ThreadPoolSnapshot(
            workerMax - workerAvailable, workerMin, workerMax,
            ioMax - ioAvailable, ioMin, ioMax,
            ThreadPool.ThreadCount, ThreadPool.PendingWorkItemCount, ThreadPool.CompletedWorkItemCount);
    }

    /// <summary>True when either pool has more threads busy than its minimum: new work waits for a thread.</summary>
    public bool IsStarved => WorkerBusy > WorkerMin || IoBusy > IoMin;

    /// <summary>Nothing queued and no more busy threads than the minimum: a starvation, if there was one, is over.</summary>
    internal bool IsCalm => !IsStarved && QueueLength == 0;
}
