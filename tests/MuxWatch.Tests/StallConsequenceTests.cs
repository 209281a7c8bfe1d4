namespace MuxWatch.Tests;

/// <summary>
/// The rules that keep a stall's consequences under the stall, on strings and on timelines (the live
/// tests induce the same for real): events weighed by how long they blocked the wait, a dropped
/// connection or load that arose during the wait counted under the server's cause, starvation at the
/// pool's minimum, the client's own worked example, a timeout noticed many timeouts late.
/// </summary>
public sealed class StallConsequenceTests
{
    private static readonly DateTimeOffset T0 = new(2026, 11, 23, 12, 0, 0, TimeSpan.Zero);

    private const string StallAt500 = "Timeout performing GET (500ms), next: GET k0, inst: 38, qu: 0, qs: 22, aw: False, bw: SpinningDown, rs: ReadAsync, ws: Idle, in: 0, in-pipe: 0, out-pipe: 0, serverEndpoint: 127.0.0.1:17001, conn-sec: 0.65, mc: 1/1/0, IOCP: (Busy=0,Free=1000,Min=1,Max=1000), WORKER: (Busy=1,Free=32766,Min=2,Max=32767), v: 2.6.90.64945";

    private static TimeoutDiagnosis Diagnose(string message, ThreadPoolSnapshot? beforeWait = null) =>
        TimeoutDiagnoser.Diagnose(TimeoutMessageReader.Read(message), poolBeforeWait: beforeWait);

    private static ServerEvent Slow(string command, double ms, DateTimeOffset loggedAt, long id = 1) =>
        new(ServerEventKind.SlowCommand, loggedAt - TimeSpan.FromMilliseconds(ms), loggedAt + TimeSpan.FromSeconds(1)) { DurationMs = ms, Command = command, SlowlogId = id };

    private static ServerEvent Fork(double ms, DateTimeOffset at) =>
        new(ServerEventKind.Fork, at - TimeSpan.FromMilliseconds(ms), at + TimeSpan.FromSeconds(1)) { DurationMs = ms };

    [Fact]
    public void A_2000_ms_command_outranks_a_3_ms_fork_in_the_same_wait()
    {
        ServerEvent[] events = [new(ServerEventKind.Bgsave, T0, null), Fork(3, T0.AddSeconds(0.1)), Slow("DEBUG", 2000, T0.AddSeconds(2.1))];

        var refined = TimelineCorrelation.Refine(Diagnose(StallAt500), events, T0.AddSeconds(0.2), T0.AddSeconds(0.7));

        Assert.Equal(TimeoutCause.SlowCommand, refined.Cause);
        Assert.Equal(DiagnosisConfidence.High, refined.Confidence);
        Assert.StartsWith("slow-command: DEBUG ran 2000 ms", refined.EvidenceLines[0], StringComparison.Ordinal);
        Assert.Contains(refined.EvidenceLines, line => line.StartsWith("persistence: BGSAVE in progress", StringComparison.Ordinal) && line.EndsWith("(contributing)", StringComparison.Ordinal));
        Assert.DoesNotContain(TimeoutCause.ServerStall, refined.Causes);
    }

