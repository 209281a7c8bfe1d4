using System.Text.Json;
using MuxWatch.Testing;

namespace MuxWatch.Tool.Tests;

/// <summary>
/// The sidecar watching a real server that a command blocks for 5 s, the slow log on: the probe's PINGs
/// time out and, on 3.x, the client then drops its connection itself (measured on 3.4.35 about 4 s in).
/// Every one of those (the timeouts and the failures of the dropped connection) is the slow command's,
/// counted once under it; the dropped connection is named as its consequence; a BGSAVE forked inside
/// the wait is at most contributing. Also a server paused with nothing logged, and the timeouts an app posts
/// from behind a huge value. Both client generations.
/// </summary>
[Trait("Category", "LiveProbe")]
public sealed class SidecarStallLiveTests : IAsyncLifetime
{
    private RedisServer _redis = null!;

    public SidecarStallLiveTests() => TestThreadPool.EnsureRoomy();

    public async Task InitializeAsync() => _redis = await RedisServer.StartAsync();

    public async Task DisposeAsync() => await _redis.DisposeAsync();

    [Theory]
    [InlineData(false)]
    [InlineData(true)] // a BGSAVE sent just before: its fork falls inside the waits, its child runs beside the server
    public async Task Every_probe_timeout_and_dropped_connection_of_a_blocked_server_is_the_slow_command(bool duringBgsave)
    {
        using var sidecar = InMemorySidecar.Probing(("stalling", $"{_redis.EndPoint},asyncTimeout=500,syncTimeout=500"));
        var mux = ("multiplexer", "stalling");
        await Eventually.UntilAsync(async () => (await MetricsText.ScrapeAsync(sidecar.Client)).Value("muxwatch_server_last_poll_success_timestamp_seconds") > 0, "the first complete poll");
        if (duringBgsave)
        {
            await _redis.CommandAsync("DEBUG", "POPULATE", "2000");
            await _redis.CommandAsync("CONFIG", "SET", "rdb-key-save-delay", "5000"); // the save runs about 10 s
            await _redis.CommandAsync("BGSAVE");
        }

        await _redis.CommandAsClientAsync("nightly-export", "DEBUG", "SLEEP", "5"); // a second, named client: the culprit to name
        var stallEnded = DateTimeOffset.UtcNow.ToUnixTimeMilliseconds() / 1000.0;
        await Eventually.UntilAsync(async () => (await MetricsText.ScrapeAsync(sidecar.Client)).Value("muxwatch_last_probe_success_timestamp_seconds", mux) > stallEnded + 0.5,
            "the probe answered again after the stall (3.x re-made its connection)", TimeSpan.FromSeconds(30));

        List<JsonElement> recorded = [];
        await Eventually.UntilAsync(async () =>
        {
            using var listed = JsonDocument.Parse(await sidecar.Client.GetStringAsync(new Uri("/api/timeouts?limit=1000", UriKind.Relative)));
            // This target's (its multiplexer is named after it): hosted in memory, the sidecar's first-chance catcher also
            // sees what other tests in this process throw. Not by endpoint: a failure whose endpoint went unread must count too.
            recorded = [.. listed.RootElement.GetProperty("timeouts").EnumerateArray().Where(t => t.GetProperty("multiplexer").GetString() == "stalling").Select(t => t.Clone())];
            return recorded.Count > 0 && recorded.All(t => t.GetProperty("settled").GetBoolean());
        }, "the probe's timeouts recorded and settled after the stall", TimeSpan.FromSeconds(45));

        Assert.All(recorded, t =>
        {
            Assert.Equal(_redis.EndPoint, t.GetProperty("endpoint").GetString());
            Assert.True(t.GetProperty("cause").GetString() == "slow-command", t.ToString());
            Assert.Equal("probe", t.GetProperty("source").GetString());
            // Who sent it, as the slow log recorded it: the address and the name of the client that blocked the server.
            var slowCommand = t.GetProperty("evidence").EnumerateArray().Select(e => e.GetString()!).First(e => e.StartsWith("slow-command: ", StringComparison.Ordinal));
            Assert.StartsWith("slow-command: DEBUG SLEEP ran 5", slowCommand, StringComparison.Ordinal);
            Assert.True(System.Text.RegularExpressions.Regex.IsMatch(slowCommand, @", sent by 127\.0\.0\.1:\d+ \(nightly-export\)"), slowCommand);
            Assert.All(t.GetProperty("evidence").EnumerateArray().Select(e => e.GetString()!).Where(e => e.StartsWith("persistence: ", StringComparison.Ordinal)),
                line => Assert.EndsWith("(contributing)", line, StringComparison.Ordinal));
        });
        if (duringBgsave)
        {
            Assert.Contains(recorded, t => t.GetProperty("causes").EnumerateArray().Any(c => c.GetString() == "persistence"));
        }

        // The connection 3.x gives up on (most runs, about 4 s in; not every run, so not required): the message
        // alone says connection-loss, the slow log says why. Every such failure, whatever its form.
        Assert.All(recorded.Where(t => t.GetProperty("causes").EnumerateArray().Any(c => c.GetString() == "connection-loss")), t =>
            Assert.Contains(t.GetProperty("evidence").EnumerateArray(), e => e.GetString()!.StartsWith("why: slow-command outranks connection-loss", StringComparison.Ordinal)));

        // The endpoint's slowest commands of the hour, as /api/events lists them: the sleep, by its client.
        using (var events = JsonDocument.Parse(await sidecar.Client.GetStringAsync(new Uri($"/api/events?endpoint={_redis.EndPoint}", UriKind.Relative))))
        {
            var slowest = events.RootElement.GetProperty("endpoints")[0].GetProperty("slowCommands")[0];
            Assert.Equal("DEBUG", slowest.GetProperty("command").GetString());
            Assert.Equal("nightly-export", slowest.GetProperty("clientName").GetString());
            Assert.Equal("SLEEP", slowest.GetProperty("argument").GetString());
            Assert.True(slowest.GetProperty("slowestMs").GetDouble() >= 5000, slowest.ToString());
            Assert.StartsWith("127.0.0.1:", slowest.GetProperty("clientAddress").GetString(), StringComparison.Ordinal);
        }

        var metrics = await MetricsText.ScrapeAsync(sidecar.Client);
        Assert.Equal(recorded.Count, metrics.Value("muxwatch_timeouts_total", mux, ("cause", "slow-command")));
        Assert.Equal(recorded.Count, metrics.Value("muxwatch_timeouts_total", mux)); // none under another cause, none twice
        Assert.Equal(0, metrics.Value("muxwatch_timeouts_total", mux, ("cause", "connection-loss")));
    }

