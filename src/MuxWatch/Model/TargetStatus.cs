namespace MuxWatch.Model;

/// <summary>What <c>/api/targets</c> says of one watched multiplexer. Secrets are redacted before they get here.</summary>
/// <param name="Name">The registered name (the <c>multiplexer</c> label).</param>
/// <param name="State">connecting, connected, disconnected, failed (could not be created or resolved), disposed.</param>
/// <param name="Owned">True when MuxWatch created the multiplexer (a sidecar target, or a connection string given to AddMultiplexer).</param>
/// <param name="Configuration">Its configuration string, password removed.</param>
/// <param name="LastProbeSuccess">When an endpoint of it was last probed successfully.</param>
/// <param name="LastError">The latest probe error, redacted, with when it happened.</param>
/// <param name="LastErrorTime">When <paramref name="LastError"/> happened.</param>
/// <param name="ClientVersion">The StackExchange.Redis version the process runs.</param>
/// <param name="Servers">Its server endpoints.</param>
public sealed record TargetStatus(
    string Name,
    string State,
    bool Owned,
    string? Configuration,
    DateTimeOffset? LastProbeSuccess,
    string? LastError,
    DateTimeOffset? LastErrorTime,
    string? ClientVersion,
    IReadOnlyList<TargetServerStatus> Servers)
{
    /// <summary>
    /// True when MuxWatch found it by itself (a multiplexer a library or the app connected, watched without
    /// <c>AddMultiplexer</c>; <c>MuxWatch:DiscoverMultiplexers</c>).
    /// </summary>
    public bool Discovered { get; init; }

    /// <summary>
    /// For a discovered multiplexer, what made it: the library's package (<c>Microsoft.Extensions.Caching.StackExchangeRedis</c>)
    /// or the app's type and method that connected it; null when unknown.
    /// </summary>
    public string? MadeBy { get; init; }
}
