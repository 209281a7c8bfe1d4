using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Hosting;
using Microsoft.Extensions.Logging;
using MuxWatch.Testing;
using Prometheus;
using StackExchange.Redis;

namespace MuxWatch.StackExchangeRedis.Tests.Live;

/// <summary>
/// MuxWatch in-process watching the app's own multiplexer against a real <c>redis-server</c>: the gauges
/// during a stall, the live counters a caught timeout carries, a disposed multiplexer, a factory that fails.
/// Each test owns its metrics registry. Run on both ends of the supported client range by test.sh.
/// </summary>
[Trait("Category", "LiveProbe")]
public sealed class InProcessProbeLiveTests : IAsyncLifetime
{
    private readonly CollectorRegistry _registry = Metrics.NewCustomRegistry();
    private RedisServer _redis = null!;

    public InProcessProbeLiveTests() => TestThreadPool.EnsureRoomy();

    // The slow log off: a DEBUG SLEEP stall is then explained by nothing on the server, and stays server-stall.
    public async Task InitializeAsync() => _redis = await RedisServer.StartAsync("--slowlog-log-slower-than", "-1");

    public async Task DisposeAsync() => await _redis.DisposeAsync();

    private async Task<MetricsText> ScrapeAsync()
    {
        using var stream = new MemoryStream();
        await _registry.CollectAndExportAsTextAsync(stream);
        return new MetricsText(System.Text.Encoding.UTF8.GetString(stream.ToArray()));
    }

    private async Task<IHost> StartHostAsync(Action<MuxWatch.Hosting.MuxWatchBuilder> watch, Action<IServiceCollection>? services = null)
    {
        var builder = Host.CreateApplicationBuilder();
        builder.Logging.ClearProviders();
        builder.Configuration["MuxWatch:ProbeInterval"] = "00:00:00.100";
        builder.Configuration["MuxWatch:PingInterval"] = "00:00:00.100";

        // These tests are about the multiplexer each names; the other tests' multiplexers in this process would be
        // discovered too (tests/MuxWatch.Libraries.Tests covers discovery).
        builder.Configuration["MuxWatch:DiscoverMultiplexers"] = "false";
        services?.Invoke(builder.Services);
        watch(builder.Services.AddMuxWatch().UseMetricsRegistry(_registry));
        var host = builder.Build();
        await host.StartAsync();
        return host;
    }

