using System.Net.Sockets;
using MuxWatch.Model;
using MuxWatch.State;

namespace MuxWatch.Sources;

/// <summary>
/// MuxWatch's own plain connection to one endpoint, the second witness beside the app's: a PING at a time,
/// timed on <see cref="WitnessThread"/>'s dedicated thread, so that its answer is read when it arrives
/// whatever the app's thread pool is doing. What it sees goes on the endpoint's timeline: prompt answers
/// (<see cref="ServerTimeline.NoteAnswered"/>), a silence (<see cref="ServerEventKind.Silence"/>: a PING
/// unanswered for longer than the usual round trip) and the server gone (<see cref="ServerEventKind.Unreachable"/>).
/// </summary>
/// <remarks>
/// <para>
/// Written by hand on a socket, not with the client: the client reads replies on the thread pool (3.x) and
/// completes them through it, so a witness made with it would fall silent exactly when the app's pool is
/// starved, and take the app's starvation for the server's. Nothing but <c>PING</c> is ever sent.
/// </para>
/// <para>
/// It never authenticates: a server that wants a password answers <c>-NOAUTH</c>, and any answer proves the
/// server's event loop ran. So no secret travels on it, which is also why, over TLS, it does not check the
/// server's certificate (it only measures whether something answers at that address; the app's and the
/// poller's connections check it). A connection it never managed to make (a server that wants a client
/// certificate) is no witness at all, never a server that went away.
/// </para>
/// <para>
/// Not thread-safe: only the witness thread calls <see cref="Step"/>, <see cref="Read"/> and <see cref="Dispose"/>.
/// Its connects are the thread's too (<see cref="WitnessConnector"/>).
/// </para>
/// </remarks>
internal sealed class EndpointWitness : IDisposable
{
    /// <summary>How long one unanswered PING is waited for before the connection is re-made (the silence goes on until an answer).</summary>
    internal static readonly TimeSpan GiveUpAfter = TimeSpan.FromSeconds(30);

    /// <summary>A silence starts this long past the endpoint's usual round trip.</summary>
    internal const double SilenceMarginMs = 100;

    private static readonly TimeSpan ReconnectEvery = TimeSpan.FromSeconds(1);
    private static readonly byte[] Ping = "PING\r\n"u8.ToArray();

    private readonly ServerTimeline _timeline;
    private readonly WitnessConnector _connector;

    /// <summary>Whether its connection is TLS, the only kind whose read can wait on the server (<see cref="HeldTheThread"/>).</summary>
    private readonly bool _overTls;
    private readonly TimeProvider _time;
    private readonly byte[] _buffer = new byte[512];
    private WitnessConnection? _connection;
    private int _buffered;
    private bool _awaiting;
    private long _sentTimestamp;
    private DateTimeOffset _sentAt;
    private double _gcAtSend;

    /// <summary>
    /// When the witness thread last looked at the socket and found nothing to read, with the PING in flight (a stopwatch
    /// timestamp, and the pauses to take out as of then): the answer arrived after it. Only so long is a silence proven:
    /// a thread made to wait for a CPU reads an answer late, and the time it waited is not the server's.
    /// </summary>
    private long _emptyAtTimestamp;
    private double _pausedAtEmpty;
    private DateTimeOffset _nextSend;
    private DateTimeOffset _nextConnect;
    private bool _silent;
    private bool _everConnected;
    private DateTimeOffset? _lostAt;
    private string? _lostHow;
    private bool _unreachable;
    private double _typicalRoundTripMs = 1;

    /// <summary>Asked for a probe cycle when a silence begins: the silent server's PING then, not at the loop's next tick, is what times out.</summary>
    private readonly ProbeCycleRequests? _probeCycles;

    /// <summary>Creates the witness of <paramref name="timeline"/>'s endpoint at <paramref name="target"/>'s address; TLS when it names a host.</summary>
    public EndpointWitness(ServerTimeline timeline, WitnessTarget target, TimeProvider time, ProbeCycleRequests? probeCycles = null)
    {
        _probeCycles = probeCycles;
        _timeline = timeline;
        _overTls = target.TlsHost is not null;
        _connector = new WitnessConnector(target, time);
        _time = time;
    }

    /// <summary>The socket to watch for an answer, while a PING waits for one.</summary>
    public Socket? AwaitingAnswer => _awaiting ? _connection?.Socket : null;

    /// <summary>
    /// The earliest a <see cref="Step"/> can do anything: at once while connecting or while a PING waits for its answer (a
    /// silence to mark), else when the next PING is due.
    /// </summary>
    public DateTimeOffset NextStepAt => _connection is null || _awaiting ? DateTimeOffset.MinValue : _nextSend;

    /// <summary>How long past the sending a PING counts as unanswered: the usual round trip, four times over, plus <see cref="SilenceMarginMs"/>.</summary>
    public double SilentAfterMs => SilenceMarginMs + 4 * _typicalRoundTripMs;

