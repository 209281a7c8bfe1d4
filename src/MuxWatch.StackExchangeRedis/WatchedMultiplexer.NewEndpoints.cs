using StackExchange.Redis;

namespace MuxWatch.StackExchangeRedis;

internal sealed partial class WatchedMultiplexer
{
    /// <summary>
    /// Gives the endpoints that one cycle finds for the first time, across every watched multiplexer (a sidecar's 500
    /// targets all connect within its first seconds), the series they get at once, a family at a time rather than an
    /// endpoint at a time (<see cref="EndpointSeries.MakeFamilyByFamily"/> says why); their sampling then finds them made.
    /// One new endpoint alone is left to its sampling, which makes the same series.
    /// </summary>
    internal static void MakeNewEndpointsSeries(IReadOnlyList<(WatchedMultiplexer Watched, IServer[] Servers)> cycle)
    {
        List<(WatchedMultiplexer Watched, string Endpoint)>? fresh = null;
        foreach (var (watched, servers) in cycle)
        {
            foreach (var server in servers)
            {
                // A multiplexer's servers are distinct; were one listed twice, its series would be looked up, not made twice.
                var endpoint = EndpointText.Of(server.EndPoint);
                if (!watched._disposed && !watched._endpoints.ContainsKey(endpoint))
                {
                    (fresh ??= []).Add((watched, endpoint));
                }
            }
        }

        if (fresh is not { Count: > 1 })
        {
            return;
        }

        foreach (var group in fresh.GroupBy(entry => entry.Watched._metrics))
        {
            var metrics = group.Key;
            metrics.InitializeEndpoints([.. group.Select(entry => (entry.Watched.Name, entry.Endpoint, entry.Watched._eventEndpoints.Admit(entry.Endpoint), entry.Watched.TimeoutSourceNames))]);
            EndpointSeries.MakeFamilyByFamily(metrics, [.. group.Select(entry => (entry.Watched.Name, entry.Endpoint, entry.Watched._registration.Owned))]);
        }
    }

    /// <summary>Where this multiplexer's timeouts come from: the probe's only for one MuxWatch made (a sidecar target), an app's also from its own calls.</summary>
    private IReadOnlyList<string> TimeoutSourceNames => _registration.Owned ? ProbeOnly : AppAndProbe;
}
