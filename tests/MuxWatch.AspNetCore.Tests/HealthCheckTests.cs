using System.Net;
using Microsoft.AspNetCore.Diagnostics.HealthChecks;
using Microsoft.Extensions.Diagnostics.HealthChecks;
using Microsoft.Extensions.Time.Testing;
using MuxWatch.Testing;
using StackExchange.Redis;

namespace MuxWatch.AspNetCore.Tests;

/// <summary>
/// <c>AddHealthChecks().AddMuxWatch(...)</c> in an ASP.NET Core app, read through <c>MapHealthChecks</c> as a
/// readiness probe would: healthy while the app's multiplexer is connected, degraded once a real stall's
/// timeouts reach the threshold, unhealthy (503) once the server is killed; and a probe loop that does not
/// run is a failure.
/// </summary>
[Trait("Category", "LiveProbe")]
public sealed class HealthCheckTests : IAsyncLifetime
{
    private RedisServer _redis = null!;

    public HealthCheckTests() => TestThreadPool.EnsureRoomy();

    public async Task InitializeAsync() => _redis = await RedisServer.StartAsync();

    public async Task DisposeAsync() => await _redis.DisposeAsync();

    [Fact]
    public async Task A_readiness_endpoint_is_healthy_then_degraded_by_a_stalls_timeouts_then_unhealthy_when_the_server_is_gone()
    {
        using var app = await ConnectionMultiplexer.ConnectAsync($"{_redis.EndPoint},asyncTimeout=500,syncTimeout=500,abortConnect=false");
        var port = FreePort.Next();
        var builder = WebApplication.CreateBuilder();
        builder.Logging.ClearProviders();
        builder.WebHost.UseUrls($"http://127.0.0.1:{port}");
        builder.Configuration["MuxWatch:DiscoverMultiplexers"] = "false"; // this test's multiplexer only
        builder.Configuration["MuxWatch:ProbeInterval"] = "00:00:00.200";
        builder.Services.AddMuxWatch().UseMetricsRegistry(Prometheus.Metrics.NewCustomRegistry()).AddMultiplexer("cache", _ => app);
        builder.Services.AddHealthChecks().AddMuxWatch(tags: ["ready"], configure: o => o.TimeoutThreshold = 3);
        await using var web = builder.Build();
        web.MapHealthChecks("/health/ready", new HealthCheckOptions { Predicate = check => check.Tags.Contains("ready") });
        await web.StartAsync();
        using var client = new HttpClient { BaseAddress = new Uri($"http://127.0.0.1:{port}") };

        await Eventually.UntilAsync(async () => await ReadAsync(client) == (HttpStatusCode.OK, "Healthy"), "healthy once the multiplexer is probed");

        // A real stall: the server sleeps while the app's GETs wait past their 500 ms. Seeing it asleep takes a PING
        // unanswered for 1 s, and 2.x notices an async timeout on its 1 s heartbeat: 4 s leaves the GETs time to time out.
        var sleeping = _redis.CommandInBackground("DEBUG", "SLEEP", "4");
        await Eventually.UntilAsync(async () => !await _redis.AnswersPingAsync(), "the server to be asleep");
        var db = app.GetDatabase();
        var calls = await Task.WhenAll(Enumerable.Range(0, 6).Select(async i =>
        {
            try
            {
                await db.StringGetAsync($"k{i}");
                return false;
            }
            catch (RedisTimeoutException)
            {
                return true;
            }
        }));
        await sleeping;
        Assert.True(calls.Count(c => c) >= 3, $"only {calls.Count(c => c)} calls timed out");
        await Eventually.UntilAsync(async () => await ReadAsync(client) == (HttpStatusCode.OK, "Degraded"), "degraded by the stall's timeouts");

        await _redis.KillAsync();
        await Eventually.UntilAsync(async () => await ReadAsync(client) == (HttpStatusCode.ServiceUnavailable, "Unhealthy"), "unhealthy once the server is gone", TimeSpan.FromSeconds(30));
        await web.StopAsync();
    }

    [Fact]
    public async Task A_probe_loop_that_does_not_run_is_a_failure_with_the_status_the_app_chose()
    {
        // Nothing started: the loop never cycles; once its grace (three intervals, at least 10 s) is over, the check fails.
        var time = new FakeTimeProvider(DateTimeOffset.UtcNow);
        var services = new ServiceCollection().AddLogging().AddSingleton<TimeProvider>(time)
            .AddSingleton<Microsoft.Extensions.Configuration.IConfiguration>(new Microsoft.Extensions.Configuration.ConfigurationBuilder().Build());
        services.AddMuxWatch();
        services.AddHealthChecks().AddMuxWatch(failureStatus: HealthStatus.Degraded);
        await using var provider = services.BuildServiceProvider();
        var health = provider.GetRequiredService<HealthCheckService>();

        Assert.Equal(HealthStatus.Healthy, (await health.CheckHealthAsync()).Status);
        time.Advance(TimeSpan.FromSeconds(11));
        var report = await health.CheckHealthAsync();

        Assert.Equal(HealthStatus.Degraded, report.Status);
        Assert.StartsWith("the probe loop has stalled", report.Entries["muxwatch"].Description, StringComparison.Ordinal);
    }

    private static async Task<(HttpStatusCode, string)> ReadAsync(HttpClient client)
    {
        using var response = await client.GetAsync(new Uri("/health/ready", UriKind.Relative));
        return (response.StatusCode, await response.Content.ReadAsStringAsync());
    }
}
