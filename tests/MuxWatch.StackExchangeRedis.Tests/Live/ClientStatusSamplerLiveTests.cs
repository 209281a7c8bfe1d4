using MuxWatch.StackExchangeRedis;
using MuxWatch.Testing;
using Prometheus;
using StackExchange.Redis;

namespace MuxWatch.StackExchangeRedis.Tests.Live;

/// <summary>
/// The status text (<c>GetStatus()</c>: the heartbeat's age, the client's own timeout totals) is the dearest read of a
/// probe cycle: read once a minute while the multiplexer is quiet, at the PINGs' cadence while it is not. What a user
/// sees is the client's timeout total in <c>muxwatch_client_timeouts_total</c>: these tests make the client count real
/// timeouts (a GET behind a real <c>DEBUG SLEEP</c>) and check when the series shows them.
/// </summary>
[Trait("Category", "LiveProbe")]
public sealed class ClientStatusSamplerLiveTests : IAsyncLifetime
{
    private static readonly TimeSpan Ping = TimeSpan.FromSeconds(10);
    private readonly CollectorRegistry _registry = Metrics.NewCustomRegistry();
    private RedisServer _redis = null!;
    private ConnectionMultiplexer _app = null!;
    private MultiplexerMetrics _metrics = null!;

    public async Task InitializeAsync()
    {
        _redis = await RedisServer.StartAsync();
        _app = await ConnectionMultiplexer.ConnectAsync($"{_redis.EndPoint},syncTimeout=200");
        _metrics = new MultiplexerMetrics(new MuxWatchMetrics(_registry));
    }

    public async Task DisposeAsync()
    {
        await _app.DisposeAsync();
        await _redis.DisposeAsync();
    }

    [Fact]
    public async Task While_quiet_the_status_is_read_once_a_minute_and_at_the_ping_cadence_otherwise()
    {
        var sampler = new ClientStatusSampler("app", _metrics);
        var start = DateTimeOffset.Parse("2026-11-29T12:00:00Z", System.Globalization.CultureInfo.InvariantCulture);

        sampler.SampleIfDue(_app, start, Ping, quiet: true);
        Assert.Equal(0, await SyncTimeoutsAsync());

        await TimeOutOneGetAsync();
        sampler.SampleIfDue(_app, start + TimeSpan.FromSeconds(30), Ping, quiet: true);
        Assert.Equal(0, await SyncTimeoutsAsync()); // quiet: half a minute is not yet due
        sampler.SampleIfDue(_app, start + ClientStatusSampler.QuietInterval, Ping, quiet: true);
        Assert.Equal(1, await SyncTimeoutsAsync());

        await TimeOutOneGetAsync();
        sampler.SampleIfDue(_app, start + ClientStatusSampler.QuietInterval + TimeSpan.FromSeconds(5), Ping, quiet: false);
        Assert.Equal(1, await SyncTimeoutsAsync()); // busy: the PING cadence, 5 s is not yet due
        sampler.SampleIfDue(_app, start + ClientStatusSampler.QuietInterval + Ping, Ping, quiet: false);
        Assert.Equal(2, await SyncTimeoutsAsync());
    }

    /// <summary>A synchronous GET that times out behind a real stall of the server; returns once the server answers again.</summary>
    private async Task TimeOutOneGetAsync()
    {
        var sleeping = _redis.CommandInBackground("DEBUG", "SLEEP", "3");
        await Eventually.UntilAsync(async () => !await _redis.AnswersPingAsync(), "the server to be asleep");
        Assert.Throws<RedisTimeoutException>(() => _app.GetDatabase().StringGet("k"));
        await sleeping;
        await Eventually.UntilAsync(() => Task.FromResult(_app.GetServers().All(s => s.GetCounters().Interactive.SentItemsAwaitingResponse == 0)), "the late reply read");
    }

    private async Task<double?> SyncTimeoutsAsync()
    {
        using var stream = new MemoryStream();
        await _registry.CollectAndExportAsTextAsync(stream);
        return new MetricsText(System.Text.Encoding.UTF8.GetString(stream.ToArray())).Value("muxwatch_client_timeouts_total", ("multiplexer", "app"), ("mode", "sync"));
    }
}
