using System.Collections.Concurrent;
using Microsoft.Extensions.Logging.Abstractions;
using Microsoft.Extensions.Time.Testing;
using MuxWatch.StackExchangeRedis;
using MuxWatch.Testing;
using Prometheus;
using StackExchange.Redis;

namespace MuxWatch.StackExchangeRedis.Tests.Live;

/// <summary>
/// A server a watched multiplexer no longer lists (the client re-read its cluster) or a node that left its cluster loses
/// its series, and again while something may write them back: a full run in CI once found a removed node's
/// zero-initialized timeout counters still exported a minute after it left. The selection is a real client's servers;
/// the clock is a fake one.
/// </summary>
[Trait("Category", "LiveProbe")]
public sealed class EndpointDeparturesTests : IAsyncLifetime
{
    private const string Gone = "127.0.0.1:1";
    private readonly CollectorRegistry _registry = Metrics.NewCustomRegistry();
    private readonly FakeTimeProvider _time = new(DateTimeOffset.Parse("2026-11-27T12:00:00Z", System.Globalization.CultureInfo.InvariantCulture));
    private RedisServer _redis = null!;
    private ConnectionMultiplexer _client = null!;
    private MultiplexerMetrics _metrics = null!;

    public async Task InitializeAsync()
    {
        _redis = await RedisServer.StartAsync();
        _client = await ConnectionMultiplexer.ConnectAsync(_redis.EndPoint);
        _metrics = new MultiplexerMetrics(new MuxWatchMetrics(_registry));
    }

    public async Task DisposeAsync()
    {
        await _client.DisposeAsync();
        await _redis.DisposeAsync();
    }

    [Fact]
    public void A_server_the_client_no_longer_lists_loses_its_series_after_the_grace_and_again_for_a_minute_after()
    {
        var departures = new EndpointDepartures("app", _metrics, _time, NullLogger.Instance);
        var watched = Watched(_redis.EndPoint, Gone);
        var selected = _client.GetServers();

        // Missing from the client's list for less than the grace (the 3.x client's list while it re-reads its cluster): kept.
        departures.Follow(selected, [], [], watched);
        _time.Advance(MissingEndpoints.Grace - TimeSpan.FromSeconds(1));
        departures.Follow(selected, [], [], watched);
        Assert.Equal(2, watched.Count);
        Assert.True(SeriesNaming(Gone) > 0, "a server missing from one list keeps its series within the grace");

        _time.Advance(TimeSpan.FromSeconds(1));
        departures.Follow(selected, [], [], watched);
        Assert.Equal([_redis.EndPoint], watched.Keys);
        Assert.Equal(0, SeriesNaming(Gone));
        Assert.True(SeriesNaming(_redis.EndPoint) > 0, "the server still listed keeps its series");

        // Something in flight when it went writes its series back: gone again at the next sweep, not before.
        _metrics.InitializeEndpoint("app", Gone, Gone, [TimeoutSources.Probe]);
        _time.Advance(EndpointDepartures.SweepInterval / 2);
        departures.Follow(selected, [], [], watched);
        Assert.True(SeriesNaming(Gone) > 0, "swept every interval, not every cycle");
        _time.Advance(EndpointDepartures.SweepInterval / 2);
        departures.Follow(selected, [], [], watched);
        Assert.Equal(0, SeriesNaming(Gone));

        // A minute after the client let go of it, it is forgotten: nothing holds it to write anything back.
        _time.Advance(EndpointDepartures.SweepAfterDropped);
        departures.Follow(selected, [], [], watched);
        _metrics.InitializeEndpoint("app", Gone, Gone, [TimeoutSources.Probe]);
        _time.Advance(EndpointDepartures.SweepInterval);
        departures.Follow(selected, [], [], watched);
        Assert.True(SeriesNaming(Gone) > 0, "no longer swept once forgotten");
    }

