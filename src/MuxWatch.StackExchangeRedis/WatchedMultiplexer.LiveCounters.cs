using MuxWatch.Model;

namespace MuxWatch.StackExchangeRedis;

/// <summary>The live counters a caught timeout carries: the connection and its queues as the probe saw them over the wait.</summary>
internal sealed partial class WatchedMultiplexer
{
    /// <summary>
    /// How long after a catch the counters read "now" still describe it. A starved pool runs the pipeline late (seen: 11 s
    /// after the catch, by which time 3.x had dropped the connection its starved pool could not read, and the timeout
    /// was named connection-loss on a connection that was up through its wait): past this, only what the probe sampled
    /// up to the catch counts.
    /// </summary>
    internal static readonly TimeSpan ReadPromptlyWithin = TimeSpan.FromSeconds(1);

    /// <summary>
    /// The live counters of <paramref name="endpoint"/> as of <paramref name="caught"/> (when the failure was caught):
    /// the highest qs and qu the probe sampled from <paramref name="since"/> (when the request started waiting) to the
    /// catch, with the counters read now when now is within <see cref="ReadPromptlyWithin"/> of the catch; whether the
    /// connection was up, read now when prompt, else as the probe last sampled it at or before the catch (up when none
    /// was: nothing is claimed down that was not seen down); and when the probe last found it up at or before the catch.
    /// </summary>
    public LiveCounters? LiveCountersOf(string endpoint, DateTimeOffset now, DateTimeOffset? since, DateTimeOffset caught)
    {
        if (Multiplexer is not { } multiplexer)
        {
            return null;
        }

        var prompt = now - caught <= ReadPromptlyWithin;
        foreach (var server in multiplexer.GetServers())
        {
            if (EndpointText.Of(server.EndPoint) == endpoint)
            {
                var counters = server.GetCounters().Interactive;
                var (sent, unsent) = prompt ? ((long)counters.SentItemsAwaitingResponse, (long)counters.PendingUnsentItems) : (0L, 0L);
                var connected = prompt ? server.IsConnected : true;
                DateTimeOffset? seenConnected = null;
                if (_endpoints.TryGetValue(endpoint, out var watched))
                {
                    var (maxSent, maxUnsent) = watched.Queues.MaxBetween(since ?? caught, caught + ReadPromptlyWithin);
                    (sent, unsent) = (Math.Max(sent, maxSent), Math.Max(unsent, maxUnsent));
                    seenConnected = watched.Queues.LastConnected(caught) ?? (watched.LastSeenConnected <= caught ? watched.LastSeenConnected : null);
                    connected = prompt ? connected : watched.Queues.ConnectedAsOf(caught) ?? true;
                }

                return new LiveCounters(endpoint, connected, sent, unsent, now) { LastSeenConnected = seenConnected };
            }
        }

        return null;
    }
}
