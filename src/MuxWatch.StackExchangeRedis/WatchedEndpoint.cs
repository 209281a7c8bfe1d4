
namespace MuxWatch.StackExchangeRedis;

/// <summary>One server of a watched multiplexer: its series, its queue history, when it last answered, and at most one PING in flight.</summary>
internal sealed class WatchedEndpoint(MultiplexerMetrics metrics, string multiplexer, string endpoint, bool owned = false)
{
    private int _pinging;
    private DateTimeOffset _lastPing = DateTimeOffset.MinValue;

    public string Endpoint => endpoint;

    public EndpointSeries Series { get; } = new(metrics, multiplexer, endpoint, owned);

    public QueueHistory Queues { get; } = new();

    public DateTimeOffset? LastSuccess { get; private set; }

    /// <summary>The last probe cycle that found the interactive connection up (<see cref="MuxWatch.Model.LiveCounters.LastSeenConnected"/>).</summary>
    public DateTimeOffset? LastSeenConnected { get; set; }

    /// <summary>The endpoint answered (a PING, or a cycle that does not PING found it connected).</summary>
    public void Succeeded(DateTimeOffset now)
    {
        LastSuccess = now;
        Series.LastProbeSuccess.Set(now.ToUnixTimeMilliseconds() / 1000.0);
    }

    /// <summary>True when a PING is due (the loop's own thread is the only caller): the first cycle, then once each <paramref name="interval"/>, on the <see cref="Cadence"/> the server polls share.</summary>
    public bool PingDue(DateTimeOffset now, TimeSpan interval)
    {
        if (!Cadence.InNewSlot(_lastPing, now, interval))
        {
            return false;
        }

        _lastPing = now;
        return true;
    }

    public bool TryStartPing() => Interlocked.CompareExchange(ref _pinging, 1, 0) == 0;

    public void PingDone() => Volatile.Write(ref _pinging, 0);

    /// <summary>True while a PING of the probe's is in flight (tests wait for it to end rather than sleep).</summary>
    internal bool PingInFlight => Volatile.Read(ref _pinging) == 1;
}
