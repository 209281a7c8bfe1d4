namespace MuxWatch.Tests;

/// <summary>
/// The readings the client's maintainers give that the pool's Busy-against-Min alone misses (issue 36's kinds),
/// on messages in the shapes the client writes: a hundred or more threads busy whatever the minimum, most calls
/// synchronous, outranking the large reply or the write queue beside them; a few dozen busy below a raised
/// minimum (the machine loaded); a known client defect by version; a message with no deciding field; a message
/// pasted inside JSON. The public messages these were read from are rows of Corpus/public-reports.json.
/// </summary>
public sealed class MaintainersReadingTests
{
    // 2.6's fields, as in the corpus's 2.6 rows; each test sets the figures it is about.
    private static string Message(string worker, string syncOps, string extra = "in: 0, cur-in: 0, qu: 0") =>
        $"Timeout performing GET app:key (5000ms), next: GET app:key, inst: 0, {extra}, qs: 3, aw: False, bw: SpinningDown, rs: ReadAsync, ws: Idle, in-pipe: 0, out-pipe: 0, last-in: 0, {syncOps}, serverEndpoint: 10.0.0.5:6379, conn-sec: 1200.5, aoc: 0, mc: 1/1/0, mgr: 10 of 10 available, IOCP: (Busy=0,Free=1000,Min=8,Max=1000), WORKER: ({worker}), v: 2.6.122.38350";

    private static TimeoutDiagnosis Diagnose(string message) => TimeoutDiagnoser.Diagnose(TimeoutMessageReader.Read(message));

    [Fact]
    public void A_hundred_busy_threads_below_a_raised_minimum_with_synchronous_callers_is_thread_exhaustion()
    {
        var diagnosis = Diagnose(Message("Busy=140,Free=32627,Min=1024,Max=32767", "sync-ops: 9800000, async-ops: 120000"));

        Assert.Equal(TimeoutCause.ThreadPoolStarvation, diagnosis.Cause);
        Assert.StartsWith("thread-pool-starvation: WORKER Busy=140 against a minimum of 1024: a hundred or more worker threads busy is thread exhaustion whatever the minimum; 99% of its calls synchronous", diagnosis.EvidenceLines[0], StringComparison.Ordinal);
    }

    [Fact]
    public void The_large_reply_beside_exhausted_synchronous_callers_is_left_behind_by_them()
    {
        var diagnosis = Diagnose(Message("Busy=284,Free=32483,Min=1024,Max=32767", "sync-ops: 5000000, async-ops: 20", "in: 65536, cur-in: 412000, qu: 0"));

        Assert.Equal(TimeoutCause.ThreadPoolStarvation, diagnosis.Cause);
        Assert.Contains(TimeoutCause.LargePayload, diagnosis.Causes);
    }

    [Fact]
    public void The_write_queue_beside_exhausted_synchronous_callers_is_left_behind_by_them()
    {
        var diagnosis = Diagnose(Message("Busy=120,Free=32647,Min=512,Max=32767", "sync-ops: 3100000, async-ops: 4000", "in: 0, cur-in: 0, qu: 37"));

        Assert.Equal(TimeoutCause.ThreadPoolStarvation, diagnosis.Cause);
        Assert.Contains(TimeoutCause.WriteBacklog, diagnosis.Causes);
    }

    [Fact]
    public void A_hundred_busy_threads_with_mostly_asynchronous_callers_is_held_weakly()
    {
        var diagnosis = Diagnose(Message("Busy=110,Free=32657,Min=1024,Max=32767", "sync-ops: 10, async-ops: 9000000"));

        Assert.Equal(EvidenceWeight.Weak, diagnosis.WeightOf(TimeoutCause.ThreadPoolStarvation));
    }

