using System.Text.Json.Serialization;
using MuxWatch.Model;

namespace MuxWatch.Json;

/// <summary>One recorded timeout as <c>/timeouts</c> lists it: when, from which source, on which multiplexer, then its diagnosis.</summary>
public sealed class TimeoutAnswer : DiagnosisAnswer
{
    private TimeoutAnswer(ObservedTimeout timeout)
        : base(timeout.Report, timeout.Diagnosis, timeout.Report.Endpoint ?? timeout.LiveCountersAtCatch?.Endpoint)
    {
        Id = timeout.Id;
        Time = timeout.Time;
        Source = timeout.Source;
        WaitingSince = timeout.WaitingSince;
        Multiplexer = timeout.Multiplexer;
        ThreadPoolAtCatch = timeout.ThreadPoolAtCatch;
        LiveCountersAtCatch = timeout.LiveCountersAtCatch;
        Settled = timeout.Settled;
    }

    /// <summary>The answer for <paramref name="timeout"/>.</summary>
    public static TimeoutAnswer From(ObservedTimeout timeout)
    {
        ArgumentNullException.ThrowIfNull(timeout);
        return new TimeoutAnswer(timeout);
    }

    /// <summary>Numbers the timeouts of this process from 1; a revised diagnosis keeps its id.</summary>
    [JsonPropertyOrder(-5)]
    public long Id { get; }

    /// <summary>When it was raised, or the time it was posted with.</summary>
    [JsonPropertyOrder(-4)]
    public DateTimeOffset Time { get; }

    /// <summary><c>first-chance</c>, <c>probe</c> or <c>api</c>.</summary>
    [JsonPropertyOrder(-3)]
    public string Source { get; }

    /// <summary>When the request started waiting; absent when the message has no timeout or elapsed figure.</summary>
    [JsonPropertyOrder(-2)]
    [JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)]
    public DateTimeOffset? WaitingSince { get; }

    /// <summary>The registered multiplexer it is attributed to.</summary>
    [JsonPropertyOrder(-1)]
    public string? Multiplexer { get; }

    /// <summary>False while the diagnosis waits for its endpoint's next server poll; true once final (and counted).</summary>
    [JsonPropertyOrder(-1)]
    public bool Settled { get; }

    /// <summary>The thread pool when it was thrown (in-process only).</summary>
    [JsonPropertyOrder(1)]
    [JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)]
    public ThreadPoolSnapshot? ThreadPoolAtCatch { get; }

    /// <summary>The endpoint's live counters when it was caught (in-process, registered multiplexers only).</summary>
    [JsonPropertyOrder(2)]
    [JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)]
    public LiveCounters? LiveCountersAtCatch { get; }
}
