using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Hosting;
using Microsoft.Extensions.Logging;
using Microsoft.Extensions.Time.Testing;
using MuxWatch.Testing;
using Prometheus;
using StackExchange.Redis;

namespace MuxWatch.StackExchangeRedis.Tests.Live;

/// <summary>
/// Who sent a slow command, as the slow log's client name names it, against a real <c>redis-server</c> and the app's
/// real multiplexer: the answer is remembered between polls (each poll reads the newest entries again), and is
/// worked out again once the app's connections change under it.
/// </summary>
[Trait("Category", "LiveProbe")]
public sealed class SlowlogSendersLiveTests : IAsyncLifetime
{
    private readonly FakeTimeProvider _time = new(DateTimeOffset.Parse("2026-11-29T12:00:00Z", System.Globalization.CultureInfo.InvariantCulture));
    private RedisServer _redis = null!;

    public async Task InitializeAsync() => _redis = await RedisServer.StartAsync();

    public async Task DisposeAsync() => await _redis.DisposeAsync();

    [Fact]
    public async Task A_sender_is_named_by_the_watched_multiplexer_and_an_answer_is_worked_out_again_within_a_minute()
    {
        var name = $"checkout{_redis.Port}";
        using var app = await ConnectionMultiplexer.ConnectAsync($"{_redis.EndPoint},name={name}");
        var endpoint = EndpointText.Of(app.GetServers().Single().EndPoint);
        var builder = Host.CreateApplicationBuilder();
        builder.Logging.ClearProviders();
        builder.Configuration["MuxWatch:DiscoverMultiplexers"] = "false";
        builder.Services.AddMuxWatch().UseMetricsRegistry(Metrics.NewCustomRegistry()).AddMultiplexer("checkout", _ => app);
        using var host = builder.Build();
        var multiplexers = host.Services.GetRequiredService<WatchedMultiplexers>();
        var senders = new SlowlogSenders(multiplexers, _time);

        // Before the host runs, the app's multiplexer is not resolved yet: its name is not one MuxWatch knows.
        Assert.Null(senders.KnownAs(name, endpoint));
        Assert.Equal("MuxWatch's own polling connection", senders.KnownAs(ServerPollProbe.ClientName, endpoint));

        await host.StartAsync();
        await Eventually.UntilAsync(() => multiplexers.All.Single().Multiplexer is not null, "the app's multiplexer resolved");

        // The answer is remembered (each poll reads the newest entries again; working each out anew scanned every watched
        // multiplexer), at most a minute: then the multiplexer resolved meanwhile names the sender.
        Assert.Null(senders.KnownAs(name, endpoint));
        _time.Advance(SlowlogSenders.Remembered);
        Assert.Equal("the watched multiplexer 'checkout'", senders.KnownAs(name, endpoint));
        Assert.Equal("the watched multiplexer 'checkout'", senders.KnownAs(name, endpoint));
        Assert.Null(senders.KnownAs(name, "127.0.0.1:1")); // another server: never this multiplexer
        Assert.Equal("checkout", senders.MultiplexerOf(name, endpoint)); // by name, for the correlator to match a failed connection's
        Assert.Null(senders.MultiplexerOf(name, "127.0.0.1:1"));
        Assert.Null(senders.MultiplexerOf(ServerPollProbe.ClientName, endpoint));
        await host.StopAsync();
    }
}
