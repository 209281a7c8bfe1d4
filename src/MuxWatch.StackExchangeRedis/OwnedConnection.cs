using MuxWatch.Probing;
using StackExchange.Redis;

namespace MuxWatch.StackExchangeRedis;

/// <summary>The multiplexers MuxWatch creates itself (sidecar targets, connection strings given to AddMultiplexer).</summary>
internal static class OwnedConnection
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
            throw new ArgumentException(Timeouts.SecretRedactor.Redact(ex.Message), ex);
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

    public static async Task<IConnectionMultiplexer> ConnectAsync(ConfigurationOptions options)
    {
        // Its own exceptions, during connect and later reconnects, are MuxWatch's, not the app's.
        using (ProbeScope.Enter())
        {
            return await ConnectionMultiplexer.ConnectAsync(options.Clone()).ConfigureAwait(false);
        }
    }
}
