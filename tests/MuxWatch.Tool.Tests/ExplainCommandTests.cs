using System.Text.Json;
using MuxWatch.Testing;

namespace MuxWatch.Tool.Tests;

/// <summary>The <c>explain</c> command, run as the real service binary with standard input.</summary>
[Trait("Category", "ServiceProcess")] // run once more on the container's native build by test.sh
public sealed class ExplainCommandTests
{
    private const string Starved =
        "StackExchange.Redis.RedisTimeoutException: Timeout performing GET key (5000ms), inst: 2, qu: 0, qs: 6, in: 0, serverEndpoint: 10.0.0.1:6379, IOCP: (Busy=6,Free=994,Min=4,Max=1000), WORKER: (Busy=40,Free=32727,Min=8,Max=32767), POOL: (Threads=48,QueuedItems=310,CompletedItems=99,Timers=2), v: 3.1.31.17473";

    [Fact]
    public async Task Explain_names_the_huge_value_a_small_gets_message_was_queued_behind()
    {
        // Caught live (SidecarStallLiveTests, 3.4.35): a small GET behind a 200 MB GET; the message's next: names the huge one.
        const string behindHuge = "Timeout awaiting response (outbound=0KiB, inbound=204800KiB, 996ms elapsed, timeout is 200ms), command=GET, next: GET app:huge, inst: 0, qu: 0, qs: 0, aw: False, bw: Inactive, rs: TryParseResult, ws: Idle, in: 0, in-pipe: 209715361, last-in: 361, cur-in: 361, lm: 2/3/1/0, sync-ops: 1, async-ops: 21, serverEndpoint: 127.0.0.1:40857, conn-sec: 1, aoc: 1, mc: 1/1/0, clientName: vm(SE.Redis-v3.4.35.20751), IOCP: (Busy=0,Free=1000,Min=64,Max=1000), WORKER: (Busy=4,Free=32763,Min=64,Max=32767), POOL: (Threads=9,QueuedItems=0,CompletedItems=639,Timers=5), v: 3.4.35.20751 (see https://seredis.dev/Timeouts for some common client-side issues that can cause timeouts)";

        var (exitCode, output, _) = await BuiltProgram.RunAsync(BuiltProgram.StartInfo("MuxWatch.Tool", "explain"), behindHuge);

        Assert.Equal(0, exitCode);
        Assert.Contains("Cause:      large-payload", output, StringComparison.Ordinal);
        Assert.Contains("the huge value is app:huge (the message's next: GET)", output, StringComparison.Ordinal);
        Assert.Matches(@"First:\s+app:huge is the huge value: split it", output);
    }

    [Fact]
    public async Task Explain_prints_the_cause_the_evidence_and_the_advice()
    {
        var (exitCode, output, _) = await BuiltProgram.RunAsync(BuiltProgram.StartInfo("MuxWatch.Tool", "explain"), Starved);

        Assert.Equal(0, exitCode);
        // Read like a maintainer's answer: the cause and how sure, why, what first, what would confirm it.
        Assert.Contains("Cause:      thread-pool-starvation (high confidence)", output, StringComparison.Ordinal);
        Assert.Matches(@"Why:\s+WORKER Busy=40 > Min=8 \(strong", output);
        Assert.Matches(@"First:\s+Threads were busy above the pool minimum", output);
        Assert.Matches(@"To confirm: muxwatch_threadpool_busy_threads", output);
        Assert.Contains("WORKER Busy=40 > Min=8", output, StringComparison.Ordinal);
        Assert.Contains("IOCP Busy=6 > Min=4", output, StringComparison.Ordinal);
        Assert.Contains("SetMinThreads", output, StringComparison.Ordinal);
        Assert.Matches(@"qs\s+6\s+written, awaiting a reply", output);
    }

