namespace MuxWatch.Model;

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
    public ServerPollingStatus? Polling { get; init; }
}
