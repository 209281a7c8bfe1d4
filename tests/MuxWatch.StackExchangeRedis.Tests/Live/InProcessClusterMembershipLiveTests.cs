using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Hosting;
using Microsoft.Extensions.Logging;
using MuxWatch.Testing;
using Prometheus;
using StackExchange.Redis;

namespace MuxWatch.StackExchangeRedis.Tests.Live;

/// <summary>
/// An app's own multiplexer on a real Redis Cluster: a node added is polled once the app's client holds it, and a node removed from the cluster (<c>redis-cli --cluster
/// del-node</c>) leaves no series behind, though the app's client, which may hold it for ever (2.x never forgets a server) and which
/// MuxWatch never reconfigures, still holds it: what the cluster's other nodes list decides
/// (polled over MuxWatch's own admin connection).
/// </summary>
[Trait("Category", "LiveProbe")]
[Collection(nameof(RedisClusters))]
public sealed class InProcessClusterMembershipLiveTests : IAsyncLifetime
{
    private readonly CollectorRegistry _registry = Metrics.NewCustomRegistry();
    private RedisCluster _cluster = null!;

    public async Task InitializeAsync() => _cluster = await RedisCluster.StartAsync();

    public async Task DisposeAsync() => await _cluster.DisposeAsync();

    [Fact]
    public async Task A_node_removed_from_the_cluster_leaves_no_series_though_the_apps_client_still_holds_it()
    {
        // As many apps configure a cluster: every node listed, not one seed (from one seed, under this
        // suite's load, the client was seen holding five of the six nodes).
        await using var app = await ConnectionMultiplexer.ConnectAsync(string.Join(',', _cluster.Nodes.Select(n => n.EndPoint)));
        await Eventually.UntilAsync(() => app.GetServers().Count(s => s.IsConnected) == 6, "the app's client connected to the six nodes");
        var builder = Host.CreateApplicationBuilder();
        builder.Logging.ClearProviders();
        builder.Configuration["MuxWatch:ProbeInterval"] = "00:00:00.200";
        builder.Configuration["MuxWatch:PingInterval"] = "00:00:00.200";
        builder.Configuration["MuxWatch:ServerPollInterval"] = "00:00:00.500";

        // Only the app's multiplexer: discovered, the other tests' multiplexers in this process were polled too, and their
        // servers' roles (server-level series, no multiplexer label) were counted as a seventh node (CI, both clients).
        builder.Configuration["MuxWatch:DiscoverMultiplexers"] = "false";
        builder.Services.AddMuxWatch().UseMetricsRegistry(_registry).AddMultiplexer("app", _ => app);
        using var host = builder.Build();
        await host.StartAsync();
        try
        {
            await Eventually.UntilAsync(async () => (await ScrapeAsync()).Samples("muxwatch_server_role").Count(s => s.Value == 1) == 6,
                "the six nodes' roles, polled", TimeSpan.FromSeconds(60));
        }
        catch (TimeoutException ex)
        {
            // What MuxWatch saw instead, for whoever reads the failure.
            var polling = host.Services.GetRequiredService<ServerTimelines>().All.Select(t => $"{t.Endpoint}: {t.Status()}");
            var roles = (await ScrapeAsync()).Samples("muxwatch_server_role").Select(s => $"{s.Labels["endpoint"]}={s.Labels["role"]}:{s.Value}");
            throw new TimeoutException($"{ex.Message}; roles {string.Join(", ", roles)}; polling {string.Join(" | ", polling)}; app servers {string.Join(", ", app.GetServers().Select(s => $"{s.EndPoint} {s.IsConnected}"))}", ex);
        }

        // A node added to the cluster, once the app's own client has re-read it (MuxWatch never makes it):
        // MuxWatch's polling connection, which does not hold the node yet, re-reads its topology and polls it.
        var added = await _cluster.AddNodeAsync();
        await app.ConfigureAsync();
        await Eventually.UntilAsync(async () => (await ScrapeAsync()).Value("muxwatch_server_role", ("endpoint", added.EndPoint), ("role", "primary")) == 1,
            "the added node polled, with its role", TimeSpan.FromSeconds(60));

        RedisServer? removed = null;
        foreach (var node in _cluster.Nodes)
        {
            removed ??= await RedisCluster.RoleOfAsync(node) == "slave" ? node : null; // a primary holding slots cannot be removed
        }

        Assert.NotNull(removed);
        await _cluster.RemoveNodeAsync(removed);
        try
        {
            await Eventually.UntilAsync(async () => !(await ScrapeTextAsync()).Contains($"\"{removed.EndPoint}\"", StringComparison.Ordinal),
                "no series naming the removed node", TimeSpan.FromSeconds(60));
        }
        catch (TimeoutException ex)
        {
            var left = (await ScrapeTextAsync()).Split('\n').Where(l => l.Contains(removed.EndPoint, StringComparison.Ordinal));
            throw new TimeoutException($"{ex.Message}; still: {string.Join(" | ", left.Take(20))}", ex);
        }

        Assert.Contains(app.GetServers(), s => s.EndPoint.ToString() == removed.EndPoint); // the app's client still holds it
        MetricsText metrics = null!;
        try
        {
            await Eventually.UntilAsync(async () =>
            {
                // Each of the five others still watched, with its role. (Not necessarily connected: under load the
                // app's client was seen not connected to a replica it had sent nothing to, and MuxWatch never
                // sends anything through the app's client; muxwatch_connected says so, as it should.)
                metrics = await ScrapeAsync();
                var others = _cluster.Nodes.Append(added).Where(n => n != removed).Select(n => n.EndPoint).Order().ToList();
                return metrics.Samples("muxwatch_connected", ("multiplexer", "app")).Select(s => s.Labels["endpoint"]).Order().SequenceEqual(others)
                    && metrics.Samples("muxwatch_server_role").Where(s => s.Value == 1).Select(s => s.Labels["endpoint"]).Order().SequenceEqual(others);
            }, "the six other nodes (the added one too) watched, each with its role");
        }
        catch (TimeoutException ex)
        {
            var connected = metrics.Samples("muxwatch_connected", ("multiplexer", "app")).Select(s => $"{s.Labels["endpoint"]}:{s.Value}");
            var roles = metrics.Samples("muxwatch_server_role").Select(s => $"{s.Labels["endpoint"]}={s.Labels["role"]}:{s.Value}");
            var views = new List<string>();
            foreach (var node in _cluster.Nodes.Append(added))
            {
                views.Add($"{node.EndPoint} lists [{string.Join(", ", (await node.CommandAsync("CLUSTER", "NODES")).Split('\n', StringSplitOptions.RemoveEmptyEntries).Select(AddressAndFlags))}]");
            }

            throw new TimeoutException(
                $"{ex.Message}; removed {removed.EndPoint}; added {added.EndPoint}; connected {string.Join(", ", connected)}; roles {string.Join(", ", roles)}; "
                + $"app servers {string.Join(", ", app.GetServers().Select(s => $"{s.EndPoint} {s.IsConnected}"))}; {string.Join("; ", views)}", ex);
        }

        await host.StopAsync();
    }

    private async Task<MetricsText> ScrapeAsync() => new(await ScrapeTextAsync());

    private async Task<string> ScrapeTextAsync()
    {
        using var stream = new MemoryStream();
        await _registry.CollectAndExportAsTextAsync(stream);
        return System.Text.Encoding.UTF8.GetString(stream.ToArray());
    }

    /// <summary>One line of <c>CLUSTER NODES</c>, shortened for a failure's account: its address and flags.</summary>
    private static string AddressAndFlags(string line)
    {
        var fields = line.Split(' ');
        return fields.Length > 2 ? $"{fields[1].Split('@')[0]} {fields[2]}" : line;
    }
}