    [Fact]
    public async Task Live_counters_read_late_describe_the_catch_not_the_connection_as_it_is_when_read()
    {
        // Seen in the full test command (3.4.35, a starved pool): the pipeline ran 11 s after a timeout was caught, by
        // which time the client had dropped the connection its starved pool could not read; the connection read "now"
        // was down, and the timeout, caught while it was up, was named connection-loss with high confidence.
        var name = $"late{_redis.Port}";
        using var app = await ConnectionMultiplexer.ConnectAsync($"{_redis.EndPoint},asyncTimeout=500,syncTimeout=500,connectTimeout=500,name={name}");
        using var host = await StartHostAsync(watch => watch.AddMultiplexer("cache", _ => app));
        var mux = ("multiplexer", "cache");
        await Eventually.UntilAsync(async () => (await ScrapeAsync()).Value("muxwatch_connected", mux) == 1, "the app's multiplexer probed up");
        var watched = host.Services.GetRequiredService<WatchedMultiplexers>().All.Single(w => w.Name == "cache");
        var caught = DateTimeOffset.UtcNow;
        await Eventually.UntilAsync(() => watched.LiveCountersOf(_redis.EndPoint, DateTimeOffset.UtcNow, caught, caught)?.LastSeenConnected is not null,
            "the probe to have sampled the connection up by the catch");

        await _redis.KillAsync();
        await Eventually.UntilAsync(async () => (await ScrapeAsync()).Value("muxwatch_connected", mux) == 0, "the probe to see the connection down");
        await Eventually.UntilAsync(() => DateTimeOffset.UtcNow - caught > WatchedMultiplexer.ReadPromptlyWithin, "a reading late for the catch");
        var now = DateTimeOffset.UtcNow;

        var late = watched.LiveCountersOf(_redis.EndPoint, now, caught - TimeSpan.FromSeconds(1), caught)!;
        var prompt = watched.LiveCountersOf(_redis.EndPoint, now, now - TimeSpan.FromSeconds(1), now)!;

        Assert.True(late.Connected, "read late, the connection is as the probe sampled it at the catch: up");
        Assert.NotNull(late.LastSeenConnected);
        Assert.True(late.LastSeenConnected <= caught);
        Assert.False(prompt.Connected, "read at the catch, it is as it is: down");

        // The diagnosis of a timeout caught while the connection was up, read late: not connection-loss.
        var report = TimeoutMessageReader.Read($"Timeout awaiting response (outbound=0KiB, inbound=0KiB, 868ms elapsed, timeout is 500ms), command=GET, next: GET muxwatch:cart, inst: 0, qu: 0, qs: 0, aw: False, bw: Inactive, rs: ReadAsync, ws: Idle, in: 128, in-pipe: 0, last-in: 7, cur-in: 7, sync-ops: 0, async-ops: 25, serverEndpoint: {_redis.EndPoint}, conn-sec: 14.15, aoc: 0, mc: 1/1/0, IOCP: (Busy=0,Free=1000,Min=1,Max=1000), WORKER: (Busy=14,Free=32753,Min=2,Max=32767), POOL: (Threads=14,QueuedItems=287,CompletedItems=740,Timers=4), v: 3.4.35.20751");
        const string down = "was down when the timeout was caught";
        Assert.DoesNotContain(TimeoutDiagnoser.Diagnose(report, live: late).EvidenceLines, line => line.Contains(down, StringComparison.Ordinal));
        Assert.DoesNotContain(TimeoutCause.ConnectionLoss, TimeoutDiagnoser.Diagnose(report, live: late).Causes);
        Assert.Contains(TimeoutDiagnoser.Diagnose(report, live: prompt).EvidenceLines, line => line.Contains(down, StringComparison.Ordinal));
    }

    [Fact]
    public async Task A_timeout_the_client_counted_during_a_stall_reaches_its_series_before_the_quiet_minute_is_up()
    {
        // The status text is read once a minute while the multiplexer is quiet (ClientStatusSamplerLiveTests); with a
        // request outstanding the probe reads it at the PINGs' cadence (100 ms here), so the timeout shows during the stall.
        using var app = await ConnectionMultiplexer.ConnectAsync($"{_redis.EndPoint},syncTimeout=200");
        using var host = await StartHostAsync(watch => watch.AddMultiplexer("cache", _ => app));
        (string, string)[] sync = [("multiplexer", "cache"), ("mode", "sync")];
        await Eventually.UntilAsync(async () => (await ScrapeAsync()).Value("muxwatch_client_timeouts_total", sync) == 0, "the status read once, with no timeout");

        var sleeping = _redis.CommandInBackground("DEBUG", "SLEEP", "3");
        await Eventually.UntilAsync(async () => !await _redis.AnswersPingAsync(), "the server to be asleep");
        var stalled = DateTimeOffset.UtcNow;
        Assert.Throws<RedisTimeoutException>(() => app.GetDatabase().StringGet("k"));
        await Eventually.UntilAsync(async () => (await ScrapeAsync()).Value("muxwatch_client_timeouts_total", sync) == 1, "the client's timeout in its series");
        var shown = DateTimeOffset.UtcNow - stalled;
        await sleeping;
        Assert.True(shown < ClientStatusSampler.QuietInterval / 2, $"shown {shown.TotalSeconds:F1} s after the stall began: read at the PING cadence, not the quiet one");
    }

