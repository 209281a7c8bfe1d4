using System.Text.Json;
using MuxWatch.Testing;
using Xunit.Abstractions;

namespace MuxWatch.Tool.Tests;

/// <summary>
/// The probe's fault matrix (<see cref="FaultMatrix"/>) on the sidecar, hosted in memory: <c>/metrics</c>,
/// <c>/healthz</c> and <c>/api/targets</c> answer throughout. (The same faults in an app: InProcessFaultMatrixTests.)
/// </summary>
[TakesMinutes]
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
    public async Task A_faulty_endpoint_shows_costs_the_others_nothing_and_recovers(string fault) =>
        output.WriteLine(await FaultMatrix.RunAsync(_faults, fault, _healthy.EndPoint, (healthy, faulty, trustedCaFile) =>
            Task.FromResult<IWatchingTwoTargets>(new WatchingSidecar(InMemorySidecar.Probing(
                [(FaultMatrix.Healthy, healthy), (FaultMatrix.Faulty, faulty)],
                trustedCaFile is null ? [] : [("MuxWatch:Targets:1:TrustedCaFile", trustedCaFile)])))));

    [Fact]
    public async Task Two_hundred_endpoints_half_of_them_dead_keep_the_cycle_short_and_the_live_ones_on_time()
    {
        var targets = Enumerable.Range(0, 200)
            .Select(i => ($"t{i:000}", i % 2 == 0 ? _healthy.EndPoint : $"127.0.0.1:{FreePort.Next()},connectTimeout=5000"))
            .ToArray();
        await using var sidecar = InMemorySidecar.Probing(targets);

        var live = new HashSet<double>();
        await Eventually.UntilAsync(async () =>
        {
            var metrics = await MetricsText.ScrapeAsync(sidecar.Client);
            // A cycle that waited on a dead endpoint's connect would take its 5 s; 2.5 s leaves room for a loaded machine
            // (a cycle over 200 endpoints took just over 1 s beside a busy core).
            FaultMatrix.AssertNoSlowCycle(metrics, "2.5");
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

    /// <summary>The sidecar as the fault matrix sees it: its HTTP answers.</summary>
    private sealed class WatchingSidecar(InMemorySidecar sidecar) : IWatchingTwoTargets
    {
        public Task<MetricsText> ScrapeAsync() => MetricsText.ScrapeAsync(sidecar.Client);

        public async Task<string> StateOfAsync(string target)
        {
            using var targets = JsonDocument.Parse(await sidecar.Client.GetStringAsync(new Uri("/api/targets", UriKind.Relative)));
            return targets.RootElement.GetProperty("targets").EnumerateArray().Single(t => t.GetProperty("name").GetString() == target).GetProperty("state").GetString()!;
        }

        public bool MadeTheFaultyConnection => true;

        public async Task<string?> LastErrorOfAsync(string target)
        {
            using var targets = JsonDocument.Parse(await sidecar.Client.GetStringAsync(new Uri("/api/targets", UriKind.Relative)));
            return targets.RootElement.GetProperty("targets").EnumerateArray().Single(t => t.GetProperty("name").GetString() == target).GetProperty("lastError").GetString();
        }

        public async Task AssertServingAsync()
        {
            using var health = await sidecar.Client.GetAsync(new Uri("/healthz", UriKind.Relative));
            Assert.True(health.IsSuccessStatusCode, "/healthz failed during the fault");
        }

        public ValueTask DisposeAsync() => sidecar.DisposeAsync();
    }
}