    /// <summary>
    /// One tick: picks up a finished connect, sends a PING when one is due (every <paramref name="interval"/>),
    /// and marks a silence once the PING in flight has waited too long. <paramref name="gcPauseMs"/> is the
    /// process's cumulative GC pause: the time this thread itself was paused is not the server's.
    /// </summary>
    public void Step(DateTimeOffset now, double gcPauseMs, TimeSpan interval)
    {
        if (_connection is null)
        {
            PickUpConnect(now);
            return;
        }

        if (_awaiting)
        {
            var waited = WaitedMs(gcPauseMs);
            if (!_silent && UnansweredForMs > SilentAfterMs)
            {
                _silent = true;
                _timeline.Log.Begin(ServerEventKind.Silence, _sentAt);
                _probeCycles?.Request();
            }

            if (waited > GiveUpAfter.TotalMilliseconds)
            {
                Lose(now, "no answer for 30 s"); // re-made; the silence goes on until something answers
            }

            return;
        }

        if (now < _nextSend)
        {
            return;
        }

        try
        {
            _connection.Stream.Write(Ping);
        }
        catch (Exception ex) when (ex is IOException or SocketException or ObjectDisposedException)
        {
            Lose(now, Describe(ex));
            return;
        }

        _sentTimestamp = _time.GetTimestamp();
        _sentAt = now;
        _gcAtSend = gcPauseMs;
        (_emptyAtTimestamp, _pausedAtEmpty) = (_sentTimestamp, gcPauseMs);
        _awaiting = true;
        _nextSend = now + interval;
    }

    /// <summary>Reads what arrived on the socket (it was readable); an answer line ends the PING in flight.</summary>
    public void Read(DateTimeOffset now, double gcPauseMs)
    {
        if (_connection is not { } connection)
        {
            return;
        }

        int read;
        try
        {
            read = connection.Stream.Read(_buffer, _buffered, _buffer.Length - _buffered);
        }
        catch (Exception ex) when (ex is IOException or SocketException or ObjectDisposedException)
        {
            Lose(now, Describe(ex));
            return;
        }

        if (read == 0)
        {
            Lose(now, "closed by the server");
            return;
        }

        _buffered += read;
        if (Array.IndexOf(_buffer, (byte)'\n', 0, _buffered) < 0)
        {
            if (_buffered == _buffer.Length)
            {
                Lose(now, "an answer that is not Redis's"); // 512 bytes without a line end: not a PING's answer
            }

            return;
        }

        var answer = _buffer.AsSpan(0, _buffered);
        _buffered = 0;
        if (!answer.StartsWith("+PONG\r\n"u8) && answer[0] != (byte)'-')
        {
            // Only PING's own answer or an error (-NOAUTH, -LOADING: the event loop ran) is the server answering; a
            // line of anything else is not Redis's, and a forged answer must not decide a diagnosis.
            Lose(now, "an answer that is not Redis's");
            return;
        }

        if (!_awaiting)
        {
            return;
        }

        _awaiting = false;
        var roundTrip = WaitedMs(gcPauseMs);
        if (_silent)
        {
            _silent = false;
            _timeline.Log.End(ServerEventKind.Silence, now, null, now);
        }
        else if (UnansweredForMs > SilentAfterMs)
        {
            _timeline.Log.Add(new ServerEvent(ServerEventKind.Silence, _sentAt, now) { DurationMs = roundTrip }, now);
        }
        else if (roundTrip > SilentAfterMs)
        {
            // Read late, and nothing proves it arrived late: the thread looked last at the socket soon enough after the PING
            // and then waited (for a CPU, seen in full runs as a 498 ms "silence" where the server answered at once). Neither
            // a silence nor a prompt answer: the server may have answered at any time in between.
        }
        else
        {
            _timeline.NoteAnswered(_sentAt, now);
            _typicalRoundTripMs = Math.Min(1000, (0.9 * _typicalRoundTripMs) + (0.1 * roundTrip));
        }
    }

    /// <summary>
    /// This endpoint's step or read took <paramref name="heldMs"/> of the witness's thread. A TLS connection's can have
    /// held it (a record trickled in a byte at a time: the read waits for the whole record): dropped, and not re-made for
    /// <see cref="HeldBackoff"/>, so that one endpoint cannot blind the witness of the others; returns true. A plain
    /// connection's cannot: its read follows <c>Select</c> saying bytes are there and returns what is, and its write is
    /// one PING of 6 bytes with nothing else unanswered, so the time was the thread's own (made to wait for a CPU on a
    /// loaded machine: seen in full test runs as a healthy endpoint blinded for 30 s): kept; returns false. Decided by the
    /// endpoint, not by the connection: a trickled record ends in a failed read, and the connection is gone by now. Either way
    /// the time is never a server's silence (<see cref="WitnessThread"/> takes it out).
    /// </summary>
    public bool HeldTheThread(DateTimeOffset now, double heldMs)
    {
        if (!_overTls)
        {
            return false;
        }

        Lose(now, string.Create(System.Globalization.CultureInfo.InvariantCulture, $"held the witness's thread {heldMs:F0} ms"));
        _nextConnect = now + HeldBackoff;
        _timeline.NoteWitnessHeldOff(_nextConnect);
        return true;
    }

