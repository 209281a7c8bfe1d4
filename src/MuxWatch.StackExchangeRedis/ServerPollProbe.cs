using System.Collections.Concurrent;
using Microsoft.Extensions.Logging;
using Microsoft.Extensions.Logging.Abstractions;
using Microsoft.Extensions.Options;
using MuxWatch.Configuration;
using MuxWatch.Export;
using MuxWatch.Pipeline;
using MuxWatch.Reading;
using MuxWatch.Sources;
using MuxWatch.State;
using MuxWatch.Tracking;
using StackExchange.Redis;

namespace MuxWatch.StackExchangeRedis;

/// <summary>
/// Polls each Redis endpoint of every watched multiplexer for persistence, fork, latency and slow-log
/// events (<see cref="EndpointPoller"/>), over connections of MuxWatch's own: for an app's multiplexer, an
/// admin connection cloned from its configuration (so the app's connection is never touched), one per
/// endpoint however many multiplexers share it; for a multiplexer MuxWatch made itself (a sidecar
/// target), that one, which it opened with <c>allowAdmin</c>.
/// </summary>
/// <remarks>
/// Runs on the probe loop's ticks and never waits on the network there: a connection is made in the
/// background, each endpoint has at most one poll in flight, and every call times out by
/// <see cref="MuxWatchOptions.ServerPollTimeout"/>. An endpoint shared by several multiplexers is polled once.
/// </remarks>
internal sealed partial class ServerPollProbe : IPeriodicProbe, IAsyncDisposable, IDisposable
{
    /// <summary>The client name of the polling connections, as <c>CLIENT LIST</c> shows it.</summary>
    public const string ClientName = "muxwatch-poller";

    private static readonly TimeSpan ConnectRetry = TimeSpan.FromSeconds(10);

    private readonly WatchedMultiplexers _multiplexers;
    private readonly SlowlogSenders _senders;
    private readonly ServerTimelines _timelines;
    private readonly ServerPolls _polls;
    private readonly IServerPollRequests _requests;
    private readonly MuxWatchMetrics _metrics;
    private readonly TimeProvider _time;
    private readonly IOptions<MuxWatchOptions> _options;
    private readonly ILogger _logger;
    private readonly ProcessActivity? _activity;
    private readonly ConcurrentDictionary<string, AdminConnection> _connections = new(StringComparer.Ordinal);
    private readonly ConcurrentDictionary<string, EndpointPoller> _pollers = new(StringComparer.OrdinalIgnoreCase);

    public ServerPollProbe(
        WatchedMultiplexers multiplexers,
        ServerTimelines timelines,
        ServerPolls polls,
        IServerPollRequests requests,
        MuxWatchMetrics metrics,
        TimeProvider time,
        IOptions<MuxWatchOptions> options,
        ILogger<ServerPollProbe>? logger = null,
        ProcessActivity? activity = null)
    {
        _activity = activity;
        _multiplexers = multiplexers;
        _senders = new SlowlogSenders(multiplexers, time);
        _timelines = timelines;
        _polls = polls;
        _requests = requests;
        _metrics = metrics;
        _time = time;
        _options = options;
        _logger = (ILogger?)logger ?? NullLogger.Instance;
    }

    public string Name => "server-poll";

