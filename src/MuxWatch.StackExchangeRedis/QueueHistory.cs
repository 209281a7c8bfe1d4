namespace MuxWatch.StackExchangeRedis;

/// <summary>
/// The last qs/qu samples of one endpoint, so a timeout caught after its stall ended still sees the
/// queue it waited in (an async timeout surfaces up to a heartbeat late; seen: a PING timeout read qs=0 at the catch),
/// and whether the connection was up at each, so a failure read late is judged by what was seen before it.
/// </summary>
internal sealed class QueueHistory
{
    /// <summary>Samples kept: a minute at the default interval, longer than any timeout's waiting window.</summary>
    private const int Length = 64;

    private readonly (DateTimeOffset Time, long Sent, long Unsent, bool Connected)[] _samples = new (DateTimeOffset, long, long, bool)[Length];
    private readonly Lock _gate = new();
    private int _next;

    public void Remember(DateTimeOffset time, long sent, long unsent, bool connected)
    {
        lock (_gate)
        {
            _samples[_next] = (time, sent, unsent, connected);
            _next = (_next + 1) % Length;
        }
    }

    /// <summary>
    /// The highest qs and qu sampled from <paramref name="since"/> to <paramref name="until"/>; zeros when none was. A
    /// sample after the catch (and its slack) belongs to no wait that ended at it.
    /// </summary>
    public (long Sent, long Unsent) MaxBetween(DateTimeOffset since, DateTimeOffset until)
    {
        long sent = 0, unsent = 0;
        lock (_gate)
        {
            foreach (var sample in _samples)
            {
                if (sample.Time >= since && sample.Time <= until)
                {
                    sent = Math.Max(sent, sample.Sent);
                    unsent = Math.Max(unsent, sample.Unsent);
                }
            }
        }

        return (sent, unsent);
    }

    /// <summary>Whether the connection was up at the last sample at or before <paramref name="asOf"/>; null when none kept was.</summary>
    public bool? ConnectedAsOf(DateTimeOffset asOf) => LastAtOrBefore(asOf, onlyConnected: false)?.Connected;

    /// <summary>
    /// The last sample at or before <paramref name="asOf"/> that found the connection up; null when none kept did. A
    /// failure is read as of when it was caught: under a starved pool its reading can come ten seconds later, after
    /// the client has re-made the connection it lost (seen live), when the latest sample says nothing of before.
    /// </summary>
    public DateTimeOffset? LastConnected(DateTimeOffset asOf) => LastAtOrBefore(asOf, onlyConnected: true)?.Time;

    /// <summary>The latest sample kept at or before <paramref name="asOf"/> (of those that found the connection up, when <paramref name="onlyConnected"/>).</summary>
    private (DateTimeOffset Time, bool Connected)? LastAtOrBefore(DateTimeOffset asOf, bool onlyConnected)
    {
        (DateTimeOffset Time, bool Connected)? last = null;
        lock (_gate)
        {
            foreach (var sample in _samples)
            {
                if (sample.Time != default && sample.Time <= asOf && (sample.Connected || !onlyConnected) && (last is null || sample.Time > last.Value.Time))
                {
                    last = (sample.Time, sample.Connected);
                }
            }
        }

        return last;
    }
}
