namespace MuxWatch.StackExchangeRedis;

/// <summary>
/// When a periodic network call (a PING, a server poll) is due: once in each slot of its interval, the slots
/// counted from the Unix epoch, so that calls of the same interval, or of one a multiple of the other, start
/// on the same loop tick however long after start-up each began.
/// </summary>
/// <remarks>
/// Why aligned rather than "one interval after the last": in an idle app, what watching costs is mostly how
/// often its calls wake the app's thread pool, each wake leaving a worker spinning for the next item, not the
/// work done (docs/benchmarks.md, "What watching costs an idle app"). A PING and a poll started on one tick
/// share one wake; a few hundred microseconds apart, each pays its own.
/// </remarks>
internal static class Cadence
{
    /// <summary>True when <paramref name="now"/> is in a later slot of <paramref name="interval"/> than <paramref name="last"/> (<see cref="DateTimeOffset.MinValue"/>: never).</summary>
    public static bool InNewSlot(DateTimeOffset last, DateTimeOffset now, TimeSpan interval) =>
        now > last && (now.UtcTicks / interval.Ticks) != (last.UtcTicks / interval.Ticks);
}
