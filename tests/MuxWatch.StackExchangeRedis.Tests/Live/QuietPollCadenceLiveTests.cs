using Microsoft.Extensions.Options;
using Microsoft.Extensions.Time.Testing;
using MuxWatch.Configuration;
using MuxWatch.Pipeline;
using MuxWatch.State;
using MuxWatch.Testing;
using MuxWatch.Tracking;
using Prometheus;
using StackExchange.Redis;

namespace MuxWatch.StackExchangeRedis.Tests.Live;

/// <summary>
/// The calm server poll of a quiet process (an idle app) comes <see cref="MuxWatchOptions.ServerPollQuietMultiple"/>
/// times less often, counted where a user would count it too: the real server's own tally of the polls' <c>SLOWLOG</c> calls.
/// The loop's ticks are driven on a fake clock, a second apart, as the probe loop runs them.
/// </summary>
[Trait("Category", "LiveProbe")]
public sealed class QuietPollCadenceLiveTests : IAsyncLifetime
{
    private readonly FakeTimeProvider _time = new(DateTimeOffset.Parse("2026-11-29T12:00:00.5Z", System.Globalization.CultureInfo.InvariantCulture));
    private RedisServer _redis = null!;
    private ConnectionMultiplexer _poller = null!;

    public async Task InitializeAsync()
    {
        _redis = await RedisServer.StartAsync();
        _poller = await ConnectionMultiplexer.ConnectAsync($"{_redis.EndPoint},allowAdmin=true");
    }

    public async Task DisposeAsync()
    {
        await _poller.DisposeAsync();
        await _redis.DisposeAsync();
    }

    [Theory]
    [InlineData(6, 1, 6)] // the default: one calm poll a minute while quiet, six once busy
    [InlineData(1, 6, 6)] // the sidecar's setting: every 10 s, quiet or not
    public async Task A_quiet_process_is_polled_the_multiple_less_often_and_a_busy_one_at_the_calm_interval(int multiple, int quietPolls, int busyPolls)
    {
        var settings = new MuxWatchOptions { ServerPollQuietMultiple = multiple };
        var metrics = new MuxWatchMetrics(Metrics.NewCustomRegistry());
        var timelines = new ServerTimelines(Options.Create(settings));
        var timeline = timelines.GetOrAdd(_redis.EndPoint);
        var requests = new Polls();
        var poller = new EndpointPoller(new ServerPolls(metrics), timeline, requests, metrics, _time);
        var server = _poller.GetServer(_redis.EndPoint);

        // The first poll comes at once, whatever the pace.
        await TickAsync(poller, server.EndPoint, settings, quiet: true);
        var first = await SlowlogCallsAsync();

        // A quiet minute: the loop ticks every second, and the calm poll comes on the minute's slot only.
        var quiet = await MinuteAsync(poller, server.EndPoint, settings, quiet: true, requests);
        Assert.Equal(quietPolls, quiet);

        // The process turns busy: every 10 s again.
        var busy = await MinuteAsync(poller, server.EndPoint, settings, quiet: false, requests);
        Assert.Equal(busyPolls, busy);
        Assert.Equal(first + quietPolls + busyPolls, await SlowlogCallsAsync()); // the server's tally agrees: no poll unseen
    }

    private async Task<int> MinuteAsync(EndpointPoller poller, System.Net.EndPoint endpoint, MuxWatchOptions settings, bool quiet, Polls requests)
    {
        var before = requests.Count;
        for (var second = 0; second < 60; second++)
        {
            _time.Advance(TimeSpan.FromSeconds(1));
            await TickAsync(poller, endpoint, settings, quiet);
        }

        return requests.Count - before;
    }

    /// <summary>One loop tick; a poll it starts is waited for (by its end, not by a sleep) so that the next tick may start another.</summary>
    private async Task TickAsync(EndpointPoller poller, System.Net.EndPoint endpoint, MuxWatchOptions settings, bool quiet)
    {
        poller.StartIfDue(_time.GetUtcNow(), _poller, endpoint, settings, TimeSpan.Zero, quiet, CancellationToken.None);
        await Eventually.UntilAsync(() => !poller.InFlight, "the tick's poll, if it started one, ended");
    }

    private async Task<long> SlowlogCallsAsync()
    {
        var stats = await _redis.CommandAsync("INFO", "commandstats");
        var line = stats.Split('\n').FirstOrDefault(l => l.StartsWith("cmdstat_slowlog", StringComparison.Ordinal)); // cmdstat_slowlog|get on Redis 7
        return line is null ? 0 : long.Parse(line.Split("calls=")[1].Split(',')[0], System.Globalization.CultureInfo.InvariantCulture);
    }

    /// <summary>The pipeline's side: nothing asked of the endpoint (the calm cadence); each poll that ended counted.</summary>
    private sealed class Polls : IServerPollRequests
    {
        private int _count;

        public int Count => Volatile.Read(ref _count);

        public bool IsPollWanted(string endpoint) => false;

        public string? TakeKeyToMeasure(string endpoint) => null;

        public void Polled(string endpoint) => Interlocked.Increment(ref _count);
    }
}
