namespace MuxWatch.Tests;

/// <summary>
/// The strength of evidence decides between causes that are present together: strong starvation over
/// what it causes, weak starvation under a clear sign, a configuration failure over anything, and a
/// confidence that says how firmly the winner holds.
/// </summary>
public sealed class DiagnosisStrengthTests
{
    private static TimeoutDiagnosis Diagnose(string message) => TimeoutDiagnoser.Diagnose(TimeoutMessageReader.Read(message));

    [Fact]
    public void Strong_starvation_outranks_the_backlog_timeout_it_plausibly_caused_and_says_why()
    {
        var diagnosis = Diagnose("The message timed out in the backlog attempting to send because no connection became available, command=GET, timeout: 5000, inst: 0, qu: 6, qs: 0, aw: False, bw: CheckingForTimeout, rs: ReadAsync, ws: Idle, in: 0, serverEndpoint: 10.0.0.5:6379, IOCP: (Busy=0,Free=1000,Min=8,Max=1000), WORKER: (Busy=300,Free=32467,Min=8,Max=32767), v: 2.7.20.59961");

        Assert.Equal(TimeoutCause.ThreadPoolStarvation, diagnosis.Cause);
        Assert.Contains(TimeoutCause.ConnectionLoss, diagnosis.Causes);
        Assert.Equal(DiagnosisConfidence.High, diagnosis.Confidence);
        Assert.Contains(diagnosis.EvidenceLines, line => line.StartsWith("why: strong thread-pool starvation outranks connection-loss", StringComparison.Ordinal));
    }

    [Fact]
    public void A_refused_password_outranks_even_strong_starvation()
    {
        var diagnosis = Diagnose("It was not possible to connect to the redis server(s). AuthenticationFailure (None, last-recv: 310) on 10.0.0.5:6379/Interactive, Flushed/ComputeResult, last: ECHO, origin: SetResult, outstanding: 0, last-read: 0s ago, last-write: 0s ago, keep-alive: 60s, state: ConnectedEstablishing, mgr: 10 of 10 available, last-heartbeat: never, global: 0s ago, v: 2.6.90.64945, WORKER: (Busy=300,Free=32467,Min=8,Max=32767)");

        Assert.Equal(TimeoutCause.ConnectionLoss, diagnosis.Cause);
    }

    [Fact]
    public void Weak_starvation_yields_to_a_clear_write_backlog_with_medium_confidence()
    {
        var diagnosis = Diagnose("Timeout performing SET k (5000ms), inst: 0, qu: 12, qs: 0, aw: True, bw: Started, rs: ReadAsync, ws: Writing, in: 0, serverEndpoint: 10.0.0.5:6379, WORKER: (Busy=10,Free=32757,Min=8,Max=32767), v: 2.6.122.38350");

        Assert.Equal(TimeoutCause.WriteBacklog, diagnosis.Cause);
        Assert.Equal(DiagnosisConfidence.Medium, diagnosis.Confidence);
        Assert.Contains(diagnosis.EvidenceLines, line => line.Contains("outranks the weak thread-pool starvation", StringComparison.Ordinal));
    }

    [Fact]
    public void Many_items_queued_make_starvation_strong_even_a_few_threads_over_the_minimum()
    {
        // On a 2-core host the minimum is 2: four busy with 300 queued is a starved app.
        var diagnosis = Diagnose("Timeout performing GET k (1000ms), inst: 1, qu: 0, qs: 8, in: 0, serverEndpoint: 10.0.0.5:6379, WORKER: (Busy=4,Free=32763,Min=2,Max=32767), POOL: (Threads=4,QueuedItems=300,CompletedItems=26), v: 2.6.122.38350");

        Assert.Equal(TimeoutCause.ThreadPoolStarvation, diagnosis.Cause);
        Assert.DoesNotContain(TimeoutCause.ServerStall, diagnosis.Causes);
    }

