using MuxWatch.Testing;

namespace MuxWatch.Tests;

/// <summary>
/// One incident per spike: the timeouts of one endpoint whose waits overlap (or follow within the quiet time) are one
/// incident, whatever their number; a quiet endpoint's incident ends; another endpoint is another incident; counts by
/// final cause; bounded whatever floods in. Real messages through the real pipeline, on a driven clock.
/// </summary>
public sealed class IncidentTests
{
    private static readonly DateTimeOffset T0 = new(2026, 11, 27, 3, 0, 0, TimeSpan.Zero);

    private readonly ManualTimeProvider _clock = new(T0);
    private readonly RecentIncidents _incidents;
    private readonly TimeoutPipeline _pipeline;

    public IncidentTests()
    {
        _incidents = new RecentIncidents(_clock);
        _pipeline = new TimeoutPipeline([new MessageRulesStep()], [_incidents]);
    }

    /// <summary>A starved-pool timeout (5 s sync wait) to <paramref name="endpoint"/>, raised now.</summary>
    private void Starved(string endpoint) => _pipeline.Submit(new TimeoutObservation(_clock.GetUtcNow(), TimeoutSources.Api, TimeoutMessageReader.Read(
        $"Timeout performing GET key (5000ms), inst: 2, qu: 0, qs: 6, in: 0, serverEndpoint: {endpoint}, IOCP: (Busy=6,Free=994,Min=4,Max=1000), WORKER: (Busy=40,Free=32727,Min=8,Max=32767), v: 2.6.90.64945")));

    [Fact]
    public void A_burst_is_one_incident_that_ends_once_its_endpoint_is_quiet_and_the_next_burst_is_another()
    {
        for (var i = 0; i < 40; i++)
        {
            Starved("10.0.0.1:6379");
            _clock.Advance(TimeSpan.FromMilliseconds(250)); // 10 s of timeouts
        }

        var burst = Assert.Single(_incidents.Newest());
        Assert.Equal((40, 0, true), (burst.Timeouts, burst.Settling, burst.Open));
        Assert.Equal(T0 - TimeSpan.FromSeconds(5), burst.Start); // its first request started waiting 5 s before it timed out
        Assert.Equal(TimeoutCause.ThreadPoolStarvation, burst.Cause);
        Assert.Equal(40, burst.ByCause["thread-pool-starvation"]);
        Assert.StartsWith("Threads were busy above the pool minimum", burst.FirstStep, StringComparison.Ordinal);
        Assert.Equal(40, burst.TimeoutIds.Count);

        _clock.Advance(RecentIncidents.Quiet + TimeSpan.FromSeconds(1));
        var ended = Assert.Single(_incidents.Newest());
        Assert.False(ended.Open);
        Assert.Equal(ended.LastTimeout, ended.End);

        _clock.Advance(TimeSpan.FromMinutes(5));
        Starved("10.0.0.1:6379");
        Assert.Equal([2, 1], _incidents.Newest().Select(i => i.Id));
        Assert.Equal(1, _incidents.Newest()[0].Timeouts);
    }

    [Fact]
    public void Two_endpoints_failing_at_once_are_two_incidents_and_one_can_be_asked_for()
    {
        Starved("10.0.0.1:6379");
        Starved("10.0.0.2:6379");
        Starved("10.0.0.1:6379");

        Assert.Equal(2, _incidents.Newest().Count);
        Assert.Equal(2, Assert.Single(_incidents.Newest(endpoint: "10.0.0.1:6379")).Timeouts);
        Assert.Equal("10.0.0.2:6379", _incidents.Find(2)!.Endpoint);
        Assert.Null(_incidents.Find(99));
    }

    [Fact]
    public void A_flood_on_thousands_of_endpoints_keeps_the_newest_incidents_and_says_how_many_went()
    {
        for (var i = 0; i < 5000; i++)
        {
            Starved($"10.{i / 250}.{i % 250}.1:6379");
        }

        var kept = _incidents.Newest(int.MaxValue);
        Assert.Equal(RecentIncidents.MaxIncidents, kept.Count);
        Assert.Equal(5000 - RecentIncidents.MaxIncidents, _incidents.Dropped);
        Assert.Equal("10.19.249.1:6379", kept[0].Endpoint); // the newest first

        // One endpoint's flood is one incident: its ids, not its timeouts, are kept, up to a bound.
        for (var i = 0; i < 3000; i++)
        {
            Starved("10.99.0.1:6379");
        }

        var one = _incidents.Newest(1)[0];
        Assert.Equal(3000, one.Timeouts);
        Assert.Equal(RecentIncidents.MaxTimeoutIds, one.TimeoutIds.Count);
    }
}
