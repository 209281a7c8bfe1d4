namespace MuxWatch.StackExchangeRedis;

/// <summary>
/// When a periodic network call (a PING, a server poll) is due: once in each slot of its interval, the slots
/// counted from the Unix epoch, so that calls of the same interval, or of one a multiple of the other, start
/// on the same loop tick however long after start-up each began.
/// </summary>
/// <remarks>
/// <para>
/// Why aligned rather than "one interval after the last": in an idle app, what watching costs is mostly how
/// often its calls wake the app's thread pool, each wake leaving a worker spinning for the next item, not the
/// work done (docs/benchmarks.md, "What watching costs an idle app"). A PING and a poll started on one tick
/// share one wake; a few hundred microseconds apart, each pays its own.
/// </para>
/// <para>
/// Why not aligned past <see cref="SpreadFrom"/> polled endpoints: a sidecar watching 500 servers then started 500
/// polls on one tick every 10 s, their replies all in memory at once, and the GC that this burst set off found them
/// live and kept them a generation longer. There a process is never idle, so each endpoint's calm poll takes one of
/// <see cref="Lanes"/> probe ticks of its own instead (docs/benchmarks.md, "The sidecar at 500 separate endpoints").
/// </para>
/// </remarks>
internal static class Cadence
{
    /// <summary>Polled endpoints from which each one's calm poll is given a phase of its own.</summary>
    public const int SpreadFrom = 50;

    /// <summary>The phases the calm polls are spread over, one probe tick apart: a tenth of them a tick at the default 10 s.</summary>
    public const int Lanes = 10;

    /// <summary>True when <paramref name="now"/> is in a later slot of <paramref name="interval"/> than <paramref name="last"/> (<see cref="DateTimeOffset.MinValue"/>: never), the slots starting <paramref name="phase"/> after the clock's.</summary>
    public static bool InNewSlot(DateTimeOffset last, DateTimeOffset now, TimeSpan interval, TimeSpan phase = default) =>
        now > last && ((now.UtcTicks - phase.Ticks) / interval.Ticks) != ((last.UtcTicks - phase.Ticks) / interval.Ticks);

    /// <summary>
    /// The phase of <paramref name="endpoint"/>'s calm polls: none while fewer than <see cref="SpreadFrom"/> endpoints
    /// are polled (every PING and poll on one tick), else one of <see cref="Lanes"/> whole <paramref name="tick"/>s
    /// chosen by the endpoint's name (the same for the process's life).
    /// </summary>
    public static TimeSpan PhaseOf(string endpoint, int polledEndpoints, TimeSpan tick) =>
        polledEndpoints < SpreadFrom ? TimeSpan.Zero : tick * (int)((uint)StringComparer.OrdinalIgnoreCase.GetHashCode(endpoint) % Lanes);
}
