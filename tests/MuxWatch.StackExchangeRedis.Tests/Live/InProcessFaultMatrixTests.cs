using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Hosting;
using Microsoft.Extensions.Logging;
using MuxWatch.Testing;
using Prometheus;
using Xunit.Abstractions;

namespace MuxWatch.StackExchangeRedis.Tests.Live;

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

    private static async Task<IWatchingTwoTargets> WatchingAppAsync(string healthy, string faulty, string? trustedCaFile)
    {
        var registry = Metrics.NewCustomRegistry();
        var builder = Host.CreateApplicationBuilder();
        builder.Logging.ClearProviders();
        builder.Configuration["MuxWatch:ProbeInterval"] = "00:00:00.200";
        builder.Configuration["MuxWatch:PingInterval"] = "00:00:00.200";
        var watching = builder.Services.AddMuxWatch().UseMetricsRegistry(registry).AddMultiplexer(FaultMatrix.Healthy, healthy);
        _ = trustedCaFile is null
            ? watching.AddMultiplexer(FaultMatrix.Faulty, faulty)
            : watching.AddMultiplexer(FaultMatrix.Faulty, _ => ConnectAsAnApp(faulty, trustedCaFile)); // the app's own, trusting its CA
        var host = builder.Build();
        await host.StartAsync(); // whatever the fault: start-up never waits on it
        return new WatchingApp(host, registry, madeTheFaultyConnection: trustedCaFile is null);
    }

    /// <summary>
    /// The app's own multiplexer, made as an app on a private CA makes it: a validation callback of its own
    /// that trusts that CA (MuxWatch never sets an app's; it only watches the multiplexer it is given).
    /// </summary>
    private static StackExchange.Redis.ConnectionMultiplexer ConnectAsAnApp(string configuration, string trustedCaFile)
    {
        var options = StackExchange.Redis.ConfigurationOptions.Parse(configuration);
        options.AbortOnConnectFail = false;
        var ca = System.Security.Cryptography.X509Certificates.X509CertificateLoader.LoadCertificateFromFile(trustedCaFile);
        options.CertificateValidation += (_, certificate, _, errors) =>
        {
            if (certificate is null || (errors & ~System.Net.Security.SslPolicyErrors.RemoteCertificateChainErrors) != 0)
            {
                return false;
            }

            using var chain = new System.Security.Cryptography.X509Certificates.X509Chain();
            chain.ChainPolicy.TrustMode = System.Security.Cryptography.X509Certificates.X509ChainTrustMode.CustomRootTrust;
            chain.ChainPolicy.CustomTrustStore.Add(ca);
            chain.ChainPolicy.RevocationMode = System.Security.Cryptography.X509Certificates.X509RevocationMode.NoCheck;
            return chain.Build(new System.Security.Cryptography.X509Certificates.X509Certificate2(certificate));
        };

        return StackExchange.Redis.ConnectionMultiplexer.Connect(options);
    }

    /// <summary>The app as the fault matrix sees it: its registry, its targets and its probe loop.</summary>
    private sealed class WatchingApp(IHost host, CollectorRegistry registry, bool madeTheFaultyConnection) : IWatchingTwoTargets
    {
        public bool MadeTheFaultyConnection => madeTheFaultyConnection;

        public async Task<MetricsText> ScrapeAsync()
        {
            using var stream = new MemoryStream();
            await registry.CollectAndExportAsTextAsync(stream);
            return new MetricsText(System.Text.Encoding.UTF8.GetString(stream.ToArray()));
        }

        public Task<string> StateOfAsync(string target) =>
            Task.FromResult(host.Services.GetServices<ITargetStatusSource>().SelectMany(s => s.Targets()).Single(t => t.Name == target).State);

        public Task<string?> LastErrorOfAsync(string target) =>
            Task.FromResult(host.Services.GetServices<ITargetStatusSource>().SelectMany(s => s.Targets()).Single(t => t.Name == target).LastError);

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
