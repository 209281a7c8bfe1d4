using System.Text.Json;
using MuxWatch.Testing;

namespace MuxWatch.Tests.Live;

/// <summary>
/// An app like a user's (its own process, its pool at the default minimum of this 2-core machine, its
/// multiplexer watched at the defaults) with 51 calls in flight while its real server stops: in
/// <c>DEBUG SLEEP 2</c> with the slow log on, stopped by the operating system (a paused host: nothing
/// logged), asleep during a save with the slow log off, or killed; and an app paused by its own garbage
/// collections. When the calls time out together their continuations pile onto the small pool and 3.x
/// gives up on its connection: those are the stall's consequences, so every one of the app's timeouts must
/// be named by what stopped the server (or the app), settled, and counted once under it. Run on both ends
/// of the client range by test.sh.
/// </summary>
[Trait("Category", "LiveProbe")]
[TakesMinutes]
public sealed class StallDiagnosisLiveTests : IAsyncLifetime
{
    private RedisServer _redis = null!;

    public async Task InitializeAsync() => _redis = await RedisServer.StartAsync();

    public async Task DisposeAsync() => await _redis.DisposeAsync();

    [Fact]
    public async Task Every_timeout_of_a_stall_on_a_small_pool_is_the_slow_command_and_counted_once_under_it()
    {
        var run = await StallAsync();

        Assert.All(run.Timeouts, t => Assert.Equal("slow-command", t.GetProperty("cause").GetString()));
        Assert.All(run.Timeouts, t =>
        {
            // What ran, and who sent it: a connection named as a batch job would be, made in the app's own process, so
            // found by discovery and watched: MuxWatch names it as the multiplexer it watches.
            var first = t.GetProperty("evidence")[0].GetString()!;
            Assert.StartsWith("slow-command: DEBUG SLEEP ran 2", first, StringComparison.Ordinal);
            Assert.True(System.Text.RegularExpressions.Regex.IsMatch(first, @", sent by 127\.0\.0\.1:\d+ \(nightly-export: the watched multiplexer 'nightly-export'\)$"), first);
        });
        run.AssertCountedOnceUnder("slow-command");
    }

    [Fact]
    public async Task A_bgsave_forked_inside_the_wait_does_not_outrank_the_command_that_blocked_it()
    {
        var run = await StallAsync("bgsave");

        Assert.All(run.Timeouts, t =>
        {
            Assert.Equal("slow-command", t.GetProperty("cause").GetString());
            var persistence = t.GetProperty("evidence").EnumerateArray().Select(e => e.GetString()!).Where(e => e.StartsWith("persistence: ", StringComparison.Ordinal)).ToList();
            Assert.All(persistence, line => Assert.EndsWith("(contributing)", line, StringComparison.Ordinal));
        });
        Assert.Contains(run.Timeouts, t => t.GetProperty("evidence").EnumerateArray().Any(e => e.GetString()!.Contains("fork", StringComparison.Ordinal)));
        run.AssertCountedOnceUnder("slow-command");
    }

    [Fact]
    public async Task A_stall_nothing_on_the_server_records_is_a_server_stall_witnessed_by_muxwatchs_own_connection()
    {
        // The server's process stopped for 5 s (SIGSTOP), as a paused VM or a swapping host stops it: no command
        // runs long, the slow log stays empty, the same process and connections afterwards. 3.x gives up on its
        // connection during the silence; 2.x piles continuations on its small pool. Neither is the cause.
        var run = await StallAsync("pause");

        Assert.All(run.Timeouts, t =>
        {
            Assert.True(t.GetProperty("cause").GetString() == "server-stall", t.ToString());
            Assert.Equal("high", t.GetProperty("confidence").GetString());
            var evidence = Lines(t);
            Assert.Contains(evidence, e => e.StartsWith("server-stall: MuxWatch's own connection got no answer either", StringComparison.Ordinal));
            Assert.Contains(evidence, e => e.StartsWith("nothing on the server's timeline explains it", StringComparison.Ordinal));
        });
        Assert.Empty(await SlowLogAsync());
        run.AssertCountedOnceUnder("server-stall");
    }

