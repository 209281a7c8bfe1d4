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

    /// <summary>The thread pool as MuxWatch sampled it just before the request started waiting (in-process sources only).</summary>
    public ThreadPoolSnapshot? ThreadPoolBeforeWait { get; set; }

    /// <summary>The diagnosis so far; a later step may replace it (the correlator refines <c>server-stall</c>).</summary>
    public TimeoutDiagnosis? Diagnosis { get; set; }

    /// <summary>Set by <see cref="SettleLater"/>: who settles this timeout once it has been published.</summary>
    internal SettlementTracker? Tracker { get; private set; }

    /// <summary>
    /// The diagnosis cannot be final yet (the server's next poll may explain it): the pipeline publishes
    /// it unsettled and hands it to <paramref name="tracker"/>, which settles it later, exactly once.
    /// </summary>
    public void SettleLater(SettlementTracker tracker) => Tracker = tracker;
}

/// <summary>
/// Takes a timeout published unsettled, and settles it later by calling <paramref name="settle"/> with
/// its final diagnosis (once; later calls are ignored).
/// </summary>
/// <param name="published">The timeout as published.</param>
/// <param name="settle">Publishes the final diagnosis to every sink.</param>
public delegate void SettlementTracker(ObservedTimeout published, Func<TimeoutDiagnosis, ObservedTimeout> settle);
