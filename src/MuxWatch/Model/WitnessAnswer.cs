namespace MuxWatch.Model;

/// <summary>A prompt answer on MuxWatch's own connection: a PING sent and answered, on the client's clock (UTC).</summary>
/// <remarks>
/// Kept as two UTC tick counts (16 bytes, not two <see cref="DateTimeOffset"/>s' 32): each endpoint's timeline keeps
/// 256 of them, and at 500 endpoints the difference was 2 MB of a sidecar's heap (docs/benchmarks.md).
/// </remarks>
internal readonly record struct WitnessAnswer
{
    private readonly long _sentTicks;
    private readonly long _answeredTicks;

    /// <param name="sent">When the PING was written.</param>
    /// <param name="answered">When its answer was read.</param>
    public WitnessAnswer(DateTimeOffset sent, DateTimeOffset answered) => (_sentTicks, _answeredTicks) = (sent.UtcTicks, answered.UtcTicks);

    /// <summary>When the PING was written.</summary>
    public DateTimeOffset Sent => new(_sentTicks, TimeSpan.Zero);

    /// <summary>When its answer was read.</summary>
    public DateTimeOffset Answered => new(_answeredTicks, TimeSpan.Zero);
}
