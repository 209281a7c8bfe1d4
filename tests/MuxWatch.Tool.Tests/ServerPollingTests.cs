using System.Globalization;
using System.Net;
using System.Text;
using System.Text.Json;
using MuxWatch.Testing;
using Xunit.Abstractions;

namespace MuxWatch.Tool.Tests;

/// <summary>
/// The sidecar polling real <c>redis-server</c> targets: a BGSAVE seen as an interval, a stall during
/// it diagnosed <c>persistence</c>, the same stall alone diagnosed <c>slow-command</c>, a restart, an
/// ACL that refuses INFO. Run on both ends of the supported client range by test.sh.
/// </summary>
[Trait("Category", "LiveProbe")]
public sealed class ServerPollingTests : IAsyncLifetime
{
    private static readonly TimeSpan PollInterval = TimeSpan.FromMilliseconds(200);
    private readonly List<RedisServer> _servers = [];
    private readonly ITestOutputHelper _output;

    public ServerPollingTests(ITestOutputHelper output)
    {
        _output = output;
        TestThreadPool.EnsureRoomy();
    }

    public Task InitializeAsync() => Task.CompletedTask;

    public async Task DisposeAsync()
    {
        foreach (var server in _servers)
        {
            await server.DisposeAsync();
        }
    }

    private async Task<RedisServer> StartRedisAsync(params string[] arguments)
    {
        var server = await RedisServer.StartAsync(arguments);
        _servers.Add(server);
        return server;
    }

    /// <summary>Fills the server so that a BGSAVE lasts about <paramref name="seconds"/> (rdb-key-save-delay per key).</summary>
    private static async Task MakeSavesSlowAsync(RedisServer redis, double seconds)
    {
        await redis.CommandAsync("DEBUG", "POPULATE", "2000");
        await redis.CommandAsync("CONFIG", "SET", "rdb-key-save-delay", ((int)(seconds * 1_000_000 / 2000)).ToString(CultureInfo.InvariantCulture));
    }

    private static async Task<JsonElement[]> EventsAsync(InMemorySidecar sidecar, string endpoint)
    {
        using var document = JsonDocument.Parse(await sidecar.Client.GetStringAsync(new Uri($"/api/events?endpoint={endpoint}", UriKind.Relative)));
        return [.. document.RootElement.GetProperty("endpoints")[0].GetProperty("events").EnumerateArray().Select(e => e.Clone())];
    }

    private static async Task<JsonElement> SettledProbeTimeoutAsync(InMemorySidecar sidecar, string multiplexer)
    {
        JsonElement found = default;
        await Eventually.UntilAsync(async () =>
        {
            using var listed = JsonDocument.Parse(await sidecar.Client.GetStringAsync(new Uri("/api/timeouts?limit=1000", UriKind.Relative)));
            var match = listed.RootElement.GetProperty("timeouts").EnumerateArray()
                .FirstOrDefault(t => t.GetProperty("source").GetString() == "probe" && t.GetProperty("multiplexer").GetString() == multiplexer && t.GetProperty("settled").GetBoolean());
            found = match.Clone();
            return match.ValueKind == JsonValueKind.Object;
        }, "the probe's own timeout, settled after the next poll");
        return found;
    }

    private static async Task<double?> GaugeAsync(InMemorySidecar sidecar, string family, string endpoint) =>
        (await MetricsText.ScrapeAsync(sidecar.Client)).Value(family, ("endpoint", endpoint));