    [Fact]
    public async Task A_paused_server_is_a_server_stall_for_the_probe_and_for_an_app_that_posts_and_an_answering_one_is_not()
    {
        // The server's process stopped for 5 s (SIGSTOP): nothing in the slow log, the same process afterwards.
        using var sidecar = InMemorySidecar.Probing(("paused", $"{_redis.EndPoint},asyncTimeout=500,syncTimeout=500"));
        var mux = ("multiplexer", "paused");
        await Eventually.UntilAsync(async () => (await MetricsText.ScrapeAsync(sidecar.Client)).Value("muxwatch_server_last_poll_success_timestamp_seconds") > 0
            && (await sidecar.Client.GetStringAsync(new Uri("/api/targets", UriKind.Relative))).Contains("\"witnessAnsweredAt\":\"", StringComparison.Ordinal),
            "the first complete poll, and the witness answered");
        var pausedAt = DateTimeOffset.UtcNow;
        await _redis.PauseAsync(TimeSpan.FromSeconds(5));
        var resumed = DateTimeOffset.UtcNow.ToUnixTimeMilliseconds() / 1000.0;
        await Eventually.UntilAsync(async () => (await MetricsText.ScrapeAsync(sidecar.Client)).Value("muxwatch_last_probe_success_timestamp_seconds", mux) > resumed + 0.5,
            "the probe answered again after the pause", TimeSpan.FromSeconds(30));

        // An app elsewhere posts what it caught: one timeout from inside the pause, with the time it was thrown, and
        // one from now, while the server answers (its app's pool the trouble). Messages as 2.6.90 writes them.
        var during = await PostAsync(sidecar, $"Timeout performing GET app:key (2000ms), inst: 3, qu: 0, qs: 4, aw: False, rs: ReadAsync, ws: Idle, in: 0, in-pipe: 0, out-pipe: 0, serverEndpoint: {_redis.EndPoint}, mc: 1/1/0, IOCP: (Busy=0,Free=1000,Min=2,Max=1000), WORKER: (Busy=6,Free=32761,Min=2,Max=32767), v: 2.6.90.64945", pausedAt.AddSeconds(3.5));
        // The second one waited wholly after the pause: the witness answered through its 2 s.
        var resumedAt = DateTimeOffset.FromUnixTimeMilliseconds((long)(resumed * 1000));
        string? lastPolling = null;
        await Eventually.UntilAsync(async () =>
        {
            using var targets = JsonDocument.Parse(await sidecar.Client.GetStringAsync(new Uri("/api/targets", UriKind.Relative)));
            var polling = targets.RootElement.GetProperty("targets")[0].GetProperty("servers")[0].GetProperty("polling");
            lastPolling = polling.ToString();
            return polling.GetProperty("witnessAnsweredAt").ValueKind == JsonValueKind.String
                && polling.GetProperty("witnessAnsweredAt").GetDateTimeOffset() > resumedAt.AddSeconds(2.5);
        }, "the witness answering for 2.5 s after the pause", lastSeen: () => $"resumed at {resumedAt:O}, polling {lastPolling}");
        var answering = await PostAsync(sidecar, $"Timeout performing GET app:key (2000ms), inst: 3, qu: 0, qs: 4, aw: False, rs: ReadAsync, ws: Idle, in: 0, in-pipe: 0, out-pipe: 0, serverEndpoint: {_redis.EndPoint}, mc: 1/1/0, IOCP: (Busy=0,Free=1000,Min=2,Max=1000), WORKER: (Busy=6,Free=32761,Min=2,Max=32767), v: 2.6.90.64945", DateTimeOffset.UtcNow);

        Assert.True(during.GetProperty("cause").GetString() == "server-stall", during.ToString());
        Assert.Contains(Lines(during), e => e.StartsWith("server-stall: MuxWatch's own connection got no answer either", StringComparison.Ordinal));
        Assert.True(answering.GetProperty("cause").GetString() == "thread-pool-starvation", answering.ToString());
        Assert.Contains(Lines(answering), e => e.StartsWith("thread-pool-starvation: not the server: MuxWatch's own connection was answered", StringComparison.Ordinal));
        Assert.DoesNotContain(answering.GetProperty("causes").EnumerateArray(), c => c.GetString() == "server-stall");

        List<JsonElement> probed = [];
        await Eventually.UntilAsync(async () =>
        {
            using var listed = JsonDocument.Parse(await sidecar.Client.GetStringAsync(new Uri("/api/timeouts?limit=1000", UriKind.Relative)));
            probed = [.. listed.RootElement.GetProperty("timeouts").EnumerateArray().Where(t => t.GetProperty("multiplexer").GetString() == "paused").Select(t => t.Clone())];
            return probed.Count > 0 && probed.All(t => t.GetProperty("settled").GetBoolean());
        }, "the probe's timeouts recorded and settled after the pause", TimeSpan.FromSeconds(45));
        Assert.All(probed, t => Assert.True(t.GetProperty("cause").GetString() == "server-stall", t.ToString()));
        var metrics = await MetricsText.ScrapeAsync(sidecar.Client);
        Assert.Equal(probed.Count, metrics.Value("muxwatch_timeouts_total", mux, ("cause", "server-stall")));
        Assert.Equal(probed.Count, metrics.Value("muxwatch_timeouts_total", mux)); // none under another cause, none twice
    }

