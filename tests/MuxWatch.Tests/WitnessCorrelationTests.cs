namespace MuxWatch.Tests;

/// <summary>
/// The second witness read on facts (the live tests induce the same for real: StallDiagnosisLiveTests, the
/// starvation test): MuxWatch's own connection silent over a wait, answered during it, or unable to reach the
/// server, against what the message alone said; and the app's runtime over the wait (GC pauses, CPU).
/// </summary>
public sealed class WitnessCorrelationTests
{
    private static readonly DateTimeOffset T0 = new(2026, 11, 27, 3, 0, 0, TimeSpan.Zero);

    // Measured on 3.4.35 during DEBUG SLEEP 5 (the corpus's measured-3.4.35-dropped): the client dropped its connection itself.
    private const string DroppedDuringStall = "The message timed out in the backlog attempting to send because no connection became available, command=PING, timeout: 500, inst: 0, qu: 0, qs: 0, aw: False, bw: CheckingForTimeout, last-in: 0, cur-in: 0, lm: 2/2/0/0, sync-ops: 1, async-ops: 26, serverEndpoint: 127.0.0.1:17001, conn-sec: n/a, aoc: 0, mc: 1/1/0, clientName: vm(SE.Redis-v3.4.35.20751), IOCP: (Busy=0,Free=1000,Min=1,Max=1000), WORKER: (Busy=0,Free=32767,Min=2,Max=32767), POOL: (Threads=3,QueuedItems=0,CompletedItems=115,Timers=2), v: 3.4.35.20751 (see https://seredis.dev/Timeouts for some common client-side issues that can cause timeouts)";

    // 2.6.90's reading of a server that does not answer: qs above 0, nothing in, the pool at its minimum.
    private const string Unanswered = "Timeout performing GET (500ms), next: GET k0, inst: 38, qu: 0, qs: 22, aw: False, bw: SpinningDown, rs: ReadAsync, ws: Idle, in: 0, in-pipe: 0, out-pipe: 0, serverEndpoint: 127.0.0.1:17001, conn-sec: 0.65, mc: 1/1/0, IOCP: (Busy=0,Free=1000,Min=1,Max=1000), WORKER: (Busy=1,Free=32766,Min=2,Max=32767), v: 2.6.90.64945";

    // The same with a few workers over the minimum: weak starvation beside the unanswered requests.
    private const string UnansweredOnABusyPool = "Timeout performing GET (500ms), next: GET k0, inst: 38, qu: 0, qs: 22, aw: False, bw: SpinningDown, rs: ReadAsync, ws: Idle, in: 0, in-pipe: 0, out-pipe: 0, serverEndpoint: 127.0.0.1:17001, conn-sec: 0.65, mc: 1/1/0, IOCP: (Busy=0,Free=1000,Min=1,Max=1000), WORKER: (Busy=5,Free=32762,Min=2,Max=32767), v: 2.6.90.64945";

    private static readonly (DateTimeOffset From, DateTimeOffset To) Wait = (T0, T0.AddMilliseconds(500));

    private static TimeoutDiagnosis Diagnose(string message, RuntimeOverWait? runtime = null) =>
        TimeoutDiagnoser.Diagnose(TimeoutMessageReader.Read(message), runtime: runtime);

    private static WitnessReport Silent(double fromMs, double toMs) => new([(T0.AddMilliseconds(fromMs), T0.AddMilliseconds(toMs))], [], []);

    private static WitnessReport AnsweredAt(double sentMs) => new([], [], [new WitnessAnswer(T0.AddMilliseconds(sentMs), T0.AddMilliseconds(sentMs + 1))]);

    [Fact]
    public void Both_connections_silent_make_a_connection_the_client_dropped_a_consequence_of_a_server_stall()
    {
        var before = Diagnose(DroppedDuringStall);
        Assert.Equal(TimeoutCause.ConnectionLoss, before.Cause);

        var refined = WitnessCorrelation.Refine(before, Silent(-800, 4000), Wait.From, Wait.To);

        Assert.Equal(TimeoutCause.ServerStall, refined.Cause);
        Assert.Equal(DiagnosisConfidence.High, refined.Confidence);
        Assert.StartsWith("server-stall: MuxWatch's own connection got no answer either", refined.EvidenceLines[0], StringComparison.Ordinal);
        Assert.Contains(refined.EvidenceLines, line => line.StartsWith("connection-loss: conn-sec: n/a", StringComparison.Ordinal) && line.EndsWith("(a consequence: the server was blocked while the request waited)", StringComparison.Ordinal));
        Assert.Contains(refined.EvidenceLines, line => line.Contains("what stalls a server without a trace", StringComparison.Ordinal));
    }

