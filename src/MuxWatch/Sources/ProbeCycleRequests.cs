using System.ComponentModel;

namespace MuxWatch.Sources;

/// <summary>
/// Asks the <see cref="ProbeLoop"/> for its next cycle now rather than at the end of its interval: the witness does
/// when it finds a server silent. A silent server is PINGed through the watched multiplexers every cycle, and that
/// PING is what times out, so it is what records a short stall at all: in a sidecar, whose PINGs are its only
/// timeouts, a stall waited up to a whole interval for it, then for the client's own timer (its heartbeat: measured,
/// a 500 ms timeout seen 0.5 to 1.2 s after the PING), and a stall that ended first was never recorded. Measured here
/// on a 3 s <c>DEBUG SLEEP</c>, the PING went out 0.3 to 1.4 s into the stall, half a second short of missing it; a CI
/// run's page test waited 45 s in vain for such a stall's timeouts.
/// </summary>
/// <remarks>
/// <para>
/// Registered by a probe package that PINGs through connections of MuxWatch's own (MuxWatch.StackExchangeRedis, for a
/// multiplexer it makes: a sidecar's targets), never by the core: an app's own calls are its timeouts, and an early
/// cycle's PING through an app's connection, sent into the silence, hurt the app (measured: docs/diagnosis.md, "Two
/// witnesses"). Without it the loop keeps its interval.
/// </para>
/// <para>
/// The loop honours at most one request between two of its regular cycles, and none sooner than
/// <see cref="ProbeLoop.EarliestEarlyCycle"/> after a cycle began: however many endpoints fall silent, it never
/// samples more than twice an interval.
/// </para>
/// </remarks>
[EditorBrowsable(EditorBrowsableState.Never)] // the probe-package contract (docs/public-api.md): for MuxWatch's own packages, not apps
public sealed class ProbeCycleRequests : IDisposable
{
    private readonly AutoResetEvent _requested = new(initialState: false);

    /// <summary>Signalled by <see cref="Request"/>; reset by the loop's wait that sees it.</summary>
    internal WaitHandle Requested => _requested;

    /// <summary>Asks for a cycle now. Costs no allocation; any thread.</summary>
    public void Request() => _requested.Set();

    /// <summary>Drops a request not heard yet.</summary>
    internal void Clear() => _requested.Reset();

    /// <inheritdoc />
    public void Dispose() => _requested.Dispose();
}
