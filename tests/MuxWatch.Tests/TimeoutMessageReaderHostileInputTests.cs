using System.Text;
using System.Text.Json;

namespace MuxWatch.Tests;

/// <summary>Whatever it is given, the reader returns what it could read and never throws.</summary>
public sealed class TimeoutMessageReaderHostileInputTests
{
    private const string Real =
        "Timeout performing GET key (5000ms), inst: 2, qu: 0, qs: 6, aw: False, rs: ReadAsync, ws: Idle, in: 0, serverEndpoint: 127.0.0.1:6379, IOCP: (Busy=0,Free=1000,Min=8,Max=1000), WORKER: (Busy=40,Free=32727,Min=8,Max=32767), v: 3.1.31.17473";

    [Theory]
    [InlineData(null)]
    [InlineData("")]
    [InlineData("   \n\r\n  ")]
    [InlineData("(((((((((")]
    [InlineData(")))),,,,;;;;::::====")]
    [InlineData("Timeout performing ")]
    [InlineData("Timeout awaiting response (")]
    [InlineData("Timeout awaiting response (outbound=, inbound=KiB, ms elapsed, timeout is ms), command=")]
    [InlineData("No connection is active/available to service this operation: ")]
    [InlineData("SocketFailure on ")]
    [InlineData("qs: , in: , WORKER: (Busy=,Free=,Min=,Max=)")]
    public void Degenerate_input_gives_a_report_without_throwing(string? input)
    {
        var failuresBefore = TimeoutMessageReader.InternalFailures;

        var report = TimeoutMessageReader.Read(input);
        var diagnosis = TimeoutDiagnoser.Diagnose(report);

        Assert.NotNull(diagnosis.Advice);
        Assert.Equal(failuresBefore, TimeoutMessageReader.InternalFailures); // read, not rescued by the reader's catch-all
    }

    [Fact]
    public void Unbalanced_parenthesis_does_not_swallow_the_fields_after_it()
    {
        var report = TimeoutMessageReader.Read(
            "Timeout performing GET k (5000ms), IOCP: (Busy=0,Free=1000, qs: 5, in: 0, WORKER: (Busy=1,Free=2,Min=4,Max=8)");

        Assert.Equal(5, report.Number("qs"));
        Assert.Equal(0, report.Number("in"));
        Assert.Equal(1, report.Field("WORKER")?.Part("Busy"));
    }

    [Fact]
    public void A_one_megabyte_line_is_read_up_to_the_bound()
    {
        var huge = Real + ", padding: " + new string('x', 1024 * 1024);

        var report = TimeoutMessageReader.Read(huge);

        Assert.Equal(RedisErrorKind.SyncTimeout, report.Kind);
        Assert.Equal(6, report.Number("qs"));
        Assert.True(report.Field("padding")!.Raw.Length <= TimeoutMessageReader.MaxInputChars);
    }

    [Fact]
    public void A_million_fields_are_bounded()
    {
        var many = new StringBuilder("Timeout performing GET k (1ms)");
        for (var i = 0; i < 100_000; i++)
        {
            many.Append(", f").Append(i).Append(": 1");
        }

        var report = TimeoutMessageReader.Read(many.ToString());

        Assert.InRange(report.Fields.Count, 1, 200);
    }

    /// <summary>Inputs shaped to make a careless reader quadratic or hungry; each must stay within the allocation bound.</summary>
    public static TheoryData<string> Pathological() => new()
    {
        "Timeout performing GET k" + string.Concat(Enumerable.Repeat(" (", 20_000)),
        "qs: 1, x: " + string.Concat(Enumerable.Repeat("(a=1,", 8_000)),
        "x: " + string.Concat(Enumerable.Repeat(" (", 20_000)),
        string.Concat(Enumerable.Repeat("Exception", 4_000)) + " Timeout performing GET k (1ms)",
        new string(',', 40_000),
        string.Concat(Enumerable.Repeat("a:", 20_000)),
        string.Concat(Enumerable.Repeat("qs: 1\n", 8_000)),
        string.Concat(Enumerable.Repeat("WOR\n", 10_000)),
        "The message timed out in the backlog" + string.Concat(Enumerable.Repeat(" (1", 10_000)),
        "No connection is active/available to service this operation: " + new string('x', 40_000),
    };

