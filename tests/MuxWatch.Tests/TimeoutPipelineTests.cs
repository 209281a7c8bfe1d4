using System.Globalization;
using Microsoft.Extensions.Options;
using MuxWatch.Testing;
using Prometheus;
using static MuxWatch.Tests.ServerTimelineTests;

namespace MuxWatch.Tests;

/// <summary>
/// The pipeline on its own, with no poller: a timeout held for its endpoint's next poll asks for it (and for a key's
/// size) through <see cref="IServerPollRequests"/>, settles when told the poll came, or at its settle time; posted ones
/// from the past correlate at once. The polls are applied here as a poller would (the live tests run real ones).
/// </summary>
public sealed class TimeoutPipelineTests
{
    private readonly CollectorRegistry _registry = Metrics.NewCustomRegistry();
    private readonly MuxWatchMetrics _metrics;

    public TimeoutPipelineTests()
    {
        _metrics = new MuxWatchMetrics(_registry);
    }

    private MetricsText Scrape() => ServerTimelineTests.Scrape(_registry);

    [Fact]
    public void A_timeout_caught_before_the_poll_that_explains_it_is_settled_then_counted_once_under_its_final_cause()
    {
        var clock = new ManualTimeProvider(T0.AddSeconds(10));
        var (pipeline, timelines, requests) = NewPipeline(clock);
        var timeline = timelines.GetOrAdd(Endpoint);
        var tracker = new ServerStateTracker(timeline, _metrics);
        tracker.Apply(Poll(9));

        var published = pipeline.Submit(new TimeoutObservation(clock.GetUtcNow(), TimeoutSources.Probe,
            TimeoutMessageReader.Read($"Timeout performing GET k (1000ms), qu: 0, qs: 3, in: 0, serverEndpoint: {Endpoint}, WORKER: (Busy=1,Free=40,Min=8,Max=41)")));

        Assert.False(published.Settled);
        Assert.Equal(TimeoutCause.ServerStall, published.Diagnosis.Cause);
        Assert.Null(Scrape().Value("muxwatch_timeouts_total"));
        Assert.Equal(1, Scrape().Value("muxwatch_correlation_pending"));

        // The server answers again: the poll after the stall finds the slow command that caused it.
        tracker.Apply(Poll(11) with { Slowlog = [new SlowlogEntry(7, T0.AddSeconds(10), TimeSpan.FromSeconds(2), "KEYS")] });
        requests.Polled(Endpoint);

        var metrics = Scrape();
        Assert.Equal(1, metrics.Value("muxwatch_timeouts_total", ("cause", "slow-command")));
        Assert.Null(metrics.Value("muxwatch_timeouts_total", ("cause", "server-stall")));
        Assert.Equal(0, metrics.Value("muxwatch_correlation_pending"));
        Assert.Equal(0, pipeline.PendingCount);
        Assert.Equal(0, pipeline.InternalFailures);
    }

    [Fact]
    public void A_timeout_whose_endpoint_is_never_polled_again_is_settled_at_the_settle_timeout_with_what_is_known()
    {
        var clock = new ManualTimeProvider(T0.AddSeconds(10));
        var (pipeline, timelines, requests) = NewPipeline(clock);
        new ServerStateTracker(timelines.GetOrAdd(Endpoint), _metrics).Apply(Poll(9));
        pipeline.Submit(new TimeoutObservation(clock.GetUtcNow(), TimeoutSources.Probe,
            TimeoutMessageReader.Read($"Timeout performing GET k (1000ms), qu: 0, qs: 3, in: 0, serverEndpoint: {Endpoint}")));

        clock.Advance(TimeSpan.FromSeconds(29));
        pipeline.SettleOverdue(clock.GetUtcNow());
        Assert.Null(Scrape().Value("muxwatch_timeouts_total"));

        clock.Advance(TimeSpan.FromSeconds(2));
        pipeline.SettleOverdue(clock.GetUtcNow());
        Assert.Equal(1, Scrape().Value("muxwatch_timeouts_total", ("cause", "server-stall")));
    }

    [Fact]
    public void A_posted_timeout_in_the_past_is_correlated_against_the_history_at_once()
    {
        var clock = new ManualTimeProvider(T0.AddSeconds(60));
        var (pipeline, timelines, requests) = NewPipeline(clock);
        var tracker = new ServerStateTracker(timelines.GetOrAdd(Endpoint), _metrics);
        tracker.Apply(Poll(0));
        tracker.Apply(Poll(1, ("rdb_bgsave_in_progress", "1"), ("rdb_current_bgsave_time_sec", "0")));
        tracker.Apply(Poll(5));

        var posted = pipeline.Submit(new TimeoutObservation(T0.AddSeconds(3), TimeoutSources.Api,
            TimeoutMessageReader.Read($"Timeout performing GET k (1000ms), qu: 0, qs: 3, in: 0, serverEndpoint: {Endpoint}")));

        Assert.True(posted.Settled);
        Assert.Equal(TimeoutCause.Persistence, posted.Diagnosis.Cause);
        Assert.DoesNotContain(TimeoutCause.ServerStall, posted.Diagnosis.Causes);
        Assert.StartsWith("persistence: BGSAVE ran from 12:00:00.0 to 12:00:05.0", posted.Diagnosis.EvidenceLines[0], StringComparison.Ordinal);
        Assert.Equal(DiagnosisConfidence.Medium, posted.Diagnosis.Confidence); // a save in progress, no fork seen inside the window
    }

