using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Hosting;
using Microsoft.Extensions.Logging;
using Microsoft.Extensions.Options;
using MuxWatch.Configuration;
using MuxWatch.Pipeline;
using MuxWatch.State;
using MuxWatch.Testing;
using Prometheus;
using StackExchange.Redis;

namespace MuxWatch.StackExchangeRedis.Tests.Live;

/// <summary>
/// The PINGs through an app's multiplexer come <see cref="MuxWatchOptions.PingQuietMultiple"/> times less often while
/// the process is quiet (an idle app), counted where a user counts them: <c>muxwatch_ping_seconds_count</c>. The probe
/// cycles are driven a second apart on synthetic times, as the probe loop runs them, with the process's activity as a
/// quiet or a busy process shows it.
/// </summary>
[Trait("Category", "LiveProbe")]
public sealed class QuietPingCadenceLiveTests : IAsyncLifetime
{
    private readonly CollectorRegistry _registry = Metrics.NewCustomRegistry();
    private RedisServer _redis = null!;
    private ConnectionMultiplexer _app = null!;

    public async Task InitializeAsync()
    {
        _redis = await RedisServer.StartAsync();
        _app = await ConnectionMultiplexer.ConnectAsync(_redis.EndPoint);
    }

    public async Task DisposeAsync()
    {
        await _app.DisposeAsync();
        await _redis.DisposeAsync();
    }

    [Theory]
    [InlineData(6, 1, 6)] // the default: one PING a minute while quiet, six once busy
    [InlineData(1, 6, 6)] // the sidecar's setting: every 10 s, quiet or not
    public async Task A_quiet_process_is_pinged_the_multiple_less_often_and_a_busy_one_at_the_interval(int multiple, int quietPings, int busyPings)
    {
        var builder = Host.CreateApplicationBuilder();
        builder.Logging.ClearProviders();
        builder.Configuration["MuxWatch:ProbeInterval"] = "01:00:00"; // the loop's own cycle runs once, at start; this test drives the rest
        builder.Configuration["MuxWatch:PingQuietMultiple"] = multiple.ToString(System.Globalization.CultureInfo.InvariantCulture);
        builder.Configuration["MuxWatch:ServerPolling"] = "false";
        builder.Configuration["MuxWatch:DiscoverMultiplexers"] = "false";
        builder.Services.AddMuxWatch().UseMetricsRegistry(_registry).AddMultiplexer("app", _ => _app);
        using var host = builder.Build();
        await host.StartAsync();
        var watched = host.Services.GetRequiredService<WatchedMultiplexers>();
        await Eventually.UntilAsync(() => watched.All.SingleOrDefault()?.Multiplexer is not null, "the app's multiplexer resolved");
        await Eventually.UntilAsync(() => !watched.All.Single().AnyPingInFlight, "the start-up cycle's PING answered");

        // Synthetic times past the real clock (the start-up cycle PINGed on it), half a second into a minute.
        var now = DateTimeOffset.UnixEpoch + TimeSpan.FromMinutes(Math.Ceiling((DateTimeOffset.UtcNow - DateTimeOffset.UnixEpoch).TotalMinutes) + 1) + TimeSpan.FromSeconds(0.5);
        var workItems = 0L;
        var busy = false;
        var activity = new ProcessActivity(() => (busy ? workItems += 100 : workItems, 0));
        var probe = new MultiplexerProbe(watched, host.Services.GetRequiredService<TimeoutPipeline>(), host.Services.GetRequiredService<IOptions<MuxWatchOptions>>(), activity);

        async Task<double> MinuteAsync()
        {
            var before = await PingsAsync();
            for (var second = 0; second < 60; second++)
            {
                now += TimeSpan.FromSeconds(1);
                activity.NoteBusy(now); // as the pool's probe notes it each cycle
                probe.Sample(now, CancellationToken.None);
                await Eventually.UntilAsync(() => !watched.All.Single().AnyPingInFlight, "the cycle's PING, if it sent one, answered");
            }

            return await PingsAsync() - before;
        }

        // The first cycle on these times PINGs at once (a new slot after the start-up cycle's), whatever the pace.
        activity.NoteBusy(now);
        probe.Sample(now, CancellationToken.None);
        await Eventually.UntilAsync(() => !watched.All.Single().AnyPingInFlight, "the first cycle's PING answered");

        Assert.Equal(quietPings, await MinuteAsync()); // a quiet minute: the loop ticks every second, the PING on the minute's slot only

        // Between the minute's PINGs, a connected endpoint with nothing outstanding still counts as answered: the
        // last-success gauge follows the cycles, so MuxWatchProbeStalled (30 s) stays quiet for an idle app. At the
        // interval (the sidecar's setting) only a PING's answer moves it (PINGs stamp it on the real clock).
        now += TimeSpan.FromSeconds(1);
        activity.NoteBusy(now);
        probe.Sample(now, CancellationToken.None);
        var lastSuccess = await LastSuccessAsync() ?? 0;
        if (multiple > 1)
        {
            Assert.Equal(now.ToUnixTimeMilliseconds() / 1000.0, lastSuccess, precision: 3);
        }
        else
        {
            Assert.True(lastSuccess < now.ToUnixTimeSeconds() - 60, "at the interval, a cycle without a PING counts nothing as answered");
        }

        busy = true;
        activity.NoteBusy(now);
        Assert.Equal(busyPings, await MinuteAsync()); // the process turns busy: every 10 s again
        await host.StopAsync();
    }

    private async Task<double> PingsAsync() => await ValueAsync("muxwatch_ping_seconds_count") ?? 0;

    private async Task<double?> LastSuccessAsync() => await ValueAsync("muxwatch_last_probe_success_timestamp_seconds");

    private async Task<double?> ValueAsync(string series)
    {
        using var stream = new MemoryStream();
        await _registry.CollectAndExportAsTextAsync(stream);
        return new MetricsText(System.Text.Encoding.UTF8.GetString(stream.ToArray())).Value(series, ("multiplexer", "app"), ("endpoint", _redis.EndPoint));
    }
}
