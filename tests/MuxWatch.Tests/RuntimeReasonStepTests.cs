using MuxWatch.Model;
using MuxWatch.Pipeline;
using MuxWatch.Reading;
using MuxWatch.State;

namespace MuxWatch.Tests;

/// <summary>
/// The runtime's word beside a starvation timeout, on facts (the live tests induce the same for real): the runtime adds a
/// pool thread as a worker blocks on a task and says nothing more while it stays blocked, so a wait late in a long
/// starvation hears nothing of its own; what it said in that starvation speaks for the wait, what it said before a
/// recovery does not.
/// </summary>
public sealed class RuntimeReasonStepTests
{
    private static readonly DateTimeOffset T0 = new(2026, 11, 28, 12, 0, 0, TimeSpan.Zero);

    // A real 2.6.90 starvation timeout from a run of the block app: the request waited 900 ms, from T0 to T0 + 0.9 s.
    private const string Starved = "Timeout awaiting response (outbound=0KiB, inbound=0KiB, 900ms elapsed, timeout is 500ms), command=GET, next: GET muxwatch:cart, inst: 0, qu: 1, qs: 26, aw: True, bw: Activating, rs: ReadAsync, ws: Writing, in: 282, in-pipe: 0, out-pipe: 0, last-in: 4, cur-in: 0, sync-ops: 0, async-ops: 32, serverEndpoint: 127.0.0.1:33435, conn-sec: 5.21, mc: 1/1/0, mgr: 10 of 10 available, clientName: vm(SE.Redis-v2.6.90.64945), IOCP: (Busy=0,Free=1000,Min=1,Max=1000), WORKER: (Busy=15,Free=32752,Min=2,Max=32767), POOL: (Threads=20,QueuedItems=269,CompletedItems=243), v: 2.6.90.64945";

    private static readonly ThreadPoolSnapshot Calm = new(1, 2, 32767, 0, 1, 1000, 3, 0, 100);
    private static readonly ThreadPoolSnapshot Starving = new(52, 2, 32767, 0, 1, 1000, 56, 46, 300);

    /// <summary>Runs the enrichment and the runtime's word over a timeout caught at T0 + 0.9 s.</summary>
    private static TimeoutContext Diagnose(RuntimeHistory runtime, ThreadPoolHistory pool)
    {
        for (var at = T0.AddSeconds(-15); at <= T0.AddSeconds(2); at = at.AddMilliseconds(100))
        {
            runtime.Add(at, 0, 0, 0);
        }

        var report = TimeoutMessageReader.Read(Starved);
        var timeout = new TimeoutContext(new TimeoutObservation(T0.AddSeconds(0.9), TimeoutSources.FirstChance, report), final: true) { Report = report };
        new RuntimeOverWaitStep(runtime, pool, TimeProvider.System).Apply(timeout);
        timeout.Diagnosis = Diagnosis.TimeoutDiagnoser.Diagnose(report, runtime: timeout.Runtime);
        Assert.Equal(TimeoutCause.ThreadPoolStarvation, timeout.Diagnosis.Cause);
        new RuntimeReasonStep().Apply(timeout);
        timeout.ComposeAdvice(); // as the pipeline does after its steps
        return timeout;
    }

    [Fact]
    public void A_wait_late_in_a_long_starvation_hears_the_runtime_said_blocked_on_tasks_when_the_workers_blocked()
    {
        // Seen on CI: the workers blocked (and the runtime added threads for them) ten seconds before this wait began, and
        // stayed blocked; nothing was added while it waited. It said "no pool thread blocked on a task": wrong.
        var runtime = new RuntimeHistory();
        runtime.AddAdjustment(T0.AddSeconds(-12), ThreadPoolAdjustmentReason.Warmup);
        for (var i = 0; i < 6; i++)
        {
            runtime.AddAdjustment(T0.AddSeconds(-10 + (i * 0.2)), ThreadPoolAdjustmentReason.CooperativeBlocking);
        }

        var pool = new ThreadPoolHistory();
        pool.Add(T0.AddSeconds(-11), Calm);
        for (var at = T0.AddSeconds(-10); at <= T0.AddSeconds(1); at = at.AddSeconds(1))
        {
            pool.Add(at, Starving);
        }

        var timeout = Diagnose(runtime, pool);

        var word = Assert.Single(timeout.Diagnosis!.EvidenceLines, line => line.Contains("the runtime ", StringComparison.Ordinal) && line.Contains("pool thread", StringComparison.Ordinal));
        Assert.Equal("thread-pool-starvation: the runtime added pool threads 6 times in the starvation this request waited in (since 11:59:49.0, 11.0 s before the wait began, "
            + "the pool starved at every sample) because pool threads were blocked on tasks (its CooperativeBlocking reason: sync over async); none while it waited: "
            + "the runtime adds a thread as a worker blocks, not again while it stays blocked", word);
        Assert.StartsWith("The runtime saw pool threads blocked on tasks: find the sync-over-async call", timeout.Diagnosis.Advice, StringComparison.Ordinal);
    }

    [Fact]
    public void What_the_runtime_said_before_the_pool_recovered_is_not_this_starvations()
    {
        // Workers blocked on tasks at start-up; the pool recovered; a later starvation of busy work: nothing blocked on a task in it.
        var runtime = new RuntimeHistory();
        runtime.AddAdjustment(T0.AddSeconds(-12), ThreadPoolAdjustmentReason.CooperativeBlocking);
        runtime.AddAdjustment(T0.AddSeconds(-2), ThreadPoolAdjustmentReason.Starvation);
        var pool = new ThreadPoolHistory();
        pool.Add(T0.AddSeconds(-12), Starving);
        pool.Add(T0.AddSeconds(-6), Calm);
        pool.Add(T0.AddSeconds(-3), Starving);
        pool.Add(T0.AddSeconds(-1), Starving);

        var timeout = Diagnose(runtime, pool);

        var word = Assert.Single(timeout.Diagnosis!.EvidenceLines, line => line.Contains("the runtime ", StringComparison.Ordinal) && line.Contains("pool thread", StringComparison.Ordinal));
        Assert.StartsWith("thread-pool-starvation: the runtime reported no pool thread blocked on a task while the request waited or in the starvation before it (since 11:59:54.0, 6.0 s before the wait began)", word, StringComparison.Ordinal);
        Assert.StartsWith("The pool's threads were busy, not blocked on tasks", timeout.Diagnosis.Advice, StringComparison.Ordinal);
    }

    [Fact]
    public void A_starvation_that_arose_in_the_wait_is_judged_on_the_wait_alone()
    {
        var runtime = new RuntimeHistory();
        runtime.AddAdjustment(T0.AddSeconds(-8), ThreadPoolAdjustmentReason.CooperativeBlocking); // before, with the pool calm since
        runtime.AddAdjustment(T0.AddSeconds(0.4), ThreadPoolAdjustmentReason.CooperativeBlocking);
        var pool = new ThreadPoolHistory();
        pool.Add(T0.AddSeconds(-1), Calm);
        pool.Add(T0.AddSeconds(0.5), Starving);

        var timeout = Diagnose(runtime, pool);

        Assert.Contains("thread-pool-starvation: the runtime added pool threads once while the request waited because pool threads were blocked on tasks (its CooperativeBlocking reason: sync over async)",
            timeout.Diagnosis!.EvidenceLines);
    }
}
