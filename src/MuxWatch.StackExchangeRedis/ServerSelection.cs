using Microsoft.Extensions.Logging;
using MuxWatch.State;
using StackExchange.Redis;

namespace MuxWatch.StackExchangeRedis;

/// <summary>
/// Which of one multiplexer's servers MuxWatch probes and polls: the multiplexer's, up to
/// <c>MuxWatch:MaxEndpointsPerMultiplexer</c> in the client's order, less the nodes that left their cluster.
/// A cluster's node list comes from its servers, so one advertising a thousand nodes must not cost
/// thousands of series: the overflow is exported and logged once.
/// </summary>
internal sealed partial class ServerSelection(
    string multiplexer, bool owned, int maxEndpoints, MultiplexerMetrics metrics, ServerTimelines? timelines, TimeProvider time, ILogger logger)
{
    /// <summary>How often a multiplexer MuxWatch made is at most asked to re-read its cluster, when a node it does not hold is listed.</summary>
    internal static readonly TimeSpan ReconfigureEvery = TimeSpan.FromSeconds(30);

    private readonly Lock _gate = new();
    private Task? _reconfiguring;
    private DateTimeOffset _lastReconfigure = DateTimeOffset.MinValue;
    private int _overBudget;

    /// <summary>
    /// The servers to probe and poll now; <paramref name="left"/>: the endpoints gone from their cluster;
    /// <paramref name="unheld"/>: the cluster's members the client does not hold (added, or dropped by the client for a while).
    /// </summary>
    public IServer[] Select(IConnectionMultiplexer connection, out IReadOnlyCollection<string> left, out IReadOnlyCollection<string> unheld)
    {
        var all = InCluster(connection, out left, out unheld);
        var over = all.Length - maxEndpoints;
        if (over <= 0)
        {
            if (Interlocked.Exchange(ref _overBudget, 0) != 0)
            {
                metrics.EndpointsOverBudget.WithLabels(multiplexer).Set(0);
            }

            return all;
        }

        metrics.EndpointsOverBudget.WithLabels(multiplexer).Set(over);
        if (Interlocked.Exchange(ref _overBudget, 1) == 0)
        {
            LogOverBudget(logger, multiplexer, all.Length, maxEndpoints);
        }

        return all[..maxEndpoints];
    }

    /// <summary>
    /// The multiplexer's servers but those that left their cluster (<see cref="ServerTimelines.FollowCluster"/>):
    /// the client may hold a server for ever (2.x never forgets one), so a node removed from the cluster would otherwise stay probed and
    /// exported for ever. A node the cluster added that the client does not hold yet: a multiplexer MuxWatch
    /// made is asked to re-read the cluster (at most every <see cref="ReconfigureEvery"/>); an app's is never
    /// reconfigured, and shows it once the client does.
    /// </summary>
    private IServer[] InCluster(IConnectionMultiplexer connection, out IReadOnlyCollection<string> left, out IReadOnlyCollection<string> unheld)
    {
        left = [];
        unheld = [];
        var all = connection.GetServers();
        if (timelines is null || !AnyClusterNode(all))
        {
            return all; // nothing to follow: the common case costs no allocation
        }

        var endpoints = new string[all.Length];
        for (var i = 0; i < all.Length; i++)
        {
            endpoints[i] = EndpointText.Of(all[i].EndPoint);
        }

        var membership = timelines.FollowCluster(endpoints);
        unheld = membership.Unknown;
        if (membership.Unknown.Count > 0 && owned)
        {
            ReconfigureOwned(connection, membership.Unknown.Count);
        }

        if (membership.Left.Count == 0)
        {
            return all;
        }

        left = membership.Left;
        return Without(all, endpoints, membership.Left);
    }

    /// <summary>
    /// <paramref name="all"/> less the servers whose endpoint is in <paramref name="left"/>. A method of its own: a lambda
    /// over <see cref="InCluster"/>'s locals made its closure at every call, the common case's too (one allocation per
    /// multiplexer per probe cycle: 500 a second in a 500-endpoint sidecar).
    /// </summary>
    private static IServer[] Without(IServer[] all, string[] endpoints, IReadOnlyCollection<string> left) =>
        [.. all.Where((_, i) => !left.Contains(endpoints[i]))];

    private static bool AnyClusterNode(IServer[] servers)
    {
        foreach (var server in servers)
        {
            if (server.ServerType == ServerType.Cluster)
            {
                return true;
            }
        }

        return false;
    }

    private void ReconfigureOwned(IConnectionMultiplexer connection, int unknown)
    {
        var now = time.GetUtcNow();
        lock (_gate)
        {
            if (_reconfiguring is { IsCompleted: false } || now - _lastReconfigure < ReconfigureEvery)
            {
                return;
            }

            _lastReconfigure = now;
            LogReconfiguring(logger, multiplexer, unknown);

            // Off the loop, and observed: the client re-reads CLUSTER NODES and connects to the new nodes.
            _reconfiguring = connection.ConfigureAsync();
            FireAndForget.Observe(_reconfiguring);
        }
    }

    [LoggerMessage(EventId = 42, Level = LogLevel.Warning,
        Message = "Multiplexer {Multiplexer} knows {Endpoints} endpoints; only the first {Budget} are probed and polled (MuxWatch:MaxEndpointsPerMultiplexer)")]
    private static partial void LogOverBudget(ILogger logger, string multiplexer, int endpoints, int budget);

    [LoggerMessage(EventId = 44, Level = LogLevel.Information,
        Message = "The cluster of multiplexer {Multiplexer} lists {Unknown} node(s) it does not hold: asking it to re-read the cluster")]
    private static partial void LogReconfiguring(ILogger logger, string multiplexer, int unknown);
}