    [Theory]
    [InlineData(7.5, "slow-command")] // logged at 7.5 s (whole seconds: it ran by 8.5 s), 0.5 s before the wait: inside the slack, weighed
    [InlineData(6.5, "server-stall")] // logged at 6.5 s, over 1.5 s before it: context at most, never weighed
    public void A_server_event_is_weighed_only_where_it_overlaps_the_wait_less_the_slack(double commandLogged, string cause)
    {
        var clock = new ManualTimeProvider(T0.AddSeconds(60));
        var (pipeline, timelines, requests) = NewPipeline(clock);
        var tracker = new ServerStateTracker(timelines.GetOrAdd(Endpoint), _metrics);
        tracker.Apply(Poll(0));
        tracker.Apply(Poll(20) with { Slowlog = [new SlowlogEntry(7, T0.AddSeconds(commandLogged), TimeSpan.FromSeconds(1.5), "KEYS")] });

        // A sync timeout of 1000 ms caught at 10 s: it waited from 9 s (less the one rule's second of slack).
        var posted = pipeline.Submit(new TimeoutObservation(T0.AddSeconds(10), TimeoutSources.Api,
            TimeoutMessageReader.Read($"Timeout performing GET k (1000ms), qu: 0, qs: 3, in: 0, serverEndpoint: {Endpoint}")));

        Assert.Equal(cause, posted.Diagnosis.Cause.ToName());
        Assert.DoesNotContain(posted.Diagnosis.EvidenceLines, line => line.Contains("gives no wait", StringComparison.Ordinal)); // the message gave it
    }

    /// <summary>
    /// The probe's own PING, sent during a 2 s slow command, caught 1.2 s after it gave up (a loaded machine reaches a
    /// catch late): measured back from the catch its wait would begin after the command ended, which then blocked none of
    /// it (the only server-side reading, a weak one: low; beside the witness's silence, untraced server-stall); measured from
    /// when the PING was sent, by the message's own figure, it lies inside the command, which explains it.
    /// </summary>
    [Theory]
    [InlineData(true, DiagnosisConfidence.High)]
    [InlineData(false, DiagnosisConfidence.Low)]
    public void A_probe_timeout_caught_late_is_weighed_over_the_wait_from_its_send_not_back_from_its_catch(bool sentKnown, DiagnosisConfidence confidence)
    {
        var clock = new ManualTimeProvider(T0.AddSeconds(60));
        var (pipeline, timelines, requests) = NewPipeline(clock);
        var tracker = new ServerStateTracker(timelines.GetOrAdd(Endpoint), _metrics);
        tracker.Apply(Poll(0));
        tracker.Apply(Poll(20) with { Slowlog = [new SlowlogEntry(7, T0.AddSeconds(10), TimeSpan.FromSeconds(2), "DEBUG")] }); // ran within [8 s, 11 s]

        var posted = pipeline.Submit(new TimeoutObservation(T0.AddSeconds(12.4), TimeoutSources.Probe,
            TimeoutMessageReader.Read($"Timeout awaiting response (outbound=0KiB, inbound=0KiB, 800ms elapsed, timeout is 500ms), command=PING, next: PING, inst: 0, qu: 0, qs: 2, aw: False, bw: Inactive, rs: ReadAsync, ws: Idle, in: 0, serverEndpoint: {Endpoint}, v: 2.6.90.64945"))
        {
            WaitStarted = sentKnown ? T0.AddSeconds(10.4) : null,
        });

        Assert.Equal(TimeoutCause.SlowCommand, posted.Diagnosis.Cause);
        Assert.Equal(confidence, posted.Diagnosis.Confidence);
    }

    [Fact]
    public void A_message_that_gives_no_wait_says_how_its_wait_was_taken()
    {
        var clock = new ManualTimeProvider(T0.AddSeconds(60));
        var (pipeline, timelines, requests) = NewPipeline(clock);
        var tracker = new ServerStateTracker(timelines.GetOrAdd(Endpoint), _metrics);
        tracker.Apply(Poll(0));
        tracker.Apply(Poll(20));

        var posted = pipeline.Submit(new TimeoutObservation(T0.AddSeconds(10), TimeoutSources.Api,
            TimeoutMessageReader.Read($"No connection is active/available to service this operation: GET k; SocketFailure on {Endpoint}/Interactive, Idle/Faulted, last: GET, origin: ReadFromPipe, outstanding: 1, last-read: 5s ago, last-write: 0s ago, keep-alive: 60s, state: ConnectedEstablished, mgr: 10 of 10 available, v: 2.6.90.64945")));

        Assert.Contains(posted.Diagnosis.EvidenceLines, line => line.Contains(
            "the message gives no wait (no elapsed time, no timeout): evidence with a time was weighed over the 5 s before it was caught", StringComparison.Ordinal));
    }

