namespace MuxWatch.Pipeline;

/// <summary>One step of the diagnosis: reads the timeout so far and adds to it.</summary>
/// <remarks>
/// Steps run by <see cref="Stage"/>, then in registration order: the read, enrichers (what the live
/// process knows and the text does not), the message rules, then correlators that may refine the cause
/// (and that the pipeline runs again while a timeout waits for its server's next poll).
/// A step runs on the pipeline's caller and must not block: no network calls.
/// </remarks>
public interface ITimeoutStep
{
    /// <summary>When the step runs.</summary>
    TimeoutStepStage Stage { get; }

    /// <summary>Reads and adds to <paramref name="timeout"/>.</summary>
    void Apply(TimeoutContext timeout);
}
