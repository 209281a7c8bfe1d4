using System.Text.Json;
using MuxWatch.Testing;

namespace MuxWatch.Tool.Tests;

/// <summary>
/// The sidecar catching a stall shorter than its probe loop's interval. A class of its own (not with
/// <see cref="SidecarStallLiveTests"/>): it waits on a 10 s loop, and beside the others rather than after them.
/// </summary>
[Trait("Category", "LiveProbe")]
public sealed class SidecarShortStallLiveTests : IAsyncLifetime
{
    private RedisServer _redis = null!;

    public SidecarShortStallLiveTests() => TestThreadPool.EnsureRoomy();

    public async Task InitializeAsync() => _redis = await RedisServer.StartAsync();

    public async Task DisposeAsync() => await _redis.DisposeAsync();

    /// <summary>
    /// A stall shorter than the probe loop's interval is still recorded: the witness finds the server silent and asks
    /// for a cycle at once, whose PING (a silent server's is sent every cycle) is what times out. With a 10 s interval
    /// and no PING of the calm cadence, a 3 s stall is caught only by that request (without it, none in four runs; at the
    /// sidecar's 1 s interval, a CI run's page test once waited in vain for such a stall's timeouts).
    /// </summary>
    [Fact]
    public async Task A_stall_shorter_than_the_probe_interval_is_recorded_by_the_ping_the_witness_asks_for()
    {
        using var sidecar = InMemorySidecar.Probing(
            [("brief", $"{_redis.EndPoint},asyncTimeout=500,syncTimeout=500")],
            [("MuxWatch:ProbeInterval", "00:00:10"), ("MuxWatch:PingInterval", "00:10:00")]);
        await Eventually.UntilAsync(async () => (await MetricsText.ScrapeAsync(sidecar.Client)).Value("muxwatch_server_last_poll_success_timestamp_seconds") > 0
            && (await sidecar.Client.GetStringAsync(new Uri("/api/targets", UriKind.Relative))).Contains("\"witnessAnsweredAt\":\"", StringComparison.Ordinal),
            "the first complete poll, and the witness answered", TimeSpan.FromSeconds(45));

        var stalled = DateTimeOffset.UtcNow;
        await _redis.CommandAsClientAsync("nightly-export", "DEBUG", "SLEEP", "3");
        List<JsonElement> recorded = [];
        await Eventually.UntilAsync(async () =>
        {
            using var listed = JsonDocument.Parse(await sidecar.Client.GetStringAsync(new Uri("/api/timeouts?limit=1000", UriKind.Relative)));
            recorded = [.. listed.RootElement.GetProperty("timeouts").EnumerateArray().Where(t => t.GetProperty("multiplexer").GetString() == "brief").Select(t => t.Clone())];
            return recorded.Count > 0 && recorded.All(t => t.GetProperty("settled").GetBoolean());
        }, "the stall's timeouts recorded and settled", TimeSpan.FromSeconds(60), () => $"{recorded.Count} timeout(s); the sidecar's log: {sidecar.LogText}");

        Assert.All(recorded, t =>
        {
            Assert.Equal("probe", t.GetProperty("source").GetString());
            Assert.True(t.GetProperty("cause").GetString() == "slow-command", t.ToString());
            Assert.True(t.GetProperty("waitingSince").GetDateTimeOffset() >= stalled.AddSeconds(-0.5), t.ToString()); // the stall's, not an earlier PING's
        });
    }
}
