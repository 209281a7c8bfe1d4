namespace MuxWatch.Probing;

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
    IReadOnlyList<TargetServerStatus> Servers);

/// <summary>One server endpoint of a watched multiplexer.</summary>
/// <param name="Endpoint"><c>host:port</c>.</param>
/// <param name="Connected">Whether its interactive connection is up.</param>
/// <param name="ServerType">Standalone, Cluster, Sentinel, ... as the client reports it.</param>
/// <param name="Version">The Redis version the server reported.</param>
/// <param name="Role"><c>primary</c> or <c>replica</c>.</param>
/// <param name="LastProbeSuccess">When this endpoint was last probed successfully.</param>
public sealed record TargetServerStatus(string Endpoint, bool Connected, string? ServerType, string? Version, string Role, DateTimeOffset? LastProbeSuccess)
{
    /// <summary>How the server polling of this endpoint goes; null when it is not polled (polling off, or not connected yet).</summary>
    public Server.ServerPollingStatus? Polling { get; init; }
}

/// <summary>Reports the watched multiplexers, for <c>/api/targets</c>.</summary>
public interface ITargetStatusSource
{
    /// <summary>The status of every watched multiplexer, in registration order.</summary>
    IReadOnlyList<TargetStatus> Targets();
}