    [Fact]
    public async Task A_stall_during_a_save_with_the_slow_log_off_is_a_server_stall_and_the_save_only_contributes()
    {
        // DEBUG SLEEP 3 while a BGSAVE runs, the slow log off: the save's child blocks nothing, so it is no cause.
        var run = await StallAsync("quiet-bgsave");

        Assert.All(run.Timeouts, t =>
        {
            Assert.True(t.GetProperty("cause").GetString() == "server-stall", t.ToString());
            Assert.Contains(Lines(t), e => e.StartsWith("persistence: BGSAVE", StringComparison.Ordinal) && e.EndsWith("(contributing)", StringComparison.Ordinal));
        });
        run.AssertCountedOnceUnder("server-stall");
    }

    [Fact]
    public async Task Every_failure_after_the_server_was_killed_is_connection_loss_witnessed_by_muxwatchs_own_connection()
    {
        var run = await StallAsync("kill");

        Assert.All(run.Timeouts, t =>
        {
            Assert.True(t.GetProperty("cause").GetString() == "connection-loss", t.ToString());
            Assert.Contains(Lines(t), e => e.StartsWith("connection-loss: MuxWatch's own connection could not reach the server either (refused", StringComparison.Ordinal));
        });

        // The client also raises, inside itself, a SocketClosed for each connection the kill closed, and 2.x a write
        // timeout for the sync call it had already given up on: MuxWatch sees those too, each under connection-loss.
        run.AssertCountedUnder("connection-loss", exactly: false);
    }

    [Fact]
    public async Task Timeouts_while_blocking_collections_pause_the_app_are_gc_pause_not_the_reply_left_unread()
    {
        // The app's heap holds 40 million small objects; full blocking collections pause it for most of a second
        // each, while its GETs run. The server answers at once; the app cannot read.
        var (exitCode, output, error) = await BuiltProgram.RunAsync(BuiltProgram.StartInfo("MuxWatch.TestApp", ["gc", _redis.EndPoint]));
        Assert.True(exitCode == 0, $"the app's timeouts were not all recorded and settled (exit {exitCode}): {error}\n{output}");
        var run = StallRun.Parse(output);

        Assert.All(run.Timeouts, t =>
        {
            Assert.True(t.GetProperty("cause").GetString() == "gc-pause", t.ToString());
            Assert.StartsWith("gc-pause: blocking garbage collections paused every thread of this process for ", Lines(t)[0], StringComparison.Ordinal);
        });
        run.AssertCountedUnder("gc-pause", exactly: true, atLeast: 1);
    }

    [Fact]
    public async Task A_connection_failure_naming_no_endpoint_in_a_one_server_app_is_that_servers_and_read_with_its_witness()
    {
        // 3.x's "The connection was closed before the command could be written" carries no field: in an app whose one
        // multiplexer talks to one server it can only be that server's, so it gets its endpoint, its multiplexer and the
        // server's witness (seen live: such failures under a starved pool stayed connection-loss without them).
        var (exitCode, output, error) = await BuiltProgram.RunAsync(BuiltProgram.StartInfo("MuxWatch.TestApp", ["fieldless", _redis.EndPoint]));
        Assert.True(exitCode == 0, $"exit {exitCode}: {error}\n{output}");
        var run = StallRun.Parse(output);

        var failure = Assert.Single(run.Timeouts, t => t.GetProperty("message").GetString()!.Contains("closed before the command could be written", StringComparison.Ordinal));
        Assert.Equal(_redis.EndPoint, failure.GetProperty("endpoint").GetString());
        Assert.Equal("app", failure.GetProperty("multiplexer").GetString());
        Assert.Contains(Lines(failure), line => line.Contains("MuxWatch's own connection was answered", StringComparison.Ordinal));
        Assert.Equal(1, run.Metrics.Value("muxwatch_timeouts_total", ("multiplexer", "app"), ("endpoint", _redis.EndPoint), ("source", "first-chance"), ("cause", failure.GetProperty("cause").GetString()!)));
    }

