using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Hosting;
using Microsoft.Extensions.Logging;
using MuxWatch.Testing;
using Prometheus;
using StackExchange.Redis;

namespace MuxWatch.Tests.Live;

/// <summary>
/// The next fork foretold, on a real redis-server in an app like a user's: a dataset saved once (its fork's cost
/// per GB measured), then grown about tenfold; the projection follows the memory before the next save, and that
/// save's real fork lands near it, where the last fork's own figure would be an order of magnitude short. The
/// clients' timeout the alert compares with is the app's own. Run on both ends of the client range by test.sh.
/// </summary>
[Trait("Category", "LiveProbe")]
public sealed class ForkProjectionLiveTests(Xunit.Abstractions.ITestOutputHelper output) : IAsyncLifetime
{
    private readonly CollectorRegistry _registry = Metrics.NewCustomRegistry();
    private RedisServer _redis = null!;
    private ConnectionMultiplexer _app = null!;
    private IHost _host = null!;

    public async Task InitializeAsync()
    {
        _redis = await RedisServer.StartAsync();
        _app = await ConnectionMultiplexer.ConnectAsync($"{_redis.EndPoint},syncTimeout=900,asyncTimeout=700,abortConnect=false");
        var builder = Host.CreateApplicationBuilder();
        builder.Logging.ClearProviders();
        builder.Configuration["MuxWatch:ProbeInterval"] = "00:00:00.200";
        builder.Configuration["MuxWatch:ServerPollInterval"] = "00:00:00.200";
        var app = _app;
        builder.Services.AddMuxWatch().UseMetricsRegistry(_registry).AddMultiplexer("app", _ => app);
        _host = builder.Build();
        await _host.StartAsync();
        await Eventually.UntilAsync(async () => await GaugeAsync("muxwatch_server_forks_total") is not null, "the first complete poll");
    }

    public async Task DisposeAsync()
    {
        await _host.StopAsync();
        _host.Dispose();
        await _app.DisposeAsync();
        await _redis.DisposeAsync();
    }

    private async Task<MetricsText> ScrapeAsync()
    {
        using var stream = new MemoryStream();
        await _registry.CollectAndExportAsTextAsync(stream);
        return new MetricsText(System.Text.Encoding.UTF8.GetString(stream.ToArray()));
    }

    private async Task<double?> GaugeAsync(string family) => (await ScrapeAsync()).Value(family, ("endpoint", _redis.EndPoint));

    /// <summary>A BGSAVE, waited for until MuxWatch has seen its fork (total_forks grew in a poll); returns the fork's pause in seconds.</summary>
    private async Task<double> SaveAsync()
    {
        var forks = await GaugeAsync("muxwatch_server_forks_total") ?? 0;
        await _redis.CommandAsync("BGSAVE");
        await Eventually.UntilAsync(async () => await GaugeAsync("muxwatch_server_forks_total") > forks, "the save's fork seen by a poll", TimeSpan.FromSeconds(60));
        return (await GaugeAsync("muxwatch_server_latest_fork_seconds"))!.Value;
    }

    [Fact]
    public async Task The_projection_follows_the_memory_and_the_next_real_fork_lands_near_it()
    {
        await _redis.CommandAsync("DEBUG", "POPULATE", "400000");
        var firstFork = await SaveAsync();
        await Eventually.UntilAsync(async () => await GaugeAsync("muxwatch_server_fork_seconds_per_gigabyte") > 0, "the cost per GB from the first fork");
        var perGigabyte = (await GaugeAsync("muxwatch_server_fork_seconds_per_gigabyte"))!.Value;
        var projectedBefore = (await GaugeAsync("muxwatch_server_next_fork_projected_seconds"))!.Value;

        // The dataset grows about tenfold; no fork meanwhile.
        await _redis.CommandAsync("DEBUG", "POPULATE", "4000000");
        var projectedGrown = 0.0;
        await Eventually.UntilAsync(async () => (projectedGrown = await GaugeAsync("muxwatch_server_next_fork_projected_seconds") ?? 0) > projectedBefore * 4,
            "the projection to follow the memory before any fork", TimeSpan.FromSeconds(30));
        Assert.Equal(perGigabyte, (await GaugeAsync("muxwatch_server_fork_seconds_per_gigabyte"))!.Value); // no new fork, no new cost

        var secondFork = await SaveAsync();

        output.WriteLine($"first fork {firstFork * 1000:F2} ms ({perGigabyte * 1000:F1} ms/GB), projected {projectedBefore * 1000:F2} ms, then {projectedGrown * 1000:F2} ms; the grown dataset's fork {secondFork * 1000:F2} ms");

        // The real fork grew with the memory (the last fork's own figure would have foretold it badly), and the
        // projection made before it is within a factor of 4 of it: forks of a few milliseconds are noisy here, and
        // slower while other processes load the machine (13 ms projected against a 41 ms fork once, another test
        // suite running beside it), while the last fork's own figure is off by the tenfold growth. Twice, not the
        // tenfold: a loaded machine inflates the small first fork (5.4 ms against a 15.2 ms second fork once).
        Assert.True(secondFork > firstFork * 2, $"the grown dataset's fork ({secondFork * 1000:F2} ms) against the first ({firstFork * 1000:F2} ms)");
        Assert.InRange(projectedGrown / secondFork, 0.25, 4);

        // The timeout the alert compares it with: the app's smallest (asyncTimeout 700 ms under syncTimeout 900 ms).
        Assert.Equal(0.7, await GaugeAsync("muxwatch_server_client_timeout_seconds"));
    }
}
