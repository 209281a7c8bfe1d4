using StackExchange.Redis;

namespace MuxWatch.StackExchangeRedis;

/// <summary>
/// The connections MuxWatch makes itself (a sidecar target's, <c>AddMultiplexer(name, connectionString)</c>'s, the server
/// poller's, the doctor's), never the app's: what a host process may change in them before they connect.
/// </summary>
public static class MuxWatchOwnConnections
{
    /// <summary>
    /// Called, when set, with a copy of the options of each connection MuxWatch is about to make (its own copy: the app's
    /// configuration is never touched), and returns the options to connect with. Process-wide; set it once, at start. The
    /// sidecar and <c>muxwatch doctor</c> put a guard there (the client's <c>Tunnel</c>, StackExchange.Redis 2.7 and
    /// later) that drops a connection whose reply is nested deep enough to end the process in the client's recursion.
    /// </summary>
    public static Func<ConfigurationOptions, ConfigurationOptions>? Configure { get; set; }

    /// <summary><paramref name="options"/> with <see cref="Configure"/> applied.</summary>
    internal static ConfigurationOptions Applied(ConfigurationOptions options) => Configure is { } configure ? configure(options) : options;
}