    [Fact]
    public async Task A_bgsave_is_seen_in_progress_then_done_counted_as_a_fork_and_kept_as_an_interval_close_to_the_truth()
    {
        var redis = await StartRedisAsync();
        await MakeSavesSlowAsync(redis, 2);
        await using var sidecar = InMemorySidecar.Probing(("saving", redis.EndPoint));
        await Eventually.UntilAsync(async () => await GaugeAsync(sidecar, "muxwatch_server_rdb_bgsave_in_progress", redis.EndPoint) == 0, "the first poll");
        var forksBefore = await GaugeAsync(sidecar, "muxwatch_server_forks_total", redis.EndPoint);

        var sent = DateTimeOffset.UtcNow;
        await redis.CommandAsync("BGSAVE");
        var answered = DateTimeOffset.UtcNow;
        await Eventually.UntilAsync(async () => await GaugeAsync(sidecar, "muxwatch_server_rdb_bgsave_in_progress", redis.EndPoint) == 1, "the save seen in progress");

        // The truth about its end, as close as the test can see it: the last time Redis said "still saving" and the first "done".
        var lastRunning = DateTimeOffset.UtcNow;
        DateTimeOffset firstDone = default;
        await Eventually.UntilAsync(async () =>
        {
            var before = DateTimeOffset.UtcNow;
            if ((await redis.CommandAsync("INFO", "persistence")).Contains("rdb_bgsave_in_progress:1", StringComparison.Ordinal))
            {
                lastRunning = before;
                return false;
            }

            firstDone = DateTimeOffset.UtcNow;
            return true;
        }, "the save to end");
        await Eventually.UntilAsync(async () => await GaugeAsync(sidecar, "muxwatch_server_rdb_bgsave_in_progress", redis.EndPoint) == 0, "the save seen done");

        Assert.True(await GaugeAsync(sidecar, "muxwatch_server_forks_total", redis.EndPoint) > forksBefore);
        Assert.Equal(1, await GaugeAsync(sidecar, "muxwatch_server_rdb_last_bgsave_ok", redis.EndPoint));
        var save = (await EventsAsync(sidecar, redis.EndPoint)).Single(e => e.GetProperty("kind").GetString() == "bgsave");
        var start = save.GetProperty("start").GetDateTimeOffset();
        var end = save.GetProperty("end").GetDateTimeOffset();
        _output.WriteLine($"start {(start - sent).TotalMilliseconds:0} ms from BGSAVE sent; end {(end - lastRunning).TotalMilliseconds:0} ms after last seen running, {(end - firstDone).TotalMilliseconds:0} ms from first seen done");
        var slack = PollInterval + TimeSpan.FromMilliseconds(300); // one poll interval, and the loop's and a poll's own time
        Assert.InRange(start, sent - slack, answered);
        Assert.InRange(end, lastRunning, firstDone + slack);
        Assert.Equal("ok", save.GetProperty("outcome").GetString());

        // A timeout posted later with a time inside the save is tied to it at once; and since MuxWatch's own
        // connection was answered meanwhile (the save's child blocks nothing), the save is ruled out as its cause.
        var during = start + ((end - start) / 2);
        var line = JsonSerializer.Serialize(new { message = $"Timeout performing GET k (1000ms), qu: 0, qs: 3, in: 0, serverEndpoint: {redis.EndPoint}", time = during.ToString("O", CultureInfo.InvariantCulture) });
        using var posted = await sidecar.Client.PostAsync(new Uri("/api/timeouts?details=true", UriKind.Relative), new StringContent(line, Encoding.UTF8, "application/x-ndjson"));
        using var answer = JsonDocument.Parse(await posted.Content.ReadAsStringAsync());
        var result = answer.RootElement.GetProperty("results")[0];
        Assert.Equal(HttpStatusCode.OK, posted.StatusCode);
        Assert.True(result.GetProperty("settled").GetBoolean());
        var evidence = result.GetProperty("evidence").EnumerateArray().Select(e => e.GetString()!).ToList();
        Assert.Equal("unknown", result.GetProperty("cause").GetString());
        Assert.Contains(evidence, e => e.StartsWith("not the server: MuxWatch's own connection was answered", StringComparison.Ordinal));
        Assert.Contains(evidence, e => e.StartsWith("persistence ruled out by the witness: BGSAVE ran from", StringComparison.Ordinal));
    }

