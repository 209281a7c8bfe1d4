using MuxWatch.Model;

namespace MuxWatch.Pipeline;

/// <summary>What a source submits to the <see cref="TimeoutPipeline"/>: one message, when and how it was seen.</summary>
/// <param name="Time">When it was raised or, for a posted message, the time it was reported with.</param>
/// <param name="Source">How it reached MuxWatch: one of <see cref="TimeoutSources"/>.</param>
/// <param name="Message">The exception or text, read by the pipeline's first step.</param>
public sealed record TimeoutObservation(DateTimeOffset Time, string Source, RedisMessage Message)
{
    /// <summary>An observation of a message already read.</summary>
    public TimeoutObservation(DateTimeOffset time, string source, RedisErrorReport report)
        : this(time, source, RedisMessage.FromReport(report))
    {
    }

    /// <summary>The registered multiplexer it belongs to, when the source knows it (the probe does).</summary>
    public string? Multiplexer { get; init; }

    /// <summary>The thread pool sampled when the exception was thrown (in-process sources only).</summary>
    public ThreadPoolSnapshot? ThreadPoolAtCatch { get; init; }
}
