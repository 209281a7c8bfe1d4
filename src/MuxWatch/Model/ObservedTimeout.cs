namespace MuxWatch.Model;

/// <summary>One timeout or connection error that MuxWatch saw, read and diagnosed.</summary>
/// <param name="Time">When it was raised or, for a posted message, the time it was reported with.</param>
/// <param name="Source">How it reached MuxWatch: one of <see cref="Model.TimeoutSources"/>.</param>
/// <param name="Multiplexer">The registered multiplexer it is attributed to, when known.</param>
/// <param name="Report">What the message said.</param>
/// <param name="Diagnosis">Why it happened.</param>
/// <param name="ThreadPoolAtCatch">The thread pool sampled by MuxWatch when the exception was thrown (in-process only).</param>
public sealed record ObservedTimeout(
    DateTimeOffset Time,
    string Source,
    string? Multiplexer,
    RedisErrorReport Report,
    TimeoutDiagnosis Diagnosis,
    ThreadPoolSnapshot? ThreadPoolAtCatch = null)
{
    /// <summary>Numbers the timeouts of one pipeline, from 1; a revision keeps its timeout's id.</summary>
    public long Id { get; init; }

    /// <summary>The endpoint's counters read from the live multiplexer when it was caught (in-process, registered multiplexers only).</summary>
    public LiveCounters? LiveCountersAtCatch { get; init; }

    /// <summary>
    /// False while the diagnosis waits for its endpoint's next server poll (the fork or slow command that
    /// explains it is often seen after the timeout); true once final. Counted in metrics only when final.
    /// </summary>
    public bool Settled { get; init; } = true;

    /// <summary>
    /// The endpoint the message names; for one that names none, caught in a process whose multiplexer talks to one
    /// server only, that server's (its live counters'); else <c>unknown</c>.
    /// </summary>
    public string Endpoint => Report.Endpoint ?? LiveCountersAtCatch?.Endpoint ?? "unknown";

    /// <summary>
    /// When the request started waiting, as far as the message tells: the time minus the elapsed
    /// figure of an async timeout, or minus the timeout itself for a sync one. This is the window in
    /// which the server's own events (a fork, a slow command) explain the timeout. Null when the
    /// message has neither figure (1.x messages).
    /// </summary>
    public DateTimeOffset? WaitingSince =>
        Report.WaitedFor is { } waited && Time - DateTimeOffset.MinValue > waited // never fails, whatever time was stored
            ? Time - waited
            : null;
}
