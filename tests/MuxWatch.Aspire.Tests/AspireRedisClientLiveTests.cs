using System.Diagnostics;
using System.Text.Json;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Diagnostics.HealthChecks;
using Microsoft.Extensions.Hosting;
using MuxWatch.Sample.Libraries;
using MuxWatch.Testing;
using MuxWatch.Testing.Apps;
using OpenTelemetry;
using OpenTelemetry.Trace;
using StackExchange.Redis;

namespace MuxWatch.Aspire.Tests;

/// <summary>
/// An app on .NET Aspire's Redis client integration (<c>AddRedisClient</c>, with its health check and tracing on,
/// as Aspire sets them) and <c>AddMuxWatch()</c> as its only MuxWatch call, against a real redis-server: the
/// multiplexer Aspire registers is watched, a stall's timeouts are attributed to it, Aspire's own defaults are
/// kept (it retries a server that is down at start), and its health check and traces keep working.
/// Run by test.sh on the newest client and on 2.13.17, the oldest Aspire 13 takes.
/// </summary>
[Trait("Category", "LiveProbe")]
public sealed class AspireRedisClientLiveTests : IAsyncLifetime
{
    private readonly List<Activity> _spans = [];
    private RedisServer _redis = null!;

    public AspireRedisClientLiveTests() => TestThreadPool.EnsureRoomy();

    public async Task InitializeAsync() => _redis = await RedisServer.StartAsync();

    public async Task DisposeAsync() => await _redis.DisposeAsync();

    private Task<LibraryApp> StartAsync(string connectionString, bool ping = true) => LibraryApp.StartAsync(_ => { }, builder =>
    {
        builder.Configuration["MuxWatch:Ping"] = ping ? "true" : "false";
        builder.Configuration["ConnectionStrings:cache"] = connectionString;
        builder.AddAspireRedis(); // the sample's wiring
        builder.Services.AddOpenTelemetry().WithTracing(tracing => tracing.AddSource("app").AddInMemoryExporter(_spans));
    });

    [Fact]
    public async Task Aspires_multiplexer_is_watched_and_its_health_check_and_traces_keep_working()
    {
        await using var app = await StartAsync($"{_redis.EndPoint},syncTimeout=500,asyncTimeout=500");
        var multiplexer = app.Services.GetRequiredService<IConnectionMultiplexer>();

        JsonElement target = default;
        await Eventually.UntilAsync(async () => (await app.TargetsOnAsync(_redis.EndPoint)) is [var only] && (target = only).GetProperty("state").GetString() == "connected",
            "Aspire's multiplexer watched");
        Assert.StartsWith("aspire", target.GetProperty("name").GetString(), StringComparison.Ordinal);
        Assert.True(target.GetProperty("discovered").GetBoolean());
        Assert.Equal("Aspire.StackExchange.Redis", target.GetProperty("madeBy").GetString());

        // Aspire's health check still answers through its multiplexer.
        var health = await app.Services.GetRequiredService<HealthCheckService>().CheckHealthAsync();
        Assert.Equal(HealthStatus.Healthy, health.Status);

        // The app's commands are still traced, each under the request that made it.
        using (var source = new ActivitySource("app"))
        {
            using var request = source.StartActivity("request")!;
            for (var i = 0; i < 40; i++)
            {
                await multiplexer.GetDatabase().StringSetAsync($"traced:{i}", i);
            }

            request.Stop();
            var traceId = request.TraceId;
            await Eventually.UntilAsync(() =>
            {
                app.Services.GetRequiredService<TracerProvider>().ForceFlush(1000);
                lock (_spans)
                {
                    return _spans.Count(s => s.TraceId == traceId && s.DisplayName.Contains("SET", StringComparison.OrdinalIgnoreCase)) == 40;
                }
            }, "the 40 commands' spans exported under the request's trace");
        }

        // And it still reports a server that died.
        await _redis.KillAsync();
        await Eventually.UntilAsync(async () => (await app.Services.GetRequiredService<HealthCheckService>().CheckHealthAsync()).Status == HealthStatus.Unhealthy,
            "Aspire's health check Unhealthy once the server died");
    }

