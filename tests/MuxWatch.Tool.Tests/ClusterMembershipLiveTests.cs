using System.Text.Json;
using MuxWatch.StackExchangeRedis;
using MuxWatch.Testing;

namespace MuxWatch.Tool.Tests;

/// <summary>
/// The sidecar follows a cluster's membership without a restart: a node added to the cluster
/// (<c>redis-cli --cluster add-node</c>) is probed and polled with its role within a few cycles, and a node
/// removed from it (<c>del-node</c>: the others forget it, it keeps running alone) leaves no series behind,
/// though the client may still hold it (2.x never forgets a server). The others keep their series throughout, though
/// the 3.x client's list of servers leaves one out for a moment while it re-reads the cluster. Both client generations.
/// </summary>
[Trait("Category", "LiveProbe")]
[Collection(nameof(RedisClusters))]
public sealed class ClusterMembershipLiveTests : IAsyncLifetime
{
    private RedisCluster _cluster = null!;

    public async Task InitializeAsync() => _cluster = await RedisCluster.StartAsync();

    public async Task DisposeAsync() => await _cluster.DisposeAsync();

    [Fact]
    public async Task A_node_added_to_the_cluster_is_watched_and_a_node_removed_leaves_no_series()
    {
        using var sidecar = InMemorySidecar.Probing(("cluster", _cluster.Seed));
        await Eventually.UntilAsync(async () => RolesOf(await MetricsText.ScrapeAsync(sidecar.Client)).Count == 6,
            "the six nodes' roles from one seed", TimeSpan.FromSeconds(60));

        // The six keep their series throughout: seen in every scrape below (the 3.x client's list of servers left one out for
        // a moment while it re-read the cluster, and MuxWatch once let go of that node's series and history with it).
        var gaps = new List<string>();
        void NoteGaps(MetricsText metrics)
        {
            var roles = RolesOf(metrics);
            gaps.AddRange(_cluster.Nodes.Where(node => !roles.ContainsKey(node.EndPoint)).Select(node => $"{DateTimeOffset.UtcNow:HH:mm:ss.fff} {node.EndPoint}"));
        }

        var added = await _cluster.AddNodeAsync();
        await SayingWhatWasSeenAsync(sidecar, () => Eventually.UntilAsync(async () =>
        {
            var metrics = await MetricsText.ScrapeAsync(sidecar.Client);
            NoteGaps(metrics);
            return RolesOf(metrics).GetValueOrDefault(added.EndPoint) == "primary"
                && metrics.Value("muxwatch_connected", ("multiplexer", "cluster"), ("endpoint", added.EndPoint)) == 1
                && metrics.Value("muxwatch_server_cluster_state_ok", ("endpoint", added.EndPoint)) == 1
                && metrics.Samples("muxwatch_server_cluster_known_nodes").All(s => s.Value == 7);
            // Within two of the sidecar's re-reads of the cluster (ServerSelection.ReconfigureEvery, 30 s), with slack: one
            // may fall while the new node is still joining (a full test run on a loaded machine waited past 60 s once).
        }, "the added node probed and polled, with its role, and every node knowing seven", 2 * ServerSelection.ReconfigureEvery + TimeSpan.FromSeconds(30)),
            () => $"re-reads asked: {string.Join(" | ", sidecar.Log.Lines.Select(line => line.Text).Where(text => text.Contains("re-read the cluster", StringComparison.Ordinal)))}");
        Assert.Contains(added.EndPoint, await TargetServersAsync(sidecar));

        await _cluster.RemoveNodeAsync(added);
        Assert.True(await added.AnswersPingAsync(), "del-node leaves the removed node running, alone");
        var left = "";
        await SayingWhatWasSeenAsync(sidecar, () => Eventually.UntilAsync(async () =>
        {
            var metrics = await MetricsText.ScrapeAsync(sidecar.Client);
            NoteGaps(metrics);
            left = string.Join("; ", metrics.Text.Split('\n').Where(line => line.Contains($"\"{added.EndPoint}\"", StringComparison.Ordinal)).Take(10));
            return left.Length == 0;
        }, "no series left naming the removed node", TimeSpan.FromSeconds(60)), () => $"series left: {left}");

        var after = await MetricsText.ScrapeAsync(sidecar.Client);
        var roles = RolesOf(after);
        var seen = $"roles {string.Join(", ", roles)}; connected {string.Join(", ", after.Samples("muxwatch_connected").Select(s => $"{s.Labels["endpoint"]}={s.Value}"))}; "
            + $"log: {string.Join(" | ", sidecar.Log.Lines.Select(line => line.Text).Where(text => text.Contains("cluster", StringComparison.Ordinal)))}";
        Assert.True(roles.Count == 6, $"the six nodes' roles after the removal; {seen}");
        Assert.True(gaps.Count == 0, $"the six nodes' roles in every scrape; missing: {string.Join(", ", gaps.Take(10))}; {seen}");
        Assert.All(_cluster.Nodes, node => Assert.True(after.Value("muxwatch_connected", ("multiplexer", "cluster"), ("endpoint", node.EndPoint)) == 1, $"{node.EndPoint} connected; {seen}"));
        Assert.DoesNotContain(added.EndPoint, await TargetServersAsync(sidecar));
        using var events = JsonDocument.Parse(await sidecar.Client.GetStringAsync(new Uri("/api/events", UriKind.Relative)));
        Assert.DoesNotContain(events.RootElement.GetProperty("endpoints").EnumerateArray(), e => e.GetProperty("endpoint").GetString() == added.EndPoint);
    }

    /// <summary>What the sidecar saw instead, for whoever reads the failure.</summary>
    private static async Task SayingWhatWasSeenAsync(InMemorySidecar sidecar, Func<Task> wait, Func<string>? more = null)
    {
        try
        {
            await wait();
        }
        catch (TimeoutException ex)
        {
            var metrics = await MetricsText.ScrapeAsync(sidecar.Client);
            throw new TimeoutException(
                $"{ex.Message}; {more?.Invoke()}; roles {string.Join(", ", RolesOf(metrics))}; known nodes {string.Join(", ", metrics.Samples("muxwatch_server_cluster_known_nodes").Select(s => s.Value))}; "
                + $"targets {await sidecar.Client.GetStringAsync(new Uri("/api/targets", UriKind.Relative))}", ex);
        }
    }

    private static Dictionary<string, string> RolesOf(MetricsText metrics) =>
        metrics.Samples("muxwatch_server_role").Where(s => s.Value == 1)
            .GroupBy(s => s.Labels["endpoint"]).ToDictionary(g => g.Key, g => g.Single().Labels["role"]);

    private static async Task<List<string>> TargetServersAsync(InMemorySidecar sidecar)
    {
        using var targets = JsonDocument.Parse(await sidecar.Client.GetStringAsync(new Uri("/api/targets", UriKind.Relative)));
        return [.. targets.RootElement.GetProperty("targets")[0].GetProperty("servers").EnumerateArray().Select(s => s.GetProperty("endpoint").GetString()!)];
    }
}
