using MuxWatch.Model;

namespace MuxWatch.Pipeline;

/// <summary>What a source submits to the <see cref="TimeoutPipeline"/>: one message, when and how it was seen.</summary>
/// <param name="Time">When it was raised or, for a posted message, the time it was reported with.</param>
/// <param name="Source">How it reached MuxWatch: one of <see cref="TimeoutSources"/>.</param>
/// <param name="Message">The exception or text, read by the pipeline's first step.</param>
public sealed record TimeoutObservation(DateTimeOffset Time, string Source, RedisMessage Message)
{
    /// <summary>An observation of a message already read.</summary>
    internal TimeoutObservation(DateTimeOffset time, string source, RedisErrorReport report)
        : this(time, source, RedisMessage.FromReport(report))
    {
    }

    /// <summary>The registered multiplexer it belongs to, when the source knows it (the probe does).</summary>
    public string? Multiplexer { get; init; }

    /// <summary>
    /// When the request began to wait, when the source itself sent it (the probe's PING): its wait is then measured from
    /// there by the message's own figure, not back from <see cref="Time"/>, which a busy process may reach late.
    /// </summary>
    public DateTimeOffset? WaitStarted { get; init; }

    /// <summary>The thread pool sampled when the exception was thrown (in-process sources only).</summary>
    public ThreadPoolSnapshot? ThreadPoolAtCatch { get; init; }

    /// <summary>
    /// For an exception caught in the process: the namespaces of the code it was thrown through, innermost
    /// first, each once, at most <see cref="Sources.ThrownThrough.MaxNamespaces"/> (from its stack trace when
    /// it was read). A probe package reads it to tell which of several multiplexers on one endpoint a timeout
    /// came from (the distributed cache's, the SignalR backplane's, ...); never shown or exported.
    /// </summary>
    public IReadOnlyList<string>? ThrownThrough { get; init; }
}
