namespace MuxWatch.Json;

/// <summary>The answer of <c>GET /timeouts</c>: the newest first.</summary>
/// <param name="Count">How many are listed.</param>
/// <param name="TotalRecorded">How many were recorded since start, listed or not.</param>
/// <param name="Timeouts">The timeouts, newest first.</param>
public sealed record TimeoutsAnswer(int Count, long TotalRecorded, IReadOnlyList<TimeoutAnswer> Timeouts)
{
    /// <summary>When the page is full: the <c>before</c> value of the next (older) page.</summary>
    public long? NextBefore { get; init; }
}