    [Fact]
    public async Task A_stall_with_requests_in_flight_shows_in_qs_and_each_caught_timeout_carries_the_live_counters()
    {
        var name = $"app{_redis.Port}";
        using var app = await ConnectionMultiplexer.ConnectAsync($"{_redis.EndPoint},asyncTimeout=500,syncTimeout=500,name={name}");
        using var host = await StartHostAsync(watch => watch.AddMultiplexer("cache", _ => app));
        var mux = ("multiplexer", "cache");
        await Eventually.UntilAsync(async () => (await ScrapeAsync()).Value("muxwatch_connected", mux) == 1, "the app's multiplexer probed");

        var db = app.GetDatabase();
        var sleeping = _redis.CommandInBackground("DEBUG", "SLEEP", "4");
        await Eventually.UntilAsync(async () => !await _redis.AnswersPingAsync(), "the server to be asleep");
        var requests = Enumerable.Range(0, 50).Select(i => db.StringGetAsync($"k{i}")).ToList();

        await Eventually.UntilAsync(async () => (await ScrapeAsync()).Value("muxwatch_sent_awaiting_response", mux) >= 50, "qs to show the 50 requests in flight");
        var outcomes = await Task.WhenAll(requests.Select(async r => { try { await r; return "ok"; } catch (RedisTimeoutException) { return "timeout"; } }));
        Assert.Contains("timeout", outcomes);
        await sleeping;

        var recent = host.Services.GetRequiredService<RecentTimeouts>();
        ObservedTimeout? caught = null;
        await Eventually.UntilAsync(
            () => (caught = recent.Newest().FirstOrDefault(t => t.Source == TimeoutSources.FirstChance && t.Report.Command == "GET" && t.Endpoint == _redis.EndPoint)) is not null,
            "an app timeout recorded");
        Assert.Equal("cache", caught!.Multiplexer);
        Assert.NotNull(caught.LiveCountersAtCatch);
        Assert.True(caught.LiveCountersAtCatch!.SentAwaitingResponse >= 1, $"live qs {caught.LiveCountersAtCatch.SentAwaitingResponse}");
        Assert.Equal(TimeoutCause.ServerStall, caught.Diagnosis.Cause);
        if (caught.Report.Number("qs") == 0)
        {
            // 3.4.35 writes qs: 0; the evidence says where the figure came from.
            Assert.Contains(caught.Diagnosis.EvidenceLines, e => e.Contains("live counters", StringComparison.Ordinal));
        }

        MetricsText metrics = null!;
        await Eventually.UntilAsync(async () =>
        {
            metrics = await ScrapeAsync();
            return metrics.Value("muxwatch_sent_awaiting_response", mux) == 0
                && metrics.Value("muxwatch_timeouts_total", mux, ("cause", "server-stall"), ("source", "first-chance")) >= 1
                && metrics.Value("muxwatch_last_timeout_sent_awaiting_response", mux) >= 1;
        }, "qs back to 0, the app's timeouts counted under its multiplexer").ContinueWith(
            t => t.IsFaulted ? throw new TimeoutException(t.Exception!.InnerException!.Message + "\n" + metrics.Text) : t, TaskScheduler.Default).Unwrap();
        Assert.Equal(0, host.Services.GetRequiredService<TimeoutPipeline>().InternalFailures);
        await host.StopAsync();
    }

    [Fact]
    public async Task A_multiplexer_the_app_disposes_stops_being_probed_and_its_series_go_away()
    {
        var app = await ConnectionMultiplexer.ConnectAsync(_redis.EndPoint);
        using var host = await StartHostAsync(watch => watch.AddMultiplexer("short-lived", _ => app));
        var mux = ("multiplexer", "short-lived");
        await Eventually.UntilAsync(async () => (await ScrapeAsync()).Value("muxwatch_ping_seconds_count", mux) >= 1, "probed while alive");

        // Counters whose labels are known before anything happens are there at 0, so increase() sees the first event.
        var fresh = await ScrapeAsync();
        var endpoint = ("endpoint", _redis.EndPoint);
        foreach (var cause in Enum.GetValues<MuxWatch.Model.TimeoutCause>())
        {
            foreach (var source in (string[])["first-chance", "probe"])
            {
                Assert.Equal(0, fresh.Value("muxwatch_timeouts_total", mux, endpoint, ("cause", MuxWatch.Model.TimeoutCauseNames.ToName(cause)), ("source", source)));
            }
        }

        Assert.Equal(0, fresh.Value("muxwatch_connection_events_total", mux, endpoint, ("event", "connection-restored")));
        Assert.Equal(0, fresh.Value("muxwatch_connection_events_total", mux, endpoint, ("event", "error-message")));

        await app.DisposeAsync();

        await Eventually.UntilAsync(async () => !(await ScrapeAsync()).Text.Contains("multiplexer=\"short-lived\"", StringComparison.Ordinal), "its series removed");
        var status = host.Services.GetRequiredService<ITargetStatusSource>().Targets().Single();
        Assert.Equal("disposed", status.State);
        await host.StopAsync();
    }

