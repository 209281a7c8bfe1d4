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

    /// <summary>The commands that open or use the client's subscription connection.</summary>
    private static readonly HashSet<string> SubscribingCommands = new(StringComparer.OrdinalIgnoreCase) { "SUBSCRIBE", "PSUBSCRIBE", "SSUBSCRIBE", "UNSUBSCRIBE", "PUNSUBSCRIBE", "SUNSUBSCRIBE" };

    /// <summary>
    /// A copy of <paramref name="options"/> whose multiplexer opens no subscription connection, for the
    /// poller's connection, which never subscribes: the client otherwise opens a second socket per server,
    /// with its own buffers (about 20 of the 46 KB a multiplexer costs). Left as it is for a Sentinel
    /// configuration (the client follows the primary through Sentinel's pub/sub) and when the configuration
    /// renames commands (a command map cannot be merged, and theirs must stay). Not (yet) for a sidecar
    /// target's own connection: tried, and ClusterFailoverLiveTests then missed the promotion's role change
    /// on the timeline in 2 of 7 runs (0 of 5 with the subscription connection); why is not known yet.
    /// </summary>
    public static ConfigurationOptions WithoutSubscriptions(ConfigurationOptions options)
    {
        ArgumentNullException.ThrowIfNull(options);
        var copy = Copy(options);
        if (!string.IsNullOrEmpty(options.ServiceName) || !ReferenceEquals(options.CommandMap, CommandMap.Default))
        {
            return copy;
        }

        copy.CommandMap = CommandMap.Create(SubscribingCommands, available: false);
        copy.ConfigurationChannel = string.Empty; // its broadcasts are pub/sub too
        return copy;
    }

    public static async Task<IConnectionMultiplexer> ConnectAsync(ConfigurationOptions options)
    {
        // Its own exceptions, during connect and later reconnects, are MuxWatch's, not the app's. The
        // connect log is the only place the client names why a first connection failed (a refused
        // password raises no event: it fails before any handler can be attached; measured on 2.6.90 and 3.4.35).
        using var log = new StringWriter(System.Globalization.CultureInfo.InvariantCulture);
        using (ProbeScope.Enter())
        {
            var multiplexer = await ConnectionMultiplexer.ConnectAsync(Copy(options), log).ConfigureAwait(false);
            if (!multiplexer.IsConnected && FailureTypeIn(log.ToString()) is { } failureType)
            {
                ConnectFailures.AddOrUpdate(multiplexer, failureType);
            }

            return multiplexer;
        }
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

    /// <summary>In words, what a failure type means for the person who configured the connection.</summary>
    public static string Describe(string failureType) => failureType switch
    {
        "AuthenticationFailure" => "AuthenticationFailure: the server refused the credentials; check the password (and user) in the connection string",
        "UnableToResolvePhysicalConnection" => "UnableToResolvePhysicalConnection: the host name could not be resolved",
        _ => $"{failureType}: the first connection could not be made",
    };

    private static readonly System.Runtime.CompilerServices.ConditionalWeakTable<IConnectionMultiplexer, string> ConnectFailures = [];

    /// <summary>The first failure type the connect log names: "Connection failed: host:port (Interactive, AuthenticationFailure)".</summary>
    private static string? FailureTypeIn(string log) => FailedConnection().Match(log) is { Success: true } match ? match.Groups["type"].Value : null;

    [System.Text.RegularExpressions.GeneratedRegex(@"Connection failed: [^\r\n(]*\((?:Interactive|Subscription), (?<type>[A-Za-z]{3,48})\)")]
    private static partial System.Text.RegularExpressions.Regex FailedConnection();
}
