using System.ComponentModel;

namespace MuxWatch.State;

/// <summary>One multiplexer's servers against what their cluster's nodes list (<see cref="ServerTimelines.FollowCluster"/>).</summary>
/// <param name="Left">Servers the client still holds that the cluster no longer has: no longer probed, polled or exported.</param>
/// <param name="Unknown">Nodes the cluster has that the client does not hold yet.</param>
[EditorBrowsable(EditorBrowsableState.Never)] // the probe-package contract (docs/public-api.md): for MuxWatch's own packages, not apps
public sealed record ClusterMembership(IReadOnlySet<string> Left, IReadOnlySet<string> Unknown)
{
    /// <summary>No server left, none unknown (not a cluster, or not read yet).</summary>
    internal static ClusterMembership None { get; } = new(new HashSet<string>(), new HashSet<string>());
}