    [Fact]
    public void A_connection_dropped_after_a_silence_that_just_ended_is_still_its_consequence()
    {
        var refined = WitnessCorrelation.Refine(Diagnose(DroppedDuringStall), Silent(-6000, -1000), Wait.From, Wait.To);

        Assert.Equal(TimeoutCause.ServerStall, refined.Cause);
        Assert.Contains("which ended 1.5 s before this request gave up", refined.EvidenceLines[0], StringComparison.Ordinal);
    }

    [Fact]
    public void A_silence_that_ended_seconds_before_the_wait_began_is_context_never_weighed()
    {
        // Seen on 3.4.35: a starved pool's timeouts, a few seconds after an unrelated 2 s stall of the server had ended,
        // were called server-stall (high) on "the server did not answer it ... which ended 6.1 s before this request gave
        // up". The silence was over 5.6 s before the request began to wait.
        var before = Diagnose(DroppedDuringStall);

        var refined = WitnessCorrelation.Refine(before, Silent(-7700, -5600), Wait.From, Wait.To);

        Assert.Equal(before.Cause, refined.Cause);
        Assert.DoesNotContain(refined.EvidenceLines, line => line.StartsWith("server-stall", StringComparison.Ordinal));
        Assert.Contains(refined.EvidenceLines, line => line.Contains("before this request began to wait, MuxWatch's own connection went unanswered from 02:59:52.3 to 02:59:54.4; that ended 5.6 s before the wait, so it is not weighed", StringComparison.Ordinal));
    }

    [Fact]
    public void A_connection_given_up_on_while_the_witness_was_already_silent_is_the_silences_consequence()
    {
        // Measured on 3.4.35 over a Unix socket, the server stopped: the client disposed of its connection 1.1 s into
        // the silence, whose share of the failure's guessed 5 s window was still under a quarter.
        var before = TimeoutDiagnoser.Diagnose(TimeoutMessageReader.Read("ConnectionDisposed on Interactive#1@!/tmp/muxwatch-f562.sock (Idle)"));
        Assert.Equal(TimeoutCause.ConnectionLoss, before.Cause);
        var failedAt = T0.AddSeconds(5);

        var refined = WitnessCorrelation.Refine(before, new([(failedAt.AddMilliseconds(-1150), failedAt.AddMilliseconds(1400))], [], []), T0, failedAt, waited: false);

        Assert.Equal(TimeoutCause.ServerStall, refined.Cause);
        Assert.StartsWith("server-stall: MuxWatch's own connection got no answer either", refined.EvidenceLines[0], StringComparison.Ordinal);
    }

    [Fact]
    public void A_silence_that_began_only_after_the_connection_was_lost_is_not_its_cause()
    {
        var before = TimeoutDiagnoser.Diagnose(TimeoutMessageReader.Read("ConnectionDisposed on Interactive#1@!/tmp/muxwatch-f562.sock (Idle)"));
        var failedAt = T0.AddSeconds(5);

        Assert.Same(before, WitnessCorrelation.Refine(before, new([(failedAt.AddMilliseconds(200), failedAt.AddMilliseconds(1400))], [], []), T0, failedAt, waited: false));
    }

    [Fact]
    public void A_short_silence_at_the_edge_of_the_wait_decides_nothing()
    {
        var before = Diagnose(Unanswered);

        Assert.Same(before, WitnessCorrelation.Refine(before, Silent(450, 520), Wait.From, Wait.To));
    }

    [Fact]
    public void An_answer_during_the_wait_rules_the_server_out_and_the_sign_in_the_app_comes_first()
    {
        var before = Diagnose(UnansweredOnABusyPool, new RuntimeOverWait(500, 0, 100, 0, 2)); // the runtime sampled: MuxWatch in-process
        Assert.Contains(TimeoutCause.ThreadPoolStarvation, before.Causes);

        var refined = WitnessCorrelation.Refine(before, AnsweredAt(200), Wait.From, Wait.To);

        Assert.Equal(TimeoutCause.ThreadPoolStarvation, refined.Cause);
        Assert.Equal(DiagnosisConfidence.Medium, refined.Confidence); // weak starvation: the server ruled out, the pool only a likely reading
        Assert.Contains(refined.EvidenceLines, line => line.StartsWith("thread-pool-starvation: not the server: MuxWatch's own connection was answered once while this request waited (a PING sent 200 ms into the wait, answered in 1 ms)", StringComparison.Ordinal));
        Assert.Contains(refined.EvidenceLines, line => line.StartsWith("server-stall ruled out by the witness: qs=22", StringComparison.Ordinal));
        Assert.DoesNotContain(TimeoutCause.ServerStall, refined.Causes);
    }

