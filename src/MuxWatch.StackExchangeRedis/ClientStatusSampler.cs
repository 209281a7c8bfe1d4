using StackExchange.Redis;

namespace MuxWatch.StackExchangeRedis;

/// <summary>
/// Reads one multiplexer's status text (<c>GetStatus()</c>) for what only it carries: the heartbeat's age and
/// the client's own timeout totals by mode. Only the probe loop's thread calls it.
/// </summary>
/// <remarks>
/// The totals are not exported for a multiplexer MuxWatch made itself (<paramref name="countTimeouts"/> false: a
/// sidecar target): its only commands are MuxWatch's, whose timeouts <c>muxwatch_timeouts_total{source="probe"}</c>
/// already counts by cause; three series an endpoint at 0 were 5% of a 500-endpoint sidecar's scrape.
/// </remarks>
internal sealed class ClientStatusSampler(string multiplexer, MultiplexerMetrics metrics, bool countTimeouts = true)
{
    /// <summary>
    /// The status text's buffer, reused by every read on the thread: one buffer per multiplexer held about 7 KB each,
    /// 3.7 MB of a sidecar's heap at 500 targets, for a text read and dropped at once.
    /// </summary>
    [ThreadStatic]
    private static System.Text.StringBuilder? t_text;
    private DateTimeOffset _lastRead = DateTimeOffset.MinValue;

    /// <summary>How often the status is read while the multiplexer is quiet (<see cref="SampleIfDue"/>).</summary>
    internal static readonly TimeSpan QuietInterval = TimeSpan.FromMinutes(1);

    /// <summary>
    /// Reads the status when due. It is the dearest read of a cycle (the client formats every server's summary
    /// into it, each line stamped with the time: its number and date formatting, its logger and the parse were about
    /// a seventh of what the JIT compiled for an idle app's MuxWatch in its first ten minutes, docs/benchmarks.md), and
    /// what it alone carries (the heartbeat's age, the client's own timeout totals) moves only when something is
    /// wrong: while the multiplexer is <paramref name="quiet"/> (every server connected, nothing sent awaiting a reply
    /// or waiting to be sent) it is read once a minute (<see cref="QuietInterval"/>); otherwise at the PINGs' cadence
    /// (<paramref name="pingInterval"/>; every cycle when PING is off).
    /// </summary>
    public void SampleIfDue(IConnectionMultiplexer connection, DateTimeOffset now, TimeSpan? pingInterval, bool quiet)
    {
        var interval = quiet ? (pingInterval is { } ping && ping > QuietInterval ? ping : QuietInterval) : pingInterval;
        if (interval is { } due && now - _lastRead < due * 0.9)
        {
            return;
        }

        _lastRead = now;
        var text = t_text ??= new System.Text.StringBuilder();
        text.Clear();
        using (var writer = new StringWriter(text, System.Globalization.CultureInfo.InvariantCulture))
        {
            connection.GetStatus(writer);
        }

        var status = StatusTextReader.Read(text);
        if (status.HeartbeatAgeSeconds is { } age)
        {
            metrics.HeartbeatAge.WithLabels(multiplexer).Set(age);
        }

        if (!countTimeouts)
        {
            return;
        }

        IncTo(metrics.ClientTimeouts.WithLabels(multiplexer, "sync"), status.SyncTimeouts);
        IncTo(metrics.ClientTimeouts.WithLabels(multiplexer, "async"), status.AsyncTimeouts);
        IncTo(metrics.ClientTimeouts.WithLabels(multiplexer, "fire-and-forget"), status.FireAndForgetTimeouts);
    }

    private static void IncTo(Prometheus.Counter.Child counter, long? value)
    {
        if (value is { } total)
        {
            counter.IncTo(total);
        }
    }
}