    [Fact]
    public void A_huge_value_held_for_its_size_asks_the_poller_once_and_settles_on_its_answer()
    {
        // A large-payload timeout whose message names the huge value at the head of the queue: the pipeline asks the
        // endpoint's poller for a poll soon and the key's size, through the interface it owns; what the poller reads comes
        // back as a poll, and the poller's word that it polled settles the timeout with the size in its evidence.
        var clock = new ManualTimeProvider(T0.AddSeconds(10));
        var (pipeline, timelines, requests) = NewPipeline(clock);
        var timeline = timelines.GetOrAdd(Endpoint);
        var tracker = new ServerStateTracker(timeline, _metrics);
        tracker.Apply(Poll(9));
        Assert.False(requests.IsPollWanted(Endpoint)); // nothing asked: the calm cadence

        var published = pipeline.Submit(new TimeoutObservation(clock.GetUtcNow(), TimeoutSources.Probe, TimeoutMessageReader.Read(
            $"Timeout awaiting response (outbound=0KiB, inbound=40960KiB, 1000ms elapsed, timeout is 1000ms), command=GET, next: GET cart:huge, inst: 0, qu: 0, qs: 4, in: 65536, serverEndpoint: {Endpoint}, WORKER: (Busy=1,Free=40,Min=8,Max=41)")));
        pipeline.Submit(new TimeoutObservation(clock.GetUtcNow(), TimeoutSources.Probe, TimeoutMessageReader.Read(
            $"Timeout awaiting response (outbound=0KiB, inbound=40960KiB, 1000ms elapsed, timeout is 1000ms), command=GET, next: GET cart:huge, inst: 0, qu: 0, qs: 3, in: 65536, serverEndpoint: {Endpoint}, WORKER: (Busy=1,Free=40,Min=8,Max=41)")));

        Assert.False(published.Settled);
        Assert.Contains(published.Diagnosis.EvidenceLines, line => line == "large-payload: the huge value is cart:huge (the message's next: GET) (its size is being asked: MEMORY USAGE)");
        Assert.True(requests.IsPollWanted(Endpoint));
        Assert.Equal("cart:huge", requests.TakeKeyToMeasure(Endpoint)); // asked once for both timeouts
        Assert.Null(requests.TakeKeyToMeasure(Endpoint));

        // The poller measured it and says so.
        tracker.Apply(Poll(11) with { KeySizes = [new KeySize("cart:huge", 41_943_040, null)] });
        requests.Polled(Endpoint);

        Assert.Equal(0, pipeline.PendingCount);
        Assert.False(requests.IsPollWanted(Endpoint)); // answered: back to the calm cadence
        Assert.Equal(2, Scrape().Value("muxwatch_timeouts_total", ("cause", "large-payload")));
        Assert.Equal(0, pipeline.InternalFailures);
    }

    [Fact]
    public void Requests_for_an_endpoint_nobody_polls_are_not_kept_and_its_timeouts_settle_at_their_deadline()
    {
        var clock = new ManualTimeProvider(T0.AddSeconds(10));
        var (pipeline, timelines, requests) = NewPipeline(clock);
        new ServerStateTracker(timelines.GetOrAdd(Endpoint), _metrics).Apply(Poll(9));
        for (var i = 0; i < 100; i++)
        {
            requests.Polled($"10.9.9.{i}:6379"); // polls of endpoints nothing waits for: nothing happens
        }

        pipeline.Submit(new TimeoutObservation(clock.GetUtcNow(), TimeoutSources.Probe,
            TimeoutMessageReader.Read($"Timeout performing GET k (1000ms), qu: 0, qs: 3, in: 0, serverEndpoint: {Endpoint}")));
        Assert.True(requests.IsPollWanted(Endpoint));
        Assert.False(requests.IsPollWanted("10.9.9.1:6379"));

        clock.Advance(TimeSpan.FromSeconds(31));
        pipeline.SettleOverdue(clock.GetUtcNow());
        Assert.Equal(0, pipeline.PendingCount);
    }

    private (TimeoutPipeline Pipeline, ServerTimelines Timelines, ServerPollRequests Requests) NewPipeline(TimeProvider clock)
    {
        var options = Options.Create(new MuxWatchOptions());
        var timelines = new ServerTimelines(options);
        var requests = new ServerPollRequests(timelines);
        var correlator = new ServerCorrelationStep(timelines, clock, options);
        var pipeline = new TimeoutPipeline([new MessageRulesStep(), correlator, new HugeKeyStep(timelines, clock, options)], [new TimeoutMetricsSink(_metrics, clock), new TimeoutCounts()],
            pollRequests: requests, time: clock, options: options);
        return (pipeline, timelines, requests);
    }
}
