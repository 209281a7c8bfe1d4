using MuxWatch.Model;
using MuxWatch.Pipeline;

namespace MuxWatch.StackExchangeRedis;

/// <summary>
/// Adds the live counters of the endpoint a timeout names, read from the watched multiplexer it came
/// from, before the message rules run. In-process sources only (caught by the hook, or the probe's
/// own): a posted message came from another process, whose counters these are not.
/// </summary>
/// <remarks>
/// The counters are the highest of those read now and those the probe sampled while the request waited
/// (<see cref="TimeoutContext.Waiting"/>): an async timeout can surface after
/// its stall has ended, when the counters read now are back at 0.
/// When several watched multiplexers share the endpoint, the one whose client name the message carries
/// is taken; if that does not decide it, none is.
/// </remarks>
internal sealed class LiveCountersStep(WatchedMultiplexers multiplexers, TimeProvider time) : ITimeoutStep
{
    public TimeoutStepStage Stage => TimeoutStepStage.Enrich;

    public void Apply(TimeoutContext timeout)
    {
        if (!TimeoutSources.IsInProcess(timeout.Observation.Source) || (timeout.Report.Endpoint ?? SoleEndpoint(timeout)) is not { } endpoint)
        {
            return;
        }

        var candidates = multiplexers.All.Where(w => timeout.Multiplexer is null ? w.HasEndpoint(endpoint) : w.Name == timeout.Multiplexer).ToList();
        if (candidates.Count > 1 && timeout.Report.Field("clientName")?.Raw is { } clientName)
        {
            candidates = [.. candidates.Where(w => w.Multiplexer?.ClientName == clientName)];
        }

        if (candidates.Count > 1)
        {
            candidates = ByOrigin(candidates, timeout.Observation.ThrownThrough ?? []);
        }

        if (candidates.Count != 1 || candidates[0].LiveCountersOf(endpoint, time.GetUtcNow(), timeout.Waiting.From, timeout.Observation.Time) is not { } counters)
        {
            return;
        }

        timeout.Multiplexer = candidates[0].Name;
        timeout.LiveCounters = counters;
    }

    /// <summary>
    /// The endpoint of a message that names none (3.x's "The connection was closed before the command could be
    /// written" carries no field at all), when every multiplexer of the process is watched (discovery) and the one
    /// it can have come from (by its origin among several) talks to one server only: it can only have been that one.
    /// Without it the timeout had no endpoint, so no server timeline and no witness: a connection 3.x dropped under a
    /// starved pool, while the server answered MuxWatch's own connection, stayed `connection-loss` (2 of 220 failures
    /// in a live run). With discovery off, an unwatched multiplexer's failure could be taken for the watched one's.
    /// </summary>
    private string? SoleEndpoint(TimeoutContext timeout)
    {
        if (!multiplexers.WatchesEveryMultiplexer)
        {
            return null;
        }

        var candidates = multiplexers.All.Where(w => w.Multiplexer is not null && (timeout.Multiplexer is null || w.Name == timeout.Multiplexer)).ToList();
        if (candidates.Count > 1)
        {
            candidates = ByOrigin(candidates, timeout.Observation.ThrownThrough ?? []);
        }

        return candidates is [{ Multiplexer: { } multiplexer }] && multiplexer.GetServers() is [var server] ? EndpointText.Of(server.EndPoint) : null;
    }

    /// <summary>
    /// Several multiplexers on one endpoint (the distributed cache's, the SignalR backplane's and the app's own on
    /// one Redis, the usual case): the timeout came from the library whose code it was thrown through; when it went
    /// through none of theirs, from the one multiplexer no library made, if there is one.
    /// </summary>
    private static List<WatchedMultiplexer> ByOrigin(List<WatchedMultiplexer> candidates, IReadOnlyList<string> thrownThrough)
    {
        static bool Through(IReadOnlyList<string> namespaces, string library) =>
            namespaces.Any(n => n.StartsWith(library, StringComparison.Ordinal));

        var libraries = candidates.Where(w => w.Origin?.CallsFrom is { } library && Through(thrownThrough, library)).ToList();
        if (libraries.Count > 0)
        {
            return libraries;
        }

        var others = candidates.Where(w => w.Origin?.CallsFrom is null).ToList();
        if (others.Count > 1 && others.Count(w => !w.Discovered) == 1)
        {
            // The app's own multiplexers: the one it named with AddMultiplexer, as before discovery (a second one it
            // keeps for itself on the same server, an admin or control connection, is rarely where its timeouts are).
            return [.. others.Where(w => !w.Discovered)];
        }

        return others.Count > 0 ? others : candidates;
    }
}
