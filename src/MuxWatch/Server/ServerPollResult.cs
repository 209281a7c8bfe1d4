namespace MuxWatch.Server;

/// <summary>
/// What one poll of one endpoint read, as the client's typed calls returned it. Times are the server's
/// clock; <see cref="ServerStateTracker"/> converts them. A part is null when it was not read (refused,
/// or not asked for).
/// </summary>
/// <param name="Endpoint">The endpoint, <c>host:port</c>.</param>
/// <param name="Started">When the poll started (client clock).</param>
/// <param name="Finished">When its last reply arrived (client clock).</param>
public sealed record ServerPollResult(string Endpoint, DateTimeOffset Started, DateTimeOffset Finished)
{
    /// <summary>The fields of <c>INFO server</c>, <c>persistence</c> and <c>stats</c>, by name.</summary>
    public IReadOnlyDictionary<string, string>? Info { get; init; }

    /// <summary><c>latency-monitor-threshold</c> in milliseconds, from <c>CONFIG GET</c>.</summary>
    public long? LatencyMonitorThresholdMs { get; init; }

    /// <summary><c>LATENCY LATEST</c>: the latest spike of each event.</summary>
    public IReadOnlyList<LatencySpike>? LatencyLatest { get; init; }

    /// <summary><c>LATENCY HISTORY fork</c>, read when <c>LATENCY LATEST</c> showed a fork newer than the last seen.</summary>
    public IReadOnlyList<LatencySample>? ForkHistory { get; init; }

    /// <summary><c>SLOWLOG GET</c>: the newest entries.</summary>
    public IReadOnlyList<SlowlogEntry>? Slowlog { get; init; }

    /// <summary>The server's clock minus the client's, from <c>TIME</c> (the reply taken at the middle of its round trip).</summary>
    public TimeSpan? ClockOffset { get; init; }

    /// <summary>Commands the endpoint refused (<c>INFO</c>, <c>SLOWLOG</c>, <c>LATENCY</c>, <c>CONFIG</c>, <c>TIME</c>).</summary>
    public IReadOnlyList<string> Refused { get; init; } = [];

    /// <summary>Why the poll failed as a whole (a timeout, no connection); null when it read the server.</summary>
    public string? Error { get; init; }

    /// <summary>Reasons a poll fails, a fixed set for the metric label.</summary>
    public string? ErrorReason { get; init; }
}

/// <summary>One event of <c>LATENCY LATEST</c>.</summary>
/// <param name="Event">The event name (<c>fork</c>, <c>command</c>, ...).</param>
/// <param name="Time">When its latest spike was recorded (server clock, second resolution).</param>
/// <param name="LatestMs">That spike, in milliseconds.</param>
/// <param name="MaxMs">The largest spike since the history was reset.</param>
public readonly record struct LatencySpike(string Event, DateTimeOffset Time, double LatestMs, double MaxMs);

/// <summary>One sample of <c>LATENCY HISTORY</c>.</summary>
/// <param name="Time">When it was recorded (server clock, second resolution).</param>
/// <param name="Ms">Its latency in milliseconds.</param>
public readonly record struct LatencySample(DateTimeOffset Time, double Ms);

/// <summary>One slow-log entry, without its arguments.</summary>
/// <param name="Id">The slow-log id (grows by one per entry, from 0 at the server's start).</param>
/// <param name="Time">When it was logged, once it had run (server clock, second resolution).</param>
/// <param name="Duration">How long it ran.</param>
/// <param name="Command">The command name only.</param>
public readonly record struct SlowlogEntry(long Id, DateTimeOffset Time, TimeSpan Duration, string Command);