    [Fact]
    public void A_command_that_blocked_the_whole_wait_outranks_a_collection_that_paused_a_third_of_it_but_not_one_that_paused_most()
    {
        // Seen under load: a sidecar's PING waited 800 ms behind a 5 s DEBUG SLEEP while a 310 ms collection paused it.
        ServerEvent[] events = [Slow("DEBUG", 5000, T0.AddSeconds(5))];
        var third = TimeoutDiagnoser.Diagnose(TimeoutMessageReader.Read(StallAt500), runtime: new RuntimeOverWait(900, 310, 50, 0, 2));
        var most = TimeoutDiagnoser.Diagnose(TimeoutMessageReader.Read(StallAt500), runtime: new RuntimeOverWait(900, 700, 50, 0, 2));
        Assert.Equal(TimeoutCause.GcPause, third.Cause);
        Assert.Equal(TimeoutCause.GcPause, most.Cause);

        var blocked = TimelineCorrelation.Refine(third, events, T0.AddSeconds(2), T0.AddSeconds(2.8));
        var paused = TimelineCorrelation.Refine(most, events, T0.AddSeconds(2), T0.AddSeconds(2.8));

        Assert.Equal((TimeoutCause.SlowCommand, DiagnosisConfidence.High), (blocked.Cause, blocked.Confidence));
        Assert.Contains(blocked.EvidenceLines, line => line.StartsWith("gc-pause: ", StringComparison.Ordinal) && line.EndsWith("(contributing)", StringComparison.Ordinal));
        Assert.Contains(blocked.EvidenceLines, line => line.StartsWith("why: slow-command outranks gc-pause", StringComparison.Ordinal));
        Assert.Equal(TimeoutCause.GcPause, paused.Cause); // most of the wait paused: the pause keeps priority, the block contributing
        Assert.Contains(paused.EvidenceLines, line => line.StartsWith("slow-command: ", StringComparison.Ordinal) && line.EndsWith("(contributing)", StringComparison.Ordinal));
    }

    [Fact]
    public void A_command_that_blocked_the_whole_wait_outranks_a_busy_process_and_the_witness_seconds_it()
    {
        // Seen in CI (2.6.90): the sidecar's PING waited 576 ms behind a 5 s DEBUG SLEEP while its process used 95% of
        // its 2 cores; client-cpu kept priority, the sleep only contributing, and the witness's silence then named
        // server-stall with high confidence. The CPU delays a reply; it cannot make one the server never sent.
        const string ciProbe = "Timeout awaiting response (outbound=0KiB, inbound=0KiB, 576ms elapsed, timeout is 500ms), command=PING, next: PING, inst: 0, qu: 0, qs: 4, aw: False, bw: Inactive, rs: ReadAsync, ws: Idle, in: 0, in-pipe: 0, out-pipe: 0, last-in: 0, cur-in: 0, sync-ops: 0, async-ops: 9, serverEndpoint: 127.0.0.1:41935, conn-sec: 2.02, mc: 1/1/0, mgr: 10 of 10 available, clientName: muxwatch, IOCP: (Busy=0,Free=1000,Min=64,Max=1000), WORKER: (Busy=7,Free=32760,Min=64,Max=32767), POOL: (Threads=17,QueuedItems=1,CompletedItems=13731), v: 2.6.90.64945";
        var busy = TimeoutDiagnoser.Diagnose(TimeoutMessageReader.Read(ciProbe), runtime: new RuntimeOverWait(620, 0, 1176, 0, 2));
        Assert.Equal(TimeoutCause.ClientCpu, busy.Cause);
        var (from, to) = (T0.AddSeconds(1.4), T0.AddSeconds(1.98));
        ServerEvent[] sleep = [Slow("DEBUG", 5000.1, T0.AddSeconds(6))];

        var blocked = TimelineCorrelation.Refine(busy, sleep, from, to);
        var partly = TimelineCorrelation.Refine(busy, [Slow("DEBUG", 300, T0.AddSeconds(1.7))], from, to);
        // The same sleep, logged 3 s before this wait began: the one rule (InTheWait, as the correlating step applies it
        // when it reads the timeline) hands it to nobody, and the busy CPU stays the cause.
        ServerEvent[] earlier = [Slow("DEBUG", 5000.1, from.AddSeconds(-3))];
        var before = TimelineCorrelation.Refine(busy, [.. earlier.Where(e => InTheWait.Weighs(from, to, e.Start, e.End ?? to))], from, to);

        Assert.Equal((TimeoutCause.SlowCommand, DiagnosisConfidence.High), (blocked.Cause, blocked.Confidence));
        Assert.Contains(blocked.EvidenceLines, line => line.StartsWith("client-cpu: ", StringComparison.Ordinal) && line.EndsWith("(contributing)", StringComparison.Ordinal));
        Assert.Contains(blocked.EvidenceLines, line => line.StartsWith("why: slow-command outranks client-cpu", StringComparison.Ordinal));
        Assert.Equal(TimeoutCause.ClientCpu, partly.Cause); // a block over part of the wait: the CPU keeps priority, the block contributing
        Assert.Contains(partly.EvidenceLines, line => line.StartsWith("slow-command: ", StringComparison.Ordinal) && line.EndsWith("(contributing)", StringComparison.Ordinal));

        Assert.Equal((TimeoutCause.ClientCpu, busy.Confidence), (before.Cause, before.Confidence));
        Assert.DoesNotContain(TimeoutCause.SlowCommand, before.Causes);

        // The witness, silent over the same wait, seconds the sleep instead of naming a stall without a trace.
        var witnessed = WitnessCorrelation.Refine(blocked, new([(T0.AddSeconds(1.1), T0.AddSeconds(5.2))], [], []), from, to);
        Assert.Equal((TimeoutCause.SlowCommand, DiagnosisConfidence.High), (witnessed.Cause, witnessed.Confidence));
        Assert.DoesNotContain(TimeoutCause.ServerStall, witnessed.Causes);
    }