    [Theory]
    [MemberData(nameof(Pathological))]
    public void Pathological_input_is_read_within_the_allocation_bound(string input)
    {
        var failuresBefore = TimeoutMessageReader.InternalFailures;
        var before = GC.GetAllocatedBytesForCurrentThread();
        var report = TimeoutMessageReader.Read(input);
        TimeoutDiagnoser.Diagnose(report);
        var allocated = GC.GetAllocatedBytesForCurrentThread() - before;

        Assert.True(allocated < MaxAllocatedBytesPerMessage, $"{allocated} bytes allocated");
        Assert.Equal(failuresBefore, TimeoutMessageReader.InternalFailures);
    }

    private const long MaxAllocatedBytesPerMessage = 16 * 1024 * 1024;

    [Fact]
    public void Random_bytes_and_mutated_real_messages_never_throw()
    {
        // MUXWATCH_FUZZ_ITERATIONS raises the budget for a longer run by hand; the seed keeps a failure reproducible.
        var iterations = int.TryParse(Environment.GetEnvironmentVariable("MUXWATCH_FUZZ_ITERATIONS"), out var configured) ? configured : 5_000;
        var random = new Random(20261122);
        var corpus = LoadCorpusMessages();
        var failuresBefore = TimeoutMessageReader.InternalFailures;
        for (var i = 0; i < iterations; i++)
        {
            var input = i % 2 == 0 ? RandomText(random) : Mutate(corpus[random.Next(corpus.Count)], random);
            var before = GC.GetAllocatedBytesForCurrentThread();
            var report = TimeoutMessageReader.Read(input);
            var diagnosis = TimeoutDiagnoser.Diagnose(report);
            Assert.True(GC.GetAllocatedBytesForCurrentThread() - before < MaxAllocatedBytesPerMessage, $"input {i} allocated without bound");

            Assert.NotEmpty(diagnosis.Causes);
            Assert.True(report.Fields.Count <= 200);
            Assert.True(report.Notes.Count <= 16);
            Assert.True(report.Command is null || report.Command.Length <= 40);
            Assert.True(report.Endpoint is null || report.Endpoint.Length <= 100);
            _ = JsonSerializer.Serialize(report.Fields.Select(f => f.Value.Raw));
        }

        // "Never throws" is kept by a catch-all; a failure inside the reader is counted, and must not happen.
        Assert.Equal(failuresBefore, TimeoutMessageReader.InternalFailures);
    }

    [Fact]
    public void Structured_exception_data_fills_in_what_the_text_lost()
    {
        // The message was cut before qs and in; Exception.Data still has them, as the client stores them.
        var exception = new InvalidOperationException("Timeout performing GET key (5000ms), inst: 2, qu: 0, q");
        exception.Data["Redis-Queue-Awaiting-Response"] = "6";
        exception.Data["Redis-Inbound-Bytes"] = "0";
        exception.Data["Redis-Inbound-Pipe-Bytes"] = "0";
        exception.Data["Redis-ThreadPool-Workers"] = "(Busy=3,Free=32764,Min=8,Max=32767)";
        exception.Data["Redis-Server-Endpoint"] = "10.0.0.9:6379";
        exception.Data["redis-command"] = "GET key";

        var report = TimeoutMessageReader.Read(exception);
        var diagnosis = TimeoutDiagnoser.Diagnose(report);

        Assert.Equal(6, report.Number("qs"));
        Assert.Equal(3, report.Field("WORKER")?.Part("Busy"));
        Assert.Equal("10.0.0.9:6379", report.Endpoint);
        Assert.Equal("GET", report.Command);
        Assert.Equal(TimeoutCause.ServerStall, diagnosis.Cause);
    }