    [Fact]
    public void A_few_dozen_busy_below_a_raised_minimum_with_nothing_else_is_the_machine_loaded()
    {
        var diagnosis = Diagnose(Message("Busy=45,Free=32722,Min=400,Max=32767", "sync-ops: 1000, async-ops: 1000").Replace("qs: 3", "qs: 0", StringComparison.Ordinal));

        Assert.Equal(TimeoutCause.ClientCpu, diagnosis.Cause);
        Assert.StartsWith("client-cpu: WORKER Busy=45 below a raised minimum of 400", diagnosis.EvidenceLines[0], StringComparison.Ordinal);
    }

    [Fact]
    public void A_version_with_the_write_lock_stall_and_nothing_sent_is_a_client_defect_and_a_fixed_version_is_not()
    {
        const string Stalled = "Timeout performing SET cart:17 (1000ms), inst: 0, qu: 0, qs: 0, in: 0, serverEndpoint: 10.0.0.9:6379, mgr: 10 of 10 available, clientName: web-3, IOCP: (Busy=1,Free=999,Min=8,Max=1000), WORKER: (Busy=3,Free=32764,Min=8,Max=32767), v: 2.0.519.50000";

        var defect = Diagnose(Stalled);
        var fixedVersion = Diagnose(Stalled.Replace("v: 2.0.519.50000", "v: 2.0.588.3402", StringComparison.Ordinal));

        Assert.Equal(TimeoutCause.ClientDefect, defect.Cause);
        Assert.Contains("fixed in 2.0.588", defect.EvidenceLines[0], StringComparison.Ordinal);
        Assert.NotEqual(TimeoutCause.ClientDefect, fixedVersion.Cause);
    }

    [Fact]
    public void A_write_timeout_without_v_but_with_phys_is_dated_to_the_versions_with_the_write_lock_stall()
    {
        // 2.0.571's write timeout (the shape of issue #1105's): no v:, but phys: is printed only by 2.0.571 and 2.0.588.
        const string WriteTimeout = "The timeout was reached before the message could be written to the output buffer, and it was not sent, timeout: 1000, phys: Idle, outbound: 12KiB, inbound: 3KiB, inst: 40, qu: 12, qs: 0, in: 0, serverEndpoint: 10.0.0.9:6379, mgr: 10 of 10 available, clientName: web-3, IOCP: (Busy=0,Free=1000,Min=8,Max=1000), WORKER: (Busy=2,Free=32765,Min=8,Max=32767), ";

        var dated = Diagnose(WriteTimeout);
        var undated = Diagnose(WriteTimeout.Replace("phys: Idle, ", string.Empty, StringComparison.Ordinal));
        var answered = Diagnose(WriteTimeout.Replace("qs: 0", "qs: 4", StringComparison.Ordinal));

        // The defect and a real write queue are both strong: the defect is named, the confidence says the evidence is shared.
        Assert.Equal((TimeoutCause.ClientDefect, DiagnosisConfidence.Medium), (dated.Cause, dated.Confidence));
        Assert.Contains(TimeoutCause.WriteBacklog, dated.Causes);
        Assert.StartsWith("client-defect: no v:, but phys: is printed only by 2.0.571 and 2.0.588", dated.EvidenceLines[0], StringComparison.Ordinal);
        Assert.Equal(TimeoutCause.WriteBacklog, undated.Cause);
        Assert.DoesNotContain(TimeoutCause.ClientDefect, answered.Causes); // replies awaited: the symptom is not there
    }

    [Fact]
    public void Every_call_synchronous_with_the_pool_at_half_its_minimum_is_the_pool_and_a_mixed_app_is_not()
    {
        var synchronous = Diagnose(Message("Busy=31,Free=32736,Min=50,Max=32767", "sync-ops: 128019, async-ops: 0"));
        var mixed = Diagnose(Message("Busy=31,Free=32736,Min=50,Max=32767", "sync-ops: 128019, async-ops: 90000"));
        var quietPool = Diagnose(Message("Busy=12,Free=32755,Min=50,Max=32767", "sync-ops: 128019, async-ops: 0"));

        Assert.Equal((TimeoutCause.ThreadPoolStarvation, EvidenceWeight.Clear), (synchronous.Cause, synchronous.WeightOf(TimeoutCause.ThreadPoolStarvation)));
        Assert.Contains("with every call synchronous (sync-ops 128019, async-ops 0)", synchronous.EvidenceLines[0], StringComparison.Ordinal);
        Assert.DoesNotContain(TimeoutCause.ThreadPoolStarvation, mixed.Causes);
        Assert.DoesNotContain(TimeoutCause.ThreadPoolStarvation, quietPool.Causes);
    }