    [Fact]
    public void A_fork_that_blocked_most_of_the_wait_is_persistence_and_a_tiny_one_alone_is_held_weakly()
    {
        var long_ = TimelineCorrelation.Refine(Diagnose(StallAt500), [Fork(450, T0.AddSeconds(0.6))], T0.AddSeconds(0.2), T0.AddSeconds(0.7));
        var tiny = TimelineCorrelation.Refine(Diagnose(StallAt500), [Fork(3, T0.AddSeconds(0.3))], T0.AddSeconds(0.2), T0.AddSeconds(0.7));

        Assert.Equal((TimeoutCause.Persistence, DiagnosisConfidence.High), (long_.Cause, long_.Confidence));
        Assert.Equal((TimeoutCause.Persistence, DiagnosisConfidence.Low), (tiny.Cause, tiny.Confidence));
        Assert.Contains(tiny.EvidenceLines, line => line.Contains("a partial one: the server could have been blocked 3 ms of the 500 ms wait (1%)", StringComparison.Ordinal));
    }

    [Fact]
    public void A_connection_the_client_dropped_while_the_server_was_blocked_is_counted_under_the_block()
    {
        // 3.4.35 drops a connection itself after seconds without a reply: the message alone says connection-loss.
        var dropped = Diagnose("The message timed out in the backlog attempting to send because no connection became available, command=PING, timeout: 500, inst: 0, qu: 0, qs: 0, aw: False, bw: CheckingForTimeout, serverEndpoint: 127.0.0.1:17001, conn-sec: n/a, aoc: 0, mc: 1/1/0, WORKER: (Busy=0,Free=32767,Min=2,Max=32767), v: 3.4.35.20751");
        var disposed = Diagnose("StackExchange.Redis.RedisConnectionException: ConnectionDisposed on Interactive#3@127.0.0.1:17001 (Idle), last: PING, origin: Dispose, outstanding: 1, v: 3.4.35.20751");
        Assert.Equal(TimeoutCause.ConnectionLoss, dropped.Cause);
        Assert.Equal(TimeoutCause.ConnectionLoss, disposed.Cause);
        ServerEvent[] events = [Slow("DEBUG", 5000, T0.AddSeconds(5))];

        foreach (var (diagnosis, from) in new[] { (dropped, T0.AddSeconds(4.4)), (disposed, T0.AddSeconds(-0.5)) })
        {
            var refined = TimelineCorrelation.Refine(diagnosis, events, from, from + (diagnosis == dropped ? TimeSpan.FromMilliseconds(500) : TimeSpan.FromSeconds(5)));

            Assert.Equal(TimeoutCause.SlowCommand, refined.Cause);
            Assert.Equal(DiagnosisConfidence.High, refined.Confidence);
            Assert.Contains(TimeoutCause.ConnectionLoss, refined.Causes);
            Assert.Contains(refined.EvidenceLines, line => line.StartsWith("connection-loss: ", StringComparison.Ordinal) && line.EndsWith("(a consequence: the server was blocked while the request waited)", StringComparison.Ordinal));
            Assert.Contains(refined.EvidenceLines, line => line.StartsWith("why: slow-command outranks connection-loss", StringComparison.Ordinal));

            // The same, as the parts a sink or a test reads: the explaining event first and strong, every
            // connection-loss finding marked a consequence, one why, nothing found left unmarked.
            Assert.Equal((EvidenceRole.Finding, TimeoutCause.SlowCommand, EvidenceWeight.Strong), (refined.Evidence[0].Role, refined.Evidence[0].Cause, refined.Evidence[0].Weight));
            Assert.All(refined.Evidence.Where(e => e.Cause == TimeoutCause.ConnectionLoss), e => Assert.Equal(EvidenceRole.Consequence, e.Role));
            Assert.Single(refined.Evidence, e => e.Role == EvidenceRole.Why);
        }
    }

