namespace MuxWatch.StackExchangeRedis;

/// <summary>
/// Why a watched multiplexer stays down when the client does not say. The client raises
/// <c>ConnectionFailed</c> for the first failure after a connection was up and for none of the failed
/// reconnects after it, until one succeeds (measured on 3.4.35: a password rotated on the server left the
/// target "disconnected" with no reason anywhere); and in a warm process a first connect's refusal is often
/// recorded after the connect returned, in neither its log nor an event MuxWatch can hear (a CI run on
/// 2.6.90 left a refused target unnamed; see <see cref="OwnedConnection.DiagnoseAsync"/>). So while such a
/// connection is down, a fresh connection is tried in the background
/// (<see cref="OwnedConnection.DiagnoseAsync"/>): after a grace period (the client's own reconnect usually
/// wins a blip) and then once a minute, and never more than a few at once across all multiplexers. For an
/// app's own multiplexer the fresh connection is made from its configuration string, never through it.
/// A refusal the client did not report in this outage is handed to <c>named</c>: only
/// <c>AuthenticationFailure</c> (a password or user the server refuses, or a certificate MuxWatch's own
/// check refused), the one reason a server that is up gives; a server that is down already shows in the
/// client's own events (SocketFailure, SocketClosed) and in <c>muxwatch_connected</c>.
/// </summary>
/// <param name="diagnose">Connects afresh once and returns the client's failure type, or null when it connected or found none.</param>
/// <param name="named">Told a refusal found that the client had not reported since the connection went down.</param>
internal sealed class ConnectFailureDiagnosis(Func<Task<string?>> diagnose, Action<string> named)
{
    /// <summary>How long a connection is down before it is diagnosed: the client's reconnect after a blip comes first.</summary>
    internal static readonly TimeSpan Grace = TimeSpan.FromSeconds(2);

    /// <summary>How often an outage is diagnosed again: the reason may change (a password fixed, then the server down).</summary>
    internal static readonly TimeSpan Repeat = TimeSpan.FromMinutes(1);

    /// <summary>Diagnoses in flight across all targets, at most <see cref="MaxConcurrent"/>: each is a connection of its own.</summary>
    private static int s_running;
    private const int MaxConcurrent = 4;

    private const string Refusal = nameof(StackExchange.Redis.ConnectionFailureType.AuthenticationFailure);

    private readonly Lock _gate = new();
    private readonly HashSet<string> _known = new(StringComparer.Ordinal);
    private DateTimeOffset? _downSince;
    private DateTimeOffset? _lastStarted;
    private Task? _running;

    /// <summary>A failure type the client reported (or its first connect's log named): not named again in this outage.</summary>
    public void Reported(string failureType)
    {
        lock (_gate)
        {
            _known.Add(failureType);
        }
    }

    /// <summary>The diagnosis started last (tests wait on it).</summary>
    internal Task? Running
    {
        get
        {
            lock (_gate)
            {
                return _running;
            }
        }
    }

    /// <summary>One probe cycle's view of the connection: starts a diagnosis when one is due, never waits for it; true when it started one.</summary>
    public bool Observe(bool connected, DateTimeOffset now)
    {
        lock (_gate)
        {
            if (connected)
            {
                _downSince = null;
                _lastStarted = null;
                _known.Clear();
                return false;
            }

            _downSince ??= now;
            if (_running is { IsCompleted: false }
                || now - _downSince < Grace
                || (_lastStarted is { } last && now - last < Repeat))
            {
                return false;
            }

            if (Interlocked.Increment(ref s_running) > MaxConcurrent)
            {
                Interlocked.Decrement(ref s_running);
                return false; // tried again next cycle
            }

            _lastStarted = now;
            _running = Task.Run(RunAsync); // off the loop: a connect may resolve a host name synchronously
            return true;
        }
    }

    private async Task RunAsync()
    {
        try
        {
            var failureType = await diagnose().ConfigureAwait(false);
            bool isNew;
            lock (_gate)
            {
                // Up again meanwhile: what the fresh connection met is no reason for anything now.
                isNew = failureType == Refusal && _downSince is not null && _known.Add(failureType);
            }

            if (isNew)
            {
                named(failureType!);
            }
        }
#pragma warning disable CA1031 // a diagnosis that fails in any way is only a reason not found; the outage is shown as before
        catch (Exception)
#pragma warning restore CA1031
        {
        }
        finally
        {
            Interlocked.Decrement(ref s_running);
        }
    }
}