    [Fact]
    public void A_replys_size_alone_is_clear_and_strong_beside_bytes_moved_while_waiting_or_when_it_takes_seconds()
    {
        var sizeAlone = Diagnose(Message("Busy=2,Free=32765,Min=8,Max=32767", "sync-ops: 10, async-ops: 9000", "in: 0, cur-in: 2227321, qu: 0"));
        var socketFull = Diagnose(Message("Busy=2,Free=32765,Min=8,Max=32767", "sync-ops: 10, async-ops: 9000", "in: 65536, cur-in: 2227321, qu: 0"));
        var hundredMegabytes = Diagnose(Message("Busy=2,Free=32765,Min=8,Max=32767", "sync-ops: 10, async-ops: 9000", "in: 0, cur-in: 104857600, qu: 0"));

        Assert.Equal((TimeoutCause.LargePayload, EvidenceWeight.Clear, DiagnosisConfidence.Medium), (sizeAlone.Cause, sizeAlone.WeightOf(TimeoutCause.LargePayload), sizeAlone.Confidence));
        Assert.Equal(EvidenceWeight.Strong, socketFull.WeightOf(TimeoutCause.LargePayload));
        Assert.Equal(EvidenceWeight.Strong, hundredMegabytes.WeightOf(TimeoutCause.LargePayload));
    }

    [Fact]
    public void A_lone_answer_below_strong_names_what_the_message_cannot_rule_out()
    {
        // 1.0's shape (issue #110's): qs=2 and nothing else; the maintainer read a large page being written ahead.
        var bare = Diagnose("Timeout performing PSETEX page:home, inst: 1, mgr: ExecuteSelect, queue: 2, qu=0, qs=2, qc=0, wr=1/1, in=0/0");
        var withFigures = Diagnose(Message("Busy=2,Free=32765,Min=8,Max=32767", "sync-ops: 10, async-ops: 9000"));

        Assert.Equal((TimeoutCause.ServerStall, DiagnosisConfidence.Medium), (bare.Cause, bare.Confidence));
        Assert.Contains(bare.EvidenceLines, line => line.Contains("cannot rule out thread-pool-starvation (no WORKER or IOCP figures) or large-payload (no size of what was sent or received", StringComparison.Ordinal));
        Assert.DoesNotContain(withFigures.EvidenceLines, line => line.Contains("cannot rule out", StringComparison.Ordinal)); // the pool and the sizes are in it
    }

    [Fact]
    public void A_message_with_only_the_command_and_its_times_is_server_or_network_held_weakly()
    {
        var diagnosis = Diagnose("Timeout awaiting response (outbound=0KiB, inbound=0KiB, 5210ms elapsed, timeout is 5000ms), command=HGET");

        Assert.Equal(TimeoutCause.ServerStall, diagnosis.Cause);
        Assert.Equal(DiagnosisConfidence.Low, diagnosis.Confidence);
        Assert.Contains("the message does not say which", diagnosis.EvidenceLines[0], StringComparison.Ordinal);
    }