    [Fact]
    public void A_connection_loss_with_no_server_event_over_the_wait_stays_connection_loss_and_a_refused_password_always_does()
    {
        var lost = Diagnose("StackExchange.Redis.RedisConnectionException: SocketClosed on 127.0.0.1:17002/Interactive, Idle/RanToCompletion, last: GET, origin: ReadAllAsync, outstanding: 1, v: 3.4.35.20751");
        var refused = Diagnose("It was not possible to connect to the redis server(s). AuthenticationFailure (None, last-recv: 310) on 10.0.0.5:6379/Interactive, last: ECHO, v: 2.6.90.64945");

        Assert.Equal(TimeoutCause.ConnectionLoss, TimelineCorrelation.Refine(lost, [Slow("KEYS", 20, T0.AddSeconds(1))], T0, T0.AddSeconds(5)).Cause);
        Assert.Equal(TimeoutCause.ConnectionLoss, TimelineCorrelation.Refine(refused, [Slow("DEBUG", 5000, T0.AddSeconds(5))], T0, T0.AddSeconds(5)).Cause);
    }

    [Fact]
    public void A_connection_dropped_behind_a_huge_value_its_own_multiplexer_asked_for_is_large_payload_and_behind_another_clients_is_not()
    {
        // Seen live (3.4.35, the huge-value app): a 200 MB GET ran 1,041 ms on the server, then the client read it for about 3 s
        // and dropped the connection itself (ConnectionDisposed) with MuxWatch's PING behind it. Counted for its copy alone (a
        // fifth of the 5 s taken for a connection failure) it was contributing, and the failure connection-loss, high.
        var failure = Diagnose("StackExchange.Redis.RedisConnectionException: ConnectionDisposed on 127.0.0.1:17001/Interactive, Idle/Faulted, last: PING, origin: ReadFromPipe, outstanding: 24, last-read: 3s ago, last-write: 3s ago, keep-alive: 60s, state: ConnectedEstablished, mgr: 10 of 10 available, last-heartbeat: 0s ago, global: 0s ago, v: 3.4.35.20751");
        Assert.Equal(TimeoutCause.ConnectionLoss, failure.Cause);
        var caught = T0.AddSeconds(3.9);
        ServerEvent HugeGet(string? sentBy) => new(ServerEventKind.SlowCommand, T0.AddSeconds(-0.04), T0.AddSeconds(2))
        {
            DurationMs = 1041, Command = "GET", Argument = "muxwatch:huge", SlowlogId = 0, SentByMultiplexer = sentBy,
        };

        var ownConnection = TimelineCorrelation.Refine(failure, [HugeGet("app")], caught.AddSeconds(-5), caught, failedConnectionOf: "app");
        var anotherClients = TimelineCorrelation.Refine(failure, [HugeGet(null)], caught.AddSeconds(-5), caught, failedConnectionOf: "app");
        var aWait = TimelineCorrelation.Refine(failure, [HugeGet("app")], caught.AddSeconds(-5), caught);

        Assert.Equal((TimeoutCause.LargePayload, DiagnosisConfidence.High), (ownConnection.Cause, ownConnection.Confidence));
        Assert.StartsWith("large-payload: GET muxwatch:huge ran 1041 ms", ownConnection.EvidenceLines[0], StringComparison.Ordinal);
        Assert.Contains("sent on the connection that failed, which its reply held while it was read", ownConnection.EvidenceLines[0], StringComparison.Ordinal);
        Assert.Contains(ownConnection.Evidence, e => e.Cause == TimeoutCause.ConnectionLoss && e.Role == EvidenceRole.Consequence);
        Assert.Equal(TimeoutCause.ConnectionLoss, anotherClients.Cause); // its copy blocked the server a second: not the drop
        Assert.Equal(TimeoutCause.ConnectionLoss, aWait.Cause); // not said to be a failed connection: its copy alone counts

        // A SET the slow log kept for 12 ms, sent by the same multiplexer 3 s before a kill: a small value read at once, never the drop.
        var small = new ServerEvent(ServerEventKind.SlowCommand, T0.AddSeconds(-0.012), T0.AddSeconds(1)) { DurationMs = 12, Command = "SET", SlowlogId = 1, SentByMultiplexer = "app" };
        Assert.Equal(TimeoutCause.ConnectionLoss, TimelineCorrelation.Refine(failure, [small], caught.AddSeconds(-5), caught, failedConnectionOf: "app").Cause);
    }

