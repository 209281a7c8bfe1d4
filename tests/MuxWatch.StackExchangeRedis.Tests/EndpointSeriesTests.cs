using MuxWatch.Model;
using Prometheus;

namespace MuxWatch.StackExchangeRedis.Tests;

/// <summary>
/// The endpoints one probe cycle finds for the first time get their series a family at a time (so that a scrape, which
/// visits a family's series in turn, reads them side by side in memory): exactly the series that each endpoint's own
/// initialization and <see cref="EndpointSeries"/> make, no more and no fewer, for a sidecar's targets and an app's.
/// </summary>
public sealed class EndpointSeriesTests
{
    private static readonly (string Multiplexer, string Endpoint, bool Owned)[] Endpoints =
    [
        ("target-a", "127.0.0.1:7001", true),
        ("target-b", "127.0.0.2:7002", true),
        ("app", "127.0.0.1:7003", false),
        ("app", "127.0.0.1:7004", false),
    ];

    private static IReadOnlyList<string> Sources(bool owned) => owned ? [TimeoutSources.Probe] : [TimeoutSources.FirstChance, TimeoutSources.Probe];

    private static async Task<string> ScrapeAsync(CollectorRegistry registry)
    {
        using var text = new MemoryStream();
        await registry.CollectAndExportAsTextAsync(text);
        return System.Text.Encoding.UTF8.GetString(text.ToArray());
    }

    [Fact]
    public async Task Made_family_by_family_the_endpoints_have_the_series_made_one_endpoint_at_a_time_and_their_sampling_adds_none()
    {
        var oneAtATime = Metrics.NewCustomRegistry();
        var single = new MultiplexerMetrics(new MuxWatchMetrics(oneAtATime));
        foreach (var (multiplexer, endpoint, owned) in Endpoints)
        {
            single.InitializeEndpoint(multiplexer, endpoint, endpoint, Sources(owned));
            _ = new EndpointSeries(single, multiplexer, endpoint, owned);
        }

        var together = Metrics.NewCustomRegistry();
        var batch = new MultiplexerMetrics(new MuxWatchMetrics(together));
        batch.InitializeEndpoints([.. Endpoints.Select(e => (e.Multiplexer, e.Endpoint, e.Endpoint, Sources(e.Owned)))]);
        EndpointSeries.MakeFamilyByFamily(batch, Endpoints);
        var made = await ScrapeAsync(together);

        Assert.Equal(await ScrapeAsync(oneAtATime), made);
        Assert.Contains("muxwatch_pending_unsent{multiplexer=\"target-b\",endpoint=\"127.0.0.2:7002\"} 0", made, StringComparison.Ordinal);
        Assert.DoesNotContain("muxwatch_operations_total{multiplexer=\"target-a\"", made, StringComparison.Ordinal); // a sidecar target's count only MuxWatch's commands
        Assert.Contains("muxwatch_operations_total{multiplexer=\"app\",endpoint=\"127.0.0.1:7004\"} 0", made, StringComparison.Ordinal);

        // What each endpoint's first sampling makes then finds everything made.
        foreach (var (multiplexer, endpoint, owned) in Endpoints)
        {
            batch.InitializeEndpoint(multiplexer, endpoint, endpoint, Sources(owned));
            _ = new EndpointSeries(batch, multiplexer, endpoint, owned);
        }

        Assert.Equal(made, await ScrapeAsync(together));
    }
}
