namespace MuxWatch.Model;

/// <summary>
/// The stacks of the thread pool's workers, captured once in the process while the pool starved, summed by the
/// app's own code: where workers were blocked, where they were busy.
/// </summary>
/// <param name="At">When the stacks were sampled.</param>
/// <param name="TookMs">How long the capture took, from the request to the summary, in milliseconds.</param>
/// <param name="Trigger">What asked for it: the runtime's reason for adding threads (<c>cooperative-blocking</c>, <c>starvation</c>).</param>
/// <param name="Workers">The pool's worker threads seen.</param>
/// <param name="BlockedWorkers">Workers running a work item and blocked in a wait.</param>
/// <param name="BusyWorkers">Workers running a work item, not blocked.</param>
/// <param name="Sites">The app's code on those workers, most threads first, blocked and busy; at most <see cref="MaxSites"/>.</param>
public sealed record PoolStackCapture(DateTimeOffset At, double TookMs, string Trigger, int Workers, int BlockedWorkers, int BusyWorkers, IReadOnlyList<PoolThreadSite> Sites)
{
    /// <summary>Events the runtime dropped while the session ran (its buffer full): when over 0, some frames may be unnamed and their threads unsummed.</summary>
    public int EventsLost { get; init; }

    /// <summary>The most sites kept in one capture.</summary>
    public const int MaxSites = 10;
}