    [Fact]
    public void A_slow_get_is_a_huge_value_not_a_command_to_replace()
    {
        var refined = TimelineCorrelation.Refine(Diagnose(StallAt500), [Slow("GET", 1200, T0.AddSeconds(1.2))], T0.AddSeconds(0.2), T0.AddSeconds(0.7));

        Assert.Equal(TimeoutCause.LargePayload, refined.Cause);
        Assert.StartsWith("large-payload: GET ran 1200 ms", refined.EvidenceLines[0], StringComparison.Ordinal);
        Assert.Contains("split large values", refined.Advice, StringComparison.Ordinal);
    }

    [Fact]
    public void Starvation_that_arose_while_the_request_waited_yields_to_the_block_but_starvation_there_before_does_not()
    {
        // A 2-core app: 50 calls time out together and their continuations queue on a pool at its minimum.
        const string piledUp = "Timeout awaiting response (outbound=0KiB, inbound=0KiB, 916ms elapsed, timeout is 500ms), command=GET, next: GET k0, inst: 0, qu: 0, qs: 22, aw: False, bw: SpinningDown, rs: ReadAsync, ws: Idle, in: 0, in-pipe: 0, out-pipe: 0, serverEndpoint: 127.0.0.1:17001, conn-sec: 1.29, mc: 1/1/0, IOCP: (Busy=0,Free=1000,Min=1,Max=1000), WORKER: (Busy=5,Free=32762,Min=2,Max=32767), POOL: (Threads=5,QueuedItems=40,CompletedItems=45), v: 2.6.90.64945";
        var idleBefore = new ThreadPoolSnapshot(1, 2, 32767, 0, 1, 1000, 3, 0, 40);
        var starvedBefore = new ThreadPoolSnapshot(4, 2, 32767, 0, 1, 1000, 4, 300, 40);
        ServerEvent[] debug = [Slow("DEBUG", 2000, T0.AddSeconds(2))];

        var arose = Diagnose(piledUp, idleBefore);
        var already = Diagnose(piledUp, starvedBefore);

        Assert.Equal(EvidenceWeight.Clear, arose.WeightOf(TimeoutCause.ThreadPoolStarvation));
        Assert.Contains(arose.EvidenceLines, line => line.Contains("arose while the request waited", StringComparison.Ordinal));
        Assert.Contains(arose.Evidence, e => e.AroseDuringWait && e.Fields.Contains("WORKER"));
        var yielded = TimelineCorrelation.Refine(arose, debug, T0.AddSeconds(0.5), T0.AddSeconds(1.416));
        Assert.Equal(TimeoutCause.SlowCommand, yielded.Cause);
        Assert.DoesNotContain(yielded.Evidence, e => e.AroseDuringWait && e.Role == EvidenceRole.Consequence); // it already says so: not marked twice
        Assert.Equal(EvidenceWeight.Overriding, already.WeightOf(TimeoutCause.ThreadPoolStarvation));
        var kept = TimelineCorrelation.Refine(already, debug, T0.AddSeconds(0.5), T0.AddSeconds(1.416));
        Assert.Equal(TimeoutCause.ThreadPoolStarvation, kept.Cause);
        Assert.Contains(kept.EvidenceLines, line => line.StartsWith("slow-command: DEBUG", StringComparison.Ordinal) && line.EndsWith("(contributing)", StringComparison.Ordinal));
    }

