using System.Text.Json;
using MuxWatch.Testing;

namespace MuxWatch.Tool.Tests;

/// <summary>
/// A sidecar target that is a Sentinel service (<c>sentinel1,sentinel2,sentinel3,serviceName=...</c>)
/// against a real primary, replica and three Sentinels: the nodes behind the service are probed and
/// polled with their roles, and <c>SENTINEL FAILOVER</c> shows as a role change on both. Both client generations.
/// </summary>
[Trait("Category", "LiveProbe")]
public sealed class SentinelFailoverLiveTests : IAsyncLifetime
{
    private RedisSentinels _sentinels = null!;

    public async Task InitializeAsync() => _sentinels = await RedisSentinels.StartAsync();

    public async Task DisposeAsync() => await _sentinels.DisposeAsync();

    [Fact]
    public async Task The_nodes_behind_a_sentinel_service_are_watched_and_a_sentinel_failover_shows_on_both()
    {
        using var sidecar = InMemorySidecar.Probing(("sentinel", _sentinels.ConfigurationString));
        var (primary, replica) = (_sentinels.Primary.EndPoint, _sentinels.Replica.EndPoint);
        await Eventually.UntilAsync(async () =>
        {
            var metrics = await MetricsText.ScrapeAsync(sidecar.Client);
            return metrics.Value("muxwatch_server_role", ("endpoint", primary), ("role", "primary")) == 1
                && metrics.Value("muxwatch_server_role", ("endpoint", replica), ("role", "replica")) == 1;
        }, "the service's primary and replica polled with their roles", TimeSpan.FromSeconds(60));

        await RedisSentinels.SentinelAsync(_sentinels.SentinelPorts[0], "SENTINEL", "FAILOVER", RedisSentinels.ServiceName);
        await Eventually.UntilAsync(async () =>
        {
            var metrics = await MetricsText.ScrapeAsync(sidecar.Client);
            return metrics.Value("muxwatch_server_role", ("endpoint", replica), ("role", "primary")) == 1
                && metrics.Value("muxwatch_server_role", ("endpoint", primary), ("role", "replica")) == 1;
        }, "the Sentinel failover in the roles", TimeSpan.FromSeconds(60));
        await AssertRoleChangeAsync(sidecar, replica, "promoted to primary");
        await AssertRoleChangeAsync(sidecar, primary, "demoted to replica");
    }

    private static async Task AssertRoleChangeAsync(InMemorySidecar sidecar, string endpoint, string outcome) =>
        await Eventually.UntilAsync(async () =>
        {
            using var events = JsonDocument.Parse(await sidecar.Client.GetStringAsync(new Uri($"/api/events?endpoint={endpoint}", UriKind.Relative)));
            return events.RootElement.GetProperty("endpoints")[0].GetProperty("events").EnumerateArray()
                .Any(e => e.GetProperty("kind").GetString() == "role-change" && e.GetProperty("outcome").GetString() == outcome);
        }, $"a role change ({outcome}) on {endpoint}'s timeline");
}
