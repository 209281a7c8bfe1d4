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
        if (!TimeoutSources.IsInProcess(timeout.Observation.Source) || timeout.Report.Endpoint is not { } endpoint)
        {
            return;
        }

        var candidates = multiplexers.All.Where(w => timeout.Multiplexer is null ? w.HasEndpoint(endpoint) : w.Name == timeout.Multiplexer).ToList();
        if (candidates.Count > 1 && timeout.Report.Field("clientName")?.Raw is { } clientName)
        {
            candidates = [.. candidates.Where(w => w.Multiplexer?.ClientName == clientName)];
        }

        if (candidates.Count != 1 || candidates[0].LiveCountersOf(endpoint, time.GetUtcNow(), timeout.Waiting.From) is not { } counters)
        {
            return;
        }

        timeout.Multiplexer = candidates[0].Name;
        timeout.LiveCounters = counters;
    }
}