    [Fact]
    public async Task Every_timeout_an_app_posts_from_behind_a_huge_value_is_large_payload()
    {
        // An app elsewhere (here: this test's own connection, 200 ms timeouts) reads a 200 MB value with 20 small GETs
        // and a sync GET behind it on the same connection, and posts every timeout it caught with the time it was thrown.
        // The sidecar sees only the messages, its own poll of the server (the slow log holds the GET) and its witness.
        using var sidecar = InMemorySidecar.Probing(("huge", $"{_redis.EndPoint},asyncTimeout=2000,syncTimeout=2000"));
        await Eventually.UntilAsync(async () => (await MetricsText.ScrapeAsync(sidecar.Client)).Value("muxwatch_server_last_poll_success_timestamp_seconds") > 0
            && (await sidecar.Client.GetStringAsync(new Uri("/api/targets", UriKind.Relative))).Contains("\"witnessAnsweredAt\":\"", StringComparison.Ordinal),
            "the first complete poll, and the witness answered");
        using (var writer = await StackExchange.Redis.ConnectionMultiplexer.ConnectAsync($"{_redis.EndPoint},syncTimeout=60000,asyncTimeout=60000"))
        {
            await writer.GetDatabase().StringSetAsync("app:huge", new byte[200 * 1024 * 1024]);
            await writer.GetDatabase().StringSetAsync("app:small", "v");
        }

        List<(string Message, DateTimeOffset Time)> caught = [];
        using (var app = await StackExchange.Redis.ConnectionMultiplexer.ConnectAsync($"{_redis.EndPoint},syncTimeout=200,asyncTimeout=200"))
        {
            var db = app.GetDatabase();
            async Task CallAsync(Func<Task> call)
            {
                try
                {
                    await call();
                }
                catch (Exception ex) when (ex is StackExchange.Redis.RedisTimeoutException or StackExchange.Redis.RedisConnectionException)
                {
                    lock (caught)
                    {
                        caught.Add((ex.Message, DateTimeOffset.UtcNow));
                    }
                }
            }

            var huge = CallAsync(() => db.StringGetAsync("app:huge"));
            var small = Enumerable.Range(0, 20).Select(_ => CallAsync(() => db.StringGetAsync("app:small"))).ToList();
            var sync = Task.Factory.StartNew(() => CallAsync(() => Task.FromResult(db.StringGet("app:small"))).GetAwaiter().GetResult(), TaskCreationOptions.LongRunning);
            await Task.WhenAll([huge, sync, .. small]);
        }

        Assert.True(caught.Count > 0, "no call timed out behind the huge value");
        foreach (var (message, time) in caught)
        {
            var posted = await PostAsync(sidecar, message, time);
            Assert.True(posted.GetProperty("cause").GetString() == "large-payload", $"{message}\n{posted}");
        }

        // Every one names the huge key (not the small GETs' own) and its size, asked of the server once.
        List<JsonElement> settled = [];
        await Eventually.UntilAsync(async () =>
        {
            using var listed = JsonDocument.Parse(await sidecar.Client.GetStringAsync(new Uri("/api/timeouts?limit=1000", UriKind.Relative)));
            settled = [.. listed.RootElement.GetProperty("timeouts").EnumerateArray().Where(t => t.GetProperty("source").GetString() == "api").Select(t => t.Clone())];
            return settled.Count == caught.Count && settled.All(t => t.GetProperty("settled").GetBoolean());
        }, "the posted timeouts settled", TimeSpan.FromSeconds(45));
        Assert.All(settled, t =>
        {
            var named = Lines(t).SingleOrDefault(line => line.StartsWith("large-payload: the huge value is app:huge (", StringComparison.Ordinal));
            Assert.True(named is not null && named.EndsWith(" MB (MEMORY USAGE)", StringComparison.Ordinal), t.ToString());
            // 200 MiB of value take 234.9 MB of the server's memory (its allocator's rounding): the server's own figure.
            Assert.Matches(@"^app:huge is \d+\.\d MB: split it", t.GetProperty("advice").GetString());
        });
        Assert.Contains("cmdstat_memory|usage:calls=1,", await _redis.CommandAsync("INFO", "commandstats"), StringComparison.Ordinal); // asked once for all of them (the server's own count)

        // One incident for the whole burst: every timeout, its cause, the culprit and what to do first; the server's
        // slow GET among the events of its span.
        using (var listed = JsonDocument.Parse(await sidecar.Client.GetStringAsync(new Uri($"/api/incidents?endpoint={_redis.EndPoint}", UriKind.Relative))))
        {
            // Hosted in memory, the sidecar's first-chance catcher also caught this test's own timeouts: the endpoint's
            // timeouts of every source are the incident's.
            using var all = JsonDocument.Parse(await sidecar.Client.GetStringAsync(new Uri("/api/timeouts?limit=1000", UriKind.Relative)));
            var ofEndpoint = all.RootElement.GetProperty("timeouts").EnumerateArray().Count(t => t.GetProperty("endpoint").GetString() == _redis.EndPoint);
            var incident = Assert.Single(listed.RootElement.GetProperty("incidents").EnumerateArray());
            Assert.Equal(ofEndpoint, incident.GetProperty("timeouts").GetInt32());
            Assert.Equal("large-payload", incident.GetProperty("cause").GetString());
            Assert.True(incident.GetProperty("byCause").GetProperty("large-payload").GetInt32() >= caught.Count, incident.ToString());
            Assert.Contains(incident.GetProperty("culprits").EnumerateArray(), c => c.GetString()!.StartsWith("large-payload: the huge value is app:huge (", StringComparison.Ordinal));
            Assert.StartsWith("app:huge is ", incident.GetProperty("firstStep").GetString(), StringComparison.Ordinal);
            using var detail = JsonDocument.Parse(await sidecar.Client.GetStringAsync(new Uri($"/api/incidents/{incident.GetProperty("id").GetInt64()}", UriKind.Relative)));
            Assert.Contains(detail.RootElement.GetProperty("serverEvents").EnumerateArray(), e => e.GetProperty("kind").GetString() == "slow-command" && e.GetProperty("argument").GetString() == "app:huge");
        }

        var metrics = await MetricsText.ScrapeAsync(sidecar.Client);
        Assert.Equal(caught.Count, metrics.Value("muxwatch_timeouts_total", ("cause", "large-payload"), ("source", "api")));
        Assert.Equal(caught.Count, metrics.Value("muxwatch_timeouts_total", ("source", "api"))); // none under another cause, none twice
    }