    [Theory]
    // As 3.4.35 wrote them, on a multiplexer given a UnixDomainSocketEndPoint (measured here).
    [InlineData("Timeout awaiting response (outbound=0KiB, inbound=0KiB, 1252ms elapsed, timeout is 500ms), command=GET, next: GET k, inst: 0, qu: 0, qs: 0, aw: False, bw: Inactive, rs: ReadAsync, ws: Idle, in: 0, in-pipe: 0, last-in: 7, cur-in: 7, serverEndpoint: /tmp/muxwatch-0377.sock, conn-sec: 5.08, aoc: 1, mc: 1/1/0, v: 3.4.35.20751", "/tmp/muxwatch-0377.sock")]
    [InlineData("ConnectionDisposed on Interactive#1@!/tmp/muxwatch-0377.sock (Idle)", "/tmp/muxwatch-0377.sock")]
    [InlineData("SocketFailure (ReadSocketError/ConnectionReset) on /var/run/redis/redis.sock/Interactive, Idle/Faulted", "/var/run/redis/redis.sock")]
    [InlineData("Timeout performing GET k (500ms), qs: 1, serverEndpoint: /tmp/a path with spaces.sock", null)]
    [InlineData("Timeout performing GET k (500ms), qs: 1, serverEndpoint: /", null)]
    public void A_unix_socket_path_is_an_endpoint_and_a_path_no_socket_could_have_is_not(string message, string? endpoint)
    {
        Assert.Equal(endpoint, TimeoutMessageReader.Read(message).Endpoint);
    }

    [Fact]
    public void A_socket_path_longer_than_the_system_allows_is_not_an_endpoint() =>
        Assert.Null(TimeoutMessageReader.Read($"Timeout performing GET k (500ms), qs: 1, serverEndpoint: /{new string('a', 200)}.sock").Endpoint);

    [Fact]
    public void Sampled_thread_pool_decides_starvation_when_the_message_has_no_pool_figures()
    {
        // 1.x clients on .NET Core write no WORKER/IOCP; MuxWatch samples the pool when the exception is thrown.
        var report = TimeoutMessageReader.Read("Timeout performing GET k, inst: 0, queue: 1, qu: 0, qs: 1, qc: 0, wr: 0, wq: 0, in: 0, ar: 0");
        var starved = new ThreadPoolSnapshot(WorkerBusy: 30, WorkerMin: 2, WorkerMax: 32767, IoBusy: 0, IoMin: 2, IoMax: 1000, Threads: 32, QueueLength: 400, CompletedItems: 10);

        var withoutSample = TimeoutDiagnoser.Diagnose(report);
        var withSample = TimeoutDiagnoser.Diagnose(report, starved);

        Assert.Equal(TimeoutCause.ServerStall, withoutSample.Cause);
        Assert.Equal(TimeoutCause.ThreadPoolStarvation, withSample.Cause);
        Assert.Contains(withSample.EvidenceLines, e => e.Contains("WORKER Busy=30 > Min=2 (sampled", StringComparison.Ordinal));
    }

    [Fact]
    public void Figures_in_the_message_win_over_the_sampled_pool()
    {
        var report = TimeoutMessageReader.Read(Real.Replace("Busy=40", "Busy=1", StringComparison.Ordinal));
        var starved = new ThreadPoolSnapshot(30, 2, 32767, 0, 2, 1000, 32, 400, 10);

        Assert.Equal(TimeoutCause.ServerStall, TimeoutDiagnoser.Diagnose(report, starved).Cause);
    }

    private static List<string> LoadCorpusMessages()
    {
        using var document = JsonDocument.Parse(File.ReadAllText(Path.Combine(AppContext.BaseDirectory, "Corpus", "timeout-messages.json")));
        return document.RootElement.EnumerateArray().Select(c => c.GetProperty("message").GetString()!).ToList();
    }

    private static string RandomText(Random random)
    {
        var bytes = new byte[random.Next(0, 2048)];
        random.NextBytes(bytes);
        return Encoding.UTF8.GetString(bytes);
    }

    private static string Mutate(string message, Random random)
    {
        var text = new StringBuilder(message);
        const string interesting = "(),;:=\n\r \"'/\\KiBms%0123456789";
        for (var edits = random.Next(1, 12); edits > 0 && text.Length > 0; edits--)
        {
            var at = random.Next(text.Length);
            switch (random.Next(4))
            {
                case 0:
                    text.Remove(at, Math.Min(random.Next(1, 20), text.Length - at));
                    break;
                case 1:
                    text.Insert(at, interesting[random.Next(interesting.Length)]);
                    break;
                case 2:
                    text.Insert(at, text.ToString(at, Math.Min(random.Next(1, 40), text.Length - at)));
                    break;
                default:
                    text.Length = at;
                    break;
            }
        }

        return text.ToString();
    }
}
