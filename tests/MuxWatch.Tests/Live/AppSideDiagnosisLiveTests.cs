using System.Text.Json;
using MuxWatch.Testing;

namespace MuxWatch.Tests.Live;

/// <summary>
/// The same app as <see cref="StallDiagnosisLiveTests"/>' with the cause in the app itself while its server answers:
/// its pool starved by code that blocks on tasks (at start-up, beside a stall that ended before, beside a bystander)
/// or that computes, and its own blocking collections. Every timeout must be named by the app's own evidence from
/// inside its wait, the blocking or busy code named. A class of its own so that it runs beside the server-side stalls
/// (each class's tests run one after another). Run on both ends of the client range by test.sh.
/// </summary>
[Trait("Category", "LiveProbe")]
[TakesMinutes]
public sealed class AppSideDiagnosisLiveTests : IAsyncLifetime
{
    private RedisServer _redis = null!;

    public async Task InitializeAsync() => _redis = await RedisServer.StartAsync();

    public async Task DisposeAsync() => await _redis.DisposeAsync();

    [Fact]
    public async Task Timeouts_while_blocking_collections_pause_the_app_are_gc_pause_not_the_reply_left_unread()
    {
        // The app's heap holds 40 million small objects; full blocking collections pause it for most of a second
        // each, while its GETs run. The server answers at once; the app cannot read.
        var (exitCode, output, error) = await BuiltProgram.RunAsync(BuiltProgram.StartInfo("MuxWatch.TestApp", ["gc", _redis.EndPoint]));
        Assert.True(exitCode == 0, $"the app's timeouts were not all recorded and settled (exit {exitCode}): {error}\n{output}");
        var run = StallRun.Parse(output);

        // Which waits a collection paused, from what the app measured: each collection's span, and each failed call's
        // start (a sync timeout's message gives its timeout, not when the call began; a late catch would move the wait).
        // Timeouts the app did not throw (MuxWatch's probe of its multiplexer, a write timeout 2.x raises inside itself)
        // wait from when MuxWatch says they did.
        var lines = output.Split('\n', StringSplitOptions.RemoveEmptyEntries);
        var collections = lines.Where(line => line.StartsWith("collection: ", StringComparison.Ordinal))
            .Select(line => line["collection: ".Length..].Split(' ').Select(at => DateTimeOffset.Parse(at, System.Globalization.CultureInfo.InvariantCulture)).ToArray())
            .Select(span => (Start: span[0], End: span[1])).ToList();
        var calls = lines.Where(line => line.StartsWith("call: ", StringComparison.Ordinal))
            .Select(line => JsonDocument.Parse(line["call: ".Length..]).RootElement)
            .ToLookup(call => call.GetProperty("message").GetString()!, call => call.GetProperty("began").GetDateTimeOffset());
        DateTimeOffset Began(JsonElement t) => calls[t.GetProperty("message").GetString()!].Cast<DateTimeOffset?>().FirstOrDefault()
            ?? (t.TryGetProperty("waitingSince", out var since) ? since : t.GetProperty("time")).GetDateTimeOffset();
        bool Within(JsonElement t, TimeSpan after) => collections.Any(c => c.Start <= t.GetProperty("time").GetDateTimeOffset() && c.End + after >= Began(t));
        string Told(JsonElement t) => $"began {Began(t):HH:mm:ss.fff}; collections {string.Join(", ", collections.Select(c => $"{c.Start:HH:mm:ss.fff}-{c.End:HH:mm:ss.fff}"))}; {t}";

        // Every timeout a collection paused is gc-pause, said first. One that began after the collections had ended and
        // failed on its own is not blamed on a pause outside its wait (seen once in CI, 1 of 12 on 2.6.90: a sync GET whose
        // 500 ms held no pause while MuxWatch's witness was answered three times, its reply unread; named
        // client-input-backlog, which this test then failed on for want of the call's own start). In between, a call that began within
        // the slack the wait rule allows (InTheWait.Slack, a second) after a collection ended meets the burst of replies
        // the pause held back: either answer is a fair reading there, and neither is asserted.
        var paused = run.Timeouts.Where(t => Within(t, TimeSpan.Zero)).ToList();
        Assert.NotEmpty(paused);
        Assert.All(paused, t =>
        {
            Assert.True(t.GetProperty("cause").GetString() == "gc-pause", Told(t));
            Assert.StartsWith("gc-pause: blocking garbage collections paused every thread of this process for ", Lines(t)[0], StringComparison.Ordinal);
        });
        Assert.All(run.Timeouts.Where(t => !Within(t, TimeSpan.FromSeconds(1))), t => Assert.True(t.GetProperty("cause").GetString() != "gc-pause", Told(t)));
        run.AssertCountedUnder("gc-pause", exactly: true, atLeast: 1, raisedInside: 0,
            underCause: run.Timeouts.Count(t => t.GetProperty("source").GetString() == "first-chance" && t.GetProperty("cause").GetString() == "gc-pause"));
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
        // Once; or again, when the first came so early in the starvation that it named nobody (it then spends nothing).
        Assert.InRange(run.Metrics.Value("muxwatch_threadpool_stack_captures_total", ("outcome", "captured")) ?? 0, 1, 3);
        var capture = run.PoolStacks.GetProperty("captures").EnumerateArray().Last();
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
        // Once, or again when the first was taken before the computing filled the pool (it named nobody, so spent nothing).
        Assert.InRange(run.Metrics.Value("muxwatch_threadpool_stack_captures_total", ("outcome", "captured")) ?? 0, 1, 3);
        Assert.All(starved, t =>
        {
            Assert.DoesNotContain(Lines(t), line => line.Contains("blocked on tasks (its CooperativeBlocking", StringComparison.Ordinal));
            // A connection failure gives no wait: over the 5 s guessed for it the runtime may have adjusted nothing, and then
            // nothing is said of its word (seen once in 30: a ConnectionDisposed); a timeout's own wait always heard it here.
            var runtimeSaid = Lines(t).Any(line => line.StartsWith("thread-pool-starvation: the runtime reported no pool thread blocked on a task while the request waited", StringComparison.Ordinal)
                && line.EndsWith("the threads were busy (CPU-bound work) or blocked on something other than a task (locks, synchronous I/O, Thread.Sleep)", StringComparison.Ordinal));
            var noWait = t.GetProperty("kind").GetString() == "connection-failure";
            Assert.True(runtimeSaid || (noWait && !Lines(t).Any(line => line.Contains("the runtime", StringComparison.Ordinal))), t.ToString());
            Assert.DoesNotContain(Lines(t), line => line.Contains("pool workers blocked in the app's code", StringComparison.Ordinal));
            Assert.Contains(Lines(t), line => System.Text.RegularExpressions.Regex.IsMatch(line,
                @"^thread-pool-starvation: no pool worker was blocked in the app's code \(stacks captured .*\): \d+ of \d+ were busy running work: PriceCalculator\.Compute, \d+ of \d+"));
            Assert.StartsWith(runtimeSaid
                ? "PriceCalculator.Compute keeps pool threads busy: move CPU-bound work off the pool or make it cheaper. The pool's threads were busy, not blocked on tasks"
                : "PriceCalculator.Compute keeps pool threads busy: move CPU-bound work off the pool or make it cheaper.",
                t.GetProperty("advice").GetString(), StringComparison.Ordinal);
        });
    }

    private static List<string> Lines(JsonElement timeout) => StallRun.Lines(timeout);
}