    /// <summary>Issue 26, #8: a multiplexer's endpoint list had no cap (a server advertising 1,000 cluster nodes: 7,145 series).</summary>
    [Fact]
    public async Task Endpoints_beyond_the_budget_are_counted_and_logged_never_probed()
    {
        var logs = new CollectingLoggerProvider();

        // Five endpoints that accept and never answer, held for the test: a port merely free could be taken
        // meanwhile by a test running beside this one (a cluster node, whose topology the client would then follow).
        var silent = Enumerable.Range(0, 5).Select(_ => new System.Net.Sockets.TcpListener(System.Net.IPAddress.Loopback, 0)).ToList();
        silent.ForEach(listener => listener.Start());
        using var stopSilent = new DisposableAction(() => silent.ForEach(listener => listener.Stop()));
        var endpoints = string.Join(',', new[] { _redis.EndPoint }.Concat(silent.Select(l => $"127.0.0.1:{((System.Net.IPEndPoint)l.LocalEndpoint).Port}")));
        var app = await ConnectionMultiplexer.ConnectAsync($"{endpoints},abortConnect=false,connectTimeout=500");
        var builder = Host.CreateApplicationBuilder();
        builder.Logging.ClearProviders().AddProvider(logs);
        builder.Configuration["MuxWatch:ProbeInterval"] = "00:00:00.100";
        builder.Configuration["MuxWatch:PingInterval"] = "00:00:00.100";
        builder.Configuration["MuxWatch:MaxEndpointsPerMultiplexer"] = "3";
        builder.Configuration["MuxWatch:DiscoverMultiplexers"] = "false"; // as in StartHostAsync
        builder.Services.AddMuxWatch().UseMetricsRegistry(_registry).AddMultiplexer("wide", _ => app);
        using var host = builder.Build();
        await host.StartAsync();
        var mux = ("multiplexer", "wide");

        MetricsText metrics = null!;
        await Eventually.UntilAsync(async () => (metrics = await ScrapeAsync()).Value("muxwatch_endpoints_over_budget", mux) == 3
            && metrics.Samples("muxwatch_connected", mux).Count > 0, "the three endpoints over the budget counted, the others sampled");
        var cycles = host.Services.GetRequiredService<ProbeLoopHealth>().Cycles;
        await Eventually.UntilAsync(() => host.Services.GetRequiredService<ProbeLoopHealth>().Cycles > cycles + 1, "a whole cycle more");
        metrics = await ScrapeAsync();
        Assert.Equal(3, metrics.Samples("muxwatch_connected", mux).Count);
        Assert.Equal(3, host.Services.GetRequiredService<ITargetStatusSource>().Targets().Single().Servers.Count);
        Assert.Single(logs.Lines, line => line.Text.Contains("wide knows 6 endpoints; only the first 3 are probed and polled", StringComparison.Ordinal));
        await host.StopAsync();
        await app.DisposeAsync();
        logs.Dispose();
    }