    [Fact]
    public async Task Explain_says_why_one_cause_won_and_reads_a_pasted_screenshot()
    {
        // Issue #2066 as OCR reads a screenshot of it: '=' as '-', 'I' as 'l', '0' as 'O'.
        const string ocr = "Timeout performing GET (5000ms), next: GET ABCD, lnst: 12, qu: O, qs: O, aw: False, rs: ReadAsync, ws: Idle, in: 22649, serverEndpoint: abcd, mc: 1/1/0, lOCP: (Busy-0,Free-1000,Min-1,Max-1000), W0RKER: (Busy-8,Free-32759,Min-1,Max-32767), v: 2.2.88.56325";
        var (exitCode, output, _) = await BuiltProgram.RunAsync(BuiltProgram.StartInfo("MuxWatch.Tool", "explain"), ocr);

        Assert.Equal(0, exitCode);
        Assert.Contains("Cause:      large-payload", output, StringComparison.Ordinal);
        Assert.Contains("outranks the weak thread-pool starvation", output, StringComparison.Ordinal);
        Assert.Matches(@"WORKER\s+\(Busy=8,", output); // read under its real name, as the client wrote it
    }

    [Fact]
    public async Task Explain_on_empty_input_fails_with_a_clear_message()
    {
        var (exitCode, _, error) = await BuiltProgram.RunAsync(BuiltProgram.StartInfo("MuxWatch.Tool", "explain"), "  \n");

        Assert.NotEqual(0, exitCode);
        Assert.Contains("the input is empty", error, StringComparison.Ordinal);
    }

    /// <summary>Issue 38, #3: random bytes answered "unknown (low confidence)" with exit 0, where help says exit 1 means nothing to read.</summary>
    [Theory]
    [InlineData("random-1")]
    [InlineData("random-2")]
    [InlineData("random-3")]
    [InlineData("log")]
    public async Task Explain_on_input_with_no_redis_message_says_so_with_exit_1(string kind)
    {
        var input = kind.StartsWith("random", StringComparison.Ordinal)
            ? new string([.. System.Security.Cryptography.RandomNumberGenerator.GetBytes(30_000).Select(b => (char)(b % 94 + 33))])
            : "2026-11-26 12:00:01 info: Request finished HTTP/1.1 GET /health 200 0.4 ms\n2026-11-26 12:00:02 warn: Slow request 2,000 ms";
        var (exitCode, output, error) = await BuiltProgram.RunAsync(BuiltProgram.StartInfo("MuxWatch.Tool", "explain"), input);

        Assert.Equal(1, exitCode);
        Assert.Contains("no StackExchange.Redis message was found", error, StringComparison.Ordinal);
        Assert.DoesNotContain("Cause:", output, StringComparison.Ordinal);
    }

    [Fact]
    public async Task Explain_reads_a_message_cut_down_to_its_fields()
    {
        var (exitCode, output, _) = await BuiltProgram.RunAsync(BuiltProgram.StartInfo("MuxWatch.Tool", "explain"), "qs: 6, in: 0, WORKER: (Busy=40,Free=32727,Min=8,Max=32767)");

        Assert.Equal(0, exitCode);
        Assert.Contains("Cause:      thread-pool-starvation", output, StringComparison.Ordinal);
    }

    [Fact]
    public async Task Explain_jsonl_writes_exactly_one_object_per_input_line()
    {
        string[] lines =
        [
            JsonSerializer.Serialize(new { message = Starved }),
            "not json at all",
            JsonSerializer.Serialize(new { message = "Timeout performing GET k, inst: 0, queue: 10, qu=0, qs=10, qc=0, wr=0/0, in=0/0" }),
            "{\"message\": 42}",
            JsonSerializer.Serialize(new { message = "No connection is active/available to service this operation: GET k; UnableToConnect on h:6379/Interactive, mc: 1/1/0" }),
        ];

        var (exitCode, output, _) = await BuiltProgram.RunAsync(BuiltProgram.StartInfo("MuxWatch.Tool", "explain", "--jsonl"), string.Join('\n', lines) + "\n");
        var objects = output.Split('\n', StringSplitOptions.RemoveEmptyEntries).Select(line => JsonDocument.Parse(line).RootElement).ToList();

        Assert.Equal(0, exitCode);
        Assert.Equal(lines.Length, objects.Count);
        var starved = objects[0];
        Assert.Equal("thread-pool-starvation", starved.GetProperty("cause").GetString());
        Assert.Equal(JsonValueKind.Array, starved.GetProperty("causes").ValueKind);
        Assert.Equal("GET", starved.GetProperty("command").GetString());
        Assert.Equal(6, starved.GetProperty("fields").GetProperty("qs").GetInt32());
        Assert.Equal(994, starved.GetProperty("fields").GetProperty("IOCP").GetProperty("Free").GetInt32());
        Assert.Equal(310, starved.GetProperty("fields").GetProperty("POOL").GetProperty("QueuedItems").GetInt32());
        Assert.False(string.IsNullOrEmpty(starved.GetProperty("advice").GetString()));
        Assert.True(objects[1].TryGetProperty("error", out _));
        Assert.Equal("server-stall", objects[2].GetProperty("cause").GetString());
        Assert.Equal("0/0", objects[2].GetProperty("fields").GetProperty("wr").GetString());
        Assert.True(objects[3].TryGetProperty("error", out _));
        Assert.Equal("connection-loss", objects[4].GetProperty("cause").GetString());
    }

