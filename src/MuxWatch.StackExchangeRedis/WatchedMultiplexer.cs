using System.Collections.Concurrent;
using Microsoft.Extensions.Logging;
using MuxWatch.Export;
using MuxWatch.Model;
using MuxWatch.Pipeline;
using MuxWatch.State;
using StackExchange.Redis;

namespace MuxWatch.StackExchangeRedis;

/// <summary>
/// One watched multiplexer: its lifetime (resolved off the loop, retired when the app disposes it, asked
/// for again), and each cycle's sample of its servers. Which servers (<see cref="ServerSelection"/>), the PING
/// (<see cref="EndpointPinger"/>), the event counting (<see cref="ConnectionEventCounter"/>), naming a failed
/// connection (<see cref="ConnectFailureReporter"/>), the status text (<see cref="ClientStatusSampler"/>) and each
/// server's series and queue history (<see cref="WatchedEndpoint"/>) are their own classes; what <c>/api/targets</c>
/// says is in WatchedMultiplexer.Status.cs. Its collaborators are given, not looked up. The app's multiplexer is only observed: never
/// reconfigured, its profiler slot never taken; MuxWatch's event handlers are detached when it stops.
/// </summary>
internal sealed partial class WatchedMultiplexer : IAsyncDisposable
{
    /// <summary>How long after a failed resolution the next is tried.</summary>
    internal static readonly TimeSpan ResolveRetry = TimeSpan.FromSeconds(10);

    /// <summary>How long after the app disposed its multiplexer its factory is asked again (a reconnect pattern recreates it at once).</summary>
    internal static readonly TimeSpan RecycledRetry = TimeSpan.FromSeconds(1);

    private const int MaxEventEndpoints = 64;


    private static readonly string[] ProbeOnly = [TimeoutSources.Probe];
    private static readonly string[] AppAndProbe = [TimeoutSources.FirstChance, TimeoutSources.Probe];

    private readonly MultiplexerRegistration _registration;
    private readonly IServiceProvider _services;
    private readonly MultiplexerMetrics _metrics;
    private readonly ServerSelection _selection;
    private readonly ConcurrentDictionary<string, WatchedEndpoint> _endpoints = new(StringComparer.Ordinal);
    private readonly EndpointDepartures _departures;
    private readonly BoundedLabelValues _eventEndpoints = new(MaxEventEndpoints);
    private readonly ConnectionEventCounter _events;
    private readonly ProbeOutcome _outcome;
    private readonly EndpointPinger _pinger;
    private readonly PubSubLagProbe? _pubSub;
    private readonly ConnectFailureReporter _failures;
    private readonly ILogger _logger;
    private readonly Lock _gate = new();
    private readonly ServerTimelines? _timelines;
    private readonly TimeProvider _time;

    private readonly ClientStatusSampler _status;

    private IConnectionMultiplexer? _multiplexer;
    private Task? _resolving;
    private DateTimeOffset _nextResolve = DateTimeOffset.MinValue;
    private volatile string _state = "connecting";
    private bool _disposed;

    /// <param name="registration">What to watch, and how to get it.</param>
    /// <param name="services">The app's services: only for the registration's factory, which takes them.</param>
    /// <param name="metrics">Where its series go.</param>
    /// <param name="timelines">The server timelines (cluster membership, each endpoint's polling status); null when nothing polls.</param>
    /// <param name="time">The one clock.</param>
    /// <param name="logger">Where its failures are said.</param>
    /// <param name="maxEndpoints">How many of its servers are probed and polled at most.</param>
    public WatchedMultiplexer(
        MultiplexerRegistration registration, IServiceProvider services, MultiplexerMetrics metrics, ServerTimelines? timelines, TimeProvider time, ILogger logger, int maxEndpoints)
    {
        _registration = registration;
        _services = services;
        _metrics = metrics;
        _time = time;
        _timelines = timelines;
        _logger = logger;
        _status = new ClientStatusSampler(registration.Name, metrics, countTimeouts: !registration.Owned);
        _selection = new ServerSelection(registration.Name, registration.Owned, maxEndpoints, metrics, timelines, time, logger);
        _departures = new EndpointDepartures(registration.Name, metrics, time, logger);
        _outcome = new ProbeOutcome(time);
        _events = new ConnectionEventCounter(metrics, registration.Name, _eventEndpoints, (failureType, exception) => _failures!.Refused(failureType, exception));
        _pinger = new EndpointPinger(registration.Name, metrics, _outcome, time);
        _pubSub = registration.MeasurePubSubLag ? new PubSubLagProbe(registration.Name, metrics, time) : null;
        _failures = new ConnectFailureReporter(registration, _outcome, _events, logger, () => _disposed ? null : Multiplexer);
    }

