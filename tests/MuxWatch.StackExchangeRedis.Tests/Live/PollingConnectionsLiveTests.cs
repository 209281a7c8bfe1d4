using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Hosting;
using Microsoft.Extensions.Logging;
using MuxWatch.Hosting;
using MuxWatch.Testing;
using StackExchange.Redis;

namespace MuxWatch.StackExchangeRedis.Tests.Live;

/// <summary>
/// How many connections the server poller opens, counted by the real server's <c>CLIENT LIST</c>: one
/// per endpoint however many app multiplexers share it, none of its own for a connection MuxWatch made
/// itself, and a take-over (with the same timeline) when the multiplexer that polled is gone.
/// </summary>
[Trait("Category", "LiveProbe")]
public sealed class PollingConnectionsLiveTests : IAsyncLifetime
{
    private readonly List<IAsyncDisposable> _owned = [];
    private RedisServer _redis = null!;

    public PollingConnectionsLiveTests() => TestThreadPool.EnsureRoomy();

    public async Task InitializeAsync() => _redis = await RedisServer.StartAsync();

    public async Task DisposeAsync()
    {
        foreach (var owned in Enumerable.Reverse(_owned))
        {
            await owned.DisposeAsync();
        }

        await _redis.DisposeAsync();
    }

    private async Task<IHost> StartAsync(Action<MuxWatchBuilder> watch, string probeInterval = "00:00:00.100", string pingInterval = "00:00:00.100", string pollInterval = "00:00:00.200")
    {
        var builder = Host.CreateApplicationBuilder();
        builder.Logging.ClearProviders();
        builder.Configuration["MuxWatch:ProbeInterval"] = probeInterval;
        builder.Configuration["MuxWatch:PingInterval"] = pingInterval;
        builder.Configuration["MuxWatch:ServerPollInterval"] = pollInterval;
        builder.Configuration["MuxWatch:ServerPollTimeout"] = "00:00:01";
        watch(builder.Services.AddMuxWatch().UseMetricsRegistry(Prometheus.Metrics.NewCustomRegistry()));
        var host = builder.Build();
        await host.StartAsync();
        _owned.Add(new HostStopper(host));
        return host;
    }

    private async Task<ConnectionMultiplexer> AppMultiplexerAsync()
    {
        var multiplexer = await ConnectionMultiplexer.ConnectAsync($"{_redis.EndPoint},abortConnect=false");
        _owned.Add(multiplexer);
        return multiplexer;
    }

    private async Task<int> ClientsNamedAsync(string name) =>
        (await _redis.CommandAsync("CLIENT", "LIST")).Split('\n').Count(line => line.Contains($" name={name} ", StringComparison.Ordinal));

    private async Task<DateTimeOffset> PolledThroughAsync(IHost host, DateTimeOffset? after = null)
    {
        var timelines = host.Services.GetRequiredService<ServerTimelines>();
        DateTimeOffset through = default;
        await Eventually.UntilAsync(() =>
            timelines.Find(_redis.EndPoint)?.CompleteThrough is { } done && done > (after ?? DateTimeOffset.MinValue) && (through = done) == done,
            "a complete poll of the endpoint" + (after is null ? string.Empty : " after the take-over"));
        return through;
    }

    [Fact]
    public async Task Three_app_multiplexers_on_one_endpoint_share_one_polling_connection_and_the_next_takes_over()
    {
        var first = await AppMultiplexerAsync();
        var second = await AppMultiplexerAsync();
        var third = await AppMultiplexerAsync();
        var host = await StartAsync(w => w.AddMultiplexer("first", _ => first).AddMultiplexer("second", _ => second).AddMultiplexer("third", _ => third));
        var before = await PolledThroughAsync(host);
        Assert.Equal(1, await ClientsNamedAsync("muxwatch-poller"));

        await first.DisposeAsync(); // the app drops the multiplexer whose clone polled
        await Eventually.UntilAsync(async () => await ClientsNamedAsync("muxwatch-poller") == 1 && await PolledThroughAsync(host, before) > before,
            "one polling connection again, from the next multiplexer, polling on");
        var timeline = host.Services.GetRequiredService<ServerTimelines>().Find(_redis.EndPoint);
        Assert.NotNull(timeline); // the same endpoint's timeline, kept across the take-over
    }