    /// <summary>
    /// Issue 26, #5: a 10 MB INFO (451 MB peak), a million-field INFO (1.2 GB) and 5 MB errors on every
    /// polled command (681 MB) were each an OOM kill under the shipped 256 Mi limit. Each is now refused as
    /// an <c>oversized</c> poll failure naming the command and the size (never the reply's text), and the
    /// endpoint's polling backs off, so the hostile reply is not read again every second; the PINGs go on.
    /// </summary>
    [Theory]
    [InlineData("info-10mb")]
    [InlineData("info-1m-fields")]
    [InlineData("errors-5mb")]
    public async Task A_reply_over_its_limit_fails_the_poll_as_oversized_and_polling_backs_off(string shape)
    {
        var polled = new HashSet<string>(StringComparer.Ordinal) { "INFO", "CONFIG", "LATENCY", "SLOWLOG", "TIME" };
        var hugeInfo = shape switch
        {
            "info-10mb" => HostileRedis.HugeInfo(10 * 1024 * 1024),
            "info-1m-fields" => HostileRedis.ManyFieldsInfo(1_000_000),
            _ => null,
        };
        var hugeError = shape == "errors-5mb" ? HostileRedis.Error("ERR " + new string('e', 5 * 1024 * 1024)) : null;
        var infos = 0;
        var pings = 0;
        var handshakeDone = false;
        await using var hostile = HostileRedis.Start(command =>
        {
            switch (command[0])
            {
                case "PING":
                    Interlocked.Increment(ref pings);
                    return null;
                case "INFO" when Volatile.Read(ref handshakeDone):
                    Interlocked.Increment(ref infos);
                    return hugeInfo ?? hugeError;
                case var name when hugeError is not null && Volatile.Read(ref handshakeDone) && polled.Contains(name) && !(name == "CONFIG" && command[^1] == "databases"):
                    return hugeError;
                default:
                    return null;
            }
        });
        await using var sidecar = InMemorySidecar.Probing(("hostile", hostile.EndPoint));
        await Eventually.UntilAsync(async () => (await MetricsText.ScrapeAsync(sidecar.Client)).Value("muxwatch_server_last_poll_success_timestamp_seconds", ("endpoint", hostile.EndPoint)) > 0, "a first poll of the quiet server");
        Volatile.Write(ref handshakeDone, true); // from now on, the server turns hostile

        await Eventually.UntilAsync(async () => (await MetricsText.ScrapeAsync(sidecar.Client)).Value("muxwatch_server_poll_failures_total", ("endpoint", hostile.EndPoint), ("reason", "oversized")) >= 1, "the poll refused as oversized");
        using (var events = JsonDocument.Parse(await sidecar.Client.GetStringAsync(new Uri($"/api/events?endpoint={hostile.EndPoint}", UriKind.Relative))))
        {
            var error = events.RootElement.GetProperty("endpoints")[0].GetProperty("polling").GetProperty("lastPollError").GetString()!;
            _output.WriteLine(error);
            Assert.Contains(shape == "errors-5mb" ? "(an error)" : "INFO", error, StringComparison.Ordinal);
            Assert.Contains("over the", error, StringComparison.Ordinal);
            Assert.Contains("backs off", error, StringComparison.Ordinal);
            Assert.DoesNotContain("xxxx", error, StringComparison.Ordinal);
            Assert.DoesNotContain("eeee", error, StringComparison.Ordinal);
        }

        // Backing off: ten more PINGs (two seconds at the 200 ms cycle, ten poll intervals) and not one more INFO.
        var infosAfter = Volatile.Read(ref infos);
        var pingsAfter = Volatile.Read(ref pings);
        await Eventually.UntilAsync(() => Task.FromResult(Volatile.Read(ref pings) >= pingsAfter + 10), "ten more PINGs");
        Assert.Equal(infosAfter, Volatile.Read(ref infos));
        Assert.Equal(1, (await MetricsText.ScrapeAsync(sidecar.Client)).Value("muxwatch_server_poll_failures_total", ("endpoint", hostile.EndPoint), ("reason", "oversized")));
    }

    /// <summary>Issue 26, #11: LATENCY HISTORY fork is read once per new fork, not on every poll.</summary>
    [Fact]
    public async Task The_fork_history_is_read_once_per_new_fork_not_on_every_poll()
    {
        // Two million keys make a fork of about 10 ms here, over the 1 ms threshold, so the latency monitor records it.
        var redis = await StartRedisAsync("--latency-monitor-threshold", "1");
        await redis.CommandAsync("DEBUG", "POPULATE", "2000000");
        await using var sidecar = InMemorySidecar.Probing(("forking", redis.EndPoint));
        await Eventually.UntilAsync(async () => await GaugeAsync(sidecar, "muxwatch_server_rdb_bgsave_in_progress", redis.EndPoint) == 0, "the first poll");

        await redis.CommandAsync("BGSAVE");
        await Eventually.UntilAsync(async () => (await EventsAsync(sidecar, redis.EndPoint)).Any(e => e.GetProperty("kind").GetString() == "fork" && !e.GetProperty("betweenPolls").GetBoolean()),
            "the fork from the latency monitor in the timeline", TimeSpan.FromSeconds(30));
        var stats = await CommandStatsOverPollsAsync(redis, sidecar);
        Assert.Contains("cmdstat_latency|latest:", stats, StringComparison.Ordinal);
        Assert.DoesNotContain("cmdstat_latency|history:", stats, StringComparison.Ordinal);
    }