    public void Sample(DateTimeOffset now, CancellationToken stopping)
    {
        var settings = _options.Value;
        if (!settings.ServerPolling)
        {
            return;
        }

        var quiet = _activity?.IsQuiet(now) == true; // an idle app is polled at a slower calm pace (ServerPollQuietMultiple)

        // Each endpoint is polled once per cycle, by the first watched multiplexer (in registration order)
        // whose polling connection is up or still being made; if that one goes, the next takes over with
        // the same history. A multiplexer whose endpoints all have a poller opens no connection of its
        // own: three app multiplexers on one server hold one polling connection, not three.
        var watchedEndpoints = new HashSet<string>(StringComparer.OrdinalIgnoreCase);
        var covered = new HashSet<string>(StringComparer.OrdinalIgnoreCase);
        var clientTimeouts = new Dictionary<string, TimeSpan>(StringComparer.OrdinalIgnoreCase); // the smallest of those watching each endpoint
        foreach (var watched in _multiplexers.All)
        {
            if (watched.Multiplexer is not { } multiplexer)
            {
                RetireConnection(watched.Name);
                continue;
            }

            var servers = watched.Servers(multiplexer);
            var endpoints = servers.Select(server => EndpointText.Of(server.EndPoint)).ToArray();
            watchedEndpoints.UnionWith(endpoints);
            if (ClientTimeouts.Of(multiplexer) is { } timeout)
            {
                foreach (var endpoint in endpoints)
                {
                    clientTimeouts[endpoint] = clientTimeouts.TryGetValue(endpoint, out var other) && other < timeout ? other : timeout;
                }
            }

            if (endpoints.All(covered.Contains))
            {
                RetireConnection(watched.Name); // an earlier multiplexer's connection polls them all
                continue;
            }

            IConnectionMultiplexer connection;
            if (watched.Owned)
            {
                connection = multiplexer; // MuxWatch's own, opened with allowAdmin: polled over it, no second connection
            }
            else
            {
                var admin = _connections.GetOrAdd(watched.Name, static (_, source) => new AdminConnection(source), multiplexer);
                if (!ReferenceEquals(admin.Source, multiplexer))
                {
                    RetireConnection(watched.Name); // the app gave a new multiplexer: clone that one next cycle
                    continue;
                }

                if (admin.Connection is not { } adminConnection)
                {
                    admin.StartConnecting(now, settings.ServerPollTimeout, _logger);
                    if (!admin.LastAttemptFailed)
                    {
                        covered.UnionWith(endpoints); // being made: the next multiplexer waits for it rather than open another
                    }

                    continue;
                }

                admin.EnsureHolds(endpoints, now);
                connection = adminConnection;
            }

            for (var i = 0; i < servers.Length; i++)
            {
                if (covered.Add(endpoints[i]))
                {
                    if (!_pollers.TryGetValue(endpoints[i], out var poller))
                    {
                        // A new endpoint: its poller, and the witness's address (a plain connection of MuxWatch's own beside the poller's).
                        var timeline = _timelines.GetOrAdd(endpoints[i]);
                        timeline.WitnessAt(servers[i].EndPoint, TlsHostOf(multiplexer, watched.ConfiguredTlsHost, servers[i].EndPoint), watched.WitnessCertificateCheck);
                        poller = _pollers.GetOrAdd(endpoints[i], static (_, state) =>
                            new EndpointPoller(state.Probe._polls, state.Timeline, state.Probe._requests, state.Probe._metrics, state.Probe._time, state.Probe._senders), (Probe: this, Timeline: timeline));
                    }

                    poller.StartIfDue(now, connection, servers[i].EndPoint, settings, Cadence.PhaseOf(endpoints[i], _pollers.Count, settings.ProbeInterval), quiet, stopping);
                }
            }
        }

        foreach (var (endpoint, poller) in _pollers)
        {
            poller.ClientTimeout = clientTimeouts.TryGetValue(endpoint, out var timeout) ? timeout : null;
        }

        // An endpoint that no watched multiplexer has any more (disposed, reconfigured) is no longer
        // polled, witnessed, kept or exported.
        foreach (var endpoint in _pollers.Keys.Where(e => !watchedEndpoints.Contains(e)).ToList())
        {
            if (_pollers.TryRemove(endpoint, out var retired))
            {
                retired.Retire(); // before its series go: a poll in flight must not bring them back
            }

            _timelines.Remove(endpoint);
            _metrics.RemoveServerEndpoint(endpoint);
        }
    }

    /// <summary>
    /// The name the witness's TLS handshake gives for <paramref name="endpoint"/>: null when the multiplexer does not use
    /// TLS. For a connection MuxWatch made, as the user configured it (<paramref name="configured"/>: its own options
    /// may say <c>ssl=false</c> where a guard does the TLS); for an app's, from its configuration.
    /// </summary>
    private static string? TlsHostOf(IConnectionMultiplexer multiplexer, string? configured, System.Net.EndPoint endpoint)
    {
        string? sslHost;
        if (configured is not null)
        {
            sslHost = configured;
        }
        else
        {
            try
            {
                var options = ConfigurationOptions.Parse(multiplexer.Configuration);
                if (!options.Ssl)
                {
                    return null;
                }

                sslHost = options.SslHost;
            }
            catch (ArgumentException)
            {
                return null;
            }
        }

        return !string.IsNullOrEmpty(sslHost) ? sslHost
            : endpoint switch
            {
                System.Net.DnsEndPoint dns => dns.Host,
                System.Net.IPEndPoint ip => ip.Address.ToString(),
                _ => null,
            };
    }

    /// <summary>The polling connection opened for the watched multiplexer <paramref name="name"/>, once it is made; null for one polled over its own connection.</summary>
    internal IConnectionMultiplexer? PollingConnection(string name) => _connections.TryGetValue(name, out var admin) ? admin.Connection : null;

    /// <summary>
    /// For a container disposed synchronously (a plain <c>ServiceProvider</c> in a using block): since discovery,
    /// <c>AddMuxWatch()</c> alone registers this, and such a container refuses an async-only service. A host
    /// disposes asynchronously and never comes here.
    /// </summary>
    public void Dispose() => DisposeAsync().AsTask().GetAwaiter().GetResult();

    public async ValueTask DisposeAsync()
    {
        foreach (var name in _connections.Keys.ToList())
        {
            if (_connections.TryRemove(name, out var admin))
            {
                await admin.DisposeAsync().ConfigureAwait(false);
            }
        }
    }

    private void RetireConnection(string name)
    {
        if (_connections.TryRemove(name, out var admin))
        {
            _ = admin.DisposeAsync().AsTask();
        }
    }

    [LoggerMessage(EventId = 40, Level = LogLevel.Warning, Message = "Could not open the server-polling connection for {Endpoints}: {Reason}; retrying in 10 s")]
    private static partial void LogConnectFailed(ILogger logger, string endpoints, string reason);

