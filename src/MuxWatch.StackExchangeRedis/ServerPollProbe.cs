using System.Collections.Concurrent;
using Microsoft.Extensions.Logging;
using Microsoft.Extensions.Logging.Abstractions;
using Microsoft.Extensions.Options;
using MuxWatch.Configuration;
using MuxWatch.Export;
using MuxWatch.Pipeline;
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

    // One cycle's bookkeeping (Sample), kept between cycles.
    private readonly HashSet<string> _watchedEndpoints = new(StringComparer.OrdinalIgnoreCase);
    private readonly HashSet<string> _covered = new(StringComparer.OrdinalIgnoreCase);
    private readonly Dictionary<string, TimeSpan> _clientTimeouts = new(StringComparer.OrdinalIgnoreCase);
    private readonly HashSet<string> _leftCluster = new(StringComparer.OrdinalIgnoreCase);
    private readonly HashSet<string> _unheldMembers = new(StringComparer.OrdinalIgnoreCase);
    private readonly List<string> _gone = [];

    /// <summary>The endpoints no watched multiplexer listed in the last cycles, held for <see cref="MissingEndpoints.Grace"/> (<see cref="MissingEndpoints.ListedGrace"/> while their cluster lists them).</summary>
    private readonly MissingEndpoints _missing = new();

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
        // The cycle's bookkeeping is kept from one cycle to the next and cleared (the probe loop never runs this twice at
        // once): made anew, its sets and the list of every poller's endpoint grew to every endpoint each second (issue 52).
        var watchedEndpoints = _watchedEndpoints;
        var covered = _covered;
        var clientTimeouts = _clientTimeouts; // the smallest of those watching each endpoint
        var leftCluster = _leftCluster;
        var unheldMembers = _unheldMembers;
        watchedEndpoints.Clear();
        leftCluster.Clear();
        unheldMembers.Clear();
        covered.Clear();
        clientTimeouts.Clear();
        foreach (var watched in _multiplexers.All)
        {
            if (watched.Multiplexer is not { } multiplexer)
            {
                RetireConnection(watched.Name);
                continue;
            }

            var servers = watched.Servers(multiplexer);
            if (watched.LeftCluster.Count > 0)
            {
                leftCluster.UnionWith(watched.LeftCluster);
            }

            if (watched.UnheldMembers.Count > 0)
            {
                unheldMembers.UnionWith(watched.UnheldMembers);
            }

            var timeout = ClientTimeouts.Of(multiplexer);
            var allCovered = true;
            foreach (var server in servers)
            {
                var endpoint = EndpointText.Of(server.EndPoint);
                watchedEndpoints.Add(endpoint);
                allCovered &= covered.Contains(endpoint);
                if (timeout is { } mine)
                {
                    clientTimeouts[endpoint] = clientTimeouts.TryGetValue(endpoint, out var other) && other < mine ? other : mine;
                }
            }

            if (allCovered)
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
                        foreach (var server in servers)
                        {
                            covered.Add(EndpointText.Of(server.EndPoint)); // being made: the next multiplexer waits for it rather than open another
                        }
                    }

                    continue;
                }

                admin.EnsureHolds(servers, now);
                connection = adminConnection;
            }

            foreach (var server in servers)
            {
                var endpoint = EndpointText.Of(server.EndPoint);
                if (covered.Add(endpoint))
                {
                    if (!_pollers.TryGetValue(endpoint, out var poller))
                    {
                        // A new endpoint: its poller, and the witness's address (a plain connection of MuxWatch's own beside the poller's).
                        var timeline = _timelines.GetOrAdd(endpoint);
                        timeline.WitnessAt(server.EndPoint, TlsHostOf(multiplexer, watched.ConfiguredTlsHost, server.EndPoint), watched.WitnessCertificateCheck);
                        poller = _pollers.GetOrAdd(endpoint, static (_, state) =>
                            new EndpointPoller(state.Probe._polls, state.Timeline, state.Probe._requests, state.Probe._metrics, state.Probe._time, state.Probe._senders), (Probe: this, Timeline: timeline));
                    }

                    poller.StartIfDue(now, connection, server.EndPoint, settings, Cadence.PhaseOf(endpoint, _pollers.Count, settings.ProbeInterval), quiet, stopping);
                }
            }
        }

        var gone = _gone;
        gone.Clear();
        if (_missing.AnyHeld)
        {
            // Guarded: the lambda's closure would otherwise be made every cycle, nothing held the common case.
            _missing.Forget(endpoint => watchedEndpoints.Contains(endpoint) || !_pollers.ContainsKey(endpoint));
        }
        foreach (var (endpoint, poller) in _pollers)
        {
            poller.ClientTimeout = clientTimeouts.TryGetValue(endpoint, out var timeout) ? timeout : null;
            if (!watchedEndpoints.Contains(endpoint) && (leftCluster.Contains(endpoint) || _missing.MissingLongEnough(endpoint, now, unheldMembers.Contains(endpoint))))
            {
                gone.Add(endpoint);
            }
        }

        // An endpoint that no watched multiplexer has listed for the grace (disposed, reconfigured), or that left its
        // cluster, is no longer polled, witnessed, kept or exported. Within the grace it is only not polled: its server
        // events stay on its timeline for the diagnosis (MissingEndpoints says why).
        foreach (var endpoint in gone)
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
}