    // A full run's blocking app on 3.4.35 (PoolStackCaptureUnavailableTests): a request that began to wait while the pool was
    // calm (its sample then: Busy=0/Min=2, nothing queued) and was caught 2.5 s later in the starvation that filled it, the
    // 3.x writer left with commands unwritten.
    private const string CaughtInAStarvationThatBeganAfterItsWait = "Timeout awaiting response (outbound=0KiB, inbound=0KiB, 2508ms elapsed, timeout is 500ms), command=GET, next: GET muxwatch:cart, inst: 0, qu: 2, qs: 0, aw: True, bw: CheckingForTimeoutComplete, rs: ReadAsync, ws: Writing, in: 143, in-pipe: 0, last-in: 7, cur-in: 7, lm: 2/2/0/0, sync-ops: 0, async-ops: 28, serverEndpoint: 127.0.0.1:39839, conn-sec: 5.37, aoc: 0, mc: 1/1/0, clientName: vm(SE.Redis-v3.4.35.20751), IOCP: (Busy=0,Free=1000,Min=1,Max=1000), WORKER: (Busy=23,Free=32744,Min=2,Max=32767), POOL: (Threads=23,QueuedItems=274,CompletedItems=185,Timers=4), v: 3.4.35.20751 (see https://seredis.dev/Timeouts for some common client-side issues that can cause timeouts)";

    private static readonly ThreadPoolSnapshot CalmBeforeTheWait = new(0, 2, 32767, 0, 1, 1000, 2, 0, 150);

    [Fact]
    public void Starvation_that_arose_during_the_wait_weighs_in_full_once_the_server_is_seen_answering()
    {
        // Weighed against the calm sample, the starvation could be a stall's consequence (replies stopped, continuations
        // piled up), so it weighed clear and the late check beside qu: 2 made it write-backlog; the witness answered five
        // times in the wait, so nothing stopped the replies: it was called write-backlog, high, all the same.
        var before = TimeoutDiagnoser.Diagnose(TimeoutMessageReader.Read(CaughtInAStarvationThatBeganAfterItsWait), poolBeforeWait: CalmBeforeTheWait);
        Assert.Equal(TimeoutCause.WriteBacklog, before.Cause);
        Assert.Equal(EvidenceWeight.Clear, before.WeightOf(TimeoutCause.ThreadPoolStarvation));
        var (from, to) = (T0, T0.AddMilliseconds(2508));
        WitnessReport answeredFiveTimes = new([], [], [.. Enumerable.Range(0, 5).Select(i => new WitnessAnswer(from.AddMilliseconds(436 + (400 * i)), from.AddMilliseconds(440 + (400 * i))))]);

        var refined = WitnessCorrelation.Refine(before, answeredFiveTimes, from, to);

        Assert.Equal(TimeoutCause.ThreadPoolStarvation, refined.Cause);
        Assert.Equal(DiagnosisConfidence.High, refined.Confidence);
        Assert.Equal(EvidenceWeight.Overriding, refined.WeightOf(TimeoutCause.ThreadPoolStarvation));
        Assert.StartsWith("thread-pool-starvation: not the server: MuxWatch's own connection was answered 5 times while this request waited", refined.EvidenceLines[0], StringComparison.Ordinal);
        Assert.Contains(refined.EvidenceLines, line => line.StartsWith("thread-pool-starvation: WORKER Busy=23 > Min=2", StringComparison.Ordinal)
            && line.EndsWith("; but the server answered MuxWatch's own connection meanwhile, so replies had not stopped: weighed in full", StringComparison.Ordinal));
        Assert.Contains(refined.EvidenceLines, line => line.StartsWith("why: thread-pool-starvation outranks write-backlog: it arose while this request waited, but the server answered", StringComparison.Ordinal));
        Assert.Equal(TimeoutCause.ThreadPoolStarvation, refined.Causes[0]);
        Assert.Contains(TimeoutCause.WriteBacklog, refined.Causes);

        // Answered just before the wait began and just after it gave up, never inside it: nothing says the replies went
        // on through this wait, so the starvation keeps its doubt and the message's reading stands.
        var justOutside = WitnessCorrelation.Refine(before, new([], [], [], (new WitnessAnswer(from.AddMilliseconds(-60), from.AddMilliseconds(-55)), new WitnessAnswer(to.AddMilliseconds(20), to.AddMilliseconds(25)))), from, to);
        Assert.Equal(TimeoutCause.WriteBacklog, justOutside.Cause);
        Assert.Equal(EvidenceWeight.Clear, justOutside.WeightOf(TimeoutCause.ThreadPoolStarvation));
        Assert.DoesNotContain(justOutside.EvidenceLines, line => line.Contains("weighed in full", StringComparison.Ordinal));

        // The same wait with the witness silent over it: the starvation stays a stall's possible consequence.
        var silent = WitnessCorrelation.Refine(before, new([(from.AddMilliseconds(-100), to.AddMilliseconds(100))], [], []), from, to);
        Assert.Equal(TimeoutCause.ServerStall, silent.Cause);
        Assert.Equal(EvidenceWeight.Clear, silent.WeightOf(TimeoutCause.ThreadPoolStarvation));

        // And starvation already there before the wait was overriding from the start: nothing to restore.
        var starvedBefore = TimeoutDiagnoser.Diagnose(TimeoutMessageReader.Read(CaughtInAStarvationThatBeganAfterItsWait), poolBeforeWait: CalmBeforeTheWait with { WorkerBusy = 20, QueueLength = 100 });
        Assert.Equal(TimeoutCause.ThreadPoolStarvation, starvedBefore.Cause);
        Assert.Equal(TimeoutCause.ThreadPoolStarvation, WitnessCorrelation.Refine(starvedBefore, answeredFiveTimes, from, to).Cause);
    }