    public string Name => _registration.Name;

    /// <summary>True when MuxWatch made this multiplexer (an admin connection of its own, so the poller may use it).</summary>
    public bool Owned => _registration.Owned;

    /// <summary>
    /// How MuxWatch's witness checks these servers' certificates: as this multiplexer's connection checks them when
    /// MuxWatch made it (the target's configured CA); null, .NET's own check, for an app's multiplexer, whose own
    /// callback cannot be read (the polling connection cloned from it checks the same way).
    /// </summary>
    public System.Net.Security.RemoteCertificateValidationCallback? WitnessCertificateCheck =>
        _registration.Tls is { } tls ? tls.ForAnotherConnection().Validate : null;

    /// <summary>For a connection MuxWatch makes: its TLS name as the user configured it (<see cref="MultiplexerRegistration.TlsHost"/>); null otherwise.</summary>
    public string? ConfiguredTlsHost => _registration.TlsHost;

    /// <summary>True when discovery found it (a library's or the app's, connected in the process), not named with <c>AddMultiplexer</c>.</summary>
    public bool Discovered => _registration.Discovered is not null;

    /// <summary>What made it, when discovery found it.</summary>
    public MultiplexerOrigin? Origin => _registration.Discovered?.Origin;

    /// <summary>
    /// A discovered multiplexer that is gone (disposed, or collected before it was watched): its series are
    /// removed and it leaves the list. One named with <c>AddMultiplexer</c> stays, its factory asked again.
    /// </summary>
    public bool Gone => Discovered && _state is "disposed" or "failed";

    /// <summary>True when this is the discovered <paramref name="discovered"/>'s entry (watched or about to be).</summary>
    public bool Holds(DiscoveredMultiplexer discovered) =>
        _registration.Discovered is { } mine && mine.Reference.TryGetTarget(out var held)
            && discovered.Reference.TryGetTarget(out var other) && ReferenceEquals(held, other);

    /// <summary>
    /// Stops watching a discovered multiplexer for good (gone, or named by the app too): its handlers detached,
    /// its series removed. The multiplexer itself is the app's, never disposed here.
    /// </summary>
    public void LetGo()
    {
        var multiplexer = Interlocked.Exchange(ref _multiplexer, null);
        _disposed = true;
        _events.Stop();
        if (multiplexer is not null)
        {
            _events.Detach(multiplexer);
        }

        _pubSub?.Stop();
        _endpoints.Clear();
        _metrics.RemoveMultiplexer(Name);
    }

    /// <summary>True once its first resolution has ended, either way (so a discovered twin can be recognised).</summary>
    public bool Settled => Multiplexer is not null || _state is "failed" or "disposed";

    /// <summary>The multiplexer once resolved, until disposed.</summary>
    public IConnectionMultiplexer? Multiplexer => Volatile.Read(ref _multiplexer);

    /// <summary>The servers MuxWatch probes and polls (<see cref="ServerSelection"/>); those no longer among them lose their series (<see cref="EndpointDepartures"/>).</summary>
    internal IServer[] Servers(IConnectionMultiplexer multiplexer)
    {
        var servers = _selection.Select(multiplexer, out var left, out var unheld);
        LeftCluster = left;
        UnheldMembers = unheld;
        _departures.Follow(servers, left, unheld, _endpoints);
        return servers;
    }

    /// <summary>The nodes that the last <see cref="Servers"/> found gone from their cluster: let go of at once (<see cref="MissingEndpoints"/>).</summary>
    internal IReadOnlyCollection<string> LeftCluster { get; private set; } = [];

    /// <summary>The cluster's members that the last <see cref="Servers"/> found the client not holding: held the longer grace (<see cref="MissingEndpoints"/>).</summary>
    internal IReadOnlyCollection<string> UnheldMembers { get; private set; } = [];

    /// <summary>
    /// A cycle's first half: resolves in the background if needed, lets go of a multiplexer disposed under it, and
    /// otherwise returns the servers to sample this cycle (null when there are none to sample).
    /// </summary>
    internal IServer[]? BeginCycle(DateTimeOffset now)
    {
        if (_disposed)
        {
            return null;
        }

        var multiplexer = Multiplexer;
        if (multiplexer is null)
        {
            StartResolving(now);
            return null;
        }

        if (_pinger.SawDisposed || MultiplexerInspection.IsDisposed(multiplexer))
        {
            Retire(now);
            return null;
        }

        return Servers(multiplexer);
    }

