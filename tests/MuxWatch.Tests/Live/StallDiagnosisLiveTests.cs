using System.Text.Json;
using MuxWatch.Testing;

namespace MuxWatch.Tests.Live;

/// <summary>
/// An app like a user's (its own process, its pool at the default minimum of this 2-core machine, its
/// multiplexer watched at the defaults) with 51 calls in flight while its real server stops: in
/// <c>DEBUG SLEEP 2</c> with the slow log on, stopped by the operating system (a paused host: nothing
/// logged), asleep during a save with the slow log off, or killed; or a huge value behind the calls (the
/// causes in the app itself are <see cref="AppSideDiagnosisLiveTests"/>'). When the calls time out together their continuations pile onto the small pool and 3.x
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
        // How many time out depends on the machine's load; 2.x may add a write timeout for the sync call it had
        // already given up on (seen once in CI: 22 calls threw, 23 recorded, all large-payload).
        run.AssertCountedUnder("large-payload", exactly: true, atLeast: 1, raisedInside: 1);
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

        // Every large-payload timeout names the key without its size (what else a run's timeouts are named is the other
        // test's): found in the slow log, or, for MuxWatch's own PING through the app's multiplexer that timed out
        // behind the value (source probe), in its message's active field.
        var large = run.Timeouts.Where(t => t.GetProperty("cause").GetString() == "large-payload").ToList();
        Assert.NotEmpty(large);
        Assert.All(large, t => Assert.Contains(Lines(t), line => line.StartsWith("large-payload: the huge value is muxwatch:huge (", StringComparison.Ordinal)
            && line.EndsWith(") (its size not asked: MuxWatch:KeySizes is off)", StringComparison.Ordinal)));
        Assert.Contains(large, t => Lines(t).Any(line => line.StartsWith("large-payload: the huge value is muxwatch:huge (the slow log's GET, #", StringComparison.Ordinal)));
        Assert.DoesNotContain("cmdstat_memory", await _redis.CommandAsync("INFO", "commandstats"), StringComparison.Ordinal);
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
