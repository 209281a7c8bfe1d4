using System.Collections.Concurrent;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Logging;
using MuxWatch.Export;
using MuxWatch.Model;
using MuxWatch.Pipeline;
using MuxWatch.Reading;
using MuxWatch.State;
using StackExchange.Redis;

namespace MuxWatch.StackExchangeRedis;

/// <summary>
/// One watched multiplexer: its lifetime (resolved off the loop, retired when the app disposes it, asked
/// for again), and each cycle's sample of its servers. The PING (<see cref="EndpointPinger"/>), the event
/// counting (<see cref="ConnectionEventCounter"/>) and each server's series and queue history
/// (<see cref="WatchedEndpoint"/>) are their own classes. The app's multiplexer is only observed: never
/// reconfigured, its profiler slot never taken; MuxWatch's event handlers are detached when it stops.
/// </summary>
internal sealed partial class WatchedMultiplexer : IAsyncDisposable
{
    /// <summary>
    /// The client's package version as users know it (3.4.35), from its informational version without build
    /// metadata; the assembly version (3.0.0.0) is only its binding identity.
    /// </summary>
    private static readonly string? ClientVersion =
        System.Reflection.CustomAttributeExtensions.GetCustomAttribute<System.Reflection.AssemblyInformationalVersionAttribute>(typeof(IConnectionMultiplexer).Assembly)?.InformationalVersion.Split('+')[0]
        ?? typeof(IConnectionMultiplexer).Assembly.GetName().Version?.ToString();

    /// <summary>How long after a failed resolution the next is tried.</summary>
    internal static readonly TimeSpan ResolveRetry = TimeSpan.FromSeconds(10);

    /// <summary>How long after the app disposed its multiplexer its factory is asked again (a reconnect pattern recreates it at once).</summary>
    internal static readonly TimeSpan RecycledRetry = TimeSpan.FromSeconds(1);

    /// <summary>How often a multiplexer MuxWatch made is at most asked to re-read its cluster, when a node it does not hold is listed.</summary>
    internal static readonly TimeSpan ReconfigureEvery = TimeSpan.FromSeconds(30);

    private const int MaxEventEndpoints = 64;

    private static readonly string[] ProbeOnly = [TimeoutSources.Probe];
    private static readonly string[] AppAndProbe = [TimeoutSources.FirstChance, TimeoutSources.Probe];

    private readonly MultiplexerRegistration _registration;
    private readonly IServiceProvider _services;
    private readonly MuxWatchMetrics _metrics;
    private readonly int _maxEndpoints;
    private readonly ConcurrentDictionary<string, WatchedEndpoint> _endpoints = new(StringComparer.Ordinal);
    private readonly BoundedLabelValues _eventEndpoints = new(MaxEventEndpoints);
    private readonly ConnectionEventCounter _events;
    private readonly ProbeOutcome _outcome;
    private readonly EndpointPinger _pinger;
    private readonly PubSubLagProbe? _pubSub;
    private readonly ConnectFailureDiagnosis _diagnosis;
    private readonly ILogger _logger;
    private readonly Lock _gate = new();
    private readonly ServerTimelines? _timelines;
    private readonly TimeProvider _time;
    private Task? _reconfiguring;
    private DateTimeOffset _lastReconfigure = DateTimeOffset.MinValue;

    /// <summary>The status text's buffer, reused each cycle (only the loop's thread samples).</summary>
    private readonly StringWriter _statusText = new(System.Globalization.CultureInfo.InvariantCulture);
    private DateTimeOffset _lastStatusRead = DateTimeOffset.MinValue;

    private IConnectionMultiplexer? _multiplexer;
    private Task? _resolving;
    private DateTimeOffset _nextResolve = DateTimeOffset.MinValue;
    private volatile string _state = "connecting";
    private bool _disposed;
    private int _overBudget;

