using MuxWatch.Model;
using MuxWatch.Pipeline;
using MuxWatch.Reading;
using MuxWatch.State;

namespace MuxWatch.Tests;

/// <summary>
/// Which capture of the pool's stacks speaks for a starvation timeout, on facts (the live tests induce the same for
/// real): only one taken in the same starvation, and only a site that holds a share of the starved workers is named.
/// </summary>
public sealed class PoolStacksStepTests
{
    private static readonly DateTimeOffset T0 = new(2026, 11, 28, 12, 0, 0, TimeSpan.Zero);

    // A real 3.4.35 starvation timeout: 301 busy workers over a minimum of 2, work queued.
    private const string Starved = "Timeout awaiting response (outbound=0KiB, inbound=0KiB, 5000ms elapsed, timeout is 5000ms), command=GET, next: GET cart:1, inst: 0, qu: 0, qs: 1, aw: False, bw: SpinningDown, rs: ReadAsync, ws: Idle, in: 0, last-in: 0, cur-in: 0, sync-ops: 0, async-ops: 310, serverEndpoint: 127.0.0.1:6379, conn-sec: 25.2, aoc: 0, mc: 1/1/0, mgr: 10 of 10 available, clientName: shop(SE.Redis-v3.4.35.20751), IOCP: (Busy=0,Free=1000,Min=1,Max=1000), WORKER: (Busy=301,Free=32466,Min=2,Max=32767), POOL: (Threads=303,QueuedItems=250,CompletedItems=1200,Timers=3), v: 3.4.35.20751";

    private static readonly ThreadPoolSnapshot Calm = new(1, 2, 32767, 0, 1, 1000, 3, 0, 100);
    private static readonly ThreadPoolSnapshot Starving = new(301, 2, 32767, 0, 1, 1000, 303, 250, 1200);

    /// <summary>The timeout caught at T0 + 5 s, having waited 5 s; the diagnosis settled as starvation.</summary>
    private static TimeoutContext Timeout(bool final = true)
    {
        var report = TimeoutMessageReader.Read(Starved);
        var timeout = new TimeoutContext(new TimeoutObservation(T0.AddSeconds(5), TimeoutSources.FirstChance, report), final) { Report = report };
        timeout.Diagnosis = Diagnosis.TimeoutDiagnoser.Diagnose(report);
        Assert.Equal(TimeoutCause.ThreadPoolStarvation, timeout.Diagnosis.Cause);
        return timeout;
    }

    private static PoolStackCapture Capture(DateTimeOffset at, int blocked, params PoolThreadSite[] sites) =>
        new(at, 400, "cooperative-blocking", blocked + 2, blocked, 2, sites);

    [Fact]
    public void A_capture_taken_before_the_pool_recovered_names_nobody_for_a_later_starvation()
    {
        // Seen: the only capture was taken at start-up, 20 s before; the pool recovered; the real starvation's timeouts
        // quoted it ("dynamicClass.lambda_method8 keeps pool threads busy").
        var captures = new PoolStackCaptures(TimeSpan.FromMinutes(5));
        captures.Complete(Capture(T0.AddSeconds(-20), 0, new PoolThreadSite("Startup.Warm", null, 3)));
        var history = new ThreadPoolHistory();
        history.Add(T0.AddSeconds(-19), Starving);
        history.Add(T0.AddSeconds(-10), Calm);
        history.Add(T0.AddSeconds(1), Starving);
        var timeout = Timeout();
        var advice = timeout.Diagnosis!.Advice;

        new PoolStacksStep(captures, history).Apply(timeout);
        timeout.ComposeAdvice(); // as the pipeline does after its steps

        Assert.Equal(advice, timeout.Diagnosis!.Advice);
        Assert.DoesNotContain(timeout.Diagnosis.EvidenceLines, line => line.Contains("Startup.Warm", StringComparison.Ordinal));
        Assert.Contains(timeout.Diagnosis.EvidenceLines, line => line.Contains("the pool's stacks were captured 11:59:40.0, 20.0 s before the wait began, with the pool calm (or not sampled) in between", StringComparison.Ordinal));
    }

    [Fact]
    public void A_capture_after_the_timeout_in_the_same_starvation_names_the_blocking_code_and_never_a_bystander()
    {
        // The pool starved at every sample from the timeout to the capture: the same starvation. One thread of the test
        // host's (a bystander's long wait) beside 280 workers blocked in the app's checkout.
        var captures = new PoolStackCaptures(TimeSpan.FromMinutes(5));
        captures.Complete(Capture(T0.AddSeconds(7), 281,
            new PoolThreadSite("CheckoutService.Pay", "GetAwaiter().GetResult()", 280),
            new PoolThreadSite("VsTestRunner.RunTestsInAssembly", "WaitHandle.WaitOneNoCheck", 1)));
        var history = new ThreadPoolHistory();
        history.Add(T0.AddSeconds(5.5), Starving);
        history.Add(T0.AddSeconds(6.5), Starving);
        var timeout = Timeout();

        new PoolStacksStep(captures, history).Apply(timeout);
        timeout.ComposeAdvice(); // as the pipeline does after its steps

        var named = Assert.Single(timeout.Diagnosis!.EvidenceLines, line => line.StartsWith("thread-pool-starvation: pool workers blocked in the app's code", StringComparison.Ordinal));
        Assert.Contains("(stacks captured 12:00:07.0, 2.0 s after the request gave up): CheckoutService.Pay, 280 of 281 blocked workers, via GetAwaiter().GetResult()", named, StringComparison.Ordinal);
        Assert.DoesNotContain("VsTestRunner", named, StringComparison.Ordinal);
        Assert.StartsWith("CheckoutService.Pay blocks a pool thread on GetAwaiter().GetResult()", timeout.Diagnosis.Advice, StringComparison.Ordinal);
    }

