using Microsoft.Extensions.Logging.Abstractions;
using Microsoft.Extensions.Options;
using MuxWatch.Testing;

namespace MuxWatch.Tests;

/// <summary>
/// The runtime's thread-pool events are heard from the start and while the pool has work to watch: an idle pool says
/// nothing, and listening costs an idle app (docs/benchmarks.md). The probe loop's pool samples turn the listener on
/// and off; what the events say is proven live (AppSideDiagnosisLiveTests).
/// </summary>
public sealed class ThreadPoolEventsTests
{
    private static readonly DateTimeOffset Start = new(2026, 11, 29, 4, 0, 0, TimeSpan.Zero);

    private static ThreadPoolEvents Events(ManualTimeProvider time, bool enabled = true)
    {
        var metrics = new MuxWatchMetrics(Prometheus.Metrics.NewCustomRegistry());
        var capturer = new PoolStackCapturer(new PoolStackCaptures(TimeSpan.FromMinutes(5)), metrics, time, NullLogger<PoolStackCapturer>.Instance);
        return new ThreadPoolEvents(metrics, new RuntimeHistory(), time, Options.Create(new MuxWatchOptions { ThreadPoolEvents = enabled }), capturer);
    }

    [Fact]
    public async Task The_listener_is_on_from_the_start_off_after_a_calm_minute_and_on_again_when_work_waits()
    {
        var time = new ManualTimeProvider(Start);
        using var events = Events(time);
        Assert.False(events.Listening); // not before the host starts

        await events.StartAsync(CancellationToken.None);
        Assert.True(events.Listening); // an app often starves under its first traffic

        events.PoolSampled(Start.AddSeconds(59), calm: true);
        Assert.True(events.Listening);
        events.PoolSampled(Start.AddSeconds(60), calm: true);
        Assert.False(events.Listening); // a calm minute: an idle pool says nothing

        events.PoolSampled(Start.AddSeconds(70), calm: false);
        Assert.True(events.Listening); // work queued or workers over the minimum: heard again within a probe interval
        events.PoolSampled(Start.AddSeconds(129), calm: true);
        Assert.True(events.Listening); // a minute after it was last seen busy, not after the first calm sample
        events.PoolSampled(Start.AddSeconds(130), calm: true);
        Assert.False(events.Listening);

        await events.StopAsync(CancellationToken.None);
        events.PoolSampled(Start.AddSeconds(131), calm: false);
        Assert.False(events.Listening); // stopped: no sample starts it again
    }

    [Fact]
    public async Task Turned_off_it_never_listens_whatever_the_pool_does()
    {
        var time = new ManualTimeProvider(Start);
        using var events = Events(time, enabled: false);
        await events.StartAsync(CancellationToken.None);
        events.PoolSampled(Start.AddSeconds(1), calm: false);

        Assert.False(events.Listening);
    }
}
