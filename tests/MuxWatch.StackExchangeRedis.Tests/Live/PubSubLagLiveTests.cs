using System.Globalization;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Hosting;
using Microsoft.Extensions.Logging;
using MuxWatch.Testing;
using Prometheus;
using StackExchange.Redis;

namespace MuxWatch.StackExchangeRedis.Tests.Live;

/// <summary>
/// An app like a user's (its own process, its pool at the default minimum) whose handler-based
/// subscription blocks for 1 s on each of 100 messages a second, its multiplexer watched with
/// <c>MeasurePubSubLag</c>: MuxWatch's delivery lag rises past the handler's sleep, and falls once the
/// handler is fast again. Run on both ends of the client range by test.sh.
/// </summary>
[Trait("Category", "LiveProbe")]
public sealed class PubSubLagLiveTests : IAsyncLifetime
{
    private RedisServer _redis = null!;

    public async Task InitializeAsync() => _redis = await RedisServer.StartAsync();

    public async Task DisposeAsync() => await _redis.DisposeAsync();

    [Fact]
    public async Task A_blocking_handler_raises_the_delivery_lag_past_its_sleep_and_a_fast_one_brings_it_down()
    {
        var (exitCode, output, error) = await BuiltProgram.RunAsync(BuiltProgram.StartInfo("MuxWatch.TestApp", "pubsub", _redis.EndPoint), timeout: TimeSpan.FromMinutes(3));
        Assert.True(exitCode == 0, $"the lag did not rise past the sleep and fall again in time (exit {exitCode}): {error}\n{output}");
        var lines = output.Split('\n', StringSplitOptions.RemoveEmptyEntries);
        var slow = double.Parse(lines.Single(l => l.StartsWith("slow: ", StringComparison.Ordinal))["slow: ".Length..], CultureInfo.InvariantCulture);
        var fast = double.Parse(lines.Single(l => l.StartsWith("fast: ", StringComparison.Ordinal))["fast: ".Length..], CultureInfo.InvariantCulture);
        var metrics = new MetricsText(string.Join('\n', lines.Where(l => l.StartsWith("metrics: ", StringComparison.Ordinal)).Select(l => l["metrics: ".Length..])));

        Assert.True(slow > 1.0, $"slow-phase lag {slow} s");
        Assert.True(fast < 0.25, $"fast-phase lag {fast} s");

        // Which node the channel's subscription lives on, and that it was delivered through it.
        var on = (("multiplexer", "app"), ("endpoint", _redis.EndPoint));
        Assert.Equal(1, metrics.Value("muxwatch_pubsub_subscribed", on.Item1, on.Item2));
        Assert.True(metrics.Value("muxwatch_pubsub_delivery_seconds_count", on.Item1, on.Item2) > 0);
        Assert.True(metrics.Value("muxwatch_pubsub_delivery_seconds_bucket", on.Item1, on.Item2, ("le", "1")) < metrics.Value("muxwatch_pubsub_delivery_seconds_count", on.Item1, on.Item2),
            "some probe message took longer than the handler's 1 s sleep");
        Assert.True(metrics.Value("muxwatch_subscription_operations_total", on.Item1, on.Item2) > 0);
    }

    [Fact]
    public async Task Messages_undelivered_for_over_10_s_are_counted_lost_and_the_probe_goes_on()
    {
        var registry = Metrics.NewCustomRegistry();
        await using var app = await ConnectionMultiplexer.ConnectAsync(_redis.EndPoint);
        using var host = await StartMeasuringAsync(app, registry);
        var on = (("multiplexer", "app"), ("endpoint", _redis.EndPoint));
        await Eventually.UntilAsync(async () => (await ScrapeAsync(registry)).Value("muxwatch_pubsub_delivery_seconds_count", on.Item1, on.Item2) >= 5, "the first deliveries");

        // Nothing delivered for longer than a probe message is waited for (the server blocked 11 s): those
        // messages are given up as lost, so the lag cannot stay up and the 64-message cap never stops the probe.
        var beforeSleep = (await ScrapeAsync(registry)).Value("muxwatch_pubsub_delivery_seconds_count", on.Item1, on.Item2) ?? 0;
        await _redis.CommandAsync("DEBUG", "SLEEP", "11");

        await Eventually.UntilAsync(async () =>
        {
            var metrics = await ScrapeAsync(registry);
            return metrics.Value("muxwatch_pubsub_lost_total", on.Item1, on.Item2) > 0
                && metrics.Value("muxwatch_pubsub_delivery_seconds_count", on.Item1, on.Item2) > beforeSleep + 5
                && metrics.Value("muxwatch_pubsub_undelivered", on.Item1, on.Item2) < 5
                && metrics.Value("muxwatch_pubsub_lag_seconds", on.Item1, on.Item2) < 1;
        }, "the lost messages counted, and deliveries going on at a low lag", TimeSpan.FromSeconds(45));
        await host.StopAsync();
    }