    [Fact]
    public void A_lone_blocked_thread_is_nobodys_culprit()
    {
        var captures = new PoolStackCaptures(TimeSpan.FromMinutes(5));
        captures.Complete(Capture(T0.AddSeconds(2), 1, new PoolThreadSite("HostedWorker.Run", "WaitHandle.WaitOne", 1)));
        var timeout = Timeout();
        var advice = timeout.Diagnosis!.Advice;

        new PoolStacksStep(captures, new ThreadPoolHistory()).Apply(timeout);
        timeout.ComposeAdvice(); // as the pipeline does after its steps

        Assert.Equal(advice, timeout.Diagnosis!.Advice);
        Assert.DoesNotContain(timeout.Diagnosis.EvidenceLines, line => line.Contains("HostedWorker.Run", StringComparison.Ordinal));
        Assert.Contains(timeout.Diagnosis.EvidenceLines, line => line.Contains("1 of 3 pool workers were blocked (stacks captured 12:00:02.0, during the wait), no site of the app's code holding a share of them", StringComparison.Ordinal));
    }

    [Fact]
    public void A_capture_that_named_nobody_holds_the_timeout_for_the_next_while_the_pool_starves_on()
    {
        // Seen live: a pool kept busy by computing was captured while the computing held one thread of a dozen; that capture
        // spent the budget, and every timeout of the starvation seconds later said "no site ... holds a share". Now it
        // spends nothing, a timeout it cannot name is held while the next capture may come, and the next one names it.
        var captures = new PoolStackCaptures(TimeSpan.FromMinutes(5));
        Assert.True(captures.TryBegin(T0.AddSeconds(-3)));
        var early = new PoolStackCapture(T0.AddSeconds(-3), 400, "starvation", 12, 0, 12, [new PoolThreadSite("PriceCalculator.Compute", null, 1)]);
        captures.Complete(early);
        Assert.False(PoolStackCaptures.Spends(early));
        var history = new ThreadPoolHistory();
        for (var at = -3; at <= 5; at++)
        {
            history.Add(T0.AddSeconds(at), Starving);
        }

        var held = Timeout(final: false);
        new PoolStacksStep(captures, history).Apply(held);
        Assert.Equal("127.0.0.1:6379", held.AwaitedTimeline);

        Assert.True(captures.TryBegin(T0.AddSeconds(7))); // the floor (10 s) passed: the starvation asks again
        captures.Complete(new PoolStackCapture(T0.AddSeconds(7), 400, "starvation", 30, 0, 30, [new PoolThreadSite("PriceCalculator.Compute", null, 28)]));
        var again = Timeout(final: false);
        new PoolStacksStep(captures, history).Apply(again);
        again.ComposeAdvice();

        Assert.Null(again.AwaitedTimeline);
        Assert.Contains(again.Diagnosis!.EvidenceLines, line => line.Contains("were busy running work: PriceCalculator.Compute, 28 of 30", StringComparison.Ordinal));
        Assert.StartsWith("PriceCalculator.Compute keeps pool threads busy", again.Diagnosis.Advice, StringComparison.Ordinal);
    }

    [Fact]
    public void A_capture_that_named_nobody_is_not_waited_on_once_the_pool_is_calm_or_the_settle_time_is_up()
    {
        var captures = new PoolStackCaptures(TimeSpan.FromMinutes(5));
        Assert.True(captures.TryBegin(T0.AddSeconds(-3)));
        captures.Complete(new PoolStackCapture(T0.AddSeconds(-3), 400, "starvation", 12, 0, 12, [new PoolThreadSite("PriceCalculator.Compute", null, 1)]));
        var starving = new ThreadPoolHistory();
        var recovered = new ThreadPoolHistory();
        for (var at = -3; at <= 5; at++)
        {
            starving.Add(T0.AddSeconds(at), Starving);
            recovered.Add(T0.AddSeconds(at), Starving);
        }

        recovered.Add(T0.AddSeconds(6), Calm);

        var final = Timeout(final: true);
        new PoolStacksStep(captures, starving).Apply(final);
        var calm = Timeout(final: false);
        new PoolStacksStep(captures, recovered).Apply(calm);

        Assert.Null(final.AwaitedTimeline);
        Assert.Null(calm.AwaitedTimeline);
        Assert.Contains(final.Diagnosis!.EvidenceLines, line => line.Contains("no site of the app's code holds a share of them", StringComparison.Ordinal));
    }
}
