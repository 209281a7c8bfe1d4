using MuxWatch.Model;

namespace MuxWatch.Pipeline;

/// <summary>When a request waited, as far as its message tells: the one window every step uses.</summary>
/// <param name="From">When the request started waiting.</param>
/// <param name="To">When it was seen to time out (the catch, or the time it was reported with).</param>
public readonly record struct WaitingWindow(DateTimeOffset From, DateTimeOffset To)
{
    /// <summary>True when evidence from <paramref name="start"/> to <paramref name="end"/> is weighed for this wait (<see cref="Diagnosis.InTheWait"/>: the one rule).</summary>
    internal bool Weighs(DateTimeOffset start, DateTimeOffset end) => Diagnosis.InTheWait.Weighs(From, To, start, end);

    /// <summary>Where evidence stands against this wait, in words (<see cref="Diagnosis.InTheWait.Relation"/>).</summary>
    internal string Relation(DateTimeOffset start, DateTimeOffset end) => Diagnosis.InTheWait.Relation(From, To, start, end);

    /// <summary>The window of a message with neither a timeout nor an elapsed figure (a connection failure, 1.x): the client's default timeout.</summary>
    internal static readonly TimeSpan Default = TimeSpan.FromSeconds(5);

    /// <summary>
    /// From the catch back by the message's elapsed figure (async) or its timeout (sync), to the catch;
    /// <see cref="Default"/> when it has neither (or one beyond a day, which no real client writes).
    /// </summary>
    internal static WaitingWindow Of(DateTimeOffset caught, RedisErrorReport report)
    {
        ArgumentNullException.ThrowIfNull(report);
        var span = report.WaitedFor ?? Default;
        return new(caught - DateTimeOffset.MinValue > span ? caught - span : DateTimeOffset.MinValue, caught);
    }
}