    [Fact]
    public async Task A_connection_MuxWatch_made_itself_is_polled_over_with_no_second_connection()
    {
        var host = await StartAsync(w => w.AddMultiplexer("own", $"{_redis.EndPoint},name=own-target"));
        await PolledThroughAsync(host);

        Assert.Equal(0, await ClientsNamedAsync("muxwatch-poller"));
        Assert.Equal(1, await ClientsNamedAsync("own-target")); // its interactive connection, nothing more: one standalone server, so no subscription connection
    }

    [Fact]
    public async Task The_probes_PING_and_the_servers_poll_reach_the_server_on_the_same_tick()
    {
        // Each call wakes the app's thread pool, and a wake costs more than the call (docs/benchmarks.md):
        // started on one tick, the PING and the poll share it. Scaled down: a tick every 250 ms, both every
        // second; the real server's MONITOR says when each arrived.
        var app = await AppMultiplexerAsync();
        await using var monitor = await RedisMonitor.StartAsync(_redis);
        await StartAsync(w => w.AddMultiplexer("app", _ => app), probeInterval: "00:00:00.250", pingInterval: "00:00:01", pollInterval: "00:00:01");
        await Eventually.UntilAsync(() => monitor.Commands("INFO").Count(PollsInfo) >= 6, "six polls seen by the server");

        // A poll's INFO has no section (the client's own handshake names one); every one has a PING of the
        // app's multiplexer within half a tick (the first poll waits for its connection to be made).
        var pings = monitor.Commands("PING");
        var polls = monitor.Commands("INFO").Where(PollsInfo).Skip(1).ToList();
        var apart = polls.Select(poll => pings.Min(ping => Math.Abs(ping.At - poll.At))).ToList();
        Assert.All(apart, seconds => Assert.True(seconds < 0.125, $"a poll {seconds * 1000:F0} ms from the nearest PING (all: {string.Join(", ", apart.Select(a => $"{a * 1000:F0} ms"))})"));

        static bool PollsInfo(MonitoredCommand command) => command.ArgumentCount == 0;
    }

    [Fact]
    public async Task The_polling_connections_heartbeat_is_the_calm_one_MuxWatch_sets_on_either_client()
    {
        // The client's heartbeat wakes the app's thread pool at every beat; the polling connection's is
        // set to 10 s (the client's default is 1 s). 2.6.90's ConfigurationOptions.Clone() dropped it, so on
        // that client the polling connection beat every second: the status text's heartbeat age then never
        // passes 1 s. Here it must reach 3 s between two beats.
        var app = await AppMultiplexerAsync();
        var host = await StartAsync(w => w.AddMultiplexer("app", _ => app));
        var probe = host.Services.GetRequiredService<MuxWatch.StackExchangeRedis.ServerPollProbe>();
        var status = new StringWriter(System.Globalization.CultureInfo.InvariantCulture);
        await Eventually.UntilAsync(() =>
        {
            if (probe.PollingConnection("app") is not { } polling)
            {
                return false;
            }

            status.GetStringBuilder().Clear();
            polling.GetStatus(status);
            return MuxWatch.StackExchangeRedis.StatusTextReader.Read(status.GetStringBuilder()).HeartbeatAgeSeconds >= 3;
        }, "the polling connection's heartbeat at least 3 s old between two beats", TimeSpan.FromSeconds(20));
    }

    private sealed class HostStopper(IHost host) : IAsyncDisposable
    {
        public async ValueTask DisposeAsync()
        {
            await host.StopAsync();
            host.Dispose();
        }
    }
}