    [Fact]
    public void A_connection_dropped_in_a_starved_pool_with_the_witness_answered_just_before_and_after_the_wait_is_the_pool()
    {
        // Measured on 3.4.35 (the block app, 300 requests blocking on async GETs): 3.x dropped its connection in the starved
        // pool; the 1 s wait fell between two of the witness's PINGs, answered 0.9 s before it and 0.3 s after, silent
        // nowhere. The connection was lost on the app's side: the starvation is the cause, the lost connection its effect.
        const string droppedInAStarvedPool = "Timeout awaiting response (outbound=0KiB, inbound=0KiB, 1008ms elapsed, timeout is 500ms), command=GET, next: GET muxwatch:cart, inst: 0, qu: 0, qs: 0, aw: False, bw: Inactive, rs: ReadAsync, ws: Idle, in: 150, in-pipe: 0, last-in: 7, cur-in: 7, lm: 2/3/1/0, sync-ops: 0, async-ops: 26, serverEndpoint: 127.0.0.1:39321, conn-sec: 14.32, aoc: 0, mc: 1/1/0, clientName: vm(SE.Redis-v3.4.35.20751), IOCP: (Busy=0,Free=1000,Min=1,Max=1000), WORKER: (Busy=16,Free=32751,Min=2,Max=32767), POOL: (Threads=16,QueuedItems=285,CompletedItems=712,Timers=4), v: 3.4.35.20751 (see https://seredis.dev/Timeouts for some common client-side issues that can cause timeouts)";
        var wait = (From: T0, To: T0.AddMilliseconds(1008));
        var before = TimeoutDiagnoser.Diagnose(TimeoutMessageReader.Read(droppedInAStarvedPool),
            sampledThreadPool: new ThreadPoolSnapshot(16, 2, 32767, 0, 1, 1000, 16, 285, 712),
            live: new LiveCounters("127.0.0.1:39321", Connected: false, 42, 27, wait.To),
            poolBeforeWait: new ThreadPoolSnapshot(0, 2, 32767, 0, 1, 1000, 8, 0, 600));
        Assert.Equal(TimeoutCause.ConnectionLoss, before.Cause);
        var bracket = (new WitnessAnswer(T0.AddMilliseconds(-901), T0.AddMilliseconds(-900)), new WitnessAnswer(wait.To.AddMilliseconds(300), wait.To.AddMilliseconds(301)));

        var refined = WitnessCorrelation.Refine(before, new WitnessReport([], [], [], bracket), wait.From, wait.To);
        var silentBetween = WitnessCorrelation.Refine(before, new WitnessReport([(T0.AddMilliseconds(200), T0.AddMilliseconds(700))], [], [], bracket), wait.From, wait.To);
        var noAnswerAfter = WitnessCorrelation.Refine(before, new WitnessReport([], [], []), wait.From, wait.To);

        Assert.Equal(TimeoutCause.ThreadPoolStarvation, refined.Cause);
        Assert.Contains(refined.EvidenceLines, line => line.StartsWith("thread-pool-starvation: not the server: MuxWatch's own connection was answered at 02:59:59.1, 900 ms before this request began to wait, and again to a PING sent at 03:00:01.3, after it gave up", StringComparison.Ordinal));
        Assert.NotEqual(TimeoutCause.ThreadPoolStarvation, silentBetween.Cause);
        Assert.Equal(TimeoutCause.ConnectionLoss, noAnswerAfter.Cause);
    }