    /// <summary>
    /// Issue 26 (an idle app's CPU): with the latency monitor off, as Redis ships, a poll sends no LATENCY
    /// command (it would have nothing to say), one round trip fewer each poll; on, it does (the test above).
    /// </summary>
    [Fact]
    public async Task With_the_latency_monitor_off_a_poll_sends_no_latency_command()
    {
        var redis = await StartRedisAsync("--latency-monitor-threshold", "0");
        await using var sidecar = InMemorySidecar.Probing(("quiet", redis.EndPoint));
        await Eventually.UntilAsync(async () => await GaugeAsync(sidecar, "muxwatch_server_last_poll_success_timestamp_seconds", redis.EndPoint) is not null, "the first poll");
        var stats = await CommandStatsOverPollsAsync(redis, sidecar);
        Assert.Contains("cmdstat_slowlog|get:", stats, StringComparison.Ordinal);
        Assert.Contains("cmdstat_info:", stats, StringComparison.Ordinal);
        Assert.DoesNotContain("cmdstat_latency", stats, StringComparison.Ordinal);
        using var events = JsonDocument.Parse(await sidecar.Client.GetStringAsync(new Uri($"/api/events?endpoint={redis.EndPoint}", UriKind.Relative)));
        var polling = events.RootElement.GetProperty("endpoints")[0].GetProperty("polling");
        Assert.False(polling.GetProperty("latencyMonitorEnabled").GetBoolean());
        Assert.Equal(0, polling.GetProperty("refusedCommands").GetArrayLength());
    }

    /// <summary>The server's <c>INFO commandstats</c> over two seconds of polls (ten at 200 ms), counted from zero.</summary>
    private static async Task<string> CommandStatsOverPollsAsync(RedisServer redis, InMemorySidecar sidecar)
    {
        await redis.CommandAsync("CONFIG", "RESETSTAT");
        var polled = await GaugeAsync(sidecar, "muxwatch_server_last_poll_success_timestamp_seconds", redis.EndPoint);
        await Eventually.UntilAsync(async () => await GaugeAsync(sidecar, "muxwatch_server_last_poll_success_timestamp_seconds", redis.EndPoint) > polled + 2,
            "two more seconds of polls (ten at 200 ms)");
        return await redis.CommandAsync("INFO", "commandstats");
    }

    [Fact]
    public async Task A_stall_during_a_bgsave_with_the_slow_log_off_is_a_server_stall_and_the_save_only_contributes()
    {
        // The save's child blocks nothing; the server stopped answering the probe and MuxWatch's own connection
        // alike (the second witness), and the slow log, off, could not say why: server-stall, the save beside it.
        var redis = await StartRedisAsync("--slowlog-log-slower-than", "-1");
        await MakeSavesSlowAsync(redis, 6);
        await using var sidecar = InMemorySidecar.Probing(("busy", $"{redis.EndPoint},asyncTimeout=500,syncTimeout=500"));
        await Eventually.UntilAsync(async () => await GaugeAsync(sidecar, "muxwatch_server_rdb_bgsave_in_progress", redis.EndPoint) == 0, "the first poll");

        await redis.CommandAsync("BGSAVE");
        await Eventually.UntilAsync(async () => await GaugeAsync(sidecar, "muxwatch_server_rdb_bgsave_in_progress", redis.EndPoint) == 1, "the save seen in progress");
        await redis.CommandAsync("DEBUG", "SLEEP", "2");

        var timeout = await SettledProbeTimeoutAsync(sidecar, "busy");
        Assert.Equal("server-stall", timeout.GetProperty("cause").GetString());
        Assert.Contains(timeout.GetProperty("evidence").EnumerateArray(), e => e.GetString()!.StartsWith("server-stall: MuxWatch's own connection got no answer either", StringComparison.Ordinal));
        Assert.Contains(timeout.GetProperty("evidence").EnumerateArray(), e => e.GetString()!.StartsWith("persistence: BGSAVE in progress since", StringComparison.Ordinal) && e.GetString()!.EndsWith("(contributing)", StringComparison.Ordinal));
        var metrics = await MetricsText.ScrapeAsync(sidecar.Client);
        Assert.True(metrics.Value("muxwatch_timeouts_total", ("multiplexer", "busy"), ("cause", "server-stall")) >= 1);
        Assert.Equal(0, metrics.Value("muxwatch_timeouts_total", ("multiplexer", "busy"), ("cause", "persistence"))); // exported at 0 from the start, never counted
    }

