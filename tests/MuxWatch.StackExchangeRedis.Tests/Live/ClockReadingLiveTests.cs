using System.Globalization;
using MuxWatch.Testing;
using StackExchange.Redis;

namespace MuxWatch.StackExchangeRedis.Tests.Live;

/// <summary>
/// The server's clock is read with <c>TIME</c> against this process's, within half the round trip: a reading held up (a
/// process still starting, a busy pool) is off by up to that much, and every slow command and fork is placed by it. A
/// full run met it: a 2 s DEBUG SLEEP placed too early by the first poll's reading, and the sidecar's timeout in it named
/// <c>server-stall</c> instead of <c>slow-command</c>. A real server; this process's clock driven by hand.
/// </summary>
[Trait("Category", "LiveProbe")]
public sealed class ClockReadingLiveTests : IAsyncLifetime
{
    private static readonly DateTimeOffset T0 = DateTimeOffset.Parse("2026-11-30T12:00:00Z", CultureInfo.InvariantCulture);
    private RedisServer _redis = null!;

    public async Task InitializeAsync() => _redis = await RedisServer.StartAsync();

    public async Task DisposeAsync() => await _redis.DisposeAsync();

    [Fact]
    public async Task A_reading_held_up_is_replaced_by_a_sharper_one_at_the_next_polls_and_never_replaces_one()
    {
        await using var connection = await ConnectionMultiplexer.ConnectAsync($"{_redis.EndPoint},allowAdmin=true");
        var clock = new SteppingClock(T0);
        var endpoint = _redis.EndPoint;
        var reader = new EndpointPollReader(new ServerTimeline(endpoint, TimeSpan.FromHours(1)), new ServerPollRequests(new ServerTimelines(Microsoft.Extensions.Options.Options.Create(new MuxWatchOptions()))), clock);
        var server = connection.GetServers().Single().EndPoint;
        Task<ServerPollResult> Poll() => reader.ReadAsync(connection, server, TimeSpan.FromMinutes(30), keySizes: false, clientTimeout: null, CancellationToken.None);

        // The first poll's TIME held up: each read of this process's clock 400 ms after the one before.
        clock.Step = TimeSpan.FromMilliseconds(400);
        var heldUp = await Poll();
        Assert.Null(heldUp.Error);
        Assert.True(heldUp.ClockUncertainty >= TimeSpan.FromMilliseconds(200), $"{heldUp.ClockUncertainty}");

        // The next poll reads the clock again (within the same minute) and keeps the sharper reading.
        clock.Step = TimeSpan.FromMilliseconds(1);
        var sharp = await Poll();
        Assert.True(sharp.ClockUncertainty < TimeSpan.FromMilliseconds(50), $"{sharp.ClockUncertainty}");
        Assert.NotEqual(heldUp.ClockOffset, sharp.ClockOffset);

        // Held up again: the reading is taken, but the sharper one is kept.
        clock.Step = TimeSpan.FromMilliseconds(400);
        for (var poll = 0; poll < EndpointPollReader.ClockRetries + 2; poll++)
        {
            var later = await Poll();
            Assert.Equal(sharp.ClockUncertainty, later.ClockUncertainty);
            Assert.Equal(sharp.ClockOffset, later.ClockOffset);
        }

        // Ten minutes on, the reading is stale: the next one replaces it, however imprecise.
        clock.Advance(EndpointPollReader.ClockKeptFor);
        var renewed = await Poll();
        Assert.True(renewed.ClockUncertainty >= TimeSpan.FromMilliseconds(200), $"{renewed.ClockUncertainty}");
    }

    /// <summary>This process's clock, moved on by <see cref="Step"/> at every read (timers stay the system's).</summary>
    private sealed class SteppingClock(DateTimeOffset start) : TimeProvider
    {
        private readonly Lock _gate = new();
        private DateTimeOffset _now = start;

        public TimeSpan Step { get; set; }

        public void Advance(TimeSpan by)
        {
            lock (_gate)
            {
                _now += by;
            }
        }

        public override DateTimeOffset GetUtcNow()
        {
            lock (_gate)
            {
                _now += Step;
                return _now;
            }
        }
    }
}
