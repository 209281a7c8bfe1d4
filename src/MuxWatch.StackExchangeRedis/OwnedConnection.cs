using MuxWatch.Sources;
using StackExchange.Redis;

namespace MuxWatch.StackExchangeRedis;

/// <summary>The multiplexers MuxWatch creates itself (sidecar targets, connection strings given to AddMultiplexer).</summary>
internal static partial class OwnedConnection
{
    /// <summary>The client name MuxWatch's own connections show in <c>CLIENT LIST</c>, unless the connection string names one.</summary>
    public const string ClientName = "muxwatch";

    /// <summary>Parses a StackExchange.Redis configuration string; throws <see cref="ArgumentException"/> naming what is wrong (never the password).</summary>
    public static ConfigurationOptions Parse(string connectionString)
    {
        if (string.IsNullOrWhiteSpace(connectionString))
        {
            throw new ArgumentException("it is empty");
        }

        ConfigurationOptions options;
        try
        {
            options = ConfigurationOptions.Parse(connectionString);
        }
        catch (Exception ex) when (ex is ArgumentException or FormatException or NotSupportedException)
        {
            throw new ArgumentException(Reading.SecretRedactor.Redact(ex.Message), ex);
        }

        if (options.EndPoints.Count == 0)
        {
            throw new ArgumentException("it names no endpoint (host:port)");
        }

        // Never fail or wait on a Redis that is down: connect in the background and keep retrying.
        options.AbortOnConnectFail = false;
        options.ClientName ??= ClientName;
        return options;
    }

    /// <summary>
    /// The default commands less those that open or use the client's subscription connection. One map for
    /// every connection: each map the client builds holds a table of its commands' bytes (3.3 KB; 1.7 MB
    /// for 500 targets when each had its own).
    /// </summary>
    private static readonly CommandMap WithoutSubscribing = CommandMap.Create(
        new HashSet<string>(StringComparer.OrdinalIgnoreCase) { "SUBSCRIBE", "PSUBSCRIBE", "SSUBSCRIBE", "UNSUBSCRIBE", "PUNSUBSCRIBE", "SUNSUBSCRIBE" },
        available: false);

    /// <summary>
    /// A copy of <paramref name="options"/> whose multiplexer opens no subscription connection, for the
    /// poller's connection, which never subscribes, and a target's own when it is one standalone server
    /// (<see cref="ConnectTargetAsync"/>): the client otherwise opens a second socket per server, with its own
    /// buffers (about 20 of the 46 KB a multiplexer costs). Left as it is for a Sentinel configuration (the
    /// client follows the primary through Sentinel's pub/sub) and when the configuration renames commands (a
    /// command map cannot be merged, and theirs must stay).
    /// </summary>
    public static ConfigurationOptions WithoutSubscriptions(ConfigurationOptions options)
    {
        ArgumentNullException.ThrowIfNull(options);
        var copy = Copy(options);
        if (!string.IsNullOrEmpty(options.ServiceName) || !ReferenceEquals(options.CommandMap, CommandMap.Default))
        {
            return copy;
        }

        copy.CommandMap = WithoutSubscribing;
        copy.ConfigurationChannel = string.Empty; // its broadcasts are pub/sub too
        return copy;
    }

