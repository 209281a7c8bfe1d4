using System.Text.Json;
using MuxWatch.Testing;

namespace MuxWatch.Service.Tests;

/// <summary>
/// The sidecar given one seed of a real Redis Cluster (three primaries, three replicas) probes and polls
/// all six nodes with their roles; a failover, clean (<c>CLUSTER FAILOVER</c> on a replica) or forced (a
/// primary killed), shows as a role change on each node's timeline and in <c>muxwatch_server_role</c>,
/// and a killed node as disconnected. Both client generations.
/// </summary>
[Trait("Category", "LiveProbe")]
public sealed class ClusterFailoverLiveTests : IAsyncLifetime
{
    private RedisCluster _cluster = null!;

    public async Task InitializeAsync() => _cluster = await RedisCluster.StartAsync();

    public async Task DisposeAsync() => await _cluster.DisposeAsync();

    [Fact]
    public async Task A_manual_failover_then_a_killed_primary_show_as_role_changes_on_the_nodes_timelines()
    {
        using var sidecar = InMemorySidecar.Probing(("cluster", _cluster.Seed));
        await Eventually.UntilAsync(async () => Roles(await MetricsText.ScrapeAsync(sidecar.Client)).Count == 6,
            "the six nodes' roles from one seed", TimeSpan.FromSeconds(60));
        var roles = Roles(await MetricsText.ScrapeAsync(sidecar.Client));
        Assert.Equal(3, roles.Values.Count(r => r == "primary"));
        Assert.Equal(3, roles.Values.Count(r => r == "replica"));
        foreach (var node in _cluster.Nodes)
        {
            Assert.Equal(await RedisCluster.RoleOfAsync(node) == "master" ? "primary" : "replica", roles[node.EndPoint]);
        }

        // Each primary's replica, by its endpoint, with how far behind it is.
        await Eventually.UntilAsync(async () =>
        {
            var metrics = await MetricsText.ScrapeAsync(sidecar.Client);
            var lags = metrics.Samples("muxwatch_server_replica_lag_bytes");
            return lags.Count == 3
                && lags.All(l => roles[l.Labels["endpoint"]] == "primary" && roles[l.Labels["replica"]] == "replica")
                && metrics.Samples("muxwatch_server_connected_replicas").All(c => c.Value == 1)
                && metrics.Samples("muxwatch_server_replication_link_up").Count(l => l.Value == 1) == 3;
        }, "each primary's one replica and its lag, each replica's link up");

        // A clean, manual failover: a replica takes over from its primary, which becomes its replica.
        var replica = _cluster.Nodes.First(n => roles[n.EndPoint] == "replica");
        var itsPrimary = await PrimaryOfAsync(replica);
        await replica.CommandAsync("CLUSTER", "FAILOVER");
        await Eventually.UntilAsync(async () =>
        {
            var now = Roles(await MetricsText.ScrapeAsync(sidecar.Client));
            return now.GetValueOrDefault(replica.EndPoint) == "primary" && now.GetValueOrDefault(itsPrimary) == "replica";
        }, "the manual failover in the roles", TimeSpan.FromSeconds(60));
        await AssertRoleChangeAsync(sidecar, replica.EndPoint, "promoted to primary");
        await AssertRoleChangeAsync(sidecar, itsPrimary, "demoted to replica");

        // A forced one: the new primary killed, once its replica (the old primary) has synchronized from it
        // (a replica that never did is not eligible); the cluster promotes that replica.
        await Eventually.UntilAsync(async () =>
            (await MetricsText.ScrapeAsync(sidecar.Client)).Value("muxwatch_server_replication_link_up", ("endpoint", itsPrimary)) == 1,
            "the demoted primary's link to its new primary up", TimeSpan.FromSeconds(60));
        await replica.KillAsync();
        await Eventually.UntilAsync(async () =>
        {
            var metrics = await MetricsText.ScrapeAsync(sidecar.Client);
            return Roles(metrics).GetValueOrDefault(itsPrimary) == "primary"
                && metrics.Value("muxwatch_connected", ("multiplexer", "cluster"), ("endpoint", replica.EndPoint)) == 0;
        }, "the killed primary down, and its replica promoted", TimeSpan.FromSeconds(60));
        await AssertRoleChangeAsync(sidecar, itsPrimary, "promoted to primary");
        await AssertEventAsync(sidecar, itsPrimary, "replication-link-down", "its link to the killed primary down until the promotion");
        var metricsAfter = await MetricsText.ScrapeAsync(sidecar.Client);
        Assert.True(metricsAfter.Value("muxwatch_server_role_changes_total", ("endpoint", itsPrimary)) >= 2);
    }

    private static Dictionary<string, string> Roles(MetricsText metrics) =>
        metrics.Samples("muxwatch_server_role").Where(s => s.Value == 1)
            .GroupBy(s => s.Labels["endpoint"]).ToDictionary(g => g.Key, g => g.Single().Labels["role"]);

    private static Task AssertRoleChangeAsync(InMemorySidecar sidecar, string endpoint, string outcome) =>
        AssertEventAsync(sidecar, endpoint, "role-change", $"a role change ({outcome})", e => e.GetProperty("outcome").GetString() == outcome);

    private static async Task AssertEventAsync(InMemorySidecar sidecar, string endpoint, string kind, string what, Func<JsonElement, bool>? also = null) =>
        await Eventually.UntilAsync(async () =>
        {
            using var events = JsonDocument.Parse(await sidecar.Client.GetStringAsync(new Uri($"/api/events?endpoint={endpoint}", UriKind.Relative)));
            return events.RootElement.GetProperty("endpoints")[0].GetProperty("events").EnumerateArray()
                .Any(e => e.GetProperty("kind").GetString() == kind && (also is null || also(e)));
        }, $"{what} on {endpoint}'s timeline");

    private static async Task<string> PrimaryOfAsync(RedisServer replica)
    {
        var info = await replica.CommandAsync("INFO", "replication");
        string Field(string name) => info.Split('\n').First(l => l.StartsWith(name + ":", StringComparison.Ordinal))[(name.Length + 1)..].Trim();
        return $"{Field("master_host")}:{Field("master_port")}";
    }
}
