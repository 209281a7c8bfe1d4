using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Hosting;
using Microsoft.Extensions.Logging;
using MuxWatch.Testing;
using Prometheus;

namespace MuxWatch.Tests.Live;

/// <summary>
/// The probe's fault matrix in-process: an app watching a faulty endpoint next to a healthy one with
/// the library. The app's host starts whatever the fault, the loop keeps cycling, the healthy
/// multiplexer keeps being probed on time, the fault shows in the metrics and the targets, and where
/// the fault can end, recovery is seen. (The sidecar's run of the same faults: FaultMatrixTests.)
/// </summary>
public sealed class InProcessFaultMatrixTests : IAsyncLifetime
{
    private readonly CollectorRegistry _registry = Metrics.NewCustomRegistry();
    private readonly RedisFaults _faults = new();
    private RedisServer _healthy = null!;

    public InProcessFaultMatrixTests() => TestThreadPool.EnsureRoomy();

    public async Task InitializeAsync() => _healthy = await RedisServer.StartAsync();

    public async Task DisposeAsync()
    {
        await _faults.DisposeAsync();
        await _healthy.DisposeAsync();
    }

    public static TheoryData<string> Faults() => [.. RedisFaults.Names];

    [Theory]
    [MemberData(nameof(Faults))]
    public async Task A_faulty_endpoint_in_an_app_shows_costs_the_app_nothing_and_recovers(string fault)
    {
        var (connectionString, stall, recover) = await _faults.SetUpAsync(fault);
        var builder = Host.CreateApplicationBuilder();
        builder.Logging.ClearProviders();
        builder.Configuration["MuxWatch:ProbeInterval"] = "00:00:00.200";
        builder.Services.AddMuxWatch().UseMetricsRegistry(_registry)
            .AddMultiplexer("healthy", _healthy.EndPoint)
            .AddMultiplexer("faulty", $"{connectionString},connectTimeout=1000,asyncTimeout=500,syncTimeout=500");
        using var host = builder.Build();
        await host.StartAsync(); // whatever the fault: start-up never waits on it
        var loop = host.Services.GetRequiredService<ProbeLoopHealth>();
        if (stall is not null)
        {
            await Eventually.UntilAsync(async () => (await ScrapeAsync()).Value("muxwatch_ping_seconds_count", ("multiplexer", "faulty")) >= 1, "the faulty multiplexer's first PING");
            _ = Task.Run(stall);
        }

        var healthyProbes = new HashSet<double>();
        await Eventually.UntilAsync(async () =>
        {
            Assert.True(loop.IsCycling(out var state), state);
            var metrics = await ScrapeAsync();
            if (metrics.Value("muxwatch_last_probe_success_timestamp_seconds", ("multiplexer", "healthy")) is { } last)
            {
                healthyProbes.Add(last);
            }

            return healthyProbes.Count >= 5 && FaultShows(host, metrics, stall is not null);
        }, $"{fault}: the fault to show while the healthy multiplexer is probed on");

        if (recover is not null)
        {
            await recover();
            var pings = (await ScrapeAsync()).Value("muxwatch_ping_seconds_count", ("multiplexer", "faulty")) ?? 0;
            await Eventually.UntilAsync(async () =>
            {
                var metrics = await ScrapeAsync();
                return metrics.Value("muxwatch_connected", ("multiplexer", "faulty")) == 1
                    && metrics.Value("muxwatch_ping_seconds_count", ("multiplexer", "faulty")) > pings + 2;
            }, $"{fault}: the faulty multiplexer to recover", TimeSpan.FromSeconds(60));
        }

        await host.StopAsync();
    }

    private static bool FaultShows(IHost host, MetricsText metrics, bool isStall)
    {
        if (isStall)
        {
            return metrics.Samples("muxwatch_ping_failures_total", ("multiplexer", "faulty")).Sum(s => s.Value) >= 1
                || metrics.Value("muxwatch_timeouts_total", ("multiplexer", "faulty")) >= 1;
        }

        var faulty = host.Services.GetServices<ITargetStatusSource>().SelectMany(s => s.Targets()).Single(t => t.Name == "faulty");
        return metrics.Value("muxwatch_connected", ("multiplexer", "faulty")) is null or 0 && faulty.State != "connected";
    }

    private async Task<MetricsText> ScrapeAsync()
    {
        using var stream = new MemoryStream();
        await _registry.CollectAndExportAsTextAsync(stream);
        return new MetricsText(System.Text.Encoding.UTF8.GetString(stream.ToArray()));
    }
}
