using MuxWatch.Model;

namespace MuxWatch.Pipeline;

/// <summary>
/// One timeout on its way through the pipeline's steps: what the source submitted, plus what the
/// steps have added so far (the report, the multiplexer it belongs to, live counters, the diagnosis).
/// </summary>
public sealed class TimeoutContext
{
    internal TimeoutContext(TimeoutObservation observation, bool final)
    {
        Observation = observation;
        Multiplexer = observation.Multiplexer;
        Final = final;
    }

    /// <summary>What the source submitted.</summary>
    public TimeoutObservation Observation { get; }

    /// <summary>The message as read by the first step.</summary>
    public RedisErrorReport Report
    {
        get;
        internal set
        {
            field = value;
            Waiting = WaitingWindow.Of(Observation.Time, value, Observation.WaitStarted);
        }
    } = RedisErrorReport.Empty;

    /// <summary>When the request waited: the one window every step uses (computed once the message is read).</summary>
    public WaitingWindow Waiting { get; private set; }

    /// <summary>The registered multiplexer it is attributed to: set by the source, or by an enricher that matched its endpoint.</summary>
    public string? Multiplexer { get; set; }

    /// <summary>The endpoint's counters sampled from the live multiplexer (in-process sources only).</summary>
    public LiveCounters? LiveCounters { get; set; }

    /// <summary>The thread pool as MuxWatch sampled it just before the request started waiting (in-process sources only).</summary>
    internal ThreadPoolSnapshot? ThreadPoolBeforeWait { get; set; }

    /// <summary>What this process's runtime did over the wait (in-process sources only, once sampled).</summary>
    internal RuntimeOverWait? Runtime { get; set; }

    /// <summary>The diagnosis so far; a later step may replace it (the correlator refines <c>server-stall</c>).</summary>
    public TimeoutDiagnosis? Diagnosis { get; set; }

    /// <summary>
    /// True when this run must settle the timeout whatever is still missing (the settle time is up, or
    /// the pipeline only diagnoses): <see cref="AwaitTimeline"/> then does nothing.
    /// </summary>
    public bool Final { get; }

    /// <summary>The endpoint whose next server poll may still change the diagnosis; null when it is final.</summary>
    internal string? AwaitedTimeline { get; private set; }

    /// <summary>
    /// The diagnosis cannot be final yet: <paramref name="endpoint"/>'s next server poll may explain it.
    /// The pipeline publishes it unsettled and runs the correlating steps again when that endpoint's
    /// timeline advances, or for the last time when the settle time is up.
    /// </summary>
    internal void AwaitTimeline(string endpoint)
    {
        ArgumentNullException.ThrowIfNull(endpoint);
        if (!Final)
        {
            AwaitedTimeline = endpoint;
        }
    }

    /// <summary>A key whose size a correlating step wants measured on <see cref="AwaitedTimeline"/>'s server; null when none.</summary>
    internal string? WantedKeySize { get; private set; }

    /// <summary>
    /// The diagnosis names a key whose size <paramref name="endpoint"/>'s server can tell (<c>MEMORY USAGE</c>): the
    /// pipeline asks its poller for it and holds the timeout open until an answer (or the settle time). A final run
    /// asks nothing.
    /// </summary>
    internal void MeasureKey(string endpoint, string key)
    {
        ArgumentNullException.ThrowIfNull(endpoint);
        ArgumentNullException.ThrowIfNull(key);
        if (!Final)
        {
            AwaitedTimeline = endpoint;
            WantedKeySize = key;
        }
    }

    private List<(AdviceRank Rank, string Text)>? _advice;

    /// <summary>
    /// Adds what to do to the diagnosis's own advice, at <paramref name="rank"/>: steps add, the pipeline composes the
    /// final advice once, after every step ran (<see cref="ComposeAdvice"/>), so no step rewrites another's text.
    /// </summary>
    internal void Advise(AdviceRank rank, string text)
    {
        ArgumentNullException.ThrowIfNull(text);
        (_advice ??= []).Add((rank, text));
    }

    /// <summary>The final advice: what the steps added, by rank (in the order added within one), then the diagnosis's own.</summary>
    internal void ComposeAdvice()
    {
        if (_advice is { Count: > 0 } added && Diagnosis is { } diagnosis)
        {
            Diagnosis = diagnosis with { Advice = string.Concat(added.OrderBy(advice => advice.Rank).Select(advice => advice.Text)) + diagnosis.Advice };
        }

        _advice = null;
    }

    /// <summary>A copy as it stood before the correlating stage, to run that stage again.</summary>
    internal TimeoutContext ForCorrelation(TimeoutDiagnosis? diagnosed, bool final) => new(Observation, final)
    {
        Report = Report,
        Multiplexer = Multiplexer,
        LiveCounters = LiveCounters,
        ThreadPoolBeforeWait = ThreadPoolBeforeWait,
        Runtime = Runtime,
        Diagnosis = diagnosed,
    };
}

/// <summary>Where a step's advice stands in the final advice, first first.</summary>
internal enum AdviceRank
{
    /// <summary>The culprit named: the code that blocked the pool, the huge key (the one thing to change).</summary>
    Culprit,

    /// <summary>The kind of cause, said by a witness beyond the message (the runtime's word: blocked on tasks, or busy).</summary>
    Kind,
}
