using MuxWatch.Timeouts;

namespace MuxWatch.Pipeline;

/// <summary>What a source submits to the <see cref="TimeoutPipeline"/>: one read message, when and how it was seen.</summary>
/// <param name="Time">When it was raised or, for a posted message, the time it was reported with.</param>
/// <param name="Source">How it reached MuxWatch: one of <see cref="TimeoutSources"/>.</param>
/// <param name="Report">What the message said.</param>
public sealed record TimeoutObservation(DateTimeOffset Time, string Source, RedisErrorReport Report)
{
    /// <summary>The registered multiplexer it belongs to, when the source knows it (the probe does).</summary>
    public string? Multiplexer { get; init; }

    /// <summary>The thread pool sampled when the exception was thrown (in-process sources only).</summary>
    public ThreadPoolSnapshot? ThreadPoolAtCatch { get; init; }
}

/// <summary>The sources a timeout can come from: a small fixed set, so that it can label a metric.</summary>
public static class TimeoutSources
{
    /// <summary>Caught in-process by the first-chance hook: the app's own call timed out.</summary>
    public const string FirstChance = "first-chance";

    /// <summary>MuxWatch's own probe call (PING through a watched multiplexer) timed out.</summary>
    public const string Probe = "probe";

    /// <summary>Posted to <c>POST /api/timeouts</c>.</summary>
    public const string Api = "api";

    /// <summary>Read by the <c>explain</c> command.</summary>
    public const string Explain = "explain";
}
