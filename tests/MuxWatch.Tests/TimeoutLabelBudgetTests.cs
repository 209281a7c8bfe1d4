using MuxWatch.Testing;
using Prometheus;

namespace MuxWatch.Tests;

/// <summary>
/// Issue 26, #1: anyone who could post used up the endpoint labels shared with MuxWatch's own probes for
/// ever, and the spike alert, grouped by endpoint, then paged about <c>other</c>. Posted endpoints now have
/// a budget of their own whose places age out; a watched endpoint always keeps its label.
/// </summary>
public sealed class TimeoutLabelBudgetTests
{
    private static readonly DateTimeOffset T0 = new(2026, 11, 23, 12, 0, 0, TimeSpan.Zero);

    private readonly CollectorRegistry _registry = Metrics.NewCustomRegistry();
    private readonly ManualTimeProvider _clock = new(T0);
    private readonly TimeoutPipeline _pipeline;

    public TimeoutLabelBudgetTests() =>
        _pipeline = new TimeoutPipeline([new MessageRulesStep()], [new TimeoutMetricsSink(new MuxWatchMetrics(_registry), _clock)]);

    private void Submit(string source, string endpoint, string? multiplexer = null) =>
        _pipeline.Submit(new TimeoutObservation(_clock.GetUtcNow(), source, TimeoutMessageReader.Read($"Timeout performing GET k (500ms), qu: 0, qs: 3, in: 0, serverEndpoint: {endpoint}")) { Multiplexer = multiplexer });

    private MetricsText Scrape()
    {
        using var stream = new MemoryStream();
        _registry.CollectAndExportAsTextAsync(stream).GetAwaiter().GetResult();
        return new MetricsText(System.Text.Encoding.UTF8.GetString(stream.ToArray()));
    }

    [Fact]
    public void Posts_cannot_push_a_watched_endpoint_into_other_and_their_places_age_out()
    {
        for (var i = 0; i < MuxWatchMetrics.MaxTimeoutEndpoints + 50; i++)
        {
            Submit(TimeoutSources.Api, $"10.66.{i / 250}.{i % 250}:6379");
        }

        Submit(TimeoutSources.Probe, "127.0.0.1:6379", "cache");
        Submit(TimeoutSources.FirstChance, "127.0.0.1:6379", "cache");

        var metrics = Scrape();
        Assert.Equal(2, metrics.Value("muxwatch_timeouts_total", ("multiplexer", "cache"), ("endpoint", "127.0.0.1:6379")));
        Assert.Equal(50, metrics.Value("muxwatch_timeouts_total", ("endpoint", "other")));
        Assert.Equal(MuxWatchMetrics.MaxTimeoutEndpoints + 1, metrics.Samples("muxwatch_timeouts_total", ("multiplexer", "unknown")).Select(s => s.Labels["endpoint"]).Distinct().Count());

        // An hour later a new posted endpoint takes the place of an idle one; the idle one's series go.
        _clock.Advance(MuxWatchMetrics.PostedEndpointIdle + TimeSpan.FromSeconds(1));
        Submit(TimeoutSources.Api, "10.77.0.1:6379");

        var later = Scrape();
        Assert.Equal(1, later.Value("muxwatch_timeouts_total", ("endpoint", "10.77.0.1:6379")));
        Assert.Equal(MuxWatchMetrics.MaxTimeoutEndpoints, later.Samples("muxwatch_timeouts_total", ("multiplexer", "unknown")).Select(s => s.Labels["endpoint"]).Count(e => e != "other"));
        Assert.Null(later.Value("muxwatch_last_timeout_timestamp_seconds", ("endpoint", "10.66.0.0:6379")));
    }
}
