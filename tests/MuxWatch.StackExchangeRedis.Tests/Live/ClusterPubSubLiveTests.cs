using System.Globalization;
using System.Text.RegularExpressions;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Hosting;
using Microsoft.Extensions.Logging;
using MuxWatch.Testing;
using Prometheus;
using StackExchange.Redis;

namespace MuxWatch.StackExchangeRedis.Tests.Live;

/// <summary>
/// Pub/sub lag on a real Redis Cluster (three primaries, three replicas): the client routes MuxWatch's
/// channel to one node, and MuxWatch says which (the <c>endpoint</c> label is the node whose
/// <c>PUBSUB CHANNELS</c> lists the channel) and publishes each probe message once, never to every node
/// (the nodes' <c>cmdstat_publish</c> calls land on one node, no more than the probe messages sent).
/// </summary>
[Trait("Category", "LiveProbe")]
[Collection(nameof(RedisClusters))]
public sealed partial class ClusterPubSubLiveTests : IAsyncLifetime
{
    private readonly CollectorRegistry _registry = Metrics.NewCustomRegistry();
    private RedisCluster _cluster = null!;

    public async Task InitializeAsync() => _cluster = await RedisCluster.StartAsync();

    public async Task DisposeAsync() => await _cluster.DisposeAsync();

    [Fact]
    public async Task The_channel_lives_on_one_node_the_label_names_it_and_each_probe_message_is_published_once()
    {
        await using var app = await ConnectionMultiplexer.ConnectAsync(_cluster.Seed);
        var builder = Host.CreateApplicationBuilder();
        builder.Logging.ClearProviders();
        builder.Configuration["MuxWatch:ProbeInterval"] = "00:00:00.100";
        builder.Configuration["MuxWatch:PingInterval"] = "00:00:00.100";
        builder.Configuration["MuxWatch:ServerPolling"] = "false";
        builder.Services.AddMuxWatch().UseMetricsRegistry(_registry).AddMultiplexer("cluster", _ => app).MeasurePubSubLag("cluster");
        var baseline = await PublishCallsByNodeAsync();
        MetricsText metrics;
        List<string> holding;
        using (var host = builder.Build())
        {
            await host.StartAsync();
            await Eventually.UntilAsync(async () => (await ScrapeAsync()).Samples("muxwatch_pubsub_delivery_seconds_count").Sum(s => s.Value) >= 10,
                "ten probe messages delivered through the cluster");
            metrics = await ScrapeAsync();
            holding = await NodesHoldingTheChannelAsync();
            await host.StopAsync(); // its series go with it; a cycle or two more may publish before it stops
        }

        var delivery = Assert.Single(metrics.Samples("muxwatch_pubsub_delivery_seconds_count"));
        var endpoint = delivery.Labels["endpoint"];
        var sent = delivery.Value + (metrics.Value("muxwatch_pubsub_undelivered", ("multiplexer", "cluster"), ("endpoint", endpoint)) ?? 0);
        Assert.Contains(endpoint, _cluster.Nodes.Select(n => n.EndPoint));

        Assert.Equal([endpoint], holding); // the node the label names is the one holding the subscription

        // Once each, to one node (the cluster forwards a message between nodes over its bus, which cmdstat
        // does not count): published to every node, each node would have seen as many calls as were sent.
        var after = await PublishCallsByNodeAsync();
        var calls = after.Where(n => n.Value > baseline.GetValueOrDefault(n.Key)).ToDictionary(n => n.Key, n => n.Value - baseline.GetValueOrDefault(n.Key));
        Assert.Single(calls);
        Assert.InRange(calls.Values.Single(), 1, sent + 20);
    }

    private async Task<List<string>> NodesHoldingTheChannelAsync()
    {
        var holding = new List<string>();
        foreach (var node in _cluster.Nodes)
        {
            if ((await node.CommandAsync("PUBSUB", "CHANNELS", "__muxwatch:pubsub-lag:*")).Length > 0)
            {
                holding.Add(node.EndPoint);
            }
        }

        return holding;
    }

    private async Task<MetricsText> ScrapeAsync()
    {
        using var stream = new MemoryStream();
        await _registry.CollectAndExportAsTextAsync(stream);
        return new MetricsText(System.Text.Encoding.UTF8.GetString(stream.ToArray()));
    }

    private async Task<Dictionary<string, long>> PublishCallsByNodeAsync()
    {
        var calls = new Dictionary<string, long>();
        foreach (var node in _cluster.Nodes)
        {
            // Read until the reply is the stats section: an empty or cut reply must not read as no calls.
            string stats = string.Empty;
            await Eventually.UntilAsync(async () => (stats = await node.CommandAsync("INFO", "commandstats")).Contains("# Commandstats", StringComparison.Ordinal),
                $"INFO commandstats from {node.EndPoint}");
            var match = PublishCalls().Match(stats);
            calls[node.EndPoint] = match.Success ? long.Parse(match.Groups[1].Value, CultureInfo.InvariantCulture) : 0;
        }

        return calls;
    }

    [GeneratedRegex(@"cmdstat_publish:calls=(\d+)")]
    private static partial Regex PublishCalls();
}