    [Fact]
    public async Task A_server_listed_again_within_the_grace_starts_a_new_grace_when_it_goes_missing_again()
    {
        await using var other = await RedisServer.StartAsync();
        await using var client = await ConnectionMultiplexer.ConnectAsync($"{_redis.EndPoint},{other.EndPoint}");
        var both = client.GetServers();
        var without = both.Where(server => EndpointText.Of(server.EndPoint) == _redis.EndPoint).ToArray();
        var departures = new EndpointDepartures("app", _metrics, _time, NullLogger.Instance);
        var watched = Watched(_redis.EndPoint, other.EndPoint);

        departures.Follow(without, [], [], watched);
        _time.Advance(MissingEndpoints.Grace - TimeSpan.FromSeconds(1));
        departures.Follow(both, [], [], watched); // listed again: as many listed as watched, the common case's path
        _time.Advance(TimeSpan.FromSeconds(2));
        departures.Follow(without, [], [], watched);
        Assert.True(SeriesNaming(other.EndPoint) > 0, "its first absence does not count against its second");
        Assert.Equal(2, watched.Count);

        _time.Advance(MissingEndpoints.Grace);
        departures.Follow(without, [], [], watched);
        Assert.Equal(0, SeriesNaming(other.EndPoint));
    }

    [Fact]
    public void A_member_its_cluster_still_lists_is_held_the_longer_grace()
    {
        var departures = new EndpointDepartures("app", _metrics, _time, NullLogger.Instance);
        var watched = Watched(_redis.EndPoint, Gone);
        var selected = _client.GetServers();
        IReadOnlyCollection<string> unheld = [Gone]; // the cluster lists it; the client dropped it for a while (3.x)

        departures.Follow(selected, [], unheld, watched);
        _time.Advance(MissingEndpoints.Grace);
        departures.Follow(selected, [], unheld, watched);
        Assert.True(SeriesNaming(Gone) > 0, "past the short grace, still listed by its cluster: held");

        _time.Advance(MissingEndpoints.ListedGrace - MissingEndpoints.Grace);
        departures.Follow(selected, [], unheld, watched);
        Assert.Equal(0, SeriesNaming(Gone));
    }

    [Fact]
    public void A_node_that_left_its_cluster_goes_at_once()
    {
        var departures = new EndpointDepartures("app", _metrics, _time, NullLogger.Instance);
        var watched = Watched(_redis.EndPoint, Gone);
        departures.Follow(_client.GetServers(), [Gone], [], watched);
        Assert.Equal([_redis.EndPoint], watched.Keys);
        Assert.Equal(0, SeriesNaming(Gone));
    }

    [Fact]
    public void A_node_that_left_its_cluster_is_swept_for_as_long_as_the_client_holds_it()
    {
        var departures = new EndpointDepartures("app", _metrics, _time, NullLogger.Instance);
        var watched = Watched(_redis.EndPoint, Gone);
        var selected = _client.GetServers();
        IReadOnlyCollection<string> left = [Gone];

        departures.Follow(selected, left, [], watched);
        Assert.Equal(0, SeriesNaming(Gone));
        for (var minute = 0; minute < 3; minute++)
        {
            _time.Advance(EndpointDepartures.SweepAfterDropped);
            _metrics.InitializeEndpoint("app", Gone, Gone, [TimeoutSources.Probe]); // a connection event, a PING's failure
            departures.Follow(selected, left, [], watched);
            Assert.Equal(0, SeriesNaming(Gone));
        }

        // Listed by its cluster again: sampled anew, never swept.
        var back = Watched(_redis.EndPoint);
        departures.Follow(selected, [], [], back);
        _metrics.InitializeEndpoint("app", _redis.EndPoint, _redis.EndPoint, [TimeoutSources.Probe]);
        _time.Advance(EndpointDepartures.SweepInterval);
        departures.Follow(selected, [], [], back);
        Assert.True(SeriesNaming(_redis.EndPoint) > 0);
    }

    private ConcurrentDictionary<string, WatchedEndpoint> Watched(params string[] endpoints)
    {
        var watched = new ConcurrentDictionary<string, WatchedEndpoint>(StringComparer.Ordinal);
        foreach (var endpoint in endpoints)
        {
            _metrics.InitializeEndpoint("app", endpoint, endpoint, [TimeoutSources.Probe]);
            watched[endpoint] = new WatchedEndpoint(_metrics, "app", endpoint);
        }

        return watched;
    }

    private int SeriesNaming(string endpoint)
    {
        using var stream = new MemoryStream();
        _registry.CollectAndExportAsTextAsync(stream).GetAwaiter().GetResult();
        return System.Text.Encoding.UTF8.GetString(stream.ToArray()).Split('\n').Count(line => line.Contains($"endpoint=\"{endpoint}\"", StringComparison.Ordinal));
    }
}