    /// <summary>
    /// A cycle's second half (<see cref="BeginCycle"/> the first, which resolves if needed, in the background, and
    /// returns <paramref name="servers"/>): samples counters and status, and starts the
    /// PINGs that are due (every <paramref name="pingInterval"/>; none when null); a PING's timeout goes to
    /// <paramref name="pipeline"/>. The client's status text is read at <paramref name="statusInterval"/> while
    /// commands are outstanding (<see cref="ClientStatusSampler"/>): the PINGs' own cadence, not the quiet one.
    /// <paramref name="quietPace"/>: the PINGs come at the quiet process's slower pace (<see cref="Configuration.MuxWatchOptions.PingQuietMultiple"/>),
    /// so a cycle without one counts a connected endpoint with nothing outstanding as answered (below).
    /// </summary>
    internal void Sample(IServer[] servers, DateTimeOffset now, TimeSpan? pingInterval, TimeSpan? statusInterval, bool quietPace, TimeSpan probeTimeout, TimeoutPipeline pipeline, CancellationToken stopping)
    {
        if (_disposed || Multiplexer is not { } multiplexer)
        {
            return;
        }

        var anyConnected = false;
        var quiet = true;
        foreach (var server in servers)
        {
            anyConnected |= SampleServer(server, now, pingInterval, quietPace, probeTimeout, pipeline, stopping, ref quiet);
        }

        // Beside the endpoints' muxwatch_connected just set: /api/targets says what a scrape says (a full run read the gauge at
        // 0 and the state still "connected" while the status text and pub/sub were sampled in between).
        _state = anyConnected ? "connected" : multiplexer.IsConnecting ? "connecting" : "disconnected";
        _status.SampleIfDue(multiplexer, now, statusInterval, quiet);
        _failures.Sampled(anyConnected, now);
        _pubSub?.Sample(multiplexer, probeTimeout);
    }

    /// <summary>True while a PING of the probe's is in flight to any of its endpoints (tests wait for it to end rather than sleep).</summary>
    internal bool AnyPingInFlight => _endpoints.Values.Any(static endpoint => endpoint.PingInFlight);

    /// <summary>True when this multiplexer has a server at <paramref name="endpoint"/>.</summary>
    public bool HasEndpoint(string endpoint) =>
        Multiplexer is { } multiplexer && multiplexer.GetServers().Any(server => EndpointText.Of(server.EndPoint) == endpoint);

    public async ValueTask DisposeAsync()
    {
        var multiplexer = Interlocked.Exchange(ref _multiplexer, null);
        _disposed = true;
        _events.Stop();
        if (multiplexer is null)
        {
            return;
        }

        _events.Detach(multiplexer);
        _pubSub?.Stop();
        if (_registration.Owned)
        {
            await multiplexer.DisposeAsync().ConfigureAwait(false);
        }
    }

    /// <summary>
    /// A newly seen endpoint: its series, and its counters with known labels exported at 0. A multiplexer
    /// MuxWatch made (a sidecar target) times out only in the probe; an app's also in the app's own calls.
    /// </summary>
    private WatchedEndpoint NewEndpoint(string endpoint)
    {
        _metrics.InitializeEndpoint(Name, endpoint, _eventEndpoints.Admit(endpoint), TimeoutSourceNames);
        return new WatchedEndpoint(_metrics, Name, endpoint, _registration.Owned);
    }

