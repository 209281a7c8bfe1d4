using System.Collections.Concurrent;
using System.ComponentModel;
using Microsoft.Extensions.Options;
using MuxWatch.Configuration;

namespace MuxWatch.State;

/// <summary>The timeline of every polled endpoint, by endpoint (<c>host:port</c>).</summary>
/// <remarks>
/// State only: a probe package's server poller hands each poll to <see cref="Tracking.ServerPolls.Apply"/>, which
/// writes the timeline's events and the endpoint's series.
/// </remarks>
[EditorBrowsable(EditorBrowsableState.Never)] // the probe-package contract (docs/public-api.md): for MuxWatch's own packages, not apps
public sealed class ServerTimelines
{
    private readonly IOptions<MuxWatchOptions> _options;

    /// <summary>Timelines kept for the retention of <paramref name="options"/>.</summary>
    internal ServerTimelines(IOptions<MuxWatchOptions> options)
    {
        _options = options;
    }
    private readonly ConcurrentDictionary<string, ServerTimeline> _byEndpoint = new(StringComparer.OrdinalIgnoreCase);

    /// <summary>The timeline of <paramref name="endpoint"/>, created on first use.</summary>
    public ServerTimeline GetOrAdd(string endpoint) =>
        _byEndpoint.GetOrAdd(endpoint, static (name, retention) => new ServerTimeline(name, retention), _options.Value.ServerTimelineRetention);

    /// <summary>The timeline of <paramref name="endpoint"/>, or null when it is not polled.</summary>
    public ServerTimeline? Find(string? endpoint) =>
        endpoint is not null && _byEndpoint.TryGetValue(endpoint, out var timeline) ? timeline : null;

    /// <summary>Every timeline, by endpoint.</summary>
    public IReadOnlyList<ServerTimeline> All => [.. _byEndpoint.Values.OrderBy(t => t.Endpoint, StringComparer.Ordinal)];

    /// <summary>
    /// The promotions that replaced <paramref name="primary"/> (a replica's role change naming it as its
    /// peer) over [<paramref name="from"/>, <paramref name="to"/>]: a failover lives on the promoted node's
    /// timeline, while the failed node's own answers no poll.
    /// </summary>
    internal IReadOnlyList<Model.ServerEvent> PromotionsReplacing(string primary, DateTimeOffset from, DateTimeOffset to, DateTimeOffset now)
    {
        List<Model.ServerEvent> found = [];
        foreach (var timeline in _byEndpoint.Values)
        {
            if (!string.Equals(timeline.Endpoint, primary, StringComparison.OrdinalIgnoreCase))
            {
                found.AddRange(timeline.Overlapping(from, to, now).Where(e => e.Kind == Model.ServerEventKind.RoleChange
                    && string.Equals(e.Peer, primary, StringComparison.OrdinalIgnoreCase)));
            }
        }

        return found;
    }

    /// <summary>
    /// How one multiplexer's servers (<paramref name="endpoints"/>) stand against what their cluster's nodes
    /// last listed (<c>CLUSTER NODES</c>). <see cref="ClusterMembership.Left"/>: the servers no other node
    /// lists, when at least one other node said which nodes it knows (naming itself as the client names
    /// it). A killed node stays (the others list it, failed, until it is forgotten), so it shows
    /// disconnected; a node removed from the cluster (<c>redis-cli --cluster del-node</c>, <c>CLUSTER
    /// FORGET</c>) goes, though the client may still hold it (2.x never forgets a server).
    /// <see cref="ClusterMembership.Unknown"/>: nodes listed that are not among the servers (added to the
    /// cluster since the client last read it). Both empty when no server is a cluster node.
    /// </summary>
    public ClusterMembership FollowCluster(IReadOnlyList<string> endpoints)
    {
        ArgumentNullException.ThrowIfNull(endpoints);
        HashSet<string>? listed = null;
        var listers = 0;
        foreach (var endpoint in endpoints)
        {
            if (Listing(endpoint) is not { } members)
            {
                continue;
            }

            listers++;
            listed ??= new HashSet<string>(StringComparer.OrdinalIgnoreCase);
            foreach (var member in members)
            {
                if (!string.Equals(member, endpoint, StringComparison.OrdinalIgnoreCase))
                {
                    listed.Add(member); // a node listing itself vouches for nothing (a reset node lists only itself)
                }
            }
        }

        if (listed is null)
        {
            return ClusterMembership.None;
        }

        HashSet<string>? left = null;
        foreach (var endpoint in endpoints)
        {
            // Its own list aside, is there another node that said what it knows? Then it had to list this one.
            var othersListing = Listing(endpoint) is null ? listers : listers - 1;
            if (othersListing > 0 && !listed.Contains(endpoint))
            {
                (left ??= new HashSet<string>(StringComparer.OrdinalIgnoreCase)).Add(endpoint);
            }
        }

        listed.ExceptWith(endpoints);
        return new ClusterMembership(left ?? (IReadOnlySet<string>)ClusterMembership.None.Left, listed);
    }

    /// <summary>
    /// A node's list of members, when it names itself as the client names it: behind NAT or an announced
    /// address a node lists addresses the client does not use, and such a list proves nothing about them.
    /// </summary>
    private IReadOnlySet<string>? Listing(string endpoint) =>
        Find(endpoint)?.ClusterMembers is { } members && members.Contains(endpoint) ? members : null;

    /// <summary>Every timeline, in no order, without a copy (the witness thread walks them every second).</summary>
    internal IEnumerable<ServerTimeline> Unordered => _byEndpoint.Values;

    /// <summary>Stops keeping <paramref name="endpoint"/> (its multiplexer went away).</summary>
    public void Remove(string endpoint) => _byEndpoint.TryRemove(endpoint, out _);
}