    public WatchedMultiplexer(MultiplexerRegistration registration, IServiceProvider services, MuxWatchMetrics metrics, TimeProvider time, int maxEndpoints)
    {
        _registration = registration;
        _services = services;
        _metrics = metrics;
        _maxEndpoints = maxEndpoints;
        _time = time;
        _timelines = services.GetService<ServerTimelines>();
        _outcome = new ProbeOutcome(time);
        _events = new ConnectionEventCounter(metrics, registration.Name, _eventEndpoints, NameRefusal);
        _pinger = new EndpointPinger(registration.Name, metrics, _outcome, time);
        _pubSub = registration.MeasurePubSubLag ? new PubSubLagProbe(registration.Name, metrics, time) : null;
        _diagnosis = new ConnectFailureDiagnosis(registration.Diagnose ?? DiagnoseFromConfigurationAsync, NameDiagnosed);
        _logger = services.GetService<ILoggerFactory>()?.CreateLogger(typeof(WatchedMultiplexer).FullName!) ?? Microsoft.Extensions.Logging.Abstractions.NullLogger.Instance;
    }

    public string Name => _registration.Name;

    /// <summary>True when MuxWatch made this multiplexer (an admin connection of its own, so the poller may use it).</summary>
    public bool Owned => _registration.Owned;

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

    /// <summary>
    /// The servers MuxWatch probes and polls: the multiplexer's, up to <c>MuxWatch:MaxEndpointsPerMultiplexer</c>
    /// in the client's order. A cluster's node list comes from its servers, so one advertising a thousand
    /// nodes must not cost thousands of series: the overflow is exported and logged once.
    /// </summary>
    internal IServer[] Servers(IConnectionMultiplexer multiplexer)
    {
        var all = InCluster(multiplexer);
        var over = all.Length - _maxEndpoints;
        if (over <= 0)
        {
            if (Interlocked.Exchange(ref _overBudget, 0) != 0)
            {
                _metrics.EndpointsOverBudget.WithLabels(Name).Set(0);
            }

            return all;
        }

        _metrics.EndpointsOverBudget.WithLabels(Name).Set(over);
        if (Interlocked.Exchange(ref _overBudget, 1) == 0)
        {
            LogOverBudget(_logger, Name, all.Length, _maxEndpoints);
        }

        return all[.._maxEndpoints];
    }

    /// <summary>
    /// The multiplexer's servers but those that left their cluster (<see cref="ServerTimelines.FollowCluster"/>):
    /// the client never forgets a server, so a node removed from the cluster would otherwise stay probed and
    /// exported for ever. Its series go when it is first seen gone. A node the cluster added that the client
    /// does not hold yet: a multiplexer MuxWatch made is asked to re-read the cluster (at most every
    /// <see cref="ReconfigureEvery"/>); an app's is never reconfigured, and shows it once the client does.
    /// </summary>
    private IServer[] InCluster(IConnectionMultiplexer multiplexer)
    {
        var all = multiplexer.GetServers();
        if (_timelines is null || !AnyClusterNode(all))
        {
            return all; // nothing to follow: the common case costs no allocation
        }

        var endpoints = new string[all.Length];
        for (var i = 0; i < all.Length; i++)
        {
            endpoints[i] = EndpointText.Of(all[i].EndPoint);
        }

        var membership = _timelines.FollowCluster(endpoints);
        if (membership.Unknown.Count > 0 && _registration.Owned)
        {
            ReconfigureOwned(multiplexer, membership.Unknown.Count);
        }

        if (membership.Left.Count == 0)
        {
            return all;
        }

        foreach (var gone in membership.Left)
        {
            if (_endpoints.TryRemove(gone, out _))
            {
                _metrics.RemoveEndpoint(Name, gone);
                LogLeftCluster(_logger, gone, Name);
            }
        }

        return [.. all.Where((_, i) => !membership.Left.Contains(endpoints[i]))];
    }

    private static bool AnyClusterNode(IServer[] servers)
    {
        foreach (var server in servers)
        {
            if (server.ServerType == ServerType.Cluster)
            {
                return true;
            }
        }

        return false;
    }

    private void ReconfigureOwned(IConnectionMultiplexer multiplexer, int unknown)
    {
        var now = _time.GetUtcNow();
        lock (_gate)
        {
            if (_reconfiguring is { IsCompleted: false } || now - _lastReconfigure < ReconfigureEvery)
            {
                return;
            }

            _lastReconfigure = now;
            LogReconfiguring(_logger, Name, unknown);

            // Off the loop, and observed: the client re-reads CLUSTER NODES and connects to the new nodes.
            _reconfiguring = multiplexer.ConfigureAsync();
            FireAndForget.Observe(_reconfiguring);
        }
    }