    private static async Task<JsonElement> PostAsync(InMemorySidecar sidecar, string message, DateTimeOffset time)
    {
        var line = JsonSerializer.Serialize(new { message, time });
        using var response = await sidecar.Client.PostAsync(new Uri("/api/timeouts", UriKind.Relative), new StringContent(line, System.Text.Encoding.UTF8, "application/x-ndjson"));
        response.EnsureSuccessStatusCode();
        using var answer = JsonDocument.Parse(await response.Content.ReadAsStringAsync());
        var id = answer.RootElement.GetProperty("results")[0].GetProperty("id").GetInt64();
        JsonElement found = default;
        await Eventually.UntilAsync(async () =>
        {
            using var listed = JsonDocument.Parse(await sidecar.Client.GetStringAsync(new Uri("/api/timeouts?limit=1000", UriKind.Relative)));
            var match = listed.RootElement.GetProperty("timeouts").EnumerateArray().Where(t => t.GetProperty("id").GetInt64() == id).ToList();
            found = match.Count == 1 ? match[0].Clone() : default;
            return match.Count == 1 && found.GetProperty("settled").GetBoolean();
        }, "the posted timeout settled");
        return found;
    }

    private static List<string> Lines(JsonElement timeout) => [.. timeout.GetProperty("evidence").EnumerateArray().Select(e => e.GetString()!)];
}