    [Fact]
    public void Every_thread_busy_at_the_minimum_with_hundreds_queued_is_strong_starvation_over_a_lost_connection()
    {
        var starved = Diagnose("Timeout performing GET (1000ms), next: GET muxwatch:starved, inst: 0, qu: 0, qs: 1, aw: False, rs: ReadAsync, ws: Idle, in: 12, in-pipe: 0, serverEndpoint: 127.0.0.1:17001, conn-sec: n/a, IOCP: (Busy=0,Free=1000,Min=2,Max=1000), WORKER: (Busy=2,Free=32765,Min=2,Max=32767), POOL: (Threads=2,QueuedItems=300,CompletedItems=100), v: 2.6.90.64945");

        Assert.Equal((TimeoutCause.ThreadPoolStarvation, EvidenceWeight.Overriding), (starved.Cause, starved.WeightOf(TimeoutCause.ThreadPoolStarvation)));
        Assert.Contains(starved.EvidenceLines, line => line.StartsWith("thread-pool-starvation: WORKER Busy=2 = Min=2 (strong", StringComparison.Ordinal));
    }

    [Theory]
    [InlineData("Timeout performing GET MyKey (1000ms), inst: 2, qs: 6, in: 0, mgr: 9 of 10 available, IOCP: (Busy=6,Free=994,Min=4,Max=1000), WORKER: (Busy=3,Free=997,Min=4,Max=1000)")]
    [InlineData("Timeout performing GET MyKey (1000ms), inst: 2, qs: 6, in: 0, IOCP: (Busy=6,Free=994,Min=4,Max=1000), WORKER: (Busy=3,Free=997,Min=4,Max=1000), POOL: (Threads=8,QueuedItems=0,CompletedItems=42,Timers=10)")]
    public void The_clients_own_worked_example_reads_as_its_authors_read_it(string message)
    {
        var diagnosis = Diagnose(message);

        Assert.Equal(TimeoutCause.ThreadPoolStarvation, diagnosis.Cause);
        Assert.Equal(DiagnosisConfidence.Low, diagnosis.Confidence);
        Assert.Equal([TimeoutCause.ThreadPoolStarvation, TimeoutCause.ServerStall], diagnosis.Causes);
        Assert.Contains(diagnosis.EvidenceLines, line => line.StartsWith("why: the pool is above its minimum and only qs points at the server", StringComparison.Ordinal));
    }

    [Fact]
    public void The_same_pool_with_the_live_counters_showing_replies_outstanding_is_a_stall_again()
    {
        var report = TimeoutMessageReader.Read("Timeout performing GET MyKey (1000ms), inst: 2, qs: 0, in: 0, serverEndpoint: 127.0.0.1:17001, IOCP: (Busy=6,Free=994,Min=4,Max=1000), WORKER: (Busy=3,Free=997,Min=4,Max=1000), v: 3.4.35.20751");

        var diagnosis = TimeoutDiagnoser.Diagnose(report, live: new LiveCounters("127.0.0.1:17001", true, 6, 0, T0));

        Assert.Equal(TimeoutCause.ServerStall, diagnosis.Cause);
    }