    /// <summary>
    /// One cycle: resolve if needed (in the background), then sample counters and status, and start the
    /// PINGs that are due (every <paramref name="pingInterval"/>; none when null); a PING's timeout goes to
    /// <paramref name="pipeline"/>.
    /// </summary>
    public void Sample(DateTimeOffset now, TimeSpan? pingInterval, TimeSpan probeTimeout, TimeoutPipeline pipeline, CancellationToken stopping)
    {
        if (_disposed)
        {
            return;
        }

        var multiplexer = Multiplexer;
        if (multiplexer is null)
        {
            StartResolving(now);
            return;
        }

        if (_pinger.SawDisposed || MultiplexerInspection.IsDisposed(multiplexer))
        {
            Retire(now);
            return;
        }

        var anyConnected = false;
        foreach (var server in Servers(multiplexer))
        {
            anyConnected |= SampleServer(server, now, pingInterval, probeTimeout, pipeline, stopping);
        }

        // The status text is the dearest read of a cycle (the client formats every server's summary into
        // it), and what it alone carries (heartbeat age, the client's timeout totals) needs no finer grain
        // than the PINGs': it is read at their cadence (every cycle when PING is off).
        if (pingInterval is not { } statusInterval || now - _lastStatusRead >= statusInterval * 0.9)
        {
            _lastStatusRead = now;
            ReadStatus(multiplexer);
        }

        if (_registration.Tls?.TakeNewFailure() is { } refused)
        {
            // A certificate refused on a reconnect (the server's was replaced): said where people look.
            _outcome.Failed(refused);
            LogConnectFailed(_logger, Name, refused);
        }

        _pubSub?.Sample(multiplexer, probeTimeout);
        _ = _diagnosis.Observe(anyConnected, now);
        _state = anyConnected ? "connected" : multiplexer.IsConnecting ? "connecting" : "disconnected";
    }

    private void ReadStatus(IConnectionMultiplexer multiplexer)
    {
        _statusText.GetStringBuilder().Clear();
        multiplexer.GetStatus(_statusText);
        var status = StatusTextReader.Read(_statusText.GetStringBuilder());
        if (status.HeartbeatAgeSeconds is { } age)
        {
            _metrics.HeartbeatAge.WithLabels(Name).Set(age);
        }

        IncTo(_metrics.ClientTimeouts.WithLabels(Name, "sync"), status.SyncTimeouts);
        IncTo(_metrics.ClientTimeouts.WithLabels(Name, "async"), status.AsyncTimeouts);
        IncTo(_metrics.ClientTimeouts.WithLabels(Name, "fire-and-forget"), status.FireAndForgetTimeouts);
    }

    /// <summary>
    /// The live counters of <paramref name="endpoint"/>: the highest qs and qu among the counters read now
    /// and those the probe sampled since <paramref name="since"/> (when the request started waiting).
    /// </summary>
    public LiveCounters? LiveCountersOf(string endpoint, DateTimeOffset now, DateTimeOffset? since)
    {
        if (Multiplexer is not { } multiplexer)
        {
            return null;
        }

        foreach (var server in multiplexer.GetServers())
        {
            if (EndpointText.Of(server.EndPoint) == endpoint)
            {
                var counters = server.GetCounters().Interactive;
                var (sent, unsent) = ((long)counters.SentItemsAwaitingResponse, (long)counters.PendingUnsentItems);
                if (_endpoints.TryGetValue(endpoint, out var watched))
                {
                    var (maxSent, maxUnsent) = watched.Queues.MaxSince(since ?? now);
                    (sent, unsent) = (Math.Max(sent, maxSent), Math.Max(unsent, maxUnsent));
                }

                return new LiveCounters(endpoint, server.IsConnected, sent, unsent, now);
            }
        }

        return null;
    }