    [Fact]
    public async Task Every_timeout_behind_a_huge_value_is_large_payload_whether_the_server_was_copying_it_or_sending_it()
    {
        // A 200 MB GET with 21 small GETs behind it on the same connection: the server blocks while it copies the
        // value (the slow log holds the GET), then sends it while answering everyone else; the small GETs wait
        // behind it either way. 2.6.90 piles their continuations on its small pool meanwhile: a consequence.
        var (exitCode, output, error) = await BuiltProgram.RunAsync(BuiltProgram.StartInfo("MuxWatch.TestApp", ["huge", _redis.EndPoint]));
        Assert.True(exitCode == 0, $"the app's timeouts were not all recorded and settled (exit {exitCode}): {error}\n{output}");
        var run = StallRun.Parse(output);

        Assert.All(run.Timeouts, t =>
        {
            Assert.True(t.GetProperty("cause").GetString() == "large-payload", t.ToString());
            // Which value, and how large, by the server's own figure: the huge key, whatever key the timed-out call read.
            Assert.True(Lines(t).Any(line => System.Text.RegularExpressions.Regex.IsMatch(line, @"^large-payload: the huge value is muxwatch:huge \(.+\), \d+\.\d MB \(MEMORY USAGE\)$")), t.ToString());
        });
        run.AssertCountedUnder("large-payload", exactly: true, atLeast: 1); // how many time out depends on the machine's load
        Assert.Contains("cmdstat_memory|usage:calls=1,", await _redis.CommandAsync("INFO", "commandstats"), StringComparison.Ordinal); // asked once for all
    }

    [Fact]
    public async Task With_key_sizes_off_the_huge_value_is_named_and_the_server_never_asked()
    {
        var start = BuiltProgram.StartInfo("MuxWatch.TestApp", ["huge", _redis.EndPoint]);
        start.Environment["MuxWatch__KeySizes"] = "false"; // a server where no key may be touched
        var (exitCode, output, error) = await BuiltProgram.RunAsync(start);
        Assert.True(exitCode == 0, $"the app's timeouts were not all recorded and settled (exit {exitCode}): {error}\n{output}");
        var run = StallRun.Parse(output);

        // Every large-payload timeout names the key without its size (what else a run's timeouts are named is the other test's).
        var large = run.Timeouts.Where(t => t.GetProperty("cause").GetString() == "large-payload").ToList();
        Assert.NotEmpty(large);
        Assert.All(large, t => Assert.Contains(Lines(t), line => line.StartsWith("large-payload: the huge value is muxwatch:huge (the slow log's GET, #", StringComparison.Ordinal)
            && line.EndsWith(") (its size not asked: MuxWatch:KeySizes is off)", StringComparison.Ordinal)));
        Assert.DoesNotContain("cmdstat_memory", await _redis.CommandAsync("INFO", "commandstats"), StringComparison.Ordinal);
    }

