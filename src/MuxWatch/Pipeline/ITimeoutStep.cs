namespace MuxWatch.Pipeline;

/// <summary>One step of the diagnosis: reads the timeout so far and adds to it.</summary>
/// <remarks>
/// Steps run by <see cref="Stage"/>, then in registration order: enrichers first (what the live process
/// knows and the text does not), then the message rules, then correlators that may refine the cause.
/// A step runs on the pipeline's caller and must not block: no network calls.
/// </remarks>
public interface ITimeoutStep
{
    /// <summary>When the step runs.</summary>
    TimeoutStepStage Stage { get; }

    /// <summary>Reads and adds to <paramref name="timeout"/>.</summary>
    void Apply(TimeoutContext timeout);
}

/// <summary>The order of the pipeline's steps.</summary>
public enum TimeoutStepStage
{
    /// <summary>Adds facts: the multiplexer it belongs to, its live counters.</summary>
    Enrich = 100,

    /// <summary>Names the cause from the message and the facts added (the rules of docs/diagnosis.md).</summary>
    Diagnose = 200,

    /// <summary>Refines the cause with what else was happening (the server's timeline).</summary>
    Correlate = 300,
}
