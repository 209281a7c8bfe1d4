using System.Collections.Concurrent;
using Microsoft.Extensions.Logging;
using StackExchange.Redis;

namespace MuxWatch.StackExchangeRedis;

/// <summary>
/// The servers a watched multiplexer no longer probes: a node that left its cluster (no other node lists it; the
/// client may still hold it) and a server the client has not listed for <see cref="MissingEndpoints.Grace"/> (it
/// re-read its cluster). Their series go when they go, and again every <see cref="SweepInterval"/>: while the client holds a node that left, since a PING's
/// failure or a connection event for it can write a series back (seen in CI: a removed node's zero-initialized timeout
/// counters lingered), and for <see cref="SweepAfterDropped"/> after the client let go of one (what was in flight).
/// </summary>
/// <remarks>Not every cycle: a removal walks every series of the families. Nothing gone costs no allocation.</remarks>
internal sealed partial class EndpointDepartures(string multiplexer, MultiplexerMetrics metrics, TimeProvider time, ILogger logger)
{
    internal static readonly TimeSpan SweepInterval = TimeSpan.FromSeconds(10);
    internal static readonly TimeSpan SweepAfterDropped = TimeSpan.FromMinutes(1);

    private readonly Dictionary<string, (DateTimeOffset Went, DateTimeOffset Swept)> _gone = new(StringComparer.OrdinalIgnoreCase);
    private readonly MissingEndpoints _missing = new();
    private readonly Lock _gate = new();

    /// <summary>
    /// Follows one selection: <paramref name="watched"/> (the endpoints sampled so far) loses those not in
    /// <paramref name="selected"/>, and their series go (after <see cref="MissingEndpoints"/>' grace); <paramref name="left"/> names
    /// the nodes that left their cluster, <paramref name="unheld"/> the cluster's members the client does not hold.
    /// </summary>
    public void Follow(IServer[] selected, IReadOnlyCollection<string> left, IReadOnlyCollection<string> unheld, ConcurrentDictionary<string, WatchedEndpoint> watched)
    {
        lock (_gate)
        {
            // The common case: nothing left, nothing swept, no watched endpoint beyond the selection (one that went
            // while another came shows here the cycle after the newcomer was sampled).
            if (left.Count == 0 && _gone.Count == 0 && !_missing.AnyHeld && watched.Count <= selected.Length)
            {
                return;
            }

            var now = time.GetUtcNow();
            var names = new HashSet<string>(selected.Select(server => EndpointText.Of(server.EndPoint)), StringComparer.OrdinalIgnoreCase);
            _missing.Forget(endpoint => names.Contains(endpoint) || !watched.ContainsKey(endpoint));
            foreach (var (endpoint, _) in watched)
            {
                if (names.Contains(endpoint))
                {
                    continue;
                }

                // Missing from the client's list: held for the grace (the list is not steady while the client re-reads its
                // cluster), the longer one while its cluster still lists it, and not at all once it left its cluster.
                var leftCluster = left.Contains(endpoint);
                if ((leftCluster || _missing.MissingLongEnough(endpoint, now, unheld.Contains(endpoint))) && watched.TryRemove(endpoint, out _))
                {
                    if (leftCluster)
                    {
                        LogLeftCluster(logger, endpoint, multiplexer);
                    }

                    Sweep(endpoint, now, now);
                }
            }

            foreach (var endpoint in left)
            {
                if (!_gone.ContainsKey(endpoint))
                {
                    Sweep(endpoint, now, now); // left before it was ever sampled: a connection event may have named it
                }
            }

            foreach (var (endpoint, (went, swept)) in _gone.ToList())
            {
                if (names.Contains(endpoint) || (!left.Contains(endpoint) && now - went >= SweepAfterDropped))
                {
                    _gone.Remove(endpoint); // selected again (sampled anew), or let go of by the client long enough ago
                }
                else if (now - swept >= SweepInterval)
                {
                    Sweep(endpoint, went, now);
                }
            }
        }
    }

    private void Sweep(string endpoint, DateTimeOffset went, DateTimeOffset now)
    {
        _gone[endpoint] = (went, now);
        metrics.RemoveEndpoint(multiplexer, endpoint);
    }

    [LoggerMessage(EventId = 43, Level = LogLevel.Information,
        Message = "Node {Endpoint} of multiplexer {Multiplexer} left its cluster (no other node lists it): no longer probed, polled or exported")]
    private static partial void LogLeftCluster(ILogger logger, string endpoint, string multiplexer);
}