    [Fact]
    public void A_connection_seen_up_after_a_silence_ended_survived_it_and_its_later_loss_is_not_the_silences()
    {
        // Measured on 3.4.35: a 2 s stall of the server ended, the app's connection stayed up (MuxWatch's probe found it up
        // every second), and 5.9 s after the stall a starved pool lost it (ConnectionDisposed): called server-stall, high.
        var caught = T0.AddSeconds(8);
        var failure = TimeoutDiagnoser.Diagnose(TimeoutMessageReader.Read("ConnectionDisposed on Interactive#1@127.0.0.1:33119 (Idle)"),
            live: new LiveCounters("127.0.0.1:33119", Connected: false, 31, 23, caught));
        Assert.Equal(TimeoutCause.ConnectionLoss, failure.Cause);
        var stall = Silent(0, 2100);
        var (from, to) = (caught - TimeSpan.FromSeconds(5), caught);

        var survived = WitnessCorrelation.Refine(failure, stall, from, to, waited: false, connectionSeenUp: caught.AddMilliseconds(-900));
        var lostInIt = WitnessCorrelation.Refine(failure, stall, from, to, waited: false, connectionSeenUp: T0.AddMilliseconds(1500));

        Assert.Equal(TimeoutCause.ConnectionLoss, survived.Cause);
        Assert.DoesNotContain(survived.EvidenceLines, line => line.Contains("MuxWatch's own connection got no answer either", StringComparison.Ordinal));
        Assert.Contains(survived.EvidenceLines, line => line.EndsWith("but the app's connection was seen up at 03:00:07.1, after that silence ended: it survived it, so the silence is not weighed", StringComparison.Ordinal));
        Assert.Equal(TimeoutCause.ServerStall, lostInIt.Cause); // lost during the silence: its consequence, as before
    }

    [Fact]
    public void A_failure_read_late_is_judged_by_the_connection_as_the_probe_saw_it_before_the_catch()
    {
        // Seen in the full test command (3.4.35, the starvation-after-a-stall app): a SocketClosed caught 6.6 s after a
        // 2 s stall ended, its reading delayed 10 s by the starved pool; by then the client had re-made the connection,
        // and the latest sample (after the catch) said nothing of before: the stale silence named server-stall, high.
        var history = new MuxWatch.StackExchangeRedis.QueueHistory();
        var caught = T0.AddSeconds(8.6);
        for (var second = 0; second <= 18; second++)
        {
            // Up every second but for the failure's (8.6 s) re-making, read at 9 and 10 s.
            history.Remember(T0.AddSeconds(second), 0, 0, connected: second is not (9 or 10));
        }

        Assert.Equal(T0.AddSeconds(8), history.LastConnected(caught));
        Assert.Equal(T0.AddSeconds(18), history.LastConnected(T0.AddSeconds(18.5)));
        Assert.Null(history.LastConnected(T0.AddSeconds(-1)));

        var failure = TimeoutDiagnoser.Diagnose(TimeoutMessageReader.Read("SocketClosed on [0]:GET muxwatch:cart (RedisValueProcessor)"));
        var stall = Silent(0, 2000);
        var asCaught = WitnessCorrelation.Refine(failure, stall, caught - TimeSpan.FromSeconds(5), caught, waited: false, connectionSeenUp: history.LastConnected(caught));
        var asReadLate = WitnessCorrelation.Refine(failure, stall, caught - TimeSpan.FromSeconds(5), caught, waited: false, connectionSeenUp: history.LastConnected(T0.AddSeconds(18.5)));

        Assert.NotEqual(TimeoutCause.ServerStall, asCaught.Cause);
        Assert.Contains(asCaught.EvidenceLines, line => line.EndsWith("it survived it, so the silence is not weighed", StringComparison.Ordinal));
        Assert.Equal(TimeoutCause.ServerStall, asReadLate.Cause); // what the old reading (the latest sample) made of it
    }