    /// <summary>How long an endpoint whose connection held the witness's thread goes without a witness.</summary>
    internal static readonly TimeSpan HeldBackoff = TimeSpan.FromSeconds(30);

    /// <summary>Closes the connection (the endpoint is no longer watched, or MuxWatch stops).</summary>
    public void Dispose()
    {
        _connection?.Dispose();
        _connection = null;
        _connector.Dispose();
    }

    /// <summary>
    /// The thread looked at the socket at <paramref name="timestamp"/> (before it waited on it) and found nothing to read:
    /// the PING in flight went unanswered at least until then. <paramref name="gcPauseMs"/> as for <see cref="Step"/>.
    /// </summary>
    public void NothingToRead(long timestamp, double gcPauseMs)
    {
        if (_awaiting && timestamp > _emptyAtTimestamp)
        {
            (_emptyAtTimestamp, _pausedAtEmpty) = (timestamp, gcPauseMs);
        }
    }

    /// <summary>How long the PING in flight is proven unanswered: until the thread last found nothing to read, pauses taken out.</summary>
    private double UnansweredForMs =>
        Math.Max(0, _time.GetElapsedTime(_sentTimestamp, _emptyAtTimestamp).TotalMilliseconds - Math.Max(0, _pausedAtEmpty - _gcAtSend));

    /// <summary>Milliseconds since the PING was sent, the GC pauses since then taken out (this thread was paused too).</summary>
    private double WaitedMs(double gcPauseMs) =>
        Math.Max(0, _time.GetElapsedTime(_sentTimestamp).TotalMilliseconds - Math.Max(0, gcPauseMs - _gcAtSend));

    private void PickUpConnect(DateTimeOffset now)
    {
        if (!_connector.UnderWay && now < _nextConnect)
        {
            return;
        }

        switch (_connector.Advance())
        {
            case null:
                return; // under way
            case { Connection: { } made }:
                Connected(now, made);
                break;
            case { Unsupported: true }:
                _nextConnect = DateTimeOffset.MaxValue; // an address family the client may know and this witness does not: no witness
                break;
            case var failed:
                Failed(now, failed.Failure);
                break;
        }
    }

    private void Connected(DateTimeOffset now, WitnessConnection connection)
    {
        _timeline.NoteWitnessRefused(null);
        _timeline.NoteWitnessHeldOff(null);
        _connection = connection;
        _everConnected = true;
        _nextSend = now;
        if (_unreachable)
        {
            _unreachable = false;
            _timeline.Log.End(ServerEventKind.Unreachable, now, _lostHow, now);
        }

        _lostAt = null;
    }

    private void Failed(DateTimeOffset now, Exception? failure)
    {
        _nextConnect = now + ReconnectEvery;
        if (failure is System.Security.Authentication.AuthenticationException refused)
        {
            // The server's certificate failed the check the poller applies: no witness, said on /api/events.
            _timeline.NoteWitnessRefused("TLS: the server's certificate was refused: " + refused.Message);
        }

        // Only a server that answered before and now refuses or resets counts as gone: a connection never
        // made (a client certificate wanted, a name not resolved yet) or refused by TLS is no witness at all.
        if (_everConnected && !_unreachable && failure is SocketException)
        {
            _unreachable = true;
            _lostHow = _lostHow is null ? Describe(failure) : $"{_lostHow}, then {Describe(failure)}";
            _timeline.Log.Begin(ServerEventKind.Unreachable, _lostAt ?? now);
        }
    }

    private void Lose(DateTimeOffset now, string how)
    {
        _connection?.Dispose();
        _connection = null;
        _awaiting = false;
        _buffered = 0;
        _lostAt ??= now;
        _lostHow = how;
        _nextConnect = now; // re-made at once: a connection the server merely closed is back within a tick
    }

    private static string Describe(Exception? failure) => failure switch
    {
        SocketException { SocketErrorCode: SocketError.ConnectionRefused } => "refused",
        SocketException { SocketErrorCode: SocketError.ConnectionReset } => "reset",
        SocketException { SocketErrorCode: SocketError.TimedOut } or OperationCanceledException => "timed out",
        IOException { InnerException: SocketException inner } => Describe(inner),
        SocketException socket => socket.SocketErrorCode.ToString(),
        _ => failure?.GetType().Name ?? "failed",
    };
}