    /// <summary>
    /// MuxWatch's own connection to a target (a sidecar target, a connection string given to
    /// <c>AddMultiplexer</c>). It carries only MuxWatch's PINGs and polls, so when the target is one
    /// standalone server it opens no subscription connection: a second socket per server with its own
    /// buffers (about 25 MB of the resident set and 500 sockets of a sidecar at 500 servers,
    /// docs/benchmarks.md). What the target is shows only once connected: a cluster (or several endpoints,
    /// or a Sentinel configuration) is connected afresh with the subscription connection, as before
    /// (without it, ClusterFailoverLiveTests once missed a promotion's role change on the timeline in 2 of
    /// 7 runs, 0 of 5 with it, for a reason not found). A server not reached at start keeps
    /// the lean connection: connecting again would double a dead server's wait. <paramref name="subscribes"/>
    /// keeps it in any case (MuxWatch subscribes through it to measure the pub/sub lag).
    /// </summary>
    public static async Task<IConnectionMultiplexer> ConnectTargetAsync(ConfigurationOptions options, bool subscribes)
    {
        ArgumentNullException.ThrowIfNull(options);
        var lean = WithoutSubscriptions(options);
        if (subscribes || ReferenceEquals(lean.CommandMap, options.CommandMap) || options.EndPoints.Count != 1)
        {
            return await ConnectAsync(options).ConfigureAwait(false);
        }

        var multiplexer = await ConnectAsync(lean).ConfigureAwait(false);
        if (!multiplexer.IsConnected || multiplexer.GetServers() is [{ ServerType: ServerType.Standalone }])
        {
            return multiplexer;
        }

        ConnectFailures.Remove(multiplexer);
        await multiplexer.DisposeAsync().ConfigureAwait(false);
        return await ConnectAsync(options).ConfigureAwait(false);
    }

    public static async Task<IConnectionMultiplexer> ConnectAsync(ConfigurationOptions options)
    {
        // Its own exceptions, during connect and later reconnects, are MuxWatch's, not the app's. The
        // connect log is the only place the client names why a first connection failed (a refused
        // password raises no event: it fails before any handler can be attached; measured on 2.6.90 and 3.4.35).
        using var log = new StringWriter(System.Globalization.CultureInfo.InvariantCulture);
        using (ProbeScope.Enter())
        {
            var multiplexer = await ConnectionMultiplexer.ConnectAsync(MuxWatchOwnConnections.Applied(Copy(options)), log).ConfigureAwait(false);
            if (!multiplexer.IsConnected && FailureTypeIn(log.ToString()) is { } failureType)
            {
                ConnectFailures.AddOrUpdate(multiplexer, failureType);
            }

            return multiplexer;
        }
    }

    /// <summary>
    /// Connects afresh once with <paramref name="options"/> and returns why the server refused it, as the
    /// client's failure type of the refusal (never a secret), or null when it connected or no refusal was
    /// recorded; the connection is closed at once. Neither the connect log nor the ConnectionFailed event
    /// is reliable for this: in a warm process the handshake's refusal is often recorded after ConnectAsync
    /// returned and its log handler was removed, and raised to no handler at all (measured, 30 connects
    /// with a wrong password: 13 of 30 on 3.4.35 and 7 of 30 on 2.6.90 named it in neither). What the
    /// client always keeps is the refusal as the connection's last exception, which a command on a
    /// fail-fast connection carries at once as a typed inner <see cref="RedisConnectionException"/>
    /// (30 of 30 on both, at most one retry 50 ms later). One socket, no subscription connection, no retry:
    /// bounded by <paramref name="connectTimeout"/> (or the configuration's, if longer) and half a second.
    /// </summary>
    public static async Task<string?> DiagnoseAsync(ConfigurationOptions options, TimeSpan connectTimeout)
    {
        ArgumentNullException.ThrowIfNull(options);
        var copy = WithoutSubscriptions(options);
        copy.AbortOnConnectFail = false;
        copy.ConnectRetry = 1;
        copy.ConnectTimeout = Math.Max(copy.ConnectTimeout, (int)connectTimeout.TotalMilliseconds);
        copy.BacklogPolicy = BacklogPolicy.FailFast; // a command while not connected fails at once, with why
        using (ProbeScope.Enter())
        {
            var multiplexer = await ConnectionMultiplexer.ConnectAsync(MuxWatchOwnConnections.Applied(copy)).ConfigureAwait(false);
            await using (multiplexer.ConfigureAwait(false))
            {
                for (var attempt = 0; attempt < RefusalChecks && !multiplexer.IsConnected; attempt++)
                {
                    try
                    {
                        await multiplexer.GetServer(multiplexer.GetEndPoints()[0]).PingAsync().ConfigureAwait(false);
                        return null;
                    }
                    catch (RedisConnectionException ex) when (RefusalIn(ex) is { } failureType)
                    {
                        return failureType;
                    }
                    catch (Exception ex) when (ex is RedisException or TimeoutException)
                    {
                        // Not recorded yet: the handshake's reply is still being read.
                    }

                    await Task.Delay(RefusalCheckPause).ConfigureAwait(false);
                }

                return null;
            }
        }
    }

