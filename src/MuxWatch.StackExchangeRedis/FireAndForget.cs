namespace MuxWatch.StackExchangeRedis;

/// <summary>
/// A task started and never awaited (a PING that only wakes a connection, a re-read of a topology, a poll
/// command left behind by its poll's timeout): its failure is observed, so none is ever left unobserved.
/// </summary>
internal static class FireAndForget
{
    public static void Observe(Task task) =>
        _ = task.ContinueWith(static t => t.Exception, CancellationToken.None, TaskContinuationOptions.OnlyOnFaulted, TaskScheduler.Default);
}
