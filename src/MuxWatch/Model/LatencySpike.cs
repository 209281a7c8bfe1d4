namespace MuxWatch.Model;

/// <summary>One event of <c>LATENCY LATEST</c>.</summary>
/// <param name="Event">The event name (<c>fork</c>, <c>command</c>, ...).</param>
/// <param name="Time">When its latest spike was recorded (server clock, second resolution).</param>
/// <param name="LatestMs">That spike, in milliseconds.</param>
/// <param name="MaxMs">The largest spike since the history was reset.</param>
public readonly record struct LatencySpike(string Event, DateTimeOffset Time, double LatestMs, double MaxMs);
