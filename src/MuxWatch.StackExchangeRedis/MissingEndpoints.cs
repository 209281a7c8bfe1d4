namespace MuxWatch.StackExchangeRedis;

/// <summary>
/// How long an endpoint that no live multiplexer lists keeps what MuxWatch holds for it (its series, its poller, its
/// server timeline) before it goes: <see cref="Grace"/>, or <see cref="ListedGrace"/> while its cluster still lists it.
/// The client's own list is not steady: the 3.x client retires a cluster node missing from three of its topology reads
/// in a row (<c>PruneAfterMissingGenerations</c>), and one node's partial view (a node just added, still meeting the
/// others) is such a read. Measured on 3.4.35, around an add-node or a del-node: <c>GetServers()</c> left out one or two
/// live members at a time, mostly for a few hundred milliseconds (five of seven, then six, then seven), once for
/// about 30 s, until a sidecar target's client was asked to re-read the cluster (<see cref="ServerSelection.ReconfigureEvery"/>).
/// Let go of at once, such a member lost its server events, which the diagnosis correlates, and every series, which
/// came back empty (CI: a cluster test found five roles of six after a del-node). The same grace keeps a server's
/// history across an app's reconnect (the old multiplexer disposed, the factory's new one not yet taken). A node that
/// left its cluster (no other node lists it) goes at once: that is evidence, not a gap in a list.
/// </summary>
/// <remarks>One instance per place that lets go of endpoints; not thread-safe (each caller already holds its own gate or runs on the one probe loop).</remarks>
internal sealed class MissingEndpoints
{
    /// <summary>For an endpoint its cluster does not list (or not a cluster node): ten probe cycles at the default interval, past an app's reconnect (<see cref="WatchedMultiplexer.RecycledRetry"/>) and the short gaps.</summary>
    internal static readonly TimeSpan Grace = TimeSpan.FromSeconds(10);

    /// <summary>For a member its cluster still lists: two of a sidecar target's re-reads of the cluster (<see cref="ServerSelection.ReconfigureEvery"/>); an app's client re-reads on its own (a <c>MOVED</c>, a reconnect), and no longer than this is its frozen state shown as current.</summary>
    internal static readonly TimeSpan ListedGrace = 2 * ServerSelection.ReconfigureEvery;

    private readonly Dictionary<string, DateTimeOffset> _since = new(StringComparer.OrdinalIgnoreCase);

    /// <summary>True while some endpoint is held (missing, within the grace).</summary>
    public bool AnyHeld => _since.Count > 0;

    /// <summary>
    /// For an endpoint not listed this cycle: true once it has been missing for <see cref="Grace"/> (<see cref="ListedGrace"/>
    /// while <paramref name="listedByCluster"/>): let it go now; false while it is held. The first call starts its grace.
    /// </summary>
    public bool MissingLongEnough(string endpoint, DateTimeOffset now, bool listedByCluster)
    {
        if (!_since.TryGetValue(endpoint, out var since))
        {
            _since[endpoint] = now;
            return false;
        }

        if (now - since < (listedByCluster ? ListedGrace : Grace))
        {
            return false;
        }

        _since.Remove(endpoint);
        return true;
    }

    /// <summary>Ends the grace of every held endpoint that <paramref name="listed"/> holds again, and of one let go of otherwise.</summary>
    public void Forget(Func<string, bool> listed)
    {
        if (_since.Count == 0)
        {
            return;
        }

        foreach (var endpoint in _since.Keys.Where(listed).ToList())
        {
            _since.Remove(endpoint);
        }
    }
}
