using System.Collections.Concurrent;
using System.Diagnostics;
using Microsoft.Extensions.DependencyInjection;
using MuxWatch.Export;
using MuxWatch.Model;
using MuxWatch.Pipeline;
using MuxWatch.Reading;
using MuxWatch.Sources;
using MuxWatch.State;
using StackExchange.Redis;

namespace MuxWatch.StackExchangeRedis;

/// <summary>
/// One watched multiplexer: resolves it off the loop, counts its events, and samples it each cycle.
/// The app's multiplexer is only observed: never reconfigured, its profiler slot never taken; MuxWatch
/// attaches event handlers and detaches them when it stops.
/// </summary>
internal sealed partial class WatchedMultiplexer : IAsyncDisposable
{
    /// <summary>How long after a failed resolution the next is tried.</summary>
    internal static readonly TimeSpan ResolveRetry = TimeSpan.FromSeconds(10);

    /// <summary>How long after the app disposed its multiplexer its factory is asked again (a reconnect pattern recreates it at once).</summary>
    internal static readonly TimeSpan RecycledRetry = TimeSpan.FromSeconds(1);

    private const int MaxEventEndpoints = 64;
    private const int MaxErrorChars = 300;

    private readonly MultiplexerRegistration _registration;
    private readonly IServiceProvider _services;
    private readonly MuxWatchMetrics _metrics;
    private readonly TimeProvider _time;
    private readonly ConcurrentDictionary<string, EndpointState> _endpoints = new(StringComparer.Ordinal);
    private readonly BoundedLabelValues _eventEndpoints = new(MaxEventEndpoints);
    private readonly Lock _gate = new();

    /// <summary>The status text's buffer, reused each cycle (only the loop's thread samples).</summary>
    private readonly StringWriter _statusText = new(System.Globalization.CultureInfo.InvariantCulture);

    private IConnectionMultiplexer? _multiplexer;
    private Task? _resolving;
    private DateTimeOffset _nextResolve = DateTimeOffset.MinValue;
    private volatile string _state = "connecting";
    private (string Message, DateTimeOffset Time)? _lastError;
    private DateTimeOffset? _lastSuccess;
    private bool _disposed;
    private volatile bool _pingSawDisposed;
    private readonly int _maxEndpoints;
    private int _overBudget;

    public WatchedMultiplexer(MultiplexerRegistration registration, IServiceProvider services, MuxWatchMetrics metrics, TimeProvider time, int maxEndpoints)
    {
        _registration = registration;
        _services = services;
        _metrics = metrics;
        _time = time;
        _maxEndpoints = maxEndpoints;
    }

    /// <summary>
    /// The servers MuxWatch probes and polls: the multiplexer's, up to <c>MuxWatch:MaxEndpointsPerMultiplexer</c>
    /// in the client's order. A cluster's node list comes from its servers, so one advertising a thousand
    /// nodes must not cost thousands of series: the overflow is exported and logged once.
    /// </summary>
    internal IServer[] Servers(IConnectionMultiplexer multiplexer)
    {
        var all = multiplexer.GetServers();
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
        if (Interlocked.Exchange(ref _overBudget, 1) == 0 && _services.GetService<Microsoft.Extensions.Logging.ILoggerFactory>() is { } loggers)
        {
            LogOverBudget(loggers.CreateLogger(typeof(WatchedMultiplexer).FullName!), Name, all.Length, _maxEndpoints);
        }

        return all[.._maxEndpoints];
    }

    [Microsoft.Extensions.Logging.LoggerMessage(EventId = 42, Level = Microsoft.Extensions.Logging.LogLevel.Warning,
        Message = "Multiplexer {Multiplexer} knows {Endpoints} endpoints; only the first {Budget} are probed and polled (MuxWatch:MaxEndpointsPerMultiplexer)")]
    private static partial void LogOverBudget(Microsoft.Extensions.Logging.ILogger logger, string multiplexer, int endpoints, int budget);

    public string Name => _registration.Name;