    /// <summary>Issue 26, #2: an app that disposes and recreates its multiplexer (a factory returning the current instance) was never watched again.</summary>
    [Fact]
    public async Task A_multiplexer_the_app_recreates_is_watched_again_through_its_factory()
    {
        var current = await ConnectionMultiplexer.ConnectAsync(_redis.EndPoint);
        using var host = await StartHostAsync(watch => watch.AddMultiplexer("recycled", _ => Volatile.Read(ref current)));
        var mux = ("multiplexer", "recycled");
        await Eventually.UntilAsync(async () => (await ScrapeAsync()).Value("muxwatch_ping_seconds_count", mux) >= 1, "the first instance probed");
        var status = host.Services.GetRequiredService<ITargetStatusSource>();

        // The reconnect pattern: dispose the old instance, publish a new one.
        var old = current;
        await old.DisposeAsync();
        await Eventually.UntilAsync(() => status.Targets().Single().State == "disposed", "the disposed instance seen");
        Volatile.Write(ref current, await ConnectionMultiplexer.ConnectAsync(_redis.EndPoint));

        await Eventually.UntilAsync(async () => status.Targets().Single().State == "connected" && (await ScrapeAsync()).Value("muxwatch_ping_seconds_count", mux) >= 1,
            "the new instance watched: connected and probed");
        Assert.Single(status.Targets());
        await host.StopAsync();
        await current.DisposeAsync();
    }

    /// <summary>
    /// The reconnect pattern keeps the server's history: between the app disposing its multiplexer and MuxWatch taking the
    /// successor from the factory, no multiplexer lists the server. Its timeline (the server events each timeout is read
    /// against) is held for <see cref="MissingEndpoints.Grace"/>, not dropped with the old instance and begun afresh.
    /// </summary>
    [Fact]
    public async Task The_servers_events_outlive_the_apps_reconnect()
    {
        var current = await ConnectionMultiplexer.ConnectAsync(_redis.EndPoint);
        using var host = await StartHostAsync(watch => watch.AddMultiplexer("recycled", _ => Volatile.Read(ref current)));
        var timelines = host.Services.GetRequiredService<ServerTimelines>();
        var status = host.Services.GetRequiredService<ITargetStatusSource>();
        await Eventually.UntilAsync(() => timelines.Find(_redis.EndPoint)?.Status().LastPollSuccess is not null, "the server polled");
        await _redis.CommandAsync("BGSAVE");
        await Eventually.UntilAsync(() => SavesOn(timelines) == 1, "the BGSAVE on the server's timeline");
        var timeline = timelines.Find(_redis.EndPoint);

        var old = current;
        await old.DisposeAsync();
        await Eventually.UntilAsync(() => status.Targets().Single().State == "disposed", "the disposed instance seen");
        var cycles = host.Services.GetRequiredService<ProbeLoopHealth>().Cycles;
        await Eventually.UntilAsync(() => host.Services.GetRequiredService<ProbeLoopHealth>().Cycles > cycles + 1, "a whole cycle with no multiplexer listing the server");
        Volatile.Write(ref current, await ConnectionMultiplexer.ConnectAsync(_redis.EndPoint));
        await Eventually.UntilAsync(() => status.Targets().Single().State == "connected", "the new instance watched");
        var polled = timelines.Find(_redis.EndPoint)?.Status().LastPollSuccess;
        await Eventually.UntilAsync(() => timelines.Find(_redis.EndPoint)?.Status().LastPollSuccess is { } at && !(at <= polled), "the server polled again, through the new instance");

        // A server's past is not in what a first poll reads (a save between polls is seen only by the poll after it): a
        // timeline begun afresh would have lost it.
        Assert.Same(timeline, timelines.Find(_redis.EndPoint));
        Assert.Equal(1, SavesOn(timelines));
        await host.StopAsync();
        await current.DisposeAsync();

        int SavesOn(ServerTimelines all) => all.Find(_redis.EndPoint)?.Events().Count(e => e.Kind == MuxWatch.Model.ServerEventKind.Bgsave) ?? 0;
    }

