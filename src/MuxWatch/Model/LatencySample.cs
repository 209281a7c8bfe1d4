namespace MuxWatch.Model;

/// <summary>One sample of <c>LATENCY HISTORY</c>.</summary>
/// <param name="Time">When it was recorded (server clock, second resolution).</param>
/// <param name="Ms">Its latency in milliseconds.</param>
public readonly record struct LatencySample(DateTimeOffset Time, double Ms);
