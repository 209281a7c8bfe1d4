namespace MuxWatch.Pipeline;

/// <summary>When a request waited, as far as its message tells: the one window every step uses.</summary>
internal static class WaitingWindow
{
    /// <summary>The window of a message with neither a timeout nor an elapsed figure (a connection failure, 1.x): the client's default timeout.</summary>
    internal static readonly TimeSpan Default = TimeSpan.FromSeconds(5);

    /// <summary>
    /// From the catch back by the message's elapsed figure (async) or its timeout (sync), to the catch;
    /// <see cref="Default"/> when it has neither (or one beyond a day, which no real client writes).
    /// </summary>
    internal static (DateTimeOffset From, DateTimeOffset To) Of(TimeoutObservation observation)
    {
        var span = observation.Report.WaitedFor ?? Default;
        return (observation.Time - DateTimeOffset.MinValue > span ? observation.Time - span : DateTimeOffset.MinValue, observation.Time);
    }
}