    [Fact]
    public async Task The_same_stall_with_no_save_and_the_slow_log_on_is_diagnosed_slow_command()
    {
        var redis = await StartRedisAsync();
        await using var sidecar = InMemorySidecar.Probing(("blocked", $"{redis.EndPoint},asyncTimeout=500,syncTimeout=500"));
        await Eventually.UntilAsync(async () => await GaugeAsync(sidecar, "muxwatch_server_slowlog_entries_total", redis.EndPoint) is not null, "the first poll");

        await redis.CommandAsync("DEBUG", "SLEEP", "2");

        var timeout = await SettledProbeTimeoutAsync(sidecar, "blocked");
        Assert.Equal("slow-command", timeout.GetProperty("cause").GetString());
        Assert.DoesNotContain("server-stall", timeout.GetProperty("causes").EnumerateArray().Select(c => c.GetString()));
        Assert.Contains(timeout.GetProperty("evidence").EnumerateArray(), e => e.GetString()!.StartsWith("slow-command: DEBUG SLEEP ran 2", StringComparison.Ordinal));
        Assert.True(await GaugeAsync(sidecar, "muxwatch_server_slowest_recent_command_seconds", redis.EndPoint) >= 2);
        // The timeout a next fork is compared with: in the sidecar, the target's own (asyncTimeout, syncTimeout 500 ms).
        Assert.Equal(0.5, await GaugeAsync(sidecar, "muxwatch_server_client_timeout_seconds", redis.EndPoint));
        var slow = (await EventsAsync(sidecar, redis.EndPoint)).Where(e => e.GetProperty("kind").GetString() == "slow-command").ToList();
        var sleep = Assert.Single(slow, e => e.GetProperty("command").GetString() == "DEBUG" && e.GetProperty("durationMs").GetDouble() >= 2000);
        // The command and its first argument only: never the rest (the seconds slept, here).
        Assert.Equal("SLEEP", sleep.GetProperty("argument").GetString());
        Assert.DoesNotContain("SLEEP 2", JsonSerializer.Serialize(slow), StringComparison.Ordinal);
        Assert.Equal(JsonValueKind.Null, sleep.GetProperty("clientName").ValueKind); // redis-cli names no connection
        Assert.StartsWith("127.0.0.1:", sleep.GetProperty("clientAddress").GetString(), StringComparison.Ordinal);
    }

    [Fact]
    public async Task Targets_are_polled_over_their_own_connections_and_a_shared_server_once()
    {
        var redis = await StartRedisAsync();
        await using var sidecar = InMemorySidecar.Probing(("one", redis.EndPoint), ("two", redis.EndPoint), ("three", redis.EndPoint));
        await Eventually.UntilAsync(async () => await GaugeAsync(sidecar, "muxwatch_server_last_poll_success_timestamp_seconds", redis.EndPoint) is not null, "the first poll");

        // Three targets on one standalone server: one connection each (no subscription connection: MuxWatch
        // never subscribes through a target's), and no polling connection besides. The first poll needs only one
        // target connected: on a loaded machine the other two may still be connecting then.
        string[] clients = [];
        await Eventually.UntilAsync(async () =>
        {
            clients = (await redis.CommandAsync("CLIENT", "LIST")).Split('\n');
            return clients.Count(line => line.Contains(" name=muxwatch ", StringComparison.Ordinal)) >= 3;
        }, "the three targets connected");
        Assert.Equal(3, clients.Count(line => line.Contains(" name=muxwatch ", StringComparison.Ordinal)));
        Assert.DoesNotContain(clients, line => line.Contains(" name=muxwatch ", StringComparison.Ordinal) && line.Contains(" sub=1 ", StringComparison.Ordinal));
        Assert.DoesNotContain(clients, line => line.Contains("name=muxwatch-poller", StringComparison.Ordinal));

        // Polled once per cycle however many targets share the server: INFO calls (one a poll) counted by the server
        // over two seconds of completed polls: five polls a second at most, one poller per target would make 15. A
        // loaded machine skips a slot now and then (a run beside a busy core measured 4.7 a second), so the
        // bound is what tells one poller from three, not the nominal rate.
        var timeline = sidecar.Services.GetRequiredService<MuxWatch.State.ServerTimelines>().Find(redis.EndPoint)!;
        var (calls, through) = (await CommandCallsAsync(redis, "info"), timeline.CompleteThrough!.Value);
        await Eventually.UntilAsync(() => Task.FromResult(timeline.CompleteThrough > through + TimeSpan.FromSeconds(2)), "two more seconds of completed polls");
        var perSecond = (await CommandCallsAsync(redis, "info") - calls) / (timeline.CompleteThrough!.Value - through).TotalSeconds;
        Assert.InRange(perSecond, 1, 9);
    }