    /// <summary>True when MuxWatch made this multiplexer (an admin connection of its own, so the poller may use it).</summary>
    public bool Owned => _registration.Owned;

    /// <summary>The multiplexer once resolved, until disposed.</summary>
    public IConnectionMultiplexer? Multiplexer => Volatile.Read(ref _multiplexer);

    /// <summary>One cycle: resolve if needed (in the background), then sample counters, status and start PINGs; a PING's timeout goes to <paramref name="pipeline"/>.</summary>
    public void Sample(DateTimeOffset now, bool ping, TimeSpan probeTimeout, TimeoutPipeline pipeline, CancellationToken stopping)
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

        if (_pingSawDisposed || IsDisposed(multiplexer))
        {
            Retire(now);
            return;
        }

        var servers = Servers(multiplexer);
        var anyConnected = false;
        foreach (var server in servers)
        {
            anyConnected |= SampleServer(server, now, ping, probeTimeout, pipeline, stopping);
        }

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
        _state = anyConnected ? "connected" : multiplexer.IsConnecting ? "connecting" : "disconnected";
    }

    /// <summary>
    /// The live counters of <paramref name="endpoint"/>: the highest qs and qu among the counters read now
    /// and those the probe sampled since <paramref name="since"/> (when the request started waiting).
    /// </summary>
    /// <remarks>
    /// Now alone is not enough: an async timeout surfaces up to a heartbeat late, sometimes after the
    /// stall has ended and its replies arrived (seen: a PING timeout read qs=0 at the catch).
    /// </remarks>
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
                if (_endpoints.TryGetValue(endpoint, out var state))
                {
                    var (maxSent, maxUnsent) = state.MaxSince(since ?? now);
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
                    _endpoints.TryGetValue(endpoint, out var state) ? state.LastSuccess : null)
                {
                    Polling = _services.GetService<ServerTimelines>()?.Find(endpoint)?.Status(),
                });
            }
        }

        var error = _lastError;
        return new TargetStatus(
            Name,
            _state,
            _registration.Owned,
            // The client drops the password; the user name is a credential too.
            (_registration.DisplayConfiguration ?? DisplayConfiguration(multiplexer)) is { } shown ? SecretRedactor.Redact(shown) : null,
            _lastSuccess,
            error?.Message,
            error?.Time,
            typeof(IConnectionMultiplexer).Assembly.GetName().Version?.ToString(),
            servers);
    }

    public async ValueTask DisposeAsync()
    {
        var multiplexer = Interlocked.Exchange(ref _multiplexer, null);
        _disposed = true;
        if (multiplexer is null)
        {
            return;
        }

        Detach(multiplexer);
        if (_registration.Owned)
        {
            await multiplexer.DisposeAsync().ConfigureAwait(false);
        }
    }

    /// <summary>
    /// A newly seen endpoint: its series, and its counters with known labels exported at 0. A multiplexer
    /// MuxWatch made (a sidecar target) times out only in the probe; an app's also in the app's own calls.
    /// </summary>
    private EndpointState NewEndpoint(string endpoint)
    {
        _metrics.InitializeEndpoint(Name, endpoint, _eventEndpoints.Admit(endpoint), _registration.Owned ? ProbeOnly : AppAndProbe);
        return new EndpointState(_metrics, Name, endpoint);
    }

    private static readonly string[] ProbeOnly = [TimeoutSources.Probe];

    private static readonly string[] AppAndProbe = [TimeoutSources.FirstChance, TimeoutSources.Probe];

    private bool SampleServer(IServer server, DateTimeOffset now, bool ping, TimeSpan probeTimeout, TimeoutPipeline pipeline, CancellationToken stopping)
    {
        var endpoint = EndpointText.Of(server.EndPoint);
        var state = _endpoints.GetOrAdd(endpoint, static (key, self) => self.NewEndpoint(key), this);
        var connected = server.IsConnected;
        var counters = server.GetCounters();
        state.Remember(now, counters.Interactive.SentItemsAwaitingResponse, counters.Interactive.PendingUnsentItems);
        var series = state.Series;
        series.Connected.Set(connected ? 1 : 0);
        series.SentAwaitingResponse.Set(counters.Interactive.SentItemsAwaitingResponse);
        series.PendingUnsent.Set(counters.Interactive.PendingUnsentItems);
        series.Operations.IncTo(counters.Interactive.OperationCount);

        // SocketCount counts sockets created, so every one after the first is a reconnect (measured).
        series.Reconnects.IncTo(Math.Max(0, counters.Interactive.SocketCount - 1));
        series.Subscriptions.Set(counters.Subscription.Subscriptions);

        if (!connected)
        {
            return false;
        }

        if (!ping)
        {
            Succeeded(endpoint, state, now);
        }
        else if (state.TryStartPing())
        {
            // Not awaited: the loop never waits on the network. The PING records itself when it completes.
            _ = PingAsync(server, endpoint, state, probeTimeout, pipeline, stopping);
        }

        return true;
    }

    private async Task PingAsync(IServer server, string endpoint, EndpointState state, TimeSpan probeTimeout, TimeoutPipeline pipeline, CancellationToken stopping)
    {
        var started = Stopwatch.GetTimestamp();
        try
        {
            using (ProbeScope.Enter())
            {
                await server.PingAsync().WaitAsync(probeTimeout, _time, stopping).ConfigureAwait(false);
            }

            state.Series.Ping.Observe(Stopwatch.GetElapsedTime(started).TotalSeconds);
            Succeeded(endpoint, state, _time.GetUtcNow());
        }
        catch (OperationCanceledException) when (stopping.IsCancellationRequested)
        {
        }
        catch (Exception ex) when (ex is RedisTimeoutException or RedisConnectionException)
        {
            // The probe's own timeout: recorded and diagnosed like an app's, marked as the probe's.
            _metrics.PingFailures.WithLabels(Name, endpoint, ex is RedisTimeoutException ? "timeout" : "connection").Inc();
            Failed(ex.Message);
            pipeline.Submit(new TimeoutObservation(_time.GetUtcNow(), TimeoutSources.Probe, RedisMessage.FromException(ex))
            {
                Multiplexer = Name,
                ThreadPoolAtCatch = ThreadPoolSnapshot.Capture(),
            });
        }
        catch (TimeoutException)
        {
            _metrics.PingFailures.WithLabels(Name, endpoint, "probe-timeout").Inc();
            Failed($"PING to {endpoint} did not complete within the probe timeout ({probeTimeout.TotalSeconds:0.###} s)");
        }
        catch (ObjectDisposedException)
        {
            _pingSawDisposed = true; // the next cycle retires it
        }
#pragma warning disable CA1031 // a PING that fails in any other way is counted and reported, never thrown into the void
        catch (Exception ex)
#pragma warning restore CA1031
        {
            _metrics.PingFailures.WithLabels(Name, endpoint, "error").Inc();
            Failed($"{ex.GetType().Name}: {ex.Message}");
        }
        finally
        {
            state.PingDone();
        }
    }

    private void Succeeded(string endpoint, EndpointState state, DateTimeOffset now)
    {
        state.LastSuccess = now;
        _lastSuccess = now;
        state.Series.LastProbeSuccess.Set(now.ToUnixTimeMilliseconds() / 1000.0);
    }

    private void Failed(string message)
    {
        var redacted = SecretRedactor.Redact(message);
        _lastError = (redacted.Length > MaxErrorChars ? redacted[..MaxErrorChars] : redacted, _time.GetUtcNow());
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
            if (!_registration.Owned && IsDisposed(multiplexer))
            {
                // The factory still hands out the instance the app disposed: asked again later, never watched.
                _state = "disposed";
                return;
            }

            Attach(multiplexer);
            if (_disposed)
            {
                Detach(multiplexer);
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
        catch (Exception ex)
#pragma warning restore CA1031
        {
            Failed($"could not get the multiplexer: {ex.GetType().Name}: {ex.Message}");
            _state = "failed";
            _metrics.ProbeFailures.WithLabels("multiplexer", "resolve-failed").Inc();
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
            Detach(multiplexer);
        }

        _state = "disposed";
        _pingSawDisposed = false;
        _endpoints.Clear(); // their cached series were removed below; a new instance starts afresh
        _metrics.RemoveMultiplexer(Name);
        lock (_gate)
        {
            _nextResolve = now + RecycledRetry;
        }
    }

    private void Attach(IConnectionMultiplexer multiplexer)
    {
        multiplexer.ConnectionFailed += OnConnectionFailed;
        multiplexer.ConnectionRestored += OnConnectionRestored;
        multiplexer.ErrorMessage += OnErrorMessage;
        multiplexer.InternalError += OnInternalError;
        multiplexer.ServerMaintenanceEvent += OnServerMaintenance;

        // A first connection that failed (a refused password above all) raised its event before these
        // handlers existed: name it where people look, in /api/targets, the event counter and the log.
        if (OwnedConnection.ConnectFailure(multiplexer) is { } failureType)
        {
            var reason = OwnedConnection.Describe(failureType);
            Failed(reason);
            CountEvent("connection-failed", multiplexer.GetEndPoints() is [var first, ..] ? first : null, failureType);
            if (_services.GetService<Microsoft.Extensions.Logging.ILoggerFactory>() is { } loggers)
            {
                LogConnectFailed(loggers.CreateLogger(typeof(WatchedMultiplexer).FullName!), Name, reason);
            }
        }
    }

    [Microsoft.Extensions.Logging.LoggerMessage(EventId = 41, Level = Microsoft.Extensions.Logging.LogLevel.Warning,
        Message = "Multiplexer {Multiplexer} could not connect: {Reason}; the client keeps retrying")]
    private static partial void LogConnectFailed(Microsoft.Extensions.Logging.ILogger logger, string multiplexer, string reason);

    private void Detach(IConnectionMultiplexer multiplexer)
    {
        multiplexer.ConnectionFailed -= OnConnectionFailed;
        multiplexer.ConnectionRestored -= OnConnectionRestored;
        multiplexer.ErrorMessage -= OnErrorMessage;
        multiplexer.InternalError -= OnInternalError;
        multiplexer.ServerMaintenanceEvent -= OnServerMaintenance;
    }

    // Events are counted, never ordered: ConnectionRestored can arrive before its ConnectionFailed (measured).
    private void OnConnectionFailed(object? sender, ConnectionFailedEventArgs e) => CountEvent("connection-failed", e.EndPoint, e.FailureType.ToString());

    private void OnConnectionRestored(object? sender, ConnectionFailedEventArgs e) => CountEvent("connection-restored", e.EndPoint, e.FailureType.ToString());

    private void OnErrorMessage(object? sender, RedisErrorEventArgs e) => CountEvent("error-message", e.EndPoint, "none");

    private void OnInternalError(object? sender, InternalErrorEventArgs e) => CountEvent("internal-error", e.EndPoint, "none");

    private void OnServerMaintenance(object? sender, StackExchange.Redis.Maintenance.ServerMaintenanceEvent e) => CountEvent("server-maintenance", null, "none");

    private void CountEvent(string name, System.Net.EndPoint? endpoint, string failureType)
    {
        if (_disposed)
        {
            return;
        }

        var label = endpoint is null ? "unknown" : _eventEndpoints.Admit(EndpointText.Of(endpoint));
        _metrics.ConnectionEvents.WithLabels(Name, label, name, failureType).Inc();
    }

    /// <summary>
    /// The client has no public "is disposed": a disposed multiplexer still lists its endpoints and
    /// servers, but GetServer of its own endpoint throws "The specified endpoint is not defined"
    /// (measured on 2.6.90 and 3.4.35), which a live one never does.
    /// </summary>
    private static bool IsDisposed(IConnectionMultiplexer multiplexer)
    {
        if (multiplexer.IsConnected || multiplexer.GetEndPoints() is not [var first, ..])
        {
            return false;
        }

        try
        {
            multiplexer.GetServer(first);
            return false;
        }
        catch (Exception ex) when (ex is ArgumentException or ObjectDisposedException)
        {
            return true;
        }
    }

    private static string? DisplayConfiguration(IConnectionMultiplexer? multiplexer)
    {
        if (multiplexer is null)
        {
            return null;
        }

        try
        {
            // Configuration includes the password: parse it and write it back without.
            return ConfigurationOptions.Parse(multiplexer.Configuration).ToString(includePassword: false);
        }
        catch (ArgumentException)
        {
            return SecretRedactor.Redact(multiplexer.Configuration);
        }
    }

    private static void IncTo(Prometheus.Counter.Child counter, long? value)
    {
        if (value is { } total)
        {
            counter.IncTo(total);
        }
    }

    /// <summary>Per endpoint: at most one PING in flight, when it last succeeded, and the last qs/qu samples.</summary>
    private sealed class EndpointState(MuxWatchMetrics metrics, string multiplexer, string endpoint)
    {
        /// <summary>Samples kept: a minute at the default interval, longer than any timeout's waiting window.</summary>
        private const int HistoryLength = 64;

        private readonly (DateTimeOffset Time, long Sent, long Unsent)[] _history = new (DateTimeOffset, long, long)[HistoryLength];
        private readonly Lock _gate = new();
        private int _next;
        private int _pinging;

        /// <summary>This endpoint's series, looked up once: a probe cycle then touches no label dictionary.</summary>
        public EndpointSeries Series { get; } = new(metrics, multiplexer, endpoint);

        public void Remember(DateTimeOffset time, long sent, long unsent)
        {
            lock (_gate)
            {
                _history[_next] = (time, sent, unsent);
                _next = (_next + 1) % HistoryLength;
            }
        }

        public (long Sent, long Unsent) MaxSince(DateTimeOffset since)
        {
            long sent = 0, unsent = 0;
            lock (_gate)
            {
                foreach (var sample in _history)
                {
                    if (sample.Time >= since)
                    {
                        sent = Math.Max(sent, sample.Sent);
                        unsent = Math.Max(unsent, sample.Unsent);
                    }
                }
            }

            return (sent, unsent);
        }

        public DateTimeOffset? LastSuccess { get; set; }

        public bool TryStartPing() => Interlocked.CompareExchange(ref _pinging, 1, 0) == 0;

        public void PingDone() => Volatile.Write(ref _pinging, 0);
    }

    /// <summary>The labelled children of one endpoint's per-cycle series.</summary>
    private sealed class EndpointSeries(MuxWatchMetrics metrics, string multiplexer, string endpoint)
    {
        public Prometheus.Gauge.Child Connected { get; } = metrics.Connected.WithLabels(multiplexer, endpoint);

        public Prometheus.Gauge.Child SentAwaitingResponse { get; } = metrics.SentAwaitingResponse.WithLabels(multiplexer, endpoint);

        public Prometheus.Gauge.Child PendingUnsent { get; } = metrics.PendingUnsent.WithLabels(multiplexer, endpoint);

        public Prometheus.Counter.Child Operations { get; } = metrics.Operations.WithLabels(multiplexer, endpoint);

        public Prometheus.Counter.Child Reconnects { get; } = metrics.Reconnects.WithLabels(multiplexer, endpoint);

        public Prometheus.Gauge.Child Subscriptions { get; } = metrics.Subscriptions.WithLabels(multiplexer, endpoint);

        // These two appear with the first success, not before: a "last success" of 0 (1970) or an empty
        // round-trip histogram would say something about an endpoint that never answered.
        public Prometheus.Histogram.Child Ping => field ??= metrics.Ping.WithLabels(multiplexer, endpoint);

        public Prometheus.Gauge.Child LastProbeSuccess => field ??= metrics.LastProbeSuccess.WithLabels(multiplexer, endpoint);
    }
}