    [Fact]
    public void A_connection_failure_in_a_starved_pool_with_the_witness_answered_up_to_it_is_the_pool()
    {
        // Seen live on 3.4.35 (the block app): beside the starved pool's timeouts, 3.x dropped its connection and failed
        // what waited for it with field-less RedisConnectionExceptions, which were called connection-loss. The server
        // answered MuxWatch's own connection every second of the 5 s read for the failure, silent nowhere.
        var caught = T0.AddSeconds(8);
        var (from, to) = (caught - TimeSpan.FromSeconds(5), caught);
        var report = TimeoutMessageReader.Read("ConnectionDisposed on Interactive#1@127.0.0.1:33119 (Idle)");
        var failure = TimeoutDiagnoser.Diagnose(report,
            sampledThreadPool: new ThreadPoolSnapshot(40, 2, 32767, 0, 1, 1000, 40, 260, 900),
            live: new LiveCounters("127.0.0.1:33119", Connected: false, 31, 23, caught),
            poolBeforeWait: new ThreadPoolSnapshot(1, 2, 32767, 0, 1, 1000, 8, 0, 600));
        Assert.Equal(TimeoutCause.ConnectionLoss, failure.Cause);
        WitnessAnswer Answer(double atSeconds) => new(T0.AddSeconds(atSeconds), T0.AddSeconds(atSeconds).AddMilliseconds(1));
        var answered = new WitnessReport([], [], [Answer(4), Answer(5), Answer(6), Answer(7)]);

        var refined = WitnessCorrelation.Refine(failure, answered, from, to, waited: false, failureType: report.FailureType);
        var silentInIt = WitnessCorrelation.Refine(failure, answered with { Silences = [(T0.AddSeconds(7.2), T0.AddSeconds(9))] }, from, to, waited: false, failureType: report.FailureType);
        var nobodyAsked = WitnessCorrelation.Refine(failure, new WitnessReport([], [], []), from, to, waited: false, failureType: report.FailureType);

        // 3.x also reports SocketClosed in the starved pool (seen live, the server answering throughout): the pool too.
        var socketClosed = WitnessCorrelation.Refine(failure, answered, from, to, waited: false, failureType: "SocketClosed");

        Assert.Equal(TimeoutCause.ThreadPoolStarvation, refined.Cause);
        Assert.Equal(TimeoutCause.ThreadPoolStarvation, socketClosed.Cause);
        Assert.Contains(refined.EvidenceLines, line => line.StartsWith("thread-pool-starvation: not the server: MuxWatch's own connection was answered 4 times in the 5 s before this failure (the last at 03:00:07.0", StringComparison.Ordinal));
        Assert.NotEqual(TimeoutCause.ThreadPoolStarvation, silentInIt.Cause); // the server stopped answering before the failure
        Assert.Equal(TimeoutCause.ConnectionLoss, nobodyAsked.Cause);
    }

    [Fact]
    public void An_answer_during_the_wait_with_nothing_else_in_the_app_says_not_the_server_and_no_more()
    {
        var refined = WitnessCorrelation.Refine(Diagnose(Unanswered), AnsweredAt(100), Wait.From, Wait.To);

        Assert.Equal(TimeoutCause.Unknown, refined.Cause);
        Assert.Equal(DiagnosisConfidence.Medium, refined.Confidence);
        Assert.StartsWith("not the server: MuxWatch's own connection was answered once", refined.EvidenceLines[0], StringComparison.Ordinal);
        Assert.DoesNotContain(refined.EvidenceLines, line => line.StartsWith("server-stall: ", StringComparison.Ordinal));
    }

    [Fact]
    public void An_answer_before_the_wait_began_proves_nothing()
    {
        var before = Diagnose(Unanswered);

        Assert.Same(before, WitnessCorrelation.Refine(before, new WitnessReport([], [], []), Wait.From, Wait.To));
    }

    [Fact]
    public void The_server_unreachable_from_muxwatch_too_is_connection_loss_whatever_the_message_said()
    {
        var gone = new ServerEvent(ServerEventKind.Unreachable, T0.AddMilliseconds(600), null) { Outcome = "closed by the server, then refused" };

        var refined = WitnessCorrelation.Refine(Diagnose(Unanswered), new WitnessReport([], [gone], []), Wait.From, Wait.To);

        Assert.Equal(TimeoutCause.ConnectionLoss, refined.Cause);
        Assert.Equal(DiagnosisConfidence.High, refined.Confidence);
        Assert.StartsWith("connection-loss: MuxWatch's own connection could not reach the server either (closed by the server, then refused, from 03:00:00.6, still)", refined.EvidenceLines[0], StringComparison.Ordinal);
    }