    /// <summary>Samples one server; <paramref name="quiet"/> turns false when it is down or has commands outstanding.</summary>
    private bool SampleServer(IServer server, DateTimeOffset now, TimeSpan? pingInterval, bool quietPace, TimeSpan probeTimeout, TimeoutPipeline pipeline, CancellationToken stopping, ref bool quiet)
    {
        var endpoint = _endpoints.GetOrAdd(EndpointText.Of(server.EndPoint), static (key, self) => self.NewEndpoint(key), this);
        var connected = server.IsConnected;
        var counters = server.GetCounters();
        var nothingOutstanding = counters.Interactive.SentItemsAwaitingResponse == 0 && counters.Interactive.PendingUnsentItems == 0;
        quiet &= connected && nothingOutstanding;
        endpoint.Queues.Remember(now, counters.Interactive.SentItemsAwaitingResponse, counters.Interactive.PendingUnsentItems, connected);
        if (connected)
        {
            endpoint.LastSeenConnected = now;
        }
        var series = endpoint.Series;
        series.Connected.Set(connected ? 1 : 0);
        series.SentAwaitingResponse.Set(counters.Interactive.SentItemsAwaitingResponse);
        series.PendingUnsent.Set(counters.Interactive.PendingUnsentItems);
        series.Operations?.IncTo(counters.Interactive.OperationCount);

        // SocketCount counts sockets created, so every one after the first is a reconnect (measured).
        series.Reconnects.IncTo(Math.Max(0, counters.Interactive.SocketCount - 1));
        series.Subscriptions?.Set(counters.Subscription.Subscriptions);

        // The client connects to a node it learnt of on a re-read of the cluster only once a command goes
        // there: in MuxWatch's own multiplexer, the probe's PING is that command. The app's is left alone.
        var neverConnected = !connected && _registration.Owned && counters.Interactive.SocketCount == 0;
        if (!connected && !neverConnected)
        {
            return false;
        }

        // While the witness finds the server silent, a PING every cycle (one in flight at most): at a calm interval of
        // seconds a short stall would otherwise pass between two PINGs, and the sidecar's PINGs are its own timeouts.
        // Only a multiplexer MuxWatch made has that cycle come at once (ProbeCycleRequests says why).
        if (pingInterval is { } interval && (WitnessSilent(endpoint.Endpoint) || endpoint.PingDue(now, interval)))
        {
            _pinger.Start(server, endpoint, probeTimeout, pipeline, stopping);
        }
        else if (connected && (pingInterval is null || (quietPace && nothingOutstanding)))
        {
            // Connected alone when PING is off. At the quiet pace, connected with nothing awaiting a reply: the
            // last-success gauge keeps moving between the minute's PINGs (MuxWatchProbeStalled reads it at 30 s),
            // while a server that stops answering still stops it, once the next PING (or, with the witness finding
            // the server silent, the PING of every cycle) waits for its reply.
            _outcome.Succeeded(endpoint, now);
        }

        return connected;
    }

    private bool WitnessSilent(string endpoint) => _timelines?.Find(endpoint) is { } timeline && timeline.IsRunning(ServerEventKind.Silence);

    private void StartResolving(DateTimeOffset now)
    {
        lock (_gate)
        {
            if (_resolving is { IsCompleted: false } || now < _nextResolve)
            {
                return;
            }

            _nextResolve = now + ResolveRetry;

            // Off the loop: an app's factory may connect synchronously, and a Redis that is down must not hold the loop.
            _resolving = Task.Run(ResolveAsync);
        }
    }

    private async Task ResolveAsync()
    {
        try
        {
            var multiplexer = await _registration.Resolve(_services).ConfigureAwait(false);
            if (!_registration.Owned && MultiplexerInspection.IsDisposed(multiplexer))
            {
                // The factory still hands out the instance the app disposed: asked again later, never watched.
                _state = "disposed";
                return;
            }

            Attach(multiplexer);
            if (_disposed)
            {
                _events.Detach(multiplexer);
                if (_registration.Owned)
                {
                    await multiplexer.DisposeAsync().ConfigureAwait(false);
                }

                return;
            }

            Volatile.Write(ref _multiplexer, multiplexer);
            _state = multiplexer.IsConnected ? "connected" : "disconnected";
        }
#pragma warning disable CA1031 // the app's factory may throw anything; the target is reported failed and tried again later
        catch (ObjectDisposedException) when (Discovered)
#pragma warning restore CA1031
        {
            _state = "disposed"; // disposed (or collected) between its connect and the probe's next cycle
        }
#pragma warning disable CA1031
        catch (Exception ex)
#pragma warning restore CA1031
        {
            _outcome.Failed($"could not get the multiplexer: {ex.GetType().Name}: {ex.Message}");
            _state = "failed";
            _metrics.CountProbeFailure("multiplexer", "resolve-failed");
        }
    }

    private void Attach(IConnectionMultiplexer multiplexer)
    {
        _events.Attach(multiplexer);
        _failures.FirstConnectionChecked(multiplexer);
    }

    /// <summary>
    /// The app disposed its multiplexer: its series go, and its factory is asked again, since an app that
    /// recreates its multiplexer (the reconnect pattern recommended for Azure Cache for Redis: a factory
    /// returning the current instance) hands out a new one. One MuxWatch made is never disposed by others.
    /// </summary>
    private void Retire(DateTimeOffset now)
    {
        var multiplexer = Interlocked.Exchange(ref _multiplexer, null);
        if (multiplexer is not null)
        {
            _events.Detach(multiplexer);
        }

        _state = "disposed";
        _pinger.Reset();
        _pubSub?.Stop();
        _endpoints.Clear(); // their cached series were removed below; a new instance starts afresh
        _metrics.RemoveMultiplexer(Name);
        lock (_gate)
        {
            // A discovered one is never asked again: it leaves the list (Gone), and its successor is discovered.
            _nextResolve = Discovered ? DateTimeOffset.MaxValue : now + RecycledRetry;
        }
    }
}
