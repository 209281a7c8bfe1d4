using System.Text.Json;
using MuxWatch.Testing;
using Xunit.Abstractions;

namespace MuxWatch.Tool.Tests;

/// <summary>
/// The roles-and-failovers dashboard against a real scrape: the MuxWatch service (a process) watches a
/// real six-node cluster given by one seed, Debian's Prometheus scrapes it every second, a replica takes
/// over with <c>CLUSTER FAILOVER</c>, a primary is killed and its replica promoted, and another primary is
/// stopped while its replica may not take over (the cluster down until it returns); every panel and
/// annotation query of the dashboard then returns data, and the failovers are in Prometheus as role changes.
/// </summary>
[Trait("Category", "EndToEnd")]
[TakesMinutes]
[Collection(nameof(RedisClusters))]
public sealed class TopologyDashboardTests(ITestOutputHelper output) : IAsyncLifetime
{
    /// <summary>The dashboard's file name in dashboards/.</summary>
    public const string Dashboard = "muxwatch-topology.json";

    private readonly List<IAsyncDisposable> _running = [];
    private RedisCluster _cluster = null!;
    private ServiceProcess _service = null!;
    private PrometheusApi _prometheus = null!;

    public async Task InitializeAsync()
    {
        try
        {
            _cluster = await RedisCluster.StartAsync();
            _running.Add(_cluster);
            _service = await ServiceProcess.StartAsync(
                "--MuxWatch:ProbeInterval=00:00:00.200", "--MuxWatch:PingInterval=00:00:00.200",
                "--MuxWatch:ServerPollInterval=00:00:00.500", "--MuxWatch:ServerPollTimeout=00:00:01",
                "--MuxWatch:Targets:0:Name=cluster", $"--MuxWatch:Targets:0:ConnectionString={_cluster.Seed},connectTimeout=1000");
            _running.Add(_service);

            var prometheus = await PrometheusProcess.StartAsync($"127.0.0.1:{_service.Port}");
            _running.Add(prometheus);
            _prometheus = prometheus.Api;
        }
        catch
        {
            await DisposeAsync(); // xunit does not dispose a class whose initialization threw
            throw;
        }
    }

    public async Task DisposeAsync()
    {
        foreach (var process in Enumerable.Reverse(_running))
        {
            await process.DisposeAsync();
        }

        _running.Clear();
    }

    [Fact]
    public async Task Every_query_of_the_roles_and_failovers_dashboard_shows_a_real_failover()
    {
        var started = DateTimeOffset.UtcNow;
        await Eventually.UntilAsync(async () => await CountAsync("muxwatch_server_role == 1") == 6
            && await CountAsync("muxwatch_server_replication_link_up == 1") == 3,
            "Prometheus to hold the six nodes' roles and the three replicas' links", TimeSpan.FromSeconds(90));

        // A clean failover, then a forced one: a primary killed once its replica is in sync.
        var roles = new Dictionary<RedisServer, string>();
        foreach (var node in _cluster.Nodes)
        {
            roles[node] = await RedisCluster.RoleOfAsync(node);
        }

        var replica = roles.First(r => r.Value == "slave").Key;
        await replica.CommandAsync("CLUSTER", "FAILOVER");
        await Eventually.UntilAsync(async () => await CountAsync("muxwatch_server_role_changes_total > 0") >= 2,
            "the manual failover's promotion and demotion scraped", TimeSpan.FromSeconds(60));
        RedisServer? killed = null;
        foreach (var node in _cluster.Nodes.Where(n => n != replica))
        {
            killed ??= await RedisCluster.RoleOfAsync(node) == "master" ? node : null; // a primary now, not the one just promoted
        }

        Assert.NotNull(killed);
        await Eventually.UntilAsync(async () => await CountAsync("muxwatch_server_replication_link_up == 1") == 3, "every replica in sync again", TimeSpan.FromSeconds(60));
        await killed.KillAsync();
        await Eventually.UntilAsync(async () => await CountAsync("muxwatch_server_role_changes_total > 0") >= 3
            && await CountAsync($"muxwatch_connected{{endpoint=\"{killed.EndPoint}\"}} == 0") == 1,
            "the forced failover's promotion and the killed node down, scraped", TimeSpan.FromSeconds(90));
        Assert.Equal(3, await CountAsync("muxwatch_server_role{role=\"primary\"} == 1 and on (endpoint) muxwatch_connected == 1"));

        // The cluster down for as long as a primary is gone and its replica may not take over (a failover can
        // be too quick for a scrape to see the cluster down); then the primary returns and the cluster is ok.
        RedisServer? stopped = null;
        RedisServer? itsReplica = null;
        foreach (var node in _cluster.Nodes.Where(n => n != killed))
        {
            if (stopped is null && await RedisCluster.RoleOfAsync(node) == "master")
            {
                foreach (var candidate in _cluster.Nodes.Where(n => n != killed && n != node))
                {
                    if ((await candidate.CommandAsync("INFO", "replication")).Contains($"master_port:{node.Port}", StringComparison.Ordinal))
                    {
                        (stopped, itsReplica) = (node, candidate);
                    }
                }
            }
        }

        Assert.NotNull(stopped);
        Assert.NotNull(itsReplica);
        await itsReplica.CommandAsync("CONFIG", "SET", "cluster-replica-no-failover", "yes");
        await stopped.KillAsync();
        await Eventually.UntilAsync(async () => await CountAsync("muxwatch_server_cluster_state_ok == 0") >= 1,
            "the cluster down, as the nodes see it, scraped", TimeSpan.FromSeconds(60));
        await stopped.RestartAsync();
        await Eventually.UntilAsync(async () => await CountAsync("muxwatch_server_cluster_state_ok == 1 and on (endpoint) muxwatch_connected == 1") == 5,
            "the cluster ok again on the five running nodes once the primary returned, scraped", TimeSpan.FromSeconds(60));

        using var document = JsonDocument.Parse(await File.ReadAllTextAsync(Path.Combine(DashboardQueries.Folder, Dashboard)));
        var outcomes = await new DashboardQueries(_prometheus, started, DateTimeOffset.UtcNow, TimeSpan.FromSeconds(1), "30s").RunAsync(document.RootElement);
        output.WriteLine($"{outcomes.Count} queries of {Dashboard} run against the real scrape");
        Assert.True(outcomes.Count >= 10, $"only {outcomes.Count} queries found");
        var empty = outcomes.Where(o => !o.HasData).Select(o => $"{o.Source}: no data for {o.Expr}").ToList();
        Assert.True(empty.Count == 0, string.Join("\n", empty));
    }

    private async Task<int> CountAsync(string expr) => (await _prometheus.QueryAsync(expr, DateTimeOffset.UtcNow)).GetArrayLength();
}