    [Fact]
    public void A_node_that_failed_over_during_the_wait_and_that_the_witness_could_not_reach_is_the_failover_not_a_lost_connection()
    {
        // Seen in a full run: a killed cluster primary's request, a GC pause in the seconds before its wait held over the
        // failover (contributing); the witness's "could not reach it" then made connection-loss the cause, high.
        var failover = Evidence.Finding(TimeoutCause.Failover, EvidenceWeight.Strong, "a failover: a replica was promoted to primary in place of 127.0.0.1:17001 between 03:00:00.0 and 03:00:04.8") with { Role = EvidenceRole.Contributing };
        var before = new TimeoutDiagnosis(TimeoutCause.GcPause, [TimeoutCause.GcPause, TimeoutCause.WriteBacklog, TimeoutCause.Failover],
            [Evidence.Finding(TimeoutCause.GcPause, EvidenceWeight.Overriding, "gc-pause: blocking garbage collections paused every thread of this process for 547 ms"), failover],
            CauseAdvice.For(TimeoutCause.GcPause))
        {
            Confidence = DiagnosisConfidence.High,
            Weights = new Dictionary<TimeoutCause, EvidenceWeight> { [TimeoutCause.GcPause] = EvidenceWeight.Overriding, [TimeoutCause.Failover] = EvidenceWeight.Strong },
        };
        var gone = new ServerEvent(ServerEventKind.Unreachable, T0.AddMilliseconds(-200), null) { Outcome = "refused" };

        var refined = WitnessCorrelation.Refine(before, new WitnessReport([], [gone], []), Wait.From, Wait.To);

        Assert.Equal(TimeoutCause.Failover, refined.Cause);
        Assert.Equal(DiagnosisConfidence.High, refined.Confidence);
        Assert.StartsWith("failover: MuxWatch's own connection could not reach the failed node either (refused, from 02:59:59.8, still)", refined.EvidenceLines[0], StringComparison.Ordinal);
        Assert.Contains(refined.EvidenceLines, line => line.StartsWith("failover: a failover: a replica was promoted to primary in place of 127.0.0.1:17001", StringComparison.Ordinal) && !line.EndsWith("(contributing)", StringComparison.Ordinal));
        Assert.Contains(refined.EvidenceLines, line => line.StartsWith("why: failover outranks gc-pause", StringComparison.Ordinal));
    }

    [Fact]
    public void A_refused_password_stays_a_configuration_failure_whatever_the_witness_saw()
    {
        var before = TimeoutDiagnoser.Diagnose(TimeoutMessageReader.Read("It was not possible to connect to the redis server(s). There was an authentication failure; check that passwords (or client certificates) are configured correctly: (RedisServerException) WRONGPASS invalid username-password pair or user is disabled."));

        Assert.Same(before, WitnessCorrelation.Refine(before, Silent(-1000, 5000), Wait.From, Wait.To));
    }

    [Fact]
    public void A_socket_closed_with_no_sign_in_the_app_reads_no_answer_in_its_guessed_window()
    {
        var report = TimeoutMessageReader.Read("SocketClosed on 127.0.0.1:36983/Interactive, Idle/RanToCompletion, last: GET, origin: ReadAllAsync, outstanding: 10, last-read: 0s ago, last-write: 0s ago, keep-alive: 60s, state: ConnectedEstablished, in: 0, in-pipe: 0, last-heartbeat: 0s ago, v: 3.4.35.20751");
        var before = TimeoutDiagnoser.Diagnose(report);

        Assert.Equal("SocketClosed", report.FailureType);
        Assert.Same(before, WitnessCorrelation.Refine(before, AnsweredAt(100), Wait.From, Wait.To, waited: false, failureType: report.FailureType));
    }

    [Fact]
    public void A_slow_command_the_server_logged_stays_the_cause_and_the_silence_seconds_it()
    {
        var slow = new ServerEvent(ServerEventKind.SlowCommand, T0.AddMilliseconds(-100), T0.AddSeconds(2)) { DurationMs = 2000, Command = "KEYS", SlowlogId = 7 };
        var explained = TimelineCorrelation.Refine(Diagnose(Unanswered), [slow], Wait.From, Wait.To);
        Assert.Equal(TimeoutCause.SlowCommand, explained.Cause);

        var refined = WitnessCorrelation.Refine(explained, Silent(-100, 1900), Wait.From, Wait.To);

        Assert.Equal(TimeoutCause.SlowCommand, refined.Cause);
        Assert.Contains(refined.EvidenceLines, line => line.StartsWith("slow-command: MuxWatch's own connection got no answer either", StringComparison.Ordinal));
    }

    [Fact]
    public void A_huge_value_the_slow_log_holds_stays_the_cause_when_the_server_answered_before_or_after_its_copy()
    {
        var copied = new ServerEvent(ServerEventKind.SlowCommand, T0.AddMilliseconds(-50), T0.AddSeconds(1.4)) { DurationMs = 400, Command = "GET", SlowlogId = 3 };
        var explained = TimelineCorrelation.Refine(Diagnose(Unanswered), [copied], Wait.From, Wait.To);
        Assert.Equal(TimeoutCause.LargePayload, explained.Cause);

        Assert.Same(explained, WitnessCorrelation.Refine(explained, AnsweredAt(420), Wait.From, Wait.To));
    }

