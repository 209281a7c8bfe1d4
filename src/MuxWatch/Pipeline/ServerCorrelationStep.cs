using Microsoft.Extensions.Options;
using MuxWatch.Configuration;
using MuxWatch.Diagnosis;
using MuxWatch.Model;
using MuxWatch.State;

namespace MuxWatch.Pipeline;

/// <summary>
/// The correlator: ties each timeout to what its endpoint's server did while the request waited
/// (<see cref="TimelineCorrelation"/>) and to what MuxWatch's own connection to it saw meanwhile
/// (<see cref="WitnessCorrelation"/>), and holds it open until the server has been polled past the catch.
/// </summary>
/// <remarks>
/// The fork or slow command that explains a timeout is usually seen at the next poll, after the timeout
/// (a stalled server answers no poll either). So a timeout caught after its endpoint's last complete
/// poll is held open (<see cref="TimeoutContext.AwaitTimeline"/>): the pipeline publishes it at once with
/// what is known and runs this step again when the endpoint's timeline advances, until a poll that
/// started after the catch has completed, or the settle time is up. A timeout whose endpoint is not
/// polled (posted from elsewhere, polling off) is final at once.
/// </remarks>
internal sealed class ServerCorrelationStep(ServerTimelines timelines, TimeProvider time, IOptions<MuxWatchOptions> options) : ITimeoutStep
{
    public TimeoutStepStage Stage => TimeoutStepStage.Correlate;

    public void Apply(TimeoutContext timeout)
    {
        var endpoint = timeout.Report.Endpoint ?? timeout.LiveCounters?.Endpoint;
        if (timeout.Diagnosis is not { } before || endpoint is null)
        {
            return;
        }

        // The server's events are weighed where they overlap the wait by the one rule (InTheWait: from the wait's
        // start less the slack the client's timer needs); how long each blocked the wait is measured on the wait itself.
        var window = timeout.Waiting;
        var (from, to) = window;
        var weighedFrom = window.WeighedFrom;
        var now = time.GetUtcNow();
        if (timelines.Find(endpoint) is not { } timeline)
        {
            // A node no longer watched (a failed cluster node leaves the list once its replica took over): its
            // failures are still the failover's when a promotion on another node's timeline replaced it.
            if (timelines.PromotionsReplacing(endpoint, weighedFrom, to, now) is { Count: > 0 } replacing)
            {
                timeout.Diagnosis = window.WithAssumedNote(TimelineCorrelation.Refine(before, replacing, from, to));
            }

            return;
        }

        var events = timeline.Overlapping(weighedFrom, to, now);
        if (timelines.PromotionsReplacing(timeline.Endpoint, weighedFrom, to, now) is { Count: > 0 } promotions)
        {
            events = [.. events, .. promotions]; // this node failed over: the promotion is on its replica's timeline
        }

        var waited = timeout.Report.Kind is not (RedisErrorKind.ConnectionFailure or RedisErrorKind.NoConnection);
        var refined = TimelineCorrelation.Refine(before, events, from, to, failedConnectionOf: waited ? null : timeout.Multiplexer);
        timeout.Diagnosis = window.WithAssumedNote(
            WitnessCorrelation.Refine(refined, Witnessed(timeline, from, to, now), from, to, waited, timeout.LiveCounters?.LastSeenConnected, timeout.Report.FailureType));
        if (timeline.CompleteThrough is not { } through || through < to)
        {
            timeout.AwaitTimeline(timeline.Endpoint); // the pipeline holds it and asks for the endpoint's next poll
        }
    }

    /// <summary>What the witness saw around the window: silences (reaching back to its last answer before each), unreachability, prompt answers.</summary>
    private WitnessReport Witnessed(ServerTimeline timeline, DateTimeOffset from, DateTimeOffset to, DateTimeOffset now)
    {
        var near = timeline.Overlapping(from - WitnessCorrelation.AfterSilence, to + WitnessCorrelation.NoticedWithin, now);
        // The configured intervals, not the pace the PING budget may stretch them to (many endpoints): a wider gap
        // between two answers leaves a silence starting at its unanswered PING and a wait unbracketed, never assumed
        // answered or silent over a span no PING saw.
        var reachBack = options.Value.WitnessInterval + WitnessThreadTick;
        var silences = near.Where(e => e.Kind == ServerEventKind.Silence)
            .Select(e =>
            {
                // The PING that went unanswered was sent up to an interval after the server stopped: the silence
                // began after its last answer, at the latest when that PING was sent.
                var lastAnswer = timeline.LastAnsweredBefore(e.Start);
                var start = lastAnswer is { } answered && answered >= e.Start - reachBack ? answered : e.Start;
                return (From: start, To: e.End ?? now);
            })
            .ToList();
        var unreachable = near.Where(e => e.Kind == ServerEventKind.Unreachable).ToList();
        // The answers just around the wait, each within one quiet interval of it (the witness PINGs at least that often).
        var reach = options.Value.WitnessQuietInterval + WitnessThreadTick;
        var around = timeline.AnsweredWithin(from - reach, to + reach);
        (WitnessAnswer, WitnessAnswer)? bracket = around.LastOrDefault(a => a.Answered <= from) is { Sent.Ticks: > 0 } before
            && around.FirstOrDefault(a => a.Sent >= to) is { Sent.Ticks: > 0 } after ? (before, after) : null;
        return new WitnessReport(silences, unreachable, timeline.AnsweredWithin(from, to), bracket);
    }

    private static readonly TimeSpan WitnessThreadTick = RuntimeHistory.Tick;
}