    /// <summary>
    /// The least a diagnosing connect waits, whatever the configured <c>connectTimeout</c>: it runs in the
    /// background, so a short timeout would only lose a slow handshake's refusal.
    /// </summary>
    public static readonly TimeSpan DiagnosisConnectTimeout = TimeSpan.FromSeconds(5);

    private const int RefusalChecks = 10;
    private static readonly TimeSpan RefusalCheckPause = TimeSpan.FromMilliseconds(50);

    /// <summary>
    /// The failure type of the connection's own failure inside "no connection is available" (that outer one
    /// says nothing); null for a TLS handshake the certificate check failed, which the client calls an
    /// <c>AuthenticationFailure</c> too: made from a configuration string, this connection lacks an app's own
    /// validation callback, so its certificate verdict says nothing of the app's (and MuxWatch's own
    /// targets name a refused certificate through their <see cref="TlsCheck"/>).
    /// </summary>
    private static string? RefusalIn(RedisConnectionException unavailable)
    {
        for (var inner = unavailable.InnerException; inner is not null; inner = inner.InnerException)
        {
            if (inner is RedisConnectionException { FailureType: var failureType } failure)
            {
                return IsTlsHandshakeFailure(failure.InnerException) ? null : failureType.ToString();
            }
        }

        return null;
    }

    /// <summary>
    /// <paramref name="options"/>, cloned whole: 2.6.90's <c>Clone()</c> drops <c>HeartbeatInterval</c>
    /// (10 s in, the default 1 s out; measured, 2.7 and later keep it), which made the polling connection
    /// wake an idle app's thread pool every second on that client.
    /// </summary>
    internal static ConfigurationOptions Copy(ConfigurationOptions options)
    {
        var copy = options.Clone();
        copy.HeartbeatInterval = options.HeartbeatInterval;
        return copy;
    }

    /// <summary>Why a multiplexer MuxWatch made could not connect at first, as the client's failure type (never a secret), or null.</summary>
    public static string? ConnectFailure(IConnectionMultiplexer multiplexer) =>
        ConnectFailures.TryGetValue(multiplexer, out var failureType) ? failureType : null;

    /// <summary>What an <c>AuthenticationFailure</c> that was the TLS handshake's says (the certificate check of whoever made the connection refused it).</summary>
    public const string TlsHandshakeRefused = "AuthenticationFailure: the TLS handshake failed (a certificate was refused); check the server's certificate and the CA it is checked against";

    /// <summary>True when <paramref name="exception"/> (a connection failure's) was a TLS handshake that failed, which the client calls an AuthenticationFailure too.</summary>
    public static bool IsTlsHandshakeFailure(Exception? exception)
    {
        for (var inner = exception; inner is not null; inner = inner.InnerException)
        {
            if (inner is System.Security.Authentication.AuthenticationException)
            {
                return true;
            }
        }

        return false;
    }

    /// <summary>In words, what a failure type means for the person who configured the connection.</summary>
    public static string Describe(string failureType) => failureType switch
    {
        "AuthenticationFailure" => "AuthenticationFailure: the server refused the credentials; check the password (and user) in the connection string",
        "UnableToResolvePhysicalConnection" => "UnableToResolvePhysicalConnection: the host name could not be resolved",
        _ => $"{failureType}: a connection could not be made",
    };

    private static readonly System.Runtime.CompilerServices.ConditionalWeakTable<IConnectionMultiplexer, string> ConnectFailures = [];

    /// <summary>The first failure type the connect log names: "Connection failed: host:port (Interactive, AuthenticationFailure)".</summary>
    private static string? FailureTypeIn(string log) => FailedConnection().Match(log) is { Success: true } match ? match.Groups["type"].Value : null;

    [System.Text.RegularExpressions.GeneratedRegex(@"Connection failed: [^\r\n(]*\((?:Interactive|Subscription), (?<type>[A-Za-z]{3,48})\)")]
    private static partial System.Text.RegularExpressions.Regex FailedConnection();
}