    [Fact]
    public async Task The_runtimes_own_word_is_heard_when_an_app_blocks_its_pool_on_tasks_and_the_blocking_code_is_named()
    {
        // 300 requests: a service method blocks on an async GET (GetAwaiter().GetResult()), one in five another blocks
        // on a Task.Delay (.Wait()), on the default pool: the replies need the threads the blocked calls hold. The
        // runtime adds threads and says why (CooperativeBlocking); MuxWatch counts it, captures the workers' stacks
        // once, and names both methods in every starvation timeout. Its temporary files (the trace, TraceEvent's
        // index of it) are gone when the app ends.
        var temp = Directory.CreateTempSubdirectory("muxwatch-capture-");
        var start = BuiltProgram.StartInfo("MuxWatch.TestApp", ["block", _redis.EndPoint]);
        start.Environment["TMPDIR"] = temp.FullName;
        var (_, output, error) = await BuiltProgram.RunAsync(start);
        var run = StallRun.Parse(output);
        Assert.Empty(temp.EnumerateFiles("muxwatch-stacks-*"));
        temp.Delete(recursive: true);

        Assert.True(run.Metrics.Value("muxwatch_threadpool_adjustments_total", ("reason", "cooperative-blocking")) > 0, error + run.Metrics.Text);
        Assert.Equal(1, run.Metrics.Value("muxwatch_threadpool_stack_captures_total", ("outcome", "captured")));
        var capture = Assert.Single(run.PoolStacks.GetProperty("captures").EnumerateArray());
        Assert.Equal("cooperative-blocking", capture.GetProperty("trigger").GetString());
        var sites = capture.GetProperty("sites").EnumerateArray().Select(site => (site.GetProperty("method").GetString(), site.GetProperty("blockedVia").GetString())).ToList();
        Assert.Contains(("CartService.LoadCart", "GetAwaiter().GetResult()"), sites);
        Assert.Contains(("ReportService.WaitForReport", ".Wait()"), sites);
        // One request in five waits for a report: named beside the cart when the capture holds a share one can defend (two
        // threads and a tenth of the blocked workers), and never named from a single thread (a capture early in the
        // starvation may find only a handful of workers).
        var reports = capture.GetProperty("sites").EnumerateArray().Single(site => site.GetProperty("method").GetString() == "ReportService.WaitForReport").GetProperty("threads").GetInt32();
        var reportsNamed = reports >= 2 && reports >= 0.1 * capture.GetProperty("blockedWorkers").GetInt32();

        // Every failure the app threw is the starvation: its timeouts, and, when 3.x drops its connection under the starved
        // pool, its RedisConnectionExceptions (no fields to read: the witness answered right up to each says the server
        // was answering, so the drop was the app's).
        Assert.All(run.Timeouts.Where(t => t.GetProperty("exceptionType").GetString() != "StackExchange.Redis.RedisTimeoutException"),
            t => Assert.True(t.GetProperty("cause").GetString() == "thread-pool-starvation", t.ToString()));
        var starved = run.Timeouts.Where(t => t.GetProperty("exceptionType").GetString() == "StackExchange.Redis.RedisTimeoutException").ToList();
        Assert.NotEmpty(starved);
        Assert.All(starved, t =>
        {
            Assert.True(t.GetProperty("cause").GetString() == "thread-pool-starvation", t.ToString());
            // The runtime's word, read by the diagnosis: blocked on tasks, so the advice is about sync over async. Said while the
            // request waited, or, for a wait late in the starvation, when its workers blocked (the runtime adds a thread as a
            // worker blocks, not again while it stays blocked: seen on CI, a wait 10 s into the starvation heard nothing of its own).
            Assert.True(Lines(t).Any(line => System.Text.RegularExpressions.Regex.IsMatch(line,
                @"^thread-pool-starvation: the runtime added pool threads (once|\d+ times) (while the request waited|in the starvation this request waited in \(since .+, the pool starved at every sample\)) because pool threads were blocked on tasks")), t.ToString());
            // The code that blocked, with counts and how, right after it.
            var named = Lines(t).Single(line => line.StartsWith("thread-pool-starvation: pool workers blocked in the app's code (stacks captured ", StringComparison.Ordinal));
            Assert.Matches(@"CartService\.LoadCart, \d+ of \d+ blocked workers, via GetAwaiter\(\)\.GetResult\(\)", named);
            Assert.Equal(reportsNamed, System.Text.RegularExpressions.Regex.IsMatch(named, @"ReportService\.WaitForReport, \d+ of \d+ blocked workers, via \.Wait\(\)"));
            Assert.Matches(@"^(CartService\.LoadCart blocks a pool thread on GetAwaiter\(\)\.GetResult\(\)|ReportService\.WaitForReport blocks a pool thread on \.Wait\(\)): make it async and await the call instead\. The runtime saw pool threads blocked on tasks",
                t.GetProperty("advice").GetString());
        });
    }

    [Fact]
    public async Task Starvation_after_a_start_up_blip_and_a_stall_and_beside_a_bystander_is_named_by_its_own_evidence_alone()
    {
        // The block app, after what a real app goes through first: a start-up blip (a capture, maybe of nobody), a 2 s stall
        // of the server that ended 3 s before the burst (a silence MuxWatch's witness recorded), and one pool thread of a
        // hosted job in a long wait of its own beside the blocking code. None of it belongs to the timeouts' waits: every
        // one is the starvation, named by a capture taken in it, the blocking method named and the bystander never.
        var (_, output, error) = await BuiltProgram.RunAsync(BuiltProgram.StartInfo("MuxWatch.TestApp", ["block", _redis.EndPoint, "after-noise"]));
        var run = StallRun.Parse(output);
        var stallEnded = DateTimeOffset.Parse(output.Split('\n').Single(line => line.StartsWith("stall ended: ", StringComparison.Ordinal))["stall ended: ".Length..], System.Globalization.CultureInfo.InvariantCulture);

        // The starvation was captured, not only the blip: a capture after the stall names the blocking method.
        var captures = run.PoolStacks.GetProperty("captures").EnumerateArray().ToList();
        Assert.Contains(captures, c => c.GetProperty("at").GetDateTimeOffset() > stallEnded
            && c.GetProperty("sites").EnumerateArray().Any(site => site.GetProperty("method").GetString() == "CartService.LoadCart"));

        // What timed out during the stall itself (MuxWatch's probe of the app's multiplexer, a PING) is the stall's.
        // (A connection failure gives no wait: its time is when it was caught.)
        var ofTheStall = run.Timeouts.Where(t => (t.TryGetProperty("waitingSince", out var since) ? since : t.GetProperty("time")).GetDateTimeOffset() < stallEnded).ToList();
        Assert.All(ofTheStall, t => Assert.True(t.GetProperty("cause").GetString() == "server-stall", t.ToString()));
        var ofTheStarvation = run.Timeouts.Except(ofTheStall).ToList();
        var requests = ofTheStarvation.Where(t => t.GetProperty("exceptionType").GetString() == "StackExchange.Redis.RedisTimeoutException").ToList();
        Assert.True(requests.Count > 0, error + output);
        Assert.All(requests, t =>
        {
            Assert.True(t.GetProperty("cause").GetString() == "thread-pool-starvation", t.ToString());
            Assert.DoesNotContain(Lines(t), line => line.StartsWith("server-stall: ", StringComparison.Ordinal));
            var named = Lines(t).Single(line => line.StartsWith("thread-pool-starvation: pool workers blocked in the app's code (stacks captured ", StringComparison.Ordinal));
            Assert.Matches(@"CartService\.LoadCart, \d+ of \d+ blocked workers, via GetAwaiter\(\)\.GetResult\(\)", named);
            Assert.DoesNotContain("NightlyJob", named, StringComparison.Ordinal);
            Assert.DoesNotContain("Startup.WarmCache", named, StringComparison.Ordinal);
            Assert.DoesNotContain("NightlyJob", t.GetProperty("advice").GetString(), StringComparison.Ordinal);
        });

        // The client's own connection failures in the starved pool (3.x drops its connection, and fails what waited for it):
        // the starvation too, on the witness answered right up to each (never the stall that had ended before they began).
        Assert.All(ofTheStarvation.Except(requests), t => Assert.True(t.GetProperty("cause").GetString() == "thread-pool-starvation", t.ToString()));
    }

