using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Hosting;
using Microsoft.Extensions.Logging;
using MuxWatch.Testing;
using StackExchange.Redis;

namespace MuxWatch.Tests.Live;

/// <summary>
/// An app using the library in-process, its own GETs timing out while the real server stalls: during a
/// BGSAVE (slow log off) they are diagnosed <c>persistence</c>; the same stall alone, with the slow log
/// on, <c>slow-command</c>; never <c>server-stall</c>. Run on both ends of the client range by test.sh.
/// </summary>
[Trait("Category", "LiveProbe")]
public sealed class ServerCorrelationLiveTests : IAsyncLifetime
{
    private RedisServer? _redis;
    private ConnectionMultiplexer? _app;
    private IHost? _host;
    private RedisServer? _elsewhere;
    private ConnectionMultiplexer? _elsewhereApp;

    public ServerCorrelationLiveTests() => TestThreadPool.EnsureRoomy();

    public Task InitializeAsync() => Task.CompletedTask;

    public async Task DisposeAsync()
    {
        if (_host is not null)
        {
            await _host.StopAsync();
            _host.Dispose();
        }

        if (_app is not null)
        {
            await _app.DisposeAsync();
        }

        if (_redis is not null)
        {
            await _redis.DisposeAsync();
        }

        if (_elsewhereApp is not null)
        {
            await _elsewhereApp.DisposeAsync();
            await _elsewhere!.DisposeAsync();
        }
    }

    private async Task StartAsync(params string[] redisArguments)
    {
        _redis = await RedisServer.StartAsync(redisArguments);
        _app = await ConnectionMultiplexer.ConnectAsync($"{_redis.EndPoint},syncTimeout=500,asyncTimeout=500,abortConnect=false");
        var builder = Host.CreateApplicationBuilder();
        builder.Logging.ClearProviders();
        builder.Configuration["MuxWatch:ProbeInterval"] = "00:00:00.100";
        builder.Configuration["MuxWatch:PingInterval"] = "00:00:00.100";
        builder.Configuration["MuxWatch:ServerPollInterval"] = "00:00:00.200";
        builder.Configuration["MuxWatch:ServerPollTimeout"] = "00:00:01";
        // The witness's PINGs at the probe's pace: these tests prove what its silence means for a 500 ms wait, not its
        // quiet pace (a PING every 2 s in a quiet process may fall after such a wait: seen once, a test run beside others).
        builder.Configuration["MuxWatch:WitnessInterval"] = "00:00:00.100";
        builder.Configuration["MuxWatch:WitnessQuietInterval"] = "00:00:00.100";
        var app = _app;
        var watch = builder.Services.AddMuxWatch().UseMetricsRegistry(Prometheus.Metrics.NewCustomRegistry()).AddMultiplexer("app", _ => app);
        if (_elsewhereApp is { } elsewhere)
        {
            watch.AddMultiplexer("elsewhere", _ => elsewhere);
        }

        _host = builder.Build();
        await _host.StartAsync();
        var timelines = _host.Services.GetRequiredService<MuxWatch.State.ServerTimelines>();
        await Eventually.UntilAsync(() => timelines.Find(_redis.EndPoint)?.CompleteThrough is not null, "the first complete poll of the app's endpoint");
    }

    [Fact]
    public async Task The_apps_timeout_during_a_stall_while_a_bgsave_runs_is_a_server_stall_and_the_save_only_contributes()
    {
        // The slow log off: the save's child blocks nothing, and MuxWatch's own connection (the witness, answered
        // before the stall) went unanswered too, so the server stopped for a reason it did not log.
        await StartAsync("--slowlog-log-slower-than", "-1");
        await _redis!.CommandAsync("DEBUG", "POPULATE", "2000");
        await _redis.CommandAsync("CONFIG", "SET", "rdb-key-save-delay", "3000"); // about 6 s
        await _redis.CommandAsync("BGSAVE");
        var timeline = _host!.Services.GetRequiredService<MuxWatch.State.ServerTimelines>().Find(_redis.EndPoint)!;
        await Eventually.UntilAsync(() => timeline.IsRunning(MuxWatch.Model.ServerEventKind.Bgsave) && timeline.Status().WitnessAnsweredAt is not null,
            "the save seen in progress, and the witness answered");

        var timeouts = await AppTimeoutsDuringAsync(() => _redis.CommandAsync("DEBUG", "SLEEP", "2"));

        Assert.All(timeouts, timeout =>
        {
            Assert.Equal(TimeoutCause.ServerStall, timeout.Diagnosis.Cause);
            Assert.Contains(timeout.Diagnosis.EvidenceLines, line => line.StartsWith("server-stall: MuxWatch's own connection got no answer either", StringComparison.Ordinal));
            Assert.Contains(timeout.Diagnosis.EvidenceLines, line => line.StartsWith("persistence: BGSAVE in progress since", StringComparison.Ordinal) && line.EndsWith("(contributing)", StringComparison.Ordinal));
        });
    }

