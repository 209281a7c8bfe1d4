using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Hosting;
using Microsoft.Extensions.Logging;
using MuxWatch.Testing;
using Prometheus;
using Xunit.Abstractions;

namespace MuxWatch.Tests.Live;

/// <summary>
/// The probe's fault matrix (<see cref="FaultMatrix"/>) in an app watching a faulty endpoint next to a
/// healthy one with the library: the app's host starts whatever the fault and its probe loop keeps
/// cycling. (The sidecar's run of the same faults: FaultMatrixTests.)
/// </summary>
public sealed class InProcessFaultMatrixTests(ITestOutputHelper output) : IAsyncLifetime
{
    private readonly RedisFaults _faults = new();
    private RedisServer _healthy = null!;

    public async Task InitializeAsync()
    {
        TestThreadPool.EnsureRoomy();
        _healthy = await RedisServer.StartAsync();
    }

    public async Task DisposeAsync()
    {
        await _faults.DisposeAsync();
        await _healthy.DisposeAsync();
    }

    public static TheoryData<string> Faults() => [.. RedisFaults.Names];

    [Theory]
    [MemberData(nameof(Faults))]
    public async Task A_faulty_endpoint_in_an_app_shows_costs_the_app_nothing_and_recovers(string fault) =>
        output.WriteLine(await FaultMatrix.RunAsync(_faults, fault, _healthy.EndPoint, WatchingAppAsync));

    private static async Task<IWatchingTwoTargets> WatchingAppAsync(string healthy, string faulty)
    {
        var registry = Metrics.NewCustomRegistry();
        var builder = Host.CreateApplicationBuilder();
        builder.Logging.ClearProviders();
        builder.Configuration["MuxWatch:ProbeInterval"] = "00:00:00.200";
        builder.Configuration["MuxWatch:PingInterval"] = "00:00:00.200";
        builder.Services.AddMuxWatch().UseMetricsRegistry(registry)
            .AddMultiplexer(FaultMatrix.Healthy, healthy)
            .AddMultiplexer(FaultMatrix.Faulty, faulty);
        var host = builder.Build();
        await host.StartAsync(); // whatever the fault: start-up never waits on it
        return new WatchingApp(host, registry);
    }

    /// <summary>The app as the fault matrix sees it: its registry, its targets and its probe loop.</summary>
    private sealed class WatchingApp(IHost host, CollectorRegistry registry) : IWatchingTwoTargets
    {
        public async Task<MetricsText> ScrapeAsync()
        {
            using var stream = new MemoryStream();
            await registry.CollectAndExportAsTextAsync(stream);
            return new MetricsText(System.Text.Encoding.UTF8.GetString(stream.ToArray()));
        }

        public Task<string> StateOfAsync(string target) =>
            Task.FromResult(host.Services.GetServices<ITargetStatusSource>().SelectMany(s => s.Targets()).Single(t => t.Name == target).State);

        public Task AssertServingAsync()
        {
            Assert.True(host.Services.GetRequiredService<ProbeLoopHealth>().IsCycling(out var state), state);
            return Task.CompletedTask;
        }

        public async ValueTask DisposeAsync()
        {
            await host.StopAsync();
            host.Dispose();
        }
    }
}
