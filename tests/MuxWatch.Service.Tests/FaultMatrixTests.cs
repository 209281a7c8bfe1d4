using System.Text.Json;
using MuxWatch.Testing;
using Xunit.Abstractions;

namespace MuxWatch.Service.Tests;

/// <summary>
/// The probe's fault matrix: one target faulty in a given way next to a healthy one. Throughout,
/// <c>/metrics</c> and <c>/healthz</c> answer, no probe cycle runs longer than a second (the loop never
/// waits on the network), the healthy target keeps being probed on time, the fault shows in the
/// metrics and <c>/api/targets</c>, and where the fault can end, recovery is seen.
/// </summary>
public sealed class FaultMatrixTests(ITestOutputHelper output) : IAsyncLifetime
{
    private readonly RedisFaults _faults = new();
    private RedisServer _healthy = null!;

    public async Task InitializeAsync() => _healthy = await RedisServer.StartAsync();

    public async Task DisposeAsync()
    {
        await _faults.DisposeAsync();
        await _healthy.DisposeAsync();
    }

    public static TheoryData<string> Faults() => [.. RedisFaults.Names];

    [Theory]
    [MemberData(nameof(Faults))]
    public async Task A_faulty_endpoint_shows_costs_the_others_nothing_and_recovers(string fault)
    {
        var (connectionString, stall, recover) = await _faults.SetUpAsync(fault);
        await using var sidecar = InMemorySidecar.Probing(("healthy", _healthy.EndPoint), ("faulty", $"{connectionString},connectTimeout=1000,asyncTimeout=500,syncTimeout=500"));
        if (stall is not null)
        {
            await Eventually.UntilAsync(async () => (await MetricsText.ScrapeAsync(sidecar.Client)).Value("muxwatch_ping_seconds_count", ("multiplexer", "faulty")) >= 1, "the faulty target's first PING");
            _ = Task.Run(stall);
        }

        // During the fault: everything answers, the healthy target is probed on time, the fault shows.
        var healthyProbes = new HashSet<double>();
        await Eventually.UntilAsync(async () =>
        {
            Assert.True((await sidecar.Client.GetAsync(new Uri("/healthz", UriKind.Relative))).IsSuccessStatusCode, "/healthz failed during the fault");
            var metrics = await MetricsText.ScrapeAsync(sidecar.Client);
            AssertNoSlowCycle(metrics);
            if (metrics.Value("muxwatch_last_probe_success_timestamp_seconds", ("multiplexer", "healthy")) is { } last)
            {
                healthyProbes.Add(last);
            }

            return healthyProbes.Count >= 5 && await FaultShowsAsync(sidecar, metrics, stall is not null);
        }, $"{fault}: the fault to show while the healthy target is probed on");

        if (recover is null)
        {
            output.WriteLine($"{fault}: shown, the other target probed {healthyProbes.Count} times meanwhile; no recovery to wait for");
            return;
        }

        await recover();
        var pingsAfter = (await MetricsText.ScrapeAsync(sidecar.Client)).Value("muxwatch_ping_seconds_count", ("multiplexer", "faulty")) ?? 0;
        await Eventually.UntilAsync(async () =>
        {
            var metrics = await MetricsText.ScrapeAsync(sidecar.Client);
            AssertNoSlowCycle(metrics);
            return metrics.Value("muxwatch_connected", ("multiplexer", "faulty")) == 1
                && metrics.Value("muxwatch_ping_seconds_count", ("multiplexer", "faulty")) > pingsAfter + 2;
        }, $"{fault}: the faulty target to recover", TimeSpan.FromSeconds(60));
        output.WriteLine($"{fault}: shown, then recovered");
    }

    [Fact]
    public async Task Two_hundred_endpoints_half_of_them_dead_keep_the_cycle_short_and_the_live_ones_on_time()
    {
        var targets = Enumerable.Range(0, 200)
            .Select(i => ($"t{i:000}", i % 2 == 0 ? _healthy.EndPoint : $"127.0.0.1:{FreePort.Next()},connectTimeout=1000"))
            .ToArray();
        await using var sidecar = InMemorySidecar.Probing(targets);

        var live = new HashSet<double>();
        await Eventually.UntilAsync(async () =>
        {
            var metrics = await MetricsText.ScrapeAsync(sidecar.Client);
            AssertNoSlowCycle(metrics);
            if (metrics.Value("muxwatch_last_probe_success_timestamp_seconds", ("multiplexer", "t198")) is { } last)
            {
                live.Add(last);
            }

            return live.Count >= 5 && metrics.Samples("muxwatch_connected").Count(s => s.Value == 1) >= 100;
        }, "the hundred live endpoints probed on time", TimeSpan.FromSeconds(90));

        var final = await MetricsText.ScrapeAsync(sidecar.Client);
        var cycles = final.Value("muxwatch_probe_cycle_seconds_count")!.Value;
        var mean = final.Value("muxwatch_probe_cycle_seconds_sum")!.Value / cycles;
        output.WriteLine($"200 endpoints, 100 dead: {cycles} cycles, mean {mean * 1000:0.0} ms");
        Assert.Equal(100, final.Samples("muxwatch_connected").Count(s => s.Value == 1 && s.Labels["multiplexer"].StartsWith('t')));
    }

    private static void AssertNoSlowCycle(MetricsText metrics)
    {
        var count = metrics.Value("muxwatch_probe_cycle_seconds_count") ?? 0;
        var withinOneSecond = metrics.Value("muxwatch_probe_cycle_seconds_bucket", ("le", "1")) ?? metrics.Value("muxwatch_probe_cycle_seconds_bucket", ("le", "1.0")) ?? count;
        Assert.True(withinOneSecond == count, $"{count - withinOneSecond} probe cycles took longer than a second");
    }

    private static async Task<bool> FaultShowsAsync(InMemorySidecar sidecar, MetricsText metrics, bool isStall)
    {
        if (isStall)
        {
            return metrics.Samples("muxwatch_ping_failures_total", ("multiplexer", "faulty")).Sum(s => s.Value) >= 1
                || metrics.Value("muxwatch_timeouts_total", ("multiplexer", "faulty")) >= 1;
        }

        using var targets = JsonDocument.Parse(await sidecar.Client.GetStringAsync(new Uri("/api/targets", UriKind.Relative)));
        var faulty = targets.RootElement.GetProperty("targets").EnumerateArray().Single(t => t.GetProperty("name").GetString() == "faulty");
        return metrics.Value("muxwatch_connected", ("multiplexer", "faulty")) is null or 0
            && faulty.GetProperty("state").GetString() != "connected";
    }
}