    [Fact]
    public void A_full_socket_behind_a_huge_reply_in_the_pipe_is_the_payload_not_a_reader_waiting_for_a_thread()
    {
        // Caught live (3.4.35, the huge-value test, pool minimum 2): the reader was working through 94 MB in its pipe,
        // the socket full behind it, one thread over the minimum; it was once named starvation with high confidence.
        var diagnosis = Diagnose("Timeout performing GET (200ms), next: GET muxwatch:huge, inst: 23, qu: 0, qs: 0, aw: False, bw: Inactive, rs: ReadAsync, ws: Idle, in: 1702558, in-pipe: 94752932, last-in: 7, cur-in: 7, lm: 2/3/1/0, sync-ops: 1, async-ops: 24, serverEndpoint: 127.0.0.1:34747, conn-sec: 3.47, aoc: 0, mc: 1/1/0, clientName: vm(SE.Redis-v3.4.35.20751), IOCP: (Busy=0,Free=1000,Min=1,Max=1000), WORKER: (Busy=3,Free=32764,Min=2,Max=32767), POOL: (Threads=6,QueuedItems=0,CompletedItems=399,Timers=2), v: 3.4.35.20751");

        Assert.Equal(TimeoutCause.LargePayload, diagnosis.Cause);
        Assert.Contains(diagnosis.EvidenceLines, line => line.Contains("fill the socket buffer behind the large reply the reader is working through (in-pipe)", StringComparison.Ordinal));
    }

    [Fact]
    public void A_full_socket_with_the_pool_above_its_minimum_and_no_large_reply_is_still_a_reader_waiting_for_a_thread()
    {
        var diagnosis = Diagnose("Timeout performing GET k (5000ms), inst: 2, qu: 0, qs: 6, aw: False, rs: ReadAsync, ws: Idle, in: 64221, in-pipe: 0, out-pipe: 0, serverEndpoint: 10.0.0.5:6379, IOCP: (Busy=0,Free=1000,Min=8,Max=1000), WORKER: (Busy=40,Free=32727,Min=8,Max=32767), v: 2.6.122.38350");

        Assert.Equal(TimeoutCause.ThreadPoolStarvation, diagnosis.Cause);
        Assert.Contains(diagnosis.EvidenceLines, line => line.Contains("the reader was waiting for a thread", StringComparison.Ordinal));
    }

    [Theory]
    [InlineData("95", "client-cpu", "high")] // saturated: the reader could not run
    [InlineData("80", "server-stall", "medium")] // busy: listed, contributing
    [InlineData("40", "server-stall", "medium")]
    public void Local_cpu_near_100_percent_is_the_clients_cpu_not_the_server(string cpu, string cause, string confidence)
    {
        var diagnosis = Diagnose($"Timeout performing GET k, inst: 1, queue: 3, qu: 0, qs: 3, qc: 0, wr: 0, wq: 0, in: 0, ar: 0, IOCP: (Busy=0,Free=1000,Min=4,Max=1000), WORKER: (Busy=1,Free=8190,Min=4,Max=8191), Local-CPU: {cpu}%");

        Assert.Equal(cause, diagnosis.Cause.ToName());
        Assert.Equal(confidence, diagnosis.Confidence.ToString().ToLowerInvariant());
        Assert.Equal(cpu != "40", diagnosis.Causes.Contains(TimeoutCause.ClientCpu));
    }

    [Fact]
    public void A_3x_message_with_qs_0_is_read_by_its_generation_and_held_weakly()
    {
        var diagnosis = Diagnose("Timeout performing GET (500ms), next: GET k0, inst: 117, qu: 0, qs: 0, aw: False, bw: Inactive, rs: ReadAsync, ws: Idle, in: 0, in-pipe: 0, serverEndpoint: 127.0.0.1:16393, WORKER: (Busy=0,Free=32767,Min=2,Max=32767), v: 3.4.35.20751");
        var twoX = Diagnose("Timeout performing GET (500ms), next: GET k0, inst: 117, qu: 0, qs: 0, aw: False, bw: Inactive, rs: ReadAsync, ws: Idle, in: 0, in-pipe: 0, serverEndpoint: 127.0.0.1:16393, WORKER: (Busy=0,Free=32767,Min=2,Max=32767), v: 2.6.96.30123");

        Assert.Equal((TimeoutCause.ServerStall, DiagnosisConfidence.Low), (diagnosis.Cause, diagnosis.Confidence));
        Assert.Contains(diagnosis.EvidenceLines, line => line.StartsWith("read as 3.x (v: 3.4.35.20751)", StringComparison.Ordinal));
        Assert.Equal(TimeoutCause.Unknown, twoX.Cause); // 2.x fills qs: 0 means nothing outstanding
    }
}