    [Fact]
    public async Task MuxWatchs_own_PINGs_on_Aspires_multiplexer_leave_no_trace_in_the_apps_tracing()
    {
        await using var app = await StartAsync(_redis.EndPoint);
        var multiplexer = app.Services.GetRequiredService<IConnectionMultiplexer>();
        await Eventually.UntilAsync(async () => (await app.TargetsOnAsync(_redis.EndPoint)).Count == 1, "Aspire's multiplexer watched");
        var name = (await app.TargetsOnAsync(_redis.EndPoint))[0].GetProperty("name").GetString()!;

        // Five of MuxWatch's PINGs through it (one a second here), each drained by the instrumentation (it flushes every 10 s).
        var pings = (await app.ScrapeAsync()).Value("muxwatch_ping_seconds_count", ("multiplexer", name), ("endpoint", _redis.EndPoint)) ?? 0;
        await Eventually.UntilAsync(async () => (await app.ScrapeAsync()).Value("muxwatch_ping_seconds_count", ("multiplexer", name), ("endpoint", _redis.EndPoint)) >= pings + 5,
            "five PINGs of MuxWatch's");
        await multiplexer.GetDatabase().StringSetAsync("untraced", "an app command with no request around it: still traced");
        await Eventually.UntilAsync(() =>
        {
            app.Services.GetRequiredService<TracerProvider>().ForceFlush(1000);
            lock (_spans)
            {
                return _spans.Any(s => s.DisplayName.Contains("SET", StringComparison.OrdinalIgnoreCase));
            }
        }, "the app's own parentless command traced (the instrumentation drained)");

        lock (_spans)
        {
            Assert.DoesNotContain(_spans, s => s.DisplayName.Contains("PING", StringComparison.OrdinalIgnoreCase));
        }
    }

    [Fact]
    public async Task A_stall_gives_timeouts_attributed_to_Aspires_multiplexer_with_the_servers_cause()
    {
        // MuxWatch's own PING off: one caught by the stall times out first, a 3.x client then drops the connection,
        // and the app's requests fail as ConnectionDisposed instead of timing out (as any earlier request of the
        // app's own would make them; the order is what this test must not leave to chance).
        await using var app = await StartAsync($"{_redis.EndPoint},syncTimeout=500,asyncTimeout=500", ping: false);
        var multiplexer = app.Services.GetRequiredService<IConnectionMultiplexer>();
        await app.UntilPolledAsync(_redis.EndPoint, targets: 1);
        var name = (await app.TargetsOnAsync(_redis.EndPoint))[0].GetProperty("name").GetString();

        var sleeping = _redis.CommandInBackground("DEBUG", "SLEEP", "3");
        await Eventually.UntilAsync(async () => !await _redis.AnswersPingAsync(), "the server to be asleep");
        var outcomes = await Task.WhenAll(Enumerable.Range(0, 10).Select(async i =>
        {
            try
            {
                await multiplexer.GetDatabase().StringGetAsync($"key{i}");
                return false;
            }
            catch (RedisTimeoutException)
            {
                return true;
            }
            catch (RedisConnectionException)
            {
                return false; // 3.x sometimes drops its connection during the silence: not a timeout (issue 36 names its cause)
            }
        }));
        await sleeping;
        var timedOut = outcomes.Count(t => t);
        Assert.True(timedOut > 0, "no call timed out during the stall");

        IReadOnlyList<JsonElement> caught = [];
        await Eventually.UntilAsync(async () =>
        {
            caught = [.. (await app.TimeoutsOnAsync(_redis.EndPoint)).Where(t => t.GetProperty("source").GetString() == "first-chance"
                && t.GetProperty("kind").GetString()!.EndsWith("-timeout", StringComparison.Ordinal))];
            return caught.Count >= timedOut && caught.All(t => t.GetProperty("settled").GetBoolean());
        }, $"the {timedOut} timeouts recorded and settled");
        Assert.Equal(timedOut, caught.Count);
        Assert.All(caught, t => Assert.Equal(name, t.GetProperty("multiplexer").GetString()));
        Assert.All(caught, t => Assert.Equal("slow-command", t.GetProperty("cause").GetString()));
    }

    [Fact]
    public async Task Aspires_defaults_are_kept_a_server_down_at_start_is_retried_not_thrown()
    {
        // Aspire turns AbortOnConnectFail off; with MuxWatch in the process it must stay off, or resolving the
        // multiplexer throws while Redis is down.
        var port = FreePort.Next();
        await using var app = await StartAsync($"127.0.0.1:{port},connectTimeout=500");
        var multiplexer = app.Services.GetRequiredService<IConnectionMultiplexer>();
        Assert.False(multiplexer.IsConnected); // with the client's own default it would have thrown RedisConnectionException

        // And it is watched all the same: disconnected until the server comes.
        await Eventually.UntilAsync(async () => (await app.TargetsOnAsync($"127.0.0.1:{port}")) is [var only] && only.GetProperty("state").GetString() is "disconnected" or "connecting",
            "the multiplexer watched while its server is down");
    }
}
