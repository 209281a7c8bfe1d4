using System.Collections.Concurrent;
using Microsoft.Extensions.Options;
using MuxWatch.Configuration;

namespace MuxWatch.State;

/// <summary>The timeline of every polled endpoint, by endpoint (<c>host:port</c>), and a signal when one was polled.</summary>
public sealed class ServerTimelines(IOptions<MuxWatchOptions> options)
{
    private readonly ConcurrentDictionary<string, ServerTimeline> _byEndpoint = new(StringComparer.OrdinalIgnoreCase);

    /// <summary>Raised after a poll completed and updated a timeline (on the poll's thread: handlers must be quick).</summary>
    public event Action<ServerTimeline>? Polled;

    /// <summary>The timeline of <paramref name="endpoint"/>, created on first use.</summary>
    public ServerTimeline GetOrAdd(string endpoint) =>
        _byEndpoint.GetOrAdd(endpoint, static (name, retention) => new ServerTimeline(name, retention), options.Value.ServerTimelineRetention);

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
    public IReadOnlyList<Model.ServerEvent> PromotionsReplacing(string primary, DateTimeOffset from, DateTimeOffset to, DateTimeOffset now)
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

    /// <summary>Stops keeping <paramref name="endpoint"/> (its multiplexer went away).</summary>
    public void Remove(string endpoint) => _byEndpoint.TryRemove(endpoint, out _);

    /// <summary>Says that <paramref name="timeline"/> advanced (a poll of its endpoint completed): the pipeline settles the timeouts waiting on it.</summary>
    public void RaisePolled(ServerTimeline timeline) => Polled?.Invoke(timeline);
}