    /// <summary>MuxWatch's own admin connection for one watched multiplexer, made in the background.</summary>
    private sealed class AdminConnection(IConnectionMultiplexer source) : IAsyncDisposable
    {
        private readonly Lock _gate = new();
        private IConnectionMultiplexer? _connection;
        private Task? _connecting;
        private DateTimeOffset _nextAttempt = DateTimeOffset.MinValue;
        private DateTimeOffset _nextHoldCheck = DateTimeOffset.MinValue;
        private bool _disposed;

        public IConnectionMultiplexer Source { get; } = source;

        public IConnectionMultiplexer? Connection => Volatile.Read(ref _connection);

        /// <summary>True when the last attempt to connect threw (a later multiplexer of the same endpoints may open its own).</summary>
        public bool LastAttemptFailed { get; private set; }

        public void StartConnecting(DateTimeOffset now, TimeSpan timeout, ILogger logger)
        {
            lock (_gate)
            {
                if (_disposed || _connecting is { IsCompleted: false } || now < _nextAttempt)
                {
                    return;
                }

                _nextAttempt = now + ConnectRetry;
                _connecting = Task.Run(() => ConnectAsync(timeout, logger));
            }
        }

        /// <summary>
        /// Asks the polling connection to re-read its topology when it does not hold every one of
        /// <paramref name="endpoints"/> (a node added since it connected): at most every <see cref="ConnectRetry"/>.
        /// </summary>
        public void EnsureHolds(string[] endpoints, DateTimeOffset now)
        {
            if (Connection is not { } connection || now < _nextHoldCheck)
            {
                return;
            }

            _nextHoldCheck = now + ConnectRetry;
            var held = connection.GetEndPoints().Select(EndpointText.Of).ToHashSet(StringComparer.OrdinalIgnoreCase);
            if (!endpoints.All(held.Contains))
            {
                // Off the loop, and observed: MuxWatch's own connection, so it may be reconfigured.
                FireAndForget.Observe(connection.ConfigureAsync());
            }
        }

        public async ValueTask DisposeAsync()
        {
            lock (_gate)
            {
                _disposed = true;
            }

            if (Interlocked.Exchange(ref _connection, null) is { } connection)
            {
                await connection.DisposeAsync().ConfigureAwait(false);
            }
        }

        /// <summary>The polling connection's heartbeat (the client's default is 1 s): the calm poll's 10 s.</summary>
        internal static readonly TimeSpan PollingHeartbeat = TimeSpan.FromSeconds(10);

        private async Task ConnectAsync(TimeSpan timeout, ILogger logger)
        {
            ConfigurationOptions options;
            try
            {
                // The app's configuration, cloned: its endpoints and credentials, nothing of the app's changed.
                options = ConfigurationOptions.Parse(Source.Configuration);

                // And every server the app's client holds now (a cluster's discovered nodes, a primary's
                // replicas): the clone connects to each directly rather than depend on discovering them
                // again within its connect timeout, which under load it may not. (Not for a Sentinel
                // configuration, whose endpoints are the Sentinels.)
                foreach (var known in string.IsNullOrEmpty(options.ServiceName) ? Source.GetEndPoints() : [])
                {
                    if (!options.EndPoints.Contains(known))
                    {
                        options.EndPoints.Add(known);
                    }
                }
            }
            catch (ArgumentException ex)
            {
                LastAttemptFailed = true;
                LogConnectFailed(logger, "a multiplexer", SecretRedactor.Redact(ex.Message));
                return;
            }

            options.AllowAdmin = true; // INFO and SLOWLOG refuse without it
            options.ClientName = ClientName;

            // No subscription connection: the poller never subscribes.
            options = OwnedConnection.WithoutSubscriptions(options);
            options.AbortOnConnectFail = false;

            // The client's heartbeat wakes the thread pool every second per multiplexer to look for timed-out
            // commands and idle sockets, and reconnects a lost connection; every poll command has its own
            // timeout here, and the keep-alive needs a beat well under a minute. At 1 s it was most of what
            // watching cost an idle app; at 10 s a restarted server is polled again within about 10 s.
            options.HeartbeatInterval = PollingHeartbeat;
            var milliseconds = (int)Math.Clamp(timeout.TotalMilliseconds, 100, int.MaxValue);
            options.ConnectTimeout = milliseconds;
            options.SyncTimeout = milliseconds;
            options.AsyncTimeout = milliseconds;
            try
            {
                var connection = await OwnedConnection.ConnectAsync(options).ConfigureAwait(false);
                LastAttemptFailed = false;
                lock (_gate)
                {
                    if (!_disposed)
                    {
                        _connection = connection;
                        return;
                    }
                }

                await connection.DisposeAsync().ConfigureAwait(false);
            }
#pragma warning disable CA1031 // a connection that cannot be made is logged and tried again later
            catch (Exception ex)
#pragma warning restore CA1031
            {
                LastAttemptFailed = true;
                LogConnectFailed(logger, string.Join(",", options.EndPoints.Select(EndpointText.Of)), SecretRedactor.Redact(ex.Message));
            }
        }
    }
}