    [Fact]
    public async Task The_command_line_suggests_for_a_typo_shows_its_version_and_reads_a_response_file()
    {
        var (typo, typoOutput, typoError) = await BuiltProgram.RunAsync(BuiltProgram.StartInfo("MuxWatch.Tool", "explian"));
        var (version, versionOutput, _) = await BuiltProgram.RunAsync(BuiltProgram.StartInfo("MuxWatch.Tool", "--version"));
        var (help, helpOutput, _) = await BuiltProgram.RunAsync(BuiltProgram.StartInfo("MuxWatch.Tool", "explain", "--help"));
        var responseFile = Path.GetTempFileName();
        await File.WriteAllLinesAsync(responseFile, ["explain", "--jsonl"]);
        var (fromFile, fromFileOutput, _) = await BuiltProgram.RunAsync(BuiltProgram.StartInfo("MuxWatch.Tool", "@" + responseFile),
            JsonSerializer.Serialize(new { message = "Timeout performing GET k (5000ms), qu: 0, qs: 2, in: 0" }) + "\n");
        File.Delete(responseFile);

        Assert.Equal(2, typo); // the documented exit code of a bad command line
        Assert.Contains("Did you mean", typoOutput + typoError, StringComparison.Ordinal);
        Assert.Contains("explain", typoOutput, StringComparison.Ordinal);
        Assert.Equal(0, version);
        Assert.StartsWith("0.", versionOutput.Trim(), StringComparison.Ordinal);
        Assert.Equal(0, help);
        Assert.Contains("--jsonl", helpOutput, StringComparison.Ordinal);
        Assert.Contains("muxwatch explain", helpOutput, StringComparison.Ordinal); // the program as users call it, whatever the assembly's name
        Assert.Equal(0, fromFile);
        Assert.Equal("server-stall", JsonDocument.Parse(fromFileOutput.Trim()).RootElement.GetProperty("cause").GetString());
    }

    [Fact]
    public async Task An_unknown_option_is_a_usage_error()
    {
        var (exitCode, _, error) = await BuiltProgram.RunAsync(BuiltProgram.StartInfo("MuxWatch.Tool", "explain", "--bogus"));

        Assert.Equal(2, exitCode);
        Assert.Contains("--bogus", error, StringComparison.Ordinal);
    }

    [Fact]
    public async Task Explain_jsonl_bounds_a_line_and_reads_past_a_byte_order_mark()
    {
        var endless = "{\"message\": \"" + new string('x', 500_000) + "\"}";
        var valid = JsonSerializer.Serialize(new { message = "Timeout performing GET k (5000ms), qu: 0, qs: 2, in: 0" });
        var input = new StringReader("\uFEFF" + valid + "\n" + endless + "\n" + valid + "\n");
        var output = new StringWriter();

        var exitCode = await MuxWatch.Tool.Commands.ExplainCommand.RunAsync(jsonLines: true, file: null, input, output, TextWriter.Null);
        var objects = output.ToString().Split('\n', StringSplitOptions.RemoveEmptyEntries).Select(line => JsonDocument.Parse(line).RootElement).ToList();

        Assert.Equal(0, exitCode);
        Assert.Equal(3, objects.Count);
        Assert.Equal("server-stall", objects[0].GetProperty("cause").GetString());
        Assert.Contains("longer than", objects[1].GetProperty("error").GetString(), StringComparison.Ordinal);
        Assert.Equal("server-stall", objects[2].GetProperty("cause").GetString());
    }
}
