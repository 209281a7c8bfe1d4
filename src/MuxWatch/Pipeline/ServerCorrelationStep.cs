using MuxWatch.Diagnosis;
using MuxWatch.State;

namespace MuxWatch.Pipeline;

/// <summary>
/// The correlator: ties each timeout to what its endpoint's server did while the request waited
/// (<see cref="TimelineCorrelation"/>), and holds it open until the server has been polled past the catch.
/// </summary>
/// <remarks>
/// The fork or slow command that explains a timeout is usually seen at the next poll, after the timeout
/// (a stalled server answers no poll either). So a timeout caught after its endpoint's last complete
/// poll is held open (<see cref="TimeoutContext.AwaitTimeline"/>): the pipeline publishes it at once with
/// what is known and runs this step again when the endpoint's timeline advances, until a poll that
/// started after the catch has completed, or the settle time is up. A timeout whose endpoint is not
/// polled (posted from elsewhere, polling off) is final at once.
/// </remarks>
internal sealed class ServerCorrelationStep(ServerTimelines timelines, TimeProvider time) : ITimeoutStep
{
    public TimeoutStepStage Stage => TimeoutStepStage.Correlate;

    public void Apply(TimeoutContext timeout)
    {
        var endpoint = timeout.Report.Endpoint ?? timeout.LiveCounters?.Endpoint;
        if (timelines.Find(endpoint) is not { } timeline || timeout.Diagnosis is not { } before)
        {
            return;
        }

        var (from, to) = timeout.Waiting;
        var now = time.GetUtcNow();
        var events = timeline.Overlapping(from, to, now);
        if (timelines.PromotionsReplacing(timeline.Endpoint, from, to, now) is { Count: > 0 } promotions)
        {
            events = [.. events, .. promotions]; // this node failed over: the promotion is on its replica's timeline
        }

        timeout.Diagnosis = TimelineCorrelation.Refine(before, events, from, to);
        if (timeline.CompleteThrough is not { } through || through < to)
        {
            timeout.AwaitTimeline(timeline.Endpoint);
            timeline.RequestPoll(); // settle it at the next cycle, not at the calm poll interval
        }
    }
}
