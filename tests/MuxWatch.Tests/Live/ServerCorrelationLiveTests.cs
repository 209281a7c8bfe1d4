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
        var app = _app;
        builder.Services.AddMuxWatch().UseMetricsRegistry(Prometheus.Metrics.NewCustomRegistry()).AddMultiplexer("app", _ => app);
        _host = builder.Build();
        await _host.StartAsync();
        var timelines = _host.Services.GetRequiredService<MuxWatch.State.ServerTimelines>();
        await Eventually.UntilAsync(() => timelines.Find(_redis.EndPoint)?.CompleteThrough is not null, "the first complete poll of the app's endpoint");
    }

    /// <summary>The app's own GETs, awaited, during a DEBUG SLEEP: its timeouts, settled after the next poll.</summary>
    private async Task<ObservedTimeout> AppTimeoutDuringStallAsync()
    {
        var db = _app!.GetDatabase();
        var sleeping = _redis!.CommandInBackground("DEBUG", "SLEEP", "2");
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
        }, "an awaited GET to time out while the server sleeps");
        await sleeping;

        var recent = _host!.Services.GetRequiredService<RecentTimeouts>();
        ObservedTimeout? found = null;
        await Eventually.UntilAsync(
            () => (found = recent.Newest().FirstOrDefault(t => t.Source == "first-chance" && t.Multiplexer == "app" && t.Report.Command == "GET" && t.Settled)) is not null,
            "the app's GET timeout, settled");
        return found!;
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

        var timeout = await AppTimeoutDuringStallAsync();

        Assert.Equal(TimeoutCause.ServerStall, timeout.Diagnosis.Cause);
        Assert.Contains(timeout.Diagnosis.EvidenceLines, line => line.StartsWith("server-stall: MuxWatch's own connection got no answer either", StringComparison.Ordinal));
        Assert.Contains(timeout.Diagnosis.EvidenceLines, line => line.StartsWith("persistence: BGSAVE in progress since", StringComparison.Ordinal) && line.EndsWith("(contributing)", StringComparison.Ordinal));
    }

    [Fact]
    public async Task The_apps_timeout_during_a_slow_command_is_diagnosed_slow_command()
    {
        await StartAsync();

        var timeout = await AppTimeoutDuringStallAsync();

        Assert.Equal(TimeoutCause.SlowCommand, timeout.Diagnosis.Cause);
        Assert.DoesNotContain(TimeoutCause.ServerStall, timeout.Diagnosis.Causes);
        Assert.StartsWith("slow-command: DEBUG ran 2", timeout.Diagnosis.EvidenceLines[0], StringComparison.Ordinal);
        Assert.Contains("slow log #", timeout.Diagnosis.EvidenceLines[0], StringComparison.Ordinal);
    }
}
