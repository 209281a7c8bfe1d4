using System.Globalization;
using System.Text.Json;
using MuxWatch.Testing;

namespace MuxWatch.Tool.Tests;

/// <summary>
/// A primary and its replica, both real redis-servers, watched by the sidecar: a replica that asks for
/// a full resynchronization makes its primary fork for the RDB it sends, which shows on the primary's
/// timeline (a fork, the save), while the replica's shows the resync itself (<c>full-sync</c>) and its
/// replication metrics say it. Both client generations.
/// </summary>
[Trait("Category", "LiveProbe")]
public sealed class FullResyncLiveTests : IAsyncLifetime
{
    private RedisServer _primary = null!;
    private RedisServer _replica = null!;

    public async Task InitializeAsync()
    {
        _primary = await RedisServer.StartAsync("--repl-diskless-sync", "no");
        _replica = await RedisServer.StartAsync("--replicaof", "127.0.0.1", _primary.Port.ToString(CultureInfo.InvariantCulture));
    }

    public async Task DisposeAsync()
    {
        await _replica.DisposeAsync();
        await _primary.DisposeAsync();
    }

    [Fact]
    public async Task A_full_resync_is_a_fork_on_the_primarys_timeline_and_a_full_sync_on_the_replicas()
    {
        using var sidecar = InMemorySidecar.Probing(("primary", _primary.EndPoint), ("replica", _replica.EndPoint));
        await Eventually.UntilAsync(async () =>
        {
            var metrics = await MetricsText.ScrapeAsync(sidecar.Client);
            return metrics.Value("muxwatch_server_role", ("endpoint", _primary.EndPoint), ("role", "primary")) == 1
                && metrics.Value("muxwatch_server_role", ("endpoint", _replica.EndPoint), ("role", "replica")) == 1
                && metrics.Value("muxwatch_server_replication_link_up", ("endpoint", _replica.EndPoint)) == 1
                && metrics.Value("muxwatch_server_connected_replicas", ("endpoint", _primary.EndPoint)) == 1;
        }, "the primary and its replica, linked");

        // Enough data, saved slowly, that the resync lasts a few polls; a new replication id forces a full one.
        await _primary.CommandAsync("DEBUG", "POPULATE", "20000");
        await _primary.CommandAsync("CONFIG", "SET", "rdb-key-save-delay", "100");
        await _replica.CommandAsync("REPLICAOF", "NO", "ONE");
        await _replica.CommandAsync("REPLICAOF", "127.0.0.1", _primary.Port.ToString(CultureInfo.InvariantCulture));

        await Eventually.UntilAsync(async () => await HasEventAsync(sidecar, _primary.EndPoint, "fork") && await HasEventAsync(sidecar, _primary.EndPoint, "bgsave"),
            "the primary's fork and save for the resync on its timeline", TimeSpan.FromSeconds(60));
        await Eventually.UntilAsync(() => HasEventAsync(sidecar, _replica.EndPoint, "full-sync"),
            "the resync on the replica's timeline", TimeSpan.FromSeconds(60));
        await _primary.CommandAsync("CONFIG", "SET", "rdb-key-save-delay", "0");
        await Eventually.UntilAsync(async () =>
            (await MetricsText.ScrapeAsync(sidecar.Client)).Value("muxwatch_server_replication_link_up", ("endpoint", _replica.EndPoint)) == 1,
            "the replica linked again once synchronized", TimeSpan.FromSeconds(120));
    }

    private static async Task<bool> HasEventAsync(InMemorySidecar sidecar, string endpoint, string kind)
    {
        using var events = JsonDocument.Parse(await sidecar.Client.GetStringAsync(new Uri($"/api/events?endpoint={endpoint}", UriKind.Relative)));
        return events.RootElement.GetProperty("endpoints")[0].GetProperty("events").EnumerateArray().Any(e => e.GetProperty("kind").GetString() == kind);
    }
}