    /// <summary>True when this multiplexer has a server at <paramref name="endpoint"/>.</summary>
    public bool HasEndpoint(string endpoint) =>
        Multiplexer is { } multiplexer && multiplexer.GetServers().Any(server => EndpointText.Of(server.EndPoint) == endpoint);

    public TargetStatus Status()
    {
        var multiplexer = Multiplexer;
        var servers = new List<TargetServerStatus>();
        if (multiplexer is not null && !_disposed)
        {
            foreach (var server in Servers(multiplexer))
            {
                var endpoint = EndpointText.Of(server.EndPoint);
                servers.Add(new TargetServerStatus(
                    endpoint,
                    server.IsConnected,
                    server.IsConnected ? server.ServerType.ToString() : null,
                    server.IsConnected ? server.Version.ToString() : null,
                    server.IsReplica ? "replica" : "primary",
                    _endpoints.TryGetValue(endpoint, out var watched) ? watched.LastSuccess : null)
                {
                    Polling = _services.GetService<ServerTimelines>()?.Find(endpoint)?.Status(),
                });
            }
        }

        var error = _outcome.LastError;
        var status = new TargetStatus(
            Name,
            _state,
            _registration.Owned,
            // The client drops the password; the user name is a credential too.
            (_registration.DisplayConfiguration ?? MultiplexerInspection.DisplayConfiguration(multiplexer)) is { } shown ? SecretRedactor.Redact(shown) : null,
            _outcome.LastSuccess,
            error?.Message,
            error?.Time,
            ClientVersion,
            servers);
        return _registration.Discovered is { } discovered ? status with { Discovered = true, MadeBy = discovered.Origin.MadeBy } : status;
    }

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
        _metrics.InitializeEndpoint(Name, endpoint, _eventEndpoints.Admit(endpoint), _registration.Owned ? ProbeOnly : AppAndProbe);
        return new WatchedEndpoint(_metrics, Name, endpoint);
    }

    private bool SampleServer(IServer server, DateTimeOffset now, TimeSpan? pingInterval, TimeSpan probeTimeout, TimeoutPipeline pipeline, CancellationToken stopping)
    {
        var endpoint = _endpoints.GetOrAdd(EndpointText.Of(server.EndPoint), static (key, self) => self.NewEndpoint(key), this);
        var connected = server.IsConnected;
        var counters = server.GetCounters();
        endpoint.Queues.Remember(now, counters.Interactive.SentItemsAwaitingResponse, counters.Interactive.PendingUnsentItems);
        var series = endpoint.Series;
        series.Connected.Set(connected ? 1 : 0);
        series.SentAwaitingResponse.Set(counters.Interactive.SentItemsAwaitingResponse);
        series.PendingUnsent.Set(counters.Interactive.PendingUnsentItems);
        series.Operations.IncTo(counters.Interactive.OperationCount);

        // SocketCount counts sockets created, so every one after the first is a reconnect (measured).
        series.Reconnects.IncTo(Math.Max(0, counters.Interactive.SocketCount - 1));
        series.Subscriptions.Set(counters.Subscription.Subscriptions);

        // The client connects to a node it learnt of on a re-read of the cluster only once a command goes
        // there: in MuxWatch's own multiplexer, the probe's PING is that command. The app's is left alone.
        var neverConnected = !connected && _registration.Owned && counters.Interactive.SocketCount == 0;
        if (!connected && !neverConnected)
        {
            return false;
        }

        if (pingInterval is { } interval && endpoint.PingDue(now, interval))
        {
            _pinger.Start(server, endpoint, probeTimeout, pipeline, stopping);
        }
        else if (pingInterval is null && connected)
        {
            _outcome.Succeeded(endpoint, now);
        }

        return connected;
    }

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
            _metrics.ProbeFailures.WithLabels("multiplexer", "resolve-failed").Inc();
        }
    }

    /// <summary>
    /// A refusal on a later attempt (the first one may have failed otherwise, a slow connect under load):
    /// named where people look too, as for the first connection.
    /// </summary>
    private void NameRefusal(string failureType, Exception? exception)
    {
        _diagnosis.Reported(failureType);
        if (failureType == nameof(ConnectionFailureType.AuthenticationFailure))
        {
            // The client reports this once per outage at most (until a connection is up again): logged each
            // time. It calls a certificate refused in the TLS handshake the same: not a password, then.
            var reason = _registration.Tls?.LastFailure
                ?? (OwnedConnection.IsTlsHandshakeFailure(exception) ? OwnedConnection.TlsHandshakeRefused : OwnedConnection.Describe(failureType));
            _outcome.Failed(reason);
            LogConnectFailed(_logger, Name, reason);
        }
    }

    /// <summary>
    /// For an app's own multiplexer: a fresh connection made from its configuration string (its endpoints and
    /// credentials, as the server poller's connection is), never from the app's multiplexer itself.
    /// </summary>
    private Task<string?> DiagnoseFromConfigurationAsync()
    {
        if (Multiplexer is not { } multiplexer)
        {
            return Task.FromResult<string?>(null);
        }

        ConfigurationOptions options;
        try
        {
            options = ConfigurationOptions.Parse(multiplexer.Configuration);
        }
        catch (ArgumentException)
        {
            return Task.FromResult<string?>(null);
        }

        options.ClientName = OwnedConnection.ClientName;
        return OwnedConnection.DiagnoseAsync(options, OwnedConnection.DiagnosisConnectTimeout);
    }

    /// <summary>
    /// A refusal the client did not report, found by a fresh connection (<see cref="ConnectFailureDiagnosis"/>,
    /// which never calls a failed TLS handshake one): named where people look, as a refusal at the first connection is.
    /// </summary>
    private void NameDiagnosed(string failureType)
    {
        if (!_disposed && Multiplexer is { } multiplexer)
        {
            NameConnectFailure(multiplexer, failureType, OwnedConnection.Describe(failureType));
        }
    }

    /// <summary>A connection failure the client raised to no handler of MuxWatch's: in <c>/api/targets</c>, the event counter and the log.</summary>
    private void NameConnectFailure(IConnectionMultiplexer multiplexer, string failureType, string reason)
    {
        _outcome.Failed(reason);
        _events.Count("connection-failed", multiplexer.GetEndPoints() is [var first, ..] ? first : null, failureType);
        LogConnectFailed(_logger, Name, reason);
    }

    private void Attach(IConnectionMultiplexer multiplexer)
    {
        _events.Attach(multiplexer);

        // A first connection that failed (a refused password above all) raised its event before these
        // handlers existed: name it where people look, in /api/targets, the event counter and the log.
        if (OwnedConnection.ConnectFailure(multiplexer) is { } failureType)
        {
            _diagnosis.Reported(failureType);
            // The client calls a refused certificate an AuthenticationFailure too: the check says which it was.
            NameConnectFailure(multiplexer, failureType, _registration.Tls?.TakeNewFailure() ?? OwnedConnection.Describe(failureType));
        }
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

    private static void IncTo(Prometheus.Counter.Child counter, long? value)
    {
        if (value is { } total)
        {
            counter.IncTo(total);
        }
    }

    [LoggerMessage(EventId = 41, Level = LogLevel.Warning, Message = "Multiplexer {Multiplexer} could not connect: {Reason}; the client keeps retrying")]
    private static partial void LogConnectFailed(ILogger logger, string multiplexer, string reason);

    [LoggerMessage(EventId = 42, Level = LogLevel.Warning,
        Message = "Multiplexer {Multiplexer} knows {Endpoints} endpoints; only the first {Budget} are probed and polled (MuxWatch:MaxEndpointsPerMultiplexer)")]
    private static partial void LogOverBudget(ILogger logger, string multiplexer, int endpoints, int budget);

    [LoggerMessage(EventId = 43, Level = LogLevel.Information,
        Message = "Node {Endpoint} of multiplexer {Multiplexer} left its cluster (no other node lists it): no longer probed, polled or exported")]
    private static partial void LogLeftCluster(ILogger logger, string endpoint, string multiplexer);

    [LoggerMessage(EventId = 44, Level = LogLevel.Information,
        Message = "The cluster of multiplexer {Multiplexer} lists {Unknown} node(s) it does not hold: asking it to re-read the cluster")]
    private static partial void LogReconfiguring(ILogger logger, string multiplexer, int unknown);
}