    [Theory]
    [InlineData(700, 800, "gc-pause")]
    [InlineData(300, 800, "gc-pause")]
    public void Gc_pauses_over_a_share_of_the_wait_are_the_cause_and_the_unread_reply_their_effect(double pauseMs, double waitMs, string cause)
    {
        var diagnosis = Diagnose(Unanswered.Replace("in: 0,", "in: 2048,", StringComparison.Ordinal), new RuntimeOverWait(waitMs, pauseMs, 900, 0, 2));

        Assert.Equal(cause, diagnosis.Cause.ToName());
        Assert.StartsWith($"gc-pause: blocking garbage collections paused every thread of this process for {pauseMs:0} ms of the {waitMs:0} ms", diagnosis.EvidenceLines[0], StringComparison.Ordinal);
        Assert.DoesNotContain(TimeoutCause.ClientCpu, diagnosis.Causes); // the collections' own CPU is theirs
    }

    [Fact]
    public void A_short_gc_pause_only_contributes()
    {
        var diagnosis = Diagnose(Unanswered, new RuntimeOverWait(800, 100, 50, 0, 2));

        Assert.Equal(TimeoutCause.ServerStall, diagnosis.Cause);
        Assert.Contains(diagnosis.EvidenceLines, line => line.StartsWith("gc-pause: ", StringComparison.Ordinal) && line.EndsWith("contributing, not enough on its own", StringComparison.Ordinal));
    }

    [Fact]
    public void A_process_using_its_cores_or_waiting_for_one_is_short_of_cpu()
    {
        var busy = Diagnose(Unanswered, new RuntimeOverWait(1000, 0, 1900, 0, 2));
        var throttled = Diagnose(Unanswered, new RuntimeOverWait(1000, 0, 200, 400, 2));

        Assert.Equal(TimeoutCause.ClientCpu, busy.Cause);
        Assert.StartsWith("client-cpu: this process used 95% of its 2 cores over the wait", busy.EvidenceLines[0], StringComparison.Ordinal);
        Assert.Equal(TimeoutCause.ClientCpu, throttled.Cause);
        Assert.StartsWith("client-cpu: MuxWatch's dedicated thread, which only sleeps, woke 400 ms late", throttled.EvidenceLines[0], StringComparison.Ordinal);
    }

    [Fact]
    public void The_runtime_over_a_wait_is_the_difference_of_the_samples_around_it()
    {
        var history = new RuntimeHistory();
        history.Add(T0.AddMilliseconds(-50), gcPauseMs: 100, cpuMs: 1000, lateWakeMs: 5);
        history.Add(T0.AddMilliseconds(50), gcPauseMs: 100, cpuMs: 1010, lateWakeMs: 5);
        history.Add(T0.AddMilliseconds(550), gcPauseMs: 520, cpuMs: 1500, lateWakeMs: 9);

        var over = history.Over(Wait.From, Wait.To, Wait.To.AddSeconds(5), cores: 2)!;

        Assert.Equal(600, over.WaitMs);
        Assert.Equal(420, over.GcPauseMs);
        Assert.Equal(500, over.CpuMs);
        Assert.Equal(4, over.LateWakeMs);
        Assert.Null(history.Over(T0.AddSeconds(-10), Wait.To, Wait.To, cores: 2)); // nothing sampled before the wait began
    }

    [Fact]
    public void The_witness_keeps_90_seconds_of_answers_at_any_pace_in_as_little_room_as_they_take()
    {
        // A sidecar's endpoint, PINGed every 2 s for ten minutes: 64 answers hold its 90 s and more, and no more room is taken.
        var calm = new WitnessAnswers();
        for (var i = 0; i < 300; i++)
        {
            calm.Note(T0.AddSeconds(2 * i), T0.AddSeconds(2 * i).AddMilliseconds(1));
        }

        var end = T0.AddSeconds(2 * 299).AddMilliseconds(1);
        Assert.Equal(WitnessAnswers.InitialCapacity, calm.Capacity);
        Assert.Equal(WitnessAnswers.KeptFor.TotalSeconds / 2, calm.Within(end - WitnessAnswers.KeptFor, end).Count);
        Assert.Equal(end, calm.LastBefore(end));

        // An app's, every 200 ms while a timeout waits: the ring grows to its bound and keeps its newest answers, in order.
        var hurried = new WitnessAnswers();
        for (var i = 0; i < 1000; i++)
        {
            hurried.Note(T0.AddMilliseconds(200 * i), T0.AddMilliseconds((200 * i) + 1));
        }

        Assert.Equal(WitnessAnswers.MaxCapacity, hurried.Capacity);
        var kept = hurried.Within(T0, T0.AddHours(1));
        Assert.Equal(WitnessAnswers.MaxCapacity, kept.Count);
        Assert.Equal(T0.AddMilliseconds(200 * 999), kept[^1].Sent);
        Assert.Equal(T0.AddMilliseconds(200 * (1000 - WitnessAnswers.MaxCapacity)), kept[0].Sent);
    }
}