    /// <summary>Issue 38, #7: during a restart the series switched to <c>endpoint="unknown"</c>, and the lost counter started again from 0.</summary>
    [Fact]
    public async Task Through_a_server_restart_the_series_keep_their_endpoint_and_the_lost_counter_never_goes_back()
    {
        var registry = Metrics.NewCustomRegistry();
        await using var app = await ConnectionMultiplexer.ConnectAsync($"{_redis.EndPoint},abortConnect=false");
        using var host = await StartMeasuringAsync(app, registry);
        var on = (("multiplexer", "app"), ("endpoint", _redis.EndPoint));
        await Eventually.UntilAsync(async () => (await ScrapeAsync(registry)).Value("muxwatch_pubsub_delivery_seconds_count", on.Item1, on.Item2) >= 5, "the first deliveries");

        await _redis.KillAsync();
        var endpoints = new HashSet<string>(StringComparer.Ordinal);
        var lost = new List<double>();
        async Task<bool> Observe(Func<MetricsText, bool> done)
        {
            var metrics = await ScrapeAsync(registry);
            endpoints.UnionWith(metrics.Samples("muxwatch_pubsub_lag_seconds", on.Item1).Select(s => s.Labels["endpoint"]));
            endpoints.UnionWith(metrics.Samples("muxwatch_pubsub_lost_total", on.Item1).Select(s => s.Labels["endpoint"]));
            lost.Add(metrics.Value("muxwatch_pubsub_lost_total", on.Item1, on.Item2) ?? -1);
            return done(metrics);
        }

        // Down long enough for the subscription's connection to be seen gone and probe messages to be given up.
        await Eventually.UntilAsync(() => Observe(m => m.Value("muxwatch_pubsub_subscribed", on.Item1, on.Item2) == 0 && m.Value("muxwatch_pubsub_lost_total", on.Item1, on.Item2) > 0),
            "the subscription seen down and probe messages given up as lost", TimeSpan.FromSeconds(45));
        await _redis.RestartAsync();
        var delivered = (await ScrapeAsync(registry)).Value("muxwatch_pubsub_delivery_seconds_count", on.Item1, on.Item2) ?? 0;
        await Eventually.UntilAsync(() => Observe(m => m.Value("muxwatch_pubsub_subscribed", on.Item1, on.Item2) == 1
            && m.Value("muxwatch_pubsub_delivery_seconds_count", on.Item1, on.Item2) > delivered + 3), "subscribed again, deliveries going on", TimeSpan.FromSeconds(45));

        Assert.Equal([_redis.EndPoint], endpoints);
        Assert.DoesNotContain(-1, lost);
        Assert.Equal(lost.Order(), lost); // a counter never goes back
        await host.StopAsync();
    }

    [Fact]
    public async Task A_connection_MuxWatch_makes_keeps_its_subscription_connection_when_it_measures_the_lag()
    {
        // MuxWatch's own connection to one standalone server opens no subscription connection, unless it
        // measures the pub/sub lag, which subscribes through it.
        var registry = Metrics.NewCustomRegistry();
        var builder = Host.CreateApplicationBuilder();
        builder.Logging.ClearProviders();
        builder.Configuration["MuxWatch:ProbeInterval"] = "00:00:00.100";
        builder.Services.AddMuxWatch().UseMetricsRegistry(registry)
            .AddMultiplexer("measured", _redis.EndPoint).MeasurePubSubLag("measured")
            .AddMultiplexer("plain", _redis.EndPoint + ",name=muxwatch-plain");
        using var host = builder.Build();
        await host.StartAsync();
        var on = (("multiplexer", "measured"), ("endpoint", _redis.EndPoint));
        await Eventually.UntilAsync(async () => (await ScrapeAsync(registry)).Value("muxwatch_pubsub_delivery_seconds_count", on.Item1, on.Item2) >= 3, "deliveries through MuxWatch's own connection");

        var clients = (await _redis.CommandAsync("CLIENT", "LIST")).Split('\n');
        Assert.Single(clients, line => line.Contains(" name=muxwatch ", StringComparison.Ordinal) && line.Contains(" cmd=subscribe", StringComparison.Ordinal));
        Assert.Single(clients, line => line.Contains(" name=muxwatch-plain ", StringComparison.Ordinal));
        await host.StopAsync();
    }

    /// <summary>An app's host with MuxWatch measuring <paramref name="app"/>'s pub/sub lag, as <c>app</c>, sampling every 100 ms.</summary>
    private static async Task<IHost> StartMeasuringAsync(ConnectionMultiplexer app, CollectorRegistry registry)
    {
        var builder = Host.CreateApplicationBuilder();
        builder.Logging.ClearProviders();
        builder.Configuration["MuxWatch:ProbeInterval"] = "00:00:00.100";
        builder.Configuration["MuxWatch:PingInterval"] = "00:00:00.100";
        builder.Services.AddMuxWatch().UseMetricsRegistry(registry).AddMultiplexer("app", _ => app).MeasurePubSubLag("app");
        var host = builder.Build();
        await host.StartAsync();
        return host;
    }

    private static async Task<MetricsText> ScrapeAsync(CollectorRegistry registry)
    {
        using var stream = new MemoryStream();
        await registry.CollectAndExportAsTextAsync(stream);
        return new MetricsText(System.Text.Encoding.UTF8.GetString(stream.ToArray()));
    }
}