    [Theory]
    [InlineData("qu: 37, qs: 0", "write-backlog")]
    [InlineData("qu: 0, qs: 92", "thread-pool-starvation")]
    public void A_timeout_noticed_many_timeouts_late_says_what_was_stuck(string queues, string cause)
    {
        var pool = cause == "write-backlog" ? "WORKER: (Busy=1,Free=32766,Min=4,Max=32767)" : "WORKER: (Busy=9,Free=32758,Min=4,Max=32767)";
        var diagnosis = Diagnose($"Timeout awaiting response (outbound=0KiB, inbound=0KiB, 20969ms elapsed, timeout is 2000ms), command=GET, inst: 0, {queues}, aw: False, bw: SpinningDown, rs: ReadAsync, ws: Idle, in: 0, {pool}, v: 2.6.90.64945");

        Assert.Equal(cause, diagnosis.Cause.ToName());
        Assert.Contains(diagnosis.EvidenceLines, line => line.Contains("20969 ms elapsed against a 2000 ms timeout (10.5x)", StringComparison.Ordinal));
        Assert.DoesNotContain(Diagnose(StallAt500.Replace("Timeout performing GET (500ms)", "Timeout awaiting response (outbound=0KiB, inbound=0KiB, 936ms elapsed, timeout is 500ms), command=GET", StringComparison.Ordinal)).EvidenceLines,
            line => line.Contains("elapsed against", StringComparison.Ordinal)); // up to a heartbeat late is normal
    }

    [Fact]
    public void A_3x_reader_not_started_beside_a_connected_time_is_a_connection_being_remade()
    {
        var remade = Diagnose("The message timed out in the backlog attempting to send because no connection became available, command=PING, timeout: 500, inst: 10, qu: 0, qs: 0, rs: NotStarted, ws: Idle, in: 0, serverEndpoint: 127.0.0.1:17001, conn-sec: 0, mc: 1/1/0, v: 3.4.35.20751");
        var neverMade = Diagnose("Timeout performing GET (60000ms), inst: 0, qu: 1, qs: 0, aw: False, bw: SpinningDown, rs: NotStarted, ws: Initializing, serverEndpoint: 10.0.0.5:6379, mc: 1/1/0, v: 2.6.66.47313");

        Assert.Contains(remade.EvidenceLines, line => line.Contains("rs: NotStarted with conn-sec: 0: a connection just re-made", StringComparison.Ordinal));
        Assert.Contains(neverMade.EvidenceLines, line => line.Contains("the connection was never made", StringComparison.Ordinal));
    }

    [Fact]
    public void Collections_while_the_client_reads_a_huge_reply_are_that_replys_doing_not_a_cause_beside_it()
    {
        // A full test run, 2.6.90: MuxWatch's PING behind a 200 MB GET, 97 ms of the 356 ms around its wait in blocking collections.
        const string BehindHugeValue = "Timeout awaiting response (outbound=0KiB, inbound=55616KiB, 304ms elapsed, timeout is 200ms), command=PING, next: GET muxwatch:huge, inst: 0, qu: 0, qs: 24, aw: False, bw: Inactive, rs: TryParseResult, ws: Idle, in: 560057, in-pipe: 5545984, out-pipe: 0, last-in: 4, cur-in: 137665006, sync-ops: 1, async-ops: 26, serverEndpoint: 127.0.0.1:43225, conn-sec: 6.12, mc: 1/1/0, mgr: 8 of 10 available, clientName: vm(SE.Redis-v2.6.90.64945), IOCP: (Busy=0,Free=1000,Min=1,Max=1000), WORKER: (Busy=2,Free=32765,Min=2,Max=32767), POOL: (Threads=5,QueuedItems=1,CompletedItems=736), v: 2.6.90.64945";
        var whileReading = TimeoutDiagnoser.Diagnose(TimeoutMessageReader.Read(BehindHugeValue), runtime: new RuntimeOverWait(356, 97, 50, 0, 2));

        Assert.Equal((TimeoutCause.LargePayload, DiagnosisConfidence.High), (whileReading.Cause, whileReading.Confidence));
        Assert.Contains(whileReading.EvidenceLines, line => line.StartsWith("gc-pause: ", StringComparison.Ordinal) && line.Contains("137,665,006 bytes (cur-in)", StringComparison.Ordinal));

        // The same pauses while a small reply is read: the app's own collections, the cause.
        var ownCollections = TimeoutDiagnoser.Diagnose(TimeoutMessageReader.Read(BehindHugeValue.Replace("cur-in: 137665006", "cur-in: 0", StringComparison.Ordinal)), runtime: new RuntimeOverWait(356, 97, 50, 0, 2));
        Assert.Equal(TimeoutCause.GcPause, ownCollections.Cause);
    }
}