    [Fact]
    public void A_modest_pool_in_front_of_a_managed_cache_is_the_round_trip_to_the_provider_and_the_same_at_home_is_the_pool()
    {
        const string ToAzure = "Timeout awaiting response (outbound=0KiB, inbound=0KiB, 2210ms elapsed, timeout is 2000ms), command=HGET, next: HGET session:9, inst: 0, qu: 0, qs: 8, aw: False, rs: ReadAsync, ws: Idle, in: 2890, in-pipe: 0, out-pipe: 0, serverEndpoint: shop-prod.redis.cache.windows.net:6380, mc: 1/1/0, mgr: 10 of 10 available, clientName: web-2, IOCP: (Busy=0,Free=1000,Min=2,Max=1000), WORKER: (Busy=13,Free=32754,Min=2,Max=32767), v: 2.2.88.56325";

        var remote = Diagnose(ToAzure);
        var home = Diagnose(ToAzure.Replace("shop-prod.redis.cache.windows.net:6380", "10.1.0.7:6379", StringComparison.Ordinal));

        Assert.Equal(TimeoutCause.ServerStall, remote.Cause);
        Assert.Equal(DiagnosisConfidence.Medium, remote.Confidence);
        Assert.StartsWith("server-stall: qs=8 unanswered from a managed cache reached over the network (shop-prod.redis.cache.windows.net)", remote.EvidenceLines[0], StringComparison.Ordinal);
        Assert.Equal(TimeoutCause.ThreadPoolStarvation, home.Cause);
    }

    [Fact]
    public void A_message_pasted_inside_json_is_read_out_of_its_string()
    {
        var inJson = $"{{\"@t\":\"2026-11-27T02:00:00Z\",\"@l\":\"Error\",\"message\":\"{Message("Busy=140,Free=32627,Min=1024,Max=32767", "sync-ops: 9800000, async-ops: 120000")}\"}}";

        var report = TimeoutMessageReader.Read(inJson);

        Assert.Equal("2.6.122.38350", report.Field("v")?.Raw);
        Assert.Equal(TimeoutCause.ThreadPoolStarvation, TimeoutDiagnoser.Diagnose(report).Cause);
        Assert.Equal(report.Field("v")?.Raw, TimeoutMessageReader.Read(inJson.Replace("\"}", "\", \"level\": 3}", StringComparison.Ordinal)).Field("v")?.Raw);
    }
    [Theory]
    [InlineData("github")] // a code span per line: `line`
    [InlineData("slack")] // the spans run together on one line: `a``b` and `a` `b`
    [InlineData("fenced")] // a fenced block with its language, each line a span inside it as well
    public void A_message_pasted_one_code_span_per_line_is_read_like_its_plain_lines(string shape)
    {
        var plain = Message("Busy=140,Free=32627,Min=1024,Max=32767", "sync-ops: 9800000, async-ops: 120000");
        // Broken where people break it: after the header's timeout, before inst, mgr, IOCP and WORKER.
        string[] lines = [.. plain.Replace(" (5000ms), ", " (5000ms)\n", StringComparison.Ordinal)
            .Replace(", mgr: ", "\nmgr: ", StringComparison.Ordinal)
            .Replace(", IOCP: ", "\nIOCP: ", StringComparison.Ordinal)
            .Replace(", WORKER: ", "\nWORKER: ", StringComparison.Ordinal)
            .Split('\n')];
        var pasted = shape switch
        {
            "github" => string.Join("\n", lines.Select(line => $"`{line}`")),
            "slack" => string.Concat(lines.Take(2).Select(line => $"`{line}`")) + " " + string.Join(" ", lines.Skip(2).Select(line => $"`{line}`")),
            _ => "```text\n" + string.Join("\n", lines.Select(line => $"`{line}`")) + "\n```",
        };

        var read = TimeoutMessageReader.Read(pasted);
        var expected = TimeoutMessageReader.Read(plain);

        Assert.Equal("app:key", read.Key);
        Assert.Equal(expected.Fields.Select(f => (f.Key, f.Value.Raw)), read.Fields.Select(f => (f.Key, f.Value.Raw)));
        Assert.Equal(140, read.Field("WORKER")?.Part("Busy"));
        Assert.Equal("10 of 10 available", read.Field("mgr")?.Raw);
        Assert.Equal(TimeoutCause.ThreadPoolStarvation, TimeoutDiagnoser.Diagnose(read).Cause);
    }
}