    private static async Task<long> CommandCallsAsync(RedisServer redis, string command)
    {
        var stats = await redis.CommandAsync("INFO", "commandstats");
        var line = stats.Split('\n').First(l => l.StartsWith($"cmdstat_{command}:", StringComparison.Ordinal));
        return long.Parse(line.Split("calls=")[1].Split(',')[0], CultureInfo.InvariantCulture);
    }

    [Fact]
    public async Task A_restart_is_seen_and_the_timeline_goes_on()
    {
        var redis = await StartRedisAsync();
        await using var sidecar = InMemorySidecar.Probing(("restarting", $"{redis.EndPoint},connectTimeout=1000"));
        await Eventually.UntilAsync(async () => await GaugeAsync(sidecar, "muxwatch_server_last_poll_success_timestamp_seconds", redis.EndPoint) is not null, "the first poll");

        await redis.KillAsync();
        await redis.RestartAsync();
        await Eventually.UntilAsync(async () => await GaugeAsync(sidecar, "muxwatch_server_restarts_total", redis.EndPoint) >= 1, "the restart counted", TimeSpan.FromSeconds(60));
        await redis.CommandAsync("DEBUG", "SLEEP", "0.05"); // a slow command after the restart: slow-log id 0 again

        await Eventually.UntilAsync(async () =>
        {
            var events = await EventsAsync(sidecar, redis.EndPoint);
            var restart = events.FirstOrDefault(e => e.GetProperty("kind").GetString() == "restart");
            return restart.ValueKind == JsonValueKind.Object && events.Any(e => e.GetProperty("kind").GetString() == "slow-command"
                && e.GetProperty("start").GetDateTimeOffset() > restart.GetProperty("start").GetDateTimeOffset());
        }, "the restart and a slow command after it in the timeline");
    }

    [Fact]
    public async Task An_endpoint_whose_user_may_not_run_info_or_slowlog_is_reported_and_the_rest_goes_on()
    {
        var redis = await StartRedisAsync();
        await redis.CommandAsync("ACL", "SETUSER", "limited", "on", ">limited-pw-1234", "~*", "&*", "+@all", "-info", "-slowlog");
        await using var sidecar = InMemorySidecar.Probing(("acl", $"{redis.EndPoint},user=limited,password=limited-pw-1234"));

        JsonElement polling = default;
        await Eventually.UntilAsync(async () =>
        {
            using var targets = JsonDocument.Parse(await sidecar.Client.GetStringAsync(new Uri("/api/targets", UriKind.Relative)));
            var server = targets.RootElement.GetProperty("targets")[0].GetProperty("servers")[0];
            polling = server.GetProperty("polling").Clone();
            return polling.ValueKind == JsonValueKind.Object && polling.GetProperty("lastPollSuccess").ValueKind == JsonValueKind.String;
        }, "a poll of the limited endpoint");

        Assert.Equal(["info", "slowlog"], polling.GetProperty("refusedCommands").EnumerateArray().Select(c => c.GetString()).Order());
        var metrics = await MetricsText.ScrapeAsync(sidecar.Client);
        var endpoint = ("endpoint", redis.EndPoint);
        Assert.Equal(1, metrics.Value("muxwatch_server_command_refused", endpoint, ("command", "info")));
        Assert.Equal(1, metrics.Value("muxwatch_server_command_refused", endpoint, ("command", "slowlog")));
        Assert.Null(metrics.Value("muxwatch_server_command_refused", endpoint, ("command", "latency"))); // answered: no series at 0
        Assert.NotNull(metrics.Value("muxwatch_server_latency_monitor_enabled", endpoint)); // CONFIG is still allowed
        Assert.Null(metrics.Value("muxwatch_server_rdb_bgsave_in_progress", endpoint)); // INFO refused: not exported as if known
        Assert.Equal(1, metrics.Value("muxwatch_connected", ("multiplexer", "acl"), endpoint));
        Assert.DoesNotContain("limited-pw-1234", metrics.Text + await sidecar.Client.GetStringAsync(new Uri("/api/targets", UriKind.Relative)), StringComparison.Ordinal);
    }
}
