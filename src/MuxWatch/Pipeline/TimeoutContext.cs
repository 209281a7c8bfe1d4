using MuxWatch.Timeouts;

namespace MuxWatch.Pipeline;

/// <summary>
/// One timeout on its way through the pipeline's steps: what the source submitted, plus what the
/// steps have added so far (the multiplexer it belongs to, live counters, the diagnosis).
/// </summary>
public sealed class TimeoutContext
{
    internal TimeoutContext(TimeoutObservation observation)
    {
        Observation = observation;
        Multiplexer = observation.Multiplexer;
    }

    /// <summary>What the source submitted.</summary>
    public TimeoutObservation Observation { get; }

    /// <summary>The message as read.</summary>
    public RedisErrorReport Report => Observation.Report;

    /// <summary>The registered multiplexer it is attributed to: set by the source, or by an enricher that matched its endpoint.</summary>
    public string? Multiplexer { get; set; }

    /// <summary>The endpoint's counters sampled from the live multiplexer (in-process sources only).</summary>
    public LiveCounters? LiveCounters { get; set; }

    /// <summary>The diagnosis so far; a later step may replace it (the correlator refines <c>server-stall</c>).</summary>
    public TimeoutDiagnosis? Diagnosis { get; set; }
}