    [Fact]
    public async Task A_factory_that_throws_never_breaks_start_up_and_is_reported_failed()
    {
        var calls = 0;
        using var host = await StartHostAsync(watch => watch.AddMultiplexer("broken", _ =>
        {
            Interlocked.Increment(ref calls);
            throw new InvalidOperationException("It was not possible to connect to the redis server(s). password=hunter2-never-shown");
        }));

        var source = host.Services.GetRequiredService<ITargetStatusSource>();
        await Eventually.UntilAsync(() => source.Targets().Single().State == "failed", "the target reported failed");
        var status = source.Targets().Single();
        Assert.Contains("InvalidOperationException", status.LastError, StringComparison.Ordinal);
        Assert.DoesNotContain("hunter2-never-shown", status.LastError, StringComparison.Ordinal);
        Assert.Equal(1, calls); // tried again only after the retry interval, not every cycle
        await Eventually.UntilAsync(async () => (await ScrapeAsync()).Value("muxwatch_probe_cycle_seconds_count") >= 3, "the loop still cycling");
        await host.StopAsync();
    }

    [Fact]
    public async Task The_apps_multiplexer_is_observed_never_reconfigured_and_its_events_are_let_go_on_stop()
    {
        using var app = await ConnectionMultiplexer.ConnectAsync(_redis.EndPoint);
        var configuration = app.Configuration;
        var host = await StartHostAsync(watch => watch.AddMultiplexer("observed", _ => app));
        var errors = (Name: "muxwatch_connection_events_total", Mux: ("multiplexer", "observed"), Event: ("event", "error-message"));
        await Eventually.UntilAsync(async () => (await ScrapeAsync()).Value("muxwatch_ping_seconds_count", errors.Mux) >= 1, "probed");

        // Every server error reply raises ErrorMessage: counted while watched.
        await Assert.ThrowsAsync<RedisServerException>(() => app.GetDatabase().ExecuteAsync("NOSUCHCOMMAND"));
        await Eventually.UntilAsync(async () => (await ScrapeAsync()).Value(errors.Name, errors.Mux, errors.Event) == 1, "the error reply counted");

        await host.StopAsync();
        host.Dispose();
        await Assert.ThrowsAsync<RedisServerException>(() => app.GetDatabase().ExecuteAsync("NOSUCHCOMMAND"));
        await app.GetDatabase().PingAsync(); // events are raised before the next reply is read

        Assert.Equal(1, (await ScrapeAsync()).Value(errors.Name, errors.Mux, errors.Event));
        Assert.Equal(configuration, app.Configuration);
        Assert.True(app.IsConnected); // not disposed: it is the app's
    }

    [Fact]
    public async Task A_maintenance_notice_from_the_server_is_counted()
    {
        // Azure announces maintenance on the AzureRedisEvents channel; the client listens there when its
        // defaults are Azure's (measured: RawMessage is empty, NotificationTypeString carries the type).
        var options = ConfigurationOptions.Parse(_redis.EndPoint);
        options.Defaults = new StackExchange.Redis.Configuration.AzureOptionsProvider();
        using var app = await ConnectionMultiplexer.ConnectAsync(options);
        using var host = await StartHostAsync(watch => watch.AddMultiplexer("azure-like", _ => app));
        var mux = ("multiplexer", "azure-like");
        await Eventually.UntilAsync(async () => (await ScrapeAsync()).Value("muxwatch_ping_seconds_count", mux) >= 1, "probed");

        var notice = $"NotificationType|NodeMaintenanceStarting|StartTimeInUTC|{DateTime.UtcNow.AddMinutes(5):s}|IsReplica|False|IPAddress|127.0.0.1|SSLPort|15001|NonSSLPort|{_redis.Port}";
        await Eventually.UntilAsync(async () =>
        {
            await _redis.CommandAsync("PUBLISH", "AzureRedisEvents", notice);
            return (await ScrapeAsync()).Value("muxwatch_connection_events_total", mux, ("event", "server-maintenance")) >= 1;
        }, "the maintenance notice counted");
        await host.StopAsync();
    }

    private sealed class DisposableAction(Action action) : IDisposable
    {
        public void Dispose() => action();
    }
}