    [Fact]
    public async Task The_apps_timeouts_during_a_slow_command_are_slow_command_and_name_the_client_that_sent_it()
    {
        await StartAsync();

        // A second client, named as a batch job names its connection, blocks the server.
        var timeouts = await AppTimeoutsDuringAsync(() => _redis!.CommandAsClientAsync("nightly-export", "DEBUG", "SLEEP", "2"));

        Assert.All(timeouts, timeout =>
        {
            Assert.Equal(TimeoutCause.SlowCommand, timeout.Diagnosis.Cause);
            Assert.DoesNotContain(TimeoutCause.ServerStall, timeout.Diagnosis.Causes);
            var first = timeout.Diagnosis.EvidenceLines[0];
            Assert.StartsWith("slow-command: DEBUG SLEEP ran 2", first, StringComparison.Ordinal);
            Assert.Contains("slow log #", first, StringComparison.Ordinal);
            Assert.True(System.Text.RegularExpressions.Regex.IsMatch(first, @", sent by 127\.0\.0\.1:\d+ \(nightly-export\)$"), first); // no watched multiplexer: said by saying nothing more
        });

        // The endpoint's slowest commands of the hour: the sleep, grouped under its client.
        var slowest = _host!.Services.GetRequiredService<MuxWatch.State.ServerTimelines>().Find(_redis!.EndPoint)!.SlowestCommands(DateTimeOffset.UtcNow);
        var sleep = Assert.Single(slowest, g => g.Command == "DEBUG");
        Assert.Equal(("nightly-export", "SLEEP", 1), (sleep.ClientName, sleep.Argument, sleep.Count));
        Assert.InRange(sleep.SlowestMs, 2000, 3000);
        Assert.Null(sleep.SentBy);
    }

    [Fact]
    public async Task A_slow_script_the_app_itself_sent_is_named_as_its_own_multiplexers()
    {
        // The app's own multiplexer (its client name the client's default: the machine's name and its version) runs
        // a script that keeps the server busy for 2.5 s (2.x checks timeouts on a one-second heartbeat: a shorter block can
        // end between two checks, no GET timing out): its own GETs queue behind it. The culprit is the app. A second
        // multiplexer of the app, to another server, has the same default client name: it did not send the script.
        _elsewhere = await RedisServer.StartAsync();
        _elsewhereApp = await ConnectionMultiplexer.ConnectAsync($"{_elsewhere.EndPoint},abortConnect=false");
        await StartAsync();
        Assert.Equal(_app!.ClientName, _elsewhereApp.ClientName);
        const string busy = """
            local start = redis.call('TIME')
            while true do
              local now = redis.call('TIME')
              if (now[1] - start[1]) * 1000000 + (now[2] - start[2]) > 2500000 then return 1 end
            end
            """;
        var db = _app!.GetDatabase();

        var timeouts = await AppTimeoutsDuringAsync(async () =>
        {
            try
            {
                await db.ScriptEvaluateAsync(busy);
            }
            catch (RedisTimeoutException)
            {
                // the script's own call times out too (500 ms): one of the timeouts checked below
            }
        });

        Assert.All(timeouts, timeout =>
        {
            Assert.Equal(TimeoutCause.SlowCommand, timeout.Diagnosis.Cause);
            var first = timeout.Diagnosis.EvidenceLines[0];
            Assert.StartsWith("slow-command: EVAL", first, StringComparison.Ordinal);
            Assert.EndsWith($"({SentName(_app.ClientName)}: the watched multiplexer 'app')", first, StringComparison.Ordinal);
        });
    }

    [Fact]
    public async Task The_slow_log_names_muxwatchs_own_connection_and_the_apps_multiplexer_as_such()
    {
        // Every command logged: MuxWatch's own polling commands and the app's GETs are in the slow log beside each other.
        await StartAsync("--slowlog-log-slower-than", "0");
        await _app!.GetDatabase().StringGetAsync("muxwatch:any");
        var timeline = _host!.Services.GetRequiredService<MuxWatch.State.ServerTimelines>().Find(_redis!.EndPoint)!;

        IReadOnlyList<SlowCommandGroup> groups = [];
        await Eventually.UntilAsync(() => (groups = timeline.SlowestCommands(DateTimeOffset.UtcNow)).Any(g => g.ClientName == "muxwatch-poller")
            && groups.Any(g => g.Command == "GET" && g.ClientName != "muxwatch-poller"), "the poller's commands and the app's GET in the slow log");

        Assert.All(groups.Where(g => g.ClientName == "muxwatch-poller"), g => Assert.Equal("MuxWatch's own polling connection", g.SentBy));
        // 2.x's connections send a tie-breaker GET as they connect, the poller's too: the app's GET is the one by its client name.
        Assert.Equal("the watched multiplexer 'app'", groups.First(g => g.Command == "GET" && g.ClientName != "muxwatch-poller").SentBy);
    }

    /// <summary>The name as the server records it: SE.Redis sends its client name without spaces or characters outside printable ASCII.</summary>
    private static string SentName(string clientName) => new([.. clientName.Where(c => c is >= '!' and <= '~')]);

    /// <summary>
    /// The app's GETs, awaited one after another while <paramref name="stall"/> blocks the server, until one times
    /// out; then every timeout of the app's multiplexer recorded meanwhile, once all are settled.
    /// </summary>
    private async Task<IReadOnlyList<ObservedTimeout>> AppTimeoutsDuringAsync(Func<Task> stall)
    {
        var recent = _host!.Services.GetRequiredService<RecentTimeouts>();
        var before = recent.Newest().Select(t => t.Id).DefaultIfEmpty(0).Max();
        var db = _app!.GetDatabase();
        var stalling = Task.Run(stall);
        await Eventually.UntilAsync(async () =>
        {
            try
            {
                await db.StringGetAsync("muxwatch:correlation");
                return false;
            }
            catch (RedisTimeoutException)
            {
                return true;
            }
        }, "an awaited GET to time out while the server is blocked");
        await stalling;

        IReadOnlyList<ObservedTimeout> found = [];
        await Eventually.UntilAsync(() =>
        {
            found = [.. recent.Newest().Where(t => t.Id > before && t.Source == "first-chance" && t.Multiplexer == "app")];
            return found.Count > 0 && found.All(t => t.Settled);
        }, "the app's timeouts, settled");
        return found;
    }
}