    [Fact]
    public async Task A_pool_kept_busy_by_computing_is_starvation_the_runtime_says_was_not_blocking_on_tasks_and_the_busy_code_is_named()
    {
        // 150 work items compute 300 ms each on pool threads, nothing blocked: the runtime reports no thread blocked on a task,
        // and MuxWatch says the threads were busy (and not "sync over async"), in the method that computes.
        var (_, output, error) = await BuiltProgram.RunAsync(BuiltProgram.StartInfo("MuxWatch.TestApp", ["busy", _redis.EndPoint]));
        var run = StallRun.Parse(output);

        var starved = run.Timeouts.Where(t => t.GetProperty("cause").GetString() == "thread-pool-starvation").ToList();
        Assert.True(starved.Count > 0, error + output);
        Assert.Equal(1, run.Metrics.Value("muxwatch_threadpool_stack_captures_total", ("outcome", "captured")));
        Assert.All(starved, t =>
        {
            Assert.DoesNotContain(Lines(t), line => line.Contains("blocked on tasks (its CooperativeBlocking", StringComparison.Ordinal));
            Assert.Contains(Lines(t), line => line.StartsWith("thread-pool-starvation: the runtime reported no pool thread blocked on a task while the request waited", StringComparison.Ordinal)
                && line.EndsWith("the threads were busy (CPU-bound work) or blocked on something other than a task (locks, synchronous I/O, Thread.Sleep)", StringComparison.Ordinal));
            Assert.DoesNotContain(Lines(t), line => line.Contains("pool workers blocked in the app's code", StringComparison.Ordinal));
            Assert.Contains(Lines(t), line => System.Text.RegularExpressions.Regex.IsMatch(line,
                @"^thread-pool-starvation: no pool worker was blocked in the app's code \(stacks captured .*\): \d+ of \d+ were busy running work: PriceCalculator\.Compute, \d+ of \d+"));
            Assert.StartsWith("PriceCalculator.Compute keeps pool threads busy: move CPU-bound work off the pool or make it cheaper. The pool's threads were busy, not blocked on tasks",
                t.GetProperty("advice").GetString(), StringComparison.Ordinal);
        });
    }

    private static List<string> Lines(JsonElement timeout) => StallRun.Lines(timeout);

    private async Task<string> SlowLogAsync() => (await _redis.CommandAsync("SLOWLOG", "GET", "10")).Trim();

    private async Task<StallRun> StallAsync(params string[] variant)
    {
        var (exitCode, output, error) = await BuiltProgram.RunAsync(BuiltProgram.StartInfo("MuxWatch.TestApp", ["stall", _redis.EndPoint, .. variant]));
        Assert.True(exitCode == 0, $"the app's timeouts were not all recorded and settled (exit {exitCode}): {error}\n{output}");
        return StallRun.Parse(output);
    }
}
